"""bench/beat_strokes.py (the alignment bench's experiment): the hands mark the given beats (committed
weights give a natural standing pose; everything else is synthetic)."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest
from conftest import REPO

from rigmind.backend.gesture import representation
from rigmind.backend.motion import Motion

# The beat-stroke layer is an experiment the alignment bench runs (not applied by rigmind gesture).
_spec = importlib.util.spec_from_file_location("beat_strokes", REPO / "bench" / "beat_strokes.py")
beat_strokes = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("beat_strokes", beat_strokes)  # its dataclasses look their module up by name
_spec.loader.exec_module(beat_strokes)
BeatStrokeConfig, add_beat_strokes = beat_strokes.BeatStrokeConfig, beat_strokes.add_beat_strokes

FPS = 30.0
T = 150
BEATS = np.array([30, 52, 90, 118])


@pytest.fixture(scope="module")
def still_body():
    """The model's mean pose held for 5 s, the root fixed: a still standing body."""
    from rigmind.backend.gesture.generate import get_model

    model = get_model()
    m = representation.decode(np.tile(model.mean, (T, 1)), FPS, model.finger_basis)
    return Motion(m.skeleton, m.rotations, np.broadcast_to(m.root_positions[:1], (T, 3)).copy(), FPS)


def _wrists(motion):
    names = list(motion.skeleton.names)
    return motion.world_positions()[:, [names.index("left_wrist"), names.index("right_wrist")]]


def test_the_wrists_speed_minimum_sits_on_each_beat(still_body):
    out = add_beat_strokes(still_body, BEATS, np.ones(T), np.ones(T))
    speed = np.linalg.norm(np.gradient(_wrists(out), axis=0) * FPS, axis=-1)   # [T, 2] m/s
    for b in BEATS:
        for side in range(2):
            # (a still body is slower still before a stroke starts: the dip is local)
            window = speed[b - 3:b + 4, side]
            assert abs(int(np.argmin(window)) - 3) <= 1, (b, side, window)
            assert window.max() > 2.0 * window.min()   # a clear dip, not a flat stretch


def test_no_strokes_in_silence_and_none_without_beats(still_body):
    speech = np.zeros(T)
    speech[:70] = 1.0
    # the beats at 90 and 118 fall in silence: only those in speech stroke
    out = add_beat_strokes(still_body, BEATS, np.ones(T), speech)
    ref = add_beat_strokes(still_body, BEATS[:2], np.ones(T), np.ones(T))
    assert np.allclose(_wrists(out), _wrists(ref), atol=1e-9)
    # all in silence, or no beats at all: the motion itself
    assert add_beat_strokes(still_body, BEATS, np.ones(T), np.zeros(T)) is still_body
    assert add_beat_strokes(still_body, np.zeros(0, int), np.ones(T), np.ones(T)) is still_body
    # far from any stroke (2 s after the last) the hands barely move
    far = add_beat_strokes(still_body, np.array([20]), np.ones(T), np.ones(T))
    assert np.abs(_wrists(far)[100:] - _wrists(still_body)[100:]).max() < 0.002


def test_amplitude_is_bounded_and_follows_stress(still_body):
    cfg = BeatStrokeConfig()
    full = np.abs(_wrists(add_beat_strokes(still_body, BEATS, np.ones(T), np.ones(T))) - _wrists(still_body))
    calm = np.abs(_wrists(add_beat_strokes(still_body, BEATS, np.zeros(T), np.ones(T))) - _wrists(still_body))
    assert full.max() < 1.6 * cfg.amplitude
    assert full.max() > 0.5 * cfg.amplitude
    assert calm.max() < 0.6 * full.max()
    # mean-neutral: the hands' average place moves by millimetres
    assert np.abs(_wrists(add_beat_strokes(still_body, BEATS, np.ones(T), np.ones(T))).mean(0)
                  - _wrists(still_body).mean(0)).max() < 0.005


def test_settle_time_is_monotonic_and_keeps_time():
    phi = beat_strokes.settle_time(BEATS, np.ones(len(BEATS)), T, FPS)
    assert np.all(np.diff(phi) > 0)
    # the retiming shifts the motion by a few frames at most, and not at all far from the beats
    assert np.abs(phi - np.arange(T)).max() < 4.0
    assert abs(phi[-1] - (T - 1)) < 0.5
    rate = np.diff(phi)
    assert all(rate[b - 1:b + 1].mean() < 0.4 for b in BEATS)


def test_pulse_peaks_finds_the_pulse_centres():
    from rigmind.backend.gesture import controls

    assert list(beat_strokes.pulse_peaks(controls.pulses(BEATS, T))) == list(BEATS)


def test_snap_plays_the_bodys_own_minimum_at_the_beat():
    cfg = BeatStrokeConfig(snap_seconds=0.2)
    phi = beat_strokes.snap_time(np.array([30, 90]), np.array([27, 60, 94]), T, FPS, cfg)
    assert phi[30] == pytest.approx(27.0, abs=0.3) and phi[90] == pytest.approx(94.0, abs=0.3)
    assert np.all(np.diff(phi) > 0)
    assert np.allclose(phi[140:], np.arange(140, T), atol=0.05)   # no shift far from the beats
    # a minimum farther than snap_seconds is left alone
    far = beat_strokes.snap_time(np.array([30]), np.array([45]), T, FPS, cfg)
    assert np.allclose(far, np.arange(T))
