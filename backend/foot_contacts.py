"""Foot contacts: when a foot joint is planted, read from its height above its
own floor and its horizontal speed, with hysteresis so contacts do not
flicker. One detector (:func:`detect_contacts`) serves retargeting
(:func:`~.retarget.foot_contacts`), the locomotion features
(:func:`~.locomotion.features.foot_contacts`) and the cleanup's stance
contacts (:func:`~.locomotion.cleanup.stance_contacts`); each caller's
thresholds are a :class:`ContactConfig`.

Units: metres, seconds; Blender Z up. Positions ``[F, K, 3]`` (frames,
joints), masks ``[F, K]`` or ``[F]`` bool.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ContactConfig:
    """How a joint counts as planted.

    ``floor_percentile``: the joint's floor is this percentile (0-100) of its
    height over the clip (a low percentile: robust to a glitch). A joint
    enters contact below ``height`` above its floor and slower than
    ``speed`` horizontally; ``per_leg`` makes both fractions of the leg
    length (``leg`` metres, per second for the speed) instead of metres and
    m/s. It stays in contact until its speed exceeds ``release`` x the speed
    threshold or its height ``release_height`` x the height threshold.

    ``both_ways``: False runs the hysteresis forward in time (a contact
    starts at the frame that enters it; the first frame, undecided, starts
    in contact), True takes each whole run of the release band (below both
    release thresholds) that holds at least one entering frame (a foot is
    planted from the moment it is slow enough to stay, as seen backward
    too). Then gaps of at most ``max_gap`` frames between contacts are
    filled and contacts shorter than ``min_run`` frames dropped (0: none)."""

    floor_percentile: float = 1.0
    height: float = 0.04
    speed: float = 0.3
    per_leg: bool = False
    release: float = 1.5
    release_height: float = 1.5
    both_ways: bool = False
    max_gap: int = 0
    min_run: int = 0


def runs(mask):
    """Start and end (exclusive) indices of the True runs of a 1-D mask."""
    m = np.concatenate([[False], np.asarray(mask, bool), [False]])
    d = np.diff(m.astype(np.int8))
    return np.nonzero(d == 1)[0], np.nonzero(d == -1)[0]


def mask_of_runs(spans, frames: int) -> np.ndarray:
    """``[frames]`` bool, True inside each ``(start, stop, ...)`` of ``spans``
    (stop exclusive): the inverse of :func:`runs`."""
    mask = np.zeros(frames, dtype=bool)
    for s, e, *_ in spans:
        mask[s:e] = True
    return mask


def close_gaps(mask, max_gap: int, min_run: int) -> np.ndarray:
    """Boolean ``mask [F]`` (or ``[F, K]``, column by column) with gaps of
    at most ``max_gap`` frames between runs filled (a contact that flickers
    off for a frame is one contact), then runs shorter than ``min_run``
    frames dropped (too short to be a footstep)."""
    mask = np.asarray(mask, bool).copy()
    if mask.ndim == 2:
        return np.stack([close_gaps(mask[:, k], max_gap, min_run) for k in range(mask.shape[1])], axis=1)
    s, e = runs(~mask)
    for a, b in zip(s, e):  # loops over runs, not frames
        if a > 0 and b < len(mask) and b - a <= max_gap:
            mask[a:b] = True
    s, e = runs(mask)
    for a, b in zip(s, e):
        if b - a < min_run:
            mask[a:b] = False
    return mask


def hysteresis(on: np.ndarray, off: np.ndarray, initial: np.ndarray) -> np.ndarray:
    """Boolean state ``[F, K]``: becomes True where ``on``, False where ``off``
    (``on`` wins when both), else keeps the previous frame's state; frame 0
    without either takes ``initial [K]``. Vectorised by carrying forward the
    index of the last frame where a condition fired."""
    f = on.shape[0]
    decided = on | off
    idx = np.where(decided, np.arange(f)[:, None], -1)
    last = np.maximum.accumulate(idx, axis=0)
    val = np.take_along_axis(on, np.maximum(last, 0), axis=0)
    return np.where(last >= 0, val, initial[None, :])


def runs_holding(on: np.ndarray, hold: np.ndarray) -> np.ndarray:
    """Frames ``[F, K]`` of the runs of ``hold | on`` that contain an ``on``
    frame: the forward :func:`hysteresis` (set by ``on``, cleared outside
    ``hold``) keeps each such run from its first ``on`` frame, the same run
    backward in time up to its last, and together they cover it whole."""
    off = ~(hold | on)
    start = np.zeros(on.shape[1], bool)
    fwd = hysteresis(on, off, start)
    bwd = hysteresis(on[::-1], off[::-1], start)[::-1]
    return fwd | bwd


def floor_heights(z: np.ndarray, percentile: float = 1.0) -> np.ndarray:
    """Each joint's floor ``[K]`` (m): its ``percentile`` height in ``z [F, K]``
    over the clip (a low one, robust to a glitch)."""
    return np.percentile(z, percentile, axis=0)


def heights_above_floor(z: np.ndarray, percentile: float) -> np.ndarray:
    """Heights ``z [F, K]`` above each joint's floor (:func:`floor_heights`)."""
    return z - floor_heights(z, percentile)[None]


def detect_contacts(pos: np.ndarray, fps: float, cfg: ContactConfig = ContactConfig(), leg: float = 1.0) -> np.ndarray:
    """Planted mask ``[F, K]`` (bool) of joints at ``pos [F, K, 3]`` (metres,
    Z up) sampled at ``fps``; ``leg``: the leg length (m) for a ``per_leg``
    config. See :class:`ContactConfig`."""
    h = heights_above_floor(pos[..., 2], cfg.floor_percentile)
    v = np.linalg.norm(np.gradient(pos[..., :2], axis=0), axis=-1) * fps if len(pos) > 1 else np.zeros_like(h)
    scale = leg if cfg.per_leg else 1.0
    height, speed = cfg.height * scale, cfg.speed * scale
    out_height, out_speed = cfg.release_height * cfg.height * scale, cfg.release * cfg.speed * scale
    on = (h < height) & (v < speed)
    if cfg.both_ways:
        c = runs_holding(on, (h < out_height) & (v < out_speed))
    else:
        off = (h > out_height) | (v > out_speed)
        c = hysteresis(on, off & ~on, on[0] | ~off[0])
    if cfg.max_gap or cfg.min_run:
        c = close_gaps(c, cfg.max_gap, cfg.min_run)
    return c
