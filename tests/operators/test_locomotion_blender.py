"""Locomotion in Blender (real bpy): Bake Walk Cycle and Walk Along Path on
the mannequin, cancelling, the operators and ``rigmind walk``.

The controller is the motion-matching baseline over 20 real Bandai Namco
clips, passed in explicitly, so nothing here needs trained weights (skipped
without shared/data).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO, call_as_panel, data_file
from rigmind.backend.requests.walk import WalkCycleRequest, WalkPathRequest

D2 = "bandai_namco_d2_locomotion/bvh/dataset-2_"
CLIPS = (
    [f"walk_normal_00{i}" for i in range(1, 7)]
    + [f"walk-turn-left_normal_00{i}" for i in range(1, 6)]
    + [f"walk-turn-right_normal_00{i}" for i in range(1, 6)]
    + [f"run_normal_00{i}" for i in range(1, 5)]
)
RIGMIND = Path(sys.executable).parent / "rigmind"


@pytest.fixture(scope="module")
def controller():
    from rigmind.backend.locomotion import dataset
    from rigmind.backend.locomotion import features
    from rigmind.backend.locomotion.motion_matching import MotionMatchingController

    clips = []
    for name in CLIPS:
        path = data_file(D2 + name + ".bvh.gz")
        clips.append((features.load_clip(path), dataset.parse_name(path).labels()))
    assert len(clips) == 20
    return MotionMatchingController.build(clips)


@pytest.fixture
def rig(bpy_clean):
    from rigmind.operators import mannequin

    return mannequin.build_mannequin()["armature"]


def _heads(arm, frames):
    """World bone heads ``[F, B, 3]`` of the evaluated pose at scene ``frames``."""
    from rigmind.operators import retarget_scene

    bones = {b.name: b.name for b in arm.pose.bones}
    pos = retarget_scene.sample_positions_world(arm, bones, frames)
    return np.stack([pos[b] for b in bones], axis=1)


def _fcurves(action, arm):
    from bpy_extras.anim_utils import action_get_channelbag_for_slot

    return list(action_get_channelbag_for_slot(action, arm.animation_data.action_slot).fcurves)


def test_bake_walk_cycle_loops(rig, controller):
    import bpy

    from rigmind.operators import locomotion_scene

    seen = []
    action = locomotion_scene.bake_walk_cycle(rig, WalkCycleRequest(style="normal", gait="walk", speed=1.4, in_place=True), controller=controller, progress=seen.append)
    assert action.name == "RigMind Walk · normal · 1.4 m/s"
    assert rig.animation_data.action == action
    curves = _fcurves(action, rig)
    assert curves and all(any(m.type == "CYCLES" for m in fc.modifiers) for fc in curves)
    scene = bpy.context.scene
    n = scene.frame_end - scene.frame_start + 1
    assert scene.frame_start == 1 and 25 <= n <= 90, n  # one or two gait cycles at 30 fps
    assert action.frame_range[1] == scene.frame_end + 1  # the closing key repeats the first
    assert seen and seen == sorted(seen) and seen[-1] == 1.0

    # Play two cycles and one frame past the end: frame n -> n + 1 is the seam.
    p = _heads(rig, range(1, 2 * n + 2))
    jumps = np.linalg.norm(np.diff(p, axis=0), axis=-1).max(axis=1)  # jumps[i]: frame i+1 -> i+2
    seam = max(jumps[n - 1], jumps[2 * n - 1])
    inside = jumps[: n - 1].max()
    assert seam <= inside, (seam, inside)
    # The Cycles modifiers repeat the loop exactly.
    np.testing.assert_allclose(p[n], p[0], atol=1e-4)
    # In place: the hips stay within a stride's sway of where they were.
    assert np.ptp(p[:, 0, :2], axis=0).max() < 0.3


def test_bake_root_motion_cycle_keeps_moving(rig, controller):
    import bpy

    from rigmind.operators import locomotion_scene

    locomotion_scene.bake_walk_cycle(rig, WalkCycleRequest(style="normal", speed=1.3, in_place=False), controller=controller)
    n = bpy.context.scene.frame_end
    hips = _heads(rig, [1, n + 1, 2 * n + 1])[:, 0]
    step = hips[1] - hips[0]
    # One cycle moves forward (-Y) at about the asked speed, and the next one repeats it.
    assert -step[1] / (n / 30.0) == pytest.approx(1.3, rel=0.25)
    np.testing.assert_allclose(hips[2] - hips[1], step, atol=1e-3)


def test_walk_along_bezier_curve(rig, controller):
    import bpy

    from rigmind.operators import locomotion_scene

    bpy.ops.curve.primitive_bezier_curve_add(location=(0.5, -1.0, 0.0))
    curve = bpy.context.active_object
    curve.scale = (2.0, 2.0, 2.0)  # control points at x = -1 and +1: ~4 m long
    pts = locomotion_scene.curve_to_polyline(curve)
    end = np.array([2.5, -1.0])
    np.testing.assert_allclose(pts[0], [-1.5, -1.0], atol=1e-4)
    np.testing.assert_allclose(pts[-1], end, atol=1e-4)
    length = np.sum(np.linalg.norm(np.diff(pts, axis=0), axis=1))
    assert 4.0 < length < 5.0

    action = locomotion_scene.walk_along_path(rig, WalkPathRequest(points=pts, style="normal", speed=1.3), controller=controller)
    assert action.name == "RigMind Walk Along Path · normal · 1.3 m/s"
    scene = bpy.context.scene
    hips = _heads(rig, [scene.frame_start, scene.frame_end])[:, 0, :2]
    assert np.linalg.norm(hips[0] - pts[0]) < 0.3
    assert np.linalg.norm(hips[-1] - end) < 0.5, hips[-1]


def test_walk_around_bezier_circle(rig, controller):
    """A cyclic curve (Add ▸ Curve ▸ Circle) is a path that ends where it
    starts: the character walks round it and stops back at the start."""
    import bpy

    from rigmind.operators import locomotion_scene

    bpy.ops.curve.primitive_bezier_circle_add(radius=1.5, location=(0.0, 0.0, 0.0))
    curve = bpy.context.active_object
    pts = locomotion_scene.curve_to_polyline(curve)
    np.testing.assert_allclose(pts[0], pts[-1], atol=1e-4)
    locomotion_scene.walk_along_path(rig, WalkPathRequest(points=pts, style="normal", speed=1.1), controller=controller)
    scene = bpy.context.scene
    frames = list(range(scene.frame_start, scene.frame_end + 1, 5))
    hips = _heads(rig, frames)[:, 0, :2]
    assert scene.frame_end - scene.frame_start > 5 * 30  # ~9.4 m at ~1 m/s, not a stop on the spot
    assert np.ptp(hips[:, 0]) > 2.4 and np.ptp(hips[:, 1]) > 2.4
    assert np.linalg.norm(hips[-1] - pts[0]) < 0.5


def test_cancel_leaves_scene_unchanged(rig, controller):
    import bpy

    from rigmind.backend import errors
    from rigmind.operators import locomotion_scene

    previous = locomotion_scene.bake_walk_cycle(rig, WalkCycleRequest(style="normal", speed=1.3, in_place=True), controller=controller)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 5, 77
    actions = set(bpy.data.actions)
    before = _fcurves(previous, rig)[0].keyframe_points[3].co[1]
    calls = []

    def cancel():  # lets the first chunk run, then cancels
        calls.append(1)
        return len(calls) > 1

    with pytest.raises(errors.Cancelled):
        locomotion_scene.bake_walk_cycle(rig, WalkCycleRequest(style="normal", speed=1.3), controller=controller, cancel=cancel)
    with pytest.raises(errors.Cancelled):
        locomotion_scene.walk_along_path(rig, WalkPathRequest(points=[[0, 0], [3, 0]]), controller=controller, cancel=cancel)
    assert set(bpy.data.actions) == actions
    assert rig.animation_data.action == previous
    assert _fcurves(previous, rig)[0].keyframe_points[3].co[1] == before
    assert (scene.frame_start, scene.frame_end) == (5, 77)


def test_job_generator_cancel_and_finish(rig, controller):
    """The modal operators' job: closing it stops the worker and writes nothing."""
    import bpy

    from rigmind.operators import locomotion_scene

    actions = set(bpy.data.actions)
    job = locomotion_scene.walk_path_job(rig, WalkPathRequest(points=[[0, 0], [0, -2]], style="normal", speed=1.3), controller=controller)
    next(job)
    job.close()
    assert set(bpy.data.actions) == actions
    job = locomotion_scene.walk_cycle_job(rig, WalkCycleRequest(style="normal", gait="walk", speed=1.3, in_place=True), controller=controller)
    fractions = []
    try:
        while True:
            fractions.append(next(job))
            time.sleep(0.01)  # a modal operator polls on a timer; spinning would starve the worker
    except StopIteration as done:
        action = done.value
    assert action.name == "RigMind Walk · normal · 1.3 m/s" and rig.animation_data.action == action
    assert fractions and max(fractions) <= 1.0


def test_operators(bpy_clean, data_dir, monkeypatch):
    """The panel's operators (execute, as scripts run them), with the
    motion-matching controller built from the data folder (normal walks)."""
    import rigmind

    bpy = bpy_clean
    monkeypatch.setenv("RIGMIND_DATA", str(data_dir))
    rigmind.register()
    try:
        bpy.ops.rigmind.add_mannequin()
        s = bpy.context.scene.rigmind
        arm = s.target_armature
        # By default the style's own speed (the normal walks' median, 1.1 m/s).
        assert s.speed_from_style
        assert call_as_panel("rigmind.bake_walk_cycle", controller="motion_matching") == {"FINISHED"}
        assert arm.animation_data.action.name == "RigMind Walk · normal · 1.1 m/s"
        s.speed_from_style = False
        s.speed = 1.2
        # Headless there is no window to run a modal in: invoke runs the job synchronously.
        assert call_as_panel("rigmind.bake_walk_cycle", controller="motion_matching") == {"FINISHED"}
        assert arm.animation_data.action.name == "RigMind Walk · normal · 1.2 m/s"
        with pytest.raises(RuntimeError, match="needs a path"):
            call_as_panel("rigmind.walk_along_path", controller="motion_matching")
        bpy.ops.curve.primitive_bezier_curve_add(location=(0.0, 0.0, 0.0))
        curve = bpy.context.active_object
        bpy.ops.object.select_all(action="DESELECT")
        s.path_object = curve
        assert call_as_panel("rigmind.walk_along_path", controller="motion_matching") == {"FINISHED"}
        assert arm.animation_data.action.name == "RigMind Walk Along Path · normal · 1.2 m/s"
        # In Place is honoured in path mode (the path's walk on the spot).
        s.in_place = True
        assert call_as_panel("rigmind.walk_along_path", controller="motion_matching") == {"FINISHED"}
        assert arm.animation_data.action.name == "RigMind Walk Along Path in place · normal · 1.2 m/s"
    finally:
        rigmind.unregister()


def test_empties_path(bpy_clean):
    from rigmind.operators import locomotion_scene

    bpy = bpy_clean
    made = []
    for name, loc in (("P.002", (2, 2, 0)), ("P.000", (0, 0, 0)), ("P.001", (2, 0, 1))):
        ob = bpy.data.objects.new(name, None)
        ob.location = loc
        bpy.context.scene.collection.objects.link(ob)
        made.append(ob)
    bpy.context.view_layer.update()
    np.testing.assert_allclose(locomotion_scene.curve_to_polyline(made[0], made), [[0, 0], [2, 0], [2, 2]])
    with pytest.raises(ValueError, match="two or more selected empties"):
        locomotion_scene.curve_to_polyline(made[0], [])


def _run(*args):
    return subprocess.run([str(RIGMIND), *map(str, args)], capture_output=True, text=True, timeout=180,
                          env=dict(os.environ), cwd=REPO)


def test_cli_walk_path(bpy_clean, tmp_path, data_dir):
    from rigmind.operators import mannequin

    blend = tmp_path / "m.blend"
    mannequin.save_mannequin(blend)
    out = tmp_path / "x.glb"
    r = _run("walk", "--controller", "motion_matching", "--data", data_dir, "--rig", blend,
             "--path", "0,0;3,0;3,3", "--out", out)
    assert r.returncode == 0, r.stderr
    assert out.stat().st_size > 10_000
    # No --speed: the normal walks' median (1.10 m/s) scaled to the mannequin's legs (x1.055).
    assert "Walk Along Path · normal · 1.16 m/s" in r.stdout


def test_cli_walk_bad_path(tmp_path):
    r = _run("walk", "--rig", tmp_path / "m.blend", "--path", "0,0;3,x", "--out", tmp_path / "x.glb")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rigmind walk:") and "'3,x'" in lines[0], r.stderr


def _straight_curve(bpy, name: str, length: float):
    """A two-point poly curve ``name`` along +X, ``length`` metres."""
    curve = bpy.data.curves.new(name, "CURVE")
    spline = curve.splines.new("POLY")
    spline.points.add(1)
    spline.points[0].co, spline.points[1].co = (0, 0, 0, 1), (length, 0, 0, 1)
    ob = bpy.data.objects.new(name, curve)
    bpy.context.scene.collection.objects.link(ob)
    return ob


def test_walk_along_path_actions_from_the_panel(bpy_clean):
    """The panel's Actions field and Start (issue #28): a jump and a crouch
    along a curve, read back from the evaluated pose; a bad field is one
    ERROR line and the scene keeps its actions."""
    import rigmind

    bpy = bpy_clean
    rigmind.register()
    try:
        bpy.ops.rigmind.add_mannequin()
        s = bpy.context.scene.rigmind
        arm = s.target_armature
        s.mode, s.path_object = "PATH", _straight_curve(bpy, "Road", 10.0)
        s.path_actions = "jump@2.5; crouch@5.5-8"
        assert call_as_panel("rigmind.walk_along_path") == {"FINISHED"}
        action = arm.animation_data.action
        first, last = (int(round(f)) for f in action.frame_range)
        frames = list(range(first, last + 1))
        hips = _heads(arm, frames)[:, [b.name for b in arm.pose.bones].index("Hips")]
        x, z = hips[:, 0], hips[:, 2]
        walking = np.median(z[(x > 0.5) & (x < 1.8)])
        jump = (x > 2.5) & (x < 4.0)
        assert z[jump].max() > walking + 0.12
        crouched = (x > 5.5) & (x < 8.0)
        assert z[crouched].max() < 0.8 * walking
        assert abs(x[-1] - 10.0) < 0.1
        with pytest.raises(RuntimeError, match="unknown action 'fly'"):
            s.path_actions = "fly@2"
            call_as_panel("rigmind.walk_along_path")
        assert arm.animation_data.action == action
        s.path_actions, s.path_start = "", "lying-down"
        assert call_as_panel("rigmind.walk_along_path") == {"FINISHED"}
        lying = arm.animation_data.action
        assert lying != action
        first = int(round(lying.frame_range[0]))
        start_z = _heads(arm, [first])[0, [b.name for b in arm.pose.bones].index("Hips"), 2]
        assert start_z < 0.4  # starts on the floor
        s.mode, s.gait, s.path_start = "CYCLE", "crouch", "standing"
        assert call_as_panel("rigmind.bake_walk_cycle") == {"FINISHED"}
        assert arm.animation_data.action.name.startswith("RigMind Crouch · normal · ")
    finally:
        rigmind.unregister()
