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


class RIGMIND_OT_export(bpy.types.Operator):
    """Export the target armature, its meshes and its active animation with Blender's own exporter"""

    bl_idname = "rigmind.export"
    bl_label = "Export Character"
    bl_options = {"REGISTER"}

    @classmethod
    def poll(cls, context):
        return _target_armature(context) is not None and _settings(context) is not None

    def execute(self, context):
        from . import export

        s = _settings(context)
        try:
            path = _output_path(s.export_path, "an export path")
            suffix = "." + s.export_format.lower()
            if not path.lower().endswith(suffix):
                path += suffix
            written = export.export_character(_target_armature(context), path)
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
        from . import render

        s = _settings(context)
        try:
            path = _output_path(s.render_path, "a render output path (.png or .mp4)")
            out = render.render(path, engine=s.render_engine)
        except (ValueError, RuntimeError) as e:
            self.report({"ERROR"}, str(e).splitlines()[0])
            return {"CANCELLED"}
        self.report({"INFO"}, f"Rendered {out}")
        return {"FINISHED"}


CLASSES = (RIGMIND_OT_add_mannequin, RIGMIND_OT_apply_bvh, RIGMIND_OT_retarget_motion, RIGMIND_OT_export, RIGMIND_OT_render)
