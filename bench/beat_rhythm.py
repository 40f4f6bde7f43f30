"""Beats that follow any voice (issue #29 item 5): the body settling where the speech's onsets thin out.

``backend/gesture/speech_rhythm.py`` (in ``rigmind gesture`` since this
script came in) scales the fast part of the decoded motion down where the
speech's onset density is in the take's lowest quantiles. This script:

- ``--ceiling``: why — the gain of the committed pipeline's own beats with
  those in the sparsest quarter of the speech (onset density, σ 0.3 s)
  dropped, against the beats as they are (validation voices);
- ``--grid``: :class:`RhythmConfig` settings and the generator's window
  advances (fixed 32-frame stride, varied on the latent code grid
  ``generate.STRIDES``, or varied off it, ``generate.ADVANCES``) on the
  validation voices (the only voices a setting is chosen on), with the
  largest elbow/wrist acceleration, the longest frozen stretch, the skate
  and the seams;
- ``--short``: the settings that matter on the 24 other LJSpeech clips
  (``VALIDATION_SHORT``, 2-10 s each): how often a short clip's gain reaches
  the real capture's, where one clip's gain moves by ~0.1 with the seed;
- ``--heldout``: the committed setting and the pipeline without it on the
  held-out voices (never tuned on), scored once;
- ``--commands``: whole ``rigmind gesture --audio V --out X.npz --seed S``
  processes on the held-out voices, the file scored;
- ``--pulse-dip``: does the model slow down on the beat pulses it is given?
  The upper body's mean speed on the pulse frames ÷ its mean speed while
  talking (validation voices, the decoded take without the beat search),
  beside the real capture's on its own motion-beat pulses (how the model is
  trained) and on pulses picked from its speech (how it is driven);
- ``--model PATH``: every row with that gesture model (a retrained one)
  instead of the committed ``models/gesture``; ``--skip-without`` leaves out
  the rows without the settling step; ``--pulses-at-peaks``: the model's
  beat pulses at the speech's onset-density peaks instead of its strongest
  onsets (``beat_holds.pulses_at_density_peaks``).

Gain: :func:`rigmind.backend.gesture.alignment.alignment_gain` (BC ÷ the
mean BC of the same motion shifted ±1 … ±4 s), joint speeds ÷ the real BEAT2
speaker's, beside the real capture's own gain on its audio.

    PYTHONPATH=/tmp/pkg nice -n 10 .venv/bin/python bench/beat_rhythm.py --ceiling --grid --short --heldout --commands --seeds 5 \\
        --json bench/results/gesture_rhythm.json
    python bench/beat_rhythm.py --markdown bench/results/gesture_rhythm.json
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

from rigmind.backend import paths
from rigmind.backend.audio.features import speech_features
from rigmind.backend.audio.loading import load_audio
from rigmind.backend.gesture import alignment, alignment_eval, metrics, representation
from rigmind.backend.gesture.beat_search import BeatSearchConfig
from rigmind.backend.gesture.generate import FPS, STRIDE, STRIDES, GeneratorConfig, generate_from_features, get_model
from rigmind.backend.gesture.gesture_space import lift_hands, stress_envelope
from rigmind.backend.gesture.speech_rhythm import RhythmConfig, onset_density, settle_with_speech
from rigmind.backend.gesture.standing import plant_feet
from rigmind.backend.gesture.viewer_metrics import largest_acceleration, longest_frozen_stretch, standing_foot_skate
from bench_report import add_output_options, finish, reprint  # beside this script, on sys.path with it

#: Settings tried on the validation voices (name → RhythmConfig fields; {} = the committed defaults;
#: "advances": the generator's window advances, default ADVANCES).
#: The rule: every validation voice at or above the real capture's gain, and
#: on the training speaker's speech-only takes BC and FD no worse than without
#: the step; among those, the smallest largest arm acceleration, then the
#: largest least gain.
GRID = {
    "committed": {},
    "no beat search (main cb8752b)": {"candidates": 1},
    "beat search, sum of the beats' weights": {"per_beat": False},
    "beat search, 6 draws": {"candidates": 6},
    "fixed 32-frame stride": {"advances": (STRIDE,)},
    "varied stride on the code grid": {"advances": STRIDES},
    "off the grid, any advance 24-40": {"advances": tuple(range(STRIDES[0], STRIDES[-1] + 1))},
    "settled 0.4": {"settled": 0.4},
    "settled 0.5": {"settled": 0.5},
    "boost 1.5": {"busy_gain": 1.5},
    "settled 0.4, detail raised too": {"settled": 0.4, "raise_detail": True},
    "legs moved too": {"leg_joints": ()},
    "root (pelvis sway and turn) never raised": {"root_max": 1.0},
    "settled 0.2, no boost, whole fast part": {"settled": 0.2, "busy_gain": 1.0, "fine_s": 0.0},
    "the same, quantiles over the whole take": {"settled": 0.2, "busy_gain": 1.0, "fine_s": 0.0,
                                                "quantiles_over": "take"},
    "settled 0.5, no boost, whole fast part": {"settled": 0.5, "busy_gain": 1.0, "fine_s": 0.0},
}
#: Settings scored on the short validation clips too.
SHORT_ROWS = ("committed", "no beat search (main cb8752b)", "beat search, sum of the beats' weights",
              "beat search, 6 draws", "fixed 32-frame stride", "varied stride on the code grid",
              "off the grid, any advance 24-40", "settled 0.4", "boost 1.5")
#: Settings scored on the held-out voices.
HELDOUT_ROWS = ("no beat search (main cb8752b)", "committed")
#: Rows beside the settings: the pipeline without the settling step.
_NO_SEARCH = BeatSearchConfig(candidates=1)
_NO_SEARCH_GENERATOR = GeneratorConfig(search=_NO_SEARCH)
WITHOUT = {"without (fixed stride)": (None, GeneratorConfig(advances=(STRIDE,), search=_NO_SEARCH)),
           "varied stride off the code grid, no settling": (None, GeneratorConfig(search=_NO_SEARCH))}
ARMS = [representation.names().index(n) for n in ("left_elbow", "right_elbow", "left_wrist", "right_wrist")]
WRISTS = [representation.names().index(n) for n in ("left_wrist", "right_wrist")]
ANKLES = [representation.names().index(n) for n in ("left_ankle", "right_ankle")]


def setting(fields: dict) -> tuple:
    """GRID entry → ``(RhythmConfig, GeneratorConfig)`` (``advances``, and the
    beat search's ``candidates`` and ``per_beat``, go to the generator)."""
    fields = dict(fields)
    gen = GeneratorConfig()
    if "advances" in fields:
        gen = replace(gen, advances=tuple(fields.pop("advances")))
    search = {k: fields.pop(k) for k in ("candidates", "per_beat") if k in fields}
    if search:
        gen = replace(gen, search=replace(gen.search, **search))
    return replace(RhythmConfig(), **fields), gen


def take(model, feats, seed: int, config):
    """The pipeline of ``gesture_from_features`` (neutral) with ``config =
    (RhythmConfig or None for no settling step, GeneratorConfig)`` → world
    positions ``[T, 55, 3]``."""
    config, gen = config
    poses, pulse, energy, speech = generate_from_features(model, feats, amount=0.5, seed=seed, config=gen)
    decoded = representation.decode(poses, FPS, model.finger_basis)
    m = decoded if config is None else settle_with_speech(decoded, feats.onset_times, config, talking=speech)
    m = plant_feet(m, steps_from=decoded)
    stress = stress_envelope(energy, pulse, speech, model.energy_map["rest_energy"], FPS)
    return lift_hands(m, stress, 0.5, talking=speech).world_positions()


def score(data: Path, voices, settings: dict, seeds: int, mean_speed, speaker=None) -> dict:
    """``{name: {"gains": {voice: [per seed]}, "arm_accel_max_mm", "frozen_max"}}``;
    with ``speaker`` (:func:`speaker_reference`), on the training speaker's
    speech-only takes among ``voices`` also BC (EMAGE's definition), FD
    against all his real motion (mean over seeds), the wrist speed ÷ his,
    and seam periodicity at 32 and 48 frames (first 30 s, upper body) with
    its height above the off-stride floor (per take and seed)."""
    from rigmind.backend.gesture import motion_encoder
    from rigmind.backend.gesture.viewer_metrics import off_stride_periodicity, seam_periodicity

    model = get_model()
    out = {k: {"gains": {}, "arm_accel_max_mm": 0.0, "frozen_max": 0, "bc": [], "wrist_speed": [], "seam32": [],
               "seam32_above_floor": [], "seam48": [], "seam48_above_floor": [], "skate": [], "_fd": {}} for k in settings}
    for v in voices:
        clip = load_audio(data / v)
        feats = speech_features(clip, FPS)
        for seed in range(seeds):
            for name, cfg in settings.items():
                p = take(model, feats, seed, cfg)
                r = out[name]
                r["gains"].setdefault(v, []).append(alignment.alignment_gain(
                    clip.samples, clip.sample_rate, p, FPS, mean_speed=mean_speed).gain)
                r["arm_accel_max_mm"] = max(r["arm_accel_max_mm"], largest_acceleration(p[:, ARMS]))
                r["frozen_max"] = max(r["frozen_max"], longest_frozen_stretch(p))
                r["skate"].append(standing_foot_skate(p[:, ANKLES]))
                if speaker is not None and Path(v).name in speaker["takes"]:
                    r["bc"].append(metrics.bc_score(clip.samples, clip.sample_rate, p, FPS, mean_speed=mean_speed))
                    r["_fd"].setdefault(seed, []).append(p)
                    r["wrist_speed"].append(float(metrics.joint_speed(p, FPS)[:, WRISTS].mean()
                                                  / mean_speed[WRISTS].mean()))
                    up = p[:900][:, list(metrics.UPPER_BODY)]
                    for k in (32, 48):
                        seam = seam_periodicity(up, k)
                        r[f"seam{k}"].append(seam)
                        r[f"seam{k}_above_floor"].append(seam - off_stride_periodicity(up, k))
        print(Path(v).stem, {k: round(float(np.mean(r["gains"][v])), 3) for k, r in out.items()}, flush=True)
    for r in out.values():
        fd = r.pop("_fd")
        if fd:
            r["fd"] = float(np.mean([motion_encoder.frechet_motion_distance(speaker["encoder"], ps, speaker["motion"],
                                                                            stride=2) for ps in fd.values()]))
    return out


def pulse_dip(data: Path, voices, seeds: int) -> dict:
    """``{"generated": mean over voices and seeds, "real_own": .., "real_speech": ..}``:
    upper-body speed (mean of the 13 joints) weighted by the beat pulses while
    talking ÷ its mean while talking (below 1: the body slows on the pulses)."""
    from rigmind.backend.gesture import controls, dataset

    def dip(positions, pulse, talking):
        speed = metrics.joint_speed(positions, FPS)[:, list(metrics.UPPER_BODY)].mean(axis=1)
        n = min(len(speed), len(pulse), len(talking))
        s, w = np.asarray(talking[:n], np.float64), np.asarray(pulse[:n], np.float64) * talking[:n]
        return float((speed[:n] * w).sum() / max(w.sum(), 1e-9) / ((speed[:n] * s).sum() / max(s.sum(), 1e-9)))

    model = get_model()
    gen = []
    for v in voices:
        feats = speech_features(load_audio(data / v), FPS)
        for seed in range(seeds):
            poses, pulse, _, speech = generate_from_features(model, feats, seed=seed, config=_NO_SEARCH_GENERATOR)
            gen.append(dip(representation.decode(poses, FPS, model.finger_basis).world_positions(), pulse, speech))
    take = dataset.load_paired_take(data / (alignment_eval.REAL_TAKE + ".npz"), data / (alignment_eval.REAL_TAKE + ".wav"))
    p = dataset.positions(take.rot, take.root)
    feats = speech_features(load_audio(take.audio), FPS)
    own = controls.pulses(controls.motion_beat_frames(p, FPS), len(p))
    heard = controls.pulses(controls.select_onsets(feats.onset, feats.speech, FPS, model.beat_rate,
                                                   np.random.default_rng(0)), len(p))
    return {"generated": float(np.mean(gen)), "real_own": dip(p, own, feats.speech),
            "real_speech": dip(p, heard, feats.speech)}


def speaker_reference(data: Path) -> dict:
    """The training speaker's speech-only takes (file names), all his real
    motion ``[T, 55, 3]`` clips and the motion encoder, as ``rigmind eval
    gesture`` scores FD with them."""
    from rigmind.backend.gesture import dataset, motion_encoder
    from rigmind.backend.gesture.eval import ENCODER_PATH

    corpus = dataset.load_corpus(data)
    real = [dataset.positions(t.rot, t.root) for t in corpus.train_paired + corpus.heldout_paired]
    return {"takes": {Path(w).name for w in corpus.speech_only}, "motion": real,
            "encoder": motion_encoder.load_encoder(ENCODER_PATH)[0]}


def ceiling(data: Path, voices, seeds: int, mean_speed) -> dict:
    """Gain of the pipeline-without-settling's beats, as they are and with
    those in the sparsest quarter of the onset density dropped."""
    model = get_model()
    out = {"as generated": {}, "sparsest quarter dropped": {}}
    for v in voices:
        clip = load_audio(data / v)
        feats = speech_features(clip, FPS)
        for seed in range(seeds):
            p = take(model, feats, seed, (None, GeneratorConfig()))
            n = len(p)
            onsets, (f0, f1) = metrics.trimmed_onsets(clip.samples, clip.sample_rate, n, FPS)
            beats = metrics.motion_beats(p, FPS, mean_speed=mean_speed, per_joint=True, frames=(f0, f1))
            dens = onset_density(feats.onset_times, n, FPS, 0.3)
            low = dens <= np.quantile(dens, 0.25)
            kept = [b[~low[np.clip(np.round(b * FPS).astype(int) + f0, 0, n - 1)]] for b in beats]
            span = (f1 - f0) / FPS
            out["as generated"].setdefault(v, []).append(alignment.alignment_from_beats(onsets, beats, span).gain)
            out["sparsest quarter dropped"].setdefault(v, []).append(
                alignment.alignment_from_beats(onsets, kept, span).gain)
    return out


def commands(data: Path, voices, seeds: int, mean_speed) -> dict:
    """Whole ``rigmind gesture --audio V --out X.npz --seed S`` processes, the
    file scored: ``{voice: {"gains": [...], "wall_s": [...]}}``."""
    from rigmind.backend.smplx_motion import read_smplx_npz

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for v in voices:
            clip = load_audio(data / v)
            for seed in range(seeds):
                dst = Path(tmp) / f"{Path(v).stem}_{seed}.npz"
                t0 = time.time()
                subprocess.run([sys.executable, "-m", "rigmind", "gesture", "--audio", str(data / v), "--out", str(dst),
                                "--seed", str(seed)], check=True, stdout=subprocess.DEVNULL)
                wall = time.time() - t0
                m = read_smplx_npz(dst)
                g = alignment.alignment_gain(clip.samples, clip.sample_rate, m.world_positions(), m.fps,
                                             mean_speed=mean_speed).gain
                row = out.setdefault(v, {"gains": [], "wall_s": []})
                row["gains"].append(g)
                row["wall_s"].append(wall)
            print(Path(v).stem, "command", round(float(np.mean(out[v]["gains"])), 3), flush=True)
    return out


def _row(name: str, gains: dict, voices, real: float, extra: str = "") -> str:
    g = [float(np.mean(gains[v])) for v in voices]
    return (f"| {name} | " + " | ".join(f"{x:.3f}" for x in g) + f" | {np.mean(g):.3f} | {min(g):.3f} | "
            f"{sum(x >= real for x in g)}/{len(g)} |" + extra)


def _standard_errors(gains: dict, voices, name: str, extra: str = "") -> str:
    """A table row of each voice's standard error of the mean gain over seeds."""
    se = [float(np.std(gains[v], ddof=1) / np.sqrt(len(gains[v]))) if len(gains[v]) > 1 else float("nan")
          for v in voices]
    return f"| {name} | " + " | ".join(f"± {x:.3f}" for x in se) + " | | | |" + extra


def markdown(res: dict) -> str:
    real = res["real_gain"]
    lines = [f"Model: `{res.get('model', 'models/gesture')}`, pulses at the {res.get('pulses', 'strongest onsets')}. Machine: {res['machine']}; date {res['date']}; "
             f"{res['seconds']:.0f} s. "
             f"Real BEAT2 capture on its own audio: **{real:.3f}**.", ""]
    for key, title, seeds in (("ceiling", "Why: the pipeline's own beats, and with the sparsest quarter's dropped "
                               "(validation voices)", "validation"),
                              ("grid", "Settings (validation voices)", "validation"),
                              ("heldout", "Held-out voices (never tuned on)", "heldout")):
        block = res.get(key)
        if not block:
            continue
        voices = list(next(iter(block.values()))["gains"] if key != "ceiling" else next(iter(block.values())))
        lines += [f"**{title}, {res['seeds'][seeds]} seeds**", "",
                  "| setting | " + " | ".join(Path(v).stem for v in voices) + " | mean | min | ≥ real |"
                  + ("" if key == "ceiling" else " arm accel max mm/f² | longest frozen (frames) | standing skate "
                                                 "cm/frame mean / max |"),
                  "|---|" + "---|" * (len(voices) + 3) + ("" if key == "ceiling" else "---|---|---|")]
        for name, r in block.items():
            if key == "ceiling":
                lines.append(_row(name, r, voices, real))
            else:
                lines.append(_row(name, r["gains"], voices, real,
                                  f" {r['arm_accel_max_mm']:.1f} | {r['frozen_max']} | {np.mean(r['skate']):.4f} / "
                                  f"{max(r['skate']):.4f} |"))
        if key == "heldout" and "committed" in block:
            lines.append(_standard_errors(block["committed"]["gains"], voices, "committed: ± standard error over seeds",
                                          " | | |"))
        lines.append("")
        if key == "grid" and "fd" in next(iter(block.values())):
            lines += ["On the training speaker's speech-only takes (2_scott_0_2_2 … 0_5_5; BC as `rigmind eval "
                      "gesture` computes it, FD against all his real motion; seam periodicity at 32 and 48 frames on "
                      "the upper body's first 30 s, mean over takes and seeds (worst), and its height above the "
                      "off-stride floor):", "",
                      "| setting | BC | FD | wrist speed ÷ the speaker's | seam 32 | above its floor | seam 48 | "
                      "above its floor |", "|---|---|---|---|---|---|---|---|"]
            lines += [f"| {name} | {np.mean(r['bc']):.3f} | {r['fd']:.0f} | {np.mean(r['wrist_speed']):.2f} | "
                      + " | ".join(f"{np.mean(r[f'seam{k}']):.3f} ({max(r[f'seam{k}']):.2f}) | "
                                   f"{np.mean(r[f'seam{k}_above_floor']):+.3f}" for k in (32, 48)) + " |"
                      for name, r in block.items() if r.get("seam48")]
            lines.append("")
    short = res.get("short")
    if short:
        lines += [f"**The 24 other LJSpeech clips (2-10 s each; validation), {res['seeds']['validation']} seeds: "
                  "how often a short clip reaches the real capture's gain** (a clip too short for two time shifts "
                  "has no gain; per take, one clip's gain moves by the SD below with the seed alone)", "",
                  "| setting | clips scored | mean | median | min | ≥ real | SD of one take | arm accel max mm/f² | "
                  "standing skate cm/frame |", "|---|---|---|---|---|---|---|---|---|"]
        for name, r in short.items():
            g = np.array([np.nanmean(x) if np.isfinite(x).any() else np.nan for x in map(np.array, r["gains"].values())])
            ok = g[np.isfinite(g)]
            takes = np.array([y for x in r["gains"].values() for y in x], float)
            lines.append(f"| {name} | {len(ok)} | {ok.mean():.3f} | {np.median(ok):.3f} | {ok.min():.3f} | "
                         f"{int(np.sum(ok >= real))}/{len(ok)} | {np.nanstd(takes):.3f} | {r['arm_accel_max_mm']:.1f} | "
                         f"{np.mean(r['skate']):.4f} |")
        lines.append("")
    c = res.get("commands")
    if c:
        voices = list(c)
        lines += [f"**Whole commands `rigmind gesture --audio V --out X.npz --seed S` (held-out, "
                  f"{res['seeds']['heldout']} seeds)**", "",
                  "| | " + " | ".join(Path(v).stem for v in voices) + " | mean | min | ≥ real |",
                  "|---|" + "---|" * (len(voices) + 3),
                  _row("gain", {v: c[v]["gains"] for v in voices}, voices, real),
                  _standard_errors({v: c[v]["gains"] for v in voices}, voices, "± standard error over seeds"),
                  "| wall s (process start to file) | " + " | ".join(f"{np.mean(c[v]['wall_s']):.1f}" for v in voices)
                  + " | | | |", ""]
    dip = res.get("pulse_dip")
    if dip:
        lines += ["**Does the body slow on its beat pulses?** Upper-body speed on the pulse frames ÷ its mean while "
                  f"talking (below 1: it slows on them); model `{res.get('model', 'models/gesture')}`:", "",
                  "| generated (validation voices, no beat search) | real capture, its own motion-beat pulses | "
                  "real capture, pulses picked from its speech |", "|---|---|---|",
                  f"| {dip['generated']:.3f} | {dip['real_own']:.3f} | {dip['real_speech']:.3f} |", ""]
    if res.get("settings"):
        default = res["settings"]["committed"]
        others = {k: c for k, c in res["settings"].items() if k != "committed"}
        lines += ["Committed settings (`RhythmConfig()`): " + ", ".join(f"{k} = {v}" for k, v in default.items()) + ".",
                  "", ("The others differ in: " + "; ".join(
                      f"`{k}`: " + ", ".join(f"{f} = {x}" for f, x in c.items() if x != default.get(f))
                      for k, c in others.items()) + ". " if others else "") + ("Rows without the settling "
                  "step: the same pipeline with `speech_rhythm` left out, at the fixed 32-frame stride (the pipeline "
                  "before the step) or the varied window advances." if any(
                      k in res.get(b, {}) for b in ("grid", "short", "heldout") for k in WITHOUT) else ""), ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=paths.data_dir())
    ap.add_argument("--ceiling", action="store_true")
    ap.add_argument("--grid", action="store_true")
    ap.add_argument("--short", action="store_true")
    ap.add_argument("--heldout", action="store_true")
    ap.add_argument("--commands", action="store_true")
    ap.add_argument("--pulse-dip", action="store_true")
    ap.add_argument("--model", type=Path, help="a gesture checkpoint to score instead of the committed one")
    ap.add_argument("--skip-without", action="store_true", help="leave out the rows without the settling step")
    ap.add_argument("--pulses-at-peaks", action="store_true",
                    help="beat pulses at the onset-density peaks instead of the strongest onsets")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--rows", help="GRID names to score, separated by semicolons (default: all)")
    add_output_options(ap)
    a = ap.parse_args(argv)
    if reprint(a, markdown):
        return 0
    import torch

    torch.set_num_threads(1)
    if a.model:
        from rigmind.backend.gesture.generate import GestureModel

        chosen = GestureModel.load(a.model)
        globals()["get_model"] = lambda: chosen
    without = {} if a.skip_without else WITHOUT
    if a.pulses_at_peaks:
        from beat_holds import pulses_at_density_peaks  # beside this script, on sys.path with it

        pulses_at_density_peaks()
    t0 = time.time()
    mean_speed, whole, _ = alignment_eval.real_reference(a.data)
    names = a.rows.split(";") if a.rows else list(GRID)
    settings = {k: setting(GRID[k]) for k in names}
    res = {"real_gain": whole.gain, "model": str(a.model or "models/gesture"),
           "pulses": "onset-density peaks" if a.pulses_at_peaks else "strongest onsets", "seeds": {"validation": a.seeds, "heldout": a.seeds},
           "settings": {k: {**asdict(c), "advances": list(g.advances), **asdict(g.search)}
                        for k, (c, g) in settings.items()}}
    val, held = alignment_eval.VALIDATION_VOICES, alignment_eval.HELDOUT_VOICES
    if a.ceiling:
        res["ceiling"] = ceiling(a.data, val, a.seeds, mean_speed)
    if a.grid:
        res["grid"] = score(a.data, val, {**without, **settings}, a.seeds, mean_speed, speaker_reference(a.data))
    if a.short:
        rows = {**without, **{k: settings[k] for k in SHORT_ROWS if k in settings}}
        res["short"] = score(a.data, alignment_eval.VALIDATION_SHORT, rows, a.seeds, mean_speed)
    if a.heldout:
        rows = {**without, **{k: settings[k] for k in HELDOUT_ROWS if k in settings}}
        res["heldout"] = score(a.data, held, rows, a.seeds, mean_speed)
    if a.pulse_dip:
        res["pulse_dip"] = pulse_dip(a.data, val, a.seeds)
    if a.commands:
        res["commands"] = commands(a.data, held, a.seeds, mean_speed)
    return finish(res, a, t0, markdown)


if __name__ == "__main__":
    raise SystemExit(main())
