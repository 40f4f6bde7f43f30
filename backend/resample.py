"""Change a clip's frame rate.

Frame-count rule: a clip of ``F`` frames at ``fps_src`` lasts
``D = (F - 1) / fps_src`` seconds (first to last frame). The output has
``N = floor(D * fps + 1e-6) + 1`` frames at ``t_k = k / fps`` seconds. When
``D * fps`` is a whole number (30 -> 60, 60 -> 30 with an odd frame count,
30 -> 24 with ``F - 1`` a multiple of 5, ...) the last output frame lands
exactly on the last source frame, so the duration is preserved exactly and
``N = D * fps + 1``; otherwise the output stops at the last whole output frame
before ``D`` (it is shorter by less than ``1 / fps``) rather than stretching
time. Output frames that fall on source frames reproduce them exactly, so
30 -> 60 -> 30 gives back the original clip.

Rotations are slerped (shortest way, per joint); root positions, per-joint
translations and shape-key weights are interpolated linearly.
"""

from __future__ import annotations

import numpy as np

from . import rotations
from .motion import Motion

_TIME_EPS = 1e-6  # in output frames: absorbs float error in D * fps


def num_frames_for(num_frames: int, fps_src: float, fps: float) -> int:
    """Output frame count for ``num_frames`` at ``fps_src`` resampled to ``fps``
    (see the module docstring)."""
    if num_frames <= 1:
        return num_frames
    duration = (num_frames - 1) / float(fps_src)
    return int(np.floor(duration * float(fps) + _TIME_EPS)) + 1


def sample_positions(num_frames: int, fps_src: float, fps: float):
    """For each output frame, the source frame ``i0 [N]`` (int) and blend
    weight ``alpha [N]`` in [0, 1] toward ``i0 + 1``; ``i0 + 1`` is always a
    valid index when ``num_frames >= 2``."""
    n = num_frames_for(num_frames, fps_src, fps)
    # Source frame position of each output frame, as a ratio of rates so that
    # e.g. 60 -> 30 gives exact even indices.
    s = np.arange(n, dtype=np.float64) * (float(fps_src) / float(fps))
    s = np.clip(s, 0.0, num_frames - 1)
    i0 = np.floor(s + 1e-9).astype(np.int64)
    i0 = np.clip(i0, 0, max(num_frames - 2, 0))
    alpha = np.clip(s - i0, 0.0, 1.0)
    alpha[np.abs(alpha) < 1e-9] = 0.0
    alpha[np.abs(alpha - 1.0) < 1e-9] = 1.0
    return i0, alpha


def _lerp(x: np.ndarray, i0: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    a = alpha.reshape((-1,) + (1,) * (x.ndim - 1))
    return (1.0 - a) * x[i0] + a * x[i0 + 1]


def resample(motion: Motion, fps: float) -> Motion:
    """``motion`` resampled to ``fps`` frames per second.

    Returns a new :class:`Motion` on the same skeleton with ``N`` frames (rule
    in the module docstring), rotations ``[N, J, 4]`` slerped and sign
    continuous in time, positions/translations (metres) and shape weights
    interpolated linearly. A single-frame clip is returned as is (copied)
    with the new fps.
    """
    fps = float(fps)
    if not (fps > 0 and np.isfinite(fps)):
        raise ValueError(f"fps must be positive, got {fps}")
    f = motion.num_frames
    if f <= 1 or fps == motion.fps:
        out = motion.slice(0, f)
        out.fps = fps
        return out
    i0, alpha = sample_positions(f, motion.fps, fps)
    q = rotations.slerp(motion.rotations[i0], motion.rotations[i0 + 1],
                        np.broadcast_to(alpha[:, None], (len(i0), motion.rotations.shape[1])))
    # slerp normalises; on-frame samples (alpha exactly 0 or 1) stay bitwise close to the source.
    on0 = alpha == 0.0
    on1 = alpha == 1.0
    q[on0] = motion.rotations[i0[on0]]
    q[on1] = motion.rotations[i0[on1] + 1]
    return Motion(
        motion.skeleton,
        rotations.make_continuous(q, axis=0),
        _lerp(motion.root_positions, i0, alpha),
        fps,
        None if motion.translations is None else _lerp(motion.translations, i0, alpha),
        list(motion.shape_names),
        None if motion.shape_weights is None else _lerp(motion.shape_weights, i0, alpha),
        motion.name,
    )


__all__ = ["resample", "num_frames_for", "sample_positions"]
