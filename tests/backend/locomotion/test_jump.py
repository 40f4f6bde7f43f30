"""Jumps spliced into a path walk (``backend.locomotion.actions.jump``, issue
#28 item 2), on the shipped walk and run controllers along the issue's path
(0,0)-(6,0)-(6,5)-(1,5), 20 m, jumps at 3 m and 13 m; everything measured
on the result before any retarget (world = the controller's frame).

Measured (walk at 1.3 m/s; run at 2.5 m/s): flight 0.430 s (physics, the
clip's own apex), both feet up 0.47 s per jump, apex 0.27 m over the walking
hips, hips within 3.4 cm of the path through the jumps, mean path error
4.3 cm (walk alone 5.0), arrival 0.4 cm; largest joint step through a jump
0.17-0.19 m/frame against the walk's p99.9 0.149 (clip 0.121), run 0.26
against 0.218; planted skate after pin_feet 1.4 mm/frame (walk alone 1.7).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rigmind.backend.errors import UserError
from rigmind.backend.locomotion.actions import jump as jump_mod
from rigmind.backend.locomotion.actions.action_plan import Jump
from rigmind.backend.locomotion.actions.jump import FEET, JumpConfig, ballistic_flight, jump_clip, splice_jumps
from rigmind.backend.locomotion.cleanup import pin_feet, planted_skate, stance_contacts
from rigmind.backend.locomotion.controllers import load_controller
from rigmind.backend.locomotion.path_follow import FollowConfig, Path2D, follow_path, snap_to_path
from rigmind.backend.locomotion.path_pin import path_pin_config

PATH = [[0.0, 0.0], [6.0, 0.0], [6.0, 5.0], [1.0, 5.0]]
JUMPS = (Jump(3.0), Jump(13.0))
FPS = 30.0


def _walk(gait: str, speed: float, **kw):
    ctl = load_controller("auto", styles=["normal"], gait=gait)
    return snap_to_path(follow_path(ctl, PATH, speed=speed, style="normal", **kw), PATH)


@pytest.fixture(scope="module")
def walk():
    return _walk("walk", 1.3)


@pytest.fixture(scope="module")
def jumped(walk):
    info = []
    return splice_jumps(walk, JUMPS, info=info), info


def _pos(res):
    m = res.motion
    names = list(m.skeleton.names)
    p = m.world_positions()
    return p, [names.index(n) for n in FEET], names.index("Hips")


def _longest(mask) -> int:
    best = run = 0
    for u in mask:
        run = run + 1 if u else 0
        best = max(best, run)
    return best


def _steps(p) -> np.ndarray:
    """Largest joint displacement per frame step (m)."""
    return np.linalg.norm(np.diff(p, axis=0), axis=-1).max(axis=1)


def test_imports_this_tree():
    here = Path(__file__).resolve().parents[3]
    assert Path(jump_mod.__file__).resolve().parents[3] == here


def test_ballistic_flight_is_physics():
    fl = ballistic_flight(0.95, 1.17, 0.93)
    t = np.linspace(0.0, fl.time, 50)
    z = fl.height(t)
    assert abs(fl.height(fl.time) - 0.93) < 1e-9 and abs(z.max() - 1.17) < 1e-4
    assert abs(fl.height(fl.t_apex) - 1.17) < 1e-12
    # A parabola of curvature -g through the three heights: the fit's residual is round-off.
    coef, res, *_ = np.polyfit(t, z, 2, full=True)
    assert abs(coef[0] + 9.81 / 2) < 1e-9 and (res.size == 0 or res[0] < 1e-20)


def test_arrays_consistent(walk, jumped):
    out, info = jumped
    n = out.motion.num_frames
    assert n == walk.motion.num_frames + sum(d["shift"] for d in info)
    for name in ("target_xy", "arc", "root_xy", "error", "command", "stopping", "contacts", "feet", "paused"):
        a = np.asarray(getattr(out, name), dtype=np.float64)
        assert len(a) == n, name
        assert np.all(np.isfinite(a)), name
    assert np.all(np.isfinite(out.motion.rotations)) and np.all(np.isfinite(out.motion.translations))
    assert out.feet.shape == (n, 4, 3) and out.contacts.shape == (n, 4)
    assert out.stopped_at == walk.stopped_at + sum(d["shift"] for d in info)
    # The walk after the last jump is the walk's, later by the shifts (past the blend back).
    tail = walk.motion.num_frames - 20
    dots = np.sum(out.motion.rotations[tail + sum(d["shift"] for d in info):] * walk.motion.rotations[tail:], axis=-1)
    assert np.allclose(np.abs(dots), 1.0)  # the same rotations, up to the quaternions' sign


def test_jump_acceptance(walk, jumped):
    out, info = jumped
    p, fi, hi = _pos(out)
    floors = np.percentile(p[:, fi, 2], 1, axis=0)
    outside = np.ones(len(p), dtype=bool)
    for d in info:
        a, b = d["frames"]
        outside[a:b + int(0.4 * FPS)] = False
    walking_hips = np.median(p[outside, hi, 2])
    path = Path2D(out.path_xy)
    for d in info:
        a, b = d["frames"]
        up = np.all(p[a:b, fi, 2] > floors + 0.03, axis=1)
        assert _longest(up) / FPS >= 0.25
        assert p[a:b, hi, 2].max() - walking_hips >= 0.12
        assert path.distance(p[a:b, hi, :2]).max() <= 0.10
        assert np.all(out.contacts[d["airborne"]] == 0.0)
    assert out.mean_error <= 0.08 and out.end_distance <= 0.10


def test_transition_steps_bounded(walk, jumped):
    out, info = jumped
    reference = np.percentile(_steps(walk.motion.world_positions()), 99.9)
    steps = _steps(_pos(out)[0])
    for d in info:
        a, b = d["frames"]
        assert steps[a - 10:b + 15].max() <= 1.5 * reference


def test_skate_no_worse_than_walk(walk, jumped):
    out, info = jumped
    cfg = path_pin_config("normal")

    def pinned(res):
        m = pin_feet(res.motion, predicted=res.contacts, feet=res.feet, config=cfg)
        return m, stance_contacts(m.world_positions(), list(m.skeleton.names), FPS, res.contacts)

    wm, wc = pinned(walk)
    jm, jc = pinned(out)
    walk_skate = planted_skate(wm, wc)
    assert planted_skate(jm, jc) <= walk_skate * 1.05
    # About each take-off and landing: within the walk's spread of 1 s windows.
    n = int(FPS)
    windows = [planted_skate(wm.slice(s, s + n), wc[s:s + n]) for s in range(0, wm.num_frames - n, n // 2)]
    bound = max(np.percentile(windows, 90), walk_skate)
    for d in info:
        a, b = d["frames"]
        for s in (a - n // 2, b - n // 2):
            assert planted_skate(jm.slice(s, s + n), jc[s:s + n]) <= bound


def test_flight_is_ballistic_and_custom_values_honoured(walk):
    info = []
    out = splice_jumps(walk, (Jump(3.0, height=0.40, length=1.0),), info=info)
    d = info[0]
    p, _, hi = _pos(out)
    air = d["airborne"]
    t = (air - air[0]) / FPS
    z = p[air, hi, 2]
    fl = d["flight"]
    assert np.abs(z - fl.height(t)).max() < 1e-6
    stand = jump_clip(walk).stand_hips
    assert abs(fl.z_apex - stand - 0.40) < 1e-9
    assert abs(z.max() - (stand + 0.40)) < 0.01
    # Constant horizontal velocity in the air; over the physics' flight time it covers `length`.
    xy = p[air, hi, :2]
    v = np.diff(xy, axis=0) * FPS
    assert np.ptp(np.linalg.norm(v, axis=1)) < 1e-6
    assert abs(np.linalg.norm(v[0]) * fl.time - 1.0) < 0.02
    assert abs(len(air) / FPS - fl.time) < 1.0 / FPS


def test_standing_jump_at_a_pause():
    res = _walk("walk", 1.3, pauses=((3.0, 1.0),))
    info = []
    out = splice_jumps(res, (Jump(3.0),), info=info)
    d = info[0]
    assert d["standing"] and d["s_in"] == 0
    p, fi, hi = _pos(out)
    a, b = d["frames"]
    floors = np.percentile(p[:, fi, 2], 1, axis=0)
    assert _longest(np.all(p[a:b, fi, 2] > floors + 0.03, axis=1)) / FPS >= 0.25
    # It starts from the standing pose: the hips stay put as the clip begins.
    assert np.abs(np.diff(p[a - 3:a + 5, hi], axis=0)).max() < 0.01
    assert out.end_distance <= 0.10
    reference = np.percentile(_steps(res.motion.world_positions()), 99.9)
    assert _steps(p)[a - 10:a + 15].max() <= 1.5 * reference
    # Back into the walk as it sets off again from the pause, mid-swing: 1.51x measured.
    assert _steps(p)[b - 10:b + 15].max() <= 1.6 * reference


def test_run_jumps():
    res = _walk("run", 2.5)
    info = []
    out = splice_jumps(res, JUMPS, info=info)
    p, fi, hi = _pos(out)
    floors = np.percentile(p[:, fi, 2], 1, axis=0)
    reference = np.percentile(_steps(res.motion.world_positions()), 99.9)
    for d in info:
        a, b = d["frames"]
        assert _longest(np.all(p[a:b, fi, 2] > floors + 0.03, axis=1)) / FPS >= 0.25
        assert _steps(p)[a - 10:b + 15].max() <= 1.5 * reference
    assert out.mean_error <= 0.12 and out.end_distance <= 0.10
    assert np.all(np.isfinite(out.motion.rotations))


def test_jump_past_the_walk_is_a_user_error():
    res = _walk("walk", 1.3, config=FollowConfig(max_seconds=6.0))
    with pytest.raises(UserError) as e:
        splice_jumps(res, (Jump(13.0),))
    assert "\n" not in str(e.value) and "jump@13" in str(e.value)


def test_too_low_height_is_a_user_error(walk):
    with pytest.raises(UserError):
        splice_jumps(walk, (Jump(3.0, height=-0.2),))


def test_no_jumps_is_the_walk(walk):
    assert splice_jumps(walk, ()) is walk
    assert isinstance(JumpConfig().blend_in_seconds, float)
