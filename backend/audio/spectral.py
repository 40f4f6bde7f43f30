"""NumPy-only spectral analysis for the speech features: STFT power, the mel
filterbank, dB conversion, onset strength and the YIN pitch tracker.

Each function computes what ``librosa`` computes for the same arguments
(``stft(center=True, pad_mode="constant", window="hann")``,
``filters.mel(htk=False, norm="slaney")``, ``power_to_db``,
``onset.onset_strength(S=...)``, ``yin(center=True)``; ``tests/backend/audio/test_spectral.py``
checks them against librosa), without importing librosa and numba, whose
import and JIT cache loads cost a command ~2 s, and with every frame of a
clip handled in a few vectorised calls.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import scipy.fft as fft  # pocketfft with float32 transforms: ~5-20x numpy.fft's on [frames, n] batches
from numpy.lib.stride_tricks import sliding_window_view


def frames(x: np.ndarray, length: int, hop: int) -> np.ndarray:
    """Centred frames of ``x``: zero-padded by ``length // 2`` on both sides,
    ``[1 + len(x) // hop, length]`` (a read-only view)."""
    xp = np.pad(np.asarray(x), (length // 2, length // 2))
    return sliding_window_view(xp, length)[::hop]


@lru_cache(maxsize=4)
def hann(n: int) -> np.ndarray:
    """Periodic Hann window (scipy's ``get_window('hann', n, fftbins=True)``)."""
    return (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)).astype(np.float32)


def stft_power(x: np.ndarray, n_fft: int, hop: int) -> np.ndarray:
    """``|STFT|^2`` with a periodic Hann window, centred frames: ``[T, n_fft // 2 + 1]``."""
    spec = fft.rfft(frames(np.asarray(x, dtype=np.float32), n_fft, hop) * hann(n_fft), axis=1)
    return spec.real ** 2 + spec.imag ** 2


def _hz_to_mel(f):
    f = np.asarray(f, dtype=np.float64)
    f_sp, min_log_hz, logstep = 200.0 / 3, 1000.0, np.log(6.4) / 27.0
    mel = f / f_sp
    return np.where(f >= min_log_hz, min_log_hz / f_sp + np.log(np.maximum(f, 1e-12) / min_log_hz) / logstep, mel)


def _mel_to_hz(m):
    m = np.asarray(m, dtype=np.float64)
    f_sp, min_log_hz, logstep = 200.0 / 3, 1000.0, np.log(6.4) / 27.0
    min_log_mel = min_log_hz / f_sp
    return np.where(m >= min_log_mel, min_log_hz * np.exp(logstep * (m - min_log_mel)), f_sp * m)


@lru_cache(maxsize=4)
def mel_filterbank(sr: int, n_fft: int, n_mels: int, fmin: float, fmax: float) -> np.ndarray:
    """Slaney-style mel filterbank (area-normalised triangles), ``[n_mels, n_fft // 2 + 1]`` float32."""
    fft_f = np.fft.rfftfreq(n_fft, 1.0 / sr)
    mel_f = _mel_to_hz(np.linspace(_hz_to_mel(fmin), _hz_to_mel(fmax), n_mels + 2))
    fdiff = np.diff(mel_f)
    ramps = np.subtract.outer(mel_f, fft_f)
    lower = -ramps[:n_mels] / fdiff[:n_mels, None]
    upper = ramps[2:n_mels + 2] / fdiff[1:n_mels + 1, None]
    w = np.maximum(0.0, np.minimum(lower, upper))
    w *= (2.0 / (mel_f[2:n_mels + 2] - mel_f[:n_mels]))[:, None]
    return w.astype(np.float32)


def power_to_db(s: np.ndarray, ref: float = 1.0, amin: float = 1e-10, top_db: float | None = None) -> np.ndarray:
    """``10 log10(max(s, amin) / max(ref, amin))``, floored at ``max - top_db`` when given."""
    db = 10.0 * np.log10(np.maximum(amin, s)) - 10.0 * np.log10(max(amin, ref))
    if top_db is not None:
        db = np.maximum(db, db.max() - top_db)
    return db


def spectral_flux(mel_db: np.ndarray) -> np.ndarray:
    """``[T - 1]``: the mean over bands of the positive first difference of ``mel_db [T, bands]`` (dB)."""
    return np.maximum(0.0, mel_db[1:] - mel_db[:-1]).mean(axis=1)


def onset_strength(mel_db: np.ndarray, *, centre_pad: int) -> np.ndarray:
    """Spectral flux of ``mel_db [T, bands]`` (dB, :func:`spectral_flux`),
    delayed by ``1 + centre_pad`` frames with zeros in front (librosa's
    ``center=True``: ``n_fft // (2 hop)`` with its default n_fft 2048), ``[T]``."""
    flux = spectral_flux(mel_db)
    return np.concatenate([np.zeros(1 + centre_pad, flux.dtype), flux])[: len(mel_db)]


def yin(x: np.ndarray, *, fmin: float, fmax: float, sr: int, frame_length: int, hop: int,
        trough_threshold: float = 0.1) -> np.ndarray:
    """YIN fundamental frequency (Hz) per centred frame, ``[1 + len(x) // hop]``
    (de Cheveigné and Kawahara 2002: cumulative-mean-normalised difference
    function, the first trough under ``trough_threshold`` else the global
    minimum, parabolic refinement)."""
    fr = frames(np.asarray(x, dtype=np.float32), frame_length, hop)  # [T, L]
    min_p = int(np.floor(sr / fmax))
    max_p = min(int(np.ceil(sr / fmin)), frame_length - 1)
    # Lags up to max_p only: a transform of L + max_p + 1 points is enough for
    # the linear (not circular) autocorrelation there.
    n_pad = fft.next_fast_len(frame_length + max_p + 1, real=True)
    spec = fft.rfft(fr, n=n_pad, axis=1)
    acf = fft.irfft(spec.real ** 2 + spec.imag ** 2, n=n_pad, axis=1)[:, : max_p + 1]
    energy = np.cumsum(np.square(fr[:, :max_p]), axis=1, dtype=np.float32)  # float32, as librosa
    d = np.empty((len(fr), max_p + 1), np.float32)
    d[:, 0] = 0
    d[:, 1:] = 2 * (acf[:, :1] - acf[:, 1:]) - energy
    cm = np.cumsum(d[:, 1:], axis=1) / np.arange(1, max_p + 1, dtype=np.float32)
    num = d[:, min_p: max_p + 1]
    den = cm[:, min_p - 1: max_p]
    y = num / (den + np.finfo(den.dtype).tiny)  # [T, P]

    a = y[:, 2:] + y[:, :-2] - 2 * y[:, 1:-1]
    b = (y[:, 2:] - y[:, :-2]) / 2
    shift = np.zeros_like(y)
    with np.errstate(divide="ignore", invalid="ignore"):
        shift[:, 1:-1] = np.where(np.abs(b) >= np.abs(a), 0.0, -b / a)

    trough = np.zeros(y.shape, bool)
    trough[:, 1:-1] = (y[:, 1:-1] < y[:, :-2]) & (y[:, 1:-1] <= y[:, 2:])
    trough[:, -1] = y[:, -1] < y[:, -2]
    trough[:, 0] = y[:, 0] < y[:, 1]
    below = trough & (y < trough_threshold)
    period = np.argmax(below, axis=1)
    none = ~below.any(axis=1)
    period[none] = np.argmin(y[none], axis=1)
    rows = np.arange(len(y))
    return sr / (min_p + period + shift[rows, period])
