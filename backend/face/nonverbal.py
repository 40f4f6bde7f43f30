"""The face around the mouth: blinks, brows, squint and a smile control.

Blinks follow published statistics for conversation: about 15–20 per minute
at rest (fewer while speaking), Poisson timing with a refractory period,
100–250 ms long with a fast close and a slower opening, ~10 % doubles, and
extra blinks at phrase ends. The eyes' gaze comes from :mod:`.gaze`. Brows rise on pitch accents and emphasis;
squint follows emphasis and the smile. Everything is seeded.
"""

from __future__ import annotations

import numpy as np

from ...presets import arkit52_names
from .gaze import arkit_eye_look, gaze_angles

BLINKS_PER_MIN_REST = 18.0
BLINKS_PER_MIN_SPEAKING = 13.0
REFRACTORY_S = 0.8
DOUBLE_P = 0.1
PHRASE_END_P = 0.5


def _col():
    return {n: i for i, n in enumerate(arkit52_names())}


def blink_times(seconds: float, rng: np.random.Generator, speech: np.ndarray | None = None,
                fps: float = 30.0) -> list:
    """``[(start_s, duration_s)]`` of blinks over ``seconds``."""
    out, t = [], rng.uniform(0.2, 2.0)
    ends = []
    if speech is not None and len(speech):
        s = np.asarray(speech, bool)
        ends = list((np.flatnonzero(s[:-1] & ~s[1:]) + 1) / fps)
    while t < seconds:
        out.append(t)
        if rng.random() < DOUBLE_P:
            out.append(t + rng.uniform(0.25, 0.4))
        k = min(int(t * fps), len(speech) - 1) if speech is not None and len(speech) else 0
        rate = BLINKS_PER_MIN_SPEAKING if (speech is not None and len(speech) and speech[k]) else BLINKS_PER_MIN_REST
        t = out[-1] + REFRACTORY_S + rng.exponential(60.0 / rate - REFRACTORY_S)
    for e in ends:   # phrase boundaries invite a blink, unless one is close
        if rng.random() < PHRASE_END_P and all(abs(e - b) > REFRACTORY_S for b in out):
            out.append(e + rng.uniform(0.0, 0.15))
    out = sorted(b for b in out if b < seconds)
    return [(b, float(rng.uniform(0.1, 0.25))) for b in out]


def blink_curve(blinks: list, n_frames: int, fps: float) -> np.ndarray:
    """Eyelid closure ``[F]`` 0..1: close in 35 % of the blink, open in 65 %."""
    t = np.arange(n_frames) / fps
    out = np.zeros(n_frames, np.float32)
    for start, dur in blinks:
        close = 0.35 * dur
        u = t - start
        up = np.clip(u / close, 0, 1)
        down = np.clip(1 - (u - close) / (dur - close), 0, 1)
        shape = np.where(u < close, np.sin(0.5 * np.pi * up), down ** 1.5)
        shape[(u < 0) | (u > dur)] = 0
        out = np.maximum(out, shape.astype(np.float32))
    return out


def smooth_attack_release(x: np.ndarray, fps: float, attack_s: float, release_s: float) -> np.ndarray:
    """``x [F]`` followed by a one-pole filter that rises with time constant
    ``attack_s`` and falls with ``release_s`` (seconds), at ``fps``."""
    a, r = 1 - np.exp(-1 / (attack_s * fps)), 1 - np.exp(-1 / (release_s * fps))
    y, out = 0.0, np.empty(len(x), np.float32)
    for i, v in enumerate(x):    # one pass over F frames; cheap
        y += (a if v > y else r) * (v - y)
        out[i] = y
    return out


def prominence(pitch: np.ndarray, energy: np.ndarray, onset: np.ndarray, voiced: np.ndarray,
               speech: np.ndarray) -> np.ndarray:
    """Per-frame emphasis 0..1 from pitch accents (z-scored pitch above +0.7),
    loud syllables (energy above the speech median) and onsets."""
    pitch, energy, onset = (np.asarray(a, np.float32) for a in (pitch, energy, onset))
    sp = np.asarray(speech, bool)
    if not sp.any():
        return np.zeros(len(pitch), np.float32)
    med = float(np.median(energy[sp]))
    acc = np.clip((pitch - 0.7) / 1.5, 0, 1) * np.asarray(voiced, np.float32)
    loud = np.clip((energy - med - 2.0) / 8.0, 0, 1)
    ons = np.clip((np.log1p(onset) - 1.0) / 1.5, 0, 1)
    return (np.clip(0.6 * acc + 0.3 * loud + 0.2 * ons, 0, 1) * sp).astype(np.float32)


def nonverbal_curves(n_frames: int, fps: float, *, pitch, energy, onset, voiced, speech, seed: int = 0,
                     smile: float = 0.0) -> np.ndarray:
    """ARKit weights ``[F, 52]`` for eyes, brows, cheeks and the smile (mouth
    shapes other than the smile stay 0). ``smile`` 0..1."""
    rng = np.random.default_rng(seed)
    c = _col()
    out = np.zeros((n_frames, 52), np.float32)
    blink = blink_curve(blink_times(n_frames / fps, rng, speech, fps), n_frames, fps)
    out[:, c["eyeBlinkLeft"]] = out[:, c["eyeBlinkRight"]] = blink
    p = prominence(pitch, energy, onset, voiced, speech)
    brow = smooth_attack_release(p, fps, 0.08, 0.35)
    out[:, c["browInnerUp"]] = 0.45 * brow
    out[:, c["browOuterUpLeft"]] = out[:, c["browOuterUpRight"]] = 0.35 * brow
    # A lowered brow on low, loud stretches reads as concentration.
    low = np.clip(-np.asarray(pitch, np.float32) - 1.0, 0, 1) * np.asarray(voiced, np.float32)
    out[:, c["browDownLeft"]] = out[:, c["browDownRight"]] = 0.2 * smooth_attack_release(low, fps, 0.1, 0.4)
    squint = 0.15 * smooth_attack_release(p, fps, 0.1, 0.5) + 0.35 * smile
    out[:, c["eyeSquintLeft"]] = out[:, c["eyeSquintRight"]] = squint
    out[:, c["cheekSquintLeft"]] = out[:, c["cheekSquintRight"]] = 0.4 * smile
    out[:, c["mouthSmileLeft"]] = out[:, c["mouthSmileRight"]] = 0.6 * smile
    # The eyes look: fixations and saccades (see gaze.py), the same for the
    # same seed as the eye bones Generate Gesture keys.
    for name, w in arkit_eye_look(gaze_angles(n_frames, fps, seed)).items():
        out[:, c[name]] = w
    return np.clip(out, 0, 1)
