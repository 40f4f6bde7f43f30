"""eSpeak NG speech synthesis with exact phoneme timings, through ctypes.

The ``espeakng-loader`` wheel ships ``libespeak-ng.so`` and its data (voices
for ~100 languages). Synthesis runs in synchronous mode with phoneme events
turned on, so every phoneme arrives with its position in the audio — exact
labels for training data and timing ground truth, in any language.

The library keeps global state and is not thread-safe: all calls go through
one module-level lock.
"""

from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from ..errors import RigMindError

SAMPLE_RATE = 22050          # eSpeak NG's native output rate (Hz)

_AUDIO_OUTPUT_SYNCHRONOUS = 2
_INIT_PHONEME_EVENTS = 0x0001
_INIT_PHONEME_IPA = 0x0002
_EVENT_LIST_TERMINATED, _EVENT_WORD, _EVENT_END, _EVENT_PHONEME = 0, 1, 5, 7
_POS_CHARACTER = 1
_CHARS_UTF8 = 1
_PARAM_RATE, _PARAM_VOLUME, _PARAM_PITCH, _PARAM_RANGE, _PARAM_WORDGAP = 1, 2, 3, 4, 7

_LOCK = threading.Lock()


class EspeakError(RigMindError, RuntimeError):
    """eSpeak NG is missing or refused the voice/text."""


class _EventId(ctypes.Union):
    _fields_ = [("number", ctypes.c_int), ("name", ctypes.c_char_p), ("string", ctypes.c_char * 8)]


class _Event(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int),
        ("unique_identifier", ctypes.c_uint),
        ("text_position", ctypes.c_int),
        ("length", ctypes.c_int),
        ("audio_position", ctypes.c_int),   # ms from the start of the message
        ("sample", ctypes.c_int),
        ("user_data", ctypes.c_void_p),
        ("id", _EventId),
    ]


_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.POINTER(_Event))


@dataclass
class Synthesis:
    """``samples [N]`` float32 at ``sample_rate`` (22.05 kHz); ``phones``:
    list of ``(start_s, end_s, ipa)`` covering the voiced message (pauses are
    ``"_"``); ``voice`` and ``text`` as requested."""

    samples: np.ndarray
    sample_rate: int
    phones: list = field(default_factory=list)
    voice: str = ""
    text: str = ""


class _State:
    chunks: list = []
    events: list = []


@lru_cache(maxsize=1)
def _lib():
    try:
        import espeakng_loader
    except ImportError as e:  # pragma: no cover - pinned dependency
        raise EspeakError("espeakng-loader is not installed; reinstall RigMind's requirements") from e
    lib = ctypes.CDLL(espeakng_loader.get_library_path())
    lib.espeak_Initialize.restype = ctypes.c_int
    lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
    lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
    lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
    lib.espeak_ng_SetRandSeed.argtypes = [ctypes.c_long]
    lib.espeak_Synth.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_int, ctypes.c_uint,
                                 ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p]
    rate = lib.espeak_Initialize(_AUDIO_OUTPUT_SYNCHRONOUS, 0, espeakng_loader.get_data_path().encode(),
                                 _INIT_PHONEME_EVENTS | _INIT_PHONEME_IPA)
    if rate <= 0:
        raise EspeakError("eSpeak NG failed to initialise (its data folder is missing or unreadable)")

    def on_audio(wav, n, events):
        if n > 0 and wav:
            _State.chunks.append(np.ctypeslib.as_array(wav, shape=(n,)).copy())
        i = 0
        while events[i].type != _EVENT_LIST_TERMINATED:
            e = events[i]
            if e.type == _EVENT_PHONEME:
                raw = bytes(e.id.string).split(b"\0", 1)[0]
                _State.events.append((e.audio_position, raw.decode("utf-8", "replace")))
            elif e.type == _EVENT_END:
                _State.events.append((e.audio_position, None))
            i += 1
        return 0

    cb = _CALLBACK(on_audio)
    lib.espeak_SetSynthCallback(cb)
    lib._rigmind_cb = cb          # keep the C callback alive as long as the library
    return lib


def synthesize(text: str, voice: str = "en-us", *, rate: int = 175, pitch: int = 50, pitch_range: int = 50,
               word_gap: int = 0) -> Synthesis:
    """Speak ``text`` with eSpeak voice ``voice`` (e.g. ``"en-us"``, ``"de"``,
    ``"es"``, ``"fr"``, ``"ru"``); ``rate`` in words/min (80..450), ``pitch``
    and ``pitch_range`` 0..100, ``word_gap`` in 10 ms units.

    Returns the audio and the phoneme timeline in seconds. The phoneme events
    give each phone's start; its end is the next event's start (or the end of
    the message)."""
    lib = _lib()
    with _LOCK:
        if lib.espeak_SetVoiceByName(voice.encode()) != 0:
            raise EspeakError(f"eSpeak NG has no voice {voice!r}")
        for p, v in ((_PARAM_RATE, rate), (_PARAM_PITCH, pitch), (_PARAM_RANGE, pitch_range), (_PARAM_WORDGAP, word_gap)):
            lib.espeak_SetParameter(p, int(v), 0)
        _State.chunks, _State.events = [], []
        # eSpeak's random generator starts from a different state in every
        # process: fix it so the same calls give the same audio in any process
        # (the face model's training data must be reproducible).
        lib.espeak_ng_SetRandSeed(0)
        buf = text.encode("utf-8") + b"\0"
        err = lib.espeak_Synth(buf, len(buf), 0, _POS_CHARACTER, 0, _CHARS_UTF8, None, None)
        if err != 0:
            raise EspeakError(f"eSpeak NG could not synthesise the text (error {err})")
        chunks, events = _State.chunks, _State.events
        _State.chunks, _State.events = [], []
    samples = (np.concatenate(chunks).astype(np.float32) / 32768.0) if chunks else np.zeros(0, np.float32)
    total = len(samples) / SAMPLE_RATE
    phones = []
    marks = sorted([(ms / 1000.0, ph) for ms, ph in events], key=lambda t: t[0])
    for k, (t, ph) in enumerate(marks):
        if ph is None:
            continue
        end = marks[k + 1][0] if k + 1 < len(marks) else total
        end = min(end, total)
        if end > t:
            phones.append((t, end, ph if ph.strip() else "_"))
    return Synthesis(samples, SAMPLE_RATE, phones, voice, text)


def list_voices() -> list:
    """Identifiers of the languages whose voices ship with the library (e.g. ``["af", "am", ..., "en-us", ...]``)."""
    import os

    import espeakng_loader

    root = os.path.join(espeakng_loader.get_data_path(), "lang")
    out = []
    for _dirpath, _dirs, files in os.walk(root):
        out.extend(files)
    return sorted(out)
