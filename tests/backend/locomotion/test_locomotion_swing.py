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

from rigmind.backend.locomotion import path_sets
from rigmind.backend.locomotion.cleanup import PinConfig, knee_angles, pin_feet


@pytest.fixture(scope="module")
def walk():
    from rigmind.backend.locomotion import controllers, walk_generation, walk_speeds

    if controllers.neural_weights() is None:
        pytest.skip("no committed locomotion weights in models/ (train with `rigmind train locomotion`)")
    ctl = controllers.load_controller("neural")
    path = path_sets.validation_paths(2)[1]  # 7.9 m, one 87 degree turn (validation set)
    default = walk_speeds.resolve_speed(None, "normal", "walk", 1.0)[0]
    motion, result = walk_generation.generate_path(ctl, path.points, style="normal", speed=path.speeds(default))
    return motion, result, controllers.controller_leg_length(ctl)


def _toe_peaks(motion, leg):
    """Median swing peak (m) of the toes over their planted level, swings
    counted as the rig evaluation counts them (>= 5 frames, ankle not planted)."""
    from rigmind.evaluation.locomotion_rig_scores import planted_contacts, swing_peaks

    names = list(motion.skeleton.names)
    p = motion.world_positions()
    peaks = []
    for side in "LR":
        toe = p[:, names.index(f"Toes_{side}"), 2]
        toe = toe - np.percentile(toe, 2)
        peaks += swing_peaks(toe, ~planted_contacts(p[:, names.index(f"Foot_{side}")], motion.fps, leg))
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
    from rigmind.backend.locomotion import path_pin

    motion, result, leg = walk
    flex = np.degrees(np.abs(np.diff(knee_angles(motion), axis=0)))
    assert flex.max() <= np.degrees(path_pin.KNEE_SPEED) / motion.fps + 1e-6
    steep = pin_feet(result.motion, predicted=result.contacts, feet=result.feet,
                     config=PinConfig(swing_clearance=path_pin.SWING_CLEARANCE))
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


def _late_swing_pitch(motion, leg):
    """Per swing (as the rig evaluation counts them: >= 5 frames, ankle not
    planted), the lowest foot pitch (deg, ankle -> toe below the horizontal)
    over its last 30 %, relative to the stance pitch: negative = toes up."""
    from rigmind.backend.locomotion.swing_pitch import foot_pitch
    from rigmind.backend.foot_contacts import runs
    from rigmind.evaluation.locomotion_rig_scores import planted_contacts

    names = list(motion.skeleton.names)
    p = motion.world_positions()
    out = []
    for side in "LR":
        ankle, toe = p[:, names.index(f"Foot_{side}")], p[:, names.index(f"Toes_{side}")]
        pitch = np.degrees(foot_pitch(ankle, toe))
        swing = ~planted_contacts(ankle, motion.fps, leg)
        flat = np.median(pitch[~swing])
        for i, j in zip(*runs(swing)):
            if j - i >= 5:
                out.append(pitch[i + int(0.7 * (j - i)):j].min() - flat)
    return np.array(out)


def test_heel_strike_toes_up_and_above_the_floor(walk):
    """People land heel first with the toes up (the Bandai walks: about -18
    degrees relative to stance at 0.8-0.9 of the swing); the network lands
    flat. Walk Along Path's clean-up gives the swinging foot the training
    mocap's pitch profile (``PinConfig.swing_pitch``): on a validation path
    the median late-swing pitch is -17.4 degrees (-2.4 without), the toes
    stay above -1 cm (-0.25; -0.21 without) and the planted feet do not
    slide more (0.208 cm/frame with and without)."""
    from dataclasses import replace

    from rigmind.backend.locomotion.cleanup import foot_floors, planted_skate, stance_contacts
    from rigmind.backend.locomotion import path_pin

    motion, result, leg = walk
    flat = pin_feet(result.motion, predicted=result.contacts, feet=result.feet,
                    config=replace(path_pin.path_pin_config("normal"), swing_pitch=None))
    assert np.median(_late_swing_pitch(motion, leg)) < -10.0
    assert np.median(_late_swing_pitch(flat, leg)) > -5.0
    names = list(motion.skeleton.names)
    floors = foot_floors(flat)  # the same ground for both
    p = motion.world_positions()
    for k, side in enumerate("LR"):
        assert (p[:, names.index(f"Toes_{side}"), 2] - floors[2 * k + 1]).min() > -0.01
    contacts = stance_contacts(result.motion.world_positions(), names, motion.fps, result.contacts)
    assert planted_skate(motion, contacts, floors=floors) <= planted_skate(flat, contacts, floors=floors) + 0.001


def test_other_callers_clean_up_is_unchanged(monkeypatch):
    """The swing pitch is off in the default PinConfig: retargeting, gesture
    standing and the cycles never enter it, so their clean-up is the one they
    had (shown bit for bit old tree vs new once, bench/results/walk_along_path.md, "Swing pitch and heel
    strike"; hashes differ across CPUs, so the test
    checks the code path instead). Walk Along Path's config turns it on."""
    from rigmind.backend.locomotion import cleanup
    from rigmind.backend.locomotion import controllers, path_pin, walk_generation, walk_speeds

    if controllers.neural_weights() is None:
        pytest.skip("no committed locomotion weights in models/ (train with `rigmind train locomotion`)")
    assert PinConfig().swing_pitch is None
    assert path_pin.path_pin_config("normal").swing_pitch is not None

    def entered(*args, **kwargs):
        raise AssertionError("the default clean-up ran the swing pitch")

    ctl = controllers.load_controller("neural")
    p = path_sets.validation_paths(1)[0]
    _, res = walk_generation.generate_path(ctl, p.points, style="normal", speed=p.speeds(walk_speeds.resolve_speed(None, "normal", "walk", 1.0)[0]))
    with_pitch = cleanup.pin_feet(res.motion, predicted=res.contacts, feet=res.feet, config=path_pin.path_pin_config("normal"))
    monkeypatch.setattr(cleanup, "pitch_swing", entered)
    default = cleanup.pin_feet(res.motion, predicted=res.contacts, feet=res.feet)
    assert default.rotations.shape == with_pitch.rotations.shape
    with pytest.raises(AssertionError, match="ran the swing pitch"):
        cleanup.pin_feet(res.motion, predicted=res.contacts, feet=res.feet, config=path_pin.path_pin_config("normal"))


def test_pitch_profile_shape_from_the_mocap():
    """The committed profile (bench/locomotion_swing_pitch.py, training
    clips) has the mocap's shape: plantarflexed after toe-off, toes up before
    heel strike, near flat at it; and a swing pitched along it keeps a
    planted toe and a landing ankle where they were."""
    from rigmind.backend.locomotion import swing_pitch

    walk_profile, run_profile = swing_pitch.style_profiles("normal")
    deg = np.degrees(walk_profile.pitch)
    n = len(deg)
    assert deg[: n // 3].max() > 25.0 and deg[int(0.75 * n):].min() < -12.0 and abs(deg[-1]) < 10.0
    assert 0.0 < walk_profile.apex < walk_profile.low < 1.0 and run_profile is not None
    # A straight 20-frame flight between two footholds 0.6 m apart (ankle and toe 0.12 m apart, flat).
    f = 40
    x = np.concatenate([np.zeros(10), np.linspace(0.0, 0.6, 20), np.full(10, 0.6)])
    z = 0.1 + np.concatenate([np.zeros(10), 0.1 * np.sin(np.linspace(0.0, np.pi, 20)), np.zeros(10)])
    ankle = np.stack([x, np.zeros(f), z], axis=1)
    toe = ankle + np.array([0.12, 0.0, -0.05])
    ankle_runs = [(0, 9, ankle[0]), (30, 40, ankle[-1])]
    toe_runs = [(0, 10, toe[0]), (31, 40, toe[-1])]
    a2, t2 = swing_pitch.pitch_swing(ankle, toe, ankle_runs, toe_runs, np.zeros(f, bool), (walk_profile, None),
                            (0.1, 0.05), 30.0)
    np.testing.assert_allclose(np.linalg.norm(t2 - a2, axis=1), np.linalg.norm(toe - ankle, axis=1), atol=1e-9)
    np.testing.assert_array_equal(t2[:10], toe[:10])  # before toe-off: untouched
    np.testing.assert_allclose(t2[10], toe[10], atol=0.01)  # the foot turns about the leaving toe
    np.testing.assert_array_equal(a2[30:], ankle[30:])  # the ankle lock holds through the roll
    pitch = np.degrees(swing_pitch.foot_pitch(a2, t2) - swing_pitch.foot_pitch(ankle, toe))
    assert pitch[12:18].max() > 20.0 and pitch[25:30].min() < -10.0  # toe-off, heel strike
    assert abs(pitch[34]) < 1e-9  # flat again 0.1 s after heel strike
    assert t2[:, 2].min() >= 0.05 - 1e-3 and a2[:, 2].min() >= 0.1 - 1e-3  # neither joint under its floor


def test_swing_pitch_of_a_style_blend_is_its_heaviest_style():
    """The controller takes ``{name: weight}`` style blends; Walk Along
    Path's swing pitch is then the heaviest style's (and an unknown name
    the normal style's), never a crash on an unhashable style."""
    from rigmind.backend.locomotion import swing_pitch

    assert swing_pitch.style_profiles({"active": 0.7, "normal": 0.3}) == swing_pitch.style_profiles("active")
    assert swing_pitch.style_profiles("no-such-style") == swing_pitch.style_profiles("normal")
