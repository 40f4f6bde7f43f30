"""Blender operators (thin: read the scene, call the backend, write results).

Each operator declares UNDO, writes a NEW action per run and reports errors
a user can fix in Blender's report bar. ``CLASSES`` is what
``blender_addon.registration`` registers.
"""

from __future__ import annotations

import bpy
from bpy.props import EnumProperty, StringProperty
from bpy_extras.io_utils import ImportHelper


def _settings(context):
    return getattr(context.scene, "rigmind", None)


def _target_armature(context):
    s = _settings(context)
    ob = s.target_armature if s is not None and s.target_armature is not None else context.active_object
    return ob if ob is not None and ob.type == "ARMATURE" else None


class RIGMIND_OT_add_mannequin(bpy.types.Operator):
    """Add RigMind's procedural mannequin: a 55-bone humanoid with a skinned body and a head with the 52 ARKit shape keys"""

    bl_idname = "rigmind.add_mannequin"
    bl_label = "Add RigMind Mannequin"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        from . import mannequin

        parts = mannequin.build_mannequin()
        s = _settings(context)
        if s is not None:
            s.target_armature = parts["armature"]
            s.face_mesh = parts["head"]
        self.report({"INFO"}, f"Added {parts['armature'].name} with {len(parts['armature'].data.bones)} bones")
        return {"FINISHED"}


class RIGMIND_OT_apply_bvh(bpy.types.Operator, ImportHelper):
    """Put a BVH clip on the target armature when its bone names match the clip's joints (as a new action; the rig's previous action is kept)"""

    bl_idname = "rigmind.apply_bvh"
    bl_label = "Apply BVH Motion"
    bl_options = {"REGISTER", "UNDO"}

    filename_ext = ".bvh"
    filter_glob: StringProperty(default="*.bvh;*.bvh.gz", options={"HIDDEN"})
    up_axis: EnumProperty(name="Up axis", items=[("Y", "Y up", "most BVH files"), ("Z", "Z up", "Blender's own exports")], default="Y")

    @classmethod
    def poll(cls, context):
        return _target_armature(context) is not None

    def execute(self, context):
        from ..backend.bvh import read_bvh
        from . import scene_io

        arm = _target_armature(context)
        try:
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
            scene_io.write_motion(arm, on_rig, f"RigMind BVH · {motion.name}", set_scene_fps=True)
        except ValueError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        self.report({"INFO"}, f"Applied {motion.num_frames} frames of {motion.name} to {arm.name}")
        return {"FINISHED"}


def _output_path(raw: str, what: str) -> str:
    """An absolute output path, or a ValueError that says what to set."""
    if not raw:
        raise ValueError(f"Set {what} in RigMind ▸ Export & Render first")
    if raw.startswith("//") and not bpy.data.filepath:
        raise ValueError(
            f"{what} '{raw}' is relative to the .blend file, which is not saved yet: save it first or pick an absolute path"
        )
    return bpy.path.abspath(raw)


ROOT_MODES = [
    ("hips", "On the hips", "Root translation on the hips bone"),
    ("in_place", "In place", "Horizontal root motion removed, vertical kept"),
    ("root_bone", "On a root bone", "Ground-projected motion and facing on the rig's root bone"),
    ("object", "On the object", "Root motion keyed on the armature object"),
]


class RIGMIND_OT_retarget_motion(bpy.types.Operator, ImportHelper):
    """Retarget a clip (BVH, FBX, glTF, EMAGE/BEAT2 SMPL-X .npz, or another armature's action) onto the target armature as a new action"""

    bl_idname = "rigmind.retarget_motion"
    bl_label = "Retarget Motion"
    bl_options = {"REGISTER", "UNDO"}

    filter_glob: StringProperty(default="*.bvh;*.bvh.gz;*.fbx;*.glb;*.gltf;*.npz", options={"HIDDEN"})
    source_armature: StringProperty(name="Source armature", description="Use this armature's action instead of a file")
    root_mode: EnumProperty(name="Root motion", items=ROOT_MODES, default="hips")
    root_bone: StringProperty(name="Root bone", description="For 'On a root bone'")
    use_ik: bpy.props.BoolProperty(name="Foot IK", description="Keep planted feet on the ground", default=True)

    @classmethod
    def poll(cls, context):
        return _target_armature(context) is not None

    def invoke(self, context, event):
        if self.source_armature:
            return self.execute(context)
        return ImportHelper.invoke(self, context, event)

    def execute(self, context):
        from . import retarget_scene

        arm = _target_armature(context)
        try:
            if self.source_armature:
                src = bpy.data.objects.get(self.source_armature)
                if src is None or src.type != "ARMATURE":
                    raise ValueError(f"no armature named '{self.source_armature}' to take the motion from")
                from ..backend.bone_mapping import auto_map

                motion = retarget_scene.motion_from_action(src)
                src_map = auto_map(motion.skeleton)
            else:
                motion, src_map = retarget_scene.load_source(self.filepath)
            action, tmap, result = retarget_scene.retarget_onto(
                arm, motion, src_map, root_mode=self.root_mode, root_bone=self.root_bone or None, ik=self.use_ik
            )
        except ValueError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        self.report(
            {"INFO"},
            f"Retargeted {motion.num_frames} frames onto {arm.name} as '{action.name}' "
            f"(mapping {tmap.preset}, confidence {tmap.overall:.2f})",
        )
        return {"FINISHED"}


def user_bone_map_dir():
    """Where user bone-map presets are saved: the extension's user folder
    when installed as an extension, else Blender's user config folder."""
    from pathlib import Path

    pkg = __package__.rsplit(".", 1)[0]
    try:
        return Path(bpy.utils.extension_path_user(pkg, path="bone_maps", create=True))
    except (ValueError, RuntimeError, AttributeError):
        return Path(bpy.utils.user_resource("CONFIG", path="rigmind/bone_maps", create=True))


class RIGMIND_OT_detect_bone_map(bpy.types.Operator):
    """Detect how the target armature's bones map onto RigMind's canonical humanoid and show the mapping for editing"""

    bl_idname = "rigmind.detect_bone_map"
    bl_label = "Detect Mapping"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return _target_armature(context) is not None and _settings(context) is not None

    def execute(self, context):
        from ..backend.bone_mapping import load_humanoid
        from . import retarget_scene

        arm = _target_armature(context)
        s = _settings(context)
        try:
            mapping = retarget_scene.target_mapping(arm)
        except ValueError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        s.bone_map.clear()
        for joint in load_humanoid()["joints"]:
            item = s.bone_map.add()
            item.canonical = joint
            item.bone = mapping.bones.get(joint, "")
            item.confidence = float(mapping.confidence.get(joint, 0.0))
        s.bone_map_index = 0
        self.report({"INFO"}, f"{arm.name}: mapping '{mapping.preset}', confidence {mapping.overall:.2f}, "
                              f"{len(mapping.bones)} joints")
        return {"FINISHED"}


class RIGMIND_OT_save_bone_map(bpy.types.Operator):
    """Use the edited mapping for this armature (stored with it in the .blend) and save it as a user preset"""

    bl_idname = "rigmind.save_bone_map"
    bl_label = "Save Mapping"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        s = _settings(context)
        return _target_armature(context) is not None and s is not None and len(s.bone_map) > 0

    def execute(self, context):
        import re

        from ..backend.bone_mapping import BoneMapping, load_humanoid

        arm = _target_armature(context)
        s = _settings(context)
        bones = {it.canonical: it.bone for it in s.bone_map if it.bone}
        unknown = sorted(b for b in bones.values() if b not in arm.data.bones)
        missing = [j for j in load_humanoid()["required"] if j not in bones]
        if unknown or missing:
            parts = []
            if unknown:
                parts.append(f"bones not in '{arm.name}': {unknown[:5]}")
            if missing:
                parts.append(f"required joints unmapped: {missing}")
            self.report({"ERROR"}, "Cannot save the mapping: " + "; ".join(parts))
            return {"CANCELLED"}
        mapping = BoneMapping(
            bones=bones,
            confidence={it.canonical: 1.0 for it in s.bone_map if it.bone},
            overall=1.0,
            unmapped=[b.name for b in arm.data.bones if b.name not in bones.values()],
            preset="user",
            variant=s.bone_map_name,
            skeleton_name=arm.name,
        )
        arm["rigmind_bone_map"] = mapping.to_json()
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", s.bone_map_name).strip("._") or "my_rig"
        path = user_bone_map_dir() / f"{name}.json"
        mapping.save(path)
        self.report({"INFO"}, f"Saved mapping for {arm.name} ({len(bones)} joints) to {path}")
        return {"FINISHED"}


class RIGMIND_OT_export(bpy.types.Operator):
    """Export the target armature, its meshes and its active animation with Blender's own exporter"""

    bl_idname = "rigmind.export"
    bl_label = "Export Character"
    bl_options = {"REGISTER"}

    @classmethod
    def poll(cls, context):
        return _target_armature(context) is not None and _settings(context) is not None

    def execute(self, context):
        from ..backend.atomic_write import write_atomically
        from . import export

        s = _settings(context)
        try:
            path = _output_path(s.export_path, "an export path")
            suffix = "." + s.export_format.lower()
            if not path.lower().endswith(suffix):
                path += suffix
            arm = _target_armature(context)
            written = write_atomically(path, lambda tmp: export.export_character(arm, tmp))
        except (ValueError, RuntimeError) as e:
            self.report({"ERROR"}, str(e).splitlines()[0])
            return {"CANCELLED"}
        self.report({"INFO"}, f"Exported {written}")
        return {"FINISHED"}


class RIGMIND_OT_render(bpy.types.Operator):
    """Render the scene (a still of the current frame, or the frame range as MP4 with sound)"""

    bl_idname = "rigmind.render"
    bl_label = "Render"
    bl_options = {"REGISTER"}

    @classmethod
    def poll(cls, context):
        return _settings(context) is not None

    def execute(self, context):
        from ..backend.atomic_write import write_atomically
        from . import render

        s = _settings(context)
        try:
            path = _output_path(s.render_path, "a render output path (.png or .mp4)")
            out = write_atomically(path, lambda tmp: render.render(tmp, engine=s.render_engine))
        except (ValueError, RuntimeError) as e:
            self.report({"ERROR"}, str(e).splitlines()[0])
            return {"CANCELLED"}
        self.report({"INFO"}, f"Rendered {out}")
        return {"FINISHED"}


# --- locomotion ------------------------------------------------------------------------

CONTROLLER_KINDS = [
    ("auto", "Auto", "The trained neural controller when its weights exist, else motion matching on the Bandai Namco data"),
    ("neural", "Neural", "The trained neural controller (models/locomotion.onnx or .pt)"),
    ("motion_matching", "Motion Matching", "The motion-matching baseline built from the Bandai Namco data ($RIGMIND_DATA or ../shared/data)"),
]


def _controller_options(context) -> dict:
    """Inference engine and models folder from the add-on preferences."""
    from ..blender_addon.preferences import get_preferences

    prefs = get_preferences(context)
    if prefs is None:
        return {}
    opts = {"engine": prefs.inference_engine}
    if prefs.models_dir:
        opts["models_dir"] = bpy.path.abspath(prefs.models_dir)
    return opts


def _runtime(context):
    """The gesture and face models' runtime from the add-on preferences:
    "torch", or None for ONNX Runtime whenever the exports match the weights
    (the backend's default, which falls back to torch for retrained weights)."""
    return "torch" if _controller_options(context).get("engine") == "torch" else None


def _path_object(context):
    """The path to walk: a selected curve (the active object first), else RigMind ▸ Path."""
    active = context.active_object
    if active is not None and active.type == "CURVE" and active.select_get():
        return active
    curves = [o for o in (context.selected_objects or []) if o.type == "CURVE"]
    if curves:
        return sorted(curves, key=lambda o: o.name)[0]
    s = _settings(context)
    if s is not None and s.path_object is not None:
        return s.path_object
    raise ValueError("Walk Along Path needs a path: select a curve, or set RigMind ▸ Locomotion ▸ Path")


class _ModalJobOperator:
    """Shared modal machinery for generators on the target armature:
    ``invoke`` starts a job (a generator that runs the generation in a worker
    thread and yields progress), ``modal`` advances it on timer events and
    shows the progress; ESC cancels before anything is written. ``execute``
    (scripts, headless) runs synchronously.

    Subclasses: ``_common(context) -> dict`` of settings, ``run(context,
    **common) -> result``, ``job(context, **common) -> generator`` and
    ``_finished(result)``."""

    bl_options = {"REGISTER", "UNDO"}

    _job = None
    _timer = None

    @classmethod
    def poll(cls, context):
        return _target_armature(context) is not None and _settings(context) is not None

    def _finished(self, action):
        first, last = action.frame_range
        warning = action.get("rigmind_warning") if hasattr(action, "get") else None
        if warning:
            self.report({"WARNING"}, f"Wrote '{action.name}' ({int(round(last - first))} frames); {warning}")
        else:
            self.report({"INFO"}, f"Wrote '{action.name}' ({int(round(last - first))} frames)")
        return {"FINISHED"}

    def execute(self, context):
        from . import locomotion_scene as LS

        try:
            action = self.run(context, **self._common(context))
        except LS.Cancelled:
            self.report({"INFO"}, "Cancelled")
            return {"CANCELLED"}
        except ValueError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        return self._finished(action)

    def invoke(self, context, event):
        if context.window is None:
            return self.execute(context)
        try:
            self._job = self.job(context, **self._common(context))
        except ValueError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        wm = context.window_manager
        self._timer = wm.event_timer_add(0.1, window=context.window)
        wm.progress_begin(0, 100)
        wm.modal_handler_add(self)
        return {"RUNNING_MODAL"}

    def _stop(self, context):
        wm = context.window_manager
        if self._timer is not None:
            wm.event_timer_remove(self._timer)
            self._timer = None
        wm.progress_end()

    def modal(self, context, event):
        from . import locomotion_scene as LS

        if event.type == "ESC" and event.value == "PRESS":
            self._job.close()  # stops the worker; nothing has been written
            self._stop(context)
            self.report({"INFO"}, "Cancelled")
            return {"CANCELLED"}
        if event.type != "TIMER":
            return {"PASS_THROUGH"}
        try:
            fraction = next(self._job)
        except StopIteration as done:
            self._stop(context)
            return self._finished(done.value)
        except LS.Cancelled:
            self._stop(context)
            self.report({"INFO"}, "Cancelled")
            return {"CANCELLED"}
        except ValueError as e:
            self._stop(context)
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        except BaseException:
            self._stop(context)
            raise
        context.window_manager.progress_update(int(round(100 * fraction)))
        return {"RUNNING_MODAL"}

    def cancel(self, context):
        # Blender ends the modal (e.g. a file is loaded): stop the worker too.
        if self._job is not None:
            self._job.close()
        self._stop(context)


class _LocomotionOperator(_ModalJobOperator):
    """A modal job driven by the Locomotion settings and a controller choice."""

    controller: EnumProperty(name="Controller", items=CONTROLLER_KINDS, default="auto", options={"SKIP_SAVE"})

    def _common(self, context) -> dict:
        s = _settings(context)
        speed = None if getattr(s, "speed_from_style", False) else float(s.speed)
        return dict(style=s.style, gait=s.gait, speed=speed, controller=self.controller,
                    controller_options=_controller_options(context))


class RIGMIND_OT_bake_walk_cycle(_LocomotionOperator, bpy.types.Operator):
    """Bake a looping walk or run cycle (style, speed, in place from the Locomotion settings) onto the target armature as a new action"""

    bl_idname = "rigmind.bake_walk_cycle"
    bl_label = "Bake Walk Cycle"

    def run(self, context, **kw):
        from . import locomotion_scene as LS

        return LS.bake_walk_cycle(_target_armature(context), in_place=_settings(context).in_place, **kw)

    def job(self, context, **kw):
        from . import locomotion_scene as LS

        return LS.walk_cycle_job(_target_armature(context), in_place=_settings(context).in_place, **kw)


class RIGMIND_OT_walk_along_path(_LocomotionOperator, bpy.types.Operator):
    """Walk the target armature along the selected curve (or RigMind ▸ Path: a curve, or empties) as a new action"""

    bl_idname = "rigmind.walk_along_path"
    bl_label = "Walk Along Path"

    def _points(self, context):
        from . import locomotion_scene as LS

        return LS.curve_to_polyline(_path_object(context), list(context.selected_objects or []))

    def run(self, context, **kw):
        from . import locomotion_scene as LS

        return LS.walk_along_path(_target_armature(context), self._points(context),
                                  in_place=_settings(context).in_place, **kw)

    def job(self, context, **kw):
        from . import locomotion_scene as LS

        return LS.walk_path_job(_target_armature(context), self._points(context),
                                in_place=_settings(context).in_place, **kw)


class RIGMIND_OT_generate_gesture(_ModalJobOperator, bpy.types.Operator):
    """Generate body, head, hand and finger motion from the speech audio (or the scene's sound strip) on the target armature as a new action, with the face mesh if set; the audio is added as a sound strip in sync"""

    bl_idname = "rigmind.generate_gesture"
    bl_label = "Generate Gesture"

    def _common(self, context) -> dict:
        s = _settings(context)
        return dict(audio_path=bpy.path.abspath(s.audio_path) if s.audio_path else None,
                    amount=float(s.gesture_amount), seed=int(s.seed), start_frame=int(s.start_frame),
                    base=s.gesture_base, face_mesh=s.face_mesh, set_scene_fps=bool(s.set_scene_fps),
                    face_method=s.face_method, runtime=_runtime(context))

    def _finished(self, result):
        self.report({"WARNING"} if result.face is not None and result.face.missing else {"INFO"}, result.summary())
        return {"FINISHED"}

    def run(self, context, **kw):
        from . import gesture_scene

        return gesture_scene.generate_gesture_on_rig(_target_armature(context), **kw)

    def job(self, context, **kw):
        from . import gesture_scene

        return gesture_scene.gesture_job(_target_armature(context), **kw)


class RIGMIND_OT_generate_face(bpy.types.Operator):
    """Lip-sync, blinks and brows from the speech audio onto the face mesh's ARKit shape keys (a new action; a .txt beside the audio is used as the transcript)"""

    bl_idname = "rigmind.generate_face"
    bl_label = "Generate Face"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return _settings(context) is not None

    def execute(self, context):
        from . import face_scene

        s = _settings(context)
        mesh = s.face_mesh if s.face_mesh is not None else context.active_object
        try:
            if not s.audio_path:
                raise ValueError("Set RigMind ▸ Speech ▸ Audio to a speech recording first")
            if mesh is None:
                raise ValueError("Set RigMind ▸ Speech ▸ Face Mesh to a mesh with ARKit shape keys")
            result = face_scene.generate_face_on_mesh(mesh, bpy.path.abspath(s.audio_path), seed=int(s.seed),
                                                      start_frame=int(s.start_frame), method=s.face_method,
                                                      runtime=_runtime(context))
        except ValueError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        self.report({"WARNING"} if result.missing else {"INFO"}, result.summary())
        return {"FINISHED"}


CLASSES = (RIGMIND_OT_add_mannequin, RIGMIND_OT_apply_bvh, RIGMIND_OT_retarget_motion,
           RIGMIND_OT_detect_bone_map, RIGMIND_OT_save_bone_map, RIGMIND_OT_bake_walk_cycle,
           RIGMIND_OT_walk_along_path, RIGMIND_OT_export, RIGMIND_OT_render, RIGMIND_OT_generate_face,
           RIGMIND_OT_generate_gesture)

# Drive (live steering) lives in its own module.
from .drive_op import CLASSES as _DRIVE_CLASSES  # noqa: E402

CLASSES = CLASSES + _DRIVE_CLASSES
