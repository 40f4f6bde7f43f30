"""What a gesture style looks like, as numbers: posture, amplitude, speed,
sharpness and hand places of SMPL-X motion (the style layer learns from
them, the style classifier reads them).

Inputs are local rotations ``rot [T, 55, 4]`` and pelvis positions
``root [T, 3]`` (m, Blender Z up) on the SMPL-X rest skeleton at ``fps``.
Left and right are pooled (a right-hand wave and a left-hand wave are one
style): a right joint's rotation vector is mirrored ``(x, -y, -z)`` and
averaged with the left one's.
"""

from __future__ import annotations

import numpy as np

from .. import rotations
from ..filters import gaussian_filter1d
from .representation import names

#: Joints whose mean rotation is the posture (left/right pooled).
POSTURE = ("spine1", "spine2", "spine3", "neck", "head", ("left_collar", "right_collar"),
           ("left_shoulder", "right_shoulder"), ("left_elbow", "right_elbow"))
#: Joints whose motion around the slow pose is the amplitude.
MOVING = ("spine1", "spine2", "spine3", "neck", "head", "left_collar", "right_collar", "left_shoulder",
          "right_shoulder", "left_elbow", "right_elbow", "left_wrist", "right_wrist")
#: Seconds of the slow pose the amplitude is measured around.
SLOW_SECONDS = 0.5
#: Seconds: motion faster than this counts as "sharp" (the high band)...
SHARP_SECONDS = 0.1
#: ... down to this (Gaussian σ, one frame at 30 fps) where the style layer
#: boosts it (:func:`fast_band`): frame-to-frame jitter and the generator's
#: window-join residue are not a stroke's sharpness, and boosting them
#: raised the seam measure (1.17 → 1.22 for angry on tuning speech).
JITTER_SECONDS = 1.0 / 30.0
WINDOW_SECONDS = 2.0
HOP_SECONDS = 0.5


def _ix(n):
    return names().index(n)


def rotvecs(rot: np.ndarray) -> np.ndarray:
    """``rot [T, 55, 4]`` → pooled posture rotation vectors ``[T, len(POSTURE), 3]`` (radians)."""
    rot = rotations.make_continuous(rotations.normalize(rot), axis=0)
    out = []
    for j in POSTURE:
        if isinstance(j, tuple):
            left = rotations.to_axis_angle(rot[:, _ix(j[0])])
            right = rotations.to_axis_angle(rot[:, _ix(j[1])]) * np.array([1.0, -1.0, -1.0])
            out.append(0.5 * (left + right))
        else:
            out.append(rotations.to_axis_angle(rot[:, _ix(j)]))
    return np.stack(out, axis=1)


def slow_pose(q: np.ndarray, fps: float, seconds: float = SLOW_SECONDS) -> np.ndarray:
    """Quaternions ``[T, J, 4]`` smoothed over ``seconds`` (Gaussian σ), renormalised."""
    q = rotations.make_continuous(rotations.normalize(q), axis=0)
    return rotations.normalize(gaussian_filter1d(q, seconds * fps, axis=0, mode="nearest"))


def deviation(q: np.ndarray, fps: float, seconds: float = SLOW_SECONDS):
    """``(slow [T, J, 4], d [T, J, 3])``: the slow pose and each frame's
    rotation from it as a rotation vector (``q = slow ⊗ exp(d)``)."""
    q = rotations.make_continuous(rotations.normalize(q), axis=0)
    s = slow_pose(q, fps, seconds)
    return s, rotations.to_axis_angle(rotations.mul(rotations.inv(s), q))


def fast_band(d: np.ndarray, fps: float) -> np.ndarray:
    """The sharp band ``[T, ...]`` of a signal ``d [T, ...]`` along time: the
    part between :data:`JITTER_SECONDS` and :data:`SHARP_SECONDS` (band-pass)."""
    return (gaussian_filter1d(d, JITTER_SECONDS * fps, axis=0, mode="nearest")
            - gaussian_filter1d(d, SHARP_SECONDS * fps, axis=0, mode="nearest"))


def moving_index() -> np.ndarray:
    return np.array([_ix(n) for n in MOVING])


def band_energies(rot: np.ndarray, fps: float) -> tuple:
    """``(amplitude, sharp)`` per frame ``[T]``: the RMS over :data:`MOVING`
    of the deviation from the slow pose (radians), and of its part faster
    than :data:`SHARP_SECONDS` (radians; jitter included: it is what the
    clips have)."""
    _, d = deviation(rot[:, moving_index()], fps)
    hi = d - gaussian_filter1d(d, SHARP_SECONDS * fps, axis=0, mode="nearest")
    return np.sqrt((d ** 2).sum(-1).mean(-1)), np.sqrt((hi ** 2).sum(-1).mean(-1))


def hand_places(pos: np.ndarray) -> np.ndarray:
    """World positions ``[T, 55, 3]`` → per frame ``[T, 2, 3]``: per wrist
    (left, right) its height above the shoulders' mean height, its forward
    distance in front of the pelvis along the hips' facing and its lateral
    distance out from the pelvis (m; outwards positive on both sides)."""
    from .gesture_space import body_frame

    n = list(names())
    hf, fwd, _ = body_frame(pos, n)
    left = np.cross(np.array([0.0, 0.0, 1.0]), fwd)   # the body's left (+X when facing -Y)
    w = pos[:, [_ix("left_wrist"), _ix("right_wrist")]] - pos[:, None, _ix("pelvis")]
    lat = np.sum(w * left[:, None], axis=-1) * np.array([1.0, -1.0])
    return np.concatenate([hf, lat[..., None]], axis=-1)


def wrist_speed(pos: np.ndarray, fps: float) -> np.ndarray:
    """``[T-1, 2]`` wrist speeds (m/s), left and right."""
    w = pos[:, [_ix("left_wrist"), _ix("right_wrist")]]
    return np.linalg.norm(np.diff(w, axis=0), axis=-1) * fps


FEATURE_NAMES = (
    [f"posture_{(j if isinstance(j, str) else j[0][5:])}_{a}" for j in POSTURE for a in "xyz"]
    + ["log_amplitude", "log_sharp_ratio", "log_wrist_speed", "log_wrist_speed_p90", "log_accel_ratio",
       "hand_height", "hand_height_std", "hand_forward", "hand_lateral", "trunk_amplitude_share"]
)


def frame_arrays(rot: np.ndarray, root: np.ndarray, fps: float) -> dict:
    """Per-frame quantities the window features summarise."""
    from .dataset import positions

    pos = positions(rot, root)
    amp, sharp = band_energies(rot, fps)
    _, d = deviation(rot[:, [_ix(n) for n in MOVING[:5]]], fps)
    trunk = np.sqrt((d ** 2).sum(-1).mean(-1))
    sp = wrist_speed(pos, fps)
    sp = np.concatenate([sp[:1], sp])
    acc = np.linalg.norm(np.diff(pos[:, [_ix("left_wrist"), _ix("right_wrist")]], 2, axis=0), axis=-1) * fps * fps
    acc = np.concatenate([acc[:1], acc, acc[-1:]])
    return {"posture": rotvecs(rot), "amp": amp, "sharp": sharp, "trunk": trunk, "speed": sp.max(axis=1),
            "acc": acc.max(axis=1), "hands": hand_places(pos)}


def summarise(a: dict, sl=slice(None)) -> np.ndarray:
    """The features (:data:`FEATURE_NAMES`) of frames ``sl`` of :func:`frame_arrays`."""
    eps = 1e-4
    amp = np.sqrt(np.mean(a["amp"][sl] ** 2))
    sharp = np.sqrt(np.mean(a["sharp"][sl] ** 2))
    sp, acc, h = a["speed"][sl], a["acc"][sl], a["hands"][sl]
    trunk = np.sqrt(np.mean(a["trunk"][sl] ** 2))
    return np.concatenate([
        a["posture"][sl].mean(axis=0).reshape(-1),
        [np.log(amp + eps), np.log((sharp + eps) / (amp + eps)), np.log(np.mean(sp) + 1e-3),
         np.log(np.percentile(sp, 90) + 1e-3), np.log((np.mean(acc) + 1e-2) / (np.mean(sp) + 1e-3)),
         np.mean(h[..., 0]), np.std(h[..., 0]), np.mean(h[..., 1]), np.mean(h[..., 2]), trunk / (amp + eps)],
    ])


def window_features(rot: np.ndarray, root: np.ndarray, fps: float) -> np.ndarray:
    """Features ``[N, F]`` of windows of :data:`WINDOW_SECONDS` every
    :data:`HOP_SECONDS` (a clip shorter than a window: one window, all of it)."""
    a = frame_arrays(rot, root, fps)
    T, W, H = len(rot), int(WINDOW_SECONDS * fps), int(HOP_SECONDS * fps)
    if T <= W:
        return summarise(a)[None]
    return np.stack([summarise(a, slice(s, s + W)) for s in range(0, T - W + 1, H)])


__all__ = ["FEATURE_NAMES", "POSTURE", "MOVING", "band_energies", "deviation", "frame_arrays", "hand_places",
           "rotvecs", "slow_pose", "summarise", "window_features", "wrist_speed"]
