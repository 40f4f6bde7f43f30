"""RigMind's Blender operators through bpy.ops, as the panel calls them."""

from __future__ import annotations

import pytest

from conftest import call_as_panel, data_file

CLIP = "bandai_namco_d2_locomotion/bvh/dataset-2_walk_normal_001.bvh.gz"


def test_add_mannequin_sets_targets(registered):
    bpy = registered
    assert bpy.ops.rigmind.add_mannequin() == {"FINISHED"}
    s = bpy.context.scene.rigmind
    assert s.target_armature is not None and s.target_armature.type == "ARMATURE"
    assert s.face_mesh is not None and s.face_mesh.data.shape_keys is not None


def test_apply_bvh_new_action_and_undo(registered):
    from rigmind.backend.bvh import read_bvh
    from rigmind.operators import scene_io

    bpy = registered
    path = data_file(CLIP)
    arm = scene_io.build_armature(read_bvh(path).skeleton, "Bandai")
    bpy.context.scene.rigmind.target_armature = arm
    bpy.ops.ed.undo_push(message="before")
    assert bpy.ops.rigmind.apply_bvh(filepath=str(path)) == {"FINISHED"}
    # The UI pushes the operator's undo step (bl_options UNDO); headless
    # bpy.ops calls do not, so push it as the UI would.
    bpy.ops.ed.undo_push(message="Apply BVH Motion")
    arm = bpy.data.objects["Bandai"]
    assert arm.animation_data.action.name == "RigMind BVH · dataset-2_walk_normal_001"
    assert bpy.context.scene.render.fps == 24  # the scene keeps its frame rate unless asked (set_scene_fps)
    bpy.ops.ed.undo()
    arm = bpy.data.objects["Bandai"]
    assert arm.animation_data is None or arm.animation_data.action is None
    assert not [a for a in bpy.data.actions if a.name.startswith("RigMind BVH")]


def test_apply_bvh_on_mismatched_rig_reports_clearly(registered):
    bpy = registered
    bpy.ops.rigmind.add_mannequin()
    with pytest.raises(RuntimeError, match="needs retargeting onto this rig"):
        bpy.ops.rigmind.apply_bvh(filepath=str(data_file(CLIP)))
    arm = bpy.context.scene.rigmind.target_armature
    assert arm.animation_data is None or arm.animation_data.action is None, "a failed run must not touch the rig"


def test_export_operator_needs_a_path(registered, tmp_path):
    bpy = registered
    bpy.ops.rigmind.add_mannequin()
    s = bpy.context.scene.rigmind
    # The default path is relative to the .blend, which is not saved here.
    with pytest.raises(RuntimeError, match="not saved yet"):
        call_as_panel("rigmind.export")
    s.export_path = ""
    with pytest.raises(RuntimeError, match="Set an export path"):
        call_as_panel("rigmind.export")
    s.export_format = "GLB"
    s.export_path = str(tmp_path / "character")
    assert call_as_panel("rigmind.export") == {"FINISHED"}
    assert (tmp_path / "character.glb").stat().st_size > 10_000


def test_bone_map_detect_edit_save_and_use(registered):
    from rigmind.backend.bone_mapping import BoneMapping, match_preset
    from rigmind.operators import retarget_scene, scene_io
    from rigmind.operators.blender_ops import user_bone_map_dir

    bpy = registered
    bpy.ops.rigmind.add_mannequin()
    s = bpy.context.scene.rigmind
    assert call_as_panel("rigmind.detect_bone_map") == {"FINISHED"}
    rows = {it.canonical: it for it in s.bone_map}
    assert rows["upperarm_l"].bone == "LeftArm" and rows["hips"].bone == "Hips"
    # The user edits one row (say their rig's jaw should not be driven).
    rows["jaw"].bone = ""
    s.bone_map_name = "mannequin no jaw"
    assert call_as_panel("rigmind.save_bone_map") == {"FINISHED"}
    arm = s.target_armature
    stored = BoneMapping.from_json(arm["rigmind_bone_map"])
    assert stored.preset == "user" and "jaw" not in stored.bones
    # Retargeting now uses the stored mapping ...
    assert "jaw" not in retarget_scene.target_mapping(arm).bones
    # ... and the saved preset file maps the same rig again.
    path = user_bone_map_dir() / "mannequin_no_jaw.json"
    assert path.exists()
    again = match_preset(scene_io.read_skeleton(arm), str(path))
    assert again.bones["upperarm_l"] == "LeftArm" and "jaw" not in again.bones


def test_bone_map_save_refuses_broken_mapping(registered):
    bpy = registered
    bpy.ops.rigmind.add_mannequin()
    s = bpy.context.scene.rigmind
    call_as_panel("rigmind.detect_bone_map")
    rows = {it.canonical: it for it in s.bone_map}
    rows["hand_l"].bone = "NoSuchBone"
    with pytest.raises(RuntimeError, match="bones not in"):
        call_as_panel("rigmind.save_bone_map")
    rows["hand_l"].bone = ""
    with pytest.raises(RuntimeError, match="required joints unmapped"):
        call_as_panel("rigmind.save_bone_map")


def test_retarget_operator_from_file(registered):
    bpy = registered
    bpy.ops.rigmind.add_mannequin()
    path = data_file(CLIP)
    assert bpy.ops.rigmind.retarget_motion(filepath=str(path)) == {"FINISHED"}
    arm = bpy.context.scene.rigmind.target_armature
    assert arm.animation_data.action.name.startswith("RigMind Retarget")


def test_retarget_operator_rejects_non_humanoid(registered):
    from rigmind.backend.skeleton import Skeleton
    from rigmind.operators import scene_io

    bpy = registered
    chain = Skeleton(["a", "b", "c"], [-1, 0, 1], [[0, 0, 0], [0, 0, 0.3], [0, 0, 0.3]])
    arm = scene_io.build_armature(chain, "Tail")
    bpy.context.scene.rigmind.target_armature = arm
    with pytest.raises(RuntimeError, match="humanoid"):
        bpy.ops.rigmind.retarget_motion(filepath=str(data_file(CLIP)))
    assert arm.animation_data is None or arm.animation_data.action is None
