"""The FBX export switches the meshes' Armature modifiers off while it bakes
(nothing reads the deformed mesh) and pins each mesh to its basis shape: the file must be the one Blender writes
with them on, and the scene must be left as it was."""

from __future__ import annotations

import numpy as np


def _animated_mannequin(bpy):
    from rigmind.operators import mannequin

    parts = mannequin.build_mannequin()
    arm, head = parts["armature"], parts["head"]
    key = head.data.shape_keys.key_blocks["jawOpen"]
    for frame, value in ((1, 0.0), (8, 1.0), (20, 0.2)):
        key.value = value
        key.keyframe_insert("value", frame=frame)
    head.active_shape_key_index = 3  # a user's choice the export must not change
    bone = arm.pose.bones[0]
    for frame, angle in ((1, 0.0), (10, 0.6), (20, -0.4)):
        bone.rotation_mode = "XYZ"
        bone.rotation_euler = (angle, 0.0, 0.0)
        bone.keyframe_insert("rotation_euler", frame=frame)
    return arm


def test_fbx_same_with_deform_off(bpy_clean, tmp_path):
    from rigmind.operators import export

    bpy = bpy_clean
    arm = _animated_mannequin(bpy)
    objs = export.character_objects(arm)
    mods = [m for o in objs if o.type == "MESH" for m in o.modifiers if m.type == "ARMATURE"]
    assert mods and all(m.show_viewport for m in mods)

    bpy.context.scene.frame_set(1)
    fast = export.export_character(arm, tmp_path / "fast.fbx", frame_range=(1, 20))
    assert all(m.show_viewport for m in mods)  # restored
    head = next(o for o in objs if o.type == "MESH" and o.data.shape_keys is not None)
    assert head.active_shape_key_index == 3 and not head.show_only_shape_key
    bpy.context.scene.frame_set(1)
    # export_character put the scene's range back; the plain call bakes the same 1-20.
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, 20
    export._select_only(objs)
    # The same exporter call as Blender runs it, modifiers on.
    export._run_exporter(".fbx", tmp_path / "plain.fbx", export.PRESETS["generic"])

    a = np.frombuffer((tmp_path / "plain.fbx").read_bytes(), np.uint8)
    b = np.frombuffer(fast.read_bytes(), np.uint8)
    assert a.shape == b.shape
    differ = np.flatnonzero(a != b)
    # Only the header's creation time stamp may differ.
    assert differ.size <= 16 and (differ.size == 0 or differ.max() < 1024), differ[:20]


def test_blenders_own_fbx_passes_the_structure_check(bpy_clean, tmp_path):
    """What Blender's exporter writes (meshes, 52 shape keys, an action) is
    never refused by backend/fbx_check.py, and imports back."""
    from rigmind.backend.fbx_check import check_fbx
    from rigmind.operators import export, rig_files

    arm = _animated_mannequin(bpy_clean)
    out = export.export_character(arm, tmp_path / "take.fbx", frame_range=(1, 20))
    check_fbx(out)
    objs = rig_files.load_rig_file(out)
    assert any(o.type == "ARMATURE" for o in objs)
