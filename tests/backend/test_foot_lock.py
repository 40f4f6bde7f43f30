"""The one foot-lock / leg-IK module (backend/foot_lock.py). Pure NumPy."""

from __future__ import annotations

import numpy as np

from rigmind.backend import ik
from rigmind.backend.foot_lock import lock_offsets, lock_weights, solve_leg


def test_lock_weights_anchor_each_frame_to_its_nearest_contact_run():
    mask = np.zeros(30, bool)
    mask[5:10] = True
    mask[20:25] = True
    w, anchor = lock_weights(mask, 3)
    assert np.all(w[mask] == 1.0) and w[0] == 0.0 and w[15] == 0.0
    assert 0.0 < w[11] < 1.0 and w[11] > w[12]
    assert np.all(anchor[:15] == 5) and np.all(anchor[16:] == 20)


def test_lock_offsets_hold_a_sliding_foot_on_its_lock():
    """A foot that slides 1 cm per frame while in contact is held still
    there (at the run's median position) and let go smoothly after."""
    f = 40
    pos = np.zeros((f, 3))
    pos[:, 0] = 0.01 * np.arange(f)
    contact = np.zeros(f)
    contact[10:20] = 1.0
    off, w, runs = lock_offsets(pos, contact, 6.0)
    held = pos + off
    assert len(runs) == 1 and np.allclose(held[10:20], held[10]) and np.all(w[10:20] == 1.0)
    assert np.allclose(off[30:], 0.0) and np.all(np.abs(np.diff(held[:, 0])) < 0.03)


def test_solve_leg_reaches_the_target_both_ways():
    rng = np.random.default_rng(0)
    hip = np.zeros((50, 3))
    knee = hip + [0.0, -0.05, -0.45] + rng.normal(scale=0.01, size=(50, 3))
    ankle = knee + [0.0, 0.05, -0.45]
    target = hip + 0.85 * (ankle - hip) + rng.normal(scale=0.04, size=(50, 3))
    pole = knee + [0.0, -0.3, 0.0]
    a = solve_leg(hip, knee, ankle, target, pole, soft=0.97)
    b = ik.two_bone_ik(hip, knee, ankle, target, pole, soft=0.97)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    _, _, reached = solve_leg(hip, knee, ankle, target, pole, soft=0.97, knee_speed=np.inf, fps=30.0)
    chain = np.linalg.norm(knee - hip, axis=-1) + np.linalg.norm(ankle - knee, axis=-1)
    near = np.linalg.norm(target - hip, axis=-1) < 0.9 * 0.97 * chain  # inside the soft limit
    assert near.sum() > 10
    assert np.allclose(reached[near], target[near], atol=1e-6)
