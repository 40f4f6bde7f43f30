"""Phone recognition and forced alignment with pocketsphinx (the engine
behind Rhubarb Lip Sync), on 16 kHz mono audio.

- ``recognise_phones``: allphone decoding with the shipped en-us phone
  language model — no transcript needed (Rhubarb's approach).
- ``align_transcript``: word + phone forced alignment when the text is known.
- ``recognise_and_align``: English word recognition (the shipped en-us
  language model and dictionary), then forced alignment of the recognised
  words: no transcript needed, English only, ~15x slower than the model.
  Words missing from the CMU dictionary get a crude letter-to-sound
  pronunciation so the alignment never fails on a name.

Phones are CMU ARPAbet (``SIL`` for pauses); times in seconds. pocketsphinx
works on a 100 frames/s grid.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache

import numpy as np

FRAME_RATE = 100.0


def _model_dir() -> str:
    from pocketsphinx import get_model_path

    return get_model_path()


def _pcm16(samples: np.ndarray) -> bytes:
    """16-bit PCM with a little seeded dither: stretches of exact digital
    silence otherwise break pocketsphinx's feature normalisation (the
    alignment then finds no path)."""
    x = np.clip(np.asarray(samples, np.float32), -1.0, 1.0) * 32767.0
    x = x + np.random.default_rng(0).normal(0.0, 2.0, len(x))
    return np.clip(np.round(x), -32768, 32767).astype("<i2").tobytes()


# A fresh decoder per call: pocketsphinx's live cepstral-mean normalisation
# carries over between utterances, so a reused decoder would give different
# phones for the same audio (same seed, same output is a requirement).
def _allphone_decoder():
    from pocketsphinx import Decoder

    # lw=1, pip=1: the default language weight (6.5) lets the phone bigram
    # drown the acoustics; on the LJ eval clips VER drops from 46.5 % to 39.8 %
    # with these (the baseline gets its best setting).
    return Decoder(allphone=os.path.join(_model_dir(), "en-us", "en-us-phone.lm.bin"), samprate=16000,
                   loglevel="FATAL", lw=1.0, pip=1.0)


def _align_decoder():
    from pocketsphinx import Decoder

    # bestpath=False: with the default second lattice pass, the phone-level
    # alignment pass fails ("Failed to stop utterance") on clips over ~5 s.
    return Decoder(samprate=16000, loglevel="FATAL", bestpath=False)


@lru_cache(maxsize=1)
def cmu_dictionary() -> dict:
    """The pocketsphinx CMU dictionary: lowercase word → list of ARPAbet phones
    (first pronunciation)."""
    out = {}
    with open(os.path.join(_model_dir(), "en-us", "cmudict-en-us.dict"), encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2 and "(" not in parts[0]:
                out.setdefault(parts[0].lower(), parts[1:])
    return out


def words_of(text: str) -> list:
    """Transcript → lowercase words as the dictionary spells them (punctuation
    dropped, apostrophes kept, hyphens split)."""
    text = text.lower().replace("-", " ").replace("—", " ")
    return [w.strip("'") for w in re.findall(r"[a-z']+", text) if w.strip("'")]


# Letter-to-sound for out-of-vocabulary words: crude, but it keeps the
# alignment going and gets the lip-relevant consonants (p b m f v) right.
_LTS = [("tch", "CH"), ("sch", "SH"), ("ch", "CH"), ("sh", "SH"), ("ph", "F"), ("th", "TH"), ("ng", "NG"),
        ("ck", "K"), ("qu", "K W"), ("ee", "IY"), ("ea", "IY"), ("oo", "UW"), ("ou", "AW"), ("ai", "EY"),
        ("ay", "EY"), ("oa", "OW"), ("a", "AE"), ("b", "B"), ("c", "K"), ("d", "D"), ("e", "EH"), ("f", "F"),
        ("g", "G"), ("h", "HH"), ("i", "IH"), ("j", "JH"), ("k", "K"), ("l", "L"), ("m", "M"), ("n", "N"),
        ("o", "AA"), ("p", "P"), ("q", "K"), ("r", "R"), ("s", "S"), ("t", "T"), ("u", "AH"), ("v", "V"),
        ("w", "W"), ("x", "K S"), ("y", "Y"), ("z", "Z")]


def letter_to_sound(word: str) -> list:
    """Rough ARPAbet for a word the dictionary lacks."""
    w, out, i = word.lower().replace("'", ""), [], 0
    while i < len(w):
        for g, ph in _LTS:
            if w.startswith(g, i):
                if not (out and out[-1] == ph):          # doubled letters are one sound
                    out.extend(ph.split())
                i += len(g)
                break
        else:
            i += 1
    return out or ["AH"]


def pronounce(words: list) -> list:
    """``[(word, [phones])]`` from the dictionary, letter-to-sound for the rest."""
    d = cmu_dictionary()
    return [(w, d.get(w) or letter_to_sound(w)) for w in words]


def recognise_phones(samples: np.ndarray) -> list:
    """Allphone decoding of 16 kHz mono ``samples`` → ``[(start_s, end_s, phone)]``."""
    d = _allphone_decoder()
    d.start_utt()
    d.process_raw(_pcm16(samples), full_utt=True)
    d.end_utt()
    out = []
    for s in d.seg():
        out.append((s.start_frame / FRAME_RATE, (s.end_frame + 1) / FRAME_RATE, s.word.upper()))
    return out


def align_transcript(samples: np.ndarray, text: str) -> list | None:
    """Forced alignment of ``text`` to 16 kHz mono ``samples`` →
    ``[(start_s, end_s, phone)]`` (pauses as ``SIL``), or None when the
    decoder finds no alignment (e.g. the text does not match the audio)."""
    words = words_of(text)
    if not words:
        return None
    d = _align_decoder()
    known = cmu_dictionary()
    for w, phones in pronounce(words):
        if w not in known and d.lookup_word(w) is None:
            d.add_word(w, " ".join(phones), True)
    pcm = _pcm16(samples)
    try:
        d.set_align_text(" ".join(words))
        d.start_utt()
        d.process_raw(pcm, full_utt=True)
        d.end_utt()
        if d.hyp() is None:
            return None
        d.set_alignment()
        d.start_utt()
        d.process_raw(pcm, full_utt=True)
        d.end_utt()
        al = d.get_alignment()
    except RuntimeError:
        return None
    if al is None:
        return None
    out = []
    for w in al:
        for p in w:
            out.append((p.start / FRAME_RATE, (p.start + p.duration) / FRAME_RATE, p.name.upper()))
    if not out:
        return None
    total = len(samples) / 16000.0
    if out[0][0] > 0:
        out.insert(0, (0.0, out[0][0], "SIL"))
    if out[-1][1] < total:
        out.append((out[-1][1], total, "SIL"))
    return out


def _pause_cuts(samples: np.ndarray, chunk: int, search: int, window: int = 800) -> list:
    """Chunk starts (samples) about every ``chunk`` samples, each moved to the
    quietest ``window``-sample stretch in the ``search`` samples before its
    nominal place, so a recogniser's chunk rarely ends inside a word."""
    cuts, a, n = [0], 0, len(samples)
    while a + chunk < n:
        lo, hi = a + chunk - search, a + chunk
        seg = np.asarray(samples[lo:hi], np.float64) ** 2
        k = max(len(seg) // window, 1)
        frames = seg[: k * window].reshape(k, -1).mean(axis=1)
        a = lo + int(np.argmin(frames)) * window + window // 2
        cuts.append(a)
    return cuts


def recognise_and_align(samples: np.ndarray, chunk_s: float = 15.0, pause_cut: bool = True) -> list:
    """English speech without a transcript → ARPAbet phones ``[(start_s,
    end_s, phone)]``: pocketsphinx recognises the words with its US English
    language model, then :func:`align_transcript` aligns them. Long audio is
    decoded in ~``chunk_s`` chunks (cut at the quietest 50 ms of the last 3 s
    before each nominal cut with ``pause_cut``, else at fixed places);
    stretches where nothing is recognised stay without phones (silence).

    Why both steps: the recogniser's own segmentation is word-level; the
    alignment pass gives phone boundaries. Misrecognised words usually share
    most mouth shapes with the spoken ones, so the viseme sequence is far
    better than free phone recognition (see bench/results/face.md)."""
    from pocketsphinx import Decoder

    sr = 16000
    samples = np.asarray(samples, np.float32)
    step = int(chunk_s * sr)
    starts = _pause_cuts(samples, step, 3 * sr) if pause_cut else list(range(0, len(samples), step))
    bounds = list(zip(starts, starts[1:] + [len(samples)]))
    asr = Decoder(samprate=sr, loglevel="FATAL")
    out = []
    for a, b in bounds:
        seg = samples[a:b]
        if len(seg) < sr // 2:
            continue
        asr.start_utt()
        asr.process_raw(_pcm16(seg), full_utt=True)
        asr.end_utt()
        hyp = asr.hyp()
        if hyp is None or not hyp.hypstr.strip():
            continue
        phones = align_transcript(seg, hyp.hypstr) or []
        out.extend((s + a / sr, e + a / sr, p) for s, e, p in phones)
    return out
