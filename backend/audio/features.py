"""Per-frame speech features shared by the gesture and face models.

Everything is computed on a 100 Hz analysis grid (hop 10 ms at 16 kHz) and
then sampled at the caller's frame rate (30 fps for motion, 100 for lips).
Long clips are processed in chunks with context on both sides, so memory is
bounded by the chunk, and results match the unchunked computation away from
numerical noise."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .loading import SAMPLE_RATE
from .onsets import onset_times
from .spectral import onset_strength, power_to_db
from .vad import speech_mask as _vad_speech_mask
from .vad import speech_probability

HOP = 160                    # 10 ms at 16 kHz
ANALYSIS_FPS = SAMPLE_RATE / HOP
N_FFT = 512
N_MELS = 64
CHUNK_SECONDS = 30.0
CONTEXT_SECONDS = 0.5


@dataclass
class SpeechFeatures:
    """Arrays ``[F, ...]`` at ``fps``: ``logmel [F, 64]`` (dB, clip-normalised),
    ``onset [F]`` (onset strength, unit median), ``energy [F]`` (RMS dBFS),
    ``pitch [F]`` (log2 f0 z-scored over voiced frames, 0 when unvoiced),
    ``voiced [F]`` and ``speech [F]`` (voice activity, bool);
    ``onset_times [K]``: the clip's onsets in seconds (:mod:`.onsets`, the
    onsets beat consistency is scored against)."""

    fps: float
    logmel: np.ndarray
    onset: np.ndarray
    energy: np.ndarray
    pitch: np.ndarray
    voiced: np.ndarray
    speech: np.ndarray
    onset_times: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def num_frames(self) -> int:
        return len(self.energy)

    def stacked(self) -> np.ndarray:
        """``[F, 64 + 5]`` float32 model input: mel, onset, energy, pitch, voiced, speech."""
        return np.concatenate([
            self.logmel,
            np.log1p(self.onset)[:, None],
            ((self.energy + 40.0) / 20.0)[:, None],
            self.pitch[:, None],
            self.voiced[:, None].astype(np.float32),
            self.speech[:, None].astype(np.float32),
        ], axis=1).astype(np.float32)


def _mel_basis():
    from .spectral import mel_filterbank

    return mel_filterbank(SAMPLE_RATE, N_FFT, N_MELS, 60.0, 7600.0)


def _analysis_chunk(x: np.ndarray, basis: np.ndarray):
    """``x`` samples → (mel power [T, 64], rms [T], f0 [T]) at 100 Hz, centred
    frames. One STFT feeds the mel bands and the energy (and, through the
    mel bands, the onsets); YIN needs its own 1024-sample frames."""
    from .spectral import stft_power, yin

    spec = stft_power(x, N_FFT, HOP)  # [T, 257]
    mel = spec @ basis.T
    rms = np.sqrt(spec.sum(axis=1) / (N_FFT * N_FFT / 2.0 * 0.375) + 1e-12)  # Parseval, Hann power 3/8
    f0 = yin(x, fmin=65, fmax=400, sr=SAMPLE_RATE, frame_length=1024, hop=HOP)
    return mel.astype(np.float32), rms.astype(np.float32), f0.astype(np.float32)


def analysis_frames(samples: np.ndarray):
    """Chunked 100 Hz analysis of a whole clip → (mel, rms, f0), each ``[ceil(N/160)+1, ...]``."""
    basis = _mel_basis()
    x = np.asarray(samples, dtype=np.float32)
    total = len(x) // HOP + 1
    chunk = int(CHUNK_SECONDS * ANALYSIS_FPS)
    ctx = int(CONTEXT_SECONDS * ANALYSIS_FPS)
    mels, rmss, f0s = [], [], []
    for a in range(0, total, chunk):
        b = min(a + chunk, total)
        a0, b0 = max(a - ctx, 0), min(b + ctx, total)
        seg = x[a0 * HOP: b0 * HOP]
        if len(seg) < 1024:
            seg = np.pad(seg, (0, 1024 - len(seg)))
        m, r, f = _analysis_chunk(seg, basis)
        sl = slice(a - a0, a - a0 + (b - a))
        mels.append(m[sl]), rmss.append(r[sl]), f0s.append(f[sl])
    return np.concatenate(mels), np.concatenate(rmss), np.concatenate(f0s)


# The gesture and the face models both read a clip's features (at 30 and
# 100 fps): the 100 Hz analysis and the voice activity are computed once per
# clip. Keyed by a digest of the samples (a few ms), holding the last clips.
_CACHE: dict = {}
_CACHE_SIZE = 2


def _clip_key(x: np.ndarray) -> bytes:
    import hashlib

    return hashlib.blake2b(np.ascontiguousarray(x).view(np.uint8), digest_size=16).digest() + len(x).to_bytes(8, "little")


def speech_mask(samples: np.ndarray, fps: float, n_frames: int, **kwargs) -> np.ndarray:
    """:func:`.vad.speech_mask`, reusing the clip's speech probability when
    its features were computed (the VAD is the costliest part of them)."""
    hit = _CACHE.get(_clip_key(np.asarray(samples, dtype=np.float32)))
    prob = hit[3] if hit is not None else None
    return _vad_speech_mask(samples, fps, n_frames, probability=prob, **kwargs)


def _analysis_and_vad(x: np.ndarray, with_vad: bool):
    """(mel, rms, f0, speech probability or None) for ``x``; the VAD (an
    ONNX model run window by window, which releases the GIL) runs in a thread
    while the spectral analysis runs here."""
    from concurrent.futures import ThreadPoolExecutor

    key = _clip_key(x)
    hit = _CACHE.get(key)
    if hit is not None and (hit[3] is not None or not with_vad):
        return hit
    if with_vad:
        with ThreadPoolExecutor(max_workers=1) as pool:
            vad = pool.submit(speech_probability, x)
            mel, rms, f0 = analysis_frames(x)
            prob = vad.result()
    else:
        (mel, rms, f0), prob = analysis_frames(x), None
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = (mel, rms, f0, prob)
    return _CACHE[key]


def _sample(a: np.ndarray, src_fps: float, dst_fps: float, n: int) -> np.ndarray:
    """Linear interpolation of ``a [T, ...]`` from src to dst frame times."""
    t = np.arange(n) * (src_fps / dst_fps)
    i0 = np.clip(np.floor(t).astype(int), 0, len(a) - 1)
    i1 = np.clip(i0 + 1, 0, len(a) - 1)
    w = (t - i0).reshape((-1,) + (1,) * (a.ndim - 1))
    return (a[i0] * (1 - w) + a[i1] * w).astype(np.float32)


def _pool_max(a: np.ndarray, src_fps: float, dst_fps: float, n: int) -> np.ndarray:
    """Max of ``a [T]`` over each destination frame's span (keeps short onsets)."""
    edges = np.round(np.arange(n + 1) * (src_fps / dst_fps)).astype(int)
    edges = np.clip(edges, 0, len(a))
    out = np.zeros(n, np.float32)
    for k in range(n):  # n frames, cheap; reduceat misbehaves on empty spans
        s, e = edges[k], max(edges[k + 1], edges[k] + 1)
        out[k] = a[min(s, len(a) - 1): e].max() if s < len(a) else a[-1]
    return out


def speech_features(clip, fps: float = 30.0, *, with_vad: bool = True, with_onsets: bool = True) -> SpeechFeatures:
    """Features of an ``AudioClip`` (mono 16 kHz) at ``fps`` frames per second;
    frame k covers time k/fps. The number of frames is ceil(seconds × fps).
    ``with_onsets=False`` leaves ``onset_times`` empty (the face and the
    gesture's training do not read them; only generation settles with them)."""
    x = clip.samples
    n = max(int(np.ceil(len(x) / SAMPLE_RATE * fps)), 1)
    use_vad = with_vad and not getattr(clip, "silent", False)
    mel, rms, f0, prob = _analysis_and_vad(x, use_vad)
    logmel = power_to_db(mel, ref=1.0, amin=1e-10).astype(np.float32)
    # Clip-level normalisation (mean over loud frames) makes the model
    # insensitive to microphone gain and spectral tilt of the recording.
    loud = rms > np.percentile(rms, 50)
    ref = logmel[loud].mean(axis=0) if loud.any() else logmel.mean(axis=0)
    logmel = (logmel - ref) / 20.0
    # librosa's onset_strength(S=power_to_db(mel, ref=max)) with its
    # centring delay of n_fft // (2 hop) frames for its default n_fft 2048.
    onset = onset_strength(power_to_db(mel, ref=float(mel.max()), top_db=80.0), centre_pad=2048 // (2 * HOP))
    med = float(np.median(onset[onset > 0])) if np.any(onset > 0) else 1.0
    onset = (onset / max(med, 1e-6)).astype(np.float32)
    energy = (20 * np.log10(rms + 1e-6)).astype(np.float32)
    if getattr(clip, "silent", False):
        energy[:] = -120.0
        onset[:] = 0.0
        logmel[:] = -3.0

    speech = _vad_speech_mask(x, fps, n, probability=prob) if use_vad else np.zeros(n, bool)
    e = _sample(energy, ANALYSIS_FPS, fps, n)
    f = _sample(f0, ANALYSIS_FPS, fps, n)
    voiced = speech & (e > e.max() - 35.0) & (f < 390) & (f > 70)
    lp = np.log2(np.maximum(f, 1.0))
    pitch = np.zeros(n, np.float32)
    if voiced.sum() > 3:
        mu, sd = lp[voiced].mean(), lp[voiced].std() + 1e-3
        pitch[voiced] = np.clip((lp[voiced] - mu) / sd, -3, 3)
    return SpeechFeatures(
        fps=float(fps),
        logmel=_sample(logmel, ANALYSIS_FPS, fps, n),
        onset=_pool_max(onset, ANALYSIS_FPS, fps, n),
        energy=e,
        pitch=pitch,
        voiced=voiced,
        speech=speech,
        onset_times=onset_times(x, SAMPLE_RATE) if with_onsets and not getattr(clip, "silent", False) else np.zeros(0),
    )

