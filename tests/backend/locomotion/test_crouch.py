"""The crouch (issue #28 item 3): ``crouch@A-B`` on a path walk and the
crouched gait of a cycle, a posture layer learned from DeepMimic's sneak
over the controller's own slow walk (``backend/locomotion/actions/crouch.py``).

On a real walked path ``[[0,0],[6,0],[6,5],[1,5]]`` with ``crouch@7-10``
(normal style, measured when written): hips at most 0.76 x the walking
median inside the range (0.75 asked, bob included); feet (ankles, toes,
orientations) unchanged to 1e-12 m; the largest joint step in the ramps
1.07 x the walk's p99.9 (world) and 1.15 x (pose, root frame); 0.40 m/s
walked inside the range for 0.38 asked; knees 94 deg mean in the crouch
against the sneak clip's 71 (the controller's slow walk takes half the
sneak's stride and its ankle joints sit 6 cm higher). A crouched loop keeps
its seam (0.022 m, the largest step inside 0.067 m).

Backend only (no bpy); needs the committed locomotion weights and the
action clip bank (skipped without them). About 15 s.
"""

from __future__ import annotations

import numpy as np
import pytest

from rigmind.backend import rotations
from rigmind.backend.locomotion.actions import crouch as C
from rigmind.backend.locomotion.actions.action_plan import Crouch
from rigmind.backend.locomotion.cleanup import knee_angles

PATH = np.array([[0.0, 0.0], [6.0, 0.0], [6.0, 5.0], [1.0, 5.0]])
RANGE = (Crouch(7.0, 10.0),)
FEET = ("Foot_L", "Toes_L", "Foot_R", "Toes_R")


@pytest.fixture(scope="module")
def controller():
    from rigmind.backend.locomotion import controllers

    if controllers.neural_weights() is None:
        pytest.skip("no committed locomotion weights in models/ (train with `rigmind train locomotion`)")
    return controllers.load_controller("auto", styles=["normal"], gait="walk")


@pytest.fixture(scope="module")
def layer(controller):
    from rigmind.backend.locomotion.actions.clip_bank import bank_path
    from rigmind.backend.locomotion.controllers import controller_skeleton

    if not bank_path().is_file():
        pytest.skip("no action clip bank in models/ (`rigmind train actions`)")
    from rigmind.backend.locomotion.path_follow import standing_pose

    return C.crouch_layer(controller_skeleton(controller), standing_pose(controller, (0.0, 0.0), 0.0, "normal"))


def _walk(controller, layer, style):
    """``(walk, crouched, weights, arc)`` of PATH with RANGE in ``style``."""
    from rigmind.backend.locomotion.walk_generation import generate_path
    from rigmind.backend.locomotion.walk_speeds import path_speeds

    xy, sp, _ = path_speeds(PATH, None, style, "walk", 1.0)
    pts, speeds = C.crouch_speeds(xy, sp, RANGE, layer)
    walk, res = generate_path(controller, pts, style=style, speed=speeds)
    w = C.crouch_weights(res.arc, RANGE, walk.fps)
    return walk, C.apply_crouch(walk, w, layer), w, res.arc


@pytest.fixture(scope="module")
def normal(controller, layer):
    return _walk(controller, layer, "normal")


@pytest.fixture(scope="module")
def elderly(controller, layer):
    return _walk(controller, layer, "elderly")


def _inside(arc):
    return (arc >= RANGE[0].start) & (arc <= RANGE[0].end)


def _hips_z(m):
    return m.world_positions()[:, list(m.skeleton.names).index("Hips"), 2]


def _steps(p):
    """``[F-1, J]`` per-frame displacement (m) of each joint."""
    return np.linalg.norm(np.diff(p, axis=0), axis=-1)


def _root_frame(m):
    """Joint positions ``[F, J, 3]`` relative to the ground root, in its frame."""
    rot, pos = m.world()
    return rotations.rotate(rotations.inv(rot[:, None, 0]), pos - pos[:, None, 0])


def _arm_swing(m, frames):
    """Mean peak-to-peak (m) of the hands along the facing, in the root frame, over ``frames``."""
    names = list(m.skeleton.names)
    p = _root_frame(m)[frames]
    fwd = C.facing(m.world_positions()[frames], names)
    fwd = rotations.rotate(rotations.inv(m.world()[0][frames, 0]), fwd)
    along = [np.sum(p[:, names.index(n)] * fwd, axis=-1) for n in ("Hand_L", "Hand_R")]
    return float(np.mean([np.ptp(a) for a in along]))


# --- the layer and the pure helpers -----------------------------------------------


def test_layer_is_the_sneak_over_the_walk(layer):
    """The sneak's hips are ~0.8 of its walk's, further back over the feet,
    at ~0.4 m/s; the offsets are leans of tens of degrees, not flips."""
    assert 0.75 <= layer.hips_ratio <= 0.85
    assert 0.05 <= layer.hips_back <= 0.2
    assert 0.3 <= layer.speed <= 0.5
    angles = np.degrees(np.linalg.norm(rotations.to_axis_angle(layer.offsets), axis=-1))
    assert set(layer.joints) == set(C.LEAN_JOINTS + C.ARM_JOINTS)
    assert np.all(angles < 60.0), dict(zip(layer.joints, angles))
    assert np.all(layer.knee_flexion > layer.walk_knee_flexion + np.radians(20.0))


def test_the_margin_holds_the_crouch_past_the_range():
    fps = 30.0
    arc = np.arange(300) / fps * 0.5
    w = C.crouch_weights(arc, (Crouch(1.5, 3.0),), fps, C.CrouchConfig(margin_m=0.2))
    assert np.all(w[(arc >= 1.3) & (arc <= 3.2)] == 1.0) and w[arc < 1.3].max() < 1.0


def test_weights_ramp_outside_the_range_and_are_smooth():
    """Weight 1 at every frame whose arc is inside the range, 0 a ramp's
    time before and after, quintic in between: the first difference is
    continuous and at most the quintic's peak slope (1.875 / ramp). (The
    margin's own test is below.)"""
    fps, cfg = 30.0, C.CrouchConfig(ramp_seconds=0.6, margin_m=0.0)
    arc = np.arange(300) / fps * 0.5  # 0.5 m/s for 10 s
    w = C.crouch_weights(arc, (Crouch(1.5, 3.0),), fps, cfg)
    inside = (arc >= 1.5) & (arc <= 3.0)
    assert np.all(w[inside] == 1.0)
    t = np.arange(300) / fps
    assert np.all(w[t < 3.0 - 0.6] == 0.0) and np.all(w[t > 6.0 + 0.6] == 0.0)
    assert np.all((w >= 0) & (w <= 1))
    d = np.diff(w)
    assert np.abs(d).max() <= 1.875 / (cfg.ramp_seconds * fps) + 1e-9
    assert np.abs(np.diff(d)).max() < 0.02  # no kink where a ramp meets 0 or 1
    assert np.all(C.crouch_weights(arc, (Crouch(50.0, 60.0),), fps, cfg) == 0.0)  # never reached


def test_crouch_speeds_insert_points_at_the_range_and_ramp_ends(layer):
    """Points at the ramps' far ends and the range's ends, on the polyline;
    the drawn points kept; the crouch's speed inside, the walk's outside,
    linear in between; a range end on a drawn point adds no duplicate."""
    cfg = C.CrouchConfig()
    pts, sp = C.crouch_speeds(PATH, 1.1, RANGE, layer, cfg)
    v = C.crouch_speed(layer, cfg)
    arc = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(pts, axis=0), axis=1))])
    assert np.all(np.diff(arc) > 1e-4)
    for p in PATH:
        assert np.min(np.linalg.norm(pts - p, axis=1)) < 1e-12
    ramp_in = cfg.ramp_seconds * 0.5 * (1.1 + v)
    for s, want in ((7.0 - ramp_in, 1.1), (7.0, v), (10.0, v), (10.0 + ramp_in, 1.1)):
        i = int(np.argmin(np.abs(arc - s)))
        assert abs(arc[i] - s) < 1e-9 and abs(sp[i] - want) < 1e-9
    assert np.all(sp[(arc >= 7.0) & (arc <= 10.0)] == pytest.approx(v))
    assert np.all((sp >= v - 1e-9) & (sp <= 1.1 + 1e-9))
    on_vertex, _ = C.crouch_speeds(PATH, np.array([1.0, 1.2, 1.0, 0.9]), (Crouch(6.0, 8.0),), layer, cfg)
    assert len(on_vertex) == len(PATH) + 3
    scaled, ssp = C.crouch_speeds(PATH * 2.0, 2.2, (Crouch(14.0, 20.0),), layer, cfg, scale=2.0)
    assert ssp.min() == pytest.approx(2.0 * v)


def test_zero_weight_is_the_walk_and_bad_weights_are_refused(normal, layer):
    walk = normal[0]
    m = walk.slice(0, 40)
    same = C.apply_crouch(m, np.zeros(40), layer)
    assert np.abs(same.world_positions() - m.world_positions()).max() < 1e-9
    with pytest.raises(ValueError):
        C.apply_crouch(m, np.full(40, 1.5), layer)
    with pytest.raises(ValueError):
        C.apply_crouch(m, np.zeros(39), layer)


# --- the path walk -------------------------------------------------------------------


def test_hips_low_at_every_frame_inside_the_range(normal):
    """<= 80 % of the walking hips height (its median away from the range and
    its ramps) at every frame inside [7, 10], the bob included."""
    walk, out, w, arc = normal
    stand = np.median(_hips_z(walk)[w == 0.0])
    low = _hips_z(out)[_inside(arc)]
    assert _inside(arc).sum() > 150  # ~3 m at ~0.4 m/s
    assert low.max() <= 0.80 * stand, low.max() / stand
    assert np.all(np.isfinite(out.rotations)) and np.all(np.isfinite(out.translations))


def test_feet_stay_where_the_walk_put_them(normal):
    """Ankles and toes within 1 mm, foot orientations within 0.1 deg."""
    walk, out, _, _ = normal
    names = list(walk.skeleton.names)
    ix = [names.index(n) for n in FEET]
    r0, p0 = walk.world()
    r1, p1 = out.world()
    assert np.abs(p1[:, ix] - p0[:, ix]).max() <= 1e-3
    assert np.degrees(rotations.angle_between(r1[:, ix], r0[:, ix])).max() <= 0.1


def test_knees_bend_forward_into_the_crouch(normal, layer):
    """The knees take the lowered hips (flexion well above the walk's, at
    least the sneak clip's), bending forward: each knee ahead of its
    hip-ankle line along the facing."""
    walk, out, w, arc = normal
    names = list(walk.skeleton.names)
    k = np.degrees(knee_angles(out))[_inside(arc)]
    assert k.mean() >= np.degrees(layer.knee_flexion).mean()
    assert k.mean() >= np.degrees(knee_angles(walk))[w == 0.0].mean() + 30.0
    assert k.max() < 150.0
    p = out.world_positions()[_inside(arc)]
    fwd = C.facing(p, names)
    for hip, knee, ankle in (("UpperLeg_L", "LowerLeg_L", "Foot_L"), ("UpperLeg_R", "LowerLeg_R", "Foot_R")):
        h, kn, a = (p[:, names.index(n)] for n in (hip, knee, ankle))
        ahead = np.sum((kn - 0.5 * (h + a)) * fwd, axis=-1)
        assert np.mean(ahead > 0.0) > 0.95


def test_transitions_step_no_more_than_the_walk(normal):
    """Through the ramps no joint moves in a frame more than 1.5 x the
    walk's own 99.9th-percentile step, in the world and in the root's frame."""
    walk, out, w, _ = normal
    ramp = (w > 0.0) & (w < 1.0)
    frames = ramp[1:] | ramp[:-1]
    for pos in (lambda m: m.world_positions(), _root_frame):
        ref = np.percentile(_steps(pos(walk)), 99.9)
        assert _steps(pos(out))[frames].max() <= 1.5 * ref


def test_speed_inside_the_range_is_the_crouch_speed(normal, layer):
    walk, _, _, arc = normal
    f = np.nonzero(_inside(arc))[0]
    v = (arc[f[-1]] - arc[f[0]]) / ((f[-1] - f[0]) / walk.fps)
    assert v == pytest.approx(C.crouch_speed(layer), rel=0.2)


def test_another_style_crouches_and_keeps_its_arm_swing(normal, elderly):
    """Elderly: the same checks hold, and each style's arm swing in the
    crouch stays within 40 % of its own slow walk's there, so the two styles'
    swings still differ as they did walking."""
    walk, out, w, arc = elderly
    stand = np.median(_hips_z(walk)[w == 0.0])
    assert _hips_z(out)[_inside(arc)].max() <= 0.80 * stand
    assert np.all(np.isfinite(out.rotations))
    swings = {}
    for name, (wk, cr, _, a) in (("normal", normal), ("elderly", elderly)):
        frames = np.nonzero(_inside(a))[0]
        swings[name] = (_arm_swing(wk, frames), _arm_swing(cr, frames))
        assert 0.6 <= swings[name][1] / swings[name][0] <= 1.4, swings
    walked, crouched = (swings["normal"][i] - swings["elderly"][i] for i in (0, 1))
    assert np.sign(walked) == np.sign(crouched), swings


# --- the crouched gait ---------------------------------------------------------------


def test_crouched_cycle_stays_seamless(controller, layer):
    """A loop from generate_walk_cycle at the crouch's speed, crouched: its
    seam step is no more than the largest step inside it (and no more than
    the walk loop's own seam), hips low everywhere."""
    from rigmind.backend.locomotion.cycle import seam_jump
    from rigmind.backend.locomotion.walk_generation import generate_walk_cycle

    loop = generate_walk_cycle(controller, speed=C.crouch_speed(layer), style="normal")
    out = C.crouch_cycle(loop, layer)
    seam, inside = seam_jump(out)
    seam0, _ = seam_jump(loop)
    assert seam.pose <= inside.pose, (seam, inside)
    assert seam.pose <= seam0.pose + 1e-3
    assert _hips_z(out).max() <= 0.80 * np.median(_hips_z(loop))
    assert out.num_frames == loop.num_frames and np.all(np.isfinite(out.rotations))
