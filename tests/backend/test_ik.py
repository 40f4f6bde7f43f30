"""ik.within_reach: a body's move kept within its limbs' reach."""

from __future__ import annotations

import numpy as np

from rigmind.backend import ik


def test_a_move_every_limb_allows_is_kept():
    goals = np.array([[[0.0, 0.3, -0.5]], [[0.0, -0.3, -0.5]]])  # two hands below two shoulders [K, F, 3]
    move = np.array([[0.0, 0.0, 0.05]])
    np.testing.assert_array_equal(ik.within_reach(move, goals, np.full((2, 1), 0.7)), move)


def test_a_move_too_far_ends_on_the_reach_and_as_close_as_it_can():
    rng = np.random.default_rng(0)
    goals = rng.normal(0.0, 0.3, (2, 500, 3))
    reach = np.linalg.norm(goals, axis=-1) + rng.uniform(0.0, 0.2, (2, 500))  # every goal in reach now
    move = rng.normal(0.0, 0.5, (500, 3))
    out = ik.within_reach(move, goals, reach)
    assert (np.linalg.norm(goals - out, axis=-1) <= reach + 1e-6).all()
    assert (np.linalg.norm(out, axis=-1) <= np.linalg.norm(move, axis=-1) + 1e-9).all()  # never a longer move
    # one limb: the nearest allowed move, on the ball's surface towards the wanted one
    one = ik.within_reach(move, goals[:1], reach[:1])
    off = move - goals[0]
    nearest = goals[0] + off * np.minimum(1.0, reach[0] / np.linalg.norm(off, axis=-1))[:, None]
    np.testing.assert_allclose(one, nearest, atol=1e-9)


def test_a_goal_out_of_reach_now_is_kept_no_farther():
    goals = np.array([[[0.0, 0.0, -1.0]]])  # 1 m away, the limb reaches 0.5
    out = ik.within_reach(np.array([[0.0, 0.0, 0.2]]), goals, np.array([[0.5]]))
    assert np.linalg.norm(goals[0, 0] - out[0]) <= 1.0 + 1e-9
