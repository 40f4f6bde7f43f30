"""Viseme timeline → ARKit-52 curves with co-articulation.

Cohen–Massaro-style blending: every viseme segment has a target vector (its
row of ``visemes.target_matrix()``) and a dominance that is flat over the
segment's visual window and decays outside it (slower before it than after,
so lips anticipate; rounded sounds anticipate longest). Each channel is the
dominance-weighted mean of all targets, so low-dominance consonants (t, k, n)
inherit the shape of neighbouring vowels while p/b/m and f/v impose theirs.
On top of the blend two hard rules: the lips seal at every p/b/m, and the
jaw follows loudness.
"""

from __future__ import annotations

import numpy as np

from .visemes import dominance_matrix, mouth_channels, target_matrix, timing, viseme_index

JAW_MAX_RADIANS = 0.35       # jaw-bone rotation at jawOpen = 1 (~20 degrees)
_SHAPE_POWER = 2.0           # dominance exp(-(d/tau)^p): Gaussian-like shoulders
_SEAL_MIN_S = 0.06           # the lips stay sealed at least this long per p/b/m (covers 2 frames at 30 fps)


def segments_from_labels(labels: np.ndarray, fps: float) -> list:
    """Per-frame viseme indices ``[T]`` at ``fps`` → ``[(start_s, end_s, index)]`` runs."""
    labels = np.asarray(labels)
    if len(labels) == 0:
        return []
    cut = np.flatnonzero(np.diff(labels)) + 1
    starts = np.concatenate([[0], cut])
    ends = np.concatenate([cut, [len(labels)]])
    return [(s / fps, e / fps, int(labels[s])) for s, e in zip(starts, ends)]


def loudness_gain(energy_db: np.ndarray) -> np.ndarray:
    """Jaw gain ``[F]`` from frame energy (dBFS of loudness-normalised audio,
    speech sits near -20): 1 at normal level, up to 1.3 when loud, down to
    0.4 when quiet — louder speech opens the jaw wider."""
    e = np.asarray(energy_db, np.float32)
    return np.clip(1.0 + (e + 22.0) / 30.0, 0.4, 1.3).astype(np.float32)


def curves_from_segments(segments: list, n_frames: int, fps: float, *, gain: np.ndarray | None = None,
                         gate: np.ndarray | None = None, strength: float = 1.0) -> np.ndarray:
    """``segments [(start_s, end_s, viseme)]`` (viseme as name or class index)
    → ARKit weights ``[n_frames, 52]`` float32 in 0..1 at ``fps``.

    ``gain [F]`` scales jaw opening (see ``loudness_gain``); ``gate [F]`` (0..1,
    e.g. voice activity) multiplies every mouth channel so that nothing moves
    in silence; ``strength`` scales all mouth motion."""
    T, D = target_matrix(), dominance_matrix()
    idx = viseme_index()
    tm = timing()
    lead, ant, car = tm["lead_s"], tm["anticipation_s"], tm["carryover_s"]
    rounded = {idx[v] for v in tm["rounded"]}
    pp = idx["PP"]
    t = np.arange(n_frames, dtype=np.float64) / fps
    num = np.zeros((n_frames, 52), np.float64)
    den = np.full((n_frames, 52), 1e-6, np.float64)
    seal = np.zeros(n_frames, np.float64)
    for start, end, v in segments:
        v = idx[v] if isinstance(v, str) else int(v)
        a, b = start - lead, end - lead
        tau_a = tm["rounded_anticipation_s"] if v in rounded else ant
        reach_a, reach_b = a - 3 * tau_a, b + 3 * car
        f0 = max(int(np.floor(reach_a * fps)), 0)
        f1 = min(int(np.ceil(reach_b * fps)) + 1, n_frames)
        if f1 <= f0:
            continue
        tt = t[f0:f1]
        before = np.maximum(a - tt, 0.0) / tau_a
        after = np.maximum(tt - b, 0.0) / car
        dom = np.exp(-(before ** _SHAPE_POWER) - (after ** _SHAPE_POWER))
        w = dom[:, None] * D[v][None, :]
        num[f0:f1] += w * T[v][None, :]
        den[f0:f1] += w
        if v == pp:
            # Hard closure over the phone itself (at least _SEAL_MIN_S, centred).
            c, half = 0.5 * (start + end), max(0.5 * (end - start), 0.5 * _SEAL_MIN_S)
            d = np.maximum(np.abs(tt - c) - half, 0.0) / 0.025
            seal[f0:f1] = np.maximum(seal[f0:f1], np.exp(-d ** 2))
    out = (num / den).astype(np.float32)
    jaw = out[:, _col("jawOpen")].copy()
    if gain is not None:
        jaw = jaw * np.asarray(gain, np.float32)[:n_frames]
    # Seal: jaw shut at the bilabial, and mouthClose takes up whatever opening
    # is left so the lips meet even on a rig whose jaw cannot fully close.
    left = jaw * (1.0 - seal)
    out[:, _col("jawOpen")] = left
    mc = _col("mouthClose")
    out[:, mc] = np.maximum(out[:, mc], seal * np.maximum(0.12, np.minimum(left, 0.3)))
    out[:, _mouth()] *= strength
    if gate is not None:
        out[:, _mouth()] *= np.clip(np.asarray(gate, np.float32)[:n_frames, None], 0.0, 1.0)
    return np.clip(out, 0.0, 1.0)


def speech_gate(speech: np.ndarray, fps: float, ramp_s: float = 0.05) -> np.ndarray:
    """Voice activity ``[F]`` bool → gate 0..1 that is exactly 0 outside speech
    and ramps up over ``ramp_s`` inside it (no pop at speech onsets)."""
    s = np.asarray(speech, bool)
    n = len(s)
    if n == 0:
        return np.zeros(0, np.float32)
    # distance (frames) to the nearest non-speech frame
    from ..filters import distance_to_zero_1d

    dist = distance_to_zero_1d(np.pad(s, 1))[1:-1]
    r = max(ramp_s * fps, 1e-6)
    return np.clip(dist / r, 0.0, 1.0).astype(np.float32) * s


def jaw_rotation(weights: np.ndarray) -> np.ndarray:
    """Jaw-bone opening angle ``[F]`` radians from the jawOpen column of ``[F, 52]``."""
    return (np.asarray(weights)[:, _col("jawOpen")] * JAW_MAX_RADIANS).astype(np.float32)


_COLS: dict = {}


def _col(name: str) -> int:
    if not _COLS:
        from ...presets import arkit52_names

        _COLS.update({n: i for i, n in enumerate(arkit52_names())})
    return _COLS[name]


def _mouth() -> list:
    return mouth_channels()
