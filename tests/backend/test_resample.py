"""backend.resample: frame-count rule, round trips, slerp between frames."""

from __future__ import annotations

import numpy as np
import pytest

from rigmind.backend import rotations
from rigmind.backend.motion import Motion
from rigmind.backend.resample import num_frames_for, resample
from rigmind.backend.skeleton import Skeleton


def smooth_motion(frames=31, fps=30.0, translations=False, shapes=False) -> Motion:
    """A 3-joint chain turning smoothly (so slerp between frames is well posed)."""
    sk = Skeleton(["root", "a", "b"], [-1, 0, 1], [[0, 0, 1], [0, 0, 0.5], [0, 0.4, 0]])
    t = np.arange(frames) / fps
    rng = np.random.default_rng(0)
    axes = rng.normal(size=(3, 3))
    axes /= np.linalg.norm(axes, axis=-1, keepdims=True)
    speed = np.array([1.0, 2.0, -1.5])
    rot = rotations.from_axis_angle(axes[None] * (t[:, None, None] * speed[None, :, None]))
    root = np.stack([t, np.sin(t), 0.1 * t**2], -1)
    tr = None
    if translations:
        tr = np.broadcast_to(sk.offsets, (frames, 3, 3)) + np.sin(t)[:, None, None] * 0.01
    names, w = [], None
    if shapes:
        names = ["jawOpen", "blink"]
        w = np.stack([np.linspace(0, 1, frames), np.abs(np.sin(t))], -1)
    return Motion(sk, rot, root, fps, tr, names, w, "walk")


def test_frame_count_rule():
    assert num_frames_for(31, 30, 60) == 61
    assert num_frames_for(61, 60, 30) == 31
    assert num_frames_for(60, 60, 30) == 30  # 59/60 s: the last whole 1/30 s frame is at 58/60 s
    assert num_frames_for(31, 30, 24) == 25  # exactly 1 s
    assert num_frames_for(1, 30, 60) == 1
    assert num_frames_for(0, 30, 60) == 0
    # non-integer rates do not lose a frame to float error
    assert num_frames_for(1001, 30000 / 1001, 30000 / 1001) == 1001


def test_30_60_30_round_trip():
    m = smooth_motion(translations=True, shapes=True)
    up = resample(m, 60)
    assert up.num_frames == 61 and up.fps == 60.0
    assert up.duration == pytest.approx(m.duration, abs=1e-12)
    np.testing.assert_allclose(up.rotations[::2], m.rotations, atol=1e-12)
    down = resample(up, 30)
    assert down.num_frames == m.num_frames and down.fps == 30.0
    np.testing.assert_allclose(down.rotations, m.rotations, atol=1e-12)
    np.testing.assert_allclose(down.root_positions, m.root_positions, atol=1e-12)
    np.testing.assert_allclose(down.translations, m.translations, atol=1e-12)
    np.testing.assert_allclose(down.shape_weights, m.shape_weights, atol=1e-12)
    assert down.shape_names == m.shape_names and down.name == "walk" and down.skeleton is m.skeleton


def test_duration_preserved_and_last_frame():
    m = smooth_motion(frames=41)  # 4/3 s
    for fps in (24.0, 60.0, 120.0, 15.0):
        out = resample(m, fps)
        assert out.duration == pytest.approx(m.duration, abs=1e-9), fps
        np.testing.assert_allclose(out.rotations[-1], m.rotations[-1], atol=1e-12)
        np.testing.assert_allclose(out.root_positions[-1], m.root_positions[-1], atol=1e-12)
    # not divisible: 40/30 s at 25 fps -> 34 frames, ends within one output frame
    out = resample(m, 25.0)
    assert out.num_frames == 34
    assert m.duration - 1 / 25 < out.duration <= m.duration


def test_slerp_between_frames():
    m = smooth_motion(frames=11, fps=10.0)
    up = resample(m, 20.0)  # every other frame is a midpoint
    mids = up.rotations[1::2]
    expect = rotations.slerp(m.rotations[:-1], m.rotations[1:], np.full(m.rotations.shape[:2][:1] + (3,), 0.5)[:-1])
    assert np.all(np.abs(np.sum(mids * expect, -1)) > 1 - 1e-12)
    # constant angular velocity: the midpoint of a uniform turn is the half-way angle
    t_mid = (np.arange(10) + 0.5) / 10.0
    rng = np.random.default_rng(0)
    axes = rng.normal(size=(3, 3))
    axes /= np.linalg.norm(axes, axis=-1, keepdims=True)
    exact = rotations.from_axis_angle(axes[None] * (t_mid[:, None, None] * np.array([1.0, 2.0, -1.5])[None, :, None]))
    assert np.all(np.abs(np.sum(mids * exact, -1)) > 1 - 1e-12)
    # positions are linear
    np.testing.assert_allclose(up.root_positions[1::2], 0.5 * (m.root_positions[:-1] + m.root_positions[1:]))
    # output is sign-continuous
    assert np.all(np.sum(up.rotations[1:] * up.rotations[:-1], -1) > 0)


def test_slerp_takes_the_short_way_across_sign_flips():
    m = smooth_motion(frames=5, fps=10.0)
    flipped = m.rotations.copy()
    flipped[1::2] *= -1.0
    m2 = Motion(m.skeleton, flipped, m.root_positions, m.fps)
    a = resample(m, 40.0).rotations
    b = resample(m2, 40.0).rotations
    assert np.all(np.abs(np.sum(a * b, -1)) > 1 - 1e-12)


def test_edge_cases():
    m = smooth_motion(frames=1)
    out = resample(m, 60)
    assert out.num_frames == 1 and out.fps == 60.0
    same = resample(smooth_motion(), 30)
    np.testing.assert_allclose(same.rotations, smooth_motion().rotations)
    with pytest.raises(ValueError):
        resample(smooth_motion(), 0)
