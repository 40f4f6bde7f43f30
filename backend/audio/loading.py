"""Load speech audio from any file soundfile (libsndfile: WAV incl. float,
FLAC, OGG/Vorbis/Opus, MP3) or librosa/audioread reads, as mono 16 kHz float32,
loudness-normalised.

Long files are read in blocks and resampled with a streaming resampler, so
memory stays bounded by the 16 kHz mono result (about 4 MB per minute), not by
the source format (a 10-minute 48 kHz stereo file would be 230 MB as float32).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import UserError

SAMPLE_RATE = 16000
TARGET_RMS_DBFS = -20.0      # speech level after normalisation (active parts)
SILENCE_PEAK = 1e-3          # below this peak (-60 dBFS) a file counts as silent
MIN_SECONDS = 0.05
#: The longest speech file RigMind takes (4 hours): generation time and memory
#: grow with the length (about 4 MB of samples per minute); split longer recordings.
MAX_SECONDS = 4 * 3600.0
#: Below this sample rate a file cannot hold intelligible speech (telephone audio is 8 kHz).
MIN_RATE = 4000
#: Above this a header is lying or the file is not a recording (studio audio tops out at 384 kHz).
MAX_RATE = 768000
#: More channels than any recording of a voice has (ambisonic rigs use up to 64).
MAX_CHANNELS = 64
#: The most one block of the source file takes as float32 while it is read (bytes).
MAX_BLOCK_BYTES = 64 * 1024 * 1024


class AudioError(UserError):
    """A user-facing problem with an audio file: the message names it and the fix."""


@dataclass
class AudioClip:
    """``samples [N]`` float32 mono at ``sample_rate`` Hz (16 kHz), peak ≤ 1.

    ``source_rate``/``source_channels`` describe the file; ``gain_db`` is the
    normalisation applied; ``silent`` is True when the file held no signal."""

    samples: np.ndarray
    sample_rate: int
    source_rate: int
    source_channels: int
    gain_db: float
    silent: bool
    path: str = ""

    @property
    def seconds(self) -> float:
        return len(self.samples) / float(self.sample_rate)


def _read_soundfile(path: Path, sr: int, block_seconds: float):
    import soundfile as sf
    import soxr

    with sf.SoundFile(str(path)) as f:
        rate, channels = f.samplerate, f.channels
        _check_rate_and_length(path, rate, f.frames / rate if rate > 0 else 0.0)
        _check_channels(path, channels)
        stream = None if rate == sr else soxr.ResampleStream(rate, sr, 1, dtype="float32", quality="HQ")
        block = max(min(int(rate * block_seconds), MAX_BLOCK_BYTES // (4 * channels)), 1024)
        # The blocks go straight into one array of the expected length (one
        # block to spare), not a list joined at the end: a long file then
        # holds its samples once, not twice.
        out = _Samples(int(np.ceil(f.frames * sr / rate)) + int(np.ceil(block * sr / rate)) + 1)
        read = 0
        while True:
            x = f.read(block, dtype="float32", always_2d=True)
            last = len(x) < block
            read += len(x)
            # A header may understate its frames (a stream with no length):
            # the bound holds on what is actually decoded.
            _check_rate_and_length(path, rate, read / rate)
            mono = x.mean(axis=1).astype(np.float32) if len(x) else np.zeros(0, np.float32)
            out.append(mono if stream is None else stream.resample_chunk(mono, last=last))
            if last:
                break
    return out.samples(), rate, channels


class _Samples:
    """float32 samples appended block by block into an array of ``capacity``
    (grown when a file holds more than its header said)."""

    def __init__(self, capacity: int):
        self.buf = np.empty(max(int(capacity), 0), np.float32)
        self.n = 0

    def append(self, x: np.ndarray) -> None:
        if self.n + len(x) > len(self.buf):
            self.buf = np.concatenate([self.buf[:self.n], np.empty(max(len(x), self.n), np.float32)])
        self.buf[self.n:self.n + len(x)] = x
        self.n += len(x)

    def samples(self) -> np.ndarray:
        """The samples appended ``[n]``."""
        return self.buf[:self.n]


def _check_rate_and_length(path: Path, rate: int, seconds: float) -> None:
    """Refuse before decoding: a rate too low for speech, or a file longer than MAX_SECONDS."""
    if rate > MAX_RATE:
        raise AudioError(f"audio file {path.name} claims a sample rate of {rate} Hz, above the {MAX_RATE} Hz "
                         "RigMind reads: the file is damaged, or re-export it at 48 kHz")
    if rate < MIN_RATE:
        raise AudioError(f"audio file {path.name} has a sample rate of {rate} Hz, too low for speech; "
                         f"use a recording at {MIN_RATE} Hz or more (16 kHz or 44.1 kHz are usual)")
    if seconds > MAX_SECONDS:
        raise AudioError(f"audio file {path.name} lasts {seconds / 3600:.1f} hours; RigMind takes speech up to "
                         f"{MAX_SECONDS / 3600:g} hours per file: split it into shorter files")


def _check_channels(path: Path, channels: int) -> None:
    if not 1 <= channels <= MAX_CHANNELS:
        raise AudioError(f"audio file {path.name} claims {channels} channels; RigMind reads 1 to {MAX_CHANNELS}: "
                         "the file is damaged, or re-export it as mono or stereo WAV")


def _read_librosa(path: Path, sr: int):
    import warnings

    import librosa

    # Decoding stops just past the longest file RigMind takes, so a long or
    # lying compressed file is refused by its length, never decoded whole.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y, rate = librosa.load(str(path), sr=None, mono=False, duration=MAX_SECONDS + 1.0)
    y = np.atleast_2d(y)
    channels = y.shape[0]
    _check_channels(path, channels)
    _check_rate_and_length(path, int(rate), y.shape[1] / rate if rate > 0 else 0.0)
    mono = y.mean(axis=0).astype(np.float32)
    if rate != sr:
        import soxr

        mono = soxr.resample(mono, rate, sr, quality="HQ").astype(np.float32)
    return mono, int(rate), channels


#: 50 ms frames measured at once by :func:`frame_rms` (1 minute): its
#: float64 temporaries stay a few MB whatever the file's length.
RMS_BLOCK_FRAMES = 1200


def frame_rms(x: np.ndarray, hop: int) -> np.ndarray:
    """RMS ``[len(x) // hop]`` of consecutive ``hop``-sample frames of ``x``
    (float64), :data:`RMS_BLOCK_FRAMES` frames at a time."""
    n = len(x) // hop
    r = np.empty(n)
    for a in range(0, n, RMS_BLOCK_FRAMES):
        b = min(a + RMS_BLOCK_FRAMES, n)
        frames = x[a * hop: b * hop].astype(np.float64).reshape(b - a, hop)
        r[a:b] = np.sqrt(np.mean(frames**2, axis=1))
    return r


def peak_abs(x: np.ndarray, block: int = 1 << 22) -> float:
    """``max |x|`` (0 for no samples), a block of samples at a time."""
    return max((float(np.abs(x[a:a + block]).max()) for a in range(0, len(x), block)), default=0.0)


def normalise_loudness(x: np.ndarray, sr: int = SAMPLE_RATE) -> tuple:
    """Scale so the RMS of the louder half of 50 ms frames sits at
    TARGET_RMS_DBFS (a cheap stand-in for gated loudness: pauses don't drag
    it down), then cap the peak at 0.99. Returns ``(scaled float32, gain_db)``:
    a new array; the float64 work is done in blocks, so a 30-minute file
    costs one copy of its samples, not five."""
    hop = max(int(0.05 * sr), 1)
    n = len(x) // hop
    if n == 0:
        rms = float(np.sqrt(np.mean(x.astype(np.float64) ** 2)) + 1e-12)
    else:
        r = np.sort(frame_rms(x, hop))[n // 2:]
        rms = float(np.sqrt(np.mean(r**2)) + 1e-12)
    gain = 10 ** (TARGET_RMS_DBFS / 20) / rms
    peak = peak_abs(x) * gain
    if peak > 0.99:
        gain *= 0.99 / peak
    return (x * gain).astype(np.float32, copy=False), float(20 * np.log10(gain))


def _level(x: np.ndarray, normalise: bool, sr: int) -> tuple:
    """Silence stays exact zeros (no gain: noise is never amplified into fake
    speech); anything else is loudness-normalised when asked.
    Returns ``(samples float32, gain_db, silent)``."""
    silent = peak_abs(x) < SILENCE_PEAK
    gain_db = 0.0
    if silent:
        x = np.zeros_like(x)
    elif normalise:
        x, gain_db = normalise_loudness(x, sr)
    return x.astype(np.float32, copy=False), gain_db, silent


def load_audio(path, *, sample_rate: int = SAMPLE_RATE, normalise: bool = True,
               block_seconds: float = 30.0) -> AudioClip:
    """Read ``path`` → mono ``sample_rate`` float32, loudness-normalised.

    Raises AudioError for a missing, empty, corrupt, too-short or non-finite
    file. A silent file is returned as zeros with ``silent=True`` (no gain, so
    noise is never amplified into fake speech)."""
    path = Path(path)
    if not path.exists():
        raise AudioError(f"audio file not found: {path} — check the path")
    if path.is_dir():
        raise AudioError(f"{path} is a folder, not an audio file — pick a .wav/.flac/.mp3/.ogg file")
    if path.stat().st_size == 0:
        raise AudioError(f"audio file {path.name} is empty (0 bytes) — re-export it")
    try:
        x, rate, channels = _read_soundfile(path, sample_rate, block_seconds)
    except AudioError:
        raise
    except Exception as first:  # noqa: BLE001 - libsndfile failed; try audioread/ffmpeg
        try:
            x, rate, channels = _read_librosa(path, sample_rate)
        except Exception:  # noqa: BLE001
            raise AudioError(
                f"cannot decode audio file {path.name} ({first.__class__.__name__}: {first}) — "
                "it is corrupt or not audio; convert it to WAV (16-bit PCM) and try again"
            ) from None
    _check_rate_and_length(path, int(rate), len(x) / sample_rate)
    if not np.all(np.isfinite(x)):
        raise AudioError(f"audio file {path.name} contains NaN/Inf samples — re-export it as 16-bit PCM WAV")
    if len(x) < MIN_SECONDS * sample_rate:
        raise AudioError(f"audio file {path.name} is too short ({len(x) / sample_rate:.3f} s; "
                         f"need at least {MIN_SECONDS} s)")
    x, gain_db, silent = _level(x, normalise, sample_rate)
    return AudioClip(x, sample_rate, int(rate), int(channels), gain_db, silent, str(path))


def clip_from_array(samples: np.ndarray, rate: int, *, normalise: bool = True) -> AudioClip:
    """The same conversion for samples already in memory (``[N]`` or ``[N, C]``)."""
    x = np.asarray(samples, dtype=np.float32)
    channels = 1 if x.ndim == 1 else x.shape[1]
    if x.ndim == 2:
        x = x.mean(axis=1)
    if rate != SAMPLE_RATE:
        import soxr

        x = soxr.resample(x, rate, SAMPLE_RATE, quality="HQ").astype(np.float32)
    x, gain_db, silent = _level(x, normalise, SAMPLE_RATE)
    return AudioClip(x, SAMPLE_RATE, int(rate), channels, gain_db, silent)
