"""Model inputs from trackers and model targets from canonical motions.

The *heading frame* of frame ``t`` has its origin at the floor projection of
the head, ``(head_x, head_y, 0)``, and is turned about +Z by the head's yaw
(the yaw that takes -Y, the rest facing, to the head's floor-projected
forward axis). Everything the model sees or says is in it, so a walk is the
same walk in any direction and anywhere.

Inputs (causal): for each lag ``k`` in :data:`LAGS` (frames at 30 fps, the
current frame first), the three tracker positions, their velocities (m/s)
and their rotations (6D), all in the heading frame of frame ``t``:
``[F, len(LAGS) * 36]``. Positions are divided by the subject scale (1 for
the canonical skeleton) before they get here.

Targets: the hips' position (heading frame) and world rotation relative to
the heading (6D), the local rotations (6D) of every joint below the hips,
and left/right foot contacts: ``[F, 3 + 6 + 6 * (J - 2) + 2]``.
Metres, seconds, radians; Blender Z up.
"""

from __future__ import annotations

import numpy as np

from .. import rotations
from ..locomotion.features import foot_contacts, yaw_from_facing, yaw_quat
from ..motion import Motion
from .canonical import TRACKED

#: Frame lags (30 fps) of the input window: about one second of the past,
#: dense near the present (velocities and the head's bob carry the step phase).
LAGS = (0, 1, 2, 3, 4, 6, 8, 10, 13, 16, 20, 25, 30)
#: A window that also reads two thirds of a second of the future (negative
#: lags: whether the head is about to travel or stop), for offline-only
#: models (``rigmind train track --future``). Tried: no better than the
#: causal window on the validation clips or CMU 131 (docs/tracking_model.md),
#: so the committed model does not use it.
FUTURE_LAGS = (-20, -16, -13, -10, -8, -6, -4, -3, -2, -1) + LAGS
PER_FRAME = 36
#: The head bone's own forward axis (canonical Bandai Head: +Z points where
#: the face looks, +X up; measured on standing and walking clips).
HEAD_FORWARD = np.array([0.0, 0.0, 1.0])
HEAD_UP = np.array([1.0, 0.0, 0.0])
CONTACT_JOINTS = ("Foot_L", "Toes_L", "Foot_R", "Toes_R")


def heading_yaw(head_rot: np.ndarray) -> np.ndarray:
    """Yaw ``[F]`` (radians) of the head's floor-projected forward axis from
    its world rotations ``[F, 4]``; when the head looks straight up or down the
    up axis (tipped forward/back) stands in, and a degenerate frame keeps the
    previous frame's yaw."""
    fwd = rotations.rotate(head_rot, np.broadcast_to(HEAD_FORWARD, head_rot.shape[:-1] + (3,)))
    u = rotations.rotate(head_rot, np.broadcast_to(HEAD_UP, head_rot.shape[:-1] + (3,)))[..., :2]
    f, tilt = fwd[..., :2], fwd[..., 2:3]
    # Looking down tips the up axis forward; looking up tips it back.
    d = f - np.sign(tilt) * u * np.clip(np.abs(tilt) - 0.7, 0.0, None) * 3.0
    n = np.linalg.norm(d, axis=-1)
    ok = n > 1e-4
    yaw = yaw_from_facing(np.where(ok[..., None], d, [0.0, -1.0]))
    if not ok.all() and ok.any():
        idx = np.maximum.accumulate(np.where(ok, np.arange(len(ok)), 0))
        yaw = yaw[idx]
    return yaw


def heading(pos: np.ndarray, rot: np.ndarray) -> tuple:
    """``(origin [F, 3], inverse heading quaternion [F, 4])`` of tracker
    ``pos [F, 3, 3]`` and ``rot [F, 3, 4]``."""
    yaw = heading_yaw(rot[:, 0])
    origin = np.concatenate([pos[:, 0, :2], np.zeros((len(pos), 1))], axis=1)
    return origin, rotations.inv(yaw_quat(yaw))


def window_inputs(pos: np.ndarray, rot: np.ndarray, fps: float = 30.0, frames=None, lags=LAGS) -> np.ndarray:
    """Inputs ``[N, len(lags) * 36]`` (float32) for ``frames`` (default all)
    of trackers ``pos [F, 3, 3]`` (scaled metres), ``rot [F, 3, 4]`` at
    ``fps``; frames before the first repeat the first (a take starts at rest),
    frames after the last (negative lags) repeat the last."""
    frames = np.arange(len(pos)) if frames is None else np.asarray(frames)
    origin, hinv = heading(pos, rot)  # all frames: a degenerate one takes the yaw before it
    origin, hinv = origin[frames], hinv[frames]
    vel = np.zeros_like(pos)
    vel[1:] = (pos[1:] - pos[:-1]) * fps
    src = np.clip(frames[:, None] - np.asarray(lags)[None], 0, len(pos) - 1)  # [N, L]
    # The heading as a matrix: one product per part instead of quaternion
    # algebra (LiveTracker._window builds the same row from matrices it keeps).
    h = rotations.to_matrix(hinv)[:, None]  # [N, 1, 3, 3]
    ht = np.swapaxes(h, -1, -2)
    p = (pos[src] - origin[:, None, None]) @ ht  # [N, L, 3, 3]
    v = vel[src] @ ht
    q = rotations.matrix_to_6d(h[:, :, None] @ rotations.to_matrix(rot[src]))  # [N, L, 3, 6]
    x = np.concatenate([p, v, q], axis=-1)  # [N, L, 3, 12]
    return x.reshape(len(frames), -1).astype(np.float32)


def tracker_arrays(motion: Motion) -> tuple:
    """``(pos [F, 3, 3], rot [F, 3, 4])`` of a canonical motion's tracked bones."""
    wr, wp = motion.world()
    idx = [motion.skeleton.index(n) for n in TRACKED]
    return wp[:, idx], wr[:, idx]


def contacts_of(world_pos: np.ndarray, names, fps: float) -> np.ndarray:
    """Left/right foot contacts ``[F, 2]`` (0/1): the ankle's or the toe's."""
    c = foot_contacts(world_pos, names, fps, joints=CONTACT_JOINTS)
    return np.stack([np.maximum(c[:, 0], c[:, 1]), np.maximum(c[:, 2], c[:, 3])], axis=1)


def targets(motion: Motion) -> np.ndarray:
    """Targets ``[F, 9 + 6 (J - 2) + 2]`` (float32) of a canonical motion."""
    wr, wp = motion.world()
    idx = [motion.skeleton.index(n) for n in TRACKED]
    origin, hinv = heading(wp[:, idx], wr[:, idx])
    hips = motion.skeleton.index("Hips")
    hip_pos = rotations.rotate(hinv, wp[:, hips] - origin)
    hip_rot = rotations.to_6d(rotations.mul(hinv, wr[:, hips]))
    local = rotations.to_6d(motion.rotations[:, hips + 1:]).reshape(len(wp), -1)
    c = contacts_of(wp, motion.skeleton.names, motion.fps)
    return np.concatenate([hip_pos, hip_rot, local, c], axis=1).astype(np.float32)


def split_targets(y: np.ndarray, num_joints: int) -> dict:
    """Named parts of target/output rows ``[N, D]``."""
    n_local = 6 * (num_joints - 2)
    return {"hip_pos": y[:, :3], "hip_rot": y[:, 3:9], "local": y[:, 9:9 + n_local].reshape(len(y), -1, 6),
            "contacts": y[:, 9 + n_local:9 + n_local + 2]}
