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
``--pulses`` asks whether the model follows the beat pulses it is given.
``--stroke-grid`` scores settings of the beat-stroke layer
(:class:`BeatStrokeConfig`) on the validation voices (its defaults were
chosen there). ``--commands`` runs the whole command ``rigmind gesture --audio V --out X.npz``
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
from rigmind.backend.gesture import alignment, alignment_eval, dataset, representation
from beat_strokes import BeatStrokeConfig, add_beat_strokes, pulse_peaks
from rigmind.backend.gesture.generate import FPS, generate_from_features, get_model
from rigmind.backend.gesture.gesture_space import lift_hands, stress_envelope
from rigmind.backend.gesture.standing import plant_feet

HELDOUT = alignment_eval.HELDOUT_VOICES
VALIDATION = alignment_eval.VALIDATION_VOICES
STAGES = ("decoded", "planted", "lifted", "strokes")
STAGE_NAMES = ("decoded", "+ plant_feet", "+ lift_hands (today)", "+ beat strokes")
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


def real_windows(data: Path, mean_speed, parts: int = 5) -> list:
    """The real capture's gain on each of ``parts`` consecutive stretches of
    its take (how much the measure varies on real motion)."""
    take = dataset.load_paired_take(data / (alignment_eval.REAL_TAKE + ".npz"), data / (alignment_eval.REAL_TAKE + ".wav"))
    pos = dataset.positions(take.rot, take.root)
    clip = load_audio(take.audio)
    w = len(pos) // parts
    sr = clip.sample_rate
    return [alignment.alignment_gain(clip.samples[int(a / FPS * sr):int((a + w) / FPS * sr)], sr, pos[a:a + w], FPS,
                                     mean_speed=mean_speed).__dict__ for a in range(0, parts * w, w)]


def stage_positions(model, feats, seed: int, amount: float) -> dict:
    """World positions ``[T, 55, 3]`` after each step of gesture_from_features."""
    poses, pulse, energy, speech = generate_from_features(model, feats, amount=amount, seed=seed)
    decoded = representation.decode(poses, FPS, model.finger_basis)
    planted = plant_feet(decoded)
    stress = stress_envelope(energy, pulse, speech, model.energy_map["rest_energy"], FPS)
    lifted = lift_hands(planted, stress, amount, talking=speech)
    stroked = add_beat_strokes(lifted, pulse_peaks(pulse), stress, speech)
    return {"decoded": decoded.world_positions(), "planted": planted.world_positions(),
            "lifted": lifted.world_positions(), "strokes": stroked.world_positions()}


#: Settings of the beat-stroke layer tried on the validation voices (name → BeatStrokeConfig fields).
STROKE_GRID = {
    "off (+ lift_hands)": None,
    "default": {},
    "no settle (strokes + nod)": {"settle_depth": 0.0},
    "settle only": {"amplitude": 1e-6, "drift_speed": 0.0, "nod_degrees": 0.0},
    "settle 0.5": {"settle_depth": 0.5},
    "settle 0.5, wide (0.15/0.5 s)": {"settle_depth": 0.5, "settle_seconds": 0.15, "catchup_seconds": 0.5},
    "strokes 7 cm, no settle": {"settle_depth": 0.0, "amplitude": 0.07, "drift_speed": 0.15},
    "strokes 7 cm wide, no settle": {"settle_depth": 0.0, "amplitude": 0.07, "drift_speed": 0.15,
                                     "rise_seconds": 0.1, "release_seconds": 0.14},
    "snap 0.2 s only": {"snap_seconds": 0.2, "settle_depth": 0.0, "amplitude": 1e-6, "drift_speed": 0.0,
                        "nod_degrees": 0.0},
    "snap 0.2 s + strokes + nod": {"snap_seconds": 0.2, "settle_depth": 0.0},
    "snap 0.2 s + settle 0.5": {"snap_seconds": 0.2, "settle_depth": 0.5},
    "nod 4 deg only": {"settle_depth": 0.0, "amplitude": 1e-6, "drift_speed": 0.0, "nod_degrees": 4.0},
}


def score_ceiling(data: Path, voices, amount: float, gaps=(0.27, 0.4, 0.6)) -> dict:
    """The most any beat layer could reach: the gain of a motion whose 13
    upper-body joints all have their speed minima exactly on a beat set and
    nowhere else — the model's pulses (seed 0), and the speech's strongest
    librosa onsets (the audio beats BC uses) at least ``gaps`` seconds apart."""
    import librosa
    from rigmind.backend.gesture import controls, metrics

    model = get_model()
    out = {}
    for v in voices:
        clip = load_audio(data / v)
        feats = speech_features(clip, FPS)
        T = feats.num_frames
        trim = metrics.BC_TRIM_S if T / FPS >= 4 * metrics.BC_TRIM_S + 1 else max(0.0, (T / FPS - 1) / 4)
        f0 = int(round(trim * FPS))
        f1 = max(T - f0, f0)
        sr = clip.sample_rate
        y = np.asarray(clip.samples, np.float32)[: int(round(T / FPS * sr))]
        onsets = metrics.audio_beats(y[int(round(f0 / FPS * sr)):int(round(f1 / FPS * sr))], sr)
        y16 = librosa.resample(y, orig_sr=sr, target_sr=metrics.AUDIO_SR) if sr != metrics.AUDIO_SR else y
        env = librosa.onset.onset_strength(y=y16, sr=metrics.AUDIO_SR, hop_length=metrics.ONSET_HOP)
        fr = librosa.onset.onset_detect(onset_envelope=env, sr=metrics.AUDIO_SR, hop_length=metrics.ONSET_HOP)
        t = librosa.frames_to_time(fr, sr=metrics.AUDIO_SR, hop_length=metrics.ONSET_HOP)
        pulse = controls.audio_controls(feats, model.energy_map, model.beat_rate, amount, np.random.default_rng(0))[0]
        sets = {"pulses": pulse_peaks(pulse) / FPS}
        for g in gaps:
            chosen = []
            for i in np.argsort(-env[fr]):
                if all(abs(t[i] - c) >= g for c in chosen):
                    chosen.append(t[i])
            sets[f"onsets ≥ {g} s apart"] = np.sort(np.asarray(chosen))
        span = (f1 - f0) / FPS
        out[v] = {}
        for k, b in sets.items():
            b = b[(b >= f0 / FPS) & (b < f1 / FPS)] - f0 / FPS
            out[v][k] = {"gain": alignment.alignment_from_beats(onsets, [b] * 13, span).gain,
                         "per_s": len(b) / max(span, 1e-9)}
        print(v, {k: round(r["gain"], 3) for k, r in out[v].items()}, flush=True)
    return out


def score_stroke_grid(data: Path, voices, seeds: int, amount: float, mean_speed) -> dict:
    """Gain per voice for each :data:`STROKE_GRID` setting, on the same lifted motion."""
    from rigmind.backend.gesture.generate import standing_gesture

    model = get_model()
    from rigmind.backend.gesture.viewer_metrics import largest_acceleration

    arms = [representation.names().index(n) for n in ("left_elbow", "right_elbow", "left_wrist", "right_wrist")]
    out = {name: {} for name in STROKE_GRID}
    accel = {name: [] for name in STROKE_GRID}
    for v in voices:
        clip = load_audio(data / v)
        feats = speech_features(clip, FPS)
        rows = {name: [] for name in STROKE_GRID}
        for seed in range(seeds):
            res, stress = standing_gesture(model, feats, amount=amount, seed=seed)
            lifted = lift_hands(res.motion, stress, amount, talking=res.speech)
            for name, kw in STROKE_GRID.items():
                p = (lifted if kw is None else add_beat_strokes(lifted, pulse_peaks(res.pulses), stress, res.speech,
                                                                BeatStrokeConfig(**kw))).world_positions()
                rows[name].append(alignment.alignment_gain(clip.samples, clip.sample_rate, p, FPS,
                                                           mean_speed=mean_speed).gain)
                accel[name].append(largest_acceleration(p[:, arms]))
        for name in STROKE_GRID:
            out[name][v] = rows[name]
        print(v, {k: f"{np.nanmean(g):.3f}" for k, g in rows.items()}, flush=True)
    out["_arm_accel_max_mm"] = {k: float(np.max(a)) for k, a in accel.items()}
    print("largest elbow/wrist acceleration (mm/frame²):", {k: round(float(np.max(a)), 1) for k, a in accel.items()})
    return out


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


def pulse_frames(pulse: np.ndarray) -> np.ndarray:
    """Beat frames of a pulse track (its full-height local maxima)."""
    x = np.r_[-1.0, pulse, -1.0]
    return np.nonzero((x[1:-1] >= x[:-2]) & (x[1:-1] > x[2:]) & (pulse > 0.9))[0]


def score_pulses(data: Path, voices, seeds: int, amount: float, mean_speed, temperatures=(1.0, 0.3)) -> dict:
    """Does the model follow the beats it is given? Per voice (untrimmed,
    the whole take as the span): the gain of the decoded motion's beats
    against its own pulses (BC beats, and the training definition
    ``controls.motion_beat_frames``), of the pulses against the speech's
    onsets, and L1Div (m), at each latent temperature."""
    from rigmind.backend.gesture import controls, metrics

    model = get_model()
    out = {}
    for v in voices:
        clip = load_audio(data / v)
        feats = speech_features(clip, FPS)
        onsets = metrics.audio_beats(clip.samples, clip.sample_rate)
        out[v] = {}
        for temp in temperatures:
            rows = []
            for seed in range(seeds):
                poses, pulse, _, _ = generate_from_features(model, feats, amount=amount, seed=seed, temperature=temp)
                pos = representation.decode(poses, FPS, model.finger_basis).world_positions()
                span = len(pos) / FPS
                pf = pulse_frames(pulse) / FPS
                bc_beats = metrics.motion_beats(pos, FPS, mean_speed=mean_speed, per_joint=True)
                train_beats = controls.motion_beat_frames(pos, FPS) / FPS
                rows.append([alignment.alignment_from_beats(pf, bc_beats, span).gain,
                             alignment.alignment_from_beats(pf, [train_beats], span).gain,
                             alignment.alignment_from_beats(onsets, [pf], span).gain, metrics.l1_diversity(pos)])
            m = np.nanmean(np.asarray(rows, float), axis=0)
            out[v][str(temp)] = dict(zip(("motion_vs_pulses", "train_beats_vs_pulses", "pulses_vs_onsets", "l1div"),
                                         map(float, m)))
            print(v, temp, {k: round(x, 3) for k, x in out[v][str(temp)].items()}, flush=True)
    return out


def _ms(g) -> str:
    g = np.asarray(g, float)
    return f"{np.nanmean(g):.3f} ± {np.nanstd(g):.3f}"


def markdown(res: dict, labels: dict) -> str:
    """The results tables from a run's JSON (``labels``: tree path → column name)."""
    real = res["real"]["whole"]["gain"]
    lines = [f"Real BEAT2 capture on its own audio: **{real:.3f}** (whole take, {res['real']['whole']['seconds']:.1f} s "
             f"scored), {res['real']['heldout_tail']['gain']:.3f} (its held-out last 20 %, "
             f"{res['real']['heldout_tail']['seconds']:.1f} s). Seeds: {res['seeds']}; amount {res['amount']}.", ""]
    wins = [r.get("windows") for r in [res["real"]] if r.get("windows")]
    if wins:
        lines += ["The real capture on 5 consecutive stretches of its take "
                  f"({wins[0][0]['seconds']:.1f} s scored each): "
                  + ", ".join(f"{w['gain']:.3f}" for w in wins[0]) + ".", ""]
    for group in ("heldout", "validation"):
        if group not in res.get("stages", {}):
            continue
        trees = [t for t in res.get("trees", {}) if group in res["trees"][t]]
        stages = [s for s in STAGES if all(s in st for st in res["stages"][group].values())]
        head = ["voice"] + [STAGE_NAMES[STAGES.index(s)] for s in stages]
        head += ["`rigmind gesture --out .npz`"] if group in res.get("commands", {}) else []
        head += [labels.get(t, t) for t in trees] + ["today ≥ real"] + (["strokes ≥ real"] if "strokes" in stages else [])
        lines += [f"**{'Held-out voices (never tuned on)' if group == 'heldout' else 'Validation voices'}**", "",
                  "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for v, st in res["stages"][group].items():
            row = [Path(v).stem] + [_ms(st[s]) for s in stages]
            if group in res.get("commands", {}):
                row.append(_ms(res["commands"][group][v]))
            row += [_ms(res["trees"][t][group][v]) for t in trees]
            row.append("yes" if np.nanmean(st["lifted"]) >= real else "no")
            if "strokes" in stages:
                row.append("yes" if np.nanmean(st["strokes"]) >= real else "no")
            lines.append("| " + " | ".join(row) + " |")
        means = ["**mean**"] + [f"{np.nanmean([np.nanmean(st[s]) for st in res['stages'][group].values()]):.3f}"
                                for s in stages]
        if group in res.get("commands", {}):
            means.append(f"{np.nanmean([np.nanmean(g) for g in res['commands'][group].values()]):.3f}")
        means += [f"{np.nanmean([np.nanmean(g) for g in res['trees'][t][group].values()]):.3f}" for t in trees]
        lines += ["| " + " | ".join(means + [""] * (2 if "strokes" in stages else 1)) + " |", ""]
    for group, rows in res.get("ceiling", {}).items():
        sets = list(next(iter(rows.values())))
        lines += [f"**Ceiling: every joint's beats exactly on a beat set ({group} voices)**", "",
                  "| voice | " + " | ".join(sets) + " |", "|---|" + "---|" * len(sets)]
        for v, r in rows.items():
            lines.append(f"| {Path(v).stem} | " + " | ".join(f"{r[k]['gain']:.3f} ({r[k]['per_s']:.1f}/s)" for k in sets)
                         + " |")
        lines.append("")
    grid = res.get("stroke_grid")
    if grid:
        voices = [v for v in next(iter(grid.values())) if not v.startswith("_")]
        names = [k for k in grid if not k.startswith("_")]
        lines += [f"**Beat-stroke settings (validation voices, {res['seeds']} seeds; `--stroke-grid`)**", "",
                  "| setting | " + " | ".join(Path(v).stem for v in voices) + " | mean | largest elbow/wrist accel mm/f² |",
                  "|---|" + "---|" * (len(voices) + 2)]
        for k in names:
            g = [float(np.nanmean(grid[k][v])) for v in voices]
            lines.append(f"| {k} | " + " | ".join(f"{x:.3f}" for x in g)
                         + f" | {np.mean(g):.3f} | {grid['_arm_accel_max_mm'][k]:.1f} |")
        lines.append("")
    for group, rows in res.get("pulses", {}).items():
        lines += [f"**Does the motion follow its own beat pulses? ({group} voices, untrimmed)**", "",
                  "| voice | latent temperature | motion beats vs its pulses | training-definition beats vs its pulses "
                  "| pulses vs the speech's onsets | L1Div (m) |", "|---|---|---|---|---|---|"]
        for v, by_t in rows.items():
            for t, r in by_t.items():
                lines.append(f"| {Path(v).stem} | {t} | {r['motion_vs_pulses']:.3f} | {r['train_beats_vs_pulses']:.3f} "
                             f"| {r['pulses_vs_onsets']:.3f} | {r['l1div']:.2f} |")
        lines.append("")
    return "\n".join(lines)


VIEWER_KEYS = (("skate_cm_per_frame", "skate cm/frame", 3), ("frozen_frames", "frozen", 0), ("seam48", "seam 48", 2),
               ("seam32", "seam 32", 2), ("hands_sum_cm", "hands W1 h + f cm", 2),
               ("arm_accel_max_mm", "arm accel mm/f²", 1))


def viewer_table(before: dict, after: dict) -> str:
    """``rigmind eval gesture --viewer --json`` before and after, per rig and take: ``before → after``."""
    key = lambda r: (r.get("rig"), r.get("take"))  # noqa: E731
    b = {key(r): r for r in before["rows"]}
    lines = ["| rig | take | " + " | ".join(k[1] for k in VIEWER_KEYS) + " |", "|---|---|" + "---|" * len(VIEWER_KEYS)]
    for r in after["rows"]:
        if "skate_cm_per_frame" not in r or key(r) not in b:
            continue
        cells = []
        for k, _, nd in VIEWER_KEYS:
            x, y = b[key(r)].get(k), r.get(k)
            cells.append("–" if x is None else f"{x:.{nd}f} → {y:.{nd}f}")
        lines.append(f"| {r['rig']} | {r['take']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=paths.data_dir())
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--amount", type=float, default=0.5)
    ap.add_argument("--stages", action="store_true", help="score each pipeline step in process")
    ap.add_argument("--commands", action="store_true", help="score whole `rigmind gesture` commands")
    ap.add_argument("--viewer", nargs=2, type=Path, metavar=("BEFORE", "AFTER"),
                    help="print `rigmind eval gesture --viewer --json` before/after side by side and stop")
    ap.add_argument("--real-windows", action="store_true", help="the real capture's gain on 5 stretches of its take")
    ap.add_argument("--pulses", action="store_true", help="does the motion follow its own beat pulses?")
    ap.add_argument("--stroke-grid", action="store_true", help="beat-stroke settings (validation voices only)")
    ap.add_argument("--ceiling", action="store_true", help="the gain of every joint's beats exactly on a beat set")
    ap.add_argument("--tree", type=Path, action="append", default=[],
                    help="also score generate_gesture of another source tree (repeatable)")
    ap.add_argument("--only", choices=("heldout", "validation", "both"), default="both")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--markdown", nargs="+", metavar="JSON [TREE=LABEL ...]",
                    help="print the tables of earlier runs' JSON files (merged) and stop")
    args = ap.parse_args(argv)
    if args.viewer:
        print(viewer_table(*(json.loads(p.read_text()) for p in args.viewer)))
        return 0
    if args.markdown:
        files = [a for a in args.markdown if "=" not in a]
        labels = dict(a.split("=", 1) for a in args.markdown if "=" in a)
        merged = {}
        for f in files:
            for k, v in json.loads(Path(f).read_text()).items():
                if isinstance(v, dict) and isinstance(merged.get(k), dict):
                    for kk, vv in v.items():
                        merged[k].setdefault(kk, {}).update(vv) if isinstance(vv, dict) else merged[k].update({kk: vv})
                else:
                    merged.setdefault(k, v)
        print(markdown(merged, labels))
        return 0
    import torch

    torch.set_num_threads(1)
    t0 = time.time()
    mean_speed, real = real_reference(args.data)
    print("real capture on its own audio:", {k: f"{v['gain']:.3f}" for k, v in real.items()}, flush=True)
    voices = {"heldout": HELDOUT, "validation": VALIDATION}
    if args.only != "both":
        voices = {args.only: voices[args.only]}
    if args.real_windows:
        real["windows"] = real_windows(args.data, mean_speed)
        print("real capture, 5 stretches:", [round(w["gain"], 3) for w in real["windows"]], flush=True)
    res = {"real": real, "seeds": args.seeds, "amount": args.amount, "shifts_s": list(alignment.SHIFTS_S)}
    for name, vs in voices.items():
        if args.stages:
            res.setdefault("stages", {})[name] = score_stages(args.data, vs, args.seeds, args.amount, mean_speed)
        if args.commands:
            res.setdefault("commands", {})[name] = score_commands(args.data, vs, args.seeds, mean_speed, sys.executable)
        if args.ceiling:
            res.setdefault("ceiling", {})[name] = score_ceiling(args.data, vs, args.amount)
        if args.stroke_grid and name == "validation":
            res["stroke_grid"] = score_stroke_grid(args.data, vs, args.seeds, args.amount, mean_speed)
        if args.pulses:
            res.setdefault("pulses", {})[name] = score_pulses(args.data, vs, args.seeds, args.amount, mean_speed)
        for tree in args.tree:
            res.setdefault("trees", {}).setdefault(str(tree), {})[name] = score_tree(
                args.data, vs, args.seeds, mean_speed, tree, sys.executable)
    res["seconds"] = time.time() - t0
    if args.json:
        args.json.write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
