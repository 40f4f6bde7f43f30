"""Blender operators (thin: read the scene, call the backend, write results).

Each operator takes its options as operator properties, so scripts call
``bpy.ops.rigmind.generate_gesture(armature="Armature", audio_path=..., seed=3)``
and the redo panel (F9) re-runs the non-modal ones; a panel button fills the
properties it does not set from RigMind's scene settings (``invoke``). An
empty ``armature`` means the selection's armature (a mesh counts as its rig),
then RigMind ▸ Armature, then the scene's only armature. Each run writes a NEW
action; errors are reported by kind (``op_common.report_failure``).
``CLASSES`` is what ``blender_addon.registration`` registers.
"""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ImportHelper

from ..blender_addon import properties
from ..blender_addon.preferences import controller_options
from .op_common import (
    ModalJobMixin,
    SceneFilledMixin,
    fill_from_scene,
    finished,
    poll_armature,
    resolve_armature,
    resolve_face_mesh,
    run_reported,
    scene_face_choice,
    settings,
)


def _user_error(msg: str):
    from ..backend.errors import UserError

    return UserError(msg)


def _armature_or_error(context, name: str):
    arm = resolve_armature(context, name)
    if arm is None:
        raise _user_error(f"no armature named '{name}' (nor a mesh deformed by one)" if name else
                          "no armature to animate: select the character (its armature or a mesh it deforms), "
                          "or set RigMind ▸ Armature")
    return arm


def _armature_prop():
    return StringProperty(
        options={"SKIP_SAVE"},
        name="Armature",
        description="Name of the armature to animate (or of a mesh it deforms); empty: the selected character, "
                    "then RigMind ▸ Armature, then the scene's only armature",
        default="",
    )


# Ranges from backend/limits.py (P.hard_range): the CLI's and batch's table.
_SEED = dict(options={"SKIP_SAVE"}, name="Seed", description="Random seed (integer); the same seed and inputs give the same animation",
             **properties.hard_range("seed", integer=True), default=0)
_START = dict(options={"SKIP_SAVE"}, name="Start Frame", description="Scene frame at which the new take begins (frames)",
              **properties.hard_range("start_frame", integer=True), default=1)


class RIGMIND_OT_add_mannequin(bpy.types.Operator):
    """Add RigMind's procedural mannequin: a 55-bone humanoid with a skinned body and a head with the 52 ARKit shape keys"""

    bl_idname = "rigmind.add_mannequin"
    bl_label = "Add RigMind Mannequin"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        from . import mannequin

        def run():
            parts = mannequin.build_mannequin()
            s = settings(context)
            if s is not None:
                s.target_armature = parts["armature"]
                s.face_mesh = parts["head"]
            return finished(self, f"Added {parts['armature'].name} with {len(parts['armature'].data.bones)} bones")

        return run_reported(self, run)


class _FileOntoArmature(SceneFilledMixin, ImportHelper):
    """Operators that put a clip file on the target armature: a panel button
    fills the armature and start frame from the scene, then opens the file
    browser."""

    scene_props = {"armature": "target_armature", "start_frame": "start_frame"}

    @classmethod
    def poll(cls, context):
        return poll_armature(cls, context)

    def invoke(self, context, event):
        fill_from_scene(self, context, self.scene_props)
        return ImportHelper.invoke(self, context, event)


class RIGMIND_OT_apply_bvh(_FileOntoArmature, bpy.types.Operator):
    """Put a BVH clip on the target armature when its bone names match the clip's joints (as a new action; the rig's previous action is kept)"""

    bl_idname = "rigmind.apply_bvh"
    bl_label = "Apply BVH Motion"

    filename_ext = ".bvh"
    filter_glob: StringProperty(default="*.bvh;*.bvh.gz", options={"HIDDEN"},
                                description="File types shown in the file browser")
    armature: _armature_prop()
    up_axis: EnumProperty(options={"SKIP_SAVE"}, name="Up axis", description="Which axis of the BVH file points up", items=properties.UP_AXIS_ITEMS,
                          default="Y")
    set_scene_fps: BoolProperty(options={"SKIP_SAVE"}, name="Set Scene FPS", default=False,
                                description="Switch the scene to the clip's frame rate; off: keys are placed at the "
                                            "clip's times (seconds) at the scene's own frame rate")
    start_frame: IntProperty(**_START)
    def run(self, context):
        from ..backend.bvh import read_bvh
        from . import scene_io

        arm = _armature_or_error(context, self.armature)
        if not self.filepath:
            raise _user_error("no BVH file: pass filepath='…/clip.bvh'")
        motion = read_bvh(self.filepath, up=self.up_axis)
        rig = scene_io.read_skeleton(arm)
        missing = [n for n in motion.skeleton.names if n not in rig.names]
        if missing:
            raise scene_io.SceneError(
                f"'{arm.name}' lacks the clip's joints {missing[:5]}: this clip needs retargeting onto this rig"
            )
        # The armature may have extra bones; put the clip on the bones it names.
        rig_sub = rig.subset(motion.skeleton.names).reorder(motion.skeleton.names)
        if list(rig_sub.parents) != list(motion.skeleton.parents):
            raise scene_io.SceneError(
                f"'{arm.name}' has the clip's joint names but another hierarchy: retarget the clip instead"
            )
        on_rig = motion.with_rest(rig_sub)
        scene_io.write_motion(arm, on_rig, f"RigMind BVH · {motion.name}", set_scene_fps=self.set_scene_fps,
                              frame_start=self.start_frame, set_scene_range="grow")
        return finished(self, f"Applied {motion.num_frames} frames of {motion.name} to {arm.name}")


def _output_path(raw: str, what: str) -> str:
    """An absolute output path, or a UserError that says what to set."""
    if not raw:
        raise _user_error(f"Set {what} (RigMind ▸ Export & Render, or the operator's filepath)")
    if raw.startswith("//") and not bpy.data.filepath:
        raise _user_error(
            f"{what} '{raw}' is relative to the .blend file, which is not saved yet: save it first or pick an absolute path"
        )
    return bpy.path.abspath(raw)


class RIGMIND_OT_retarget_motion(_FileOntoArmature, bpy.types.Operator):
    """Retarget a clip (BVH, FBX, glTF, EMAGE/BEAT2 SMPL-X .npz, DeepMimic .txt, or another armature's action) onto the target armature as a new action"""

    bl_idname = "rigmind.retarget_motion"
    bl_label = "Retarget Motion"

    filter_glob: StringProperty(default="*.bvh;*.bvh.gz;*.fbx;*.glb;*.gltf;*.npz;*.txt;*.json", options={"HIDDEN"},
                                description="File types shown in the file browser")
    armature: _armature_prop()
    source_armature: StringProperty(options={"SKIP_SAVE"}, name="Source armature",
                                    description="Name of an armature whose active action is retargeted instead of a file")
    root_mode: EnumProperty(options={"SKIP_SAVE"}, name="Root motion", description="Where the clip's travel (root motion, metres) is keyed",
                            items=properties.ROOT_MODE_ITEMS, default="hips")
    root_bone: StringProperty(name="Root bone", description="The rig's root bone, for 'On a root bone'")
    use_ik: BoolProperty(name="Foot IK", description="Keep planted feet on the ground (leg IK where the source's "
                                                     "feet are in contact)", default=True)
    start_frame: IntProperty(**_START)
    def invoke(self, context, event):
        if self.source_armature:  # no file to pick
            return SceneFilledMixin.invoke(self, context, event)
        return _FileOntoArmature.invoke(self, context, event)

    def run(self, context):
        from ..backend.requests import checked
        from ..backend.requests.retarget import from_properties
        from . import retarget_scene

        arm = _armature_or_error(context, self.armature)
        request = checked(from_properties(self.as_keywords()))
        if request.source_armature:
            src = bpy.data.objects.get(request.source_armature)
            if src is None or src.type != "ARMATURE":
                raise _user_error(f"no armature named '{request.source_armature}' to take the motion from")
            from ..backend.bone_mapping import auto_map

            motion = retarget_scene.motion_from_action(src)
            src_map = auto_map(motion.skeleton)
        elif request.source:
            motion, src_map = retarget_scene.load_source(request.source)
        else:
            raise _user_error("nothing to retarget: pass filepath='…' (a clip) or source_armature='…'")
        action, tmap, result = retarget_scene.retarget_onto(arm, motion, src_map, request)
        return finished(self, f"Retargeted {motion.num_frames} frames onto {arm.name} as '{action.name}' "
                              f"(mapping {tmap.preset}, confidence {tmap.overall:.2f})")


def user_bone_map_dir():
    """Where user bone-map presets are saved: the extension's user folder
    when installed as an extension, else Blender's user config folder."""
    from pathlib import Path

    pkg = __package__.rsplit(".", 1)[0]
    try:
        return Path(bpy.utils.extension_path_user(pkg, path="bone_maps", create=True))
    except (ValueError, RuntimeError, AttributeError):
        return Path(bpy.utils.user_resource("CONFIG", path="rigmind/bone_maps", create=True))


class RIGMIND_OT_detect_bone_map(SceneFilledMixin, bpy.types.Operator):
    """Detect how the target armature's bones map onto RigMind's canonical humanoid and show the mapping for editing"""

    bl_idname = "rigmind.detect_bone_map"
    bl_label = "Detect Mapping"

    armature: _armature_prop()
    scene_props = {"armature": "target_armature"}

    @classmethod
    def poll(cls, context):
        return poll_armature(cls, context)

    def run(self, context):
        from ..backend.bone_mapping import load_humanoid
        from . import retarget_scene

        arm = _armature_or_error(context, self.armature)
        s = settings(context)
        mapping = retarget_scene.target_mapping(arm)
        s.bone_map.clear()
        for joint in load_humanoid()["joints"]:
            item = s.bone_map.add()
            item.canonical = joint
            item.bone = mapping.bones.get(joint, "")
            item.confidence = float(mapping.confidence.get(joint, 0.0))
        s.bone_map_index = 0
        s.target_armature = arm
        return finished(self, f"{arm.name}: mapping '{mapping.preset}', confidence {mapping.overall:.2f}, "
                              f"{len(mapping.bones)} joints")


class RIGMIND_OT_save_bone_map(SceneFilledMixin, bpy.types.Operator):
    """Use the edited mapping (RigMind ▸ Retarget list) for this armature (stored with it in the .blend) and save it as a user preset"""

    bl_idname = "rigmind.save_bone_map"
    bl_label = "Save Mapping"

    armature: _armature_prop()
    preset_name: StringProperty(options={"SKIP_SAVE"}, name="Preset Name", default="my_rig",
                                description="File name of the user bone-map preset to save (letters, digits, _ . -)")
    scene_props = {"armature": "target_armature", "preset_name": "bone_map_name"}

    @classmethod
    def poll(cls, context):
        if not poll_armature(cls, context):
            return False
        if len(settings(context).bone_map) == 0:
            cls.poll_message_set("No mapping to save: press Detect Mapping first, then edit the list")
            return False
        return True

    def run(self, context):
        import re

        from ..backend.bone_mapping import BoneMapping, load_humanoid

        arm = _armature_or_error(context, self.armature)
        s = settings(context)
        bones = {it.canonical: it.bone for it in s.bone_map if it.bone}
        unknown = sorted(b for b in bones.values() if b not in arm.data.bones)
        missing = [j for j in load_humanoid()["required"] if j not in bones]
        if unknown or missing:
            parts = []
            if unknown:
                parts.append(f"bones not in '{arm.name}': {unknown[:5]}")
            if missing:
                parts.append(f"required joints unmapped: {missing}")
            raise _user_error("Cannot save the mapping: " + "; ".join(parts))
        mapping = BoneMapping(
            bones=bones,
            confidence={it.canonical: 1.0 for it in s.bone_map if it.bone},
            overall=1.0,
            unmapped=[b.name for b in arm.data.bones if b.name not in bones.values()],
            preset="user",
            variant=self.preset_name,
            skeleton_name=arm.name,
        )
        arm["rigmind_bone_map"] = mapping.to_json()
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", self.preset_name).strip("._") or "my_rig"
        path = user_bone_map_dir() / f"{name}.json"
        mapping.save(path)
        return finished(self, f"Saved mapping for {arm.name} ({len(bones)} joints) to {path}")


class RIGMIND_OT_export(SceneFilledMixin, bpy.types.Operator):
    """Export the target armature, its meshes and its active animation with Blender's own exporter"""

    bl_idname = "rigmind.export"
    bl_label = "Export Character"

    armature: _armature_prop()
    format: EnumProperty(options={"SKIP_SAVE"}, name="Format", description="File format (the file's extension follows it)",
                         items=properties.EXPORT_FORMAT_ITEMS, default="FBX")
    filepath: StringProperty(options={"SKIP_SAVE", "PATH_SUPPORTS_BLEND_RELATIVE"}, name="File Path", subtype="FILE_PATH", default="",
                             description="File to write (// is the .blend's folder); the extension follows Format")
    scene_props = {"armature": "target_armature", "format": "export_format", "filepath": "export_path"}

    @classmethod
    def poll(cls, context):
        return poll_armature(cls, context)

    def run(self, context):
        from ..backend.atomic_write import write_atomically
        from ..backend.requests.export import from_properties
        from . import export

        path = _output_path(self.filepath, "an export path")
        suffix = "." + self.format.lower()
        if not path.lower().endswith(suffix):
            path += suffix
        arm = _armature_or_error(context, self.armature)
        request = from_properties(self.as_keywords(), path)
        written = write_atomically(path, lambda tmp: export.export_requested(arm, request, tmp))
        return finished(self, f"Exported {written}")


class RIGMIND_OT_render(ModalJobMixin, bpy.types.Operator):
    """Render the scene: a still of the current frame (.png), or the frame range frame by frame into an MP4 with the scene's sound (progress shown, Esc cancels)"""

    bl_idname = "rigmind.render"
    bl_label = "Render"
    bl_options = {"REGISTER"}

    engine: EnumProperty(options={"SKIP_SAVE"}, name="Engine", description="Render engine", items=properties.RENDER_ENGINE_ITEMS, default="CYCLES")
    filepath: StringProperty(options={"SKIP_SAVE", "PATH_SUPPORTS_BLEND_RELATIVE"}, name="Output", subtype="FILE_PATH", default="",
                             description="Output file (// is the .blend's folder): .png renders the current frame, "
                                         ".mp4 the frame range with sound")
    resolution: bpy.props.IntVectorProperty(options={"SKIP_SAVE"}, name="Resolution", size=2, default=(640, 360),
                                            **properties.hard_range("resolution", integer=True),
                                            description="Width and height of the image in pixels")
    samples: IntProperty(options={"SKIP_SAVE"}, name="Samples", default=16, **properties.hard_range("samples", integer=True),
                         description="Samples per pixel (Cycles, EEVEE): more is cleaner and slower")
    scene_props = {"engine": "render_engine", "filepath": "render_path"}

    @classmethod
    def poll(cls, context):
        if context.scene is None:
            cls.poll_message_set("No scene to render")
            return False
        return True

    def make_job(self, context):
        from ..backend.atomic_write import check_output_path
        from . import render

        path = _output_path(self.filepath, "a render output path (.png or .mp4)")
        check_output_path(path)
        return render.render_job(path, engine=self.engine, resolution=tuple(self.resolution), samples=self.samples)

    def done(self, context, result):
        return finished(self, f"Rendered {result}")


# --- locomotion ------------------------------------------------------------------------


def _runtime(context):
    """The gesture and face models' runtime from the add-on preferences:
    "torch", or None for ONNX Runtime whenever the exports match the weights
    (the backend's default, which falls back to torch for retrained weights)."""
    return "torch" if controller_options(context).get("engine") == "torch" else None


def _path_object(context, name: str = ""):
    """The path to walk: ``name``, else a selected curve (the active object first), else RigMind ▸ Path."""
    if name:
        ob = bpy.data.objects.get(name)
        if ob is None:
            raise _user_error(f"no object named '{name}' to walk along: name a curve or an empty")
        return ob
    active = context.active_object
    if active is not None and active.type == "CURVE" and active.select_get():
        return active
    curves = [o for o in (context.selected_objects or []) if o.type == "CURVE"]
    if curves:
        return sorted(curves, key=lambda o: o.name)[0]
    s = settings(context)
    if s is not None and s.path_object is not None:
        return s.path_object
    raise _user_error("Walk Along Path needs a path: select a curve, or set RigMind ▸ Locomotion ▸ Path")


def _done_action(op, action):
    first, last = action.frame_range
    warning = action.get("rigmind_warning") if hasattr(action, "get") else None
    if warning:
        op.report({"WARNING"}, f"Wrote '{action.name}' ({int(round(last - first))} frames); {warning}")
    else:
        op.report({"INFO"}, f"Wrote '{action.name}' ({int(round(last - first))} frames)")
    return {"FINISHED"}


class _LocomotionOperator(ModalJobMixin):
    """A modal job on the target armature driven by locomotion properties."""

    bl_options = {"REGISTER", "UNDO"}

    armature: _armature_prop()
    style: EnumProperty(options={"SKIP_SAVE"}, name="Style", description="Movement style (a Bandai Namco motion-capture style)",
                        items=properties.STYLE_ITEMS, default="normal")
    gait: EnumProperty(options={"SKIP_SAVE"}, name="Gait", description="Walk, run or crouch: the style's clips and own speed", items=properties.GAIT_ITEMS,
                       default="walk")
    speed_from_style: BoolProperty(options={"SKIP_SAVE"}, name="Style's Speed", default=True,
                                   description="Move at the style's own speed (its clips' median, scaled to the "
                                               "rig's legs) instead of Speed")
    speed: FloatProperty(options={"SKIP_SAVE"}, name="Speed", description="Forward speed in metres per second (used when Style's Speed "
                                                   "is off)", **properties.hard_range("speed"), soft_min=0.2, soft_max=6.0,
                         default=1.3, unit="VELOCITY")
    in_place: BoolProperty(options={"SKIP_SAVE"}, name="In Place", default=False,
                           description="No horizontal root motion: the walk plays on the spot")
    controller: EnumProperty(options={"SKIP_SAVE"}, name="Controller", description="Which locomotion controller generates the motion",
                             items=properties.CONTROLLER_ITEMS, default="auto")
    start_frame: IntProperty(**_START)
    scene_props = {"armature": "target_armature", "style": "style", "gait": "gait",
                   "speed_from_style": "speed_from_style", "speed": "speed", "in_place": "in_place",
                   "start_frame": "start_frame"}

    @classmethod
    def poll(cls, context):
        return poll_armature(cls, context)

    def _request_fields(self, context) -> dict:
        """The fields both walk requests take, from the properties (and the
        add-on preferences' engine and models folder)."""
        from ..backend.requests.walk import ControllerChoice

        return dict(style=self.style, gait=self.gait, speed=None if self.speed_from_style else float(self.speed),
                    in_place=self.in_place, start_frame=int(self.start_frame), user_scene=True,
                    controller=ControllerChoice(kind=self.controller, **controller_options(context)))

    def done(self, context, result):
        return _done_action(self, result)


class RIGMIND_OT_bake_walk_cycle(_LocomotionOperator, bpy.types.Operator):
    """Bake a looping walk or run cycle (style, speed in m/s, in place) onto the target armature as a new action (progress shown, Esc cancels)"""

    bl_idname = "rigmind.bake_walk_cycle"
    bl_label = "Bake Walk Cycle"

    def make_job(self, context):
        from ..backend.requests.walk import WalkCycleRequest
        from . import locomotion_scene

        arm = _armature_or_error(context, self.armature)
        return locomotion_scene.walk_cycle_job(arm, WalkCycleRequest(**self._request_fields(context)))


class RIGMIND_OT_walk_along_path(_LocomotionOperator, bpy.types.Operator):
    """Walk the target armature along a curve (or empties) as a new action: the named path, else the selected curve, else RigMind ▸ Path (progress shown, Esc cancels)"""

    bl_idname = "rigmind.walk_along_path"
    bl_label = "Walk Along Path"

    path: StringProperty(options={"SKIP_SAVE"}, name="Path", description="Name of the curve (or keyed empty) to walk along; empty: the "
                                                  "selected curve, then RigMind ▸ Path", default="")
    pauses: StringProperty(options={"SKIP_SAVE"}, name="Pauses", default="",
                           description="Stops along the path: metres along it and seconds to stand there, pauses "
                                       "separated by ';' (e.g. 4,1.5; 9,2); empty: no stop")
    actions: StringProperty(options={"SKIP_SAVE"}, name="Actions", default="",
                            description="Jumps and crouches along the path, in metres along it, separated by ';': "
                                        "jump@4 (jump@4,height=0.3,length=1.2), crouch@7-10; empty: walk only")
    start: EnumProperty(options={"SKIP_SAVE"}, name="Start", description="How the walk begins",
                        items=properties.START_POSE_ITEMS, default="standing")
    scene_props = dict(_LocomotionOperator.scene_props, pauses="path_pauses", actions="path_actions", start="path_start")

    def make_job(self, context):
        from ..backend.locomotion.actions.action_plan import parse_actions
        from ..backend.locomotion.path_follow import parse_pauses
        from ..backend.requests.walk import WalkPathRequest
        from . import locomotion_scene

        arm = _armature_or_error(context, self.armature)
        pauses = parse_pauses(self.pauses)   # bad text fails before the curve is read
        actions = parse_actions(self.actions, self.start)
        points = locomotion_scene.curve_to_polyline(_path_object(context, self.path), list(context.selected_objects or []))
        return locomotion_scene.walk_path_job(arm, WalkPathRequest(points=points, pauses=pauses, actions=actions,
                                                                   **self._request_fields(context)))


def _absolute_audio(props: dict) -> dict:
    """The operator's properties with ``audio_path`` absolute (// is the
    .blend's folder; empty stays empty: the scene's sound strip)."""
    audio = props.get("audio_path")
    return dict(props, audio_path=bpy.path.abspath(audio) if audio else "")


class RIGMIND_OT_generate_gesture(ModalJobMixin, bpy.types.Operator):
    """Generate body, head, hand and finger motion from speech on the target armature as a new action (and the face on its ARKit mesh); the audio is added as a sound strip in sync (progress shown, Esc cancels)"""

    bl_idname = "rigmind.generate_gesture"
    bl_label = "Generate Gesture"
    bl_options = {"REGISTER", "UNDO"}

    armature: _armature_prop()
    audio_path: StringProperty(options={"SKIP_SAVE", "PATH_SUPPORTS_BLEND_RELATIVE"}, name="Audio", subtype="FILE_PATH", default="",
                               description="Speech recording (.wav, .flac, .ogg, .mp3); empty: the scene's first "
                                           "sound strip, starting with it")
    amount: FloatProperty(options={"SKIP_SAVE"}, name="Gesture Amount", **properties.hard_range("amount"), default=0.5, subtype="FACTOR",
                          description="How animated the gestures are (0..1): 0 calm, 0.5 like the training "
                                      "speaker, 1 very animated")
    seed: IntProperty(**_SEED)
    start_frame: IntProperty(**_START)
    base: EnumProperty(options={"SKIP_SAVE"}, name="Base", description="What the gestures are layered over", items=properties.BASE_ITEMS,
                       default="idle")
    face_mesh: StringProperty(options={"SKIP_SAVE"}, name="Face Mesh", default="",
                              description="Mesh whose ARKit shape keys get the face: a mesh name, 'auto' (the "
                                          "character's mesh with the most ARKit keys) or empty (no face)")
    face_method: EnumProperty(options={"SKIP_SAVE"}, name="Lip Sync", description="How the mouth is found when there is no transcript "
                                                           "(a .txt beside the audio)",
                              items=properties.FACE_METHOD_ITEMS, default="model")
    set_scene_fps: BoolProperty(options={"SKIP_SAVE"}, name="Set Scene FPS", default=False,
                                description="Switch the scene to 30 fps (the model's rate); off: the scene keeps "
                                            "its frame rate and the keys land at the right times")
    style: EnumProperty(options={"SKIP_SAVE"}, name="Style", items=properties.GESTURE_STYLE_ITEMS, default="none",
                        description="Move like one of the Bandai Namco styles")
    style_clip: StringProperty(options={"SKIP_SAVE", "PATH_SUPPORTS_BLEND_RELATIVE"}, name="Style Clip",
                               subtype="FILE_PATH", default="",
                               description="A clip of the speaker gesturing (.bvh .fbx .glb .gltf .npz); empty: none")
    scene_props = {"armature": "target_armature", "audio_path": "audio_path", "amount": "gesture_amount",
                   "seed": "seed", "start_frame": "start_frame", "base": "gesture_base",
                   "face_mesh": scene_face_choice, "face_method": "face_method", "set_scene_fps": "set_scene_fps",
                   "style": "gesture_style", "style_clip": "gesture_style_clip"}

    @classmethod
    def poll(cls, context):
        return poll_armature(cls, context)

    def make_job(self, context):
        from ..backend.requests import checked
        from ..backend.requests.gesture import from_properties
        from . import gesture_scene
        from .emotion_keys import take_emotion

        arm = _armature_or_error(context, self.armature)
        face = resolve_face_mesh(context, self.face_mesh, arm)
        props = _absolute_audio(self.as_keywords())
        if props.get("style_clip"):
            props["style_clip"] = bpy.path.abspath(props["style_clip"])
        props["emotion"] = take_emotion(context.scene, props["audio_path"], self.start_frame,
                                        30.0 if self.set_scene_fps else None)
        request = from_properties(props, runtime=_runtime(context), user_scene=True)
        return gesture_scene.gesture_job(arm, checked(request), face)

    def done(self, context, result):
        self.report({"WARNING"} if result.face is not None and result.face.missing else {"INFO"}, result.summary())
        return {"FINISHED"}


class RIGMIND_OT_generate_face(ModalJobMixin, bpy.types.Operator):
    """Lip-sync, blinks and brows from speech onto a face mesh's ARKit shape keys as a new action (a .txt beside the audio is used as the transcript; progress shown, Esc cancels)"""

    bl_idname = "rigmind.generate_face"
    bl_label = "Generate Face"
    bl_options = {"REGISTER", "UNDO"}

    face_mesh: StringProperty(options={"SKIP_SAVE"}, name="Face Mesh", default="auto",
                              description="Mesh whose ARKit shape keys are animated: a mesh name, or 'auto' (the "
                                          "selected character's mesh with the most ARKit keys, never eyes or teeth)")
    audio_path: StringProperty(options={"SKIP_SAVE", "PATH_SUPPORTS_BLEND_RELATIVE"}, name="Audio", subtype="FILE_PATH", default="",
                               description="Speech recording (.wav, .flac, .ogg, .mp3); empty: the scene's first "
                                           "sound strip, starting with it")
    seed: IntProperty(**_SEED)
    start_frame: IntProperty(**_START)
    method: EnumProperty(options={"SKIP_SAVE"}, name="Lip Sync", description="How the mouth is found when there is no transcript",
                         items=properties.FACE_METHOD_ITEMS, default="model")
    scene_props = {"face_mesh": scene_face_choice, "audio_path": "audio_path", "seed": "seed",
                   "start_frame": "start_frame", "method": "face_method"}

    @classmethod
    def poll(cls, context):
        from . import face_scene
        from .op_common import face_candidates

        s = settings(context)
        if s is None:
            cls.poll_message_set("RigMind's scene settings are missing: enable the RigMind add-on")
            return False
        if not s.face_auto and s.face_mesh is not None:
            return True
        if not face_scene.has_arkit_mesh(face_candidates(context.scene, resolve_armature(context))):
            cls.poll_message_set("No mesh with ARKit shape keys (jawOpen, eyeBlinkLeft, …) in the scene: "
                                 "import a character with them, or set RigMind ▸ Face Mesh")
            return False
        return True

    def make_job(self, context):
        from ..backend.requests import checked
        from ..backend.requests.face import from_properties
        from . import face_scene
        from .emotion_keys import take_emotion

        mesh = resolve_face_mesh(context, self.face_mesh or "auto", resolve_armature(context))
        if mesh is None:
            raise _user_error("no mesh with ARKit shape keys to animate: set Face Mesh to one")
        props = _absolute_audio(self.as_keywords())
        props["emotion"] = take_emotion(context.scene, props["audio_path"], self.start_frame)
        request = from_properties(props, runtime=_runtime(context))
        return face_scene.face_job(mesh, checked(request))

    def done(self, context, result):
        self.report({"WARNING"} if result.missing else {"INFO"}, result.summary())
        return {"FINISHED"}


CLASSES = (RIGMIND_OT_add_mannequin, RIGMIND_OT_apply_bvh, RIGMIND_OT_retarget_motion,
           RIGMIND_OT_detect_bone_map, RIGMIND_OT_save_bone_map, RIGMIND_OT_bake_walk_cycle,
           RIGMIND_OT_walk_along_path, RIGMIND_OT_export, RIGMIND_OT_render, RIGMIND_OT_generate_face,
           RIGMIND_OT_generate_gesture)

# Drive (live steering) lives in its own module.
from .drive_op import CLASSES as _DRIVE_CLASSES  # noqa: E402

CLASSES = CLASSES + _DRIVE_CLASSES

# Track Body and Track Live (three trackers -> a full body) too.
from .track_op import CLASSES as _TRACK_CLASSES  # noqa: E402

CLASSES = CLASSES + _TRACK_CLASSES

__all__ = ["CLASSES", "user_bone_map_dir"]
