"""Drive's live actions without Blender: the one-frame crouch against the
clip crouch, and the live jump from standing, walking and running (hips
rise, flight, the steps through the hand-overs against the controller's own,
the controller resuming where the jump landed)."""

from __future__ import annotations

import numpy as np
import pytest

from rigmind.backend.locomotion import controllers
from rigmind.backend.locomotion.actions import crouch
from rigmind.backend.locomotion.actions.live_crouch import LiveCrouch
from rigmind.backend.locomotion.actions.live_jump import LiveJump, prepare_jump
from rigmind.backend.locomotion.motion_matching import Control
from rigmind.backend.locomotion.path_follow import concat_poses


@pytest.fixture(scope="module")
def ctl():
    if controllers.neural_weights() is None:
        pytest.skip("no trained locomotion model in models/")
    c = controllers.load_controller("neural")
    c.reset(style="normal")
    return c


@pytest.fixture(scope="module")
def stand(ctl):
    ctl.reset(style="normal")
    return ctl.pose()


def _walk(ctl, speed, frames, direction=(0.3, 1.0)):
    d = np.asarray(direction) / np.linalg.norm(direction)
    ctl.reset(style="normal")
    poses = [ctl.pose()]
    poses += [ctl.step(Control(velocity=tuple(speed * d))) for _ in range(frames)]
    return poses


def test_live_crouch_is_apply_crouch_on_one_frame(ctl, stand):
    layer = crouch.crouch_layer(ctl.skeleton, stand)
    live = LiveCrouch(ctl.skeleton, layer)
    poses = _walk(ctl, 1.3, 30)
    for pose in poses[5::6]:
        assert live.apply(pose, 0.0) is pose
        for w in (0.25, 1.0):
            want = crouch.apply_crouch(pose, np.array([w]), layer)
            got = live.apply(pose, w)
            assert np.abs(got.world_positions() - want.world_positions()).max() < 1e-9
            assert np.abs(np.abs(np.sum(got.rotations * want.rotations, axis=-1)) - 1.0).max() < 1e-9


def _jump_through(ctl, prep, speed):
    """Walk 2 s at ``speed``, jump, hand back and walk 2 s more: ``(motion,
    (first jump frame, first frame after it), jump)``."""
    poses = _walk(ctl, speed, 60)
    sp = float(np.hypot(*ctl.root_vel[:2]))
    jump = LiveJump(prep, poses[-2], poses[-1], sp)
    i0 = len(poses)
    while not jump.done:
        poses.append(jump.next_frame()[0])
    i1 = len(poses)
    xy, yaw = jump.landing()
    ctl.reset(position=xy, yaw=yaw, style="normal")
    out = jump.blend_out(ctl.pose())
    d = np.array([0.3, 1.0]) / np.linalg.norm([0.3, 1.0])
    for _ in range(60):
        p = ctl.step(Control(velocity=tuple(speed * d)))
        poses.append(p if out.done else out.apply(p))
    return concat_poses(poses, ctl.fps), (i0, i1), jump


def _steps(m):
    """``[F - 1]`` the largest joint displacement (m) of each frame to the next."""
    return np.linalg.norm(np.diff(m.world_positions(), axis=0), axis=-1).max(axis=1)


@pytest.mark.parametrize("speed", [0.0, 1.3, 3.0])
def test_live_jump_flies_and_hands_back_smoothly(ctl, stand, speed):
    prep = prepare_jump(ctl.skeleton, stand)
    # The controller's own p99.9 step on a walk and a run (the reference).
    ref = np.percentile(np.concatenate([_steps(concat_poses(_walk(ctl, s, 90), ctl.fps))[30:] for s in (1.3, 3.0)]),
                        99.9)
    m, (i0, i1), jump = _jump_through(ctl, prep, speed)
    names = list(m.skeleton.names)
    pos = m.world_positions()
    hips = pos[:, names.index("Hips"), 2]
    base = float(np.median(hips[20:i0]))
    assert hips[i0:i1].max() - base >= 0.12
    # Both feet off the floor together for >= 0.25 s (the ballistic flight).
    assert jump.airborne.sum() / ctl.fps >= 0.25
    feet = pos[:, [names.index(n) for n in ("Foot_L", "Toes_L", "Foot_R", "Toes_R")], 2]
    floor = np.percentile(feet[:i0], 5, axis=0)
    assert np.all(feet[i0:i1][jump.airborne] > floor + 0.03)
    # Through the hand-overs the largest joint step stays within 1.5x the controller's own.
    step = _steps(m)
    blend_in = slice(i0 - 2, i0 + jump.blend_in_frames)
    blend_out = slice(i1 - 2, i1 + 15)
    assert step[blend_in].max() <= 1.5 * ref, (step[blend_in].max(), ref)
    assert step[blend_out].max() <= 1.5 * ref, (step[blend_out].max(), ref)
    # The controller resumes where the jump landed: no jump in the root.
    root = m.root_positions[:, :2]
    assert np.linalg.norm(root[i1] - root[i1 - 1]) < 0.15
