"""Scene I/O on real Blender: skeleton reading, action writing (slotted
actions, every rotation mode), previous actions kept, undo, shape keys."""

from __future__ import annotations

import numpy as np
import pytest

from rigmind.backend import rotations
from rigmind.backend.motion import Motion
from rigmind.backend.skeleton import Skeleton


def _random_motion(rng, frames=40, fps=30.0):
    parents = [-1, 0, 1, 2, 1, 4, 0, 6, 7]
    offsets = rng.normal(size=(len(parents), 3)) * 0.2
    offsets[0] = [0.0, 0.0, 1.0]
    sk = Skeleton([f"bone.{i:02d}" for i in range(len(parents))], parents, offsets)
    rots = rotations.make_continuous(rotations.normalize(rng.normal(size=(frames, len(parents), 4))))
    return Motion(sk, rots, rng.normal(size=(frames, 3)), fps=fps, name="random")


def _pose_heads(bpy, arm, names, frame):
    bpy.context.scene.frame_set(frame)
    return np.array([list(arm.matrix_world @ arm.pose.bones[n].head) for n in names])


@pytest.mark.parametrize("mode", ["QUATERNION", "XYZ", "ZXY", "YZX", "AXIS_ANGLE"])
def test_written_action_reproduces_world_positions(bpy_clean, mode):
    from rigmind.operators import scene_io

    bpy = bpy_clean
    bpy.context.scene.render.fps = 30
    m = _random_motion(np.random.default_rng(1))
    arm = scene_io.build_armature(m.skeleton, "Rig")
    for pb in arm.pose.bones:
        pb.rotation_mode = mode
    on_rig = m.with_rest(scene_io.read_skeleton(arm))
    scene_io.write_motion(arm, on_rig, "test")
    want = m.world_positions()
    err = max(np.abs(_pose_heads(bpy, arm, m.skeleton.names, 1 + f) - want[f]).max() for f in range(m.num_frames))
    assert err < 1e-5, f"max joint error {err} m in rotation mode {mode}"


def test_read_skeleton_matches_built_rest(bpy_clean):
    from rigmind.operators import scene_io

    m = _random_motion(np.random.default_rng(2))
    arm = scene_io.build_armature(m.skeleton, "Rig")
    rig = scene_io.read_skeleton(arm)
    assert rig.names == m.skeleton.names
    assert list(rig.parents) == list(m.skeleton.parents)
    np.testing.assert_allclose(rig.rest_positions(), m.skeleton.rest_positions(), atol=1e-6)


def test_new_action_per_generation_keeps_previous(bpy_clean):
    from rigmind.operators import scene_io

    m = _random_motion(np.random.default_rng(3))
    arm = scene_io.build_armature(m.skeleton, "Rig")
    on_rig = m.with_rest(scene_io.read_skeleton(arm))
    first = scene_io.write_motion(arm, on_rig, "RigMind Walk · normal · 1.4 m/s")
    second = scene_io.write_motion(arm, on_rig.slice(0, 10), "RigMind Walk · old · 1.0 m/s")
    assert arm.animation_data.action == second
    assert first.name == "RigMind Walk · normal · 1.4 m/s"
    assert first.use_fake_user, "the previous action must survive without users"
    tracks = arm.animation_data.nla_tracks
    assert len(tracks) == 1 and tracks[0].mute
    assert tracks[0].strips[0].action == first
    # Blender 5.0: curves live in layer -> strip -> channelbag(slot)
    cb = second.layers[0].strips[0].channelbag(arm.animation_data.action_slot)
    assert len(cb.fcurves) == 4 * len(m.skeleton) + 3
    assert len(cb.fcurves[0].keyframe_points) == 10


def test_undo_restores_scene(bpy_clean):
    from rigmind.operators import scene_io

    bpy = bpy_clean
    m = _random_motion(np.random.default_rng(4))
    arm = scene_io.build_armature(m.skeleton, "Rig")
    on_rig = m.with_rest(scene_io.read_skeleton(arm))
    scene_io.write_motion(arm, on_rig, "before")
    bpy.ops.ed.undo_push(message="before generate")
    scene_io.write_motion(arm, on_rig, "generated")
    bpy.ops.ed.undo_push(message="generate")
    assert bpy.data.objects["Rig"].animation_data.action.name == "generated"
    bpy.ops.ed.undo()
    arm = bpy.data.objects["Rig"]
    assert arm.animation_data.action.name == "before"
    assert "generated" not in bpy.data.actions
    assert len(arm.animation_data.nla_tracks) == 0


def test_fps_mapping_and_scene_range(bpy_clean):
    from rigmind.operators import scene_io

    bpy = bpy_clean
    bpy.context.scene.render.fps = 24
    m = _random_motion(np.random.default_rng(5), frames=31, fps=30.0)
    arm = scene_io.build_armature(m.skeleton, "Rig")
    act = scene_io.write_motion(arm, m.with_rest(scene_io.read_skeleton(arm)), "t", frame_start=10)
    cb = act.layers[0].strips[0].channelbag(arm.animation_data.action_slot)
    co = np.zeros(2 * 31)
    cb.fcurves[0].keyframe_points.foreach_get("co", co)
    # 30 fps motion on a 24 fps scene: one second (30 frames) spans 24 scene frames.
    assert co[0] == pytest.approx(10.0) and co[-2] == pytest.approx(34.0)
    assert bpy.context.scene.frame_end == 34
    act2 = scene_io.write_motion(arm, m.with_rest(scene_io.read_skeleton(arm)), "t2", set_scene_fps=True)
    assert bpy.context.scene.render.fps == 30
    assert act2.frame_range[1] == pytest.approx(31.0)


def test_errors_are_clear(bpy_clean):
    from rigmind.operators import scene_io

    bpy = bpy_clean
    empty = bpy.data.objects.new("Empty", None)
    bpy.context.scene.collection.objects.link(empty)
    with pytest.raises(scene_io.SceneError, match="needs an armature"):
        scene_io.read_skeleton(empty)
    m = _random_motion(np.random.default_rng(6))
    arm = scene_io.build_armature(m.skeleton.subset(m.skeleton.names[:4]), "Small")
    with pytest.raises(scene_io.SceneError, match="lacks bones"):
        scene_io.write_motion(arm, m, "x")


def test_shape_key_curves(bpy_clean):
    from rigmind.operators import scene_io

    bpy = bpy_clean
    bpy.ops.mesh.primitive_uv_sphere_add()
    ob = bpy.context.active_object
    ob.shape_key_add(name="Basis")
    for n in ("jawOpen", "eyeBlinkLeft"):
        ob.shape_key_add(name=n)
    w = np.stack([np.linspace(0, 1, 20), np.linspace(1, 0, 20), np.full(20, 0.5)], axis=1)
    action, written, skipped = scene_io.write_shape_keys(ob, ["jawOpen", "eyeBlinkLeft", "tongueOut"], w, 30.0, "face")
    assert written == ["jawOpen", "eyeBlinkLeft"] and skipped == ["tongueOut"]
    key = ob.data.shape_keys
    assert key.animation_data.action == action
    bpy.context.scene.render.fps = 30
    bpy.context.scene.frame_set(20)
    assert key.key_blocks["jawOpen"].value == pytest.approx(1.0)
    assert key.key_blocks["eyeBlinkLeft"].value == pytest.approx(0.0)
