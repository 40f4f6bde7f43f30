"""The gesture model's pose vector on the canonical SMPL-X skeleton.

Per frame (30 fps) a pose is ``[POSE_DIM]`` = 20 body joints × 6D rotation
(local, parent-relative; the pelvis with its slowly varying heading removed),
the pelvis offset (metres) from its 2-s moving average in the heading frame
(weight shifts), and 12 finger PCA coefficients (BEAT2 only; Bandai has no
fingers). Jaw and eyes belong to the face model; feet/toes stay at rest.

Rotations follow the SMPL-X convention read by ``smplx_motion``: identity rest,
Blender frame (metres, Z up, faces -Y, left = +X).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from ..filters import gaussian_filter1d

from .. import rotations
from ..motion import Motion
from ..smplx_motion import smplx_joint_names, smplx_rest_skeleton

BODY = ["pelvis", "left_hip", "right_hip", "spine1", "left_knee", "right_knee", "spine2", "left_ankle",
        "right_ankle", "spine3", "neck", "left_collar", "right_collar", "head", "left_shoulder",
        "right_shoulder", "left_elbow", "right_elbow", "left_wrist", "right_wrist"]
UPPER = ["spine1", "spine2", "spine3", "neck", "head", "left_collar", "right_collar", "left_shoulder",
         "right_shoulder", "left_elbow", "right_elbow", "left_wrist", "right_wrist"]
N_FINGER_PCA = 12
ROT_DIM = len(BODY) * 6
ROOT_SLICE = slice(ROT_DIM, ROT_DIM + 3)
FINGER_SLICE = slice(ROT_DIM + 3, ROT_DIM + 3 + N_FINGER_PCA)
POSE_DIM = ROT_DIM + 3 + N_FINGER_PCA
HEADING_SIGMA_S = 1.0
ROOT_SIGMA_S = 2.0


@lru_cache(maxsize=1)
def names() -> tuple:
    return tuple(smplx_joint_names())


def body_index() -> np.ndarray:
    n = names()
    return np.array([n.index(b) for b in BODY])


def finger_index() -> np.ndarray:
    return np.arange(25, 55)


def mirror_index() -> np.ndarray:
    """Permutation of the 55 SMPL-X joints that swaps left and right."""
    n = list(names())
    out = []
    for x in n:
        if x.startswith("left_"):
            out.append(n.index("right_" + x[5:]))
        elif x.startswith("right_"):
            out.append(n.index("left_" + x[6:]))
        else:
            out.append(n.index(x))
    return np.array(out)


def mirror_motion(rot: np.ndarray, root: np.ndarray):
    """Reflect a clip across the character's YZ plane (x → -x): swap sides and
    mirror each local rotation (w, x, y, z) → (w, x, -y, -z). Valid because
    every SMPL-X rest frame is the identity (world-aligned)."""
    m = rot[:, mirror_index()].copy()
    m[..., 2:] *= -1
    r = root.copy()
    r[:, 0] *= -1
    return m, r


def _yaw(q_pelvis: np.ndarray) -> np.ndarray:
    fwd = rotations.rotate(q_pelvis, np.array([0.0, -1.0, 0.0]))
    return np.unwrap(np.arctan2(fwd[:, 0], -fwd[:, 1]))  # 0 when facing -Y


def _yaw_quat(yaw: np.ndarray) -> np.ndarray:
    axis = np.broadcast_to(np.array([0.0, 0.0, 1.0]), (len(yaw), 3))
    return rotations.from_axis_angle_pair(axis, -yaw)


def encode(rot: np.ndarray, root: np.ndarray, fps: float, finger_basis=None, has_fingers: bool = True) -> np.ndarray:
    """``rot [T, 55, 4]`` local rotations, ``root [T, 3]`` pelvis positions → poses ``[T, POSE_DIM]``.

    Heading (yaw of the pelvis, smoothed over HEADING_SIGMA_S) and the slow
    root trajectory are removed: the model describes posture and sway, the
    character keeps facing forward where it is placed."""
    rot = rotations.make_continuous(rotations.normalize(rot), axis=0)
    T = len(rot)
    yaw = gaussian_filter1d(_yaw(rot[:, 0]), HEADING_SIGMA_S * fps, mode="nearest")
    qy = _yaw_quat(yaw)
    body = rot[:, body_index()].copy()
    body[:, 0] = rotations.mul(rotations.inv(qy), rot[:, 0])
    slow = gaussian_filter1d(root, ROOT_SIGMA_S * fps, axis=0, mode="nearest")
    off = rotations.rotate(rotations.inv(qy), root - slow)
    out = np.zeros((T, POSE_DIM), np.float32)
    out[:, :ROT_DIM] = rotations.to_6d(body).reshape(T, -1)
    out[:, ROOT_SLICE] = off
    if finger_basis is not None and has_fingers:
        aa = rotations.to_axis_angle(rot[:, finger_index()]).reshape(T, -1)
        out[:, FINGER_SLICE] = (aa - finger_basis["mean"]) @ finger_basis["components"].T
    return out


#: Frames :func:`decode` turns into rotations at once.
DECODE_BLOCK_FRAMES = 2048


def decode(poses: np.ndarray, fps: float, finger_basis=None, *, base_root=None) -> Motion:
    """Poses ``[T, POSE_DIM]`` → a :class:`Motion` on the (approximate) SMPL-X
    rest skeleton, facing -Y, pelvis over ``base_root`` (default the rest
    pelvis position) plus the modelled sway."""
    poses = np.asarray(poses, dtype=np.float64)
    T = len(poses)
    sk = smplx_rest_skeleton()
    rot = np.tile(np.array([1.0, 0, 0, 0]), (T, len(sk.names), 1))
    # A block of frames at a time: each frame decodes on its own, and the
    # SVD's [frames, joints, 3, 3] temporaries of a 30-minute take are GBs.
    for a in range(0, T, DECODE_BLOCK_FRAMES):
        b = min(a + DECODE_BLOCK_FRAMES, T)
        rot[a:b, body_index()] = rotations.from_6d(poses[a:b, :ROT_DIM].reshape(b - a, len(BODY), 6))
        if finger_basis is not None:
            aa = poses[a:b, FINGER_SLICE] @ finger_basis["components"] + finger_basis["mean"]
            rot[a:b, finger_index()] = rotations.from_axis_angle(aa.reshape(b - a, 30, 3))
    base = standing_root() if base_root is None else np.asarray(base_root, dtype=np.float64)
    root = base + poses[:, ROOT_SLICE]
    return Motion(sk, rotations.normalize(rot), root, fps=fps, name="RigMind gesture")


def standing_root() -> np.ndarray:
    """Pelvis position (metres) that puts the rest skeleton's feet on z = 0 at the origin."""
    pos = smplx_rest_skeleton().rest_positions()
    n = names()
    feet = [n.index(x) for x in ("left_foot", "right_foot", "left_ankle", "right_ankle")]
    return np.array([0.0, 0.0, pos[0, 2] - pos[feet, 2].min()])


def fit_finger_basis(aa_frames: np.ndarray, k: int = N_FINGER_PCA) -> dict:
    """PCA of finger axis-angles ``[N, 90]`` → ``{"mean" [90], "components" [k, 90]}``."""
    mean = aa_frames.mean(axis=0)
    _, s, vt = np.linalg.svd(aa_frames - mean, full_matrices=False)
    return {"mean": mean.astype(np.float64), "components": vt[:k].astype(np.float64),
            "explained": float((s[:k] ** 2).sum() / (s**2).sum())}
