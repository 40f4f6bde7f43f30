"""The one foot-contact detector (backend/foot_contacts.py): its hysteresis,
run cleaner and detector, against plain loop definitions. Pure NumPy."""

from __future__ import annotations

import numpy as np

from rigmind.backend.foot_contacts import (ContactConfig, close_gaps, detect_contacts, hysteresis, runs,
                                           runs_holding)


def _runs_by_loop(mask):
    out, start = [], None
    for i, m in enumerate(list(mask) + [False]):
        if m and start is None:
            start = i
        elif not m and start is not None:
            out.append((start, i))
            start = None
    return out


def test_runs_and_close_gaps_match_loops():
    rng = np.random.default_rng(1)
    for _ in range(200):
        mask = rng.random(int(rng.integers(0, 40))) < rng.random()
        s, e = runs(mask)
        assert list(zip(s, e)) == _runs_by_loop(mask)
        gap, least = int(rng.integers(0, 4)), int(rng.integers(0, 4))
        want = mask.copy()
        r = _runs_by_loop(mask)
        for (_, a), (b, _) in zip(r[:-1], r[1:]):
            if b - a <= gap:
                want[a:b] = True
        for a, b in _runs_by_loop(want):
            if b - a < least:
                want[a:b] = False
        assert np.array_equal(close_gaps(mask, gap, least), want)


def test_hysteresis_is_a_forward_state_machine():
    rng = np.random.default_rng(2)
    for _ in range(100):
        f = int(rng.integers(1, 30))
        on, off = rng.random((f, 2)) < 0.3, rng.random((f, 2)) < 0.3
        init = rng.random(2) < 0.5
        got = hysteresis(on, off, init)
        state = init.copy()
        for i in range(f):
            state = np.where(on[i], True, np.where(off[i], False, state))
            assert np.array_equal(got[i], state)


def test_runs_holding_is_hold_runs_containing_an_on_frame():
    """Forward and backward hysteresis together: each run of ``hold | on``
    that holds an ``on`` frame, whole."""
    rng = np.random.default_rng(3)
    for _ in range(200):
        f = int(rng.integers(1, 40))
        on, hold = rng.random((f, 3)) < 0.15, rng.random((f, 3)) < 0.6
        got = runs_holding(on, hold)
        for k in range(3):
            want = np.zeros(f, bool)
            for a, b in _runs_by_loop(hold[:, k] | on[:, k]):
                if on[a:b, k].any():
                    want[a:b] = True
            assert np.array_equal(got[:, k], want)


def test_detector_reads_height_above_floor_and_speed():
    """A foot that rests, swings away fast and rests again: planted at the
    two rests only, in metres or in leg lengths."""
    fps = 30.0
    t = np.arange(90)
    x = np.where(t < 30, 0.0, np.where(t < 60, (t - 30) * 0.05, 1.5))
    z = np.where((t >= 30) & (t < 60), 0.2, 0.0)
    pos = np.stack([x, np.zeros_like(x), z], axis=1)[:, None]
    for cfg, leg in [(ContactConfig(), 1.0), (ContactConfig(height=0.04, speed=0.3, per_leg=True), 1.0),
                     (ContactConfig(both_ways=True, max_gap=2, min_run=2), 1.0),
                     (ContactConfig(height=0.05, speed=0.4, per_leg=True, both_ways=True), 0.8)]:
        c = detect_contacts(pos, fps, cfg, leg)[:, 0]
        assert c[:29].all() and c[61:].all() and not c[31:59].any(), cfg
