"""Locomotion benchmark: controllers walking a fixed set of paths in every
style, scored with :mod:`.metrics` and the style classifier.

``rigmind eval locomotion --data DIR [--out bench/locomotion_eval.md]`` (or
``python -m rigmind.backend.locomotion.eval --data DIR``) evaluates

- the motion-matching baseline built from the training split (always),
- the neural :class:`~.controller.LocomotionController` when
  ``models/locomotion.pt`` exists (and ``controller.py`` can load it),
- the validation mocap clips of walking gaits themselves (foot skate, jitter
  and the style classifier's accuracy; trajectory error is n/a),

on :data:`FIXED_PATHS` (straight 10 m, an L with a 90° turn, a zig-zag of
90° turns, a 2 m-radius circle, an S-curve, stop-and-go) for each of the 7
d2 styles, at each style's typical walking speed (the median root speed of
its straight-walk training clips). Every path, its pauses included, is
walked with ``path_follow.follow_path``, the follower Walk Along Path uses.
Each controller is also scored after the foot clean-up (``cleanup.pin_feet``).

Units: metres, seconds, radians in; the table is in cm, cm per 1/30 s
frame, m/s³ and ms (see :mod:`.metrics` for the definitions).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import limits
from ..errors import UserError
from ..motion import Motion
from . import cleanup as foot_cleanup
from . import dataset
from . import features
from . import metrics
from . import path_follow
from . import style_classifier
from .controller import LocomotionController
from .motion_matching import Control, MotionMatchingController
from .. import paths

#: Default neural checkpoint and report.
DEFAULT_MODEL = paths.model_path("locomotion.pt")
DEFAULT_OUT = paths.BENCH_DIR / "locomotion_eval.md"
#: Walking speed (m/s) when the training clips give none for a style.
FALLBACK_SPEED = 1.2
#: Quick mode: 2 paths x 2 styles.
QUICK_PATHS = ("straight", "L-turn")
QUICK_STYLES = ("normal", "elderly")


# --- paths ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PathSpec:
    """A path to walk: ``points [M, 2]`` (world XY, metres; the character
    starts at ``points[0]`` facing along the first segment), ``pauses``:
    ``((arc length m, seconds), ...)`` where the character stops and stands."""

    name: str
    points: np.ndarray
    pauses: tuple = ()
    description: str = ""

    @property
    def length(self) -> float:
        return float(np.sum(np.linalg.norm(np.diff(self.points, axis=0), axis=1)))


def _polyline(*corners, step: float = 0.25) -> np.ndarray:
    """Corners joined by straight segments, resampled every ``step`` m (the
    corners kept), so followers that take dense points get them."""
    corners = np.asarray(corners, dtype=np.float64)
    out = [corners[0]]
    for a, b in zip(corners[:-1], corners[1:]):
        n = max(int(np.ceil(np.linalg.norm(b - a) / step)), 1)
        out.extend(a + (b - a) * (i / n) for i in range(1, n + 1))
    return np.array(out)


def _circle(radius: float = 2.0, n: int = 128) -> np.ndarray:
    # Start at the origin heading +X, turning left (counter clockwise) round (0, r).
    t = np.linspace(0.0, 2.0 * np.pi, n + 1)
    return np.stack([radius * np.sin(t), radius * (1.0 - np.cos(t))], axis=1)


def _s_curve(length: float = 10.0, amplitude: float = 1.5, n: int = 100) -> np.ndarray:
    # One period of a sine: left bend then right bend, tightest radius
    # L^2 / (4 pi^2 A) = 1.7 m.
    x = np.linspace(0.0, length, n + 1)
    return np.stack([x, amplitude * np.sin(2.0 * np.pi * x / length)], axis=1)


def make_paths() -> tuple:
    """The fixed benchmark paths (forward = +X at the start; the controller is
    reset facing along the first segment, so the frame does not matter)."""
    return (
        PathSpec("straight", _polyline((0, 0), (10, 0)), description="straight 10 m"),
        PathSpec("L-turn", _polyline((0, 0), (5, 0), (5, 5)), description="5 m, 90° left turn, 5 m"),
        PathSpec(
            "zig-zag",
            _polyline((0, 0), (3, 0), (3, 3), (6, 3), (6, 6)),
            description="four 3 m legs, 90° turns left/right/left",
        ),
        PathSpec("circle", _circle(2.0), description="2 m-radius circle, counter clockwise (12.6 m)"),
        PathSpec("S-curve", _s_curve(), description="one sine period, 10 m long, 1.5 m amplitude"),
        PathSpec(
            "stop-and-go",
            _polyline((0, 0), (8, 0)),
            pauses=((4.0, 1.5),),
            description="walk 4 m, stand 1.5 s, walk 4 m",
        ),
    )


FIXED_PATHS = make_paths()


# --- walking a path ---------------------------------------------------------------------


def follow(controller, path: PathSpec, speed: float, style, *, max_seconds=None):
    """Walk ``path`` (its pauses included) at ``speed`` (m/s) with
    ``path_follow.follow_path``, the follower Walk Along Path uses: a
    ``path_follow.PathResult`` (``motion``, ``target_xy``, ``arc``, ``contacts``,
    ``feet``, ``paused``...) with ``follower`` naming it."""
    start = path.points[0]
    controller.reset(position=start, yaw=float(features.yaw_from_facing(path.points[1] - start)), style=style)
    res = path_follow.follow_path(controller, path.points, speed=speed, style=style,
                         config=path_follow.FollowConfig(max_seconds=max_seconds), pauses=path.pauses)
    res.follower = "path_follow.follow_path"
    return res


def _clean(res):
    """The foot clean-up (``cleanup.pin_feet``) of a run's motion, given the
    controller's predicted contacts and foot positions when it recorded them."""
    return foot_cleanup.pin_feet(res.motion, predicted=res.contacts, feet=res.feet)


# --- controllers -----------------------------------------------------------------------


def load_neural(model_path=DEFAULT_MODEL):
    """``(controller, note, why_not)``: the neural controller from
    ``model_path`` and the report's note on it, or ``(None, note, why not)``
    when the file is absent or does not load (``why_not`` None when it did)."""
    model_path = Path(model_path)
    if not model_path.exists():
        return None, f"{model_path.name} is absent: the neural controller is not evaluated", "no such file"
    try:
        return LocomotionController.load(model_path), f"neural: load({model_path.name})", None
    except (OSError, ValueError, RuntimeError) as e:  # report and go on with the baseline
        why = f"{type(e).__name__}: {e}"
        return None, f"LocomotionController.load({model_path}) failed: {why}", why


def walking_speeds(clips, styles) -> dict:
    """Per style, the median horizontal root speed (m/s) over the frames of
    its straight-walk clips (content "walk", unmirrored and mirrored alike),
    :data:`FALLBACK_SPEED` when there are none."""
    out = {}
    for st in styles:
        v = [
            np.linalg.norm(c.root_vel, axis=1)
            for c in clips
            if c.labels.get("style_key") == st and c.labels.get("content") == "walk" and c.root_vel is not None
        ]
        out[st] = float(np.median(np.concatenate(v))) if v else FALLBACK_SPEED
    return out


# --- evaluation --------------------------------------------------------------------------


def _mean(xs):
    xs = [x for x in xs if x is not None and np.isfinite(x)]
    return float(np.mean(xs)) if xs else None


def score_motion(motion: Motion, path: PathSpec = None, classifier=None, style=None) -> dict:
    """Metrics of one motion: skate, sliding fraction, jitter and, with a
    ``path``, the trajectory errors; with a ``classifier`` and ``style``,
    whether the predicted style is right."""
    sk = metrics.foot_skate(motion)
    out = {
        "frames": motion.num_frames,
        "skate_cm_per_frame": sk["skate_cm_per_frame"],
        "sliding_fraction": sk["sliding_fraction"],
        "contact_fraction": sk["contact_fraction"],
        "jitter_m_s3": metrics.jitter(motion),
    }
    if path is not None:
        te = metrics.trajectory_error(motion.root_positions[:, :2], path.points)
        out.update(traj_mean_cm=te.mean_cm, traj_max_cm=te.max_cm, traj_final_cm=te.final_cm)
    if classifier is not None and style is not None:
        p = style_classifier.predict_style(classifier, motion)
        out["predicted_style"] = classifier.styles[int(np.argmax(p))]
        out["style_correct"] = float(out["predicted_style"] == style)
    return out


def _aggregate(runs) -> dict:
    keys = ("skate_cm_per_frame", "sliding_fraction", "jitter_m_s3", "traj_mean_cm", "traj_max_cm", "traj_final_cm", "style_correct")
    return {k: _mean([r.get(k) for r in runs]) for k in keys} | {"runs": len(runs)}


@dataclass(frozen=True)
class EvalConfig:
    """What :func:`evaluate_locomotion` runs.

    - ``paths``: :class:`PathSpec` list (or names of :data:`FIXED_PATHS`);
      ``styles``: d2 style keys to ask for.
    - ``max_seconds``: cap of each run in seconds (None: per path, see
      ``path_follow.FollowConfig.max_seconds``).
    - ``timing_steps``: controller steps timed for the ms-per-step column.
    - ``cleanup``: also score each controller after the foot clean-up
      (``cleanup.pin_feet``).
    - ``seed``: of the style classifier trained when none is given.
    """

    paths: tuple = FIXED_PATHS
    styles: tuple = dataset.D2_STYLES
    max_seconds: float = None
    timing_steps: int = 300
    cleanup: bool = True
    seed: int = 0


@dataclass(frozen=True)
class EvalReferences:
    """What :func:`evaluate_locomotion` scores against; None: from the cache.

    - ``data_dir``: the data folder (``../shared/data`` by default), used
      only to build the feature cache when it is missing; ``cache_dir``: the
      feature cache (default ``<repo>/.cache/locomotion``).
    - ``classifier``: a trained :class:`~.style_classifier.StyleClassifier`;
      None trains one on the training cache (``EvalConfig.seed``).
    - ``mocap_clips``: validation ClipFeatures for the mocap row (default:
      the cache's validation clips of walking gait in the styles).
    - ``train_clips``: training ClipFeatures for the per-style walking
      speeds (default: the cache's).
    """

    data_dir: object = None
    cache_dir: object = None
    classifier: object = None
    mocap_clips: object = None
    train_clips: object = None


def evaluate_locomotion(controllers: dict, config: EvalConfig = EvalConfig(),
                        references: EvalReferences = EvalReferences(), *, verbose: bool = False) -> dict:
    """Run every controller on every path in every style and score it.

    Args:
        controllers: name -> controller (``reset``/``step`` API of
            :class:`~.motion_matching.MotionMatchingController`).
        config: :class:`EvalConfig` (paths, styles, caps, clean-up).
        references: :class:`EvalReferences` (classifier, mocap, speeds).

    Returns:
        ``{"rows": [{"name", metrics...}], "per_path": {name: {path: metrics}},
        "runs": [...], "classifier": {...}, "speeds": {...}, "notes": [...],
        "paths": [...], "styles": [...]}`` with ``None`` where a metric does
        not apply.
    """
    paths, styles, max_seconds = config.paths, config.styles, config.max_seconds
    timing_steps, cleanup, seed = config.timing_steps, config.cleanup, config.seed
    data_dir, cache_dir, classifier = references.data_dir, references.cache_dir, references.classifier
    mocap_clips, train_clips = references.mocap_clips, references.train_clips
    t_start = time.perf_counter()
    notes = set()
    by_name = {p.name: p for p in FIXED_PATHS}
    paths = [by_name[p] if isinstance(p, str) else p for p in paths]
    styles = tuple(styles)
    speeds, classifier, mocap_clips, cls_info = _references(
        data_dir, cache_dir, styles, seed, classifier, mocap_clips, train_clips, verbose)
    mocap_scores = [_mocap_score(c) for c in mocap_clips]
    mocap = _aggregate(mocap_scores)

    runs, rows, per_path = [], [], {}
    for name, ctl in controllers.items():
        variants = _walk_paths(name, ctl, paths, styles, speeds, classifier, max_seconds, cleanup, verbose)
        _add_rows(variants, name, _ms_per_step(ctl, styles, timing_steps), mocap, paths, runs, rows, per_path)
        if paths and styles:
            notes.add(f"{name}: {', '.join(dict.fromkeys(p.name for p in paths))} followed with path_follow.follow_path")
    if mocap_scores:
        mocap.update(
            name=f"validation mocap ({len(mocap_scores)} walking clips)",
            ms_per_step=None,
            jitter_ratio=1.0,
            style_correct=cls_info.get("clip_accuracy"),
        )
        rows.append(mocap)
    return {
        "rows": rows,
        "per_path": per_path,
        "runs": runs,
        "classifier": dict(cls_info, info=classifier.info or {}),
        "speeds": speeds,
        "notes": sorted(notes),
        "paths": [{"name": p.name, "length_m": round(p.length, 2), "description": p.description} for p in paths],
        "styles": list(styles),
        "seconds": time.perf_counter() - t_start,
    }


def _add_rows(variants, name, ms, mocap, paths, runs, rows, per_path) -> None:
    """Append one controller's variants (raw, cleaned) to the runs, the table
    rows (mean metrics, step time for the raw one, jitter against the mocap's)
    and the per-path means."""
    for vname, vr in variants.items():
        if not vr:
            continue
        runs.extend(vr)
        agg = _aggregate(vr)
        agg["name"] = vname
        agg["ms_per_step"] = ms if vname == name else None
        agg["jitter_ratio"] = (agg["jitter_m_s3"] / mocap["jitter_m_s3"]) if mocap["jitter_m_s3"] else None
        rows.append(agg)
        per_path[vname] = {p.name: _aggregate([r for r in vr if r["path"] == p.name]) for p in paths}


def _references(data_dir, cache_dir, styles, seed, classifier, mocap_clips, train_clips, verbose) -> tuple:
    """What the runs are measured against, from the feature cache where not
    given: per-style walking speeds, the style classifier (trained here when
    None), the validation mocap clips and the classifier's accuracy on them.
    Returns ``(speeds, classifier, mocap_clips, classifier_info)``."""
    if classifier is None or mocap_clips is None or train_clips is None:
        cache = Path(cache_dir) if cache_dir is not None else features.DEFAULT_CACHE_DIR
        if not (cache / "index.json").exists():
            features.build_cache(data_dir, cache, seed=seed, verbose=verbose)
    if train_clips is None:
        train_clips = features.load_cache(cache_dir, split="train", mirrored=False, styles=styles, keys=("root_vel",))
    speeds = walking_speeds(train_clips, styles)
    if classifier is None:
        classifier = style_classifier.train_style_classifier(cache_dir, style_classifier.StyleTrainConfig(seed=seed))
    if mocap_clips is None:
        mocap_clips = [
            c for c in features.load_cache(cache_dir, split="validation", mirrored=False, styles=styles) if c.labels.get("gait") == "walk"
        ]
    cls_info = {}
    if mocap_clips:
        acc = style_classifier.evaluate_classifier(classifier, mocap_clips)
        cls_info = {k: acc[k] for k in ("clip_accuracy", "window_accuracy", "clips", "windows", "per_style")}
    return speeds, classifier, mocap_clips, cls_info


def _mocap_score(clip) -> dict:
    """:func:`score_motion` of a mocap clip (no path, no style verdict)."""
    m = clip.to_motion() if isinstance(clip, features.ClipFeatures) else clip
    s = score_motion(m)
    s["style_correct"] = None
    return s


def _walk_paths(name, ctl, paths, styles, speeds, classifier, max_seconds, cleanup, verbose) -> dict:
    """Walk every path in every style with one controller and score each run,
    raw and (with ``cleanup``) after the foot clean-up: ``{variant: [scores]}``."""
    variants = {name: []}
    if cleanup:
        variants[f"{name} + foot cleanup"] = []
    for path in paths:
        for st in styles:
            t0 = time.perf_counter()
            res = follow(ctl, path, speeds[st], st, max_seconds=max_seconds)
            sc = score_motion(res.motion, path, classifier, st)
            sc.update(controller=name, path=path.name, style=st, seconds=time.perf_counter() - t0)
            variants[name].append(sc)
            if cleanup:
                cs = score_motion(_clean(res), path, classifier, st)
                cs.update(controller=f"{name} + foot cleanup", path=path.name, style=st)
                variants[f"{name} + foot cleanup"].append(cs)
            if verbose:
                print(
                    f"[eval] {name} {path.name} {st}: {sc['frames']} frames, traj {sc['traj_mean_cm']:.1f} cm, "
                    f"skate {sc['skate_cm_per_frame']:.2f}, style {sc['predicted_style']}",
                    flush=True,
                )
    return variants


def _ms_per_step(ctl, styles, timing_steps: int) -> float:
    """The controller's time per step (ms) on the default control sequence, in
    the normal style when evaluated (else the first)."""
    st0 = "normal" if "normal" in styles else styles[0]
    controls = [Control(velocity=c.velocity, style=st0) for c in metrics.default_controls(timing_steps + 10)]
    return metrics.ms_per_step(ctl, timing_steps, controls=controls, reset_kwargs={"style": st0})


# --- report ------------------------------------------------------------------------------


def _fmt(x, digits=2, scale=1.0):
    return "n/a" if x is None or not np.isfinite(x) else f"{x * scale:.{digits}f}"


def machine_description() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count()
    return f"{cpu}, {cores} cores available, {platform.system()} {platform.release()}, Python {platform.python_version()}"


def format_markdown(result: dict, command: str = None) -> str:
    """The evaluation as a markdown report (main table, per-path table,
    classifier accuracy, definitions, notes)."""
    try:
        import torch

        torch_v = torch.__version__
    except ImportError:
        torch_v = "absent"
    lines = ["# Locomotion evaluation", ""]
    if command:
        lines += [f"Command: `{command}`", ""]
    lines += [
        f"Machine: {machine_description()}; torch {torch_v}",
        f"Date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}; evaluation time {result['seconds']:.0f} s (after loading data and building the controllers)",
        "",
        "Paths: " + "; ".join(f"{p['name']} ({p['description']})" for p in result["paths"]),
        "",
        "Styles: " + ", ".join(f"{s} ({result['speeds'][s]:.2f} m/s)" for s in result["styles"])
        + " (speed asked for: the median root speed of the style's straight-walk training clips)",
        "",
        "| controller | foot skate (cm/frame) | sliding (%) | traj mean (cm) | traj max (cm) | traj final (cm) "
        "| jitter (m/s³) | jitter / mocap | style accuracy (%) | ms/step (1 thread) | runs |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['name']} | {_fmt(r['skate_cm_per_frame'])} | {_fmt(r['sliding_fraction'], 1, 100)} "
            f"| {_fmt(r['traj_mean_cm'], 1)} | {_fmt(r['traj_max_cm'], 1)} | {_fmt(r['traj_final_cm'], 1)} "
            f"| {_fmt(r['jitter_m_s3'], 0)} | {_fmt(r['jitter_ratio'])} | {_fmt(r['style_correct'], 0, 100)} "
            f"| {_fmt(r['ms_per_step'], 2)} | {r['runs']} |"
        )
    if result["per_path"]:
        lines += [
            "",
            "Per path (mean over styles): trajectory mean / max / final (cm), foot skate (cm/frame), style accuracy (%)",
            "",
            "| controller | " + " | ".join(p["name"] for p in result["paths"]) + " |",
            "|---|" + "---|" * len(result["paths"]),
        ]
        for name, pp in result["per_path"].items():
            cells = []
            for p in result["paths"]:
                a = pp[p["name"]]
                cells.append(
                    f"{_fmt(a['traj_mean_cm'], 0)} / {_fmt(a['traj_max_cm'], 0)} / {_fmt(a['traj_final_cm'], 0)}, "
                    f"{_fmt(a['skate_cm_per_frame'])}, {_fmt(a['style_correct'], 0, 100)}"
                )
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    ci = result["classifier"]
    if ci.get("clips"):
        info = ci.get("info", {})
        lines += [
            "",
            f"Style classifier (1D conv on 2 s windows, trained on {info.get('clips', '?')} training clips incl. "
            f"mirrored copies, {info.get('windows', '?')} windows, seed {info.get('seed', '?')}): "
            f"{ci['clip_accuracy'] * 100:.1f} % of the {ci['clips']} validation walking clips "
            f"({ci['window_accuracy'] * 100:.1f} % of {ci['windows']} windows) — the ceiling for generated motion. "
            "Per style: " + ", ".join(f"{k} {v * 100:.0f} %" for k, v in ci["per_style"].items()),
        ]
    lines += [
        "",
        "Definitions (backend/locomotion/metrics.py): foot skate = mean over frame pairs where a foot joint "
        "(Foot_L/R, Toes_L/R) is less than H = 3.3 cm above its planted height (floor z = 0) of its horizontal "
        "displacement per 1/30 s frame weighted by 2 − 2^(h/H); sliding = the fraction of those pairs moving more "
        "than 1 cm per frame (0.3 m/s). With H = 3.3 cm, swing-phase toe clearance (1.5–3 cm in this data) counts "
        "as contact, so the mocap itself scores well above zero: compare with its row. Trajectory error = "
        "horizontal distance of the character root to the path polyline (mean, max over frames) and of the last "
        "frame to the path's end. Jitter = mean norm of the third finite difference of world joint positions × "
        "fps³ (joint 0 excluded). Style accuracy = the classifier's top style equals the requested one (mocap row: "
        "its validation accuracy). ms/step: mean wall time of `step()` over 300 steps, one thread.",
    ]
    if result["notes"]:
        lines += ["", "Notes:", ""] + [f"- {n}" for n in result["notes"]]
    return "\n".join(lines) + "\n"


# --- CLI ---------------------------------------------------------------------------------


def _select_clips(data_dir, styles, max_clips: int, seed: int = 0):
    """A small subset for smoke tests: per style, training clips (straight
    walks and turns first) up to ``max_clips`` in all, and 2 validation walks."""
    split = dataset.split_of(dataset.load_split())
    clips = [c for c in dataset.list_clips(data_dir, datasets=("d2",)) if c.style_key in styles and c.file in split]
    order = {"walk": 0, "walk-turn-left": 1, "walk-turn-right": 2, "run": 3}
    train, val = [], []
    per = max(max_clips // max(len(styles), 1), 1)
    for st in styles:
        mine = sorted((c for c in clips if c.style_key == st), key=lambda c: (order.get(c.content, 9), c.take))
        tr = [c for c in mine if split[c.file] == "train"]
        # Round-robin over contents so a handful still has straights and both turns.
        by_content = {}
        for c in tr:
            by_content.setdefault(c.content, []).append(c)
        picked = []
        while len(picked) < per and any(by_content.values()):
            for k in sorted(by_content, key=lambda k: order.get(k, 9)):
                if by_content[k] and len(picked) < per:
                    picked.append(by_content[k].pop(0))
        train += picked
        val += [c for c in mine if split[c.file] == "validation" and c.gait == "walk"][:2]
    return train, val


def _load_stems(cache_dir, infos, mirrored: bool, keys=None) -> list:
    out = []
    for info in infos:
        for stem in [info.stem] + ([info.stem + "_mirror"] if mirrored else []):
            p = Path(cache_dir) / f"{stem}.npz"
            if p.exists():
                out.append(features.ClipFeatures.load(p, keys=keys))
    return out


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="rigmind eval locomotion", description="Benchmark locomotion controllers on fixed paths.")
    ap.add_argument("--data", default=str(dataset.DEFAULT_DATA_DIR), help="data folder (default ../shared/data)")
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="markdown report (default bench/locomotion_eval.md)")
    ap.add_argument("--json", help="also write the raw results as JSON")
    ap.add_argument("--cache", help="feature cache folder (default <repo>/.cache/locomotion)")
    ap.add_argument("--model", default=str(DEFAULT_MODEL), help="neural checkpoint (default models/locomotion.pt)")
    ap.add_argument("--no-neural", action="store_true", help="evaluate the motion-matching baseline only")
    ap.add_argument("--quick", action="store_true", help=f"{len(QUICK_PATHS)} paths x {len(QUICK_STYLES)} styles")
    ap.add_argument("--max-clips", type=int, help="build everything from this many training clips (smoke tests)")
    ap.add_argument("--max-seconds", type=float, help="cap of each run (s)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timing-steps", type=int, default=300)
    ap.add_argument("-v", "--verbose", action="store_true")
    return ap


def main_eval(argv=None) -> int:
    """``rigmind eval locomotion ...``: run :func:`evaluate_locomotion` and
    write the markdown report. ``argv`` may start with ``"locomotion"``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "locomotion":
        argv = argv[1:]
    args = build_parser().parse_args(argv)
    limits.check_model_tool_options(args)
    limits.check_output_paths(args.out, example_suffix=".md")
    limits.check_output_paths(args.json, example_suffix=".json")
    command = "rigmind eval locomotion " + " ".join(argv)
    data_dir = Path(args.data)
    if not data_dir.is_dir():
        print(f"rigmind eval: data folder {data_dir} not found; pass --data DIR (a copy of shared/data)", file=sys.stderr)
        return 2
    neural, notes = None, []
    if not args.no_neural:
        neural, note, why_not = load_neural(args.model)
        notes.append(note)
        if neural is None and Path(args.model).resolve() != Path(DEFAULT_MODEL).resolve():
            # A model asked for by name: its absence is the user's to fix, not a note in a report.
            raise UserError(f"--model {args.model}: {why_not}; give a model `rigmind train locomotion` wrote, "
                            "or --no-neural")
    paths = [p for p in FIXED_PATHS if p.name in QUICK_PATHS] if args.quick else list(FIXED_PATHS)
    styles = QUICK_STYLES if args.quick else dataset.D2_STYLES
    cache_dir = Path(args.cache) if args.cache else features.DEFAULT_CACHE_DIR
    t0 = time.perf_counter()
    mm_keys = ("traj_pos", "traj_dir", "joint_pos", "joint_vel", "rot6d", "root_vel", "root_ang_vel")
    if args.max_clips:
        train_i, val_i = _select_clips(data_dir, styles, args.max_clips, args.seed)
        features.build_cache(data_dir, cache_dir, seed=args.seed, clips=train_i + val_i, verbose=args.verbose)
        train = _load_stems(cache_dir, train_i, mirrored=True, keys=mm_keys)
        mocap = _load_stems(cache_dir, val_i, mirrored=False)
        mm = MotionMatchingController.build(train)
        classifier = style_classifier.train_style_classifier(train, style_classifier.StyleTrainConfig(seed=args.seed))
    else:
        features.build_cache(data_dir, cache_dir, seed=args.seed, verbose=args.verbose)
        train = features.load_cache(cache_dir, split="train", mirrored=True, keys=mm_keys)
        mm = MotionMatchingController.build(train)
        classifier = cached_classifier(cache_dir, args.seed)
        mocap = [c for c in features.load_cache(cache_dir, split="validation", mirrored=False, styles=styles) if c.labels.get("gait") == "walk"]
    if args.verbose:
        print(f"[eval] data ready in {time.perf_counter() - t0:.1f} s", flush=True)
    controllers = {} if neural is None else {"neural": neural}
    controllers["motion matching"] = mm
    result = evaluate_locomotion(
        controllers,
        EvalConfig(paths=tuple(paths), styles=tuple(styles), max_seconds=args.max_seconds, seed=args.seed,
                   timing_steps=args.timing_steps),
        EvalReferences(data_dir=data_dir, cache_dir=cache_dir, classifier=classifier, mocap_clips=mocap,
                       train_clips=[c for c in train if not c.mirrored]),
        verbose=args.verbose,
    )
    result["notes"] = sorted(set(result["notes"]) | set(notes))
    if args.max_clips:
        result["notes"].append(f"smoke run: controllers and classifier built from {len(train_i)} training clips (+ mirrors)")
    md = format_markdown(result, command)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(md, encoding="utf-8")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1, default=_json_default), encoding="utf-8")
    print(md)
    print(f"wrote {out.resolve()}")
    return 0


def _json_default(o):
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (np.floating, np.integer)):
        return o.item()
    return str(o)


def cached_classifier(cache_dir, seed: int):
    """The style classifier trained on the cache's training clips, kept in
    ``<cache>/style_classifier_seed{seed}.pt`` and reused while the cache's
    index and the classifier code are unchanged (training takes ~20 s)."""
    cache_dir = Path(cache_dir)
    index = (cache_dir / "index.json").read_bytes()
    import hashlib

    src = Path(style_classifier.__file__).read_bytes()
    key = hashlib.sha1(index + src + str(seed).encode()).hexdigest()[:16]
    path = cache_dir / f"style_classifier_seed{seed}.pt"
    if path.exists():
        try:
            model = style_classifier.StyleClassifier.load(path)
            if (model.info or {}).get("key") == key:
                return model
        except Exception:  # a stale or partial file: retrain
            pass
    model = style_classifier.train_style_classifier(cache_dir, style_classifier.StyleTrainConfig(seed=seed))
    model.info = dict(model.info or {}, key=key)
    model.save(path)
    return model


if __name__ == "__main__":
    raise SystemExit(main_eval())


__all__ = [
    "PathSpec", "FIXED_PATHS", "make_paths", "follow", "EvalConfig", "EvalReferences", "evaluate_locomotion",
    "score_motion", "format_markdown", "main_eval", "load_neural", "walking_speeds", "QUICK_PATHS", "QUICK_STYLES",
]
