"""``rigmind eval gesture``: BC, L1Div and a Fréchet distance for our model,
the ground truth, a random-clip baseline and a mean-pose baseline.

Test material (never trained on): the last 20% of every paired take, and the
BEAT2 speech-only takes (no ground-truth motion: BC and L1Div only, FD
against all real motion of the speaker).

- BC: :func:`.metrics.bc_score` (EMAGE: librosa onsets vs per-joint speed
  minima of 13 upper-body joints, speed ÷ that joint's mean speed in the
  speaker's real motion, threshold 0.3, σ = 0.3 s, 2 s trimmed at both ends);
  "BC (EMAGE code)" reproduces their script's threshold-index slip, which is
  what their published numbers use.
- L1Div: :func:`.metrics.l1_diversity` on all 55 joints, pelvis-relative, metres.
- FD: Fréchet distance of :mod:`.motion_encoder` features (32-frame windows
  of the 22 body joints, stride 2), the encoder trained here on all training
  motion (Bandai gestures + the paired takes' training part) and committed as
  ``models/gesture_motion_encoder.pt``.
- Random clip: real training motion of the paired speaker, a random
  segment of the same length, ignoring the audio. Mean pose: the average
  training pose, still.
Every stochastic row is the mean over ``--seeds`` seeds.

``rigmind eval gesture --alignment`` adds the beat alignment gain on
held-out voices of several languages and synthetic speech beside the real
capture's (:mod:`.alignment_eval`).

``rigmind eval gesture --viewer`` measures instead what a viewer sees on
baked rigs (foot skate, frozen stretches, seams, hand space, Keep Legs
lean, gaze): :mod:`rigmind.evaluation.gesture_viewer`, Blender's side.

``rigmind eval gesture --styles`` measures the body's emotions and styles
instead (:mod:`.style_eval`).
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from datetime import date
from pathlib import Path

import numpy as np

from . import dataset
from . import metrics
from . import motion_encoder
from .. import limits, paths

REPO_ROOT = paths.PACKAGE_ROOT
ENCODER_PATH = paths.model_path("gesture_motion_encoder.pt")


def _load_encoder(corpus, retrain: bool, log):
    if ENCODER_PATH.exists() and not retrain:
        return motion_encoder.load_encoder(ENCODER_PATH)[0]
    import torch

    torch.set_num_threads(2)
    real = [dataset.positions(t.rot, t.root) for t in corpus.train_paired + corpus.unpaired]
    t0 = time.time()
    enc, stats = motion_encoder.train_encoder(real, motion_encoder.EncoderTrainConfig(steps=3000, seed=0))
    motion_encoder.save_encoder(ENCODER_PATH, enc, stats)
    log(f"[eval] trained the motion encoder in {time.time() - t0:.0f} s -> {ENCODER_PATH}")
    return motion_encoder.load_encoder(ENCODER_PATH)[0]


def _audio(path, start_frame=0, n_frames=None):
    from ..audio.loading import load_audio

    clip = load_audio(path)
    a = int(round(start_frame / dataset.FPS * clip.sample_rate))
    b = len(clip.samples) if n_frames is None else a + int(round(n_frames / dataset.FPS * clip.sample_rate))
    clip.samples = clip.samples[a:b]
    return clip


def _row(name, positions_list, clips, enc, ref_positions, mean_speed):
    bc = [metrics.bc_score(c.samples, c.sample_rate, p, dataset.FPS, mean_speed=mean_speed) for p, c in zip(positions_list, clips)]
    bce = [metrics.bc_score(c.samples, c.sample_rate, p, dataset.FPS, mean_speed=mean_speed, emage_compat=True)
           for p, c in zip(positions_list, clips)]
    fd = motion_encoder.frechet_motion_distance(enc, positions_list, ref_positions, stride=2) if ref_positions is not None else float("nan")
    return {"method": name, "BC": float(np.nanmean(bc)), "BC_emage_code": float(np.nanmean(bce)),
            "L1Div": metrics.l1_diversity(positions_list), "FD": fd}


def evaluate(data_dir, *, seeds: int = 5, amount: float = 0.5, retrain_encoder: bool = False, weights=None,
             log=print) -> dict:
    from ..audio.loading import load_audio
    from .generate import generate_gesture, get_model

    corpus = dataset.load_corpus(data_dir)
    model = get_model(weights)
    enc = _load_encoder(corpus, retrain_encoder, log)
    train_pos = [dataset.positions(t.rot, t.root) for t in corpus.train_paired]
    gt = [dataset.positions(t.rot, t.root) for t in corpus.heldout_paired]
    real_speaker = train_pos + gt
    mean_speed = metrics.mean_joint_speed(real_speaker, dataset.FPS)
    mean_pose = np.concatenate(train_pos).mean(axis=0)
    rng = np.random.default_rng(0)

    def random_clip(n):
        p = train_pos[rng.integers(len(train_pos))]
        a = rng.integers(0, max(len(p) - n, 1))
        return p[a:a + n]

    tables = {}
    # --- held-out tails of the paired takes ---------------------------------
    clips = [_audio(t.audio, t.start, t.num_frames) for t in corpus.heldout_paired]
    rows = [_row("ground truth", gt, clips, enc, gt, mean_speed)]
    t0 = time.time()
    ours = [[generate_gesture(c, amount=amount, seed=s, model=model).motion.world_positions()[:len(g)]
             for c, g in zip(clips, gt)] for s in range(seeds)]
    gen_seconds = time.time() - t0
    rows.append(_mean_rows("RigMind (ours)", [_row("", o, clips, enc, gt, mean_speed) for o in ours]))
    rows.append(_mean_rows("random clip", [_row("", [random_clip(len(g)) for g in gt], clips, enc, gt, mean_speed)
                                           for _ in range(seeds)]))
    rows.append(_row("mean pose", [np.repeat(mean_pose[None], len(g), 0) for g in gt], clips, enc, gt, mean_speed))
    tables["heldout_paired"] = {"seconds": sum(len(g) for g in gt) / dataset.FPS, "rows": rows}

    # --- speech-only takes ----------------------------------------------------
    if corpus.speech_only:
        sclips = [load_audio(w) for w in corpus.speech_only]
        rows = []
        ours = [[generate_gesture(c, amount=amount, seed=s, model=model).motion.world_positions()
                 for c in sclips] for s in range(min(seeds, 2))]
        rows.append(_mean_rows("RigMind (ours)", [_row("", o, sclips, enc, real_speaker, mean_speed) for o in ours]))
        n = [int(np.ceil(c.seconds * dataset.FPS)) for c in sclips]
        rows.append(_mean_rows("random clip", [
            _row("", [_tile_random(train_pos, k, rng) for k in n], sclips, enc, real_speaker, mean_speed)
            for _ in range(min(seeds, 2))]))
        rows.append(_row("mean pose", [np.repeat(mean_pose[None], k, 0) for k in n], sclips, enc, real_speaker, mean_speed))
        tables["speech_only"] = {"seconds": sum(c.seconds for c in sclips), "rows": rows}
    return {"tables": tables, "seeds": seeds, "amount": amount, "generation_seconds_heldout": gen_seconds,
            "machine": f"{platform.machine()} {platform.processor() or ''} ({__import__('os').cpu_count()} cores)",
            "date": date.today().isoformat(), "model": model.info}


def _tile_random(train_pos, n, rng):
    """n frames of random real segments (1–4 s each) back to back."""
    parts, got = [], 0
    while got < n:
        p = train_pos[rng.integers(len(train_pos))]
        k = int(rng.integers(30, 120))
        a = rng.integers(0, max(len(p) - k, 1))
        seg = p[a:a + k].copy()
        if parts:  # butt-join at the previous segment's pelvis, as a cut would look
            seg += parts[-1][-1:, :1] - seg[:1, :1]
        parts.append(seg)
        got += len(seg)
    return np.concatenate(parts)[:n]


def _mean_rows(name, rows):
    keys = [k for k in rows[0] if k != "method"]
    out = {"method": name}
    for k in keys:
        vals = np.array([r[k] for r in rows], dtype=float)
        out[k] = float(np.nanmean(vals))
        out[k + "_std"] = float(np.nanstd(vals))
    return out


def markdown(result: dict) -> str:
    lines = []
    titles = {"heldout_paired": "Held-out paired speech (last 20% of each take; FD against its ground truth)",
              "speech_only": "Speech-only takes (no ground truth; FD against all real motion of the speaker)"}
    for key, tab in result["tables"].items():
        lines += [f"**{titles[key]}** — {tab['seconds']:.1f} s", "",
                  "| method | BC ↑ | BC (EMAGE code) | L1Div (m, 55 joints) | FD ↓ |", "|---|---|---|---|---|"]
        for r in tab["rows"]:
            lines.append(f"| {r['method']} | {r['BC']:.3f} | {r['BC_emage_code']:.3f} | {r['L1Div']:.2f} | {r['FD']:.1f} |")
        lines.append("")
    return "\n".join(lines)


def main_eval(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="rigmind eval gesture", description="Measure the gesture model (BC, L1Div, FD).")
    ap.add_argument("--data", type=Path, default=paths.data_dir())
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--amount", type=float, default=0.5)
    ap.add_argument("--weights", type=Path, default=None)
    ap.add_argument("--retrain-encoder", action="store_true")
    ap.add_argument("--json", type=Path, default=None, help="also write the numbers as JSON")
    ap.add_argument("--alignment", action="store_true",
                    help="also the beat alignment gain on held-out voices (other speakers, languages, TTS)")
    ap.add_argument("--styles", action="store_true",
                    help="instead: emotion hand speed/height, style classifier and style-clip distances (#29)")
    ap.add_argument("--seconds", type=float, default=10.0, help="with --styles: seconds of each voice (0: whole)")
    ap.add_argument("--voices", type=int, default=3, help="with --styles: how many held-out voices (0: all 10)")
    args = ap.parse_args(argv)
    limits.check_model_tool_options(args, seconds="eval_seconds")
    limits.check_output_paths(args.json, example_suffix=".json")
    import torch

    torch.set_num_threads(2)
    if args.styles:
        return _styles_eval(args)
    if args.alignment:
        from . import alignment_eval

        al = alignment_eval.evaluate_alignment(args.data, seeds=args.seeds, amount=args.amount, weights=args.weights)
        print(alignment_eval.markdown(al))
    res = evaluate(args.data, seeds=args.seeds, amount=args.amount, retrain_encoder=args.retrain_encoder,
                   weights=args.weights)
    print(markdown(res))
    if args.alignment:
        res["alignment"] = al
    if args.json:
        args.json.write_text(json.dumps(res, indent=1))
    return 0


def _styles_eval(args) -> int:
    from . import style_eval

    voices = style_eval.HELDOUT_VOICES[: args.voices or None]
    res = style_eval.evaluate_styles(args.data, voices=voices, seconds=args.seconds or None, clip_voices=2)
    print(style_eval.markdown(res))
    if args.json:
        args.json.write_text(json.dumps({**res, "summary": style_eval.summary(res)}, indent=1))
    return 0
