"""A path walk's costs grow with its length, not with its frames times the
path's points or its steps squared (issue #27: a 10 000-point path once
held a [frames, points] table of 11 GB). Counts the (point, segment) pairs
measured and the largest block, and checks the faster searches give the
same answers; no timing."""

from __future__ import annotations

import numpy as np
import pytest

from rigmind.backend.foot_contacts import runs
from rigmind.backend.locomotion import path_follow, swing_pitch
from rigmind.backend.locomotion.path_follow import DISTANCE_BLOCK, Path2D


def brute_distance(path: Path2D, xy) -> np.ndarray:
    """Every segment against every point, the way the follower once did."""
    flat = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
    a, d = path.points[:-1], np.diff(path.points, axis=0)
    return path_follow.segment_distances(flat, a, d).reshape(np.shape(xy)[:-1])


def winding(n: int, step: float = 0.09, seed: int = 3) -> np.ndarray:
    """``[n, 2]`` points ``step`` m apart, a heading random walk (m)."""
    heading = np.cumsum(np.random.default_rng(seed).normal(0.0, 0.06, n))
    return np.vstack([np.zeros((1, 2)), np.cumsum(step * np.stack([np.cos(heading), np.sin(heading)], 1), 0)])[:n]


def walk_near(path: Path2D, frames: int, seed: int = 0) -> np.ndarray:
    """``[frames, 2]`` roots along the path, a few cm to 0.5 m off it."""
    s = np.linspace(0.0, path.length, frames)
    return path.at(s) + np.random.default_rng(seed).normal(0.0, 0.15, (frames, 2))


@pytest.mark.parametrize("points", [winding(800), np.array([[0.0, 0.0], [5.0, 0.0], [5.0, 0.4], [0.0, 0.4]]),
                                    np.random.default_rng(1).normal(0.0, 4.0, (120, 2))])
def test_distance_is_the_nearest_segment_anywhere(points):
    path = Path2D(points)
    rng = np.random.default_rng(2)
    xy = np.concatenate([walk_near(path, 1500), rng.normal(0.0, 40.0, (300, 2))])  # far ones widen the search
    assert np.array_equal(path.distance(xy), brute_distance(path, xy))
    grid = xy[:24].reshape(2, 3, 4, 2)
    assert np.array_equal(path.distance(grid), brute_distance(path, grid))


def pairs_measured(monkeypatch, n_points: int, frames: int) -> tuple:
    """(point-segment pairs measured, largest block's pairs) for one walk of
    ``frames`` roots along an ``n_points`` path."""
    seen = []
    real = path_follow.segment_distances

    def counting(q, a, d):
        seen.append(len(q) * len(a))
        return real(q, a, d)

    monkeypatch.setattr(path_follow, "segment_distances", counting)
    path = Path2D(winding(n_points))
    path.distance(walk_near(path, frames))
    return sum(seen), max(seen)


def test_distance_grows_linearly_with_the_walk(monkeypatch):
    # 4x the path's points and 4x the frames: 4x the work, where measuring
    # every segment for every frame is 16x.
    small, small_block = pairs_measured(monkeypatch, 600, 1500)
    large, large_block = pairs_measured(monkeypatch, 2400, 6000)
    assert large < 6 * small, (small, large)
    assert large < 0.1 * 2400 * 6000
    # A block's temporaries stay the size of a few metres of path.
    assert max(small_block, large_block) <= DISTANCE_BLOCK * 400


def scanned_flights(ankle_runs, toe_runs, max_frames=None) -> list:
    """swing_pitch.flights as it was: every run scanned for each toe run
    (quadratic in the take's steps)."""
    a_starts = np.array([r[0] for r in ankle_runs], dtype=np.int64)
    out = []
    for _, te, *_ in toe_runs:
        later = a_starts[a_starts >= te]
        if not len(later):
            continue
        hs = int(later[0])
        if any(s < hs and e > te for s, e, *_ in ankle_runs) or any(te <= s < hs for s, *_ in toe_runs):
            continue
        if hs - te < swing_pitch.MIN_FLIGHT or (max_frames is not None and hs - te > max_frames):
            continue
        out.append((int(te), hs))
    return out


def test_flights_by_binary_search_are_the_scanned_ones():
    rng = np.random.default_rng(11)
    for trial in range(300):
        frames = int(rng.integers(5, 300))
        ankle, toe = (np.convolve(rng.random(frames) < rng.uniform(0.2, 0.8), np.ones(3), "same") > 1
                      for _ in range(2))
        a_runs, t_runs = list(zip(*runs(ankle))), list(zip(*runs(toe)))
        limit = None if trial % 2 else int(rng.integers(3, 40))
        assert swing_pitch.flights(a_runs, t_runs, limit) == scanned_flights(a_runs, t_runs, limit)
