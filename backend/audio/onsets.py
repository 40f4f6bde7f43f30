"""Speech onsets as times: librosa's ``onset.onset_detect`` in NumPy.

The gesture's beats are scored against the onsets EMAGE's beat consistency
uses (``librosa.onset.onset_detect(y, sr=16000, hop_length=512)``), so the
product finds its speech onsets the same way, without librosa at run time:
a 128-band Slaney mel power spectrogram (2048-sample Hann frames every 512
samples, centred, zero-padded), its dB spectral flux
(:func:`.spectral.onset_strength`), normalised to 0..1 and peak-picked with
librosa's defaults for that hop (a frame is an onset when it is at least
its 0.1-s neighbourhood's mean + 0.07). ``tests/backend/audio/test_onsets.py``
checks the times against librosa's.
"""

from __future__ import annotations

import numpy as np

from .spectral import mel_filterbank, power_to_db, spectral_flux, stft_power

#: Sample rate (Hz), frame and hop (samples) of the analysis: librosa's defaults at 16 kHz.
SAMPLE_RATE = 16000
N_FFT = 2048
HOP = 512
N_MELS = 128
#: Peak picking (librosa ``onset_detect`` defaults, in seconds, floored to frames).
PRE_MAX_S, POST_MAX_S, PRE_AVG_S, POST_AVG_S, WAIT_S, DELTA = 0.03, 0.0, 0.10, 0.10, 0.03, 0.07


#: Frames analysed at a time, so a long clip's spectrogram is never held whole.
CHUNK_FRAMES = 4096


def _mel_power(x: np.ndarray, a: int, b: int) -> np.ndarray:
    """Mel power ``[b - a, N_MELS]`` of centred frames ``a .. b-1`` of ``x``
    (frame k centred on sample ``k * HOP``, zeros outside the clip)."""
    lo, hi = a * HOP - N_FFT // 2, (b - 1) * HOP + N_FFT // 2
    seg = x[max(lo, 0):min(hi, len(x))]
    seg = np.pad(seg, (max(-lo, 0), max(hi - len(x), 0)))
    # stft_power centres its own frames: drop the half window it pads each side with.
    spec = stft_power(seg, N_FFT, HOP)[N_FFT // (2 * HOP):][: b - a]
    return spec @ mel_filterbank(SAMPLE_RATE, N_FFT, N_MELS, 0.0, SAMPLE_RATE / 2.0).T


def onset_envelope(samples: np.ndarray) -> np.ndarray:
    """Onset strength ``[1 + N // HOP]`` of mono 16 kHz ``samples [N]``, as
    ``librosa.onset.onset_strength(y=samples, sr=16000, hop_length=512)``.
    Two passes over chunks of frames: the dB floor (80 dB under the loudest
    band) needs the whole clip's maximum first."""
    x = np.asarray(samples, dtype=np.float32).reshape(-1)
    total = 1 + len(x) // HOP
    spans = [(a, min(a + CHUNK_FRAMES, total)) for a in range(0, total, CHUNK_FRAMES)]
    # A clip of one chunk (most: 4096 frames is 131 s) keeps its spectrogram for the second pass.
    kept = _mel_power(x, *spans[0]) if len(spans) == 1 else None
    top = float(kept.max()) if kept is not None else max(float(_mel_power(x, a, b).max()) for a, b in spans)
    floor = 10.0 * np.log10(max(top, 1e-10)) - 80.0
    pad = N_FFT // (2 * HOP)
    flux = np.zeros(total, np.float64)
    prev = None
    for a, b in spans:
        mel = kept if kept is not None else _mel_power(x, a, b)
        db = np.maximum(power_to_db(mel, ref=1.0, amin=1e-10), floor)
        f = spectral_flux(db if prev is None else np.concatenate([prev, db]))
        # flux of frame k (k >= 1) lands at k + pad: librosa's lag and centring delay
        start = a if prev is None else a - 1
        dst = np.arange(start, start + len(f)) + 1 + pad
        keep = dst < total
        flux[dst[keep]] = f[keep]
        prev = db[-1:]
    return flux


def pick_peaks(env: np.ndarray, frames_per_s: float) -> np.ndarray:
    """Frame indices of librosa's ``util.peak_pick`` on ``env [T]`` with the
    ``onset_detect`` defaults at ``frames_per_s``: frame n is a peak when it
    is the largest of ``[n - pre_max, n + post_max)``, at least the mean of
    ``[n - pre_avg, n + post_avg)`` plus ``DELTA``, and more than ``wait``
    frames after the previous peak."""
    x = np.asarray(env, dtype=np.float64)
    n_x = len(x)
    f = lambda s: int(s * frames_per_s * (1 + 1e-9) // 1)  # noqa: E731  (librosa: seconds * sr // hop)
    pre_max, post_max, pre_avg, post_avg, wait = f(PRE_MAX_S), f(POST_MAX_S) + 1, f(PRE_AVG_S), f(POST_AVG_S) + 1, f(WAIT_S)
    if n_x == 0:
        return np.zeros(0, int)
    # Windowed max and mean of every frame at once; only the 'wait' skip is sequential.
    pad = np.pad(x, (max(pre_max, pre_avg), max(post_max, post_avg)), constant_values=-np.inf)
    o = max(pre_max, pre_avg)
    idx = np.arange(n_x) + o
    win_max = np.max([pad[idx + k] for k in range(-pre_max, post_max)], axis=0)
    csum = np.concatenate([[0.0], np.cumsum(x)])
    lo = np.maximum(np.arange(n_x) - pre_avg, 0)
    hi = np.minimum(np.arange(n_x) + post_avg, n_x)
    mean = (csum[hi] - csum[lo]) / (hi - lo)
    is_peak = (x == win_max) & (x >= mean + DELTA)
    is_peak[0] = (x[0] >= x[:min(post_max, n_x)].max()) and (x[0] >= x[:min(post_avg, n_x)].mean() + DELTA)
    out, last = [], -np.inf
    for n in np.nonzero(is_peak)[0]:
        if n - last > wait:
            out.append(n)
            last = n
    return np.asarray(out, dtype=int)


def onset_times(samples: np.ndarray, sr: int = SAMPLE_RATE) -> np.ndarray:
    """Onset times ``[K]`` (seconds from the first sample, sorted) of mono
    ``samples [N]`` at 16 kHz (the rate every loaded clip has); empty for
    silence."""
    if int(sr) != SAMPLE_RATE:
        raise ValueError(f"onsets are found at {SAMPLE_RATE} Hz; got {sr} Hz samples")
    x = np.asarray(samples, dtype=np.float32).reshape(-1)
    if x.size == 0 or not np.any(np.abs(x) > 0):
        return np.zeros(0)
    env = onset_envelope(x)
    env = env - env.min()
    top = env.max()
    if not top > 0 or not np.all(np.isfinite(env)):
        return np.zeros(0)
    env = env / (top + np.finfo(env.dtype).tiny)
    return pick_peaks(env, SAMPLE_RATE / HOP) * (HOP / SAMPLE_RATE)
