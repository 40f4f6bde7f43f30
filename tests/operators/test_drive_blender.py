"""Drive in real Blender: a scripted 10 s drive of the mannequin, recorded
and baked; Esc leaves the scene exactly as it was; the live mapping against
the full retarget; the operator and its panel button.

A modal operator cannot receive key events headless, so the tests feed
:class:`rigmind.operators.drive_scene.DriveSession` (what the operator runs
on each event and timer tick) a recorded event sequence. Needs the committed
locomotion weights (models/locomotion.onnx).
"""

from __future__ import annotations

import numpy as np
import pytest

from rigmind.backend.locomotion.drive_input import InputEvent
from rigmind.backend.requests.walk import WalkPathRequest

bpy = pytest.importorskip("bpy")

# The 10 s drive: record; forward (W) 0-3 s; right (D) 3-6 s with a run
# (Shift) 4-5 s; back toward the view, slowly (S + Ctrl) 6-8 s; left (A) 8-10 s.
TEN_SECONDS = [
    (0.0, InputEvent("R")), (0.0, InputEvent("W")),
    (3.0, InputEvent("W", "RELEASE")), (3.0, InputEvent("D")), (4.0, InputEvent("LEFT_SHIFT")), (5.0, InputEvent("LEFT_SHIFT", "RELEASE")),
    (6.0, InputEvent("D", "RELEASE")), (6.0, InputEvent("S")), (6.0, InputEvent("LEFT_CTRL")),
    (8.0, InputEvent("S", "RELEASE")), (8.0, InputEvent("LEFT_CTRL", "RELEASE")), (8.0, InputEvent("A")),
    (10.0, InputEvent("A", "RELEASE")), (10.0, InputEvent("RET")),
]


@pytest.fixture(scope="module")
def controller():
    from rigmind.backend.locomotion import controllers

    if controllers.neural_weights() is None:
        pytest.skip("no trained locomotion model in models/: train one with `rigmind train locomotion`")
    return controllers.load_controller("neural")


@pytest.fixture
def rig(bpy_clean):
    from rigmind.operators import mannequin

    return mannequin.build_mannequin()["armature"]


def drive(session, script, seconds, fps):
    """Feed ``script`` [(time s, event)] to ``session`` while ticking it at
    ``fps`` for ``seconds`` of game time; returns the commands it answered
    and a copy of the pose bones' rotations halfway through."""
    events = sorted(script, key=lambda e: e[0])
    k, commands, mid = 0, [], None
    n = int(round(seconds * fps))
    for i in range(n + 1):
        t = i / fps
        while k < len(events) and events[k][0] <= t + 1e-9:
            cmd = session.handle(events[k][1])
            if cmd is not None:
                commands.append((round(t, 3), cmd))
            k += 1
        if i == n:
            break
        session.tick(1.0 / fps)
        if i == n // 2:
            buf = np.empty(4 * len(session.arm.pose.bones), dtype=np.float32)
            session.arm.pose.bones.foreach_get("rotation_quaternion", buf)
            mid = buf
    return commands, mid


def _key_a_pose(arm):
    """Give ``arm`` an action of its own (two keys on two bones) and an
    unkeyed edit, a bone in Euler mode and a frame range of its own."""
    scene = bpy.context.scene
    pbs = arm.pose.bones
    names = [pb.name for pb in pbs]
    a, b = pbs[names[3]], pbs[names[8]]
    for f, ang in ((1, 0.0), (20, 0.4)):
        a.rotation_quaternion = (np.cos(ang / 2), np.sin(ang / 2), 0.0, 0.0)
        a.keyframe_insert("rotation_quaternion", frame=f)
    scene.frame_set(12)
    b.rotation_mode = "XZY"
    b.rotation_euler = (0.1, 0.2, 0.3)
    pbs[names[5]].location = (0.01, 0.02, 0.03)  # unkeyed
    scene.frame_start, scene.frame_end = 5, 50
    return arm.animation_data.action


def _scene_state(arm):
    scene = bpy.context.scene
    pbs = arm.pose.bones
    vals = {}
    for prop, size in (("rotation_quaternion", 4), ("rotation_euler", 3), ("rotation_axis_angle", 4),
                       ("location", 3), ("scale", 3)):
        buf = np.empty(size * len(pbs), dtype=np.float32)
        pbs.foreach_get(prop, buf)
        vals[prop] = buf
    ad = arm.animation_data
    return {
        "actions": sorted((a.name, a.use_fake_user, a.users) for a in bpy.data.actions),
        "action": ad.action.name if ad and ad.action else None,
        "slot": ad.action_slot.identifier if ad and ad.action_slot else None,
        "use_nla": ad.use_nla if ad else None,
        "nla": [t.name for t in ad.nla_tracks] if ad else [],
        "modes": [pb.rotation_mode for pb in pbs],
        "values": vals,
        "frames": (scene.frame_start, scene.frame_end, scene.frame_current),
        "fps": (scene.render.fps, scene.render.fps_base),
        "objects": sorted(o.name for o in bpy.data.objects),
        "curves": sorted(c.name for c in bpy.data.curves),
    }


def _fcurve_values(action, arm):
    from bpy_extras.anim_utils import action_get_channelbag_for_slot

    out = []
    for fc in action_get_channelbag_for_slot(action, arm.animation_data.action_slot).fcurves:
        co = np.empty(2 * len(fc.keyframe_points))
        fc.keyframe_points.foreach_get("co", co)
        out.append(co)
    return out


def test_scripted_ten_second_drive_records_a_clean_take(rig, controller):
    from rigmind.backend.locomotion import metrics
    from rigmind.operators import drive_scene
    from rigmind.operators import locomotion_scene
    from rigmind.operators import retarget_scene

    scene = bpy.context.scene
    assert scene.render.fps == 24  # the factory default: not the controller's 30 fps
    before = _key_a_pose(rig)
    session = drive_scene.DriveSession(rig, controller=controller)
    commands, mid = drive(session, TEN_SECONDS, 10.0, 24.0)
    assert commands == [(0.0, "record"), (10.0, "finish")]
    assert session.take_seconds() == pytest.approx(10.0)
    action, curve = session.finish(save_path=True)

    # 10 s at the scene's 24 fps: frames 1..241 (the last one at 10.0 s).
    a, b = action.frame_range
    assert (a, b) == (1.0, 241.0)
    assert (scene.frame_start, scene.frame_end) == (1, 241)
    assert (scene.render.fps, scene.render.fps_base) == (24, 1.0)
    assert action.name == "RigMind Drive · normal · 10.0 s"
    # The previous action is kept, as with a baked walk.
    assert rig.animation_data.action == action
    assert before.use_fake_user and before.name in bpy.data.actions
    assert any(t.mute for t in rig.animation_data.nla_tracks)
    for co in _fcurve_values(action, rig):
        assert np.isfinite(co).all()

    # The root went where it was steered (view forward = +Y, right = +X).
    tmap = retarget_scene.target_mapping(rig)
    bones = {c: tmap.bones[c] for c in ("hips", "foot_l", "foot_r", "toes_l", "toes_r")}
    frames = list(range(1, 242))
    pos = retarget_scene.sample_positions_world(rig, bones, frames)
    hips = pos["hips"]
    assert np.isfinite(hips).all()

    def at(t):
        return hips[int(round(t * 24))][:2]

    fwd, right, back, left = at(3) - at(0), at(6) - at(3), at(8) - at(6), at(10) - at(8)
    assert fwd[1] > 2.0 and abs(fwd[0]) < 0.3 * fwd[1], fwd
    assert right[0] > 2.5 and abs(right[1]) < 0.6 * right[0], right
    assert back[1] < -0.3, back
    assert left[0] < -0.5, left

    # Feet planted: the baked rig's foot skate (sampled in the scene) is below
    # the validation mocap's 0.88 cm/frame (bench/results/locomotion.md), with contacts.
    names = ["foot_l", "foot_r", "toes_l", "toes_r"]
    p = np.stack([pos[c] for c in names], axis=1)
    sk = metrics.foot_skate(p, foot_joints=list(range(4)), fps=24.0)
    assert sk["contact_fraction"] > 0.2
    assert sk["skate_cm_per_frame"] < 0.88, sk

    # The walked path as a curve, which Walk Along Path reads back.
    xy = locomotion_scene.curve_to_polyline(curve)
    roots = np.concatenate([pp.root_positions[:, :2] for pp in session.take["poses"]])
    assert np.linalg.norm(xy[0] - roots[0]) < 1e-3 and np.linalg.norm(xy[-1] - roots[-1]) < 1e-3
    length = np.sum(np.linalg.norm(np.diff(xy, axis=0), axis=1))
    assert length > 8.0
    rebaked = locomotion_scene.walk_along_path(rig, WalkPathRequest(points=xy), controller=controller)
    assert rebaked != action and rig.animation_data.action == rebaked and action.use_fake_user


def _short_take(session, seconds, script=()):
    """Record ``seconds`` of walking forward (plus ``script``), then finish."""
    events = [(0.0, InputEvent("R")), (0.0, InputEvent("W")), *script, (seconds, InputEvent("RET"))]
    commands, _ = drive(session, events, seconds, 24.0)
    assert commands[-1] == (seconds, "finish")
    action, _ = session.finish()
    return action


@pytest.mark.parametrize("scene_range, seconds, expect", [
    ((1, 250), 2.0, (1, 250)),    # a long scene, a short take (frames 1-49): nothing shrinks
    ((1, 20), 3.0, (1, 73)),      # a short scene, a longer take (frames 1-73): the end grows
    ((30, 40), 2.0, (1, 49)),     # a range after the take's start: both ends grow
])
def test_drive_range_only_grows(rig, controller, scene_range, seconds, expect):
    from rigmind.operators import drive_scene

    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = scene_range
    action = _short_take(drive_scene.DriveSession(rig, controller=controller), seconds)
    first, last = action.frame_range
    assert (first, last) == (1.0, 1.0 + seconds * 24)
    assert (scene.frame_start, scene.frame_end) == expect
    assert scene.frame_start <= scene_range[0] and scene.frame_end >= scene_range[1]


def test_take_is_named_after_the_styles_it_used(rig, controller):
    from rigmind.backend.locomotion import drive_input
    from rigmind.backend.locomotion.vector_layout import STYLES
    from rigmind.operators import drive_scene

    changed_to = STYLES[drive_input.STYLE_KEYS["TWO"]]
    assert changed_to != "normal"
    session = drive_scene.DriveSession(rig, controller=controller, style="normal")
    action = _short_take(session, 2.0, [(1.0, InputEvent("TWO"))])
    assert action.name == f"RigMind Drive · normal+{changed_to} · 2.0 s"
    # A style picked before recording is the take's only style.
    session = drive_scene.DriveSession(rig, controller=controller, style="normal")
    session.handle(InputEvent("TWO"))
    action = _short_take(session, 1.0)
    assert action.name == f"RigMind Drive · {changed_to} · 1.0 s"


def test_drive_action_name_fits_a_blender_name():
    from rigmind.backend.locomotion.vector_layout import STYLES
    from rigmind.operators import drive_scene

    assert drive_scene.drive_action_name("normal", 10.0) == "RigMind Drive · normal · 10.0 s"
    assert drive_scene.drive_action_name(["normal", "elderly", "normal"], 4.44) == "RigMind Drive · normal+elderly · 4.4 s"
    every = drive_scene.drive_action_name(list(STYLES), 12.0)
    assert every == f"RigMind Drive · mixed ({len(STYLES)} styles) · 12.0 s"
    assert len(every.encode("utf-8")) <= 63 - 4


def test_escape_restores_the_scene_exactly(rig, controller):
    from rigmind.operators import drive_scene

    _key_a_pose(rig)
    before = _scene_state(rig)
    session = drive_scene.DriveSession(rig, controller=controller)
    script = [(0.0, InputEvent("R")), (0.0, InputEvent("W")), (1.0, InputEvent("A")), (1.5, InputEvent("THREE")), (2.0, InputEvent("ESC"))]
    commands, mid = drive(session, script, 2.0, 24.0)
    assert commands == [(0.0, "record"), (2.0, "cancel")]
    # It did drive: the pose bones moved away from the saved pose.
    assert np.abs(mid - before["values"]["rotation_quaternion"]).max() > 0.05
    assert rig.animation_data.action is None  # the action is off while driving
    session.cancel()
    after = _scene_state(rig)
    for k in before:
        if k == "values":
            for prop in before[k]:
                np.testing.assert_array_equal(after[k][prop], before[k][prop], err_msg=prop)
        else:
            assert after[k] == before[k], k
    # Finishing after a cancel does nothing more.
    assert session.finish() == (None, None)
    assert _scene_state(rig)["actions"] == before["actions"]


def test_finish_without_a_take_changes_nothing(rig, controller):
    from rigmind.operators import drive_scene

    before = _scene_state(rig)
    session = drive_scene.DriveSession(rig, controller=controller)
    drive(session, [(0.0, InputEvent("W"))], 1.0, 24.0)
    assert session.finish() == (None, None)
    after = _scene_state(rig)
    assert after["actions"] == before["actions"] and after["frames"] == before["frames"]
    for prop in before["values"]:
        np.testing.assert_array_equal(after["values"][prop], before["values"][prop])


def test_live_mapping_matches_the_full_retarget(rig, controller):
    """The live pose (LiveRetarget) against the baked one (the full
    retarget, foot IK included) on the same clip: bone rotations within a
    few degrees, the hips within a few centimetres."""
    from rigmind.backend import rotations
    from rigmind.operators import drive_scene
    from rigmind.backend.locomotion import controllers
    from rigmind.operators import retarget_scene
    from rigmind.operators import scene_io

    session = drive_scene.DriveSession(rig, controller=controller)
    drive(session, [(0.0, InputEvent("R")), (0.0, InputEvent("W")), (2.0, InputEvent("D"))], 4.0, 30.0)
    motion, _, _ = session.take_motion()
    session.cancel()
    live = np.stack([session.live.apply(motion, f)[0] for f in range(motion.num_frames)])
    hips_live = np.stack([session.live.apply(motion, f)[1] for f in range(motion.num_frames)])
    # The full retarget, as the bake runs it, then the same basis formula as write_motion.
    skel = scene_io.read_skeleton(rig)
    rot, scale, trans = retarget_scene.object_transform(rig)
    world = retarget_scene.skeleton_to_world(skel, rot, scale, trans)
    from rigmind.backend.retarget import RetargetConfig, retarget

    res = retarget(motion, dict(controllers.bandai_bone_map(motion.skeleton).bones), world, dict(retarget_scene.target_mapping(rig).bones),
                   RetargetConfig(root_mode="hips", ik=True, ground_height=None), reference=session.reference)
    on_rig = retarget_scene.motion_to_armature_space(res.motion, skel, rot, scale, trans)
    full = rotations.mul(rotations.inv(skel.rest_rotations)[None], on_rig.rotations)
    driven = session.live.pairs[:, 0]
    ang = np.degrees(rotations.angle_between(live[:, driven], full[:, driven]))
    names = [skel.names[j] for j in driven]
    legs = np.array([any(w in n.lower() for w in ("thigh", "shin", "calf", "leg", "foot", "toe")) for n in names])
    # Upper body: the same rotation transfer; legs: the bake's foot IK bends them a little more.
    assert np.median(ang[:, ~legs]) < 3.0, dict(zip(np.array(names)[~legs], np.median(ang[:, ~legs], 0).round(1)))
    assert np.median(ang[:, legs]) < 8.0, dict(zip(np.array(names)[legs], np.median(ang[:, legs], 0).round(1)))
    h = skel.names.index(session._hips_pb.name)
    hips_full = rotations.rotate(rotations.inv(skel.rest_rotations[h]), on_rig.local_translations()[:, h] - skel.offsets[h])
    assert np.median(np.linalg.norm(hips_live - hips_full, axis=-1)) < 0.03


def test_drive_operator_and_panel_button(bpy_clean, controller):
    import rigmind
    from rigmind.blender_addon import panel
    from rigmind.operators import mannequin

    rigmind.register()
    try:
        assert hasattr(bpy.types, "RIGMIND_OT_drive")
        assert panel.OPERATORS["drive"] == "rigmind.drive" and panel.operator_available("rigmind.drive")
        arm = mannequin.build_mannequin()["armature"]
        bpy.context.scene.rigmind.target_armature = arm
        assert bpy.ops.rigmind.drive.poll()
        # Headless there is no window to drive in: a clear error, nothing changed.
        n_actions = len(bpy.data.actions)
        with pytest.raises(RuntimeError, match="interactive"):
            bpy.ops.rigmind.drive()
        assert len(bpy.data.actions) == n_actions
    finally:
        rigmind.unregister()


def test_drive_refuses_a_busy_controller(rig, controller):
    from rigmind.operators import drive_scene
    from rigmind.backend.locomotion import controllers

    with controllers.GENERATE_LOCK:
        with pytest.raises(controllers.ControllerError, match="being generated"):
            drive_scene.DriveSession(rig, controller=controller)
    s = drive_scene.DriveSession(rig, controller=controller)  # free again
    s.cancel()


def test_ticks_recording_toggles_and_long_stalls(rig, controller):
    from rigmind.operators import drive_scene

    s = drive_scene.DriveSession(rig, controller=controller)
    s.handle(InputEvent("W"))
    assert s.tick(0.1)["steps"] == 3  # a slow tick steps every controller frame it covers
    assert s.tick(0.01)["steps"] == 0  # none due yet: nothing written either
    assert s.tick(5.0)["steps"] == int(drive_scene.MAX_TICK_SECONDS * 30)  # a stall: the game slows, no burst
    assert s.handle(InputEvent("R")) == "record" and s.recording
    s.tick(1.0 / 30)
    s.tick(1.0 / 30)
    assert s.take_seconds() == pytest.approx(2 / 30)
    s.handle(InputEvent("R"))  # off: the take ends
    s.tick(0.2)
    assert not s.recording and s.take_seconds() == pytest.approx(2 / 30)
    s.handle(InputEvent("R"))  # on again: a new take replaces it
    s.tick(1.0 / 30)
    assert s.take_seconds() == pytest.approx(1 / 30)
    assert "REC" in s.status_text(30.0) and "normal" in s.status_text(30.0)
    s.cancel()


def test_drive_refuses_a_generated_rigify_rig(bpy_clean, controller):
    from support import rig_factory

    from rigmind.operators import drive_scene
    from rigmind.operators import scene_io

    arm, _ = rig_factory.rigify_rig_cached()
    n_actions = len(bpy.data.actions)
    with pytest.raises(scene_io.SceneError, match="Rigify"):
        drive_scene.DriveSession(arm, controller=controller)
    assert len(bpy.data.actions) == n_actions


def test_registering_drive_imports_no_backend():
    """The Drive operator imports the locomotion backend (and SciPy) when it
    starts, not when the add-on is enabled (only the stdlib path resolver and
    the option lists)."""
    import subprocess
    import sys

    code = ("import sys, bpy, rigmind; rigmind.register(); "
            "print(sorted(m for m in sys.modules if m.startswith('rigmind.backend') or m in ('scipy', 'torch')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    # backend.paths (standard library only) is the one place that finds
    # presets/; the style menu reads each style's speed from there.
    # backend.options (no imports) holds the option lists the menus show.
    allowed = ["rigmind.backend", "rigmind.backend.options", "rigmind.backend.paths"]
    loaded = eval(out.stdout.strip().splitlines()[-1])
    assert [m for m in loaded if m not in allowed] == [], loaded


def _hips_heights(rig, frames):
    from rigmind.operators import retarget_scene

    tmap = retarget_scene.target_mapping(rig)
    pos = retarget_scene.sample_positions_world(rig, {"hips": tmap.bones["hips"]}, list(frames))
    return np.asarray(pos["hips"])[:, 2], np.asarray(pos["hips"])[:, :2]


def test_crouch_toggle_lowers_the_live_pose_and_the_baked_take(rig, controller):
    from rigmind.operators import drive_scene

    scene = bpy.context.scene
    session = drive_scene.DriveSession(rig, controller=controller)
    standing_live = np.array(session._hips_pb.location)
    # Walk 0-2 s, crouch on at 2 s (down by 2.6 s), walk crouched to 8 s, up again, stop at 10 s.
    script = [(0.0, InputEvent("R")), (0.0, InputEvent("W")), (2.0, InputEvent("C")), (2.05, InputEvent("C")),
              (2.1, InputEvent("C", "RELEASE")), (8.0, InputEvent("C")), (8.1, InputEvent("C", "RELEASE")),
              (10.0, InputEvent("RET"))]
    events = sorted(script, key=lambda e: e[0])
    k, live_low = 0, []
    for i in range(int(10.0 * 24)):
        t = i / 24.0
        while k < len(events) and events[k][0] <= t + 1e-9:
            session.handle(events[k][1])
            k += 1
        out = session.tick(1.0 / 24)
        if 3.0 <= t < 8.0 and out["steps"]:
            assert session.crouch_weight == 1.0 and session.input.gait == "crouch"
            live_low.append(tuple(session._hips_pb.location))
            assert out["crouch_s"] > 0.0
    assert session.input.config.crouch_speed == pytest.approx(0.38, abs=0.05)
    assert session.crouch_weight == 0.0  # back up 0.6 s after the second toggle
    w = np.asarray(session.take["crouch"])
    assert w.max() == 1.0 and w[0] == 0.0 and w[-1] == 0.0
    # Live: the hips bone sits lower while crouched (its location in its rest frame moved).
    assert all(np.linalg.norm(np.array(l) - standing_live) > 0.05 for l in live_low)
    action, _ = session.finish()
    assert action is not None
    fps = scene.render.fps
    z, xy = _hips_heights(rig, range(1, int(10 * fps) + 2))
    stand = np.median(z[int(0.5 * fps):int(1.8 * fps)])
    crouched = z[int(2.7 * fps):int(8.0 * fps)]
    ratio = float(crouched.max() / stand)
    print(f"baked hips while crouched: max {ratio:.3f} of standing")
    assert ratio <= 0.80, ratio
    assert np.median(z[int(9.0 * fps):]) > 0.95 * stand  # stood back up
    # Crouched walking still moves forward, at about the sneak's pace (the
    # controller, slowed from a walk, pauses a moment first: measured from 4 s).
    pace = (xy[int(8.0 * fps), 1] - xy[int(4.0 * fps), 1]) / 4.0
    print(f"crouched pace {pace:.2f} m/s")
    assert 0.15 < pace < 0.6, pace


def _longest_run(mask) -> int:
    best = run = 0
    for u in mask:
        run = run + 1 if u else 0
        best = max(best, run)
    return best


def test_jump_key_jumps_live_and_the_baked_take_keeps_it(rig, controller):
    from rigmind.operators import drive_scene
    from rigmind.operators import retarget_scene

    scene = bpy.context.scene
    session = drive_scene.DriveSession(rig, controller=controller)
    # Walk, jump at 2 s (Space held 0.5 s with auto-repeat: one jump), a
    # second press in the air (ignored), stop walking at 4.5 s, a standing
    # jump at 6 s, then crouch (C) at 8.5 s: a press at 9.5 s is ignored there.
    script = [(0.0, InputEvent("R")), (0.0, InputEvent("W")),
              (2.0, InputEvent("SPACE")), (2.2, InputEvent("SPACE")), (2.4, InputEvent("SPACE")),
              (2.5, InputEvent("SPACE", "RELEASE")), (2.8, InputEvent("NDOF_BUTTON_8")),
              (2.9, InputEvent("NDOF_BUTTON_8", "RELEASE")), (4.5, InputEvent("W", "RELEASE")),
              (6.0, InputEvent("SPACE")), (6.1, InputEvent("SPACE", "RELEASE")),
              (8.5, InputEvent("C")), (8.6, InputEvent("C", "RELEASE")),
              (9.5, InputEvent("SPACE")), (9.6, InputEvent("SPACE", "RELEASE")), (11.0, InputEvent("RET"))]
    commands, _ = drive(session, script, 11.0, 24.0)
    assert commands[-1] == (11.0, "finish")
    assert session.jumps == 2
    jumping = np.asarray(session.take["jumping"])
    starts = np.nonzero(np.diff(jumping.astype(int)) == 1)[0] + 1
    assert len(starts) == 2
    action, _ = session.finish()
    assert action is not None
    fps = scene.render.fps
    tmap = retarget_scene.target_mapping(rig)
    names = ("hips", "foot_l", "foot_r", "toes_l", "toes_r")
    pos = retarget_scene.sample_positions_world(rig, {c: tmap.bones[c] for c in names}, list(range(1, int(11 * fps) + 2)))
    z = np.asarray(pos["hips"])[:, 2]
    feet = np.stack([np.asarray(pos[c])[:, 2] for c in names[1:]], axis=1)
    floor = np.percentile(feet, 5, axis=0)
    walk_h = np.median(z[int(0.8 * fps):int(1.9 * fps)])
    for start in starts:
        t0 = start / session.fps
        window = slice(int(t0 * fps), int((t0 + 1.8) * fps))
        rise = float(z[window].max() - walk_h)
        off = _longest_run(np.all(feet[window] > floor + 0.03, axis=1)) / fps
        print(f"baked jump at {t0:.2f} s: hips rise {rise:.3f} m, both feet off {off:.2f} s")
        assert rise >= 0.12 and off >= 0.25, (rise, off)
