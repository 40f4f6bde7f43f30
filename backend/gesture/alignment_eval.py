"""``rigmind eval gesture --alignment``: the time-shift alignment gain
(:mod:`.alignment`) of generated motion on voices unlike the training
speaker, beside the real BEAT2 capture's on its own audio (issue #29 item 5).

Voices (paths under the data folder):

- ``HELDOUT_VOICES`` (never tuned on): every ``speech_multilingual`` file
  (Silero TTS German/English/Spanish/Russian, LibriSpeech English, AISHELL
  Mandarin) and LJSpeech LJ001-0001, -0003, -0014, -0027;
- ``VALIDATION_VOICES`` (the only ones a setting may be chosen on): the
  training speaker's other takes 2_scott_0_2_2 … 0_5_5 and LJSpeech
  LJ001-0010, -0015, -0021, -0025; ``VALIDATION_SHORT``: the other 24
  LJSpeech clips (2-10 s each), for how often a short clip reaches a line.

Every motion's joint speeds are divided by the real speaker's mean speeds
(the whole paired take), as ``rigmind eval gesture`` does for BC.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import UserError
from . import alignment
from . import dataset
from . import metrics

REAL_TAKE = "beat2_speech_gesture_sample/2_scott_0_1_1"
HELDOUT_VOICES = ("speech_multilingual/silero_de.wav", "speech_multilingual/silero_en.wav",
                  "speech_multilingual/silero_es.wav", "speech_multilingual/silero_ru.wav",
                  "speech_multilingual/en_librispeech-1995-1837-0001.wav",
                  "speech_multilingual/zh_aishell-BAC009S0724W0121.wav") + tuple(
    f"speech_english_ljspeech/wavs/LJ001-{k:04d}.wav" for k in (1, 3, 14, 27))
VALIDATION_VOICES = tuple(f"beat2_speech_gesture_sample/2_scott_0_{k}_{k}.wav" for k in (2, 3, 4, 5)) + tuple(
    f"speech_english_ljspeech/wavs/LJ001-{k:04d}.wav" for k in (10, 15, 21, 25))
#: Every other LJSpeech clip here (2-10 s each): how often a short clip's gain
#: reaches a line, where one clip's gain moves by ~0.1 with the seed alone.
VALIDATION_SHORT = tuple(f"speech_english_ljspeech/wavs/LJ001-{k:04d}.wav" for k in range(1, 33)
                         if k not in (1, 3, 14, 27, 10, 15, 21, 25))


def real_reference(data_dir):
    """``(mean_speed [55] m/s, Alignment of the whole take, Alignment of its
    held-out last 20 %)``: the real capture on its own audio."""
    from ..audio.loading import load_audio

    data_dir = Path(data_dir)
    for suffix in (".npz", ".wav"):
        if not (data_dir / (REAL_TAKE + suffix)).is_file():
            raise UserError(f"{data_dir / (REAL_TAKE + suffix)} not found: the real capture the gain is set "
                            "against; pass --data with the shared data folder")
    take = dataset.load_paired_take(data_dir / (REAL_TAKE + ".npz"), data_dir / (REAL_TAKE + ".wav"))
    pos = dataset.positions(take.rot, take.root)
    mean_speed = metrics.mean_joint_speed(pos, dataset.FPS)
    clip = load_audio(take.audio)
    whole = alignment.alignment_gain(clip.samples, clip.sample_rate, pos, dataset.FPS, mean_speed=mean_speed)
    cut = int(round(len(pos) * (1 - dataset.HOLDOUT)))
    a = int(round(cut / dataset.FPS * clip.sample_rate))
    tail = alignment.alignment_gain(clip.samples[a:], clip.sample_rate, pos[cut:], dataset.FPS, mean_speed=mean_speed)
    return mean_speed, whole, tail


def evaluate_alignment(data_dir, *, seeds: int = 5, amount: float = 0.5, weights=None, voices=None) -> dict:
    """The gain of ``generate_gesture`` (seeds 0 … seeds-1) on each voice and
    the real capture's: ``{"real": {...}, "voices": {path: {"gain": mean,
    "gain_std": std over seeds, "gains": [...], "seconds": s}}}``."""
    from ..audio.loading import load_audio
    from .generate import generate_gesture, get_model

    data_dir = Path(data_dir)
    model = get_model(weights)
    mean_speed, whole, tail = real_reference(data_dir)
    out = {"real": {"whole": whole.__dict__, "heldout_tail": tail.__dict__}, "voices": {}, "seeds": seeds,
           "amount": amount, "shifts_s": list(alignment.SHIFTS_S)}
    groups = {"held-out": HELDOUT_VOICES, "validation": VALIDATION_VOICES} if voices is None else voices
    for group, paths in groups.items():
        for v in paths:
            if not (data_dir / v).is_file():
                continue
            clip = load_audio(data_dir / v)
            gains = [alignment.alignment_gain(clip.samples, clip.sample_rate,
                                              generate_gesture(clip, amount=amount, seed=s, model=model)
                                              .motion.world_positions(), dataset.FPS, mean_speed=mean_speed).gain
                     for s in range(seeds)]
            out["voices"][v] = {"group": group, "gain": float(np.nanmean(gains)), "gain_std": float(np.nanstd(gains)),
                                "gains": [float(g) for g in gains], "seconds": float(clip.seconds)}
    return out


def markdown(result: dict) -> str:
    r = result["real"]
    lines = [f"**Beat alignment gain** (BC ÷ mean BC of the same motion shifted ±1…±4 s; 1 = unrelated timing; "
             f"{result['seeds']} seeds)", "",
             f"Real BEAT2 capture on its own audio: {r['whole']['gain']:.3f} (whole take, "
             f"{r['whole']['seconds']:.0f} s), {r['heldout_tail']['gain']:.3f} (held-out last 20 %)", "",
             "| voice | group | s | gain (mean ± std over seeds) | ≥ real (whole) |", "|---|---|---|---|---|"]
    for v, row in result["voices"].items():
        ok = "yes" if row["gain"] >= r["whole"]["gain"] else "no"
        lines.append(f"| {Path(v).stem} | {row['group']} | {row['seconds']:.1f} | {row['gain']:.3f} ± "
                     f"{row['gain_std']:.3f} | {ok} |")
    return "\n".join(lines) + "\n"
