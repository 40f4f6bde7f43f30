"""The swinging foot on a Walk Along Path take (issue #12: "the swing foot
clears the floor like the mocap's", with no knee pops): on the controller's
own skeleton, after the path snap and the foot clean-up exactly as Walk
Along Path makes them (``locomotion_scene.generate_path``).

Backend only (no bpy); the committed neural weights are needed (skipped
without them). The rig-level figures come from ``rigmind eval locomotion
--rigs`` and ``bench/bench_swing_lift.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from rigmind.backend.locomotion import path_sets as PS
from rigmind.backend.locomotion.cleanup import PinConfig, knee_angles, pin_feet


@pytest.fixture(scope="module")
def walk():
    from rigmind.operators import locomotion_scene as LS

    if LS.neural_weights() is None:
        pytest.skip("no committed locomotion weights in models/ (train with `rigmind train locomotion`)")
    ctl = LS.load_controller("neural")
    path = PS.validation_paths(2)[1]  # 7.9 m, one 87 degree turn (validation set)
    default = LS.resolve_speed(None, "normal", "walk", 1.0)[0]
    motion, result = LS.generate_path(ctl, path.points, style="normal", speed=path.speeds(default))
    return motion, result, LS.controller_leg_length(ctl)


def _toe_peaks(motion, leg):
    """Median swing peak (m) of the toes over their planted level, swings
    counted as the rig evaluation counts them (>= 5 frames, ankle not planted)."""
    from rigmind.operators.locomotion_rig_eval import _contacts, swing_peaks

    names = list(motion.skeleton.names)
    p = motion.world_positions()
    peaks = []
    for side in "LR":
        toe = p[:, names.index(f"Toes_{side}"), 2]
        toe = toe - np.percentile(toe, 2)
        peaks += swing_peaks(toe, ~_contacts(p[:, names.index(f"Foot_{side}")], motion.fps, leg))
    return float(np.median(peaks))


def _knee_steps(motion, leg):
    """Per-frame move of each knee relative to the hips ``[F-1, 2]``, leg lengths."""
    names = list(motion.skeleton.names)
    p = motion.world_positions()
    rel = p[:, [names.index("LowerLeg_L"), names.index("LowerLeg_R")]] - p[:, [names.index("Hips")]]
    return np.linalg.norm(np.diff(rel, axis=0), axis=-1) / leg


def test_swinging_toes_clear_the_floor_like_the_mocap(walk):
    """The validation mocap's normal walks peak their toes 10.1 cm over the
    planted level (median swing, this skeleton); the network alone skims the
    floor, and Walk Along Path's 8 cm lift gave 7.3 cm."""
    motion, result, leg = walk
    assert _toe_peaks(motion, leg) > 0.09
    # The lift is what does it: without it the toes stay lower.
    unlifted = pin_feet(result.motion, predicted=result.contacts, feet=result.feet,
                        config=PinConfig(swing_clearance=0.0, swing_slope=0.0))
    assert _toe_peaks(unlifted, leg) < _toe_peaks(motion, leg) - 0.01


def test_the_knee_does_not_sweep(walk):
    """With the default knee speed (18 degrees a frame) and the lift's cone
    as steep toward the next foothold as from the last, the high lift held
    the foot up until the last frames before landing and the leg snapped
    straight: the knee moved more than 0.08 leg lengths in one frame (the
    validation mocap's largest knee move is 0.067). Walk Along Path brings
    the foot down along a gentler cone and bounds the knee at 13.3 degrees
    a frame."""
    from rigmind.operators import locomotion_scene as LS

    motion, result, leg = walk
    flex = np.degrees(np.abs(np.diff(knee_angles(motion), axis=0)))
    assert flex.max() <= np.degrees(LS.KNEE_SPEED) / motion.fps + 1e-6
    steep = pin_feet(result.motion, predicted=result.contacts, feet=result.feet,
                     config=PinConfig(swing_clearance=LS.SWING_CLEARANCE))
    assert (_knee_steps(motion, leg) > 0.08).sum() < (_knee_steps(steep, leg) > 0.08).sum()


def test_landing_slope_brings_the_foot_down_sooner():
    """The lift's cone rises at ``slope`` from the last foothold and falls at
    ``landing_slope`` toward the next; None keeps one slope both ways."""
    from rigmind.backend.foot_lock import swing_lift as _swing_lift

    x = np.linspace(0.0, 1.0, 101)
    xy = np.stack([x, np.zeros_like(x)], axis=1)
    z = np.zeros_like(x)
    runs = [(0, 1, np.array([0.0, 0.0, 0.0])), (100, 101, np.array([1.0, 0.0, 0.0]))]
    same = _swing_lift(xy, z, runs, 0.0, slope=0.5, clearance=1.0)
    np.testing.assert_allclose(same, _swing_lift(xy, z, runs, 0.0, slope=0.5, clearance=1.0, landing_slope=0.5))
    np.testing.assert_allclose(same[1:100], same[1:100][::-1], atol=1e-12)  # symmetric between the footholds
    gentle = _swing_lift(xy, z, runs, 0.0, slope=0.5, clearance=1.0, landing_slope=0.25)
    np.testing.assert_allclose(gentle[:30], same[:30])  # the rise is unchanged
    # toward the next foothold it is half as high (0.25 vs 0.5 x distance, less the ramp's smoothing)
    assert np.all(gentle[60:95] < same[60:95]) and abs(gentle[80] - 0.25 * 0.2) < 0.01
    assert gentle[-1] == 0.0 and np.argmax(gentle) < np.argmax(same)
