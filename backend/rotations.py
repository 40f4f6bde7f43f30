"""Vectorised rotation utilities.

Quaternions are ``(w, x, y, z)`` (the order of Blender's ``mathutils``), unit
length, in arrays of any leading shape ``[..., 4]``. Matrices are ``[..., 3, 3]``
and act on column vectors (``v' = M @ v``), so ``quat_to_matrix(mul(a, b)) ==
quat_to_matrix(a) @ quat_to_matrix(b)``. Angles are radians. Euler orders are
named by the axes in the order they are written, e.g. ``"ZXY"``: for
``intrinsic`` (BVH's convention) the matrix is ``Rz @ Rx @ Ry``.
"""

from __future__ import annotations

import numpy as np

_EPS = 1e-12


def normalize(q: np.ndarray) -> np.ndarray:
    """Unit quaternions ``[..., 4]``; a zero quaternion becomes identity."""
    q = np.asarray(q, dtype=np.float64)
    n = np.sqrt((q * q).sum(-1, keepdims=True))
    out = q / np.maximum(n, _EPS)
    bad = (n[..., 0] < _EPS)
    if bad.any():
        out = out.copy()
        out[bad] = (1.0, 0.0, 0.0, 0.0)
    return out


def identity(shape=()) -> np.ndarray:
    q = np.zeros(tuple(shape) + (4,))
    q[..., 0] = 1.0
    return q


def mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product ``a * b`` (apply ``b`` first, then ``a``), broadcast."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    # Components by indexing (not np.moveaxis: its axis bookkeeping costs
    # more than the product on one frame's joints).
    aw, ax, ay, az = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bw, bx, by, bz = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    return np.stack(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ],
        axis=-1,
    )


def inv(q: np.ndarray) -> np.ndarray:
    """Inverse of unit quaternions (the conjugate)."""
    q = np.asarray(q, dtype=np.float64)
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vectors ``v [..., 3]`` by unit quaternions ``q [..., 4]``."""
    q = np.asarray(q, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    w = q[..., :1]
    u = q[..., 1:]
    t = 2.0 * cross(u, v)
    return v + w * t + cross(u, t)


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.cross`` of 3-vectors ``[..., 3]``, broadcast, written out: the
    same arithmetic without ``np.cross``'s axis handling, which costs more
    than the product itself on the small arrays of per-frame (live) FK."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def canonical(q: np.ndarray) -> np.ndarray:
    """Pick the hemisphere with ``w >= 0`` (same rotation, unique sign)."""
    q = np.asarray(q, dtype=np.float64)
    return np.where(q[..., :1] < 0.0, -q, q)


def make_continuous(q: np.ndarray, axis: int = 0) -> np.ndarray:
    """Flip signs along ``axis`` (time) so consecutive quaternions have a
    positive dot product. Blender interpolates quaternion f-curves component
    by component, so sign flips between keys would spin the bone the long way.
    """
    q = np.moveaxis(np.asarray(q, dtype=np.float64), axis, 0).copy()
    if q.shape[0] > 1:
        dots = (q[1:] * q[:-1]).sum(-1)
        flips = np.cumprod(np.where(dots < 0.0, -1.0, 1.0), axis=0)
        q[1:] *= flips[..., None]
    return np.moveaxis(q, 0, axis)


def continue_signs(q: np.ndarray, prev_q=None, prev_flip=None) -> tuple:
    """:func:`make_continuous` (time on axis 0) of frames ``q [F, ..., 4]``
    that follow a frame ``prev_q [..., 4]`` (as it was given, before any
    flip) whose sign flip was ``prev_flip [...]`` (±1; None: ``q`` starts
    the clip). Returns ``(continuous q, q's last frame as given, its
    flip)``: feeding a clip block by block gives :func:`make_continuous`'s
    numbers exactly (the flips are products of ±1)."""
    q = np.asarray(q, dtype=np.float64)
    if prev_q is None:
        out = make_continuous(q)
        ext = q
        first = np.ones(q.shape[1:-1])
    else:
        ext = np.concatenate([np.asarray(prev_q, dtype=np.float64)[None], q])
        first = np.asarray(prev_flip, dtype=np.float64)
    signs = np.where((ext[1:] * ext[:-1]).sum(-1) < 0.0, -1.0, 1.0)
    flips = np.cumprod(np.concatenate([first[None], signs]), axis=0)
    if prev_q is not None:
        flips = flips[1:]
        out = q * flips[..., None]
    return out, q[-1].copy(), flips[-1].copy()


def normalize_continuous_in_place(q: np.ndarray) -> np.ndarray:
    """``make_continuous(normalize(q), axis=0)`` of ``q [F, J, 4]`` (float64,
    time on axis 0) written into ``q``, one joint at a time: both are
    elementwise or per joint, so the same numbers without the two whole-clip
    copies (0.35 GB for 100 000 frames of 55 joints). Returns ``q``."""
    if q.dtype != np.float64:
        raise TypeError(f"quaternions in place must be float64, got {q.dtype}")
    for j in range(q.shape[1]):
        q[:, j] = make_continuous(normalize(q[:, j]))
    return q


def make_continuous_in_place(q: np.ndarray, block: int = 4096) -> np.ndarray:
    """:func:`make_continuous` of ``q [F, ..., 4]`` (float64, time on axis
    0) written into ``q`` itself, ``block`` frames at a time: the same
    numbers without the whole clip's copy and products. Returns ``q``."""
    prev_q = prev_flip = None
    for a in range(0, len(q), block):
        q[a:a + block], prev_q, prev_flip = continue_signs(q[a:a + block], prev_q, prev_flip)
    return q


def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sum(np.asarray(a) * np.asarray(b), axis=-1)


def angle_between(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rotation angle (radians, 0..pi) taking ``a`` to ``b``."""
    d = np.clip(np.abs(dot(normalize(a), normalize(b))), 0.0, 1.0)
    return 2.0 * np.arccos(d)


# --- axis-angle ---------------------------------------------------------------


def from_axis_angle(axis_angle: np.ndarray) -> np.ndarray:
    """Rotation vectors ``[..., 3]`` (axis * angle in radians) to quaternions."""
    aa = np.asarray(axis_angle, dtype=np.float64)
    angle = np.sqrt((aa * aa).sum(-1, keepdims=True))
    half = 0.5 * angle
    # sin(x/2)/x -> 1/2 for small x; use the series to stay exact near zero.
    small = angle < 1e-8
    scale = np.where(small, 0.5 - angle**2 / 48.0, np.sin(half) / np.where(small, 1.0, angle))
    return np.concatenate([np.cos(half), aa * scale], axis=-1)


def to_axis_angle(q: np.ndarray) -> np.ndarray:
    """Quaternions to rotation vectors ``[..., 3]`` with angle in ``[0, pi]``."""
    q = canonical(normalize(q))
    v = q[..., 1:]
    s = np.sqrt((v * v).sum(-1, keepdims=True))
    angle = 2.0 * np.arctan2(s, q[..., :1])
    small = s < 1e-8
    scale = np.where(small, 2.0 / np.maximum(q[..., :1], _EPS), angle / np.where(small, 1.0, s))
    return v * scale


def from_axis_angle_pair(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Unit ``axis [..., 3]`` and ``angle [...]`` (radians) to quaternions."""
    axis = np.asarray(axis, dtype=np.float64)
    axis = axis / np.maximum(np.sqrt((axis * axis).sum(-1, keepdims=True)), _EPS)
    half = 0.5 * np.asarray(angle, dtype=np.float64)[..., None]
    return np.concatenate([np.cos(half), axis * np.sin(half)], axis=-1)


# --- matrices -----------------------------------------------------------------


def to_matrix(q: np.ndarray) -> np.ndarray:
    """Unit quaternions ``[..., 4]`` to rotation matrices ``[..., 3, 3]``."""
    q = normalize(q)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz = x * y, x * z, y * z
    wx, wy, wz = w * x, w * y, w * z
    m = np.stack(
        [
            1 - 2 * (yy + zz), 2 * (xy - wz), 2 * (xz + wy),
            2 * (xy + wz), 1 - 2 * (xx + zz), 2 * (yz - wx),
            2 * (xz - wy), 2 * (yz + wx), 1 - 2 * (xx + yy),
        ],
        axis=-1,
    )
    return m.reshape(q.shape[:-1] + (3, 3))


def from_matrix(m: np.ndarray) -> np.ndarray:
    """Rotation matrices ``[..., 3, 3]`` to unit quaternions (``w >= 0``).

    Non-orthonormal input (e.g. a bone matrix with scale) is orthonormalised
    first by SVD; use :func:`from_orthonormal_matrix` when the input is
    already a rotation (it skips the SVD).
    """
    m = np.asarray(m, dtype=np.float64)
    u, _, vt = np.linalg.svd(m)
    r = u @ vt
    det = np.linalg.det(r)
    if np.any(det < 0):
        u = u.copy()
        u[det < 0, :, -1] *= -1
        r = u @ vt
    return from_orthonormal_matrix(r)


def from_orthonormal_matrix(r: np.ndarray) -> np.ndarray:
    """Rotation matrices ``[..., 3, 3]`` that are already orthonormal to unit
    quaternions (``w >= 0``), using the numerically stable branch per element
    (largest diagonal term)."""
    r = np.asarray(r, dtype=np.float64)
    m00, m01, m02 = r[..., 0, 0], r[..., 0, 1], r[..., 0, 2]
    m10, m11, m12 = r[..., 1, 0], r[..., 1, 1], r[..., 1, 2]
    m20, m21, m22 = r[..., 2, 0], r[..., 2, 1], r[..., 2, 2]
    tr = m00 + m11 + m22
    cands = np.stack(
        [
            np.stack([1 + tr, m21 - m12, m02 - m20, m10 - m01], -1),
            np.stack([m21 - m12, 1 + m00 - m11 - m22, m01 + m10, m02 + m20], -1),
            np.stack([m02 - m20, m01 + m10, 1 - m00 + m11 - m22, m12 + m21], -1),
            np.stack([m10 - m01, m02 + m20, m12 + m21, 1 - m00 - m11 + m22], -1),
        ],
        -2,
    )
    choice = np.argmax(np.stack([tr, m00, m11, m22], -1), axis=-1)
    q = np.take_along_axis(cands, choice[..., None, None], axis=-2)[..., 0, :]
    return canonical(normalize(q))


# --- 6D (Zhou et al. 2019: the first two columns of the matrix) ----------------


def matrix_to_6d(m: np.ndarray) -> np.ndarray:
    """``[..., 3, 3]`` -> ``[..., 6]``: columns 0 and 1, concatenated."""
    m = np.asarray(m, dtype=np.float64)
    return np.concatenate([m[..., :, 0], m[..., :, 1]], axis=-1)


def matrix_from_6d(d6: np.ndarray) -> np.ndarray:
    """``[..., 6]`` -> ``[..., 3, 3]`` by Gram-Schmidt (works on raw network
    outputs that are not orthonormal)."""
    d6 = np.asarray(d6, dtype=np.float64)
    a, b = d6[..., :3], d6[..., 3:]
    x = a / np.maximum(np.sqrt((a * a).sum(-1, keepdims=True)), _EPS)
    b = b - (x * b).sum(-1, keepdims=True) * x
    y = b / np.maximum(np.sqrt((b * b).sum(-1, keepdims=True)), _EPS)
    z = cross(x, y)
    return np.stack([x, y, z], axis=-1)


def to_6d(q: np.ndarray) -> np.ndarray:
    return matrix_to_6d(to_matrix(q))


def from_6d(d6: np.ndarray) -> np.ndarray:
    """``[..., 6]`` -> unit quaternions ``[..., 4]`` (``w >= 0``). Gram-Schmidt
    already gives a rotation, so the SVD of :func:`from_matrix` is kept for
    the degenerate inputs only (a zero column, or two parallel ones)."""
    m = matrix_from_6d(d6)
    q = from_orthonormal_matrix(m)
    bad = ~(np.abs(np.linalg.det(m) - 1.0) < 1e-6)
    if np.any(bad):
        q[bad] = from_matrix(m[bad])
    return q


# --- Euler --------------------------------------------------------------------

_AXES = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0)}


def check_euler_order(order: str) -> str:
    """An Euler order (``"zxy"`` → ``"ZXY"``): three of X, Y, Z, no axis
    twice in a row; else ValueError."""
    order = order.upper()
    if len(order) != 3 or set(order) - set("XYZ") or order[0] == order[1] or order[1] == order[2]:
        raise ValueError(f"bad Euler order {order!r}: use three of X, Y, Z such as 'ZXY'")
    return order


def from_euler(angles: np.ndarray, order: str = "XYZ", intrinsic: bool = True) -> np.ndarray:
    """Euler angles ``[..., 3]`` (radians, in the order named) to quaternions.

    ``intrinsic=True`` (BVH, Maya): ``R = R_order[0] @ R_order[1] @ R_order[2]``.
    ``intrinsic=False`` (Blender's ``rotation_euler`` with mode ``order``):
    the first axis is applied first, ``R = R_order[2] @ R_order[1] @ R_order[0]``.
    """
    order = check_euler_order(order)
    angles = np.asarray(angles, dtype=np.float64)
    qs = [from_axis_angle_pair(np.broadcast_to(_AXES[a], angles.shape), angles[..., i]) for i, a in enumerate(order)]
    if intrinsic:
        return mul(mul(qs[0], qs[1]), qs[2])
    return mul(mul(qs[2], qs[1]), qs[0])


def to_euler(q: np.ndarray, order: str = "XYZ", intrinsic: bool = True) -> np.ndarray:
    """Quaternions to Euler angles ``[..., 3]`` (radians), inverse of
    :func:`from_euler` for the same order and convention. In gimbal lock the
    third angle is set to zero."""
    order = check_euler_order(order)
    if not intrinsic:
        # Extrinsic ABC == intrinsic CBA with the angles reversed.
        return to_euler(q, order[::-1], intrinsic=True)[..., ::-1]
    m = to_matrix(q)
    i, j, k = ("XYZ".index(order[0]), "XYZ".index(order[1]), "XYZ".index(order[2]))
    if i == k:
        raise ValueError("proper Euler orders (e.g. 'ZXZ') are not supported")
    # Parity of the permutation (i, j, k) decides the signs.
    sign = 1.0 if (j - i) % 3 == 1 else -1.0
    # For intrinsic i-j-k (Tait-Bryan): R[i,k] = sign * sin(b).
    sb = np.clip(sign * m[..., i, k], -1.0, 1.0)
    # cos(b) from the other entries of row i: arcsin(sb) loses half the digits
    # near +-90 degrees, and testing |sb| > 1 - tol would treat angles up to
    # sqrt(2 * tol) away from the lock as locked.
    cb = np.hypot(m[..., i, i], m[..., i, j])
    b = np.arctan2(sb, cb)
    # Below ~sqrt(machine eps), a and c are no longer separable from rounding
    # noise; the locked branch is then accurate to about cb.
    locked = cb < 1e-8
    a = np.arctan2(-sign * m[..., j, k], m[..., k, k])
    c = np.arctan2(-sign * m[..., i, j], m[..., i, i])
    # Gimbal lock: put the whole remaining rotation into the first angle.
    a_locked = np.arctan2(sign * m[..., k, j], m[..., j, j])
    a = np.where(locked, a_locked, a)
    c = np.where(locked, 0.0, c)
    return np.stack([a, b, c], axis=-1)


# --- interpolation ------------------------------------------------------------


def slerp(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Spherical interpolation from ``a`` to ``b`` at ``t`` in [0, 1] (broadcast
    over leading dims; ``t`` has shape ``[...]``). Takes the short way."""
    a = normalize(a)
    b = normalize(b)
    t = np.asarray(t, dtype=np.float64)[..., None]
    d = (a * b).sum(-1, keepdims=True)
    b = np.where(d < 0.0, -b, b)
    d = np.abs(d)
    theta = np.arccos(np.clip(d, -1.0, 1.0))
    s = np.sin(theta)
    near = s < 1e-6
    wa = np.where(near, 1.0 - t, np.sin((1.0 - t) * theta) / np.where(near, 1.0, s))
    wb = np.where(near, t, np.sin(t * theta) / np.where(near, 1.0, s))
    return normalize(wa * a + wb * b)


def matrix_between_vectors(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """:func:`between_vectors` as rotation matrices ``[..., 3, 3]``
    (Rodrigues' formula on the unit vectors: ``d I + [c]x + c c^T / (1 + d)``
    with ``c = u x v``, ``d = u . v``), without a quaternion in between."""
    u = np.asarray(u, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    u = u / np.maximum(np.sqrt((u * u).sum(-1, keepdims=True)), _EPS)
    v = v / np.maximum(np.sqrt((v * v).sum(-1, keepdims=True)), _EPS)
    d = (u * v).sum(-1, keepdims=True)
    c = cross(u, v)
    k = 1.0 / np.maximum(1.0 + d, _EPS)
    # Few whole-array products rather than nine entries: on the live
    # tracker's four limbs the calls, not the arithmetic, are the cost.
    m = (d * _IDENTITY_9 + c @ _SKEW).reshape(d.shape[:-1] + (3, 3)) + (k * c)[..., :, None] * c[..., None, :]
    opposite = d[..., 0] < -1.0 + 1e-9
    if opposite.any():
        # Opposite vectors: a half turn about an axis orthogonal to u.
        return np.where(opposite[..., None, None], to_matrix(between_vectors(u, v)), m)
    return m


def _skew_basis() -> np.ndarray:
    """``[3, 9]``: ``c @ _skew_basis()`` is the cross-product matrix ``[c]x`` (row-major)."""
    e = np.zeros((3, 3, 3))
    for i, j, k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
        e[k, i, j], e[k, j, i] = -1.0, 1.0
    return e.reshape(3, 9)


_SKEW = _skew_basis()
_IDENTITY_9 = np.eye(3).ravel()


def between_vectors(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Shortest-arc rotation taking direction ``u`` to ``v`` (``[..., 3]``)."""
    u = np.asarray(u, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    u = u / np.maximum(np.sqrt((u * u).sum(-1, keepdims=True)), _EPS)
    v = v / np.maximum(np.sqrt((v * v).sum(-1, keepdims=True)), _EPS)
    d = (u * v).sum(-1, keepdims=True)
    c = cross(u, v)
    q = np.concatenate([1.0 + d, c], axis=-1)
    # Opposite vectors: rotate pi about any axis orthogonal to u.
    opposite = d[..., 0] < -1.0 + 1e-9
    if opposite.any():
        alt = np.cross(u, np.array([1.0, 0.0, 0.0]))
        alt2 = np.cross(u, np.array([0.0, 1.0, 0.0]))
        use2 = np.sqrt((alt * alt).sum(-1, keepdims=True)) < 1e-6
        axis = np.where(use2, alt2, alt)
        axis = axis / np.maximum(np.sqrt((axis * axis).sum(-1, keepdims=True)), _EPS)
        q = np.where(opposite[..., None], np.concatenate([np.zeros_like(d), axis], -1), q)
    return normalize(q)
