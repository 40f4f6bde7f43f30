"""``rigmind eval face``: lip-sync metrics for the learned model, for English
word recognition + forced alignment (``method="words"``) and for the
Rhubarb-style baseline (pocketsphinx allphone → visemes → table).

- VER: viseme error rate on LJ001-0001..0008 (the LJ clips with transcripts,
  never trained on) without transcript: edit distance of the collapsed
  predicted visemes vs the CMU-dictionary visemes of the transcript / length.
- Bilabial closure: share of the aligned p/b/m phones with the lips closed
  (mouthClose ≥ 0.1 or jawOpen ≤ 0.05) within ±40 ms, with the transcript
  (the pipeline's transcript path) and without it (each method).
- Timing: on held-out synthesised speech (eSpeak, unseen seed, 5 languages),
  mean distance (ms) from each true viseme boundary to the nearest predicted
  one, and the symmetric mean (also predicted → true).
- Jaw: Pearson r of generated jawOpen with the BEAT2 speaker's real jaw
  angle on the held-out last 30 % of take 2_scott_0_1_1.
- Silence: the largest mouth-shape weight on frames without voice activity.
"""

from __future__ import annotations

import argparse
import platform
import time
from datetime import date
from pathlib import Path

import numpy as np

from ..audio import load_audio
from .. import limits
from ..errors import UserError
from . import metrics
from .generate import generate_face
from .train import BEAT_TRAIN_FRACTION, beat_jaw, default_data, synth_item, synthesis_words
from .visemes import ipa_to_viseme, mouth_channels

FPS = 30.0
EVAL_SEED = 12345
EVAL_LANGS = ("en-us", "de", "es", "fr", "it")


class LJMetadataError(UserError):
    """An LJSpeech metadata.csv that cannot be read (missing, not UTF-8 text)."""


def read_lj_metadata(path) -> list:
    """``[(clip id, transcript)]`` from an LJSpeech ``metadata.csv``: UTF-8,
    one ``ID|transcript|normalised transcript`` a line (``|`` between
    fields, no quoting); lines with fewer fields are skipped. The
    transcript is the normalised one (numbers and abbreviations spelled
    out)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise LJMetadataError(f"{path}: cannot be read as LJSpeech metadata ({type(e).__name__}); pass --data "
                              "with the shared data folder, whose speech_english_ljspeech holds it") from None
    rows = [line.split("|") for line in text.split("\n")]
    return [(r[0], r[2]) for r in rows if len(r) >= 3]


def _lj(data: Path):
    lj = data / "speech_english_ljspeech"
    return [(lj / "wavs" / f"{clip}.wav", text) for clip, text in read_lj_metadata(lj / "metadata.csv")]


def _silence_max(anim, speech_at_fps) -> float:
    off = ~np.asarray(speech_at_fps, bool)
    return float(anim.weights[off][:, mouth_channels()].max()) if off.any() else 0.0


def _speech_at(clip, n, fps):
    from ..audio.features import speech_mask

    return speech_mask(clip.samples, fps, n)


def evaluate(data: Path, methods=("model", "table"), n_synth: int = 25, log=print) -> dict:
    res = {m: {"ver_err": 0, "ver_len": 0, "bil_closed": 0, "bil_total": 0, "bound": [], "bound_sym": [],
               "silence": 0.0} for m in methods}
    res["transcript"] = {"bil_closed": 0, "bil_total": 0, "silence": 0.0}
    lj = _lj(data)
    for wav, text in lj:
        clip = load_audio(wav)
        ref, _missing = metrics.reference_visemes(text)
        aligned = generate_face(clip, transcript=text, fps=FPS)
        n = aligned.num_frames
        sp = _speech_at(clip, n, FPS)
        c, t = metrics.bilabial_closure(aligned.weights, aligned.names, FPS, aligned.phones)
        r = res["transcript"]
        r["bil_closed"] += c
        r["bil_total"] += t
        r["silence"] = max(r["silence"], _silence_max(aligned, sp))
        for m in methods:
            anim = generate_face(clip, fps=FPS, method=m)
            e, ln = metrics.viseme_error_rate([v for _, _, v in anim.visemes], ref)
            res[m]["ver_err"] += e
            res[m]["ver_len"] += ln
            c, t = metrics.bilabial_closure(anim.weights, anim.names, FPS, aligned.phones)
            res[m]["bil_closed"] += c
            res[m]["bil_total"] += t
            res[m]["silence"] = max(res[m]["silence"], _silence_max(anim, sp))
        log(f"  {wav.name}: done")
    # timing on held-out synthesised speech
    words = synthesis_words()
    rng = np.random.default_rng(EVAL_SEED)
    for k in range(n_synth):
        _x, _lab, _jaw, phones, clip = synth_item(rng, words, lang=EVAL_LANGS[k % len(EVAL_LANGS)], aug=False)
        true = [(s, e, ipa_to_viseme(p)) for s, e, p in phones]
        true = _merge(true)
        n = int(np.ceil(clip.seconds * FPS))
        sp = _speech_at(clip, n, FPS)
        for m in methods:
            anim = generate_face(clip, fps=FPS, method=m)
            pred = _merge(anim.visemes)
            res[m]["bound"].append(metrics.boundary_error_ms(pred, true))
            res[m]["bound_sym"].append(0.5 * (metrics.boundary_error_ms(pred, true) + metrics.boundary_error_ms(true, pred)))
            res[m]["silence"] = max(res[m]["silence"], _silence_max(anim, sp))
    log("  synthesised timing: done")
    # jaw vs BEAT2
    beat = data / "beat2_speech_gesture_sample"
    clip = load_audio(beat / "2_scott_0_1_1.wav")
    real = beat_jaw(beat / "2_scott_0_1_1.npz", fps=FPS)
    for m in methods:
        anim = generate_face(clip, fps=FPS, method=m)
        n = min(len(real), anim.num_frames)
        cut = int(BEAT_TRAIN_FRACTION * n)
        res[m]["jaw_r"] = metrics.pearson(anim.curve("jawOpen")[cut:n], real[cut:n])
        sp = _speech_at(clip, anim.num_frames, FPS)
        res[m]["silence"] = max(res[m]["silence"], _silence_max(anim, sp))
    return res


def _merge(segs):
    out = []
    for s, e, v in segs:
        if out and out[-1][2] == v:
            out[-1] = (out[-1][0], e, v)
        else:
            out.append((s, e, v))
    return out


def table(res: dict, methods) -> str:
    label = {"model": "learned model (ensemble of 3, models/face*.pt)", "words": "English word recognition → alignment → table (method words)",
             "table": "Rhubarb-style baseline (allphone → table)"}
    lines = ["| method | VER (no transcript) ↓ | bilabial closed (no transcript) ↑ | boundary error ms ↓ "
             "(true→pred / symmetric) | jaw r (BEAT2 held-out) ↑ | max mouth weight in silence ↓ |",
             "|---|---|---|---|---|---|"]
    for m in methods:
        r = res[m]
        lines.append(f"| {label[m]} | {100 * r['ver_err'] / max(r['ver_len'], 1):.1f} % "
                     f"| {100 * r['bil_closed'] / max(r['bil_total'], 1):.1f} % ({r['bil_closed']}/{r['bil_total']}) "
                     f"| {np.nanmean(r['bound']):.0f} / {np.nanmean(r['bound_sym']):.0f} "
                     f"| {r['jaw_r']:.2f} | {r['silence']:.3f} |")
    t = res["transcript"]
    lines.append(f"| with transcript (forced alignment → table) | — | "
                 f"{100 * t['bil_closed'] / max(t['bil_total'], 1):.1f} % ({t['bil_closed']}/{t['bil_total']}) | — | — "
                 f"| {t['silence']:.3f} |")
    return "\n".join(lines)


def main_eval(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="rigmind eval face", description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=default_data())
    ap.add_argument("--synth", type=int, default=25, help="held-out synthesised utterances for timing (default 25)")
    ap.add_argument("--out", type=Path, default=Path("bench/face_eval.md"))
    ap.add_argument("--emotion", action="store_true",
                    help="instead: the emotions vs neutral on held-out voices, against the #29 acceptance")
    ap.add_argument("--voices", type=int, default=3, help="with --emotion: how many held-out voices (default 3; 0: all 10)")
    ap.add_argument("--json", type=Path, default=None, help="with --emotion: also write the numbers as JSON")
    args = ap.parse_args(argv)
    limits.check_model_tool_options(args)
    # --out is the lip-sync report's; --json goes with --emotion, which writes no report.
    limits.check_output_paths(None if args.emotion else args.out, example_suffix=".md")
    limits.check_output_paths(args.json, example_suffix=".json")
    import torch

    torch.set_num_threads(1)
    if args.emotion:
        return _emotion_eval(args)
    if not (args.data / "speech_english_ljspeech").is_dir():
        raise UserError(f"{args.data} lacks speech_english_ljspeech: pass --data with the shared data folder")
    methods = ("model", "words", "table")
    t0 = time.time()
    res = evaluate(args.data, methods, n_synth=args.synth)
    md = (f"# Face eval ({date.today().isoformat()}, {platform.machine()}, {time.time() - t0:.0f} s)\n\n"
          f"`rigmind eval face --data {args.data}`\n\n{table(res, methods)}\n")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(md, encoding="utf-8")
    print(md)
    return 0


def _emotion_eval(args) -> int:
    import json

    from . import emotion_eval

    lj_text = dict(read_lj_metadata(args.data / "speech_english_ljspeech" / "metadata.csv"))
    res = emotion_eval.evaluate_emotions(args.data, lj_text, n_voices=args.voices)
    print(emotion_eval.markdown(res))
    if args.json:
        args.json.write_text(json.dumps({**res, "summary": emotion_eval.summary(res)}, indent=1))
    return 0
