"""Beat alignment on voices unlike the training speaker (issue #29 item 5).

The measure: :func:`rigmind.backend.gesture.alignment.alignment_gain` (BC of
the motion against its speech ÷ the mean BC of the same motion circularly
shifted by ±1 … ±4 s; 1 = unrelated timing). Joint speeds are normalised by
the real BEAT2 speaker's mean speeds (the whole paired take) for every
motion, as ``rigmind eval gesture`` does.

Voices:
- reference: the real BEAT2 capture (2_scott_0_1_1) on its own audio;
- held-out (never tuned on): every ``speech_multilingual`` file (Silero TTS
  de/en/es/ru; LibriSpeech English, AISHELL Mandarin) and LJSpeech
  LJ001-0001, -0003, -0014, -0027;
- validation (the only voices a setting was chosen on here): the training
  speaker's other takes 2_scott_0_2_2 … 0_5_5 and LJSpeech LJ001-0010,
  -0015, -0021, -0025.

``--stages`` scores each step of ``gesture_from_features`` in process: the
model's poses decoded, after ``plant_feet``, after ``lift_hands``.
``--tree PATH`` runs ``generate_gesture`` of another source tree (an old
commit checked out with ``git worktree add --detach``) and scores it here.
``--commands`` runs the whole command ``rigmind gesture --audio V --out X.npz``
per voice and seed and scores the file.

    PYTHONPATH=/tmp/pkg nice -n 10 python bench/bench_beat_alignment.py --stages --commands \
        --tree ../wt-old --seeds 3 --json bench/results/gesture_alignment.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from rigmind.backend import paths
from rigmind.backend.audio.features import speech_features
from rigmind.backend.audio.loading import load_audio
from rigmind.backend.gesture import alignment, alignment_eval, representation
from rigmind.backend.gesture.generate import FPS, generate_from_features, get_model
from rigmind.backend.gesture.gesture_space import lift_hands, stress_envelope
from rigmind.backend.gesture.standing import plant_feet

HELDOUT = alignment_eval.HELDOUT_VOICES
VALIDATION = alignment_eval.VALIDATION_VOICES
STAGES = ("decoded", "planted", "lifted")
# Run in another source tree (its own rigmind on the path): only the public
# generate_gesture of every version since the gesture model came in.
TREE_SCRIPT = """
import sys, numpy as np
from pathlib import Path
from rigmind.backend.audio.loading import load_audio
from rigmind.backend.gesture.generate import generate_gesture, get_model
import torch; torch.set_num_threads(1)
out, seeds, data = Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
model = get_model()
for v in sys.argv[4:]:
    clip = load_audio(data / v)
    for s in range(seeds):
        p = generate_gesture(clip, seed=s, model=model).motion.world_positions()
        np.save(out / (Path(v).stem + f"_{s}.npy"), p.astype(np.float32))
"""


def real_reference(data: Path):
    """``(mean_speed [55], row)``: the real speaker's mean joint speeds and
    the real capture's alignment on its own audio (whole take, and the
    held-out last 20 % alone)."""
    mean_speed, whole, tail = alignment_eval.real_reference(data)
    return mean_speed, {"whole": whole.__dict__, "heldout_tail": tail.__dict__}


def stage_positions(model, feats, seed: int, amount: float) -> dict:
    """World positions ``[T, 55, 3]`` after each step of gesture_from_features."""
    poses, pulse, energy, speech = generate_from_features(model, feats, amount=amount, seed=seed)
    decoded = representation.decode(poses, FPS, model.finger_basis)
    planted = plant_feet(decoded)
    stress = stress_envelope(energy, pulse, speech, model.energy_map["rest_energy"], FPS)
    lifted = lift_hands(planted, stress, amount, talking=speech)
    return {"decoded": decoded.world_positions(), "planted": planted.world_positions(),
            "lifted": lifted.world_positions()}


def score_stages(data: Path, voices, seeds: int, amount: float, mean_speed) -> dict:
    model = get_model()
    out = {}
    for v in voices:
        clip = load_audio(data / v)
        feats = speech_features(clip, FPS)
        rows = {s: [] for s in STAGES}
        for seed in range(seeds):
            for s, p in stage_positions(model, feats, seed, amount).items():
                rows[s].append(alignment.alignment_gain(clip.samples, clip.sample_rate, p, FPS,
                                                        mean_speed=mean_speed).gain)
        out[v] = {s: rows[s] for s in STAGES}
        print(v, {s: f"{np.nanmean(g):.3f}±{np.nanstd(g):.3f}" for s, g in rows.items()}, flush=True)
    return out


def score_commands(data: Path, voices, seeds: int, mean_speed, python: str) -> dict:
    """The whole command per voice and seed, scored from the written .npz."""
    from rigmind.backend.smplx_motion import read_smplx_npz

    out = {}
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        for v in voices:
            clip = load_audio(data / v)
            gains = []
            for seed in range(seeds):
                f = Path(tmp) / f"{Path(v).stem}_{seed}.npz"
                cmd = [python, "-m", "rigmind", "gesture", "--audio", str(data / v), "--out", str(f),
                       "--seed", str(seed)]
                subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
                m = read_smplx_npz(f)
                gains.append(alignment.alignment_gain(clip.samples, clip.sample_rate, m.world_positions(), m.fps,
                                                      mean_speed=mean_speed).gain)
            out[v] = gains
            print(v, f"{np.nanmean(gains):.3f}±{np.nanstd(gains):.3f}", flush=True)
    return out


def score_tree(data: Path, voices, seeds: int, mean_speed, tree: Path, python: str) -> dict:
    """Generation by the source tree ``tree`` (e.g. an old commit's
    ``git worktree``), scored here."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        pkg = Path(tmp) / "pkg"
        pkg.mkdir()
        (pkg / "rigmind").symlink_to(Path(tree).resolve())
        env = dict(os.environ, PYTHONPATH=str(pkg))
        subprocess.run([python, "-c", TREE_SCRIPT, tmp, str(seeds), str(data), *voices], check=True, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp)
        for v in voices:
            clip = load_audio(data / v)
            out[v] = [alignment.alignment_gain(clip.samples, clip.sample_rate, np.load(Path(tmp) / f"{Path(v).stem}_{s}.npy"),
                                               FPS, mean_speed=mean_speed).gain for s in range(seeds)]
            print(v, f"{np.nanmean(out[v]):.3f}±{np.nanstd(out[v]):.3f}", flush=True)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=paths.data_dir())
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--amount", type=float, default=0.5)
    ap.add_argument("--stages", action="store_true", help="score each pipeline step in process")
    ap.add_argument("--commands", action="store_true", help="score whole `rigmind gesture` commands")
    ap.add_argument("--tree", type=Path, action="append", default=[],
                    help="also score generate_gesture of another source tree (repeatable)")
    ap.add_argument("--only", choices=("heldout", "validation", "both"), default="both")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    t0 = time.time()
    mean_speed, real = real_reference(args.data)
    print("real capture on its own audio:", {k: f"{v['gain']:.3f}" for k, v in real.items()}, flush=True)
    voices = {"heldout": HELDOUT, "validation": VALIDATION}
    if args.only != "both":
        voices = {args.only: voices[args.only]}
    res = {"real": real, "seeds": args.seeds, "amount": args.amount, "shifts_s": list(alignment.SHIFTS_S)}
    for name, vs in voices.items():
        if args.stages:
            res.setdefault("stages", {})[name] = score_stages(args.data, vs, args.seeds, args.amount, mean_speed)
        if args.commands:
            res.setdefault("commands", {})[name] = score_commands(args.data, vs, args.seeds, mean_speed, sys.executable)
        for tree in args.tree:
            res.setdefault("trees", {}).setdefault(str(tree), {})[name] = score_tree(
                args.data, vs, args.seeds, mean_speed, tree, sys.executable)
    res["seconds"] = time.time() - t0
    if args.json:
        args.json.write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
