"""Analytic two-bone IK, vectorised over any leading shape (frames, legs).

Positions are metres in one common space (armature space in RigMind); the
returned rotations are *world-space deltas* (``w, x, y, z``): a bone's new
world rotation is ``delta * old_world_rotation``. Nothing here loops over
frames, and degenerate input (zero-length bones, target on the root, straight
limbs) gives finite results.
"""

from __future__ import annotations

import numpy as np

from . import rotations

_EPS = 1e-9

#: Fraction of the full chain length the solver may reach: a fully straight
#: limb has an undefined bend direction, and reaching it makes knees "pop"
#: (snap between bent and straight) from one frame to the next.
MAX_REACH = 0.999
#: Where the soft reach limit starts (fraction of the chain length): beyond
#: it, target distances are compressed smoothly towards MAX_REACH instead of
#: being cut off, so the knee straightens gradually as a foot target moves
#: out of reach (near full extension the knee angle changes very fast with
#: the distance: a hard cut makes it snap).
SOFT_REACH = 0.97


def unit_vectors(v: np.ndarray, fallback=None) -> np.ndarray:
    """``v [..., n]`` scaled to length 1 along the last axis; where a vector
    is (near) zero, ``fallback`` (broadcast like ``v``) if given: an array, or
    a function of no arguments returning one, called only when some vector
    is that short (the fallbacks of :func:`two_bone_ik` cost more than the
    solve on one frame's limbs)."""
    n = _length(v)
    out = v / np.maximum(n, _EPS)
    if fallback is not None:
        short = ~(n > 1e-8)  # NaN lengths take the fallback too
        if short.any():
            out = np.where(short, fallback() if callable(fallback) else fallback, out)
    return out


#: The way a straight arm's elbow turns when it bends (no bend of its own to
#: follow): down and forward of the character facing -Y.
ELBOW_FALLBACK = np.array([0.0, 0.3, -1.0])


def elbow_pole(shoulder, elbow, wrist, distance: float = 0.3) -> np.ndarray:
    """A pole ``[..., 3]`` for :func:`two_bone_ik` on arms: ``distance``
    metres from the elbow on the side the arm bends now (away from the
    shoulder-wrist midpoint), so a solve keeps the elbow where it pointed; a
    straight arm takes :data:`ELBOW_FALLBACK`."""
    elbow = np.asarray(elbow, dtype=np.float64)
    bend = elbow - 0.5 * (np.asarray(shoulder, dtype=np.float64) + np.asarray(wrist, dtype=np.float64))
    return elbow + unit_vectors(bend, ELBOW_FALLBACK) * distance


def within_reach(move: np.ndarray, goals: np.ndarray, reach: np.ndarray, rounds: int = 8) -> np.ndarray:
    """``move [..., 3]`` (m) brought into the reach of every limb: limb ``k``'s
    root, moved by the result, stays within ``reach [K, ...]`` of its goal
    ``goals [K, ..., 3]`` (given from the root as it is now; a goal out of
    reach now is kept no farther than it is). Alternating projections onto
    the balls, then cut back towards no move where they have not settled:
    the nearest such move for one limb, near it for two, and exactly
    ``move`` wherever every limb already allows it."""
    move = np.asarray(move, dtype=np.float64)
    goals = np.asarray(goals, dtype=np.float64)
    reach = np.maximum(np.asarray(reach, dtype=np.float64), np.sqrt((goals * goals).sum(-1)))
    out = move.copy()
    for _ in range(rounds):
        off = out - goals
        if ((off * off).sum(-1) <= reach * reach).all():  # the usual case, and a live tick's
            return out
        for g, r in zip(goals, reach):
            off = out - g
            dist = np.sqrt((off * off).sum(-1, keepdims=True))
            out = np.where(dist > r[..., None], g + off * (r[..., None] / np.maximum(dist, 1e-12)), out)
    # Where the rounds have not settled inside every ball, the part of the
    # way from standing still (always allowed) that is: the balls are convex.
    t = np.ones(out.shape[:-1])
    ee = (out * out).sum(-1)
    for g, r in zip(goals, reach):
        de = (g * out).sum(-1)
        cc = (g * g).sum(-1) - r * r  # <= 0
        t = np.minimum(t, (de + np.sqrt(np.maximum(de * de - ee * cc, 0.0))) / np.maximum(ee, 1e-24))
    return out * np.clip(t, 0.0, 1.0)[..., None]


def _length(v: np.ndarray) -> np.ndarray:
    """``|v|`` over the last axis, kept as ``[..., 1]`` (``np.linalg.norm``'s
    checks cost more than the sum on small arrays)."""
    return np.sqrt((v * v).sum(-1, keepdims=True))


def soft_reach(dist, length, soft=SOFT_REACH, max_reach: float = MAX_REACH):
    """Distances ``dist`` compressed so they never exceed ``max_reach *
    length``: unchanged up to ``soft * length`` (``soft`` may be an array,
    e.g. the current extension of each frame so that a pose already reached
    is kept), then a tanh roll-off with a continuous slope (no kink for a
    target moving steadily outwards)."""
    dist = np.asarray(dist, dtype=np.float64)
    start = np.minimum(soft, max_reach) * length
    span = max_reach * length - start
    over = np.maximum(dist - start, 0.0)
    rolled = start + span * np.tanh(over / np.maximum(span, _EPS))
    return np.where(dist > start, rolled, dist)


def two_bone_ik(root, mid, end, target, pole, max_reach: float = MAX_REACH, soft=None):
    """Solve a two-bone chain (e.g. upper leg, lower leg, foot) so ``end``
    reaches ``target``.

    Args:
        root, mid, end: joint positions ``[..., 3]`` (hip, knee, ankle) in
            the current pose.
        target: where ``end`` should go ``[..., 3]``; its distance from
            ``root`` is clamped to ``[|l1 - l2|, max_reach * (l1 + l2)]``.
        pole: a point ``[..., 3]`` the middle joint should bend towards (the
            knee's side of the limb's plane).
        soft: None for a hard reach limit; else the fraction of the chain
            length (a number or ``[...]``) where :func:`soft_reach` starts
            compressing the distance (``reached`` is then short of targets
            beyond it).

    Returns:
        ``(q_root, q_mid)``: world-space delta rotations ``[..., 4]`` for the
        upper and the lower bone (``q_mid`` includes the effect of
        ``q_root``), and ``reached [..., 3]``: where the end joint is after
        the solve (the clamped target).
    """
    a, b, c, b_new, reached = _bend(root, mid, end, target, pole, max_reach, soft)
    q_root = rotations.between_vectors(b - a, b_new - a)
    c_rot = b_new + rotations.rotate(q_root, c - b)
    q_mid = rotations.mul(rotations.between_vectors(c_rot - b_new, reached - b_new), q_root)
    return q_root, q_mid, reached


def two_bone_ik_matrices(root, mid, end, target, pole, max_reach: float = MAX_REACH, soft=None):
    """:func:`two_bone_ik` with world-space delta rotation *matrices*
    ``[..., 3, 3]`` for the upper and the lower bone (a bone's new world
    rotation matrix is ``delta @ old``), for callers that pose with matrices
    (the live tracker); the same solve."""
    a, b, c, b_new, reached = _bend(root, mid, end, target, pole, max_reach, soft)
    m_root = rotations.matrix_between_vectors(b - a, b_new - a)
    c_rot = b_new + (m_root @ (c - b)[..., None])[..., 0]
    m_mid = rotations.matrix_between_vectors(c_rot - b_new, reached - b_new) @ m_root
    return m_root, m_mid, reached


def _bend(root, mid, end, target, pole, max_reach, soft) -> tuple:
    """The solve's geometry: ``(a, b, c, b_new, reached)``, the chain's
    joints as arrays, where the middle joint goes and where the end lands."""
    a = np.asarray(root, dtype=np.float64)
    b = np.asarray(mid, dtype=np.float64)
    c = np.asarray(end, dtype=np.float64)
    t = np.asarray(target, dtype=np.float64)
    p = np.asarray(pole, dtype=np.float64)
    if not (a.shape == b.shape == c.shape == t.shape == p.shape):
        a, b, c, t, p = np.broadcast_arrays(a, b, c, t, p)
    l1 = _length(b - a)[..., 0]
    l2 = _length(c - b)[..., 0]
    at = t - a
    dist = _length(at)[..., 0]
    lo = np.abs(l1 - l2) + 1e-6
    hi = np.maximum(max_reach * (l1 + l2), lo)
    if soft is not None:
        dist = soft_reach(dist, l1 + l2, soft, max_reach)
    d = np.clip(dist, lo, hi)
    # Direction to the target; when the target sits on the root, keep the
    # current root->end direction.
    u = unit_vectors(at, lambda: unit_vectors(c - a, np.broadcast_to([0.0, 0.0, -1.0], a.shape)))
    # Bend direction: the pole's offset perpendicular to u; falls back on the
    # current knee offset, then on any perpendicular.
    def perp(v):
        return v - (v * u).sum(-1, keepdims=True) * u

    def any_perp():
        x = rotations.cross(u, np.broadcast_to([1.0, 0.0, 0.0], u.shape))
        return unit_vectors(np.where(_length(x) > 1e-3, x, rotations.cross(u, np.broadcast_to([0.0, 1.0, 0.0], u.shape))))

    v = unit_vectors(perp(p - a), lambda: unit_vectors(perp(b - a), any_perp))
    cos_a = np.clip((l1**2 + d**2 - l2**2) / np.maximum(2.0 * l1 * d, _EPS), -1.0, 1.0)
    sin_a = np.sqrt(1.0 - cos_a**2)
    b_new = a + l1[..., None] * (cos_a[..., None] * u + sin_a[..., None] * v)
    reached = a + d[..., None] * u
    return a, b, c, b_new, reached
