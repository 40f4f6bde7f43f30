"""backend.gesture.speech_rhythm: the body settles where the speech's onsets
thin out and works harder where they come thick (issue #29 item 5), keeps
its slow drift and its finest detail, and is left alone where there are no
onsets at all."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from rigmind.backend import rotations
from rigmind.backend.gesture import alignment
from rigmind.backend.gesture import representation
from rigmind.backend.gesture.speech_rhythm import RhythmConfig, activity_weight, onset_density, settle_with_speech

FPS = 30.0


def _waving_body(seconds=20.0, seed=0, band=(0.5, 1.0)):
    """The gesture skeleton standing, every joint turning back and forth
    (``band`` Hz, a few degrees) over a slow 0.1-Hz sway of the root."""
    rng = np.random.default_rng(seed)
    m = representation.decode(np.zeros((int(seconds * FPS), representation.POSE_DIM), np.float32), FPS)
    t = np.arange(m.num_frames) / FPS
    J = m.rotations.shape[1]
    f = rng.uniform(band[0], band[1], (J, 3))
    ph = rng.uniform(0, 2 * np.pi, (J, 3))
    aa = 0.06 * np.sin(2 * np.pi * f[None] * t[:, None, None] + ph[None])
    rot = rotations.mul(m.rotations, rotations.from_axis_angle(aa))
    root = m.root_positions + np.c_[0.03 * np.sin(2 * np.pi * 0.1 * t), 0.01 * np.sin(2 * np.pi * np.mean(band) * t), 0 * t]
    return replace(m, rotations=rot, root_positions=root)


def _speeds(m):
    p = m.world_positions()
    return np.linalg.norm(np.diff(p, axis=0), axis=-1).mean(axis=1) * FPS  # [T-1] m/s


def test_density_counts_onsets_within_sigma():
    d = onset_density(np.array([1.0, 1.0, 5.0]), 300, FPS, 0.3)
    assert d[30] == pytest.approx(2.0, abs=1e-3) and d[150] == pytest.approx(1.0, abs=1e-3)
    assert d[90] < 1e-3 and len(d) == 300
    assert onset_density(np.array([-3.0, 99.0]), 30, FPS, 0.3).max() == 0.0  # outside the take


def test_weight_is_settled_where_sparse_and_raised_where_busy():
    cfg = RhythmConfig()
    d = np.r_[np.zeros(150), np.full(150, 4.0)]
    w = activity_weight(d, FPS, cfg)
    assert w[:100].max() == pytest.approx(cfg.settled, abs=1e-6)
    assert w[200:].min() == pytest.approx(cfg.busy_gain, abs=1e-6)
    assert np.all(np.diff(w) >= -1e-12) and np.abs(np.diff(w)).max() < 0.2  # a gentle rise, no jump
    # the quantiles are the speech's: a long silence does not make the sparse talk busy
    talk = np.r_[np.zeros(600, bool), np.ones(300, bool)]
    d2 = np.r_[np.zeros(600), np.full(150, 1.0), np.full(150, 4.0)]
    sparse_talk = slice(620, 730)
    assert activity_weight(d2, FPS, cfg, talk)[sparse_talk].max() == pytest.approx(cfg.settled, abs=1e-6)
    over_take = RhythmConfig(quantiles_over="take")
    assert activity_weight(d2, FPS, over_take, talk)[sparse_talk].min() == pytest.approx(cfg.busy_gain, abs=1e-6)


def test_the_body_settles_in_the_sparse_half_and_works_in_the_busy_half():
    m = _waving_body()
    onsets = np.arange(10.0, 20.0, 0.18)  # syllables in the second half only
    out = settle_with_speech(m, onsets)
    before, after = _speeds(m), _speeds(out)
    quiet, busy = slice(30, 240), slice(360, 570)
    assert after[quiet].mean() < 0.6 * before[quiet].mean()
    assert after[busy].mean() > 1.25 * before[busy].mean()
    # the slow sway is kept: the settled body still drifts with the root
    assert np.ptp(out.root_positions[quiet, 0]) > 0.8 * np.ptp(m.root_positions[quiet, 0])
    assert out.rotations.shape == m.rotations.shape and np.allclose(np.linalg.norm(out.rotations, axis=-1), 1)


def test_the_finest_detail_settles_but_is_never_raised():
    """A 6-Hz tremor is under ``fine_s``: it settles with the rest where the
    speech is sparse but is not raised where it is busy, so the arms' largest
    accelerations do not grow with the weight."""
    m = _waving_body(band=(5.5, 6.5))
    cfg = RhythmConfig(slow_s=0.5)
    out = settle_with_speech(m, np.arange(10.0, 20.0, 0.18), cfg)
    before, after = _speeds(m), _speeds(out)
    np.testing.assert_allclose(after[360:570].mean(), before[360:570].mean(), rtol=0.1)
    np.testing.assert_allclose(after[30:240].mean(), cfg.settled * before[30:240].mean(), rtol=0.2)
    raised = settle_with_speech(m, np.arange(10.0, 20.0, 0.18), RhythmConfig(slow_s=0.5, raise_detail=True))
    assert _speeds(raised)[360:570].mean() > 1.2 * before[360:570].mean()


def test_no_onsets_or_a_tiny_take_is_left_as_it_is():
    m = _waving_body(seconds=3.0)
    assert settle_with_speech(m, np.zeros(0)) is m
    short = replace(m, rotations=m.rotations[:2], root_positions=m.root_positions[:2])
    assert settle_with_speech(short, np.array([0.01])) is short


def test_settled_beats_follow_the_speech():
    """The body's beats everywhere, the speech in bursts: settled, the beats
    left are where the syllables are, and the gain rises above the real
    capture's 1.03."""
    rng = np.random.default_rng(4)
    m = _waving_body(seconds=40.0, seed=4)
    starts = np.cumsum(rng.uniform(2.5, 5.0, 12))
    onsets = np.concatenate([s + np.cumsum(rng.uniform(0.12, 0.3, 8)) for s in starts[starts < 36]])
    from rigmind.backend.gesture import metrics

    def gain(motion):
        p = motion.world_positions()
        beats = metrics.motion_beats(p, FPS, mean_speed=metrics.joint_speed(m.world_positions(), FPS).mean(0),
                                     per_joint=True)
        return alignment.alignment_from_beats(onsets, beats, motion.num_frames / FPS).gain

    assert gain(m) < 1.03 < gain(settle_with_speech(m, onsets))


def test_joints_in_groups_equal_the_whole_skeleton_at_once(monkeypatch):
    from rigmind.backend.gesture import speech_rhythm

    m = _waving_body(seconds=6.0, seed=2)
    onsets = np.arange(3.0, 6.0, 0.2)
    grouped = settle_with_speech(m, onsets)
    monkeypatch.setattr(speech_rhythm, "JOINTS_AT_A_TIME", 1000)
    whole = settle_with_speech(m, onsets)
    np.testing.assert_allclose(grouped.rotations, whole.rotations, atol=1e-12)


def test_lying_onset_times_are_ignored_not_trusted():
    """Onsets outside the take, negative or not numbers add nothing."""
    m = _waving_body(seconds=6.0, seed=5)
    good = np.arange(3.0, 6.0, 0.2)
    bad = np.r_[good, -4.0, 1e12, np.nan, np.inf, -np.inf]
    np.testing.assert_allclose(settle_with_speech(m, bad).rotations, settle_with_speech(m, good).rotations, atol=1e-12)
