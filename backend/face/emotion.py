"""Emotion on the face: per-emotion ARKit expression targets
(``presets/face_emotions.json``, designed from FACS prototypes) blended over
the lip-synced face so that the mouth still speaks.

The blend, per frame, with emotion weights ``w [F, 6]`` (``backend.options.EMOTIONS``):

- the expression ``e = clip(variation · Σ w_k · target_k)``, where the
  variation follows speech stress and a slow seeded drift (a face that is
  not frozen);
- the neutral face's own conflicting channels are damped (an angry face's
  brows do not jump up on pitch accents; a sad smile is a smaller smile:
  ``suppress``);
- each channel ends as ``1 − (1 − base)(1 − e)`` (a screen blend: never
  below either, never above 1);
- the lip sync keeps the lips: jawOpen and mouthClose are never touched,
  lip-opening shapes (mouthUpperUp, mouthStretch …) fade out where the lips
  seal for p/b/m, lip-pressing ones where the jaw opens; eyeWide gives way
  to each blink so that the lids still close.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ...presets import arkit52_names, load_preset
from ..options import EMOTIONS
from ..emotion.timeline import EmotionError
from .nonverbal import smooth_attack_release

#: mouthClose at which the lips count as sealed (the seal sets 0.12 and more; the
#: closure metric counts 0.1).
SEAL_CLOSE = 0.1
#: jawOpen at which lip-pressing shapes have fully given way.
OPEN_JAW = 0.3


@dataclass(frozen=True)
class EmotionTables:
    """``targets [6, 52]`` and ``suppress [6, 52]`` (0..1) in the order of
    ``EMOTIONS`` and the ARKit 52; ``openers`` / ``closers``: column indices
    of the lip-opening / lip-pressing shapes; ``variation``: its settings."""

    targets: np.ndarray
    suppress: np.ndarray
    openers: tuple
    closers: tuple
    variation: dict


def _expand(channels: dict) -> dict:
    """``{"mouthSmile": v}`` → ``{"mouthSmileLeft": v, "mouthSmileRight": v}``."""
    names = set(arkit52_names())
    out = {}
    for k, v in channels.items():
        sided = [f"{k}Left", f"{k}Right"]
        if k in names:
            out[k] = float(v)
        elif all(s in names for s in sided):
            out.update(dict.fromkeys(sided, float(v)))
        else:
            raise ValueError(f"presets/face_emotions.json: {k!r} is not an ARKit blendshape")
    return out


@lru_cache(maxsize=1)
def tables() -> EmotionTables:
    """The emotion preset as arrays (read once)."""
    data = load_preset("face_emotions")
    col = {n: i for i, n in enumerate(arkit52_names())}
    targets = np.zeros((len(EMOTIONS), 52), np.float32)
    suppress = np.zeros((len(EMOTIONS), 52), np.float32)
    for j, name in enumerate(EMOTIONS):
        entry = data["emotions"][name]
        for k, v in _expand(entry["targets"]).items():
            if k in ("jawOpen", "mouthClose"):
                raise ValueError("presets/face_emotions.json: jawOpen and mouthClose belong to the lip sync")
            targets[j, col[k]] = v
        for k, v in _expand(entry.get("suppress", {})).items():
            suppress[j, col[k]] = v
    for a in (targets, suppress):
        a.setflags(write=False)

    def cols(key):
        return tuple(col[k] for k in _expand(dict.fromkeys(data[key], 0.0)))

    return EmotionTables(targets, suppress, cols("lip_openers"), cols("lip_closers"), dict(data["variation"]))


def _drift(n: int, fps: float, hz: float, seed: int) -> np.ndarray:
    """Smooth seeded noise ``[n]`` in about -1..1: random knots every
    ``1 / hz`` s, cosine-interpolated."""
    rng = np.random.default_rng([int(seed) & 0xFFFFFFFF, 29])
    step = max(fps / max(hz, 1e-3), 1.0)
    knots = rng.uniform(-1.0, 1.0, int(n / step) + 2)
    u = np.arange(n) / step
    i = np.floor(u).astype(int)
    f = 0.5 - 0.5 * np.cos(np.pi * (u - i))
    return (knots[i] * (1 - f) + knots[i + 1] * f).astype(np.float32)


def blend_emotion(weights: np.ndarray, emotion_weights: np.ndarray, fps: float, *, stress: np.ndarray | None = None,
                  seed: int = 0) -> np.ndarray:
    """The face ``weights [F, 52]`` (ARKit 0..1, lip sync and non-verbal
    layer) with the emotions ``emotion_weights [F, 6]`` (0..1, order of
    ``EMOTIONS``) blended in → a new ``[F, 52]`` float32. ``stress [F]``
    (0..1, speech emphasis) and ``seed`` vary the expression over time.
    All-zero emotion weights return ``weights`` unchanged."""
    base = np.asarray(weights, np.float32)
    w = np.clip(np.asarray(emotion_weights, np.float32), 0.0, 1.0)
    n = len(base)
    if w.shape != (n, len(EMOTIONS)):
        raise ValueError(f"emotion weights must be [{n}, {len(EMOTIONS)}], got {list(w.shape)}")
    if not np.any(w > 0):
        return base.copy()
    tab = tables()
    col = {c: i for i, c in enumerate(arkit52_names())}
    var_cfg = tab.variation
    s = np.zeros(n, np.float32) if stress is None else np.clip(np.asarray(stress, np.float32), 0, 1)
    s = smooth_attack_release(s, fps, var_cfg["stress_attack_s"], var_cfg["stress_release_s"])
    variation = (var_cfg["base"] + var_cfg["stress_gain"] * s
                 + var_cfg["drift"] * _drift(n, fps, var_cfg["drift_hz"], seed))
    expr = np.clip((w @ tab.targets) * variation[:, None], 0.0, 1.0)
    keep = np.prod(1.0 - w[:, :, None] * tab.suppress[None, :, :], axis=1)

    # The lips belong to the lip sync: openers give way where the lips seal,
    # pressers where the jaw opens; the lids close on every blink.
    sealed = np.clip(base[:, col["mouthClose"]] / SEAL_CLOSE, 0.0, 1.0)
    opened = np.clip(base[:, col["jawOpen"]] / OPEN_JAW, 0.0, 1.0)
    expr[:, list(tab.openers)] *= (1.0 - sealed)[:, None]
    expr[:, list(tab.closers)] *= (1.0 - opened)[:, None]
    for side in ("Left", "Right"):
        expr[:, col[f"eyeWide{side}"]] *= 1.0 - base[:, col[f"eyeBlink{side}"]]

    damped = base * keep
    out = 1.0 - (1.0 - damped) * (1.0 - expr)
    for name in ("jawOpen", "mouthClose"):
        out[:, col[name]] = base[:, col[name]]
    return np.clip(out, 0.0, 1.0).astype(np.float32)


def emotion_weights_for(timeline, n_frames: int, fps: float, audio_seconds: float):
    """``timeline`` (an ``EmotionTimeline`` or None) → weights ``[n_frames, 6]``
    at ``fps``, or None when it is neutral. A timed emotion that starts
    after the audio ends is a one-line ``EmotionError``; one that ends after
    it is clipped."""
    if timeline is None or timeline.is_neutral:
        return None
    for e in timeline.entries:
        if e.timed and e.start >= audio_seconds:
            raise EmotionError(f"--emotion {e.text()} starts at {e.start:g} s, after the audio ends "
                               f"({audio_seconds:.2f} s long); start it before {audio_seconds:.2f} s")
    return timeline.weights(n_frames, fps)


__all__ = ["EmotionTables", "blend_emotion", "emotion_weights_for", "tables"]
