"""Rhythm and energy controls shared by motion (training) and speech (inference).

The gesture model is conditioned on two signals that can be measured on ANY
real motion, paired with audio or not, so the 62 minutes of unpaired mocap
teach it how to move *to* a rhythm and *at* an energy:

- ``beat pulses [T]``: Gaussian bumps (σ = 1.5 frames) at motion beats (local
  minima of upper-body speed while the body is moving — the moments a stroke
  lands; the same definition the BC metric uses). At inference they sit at
  the speech's strongest onsets.
- ``energy [T]``: log of the smoothed mean wrist speed (m/s). At inference it
  comes from loudness and onset rate through a linear map fitted on the
  paired takes, shifted by the user's "amount".
"""

from __future__ import annotations

import numpy as np
from ..filters import gaussian_filter1d

PULSE_SIGMA = 1.5          # frames
ENERGY_SIGMA_S = 0.5       # seconds of smoothing for the energy envelope
ENERGY_FLOOR = 0.02        # m/s, keeps log finite for a still body
BEAT_MIN_SPEED = 0.15      # m/s: a speed minimum counts as a beat only inside motion this fast
BEAT_MIN_GAP_S = 0.25      # strongest onsets at least this far apart
WRISTS = ("left_wrist", "right_wrist")


def _joint_idx(names_list):
    from .representation import names

    n = names()
    return [n.index(x) for x in names_list]


def upper_body_speed(positions: np.ndarray, fps: float) -> np.ndarray:
    """Mean speed (m/s) of the upper-body joints, ``positions [T, 55 or 22, 3]`` → ``[T]``."""
    from .representation import UPPER

    idx = _joint_idx(UPPER)
    v = np.gradient(positions[:, idx], axis=0) * fps
    return np.linalg.norm(v, axis=-1).mean(axis=1)


def extrema_mask(x: np.ndarray, comparator, order: int = 1) -> np.ndarray:
    """``[n, ...]`` bool: where ``comparator(x[i], x[i ± k])`` holds for k =
    1..order along the first axis of ``x [n, ...]``, neighbours clipped at
    the ends (``scipy.signal.argrelextrema``'s test, without importing
    scipy.signal, ~1 s)."""
    x = np.asarray(x)
    n = len(x)
    idx = np.arange(n)
    keep = np.ones(x.shape, bool)
    for k in range(1, order + 1):
        keep &= comparator(x, x[np.minimum(idx + k, n - 1)])
        keep &= comparator(x, x[np.maximum(idx - k, 0)])
    return keep


def relative_extrema(x: np.ndarray, comparator, order: int = 1) -> np.ndarray:
    """Indices ``i`` of ``x [n]`` where :func:`extrema_mask` holds:
    ``scipy.signal.argrelextrema(x, comparator, order=order)[0]``."""
    return np.nonzero(extrema_mask(x, comparator, order))[0]


def motion_beat_frames(positions: np.ndarray, fps: float) -> np.ndarray:
    """Frames of local minima of upper-body speed (order 2) where the speed
    around them (±0.2 s max) exceeds BEAT_MIN_SPEED."""
    s = gaussian_filter1d(upper_body_speed(positions, fps), 1.0)
    mins = relative_extrema(s, np.less, order=2)
    w = int(0.2 * fps)
    keep = [m for m in mins if s[max(m - w, 0): m + w + 1].max() > BEAT_MIN_SPEED]
    return np.asarray(keep, dtype=int)


def motion_energy(positions: np.ndarray, fps: float) -> np.ndarray:
    """log(smoothed mean wrist speed in m/s + floor) ``[T]``."""
    idx = _joint_idx(WRISTS)
    v = np.linalg.norm(np.gradient(positions[:, idx], axis=0) * fps, axis=-1).mean(axis=1)
    return np.log(gaussian_filter1d(v, ENERGY_SIGMA_S * fps) + ENERGY_FLOOR).astype(np.float32)


def pulses(frames, n: int) -> np.ndarray:
    """Sum of unit Gaussian bumps (σ = PULSE_SIGMA frames) at ``frames``, clipped to 1."""
    out = np.zeros(n, np.float32)
    frames = np.asarray(frames, dtype=int)
    frames = frames[(frames >= 0) & (frames < n)]
    out[frames] = 1.0
    out = gaussian_filter1d(out, PULSE_SIGMA) * (PULSE_SIGMA * np.sqrt(2 * np.pi))
    return np.clip(out, 0, 1)


def beat_timing(frames, n: int, fps: float, horizon: float = 1.0) -> np.ndarray:
    """``[n, 2]``: seconds since the previous beat and until the next one,
    clipped to ``horizon`` (the whole rhythm, not only the beat frames)."""
    t = np.arange(n)
    frames = np.sort(np.asarray(frames, dtype=int))
    since = np.full(n, horizon, np.float32)
    until = np.full(n, horizon, np.float32)
    if len(frames):
        i = np.searchsorted(frames, t, side="right")
        has_prev = i > 0
        since[has_prev] = np.minimum((t[has_prev] - frames[i[has_prev] - 1]) / fps, horizon)
        j = np.searchsorted(frames, t, side="left")
        has_next = j < len(frames)
        until[has_next] = np.minimum((frames[j[has_next]] - t[has_next]) / fps, horizon)
    return np.stack([since, until], axis=1)


def audio_envelope_features(feats) -> np.ndarray:
    """Slow speech descriptors ``[T, 4]`` that predict gesture energy:
    smoothed loudness (dBFS/20), onset rate, voice activity, pitch variability."""
    fps = feats.fps
    sm = lambda x: gaussian_filter1d(np.asarray(x, np.float64), ENERGY_SIGMA_S * fps)  # noqa: E731
    loud = sm(np.where(feats.speech, feats.energy, -60.0)) / 20.0
    rate = sm(np.log1p(feats.onset))
    act = sm(feats.speech.astype(np.float64))
    pv = sm(np.abs(np.gradient(feats.pitch)))
    return np.stack([loud, rate, act, pv], axis=1).astype(np.float32)


def fit_energy_map(audio_feats: list, energies: list) -> dict:
    """Least-squares ``energy ≈ [env, 1] @ w`` over the paired takes; also the
    motion-beat rate (beats/s) the onset selection should match."""
    X = np.concatenate([np.c_[a, np.ones(len(a))] for a in audio_feats])
    y = np.concatenate(energies)
    w, *_ = np.linalg.lstsq(X, y, rcond=None)
    pred = X @ w
    r = float(np.corrcoef(pred, y)[0, 1]) if np.std(pred) > 0 else 0.0
    return {"weights": w.astype(np.float64), "residual_std": float(np.std(y - pred)), "r": r,
            "rest_energy": float(np.percentile(y, 5))}


def select_onsets(onset: np.ndarray, speech: np.ndarray, fps: float, rate: float, rng) -> np.ndarray:
    """Pick beat frames from the onset envelope: peaks during speech, strongest
    first with a minimum gap, about ``rate`` per second of speech; the seed
    jitters the choice among near-equal peaks."""
    o = np.asarray(onset, np.float64) * speech
    peaks = relative_extrema(np.r_[0, o, 0], np.greater) - 1
    peaks = peaks[o[peaks] > 0]
    if len(peaks) == 0:
        return np.zeros(0, int)
    score = o[peaks] * rng.uniform(0.8, 1.2, len(peaks))
    budget = int(round(rate * speech.sum() / fps))
    gap = BEAT_MIN_GAP_S * fps
    chosen = []
    for i in np.argsort(-score):
        if len(chosen) >= budget:
            break
        if all(abs(peaks[i] - c) >= gap for c in chosen):
            chosen.append(peaks[i])
    return np.sort(np.asarray(chosen, dtype=int))


def audio_controls(feats, energy_map: dict, beat_rate: float, amount: float, rng):
    """Speech features → ``(pulses [T], energy [T], speech [T], timing [T, 2])`` for the model.

    ``amount`` 0..1 (0.5 = as the training speaker) shifts the energy by
    up to ±0.9 in log speed (×0.4 … ×2.5 wrist speed) and scales the beat rate."""
    env = audio_envelope_features(feats)
    e = np.c_[env, np.ones(len(env))] @ energy_map["weights"]
    shift = (float(amount) - 0.5) * 1.8
    speech = feats.speech.astype(np.float32)
    # Outside speech the body calms towards the speaker's resting energy.
    act = gaussian_filter1d(speech, ENERGY_SIGMA_S * feats.fps)
    e = act * (e + shift) + (1 - act) * (energy_map["rest_energy"] + min(shift, 0))
    beats = select_onsets(feats.onset, feats.speech, feats.fps, beat_rate * (0.6 + 0.8 * amount), rng)
    return pulses(beats, len(e)), e.astype(np.float32), speech, beat_timing(beats, len(e), feats.fps)
