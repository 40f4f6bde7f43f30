"""The one place where Y-up data meets Blender's Z-up frame.

Blender's frame is right-handed, Z up, characters face -Y. Most mocap formats
(BVH, FBX defaults, SMPL, glTF) are right-handed, Y up, characters face +Z.
The mapping used everywhere in RigMind is the one of Blender's own BVH
importer with ``axis_forward='-Z', axis_up='Y'``::

    Y-up (x, y, z)  ->  Blender (x, -z, y)

i.e. a rotation of +90 degrees about X (:data:`YUP_TO_BLENDER`). Y-up +Y (up)
becomes Blender +Z, Y-up +Z (the character's forward) becomes Blender -Y.

Positions and offsets are rotated; rotations (quaternions ``w, x, y, z`` or
matrices) are conjugated by the basis rotation, ``q_b = B * q_y * B^-1``, so
that forward kinematics commutes with the change of axes: every joint's local
rotation and translation is re-expressed, and a BVH skeleton's identity rest
rotations stay identity. Lengths are never scaled here.
"""

from __future__ import annotations

import numpy as np

from .motion import Motion
from .skeleton import Skeleton

_H = np.sqrt(0.5)

#: Quaternion ``(w, x, y, z)`` taking Y-up coordinates to Blender (+90 deg about X).
YUP_TO_BLENDER = np.array([_H, _H, 0.0, 0.0])
#: Quaternion taking Blender coordinates to Y-up (-90 deg about X).
BLENDER_TO_YUP = np.array([_H, -_H, 0.0, 0.0])

#: Matrix form: ``p_blender = YUP_TO_BLENDER_MATRIX @ p_yup``.
YUP_TO_BLENDER_MATRIX = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])
BLENDER_TO_YUP_MATRIX = YUP_TO_BLENDER_MATRIX.T.copy()


def _check_up(up: str) -> str:
    u = str(up).upper()
    if u not in ("Y", "Z"):
        raise ValueError(f"up axis must be 'Y' or 'Z', got {up!r}")
    return u


# --- positions ------------------------------------------------------------------


def positions_yup_to_blender(p: np.ndarray) -> np.ndarray:
    """Points or vectors ``[..., 3]`` from Y-up ``(x, y, z)`` to Blender ``(x, -z, y)``."""
    p = np.asarray(p, dtype=np.float64)
    return np.stack([p[..., 0], -p[..., 2], p[..., 1]], axis=-1)


def positions_blender_to_yup(p: np.ndarray) -> np.ndarray:
    """Points or vectors ``[..., 3]`` from Blender ``(x, y, z)`` to Y-up ``(x, z, -y)``."""
    p = np.asarray(p, dtype=np.float64)
    return np.stack([p[..., 0], p[..., 2], -p[..., 1]], axis=-1)


# --- rotations ------------------------------------------------------------------


def quats_yup_to_blender(q: np.ndarray) -> np.ndarray:
    """Quaternions ``[..., 4]`` (w, x, y, z) expressed in Y-up axes to the same
    physical rotations in Blender axes: ``B * q * B^-1``.

    Conjugation by a rotation only rotates the vector part, so this is exact
    and keeps the sign (hemisphere) of ``q``.
    """
    q = np.asarray(q, dtype=np.float64)
    return np.concatenate([q[..., :1], positions_yup_to_blender(q[..., 1:])], axis=-1)


def quats_blender_to_yup(q: np.ndarray) -> np.ndarray:
    """Inverse of :func:`quats_yup_to_blender`."""
    q = np.asarray(q, dtype=np.float64)
    return np.concatenate([q[..., :1], positions_blender_to_yup(q[..., 1:])], axis=-1)


def matrices_yup_to_blender(m: np.ndarray) -> np.ndarray:
    """Rotation (or any linear) matrices ``[..., 3, 3]`` acting on column
    vectors, re-expressed in Blender axes: ``B @ m @ B^T``."""
    m = np.asarray(m, dtype=np.float64)
    return YUP_TO_BLENDER_MATRIX @ m @ BLENDER_TO_YUP_MATRIX


def matrices_blender_to_yup(m: np.ndarray) -> np.ndarray:
    """Inverse of :func:`matrices_yup_to_blender`."""
    m = np.asarray(m, dtype=np.float64)
    return BLENDER_TO_YUP_MATRIX @ m @ YUP_TO_BLENDER_MATRIX


# --- skeletons and motions ------------------------------------------------------


def _skeleton_map(sk: Skeleton, fp, fq) -> Skeleton:
    return Skeleton(list(sk.names), sk.parents.copy(), fp(sk.offsets), fq(sk.rest_rotations), fp(sk.tails), dict(sk.meta))


def _motion_map(m: Motion, sk: Skeleton, fp, fq) -> Motion:
    return Motion(
        sk,
        fq(m.rotations),
        fp(m.root_positions),
        m.fps,
        None if m.translations is None else fp(m.translations),
        list(m.shape_names),
        None if m.shape_weights is None else m.shape_weights.copy(),
        m.name,
    )


def skeleton_yup_to_blender(sk: Skeleton) -> Skeleton:
    """A Y-up skeleton (offsets/tails ``[J, 3]`` in metres or any unit, rest
    rotations ``[J, 4]``) re-expressed in Blender's Z-up axes. Rest world
    positions become ``positions_yup_to_blender`` of the old ones; ``meta`` is
    copied unchanged."""
    return _skeleton_map(sk, positions_yup_to_blender, quats_yup_to_blender)


def skeleton_blender_to_yup(sk: Skeleton) -> Skeleton:
    """Inverse of :func:`skeleton_yup_to_blender`."""
    return _skeleton_map(sk, positions_blender_to_yup, quats_blender_to_yup)


def motion_yup_to_blender(m: Motion) -> Motion:
    """A whole clip (skeleton, local rotations ``[F, J, 4]``, root positions
    ``[F, 3]``, optional translations ``[F, J, 3]``) from Y-up to Blender axes.
    World positions of the result are ``positions_yup_to_blender`` of the
    input's; fps, shape keys and name are kept."""
    return _motion_map(m, skeleton_yup_to_blender(m.skeleton), positions_yup_to_blender, quats_yup_to_blender)


def motion_blender_to_yup(m: Motion) -> Motion:
    """Inverse of :func:`motion_yup_to_blender`."""
    return _motion_map(m, skeleton_blender_to_yup(m.skeleton), positions_blender_to_yup, quats_blender_to_yup)


def to_blender(obj, up: str = "Y"):
    """Convert a :class:`Motion`, :class:`Skeleton` or positions ``[..., 3]``
    whose up axis is ``up`` ("Y" or "Z") to Blender axes; "Z" is a no-op
    (positions are returned as a float array, objects unchanged)."""
    return _convert(obj, up, motion_yup_to_blender, skeleton_yup_to_blender, positions_yup_to_blender)


def from_blender(obj, up: str = "Y"):
    """Inverse of :func:`to_blender`: Blender axes to ``up`` ("Y" or "Z")."""
    return _convert(obj, up, motion_blender_to_yup, skeleton_blender_to_yup, positions_blender_to_yup)


def _convert(obj, up: str, of_motion, of_skeleton, of_positions):
    """Dispatch ``obj`` on its type to the Y-up conversion; a no-op for Z-up."""
    if _check_up(up) == "Z":
        return obj if isinstance(obj, (Motion, Skeleton)) else np.asarray(obj, dtype=np.float64)
    if isinstance(obj, Motion):
        return of_motion(obj)
    if isinstance(obj, Skeleton):
        return of_skeleton(obj)
    return of_positions(obj)


__all__ = [
    "YUP_TO_BLENDER",
    "BLENDER_TO_YUP",
    "YUP_TO_BLENDER_MATRIX",
    "BLENDER_TO_YUP_MATRIX",
    "positions_yup_to_blender",
    "positions_blender_to_yup",
    "quats_yup_to_blender",
    "quats_blender_to_yup",
    "matrices_yup_to_blender",
    "matrices_blender_to_yup",
    "skeleton_yup_to_blender",
    "skeleton_blender_to_yup",
    "motion_yup_to_blender",
    "motion_blender_to_yup",
    "to_blender",
    "from_blender",
]
