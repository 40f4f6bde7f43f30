"""Why "active" reads as another style on sharp turns (issue #12, session 7).

1. The active style walked along validation paths with a U-turn (seed 1012,
   `path_sets`; the first ``--paths`` of ``--draw`` drawn paths that have a
   turn of 150 degrees or more), exactly as Walk Along Path makes it
   (`locomotion_scene.generate_path`, at each path's speeds x the style's
   default). Every 2 s window of the style classifier of `rigmind eval
   locomotion` is binned by the walk's mean speed in it, and the share read
   as "active" is printed per bin (the start window and the last two, the
   stop, apart). ``--accel-scale`` multiplies the follower's walking
   acceleration and braking (m/s^2) to test a harder-cornering active walk.
2. The training turn clips ("walk-turn-left/right", d2 train split) per
   style: their turn, their slowest speed against the style's default speed
   (hips smoothed over 1 s, first and last second left out), and the 95th
   percentile of their along-track acceleration.

No Blender. Usage:
    .venv/bin/python bench/bench_active_style_windows.py [--accel-scale 1.0 1.7] [--paths 16]
"""

from __future__ import annotations

import argparse

import numpy as np

from rigmind.backend.locomotion import dataset
from rigmind.backend.locomotion import eval
from rigmind.backend.locomotion import features
from rigmind.backend.locomotion import path_follow
from rigmind.backend.locomotion import path_sets
from rigmind.backend.locomotion import style_classifier
from rigmind.backend.locomotion import controllers, walk_generation, walk_speeds

BINS = ((0.0, 0.7), (0.7, 0.9), (0.9, 1.1), (1.1, 1.3), (1.3, 9.0))


def window_starts(frames: int, window: int, hop: int) -> list:
    starts = list(range(0, frames - window + 1, hop)) or [0]
    if starts[-1] != max(frames - window, 0):
        starts.append(frames - window)
    return starts


def style_windows(ctl, clf, paths, style: str):
    """Per window ``(mean speed m/s, read as style, phase)``; per path
    ``(mean P(style), read as style)`` (the evaluation's verdict)."""
    default = walk_speeds.style_speeds(style, "walk")[0]
    k = clf.styles.index(style)
    rows, per_path = [], []
    for p in paths:
        motion, _ = walk_generation.generate_path(ctl, p.points, style=style, speed=p.speeds(default))
        c = style_classifier._as_features(motion)
        probs = clf.window_probs(style_classifier.frame_features(c))
        speed = np.linalg.norm(np.asarray(c.root_vel), axis=1)
        starts = window_starts(c.num_frames, clf.window, clf.hop)
        for j, (s, pw) in enumerate(zip(starts, probs)):
            phase = "start" if j == 0 else "stop" if j >= len(starts) - 2 else "walk"
            rows.append((float(speed[s:s + clf.window].mean()), bool(pw.argmax() == k), phase))
        per_path.append((float(probs.mean(axis=0)[k]), bool(probs.mean(axis=0).argmax() == k)))
    return rows, per_path


def turn_clips(data_dir):
    split = dataset.split_of(dataset.load_split())
    out = {}
    for c in dataset.list_clips(data_dir, datasets=("d2",)):
        if split.get(c.file) != "train" or not c.content.startswith("walk-turn"):
            continue
        m = features.load_clip(c)
        h = m.world_positions()[:, m.skeleton.names.index("Hips"), :2]
        n = max(int(round(m.fps)), 1)
        box = np.ones(n) / n
        sm = np.stack([np.convolve(h[:, i], box, "valid") for i in range(2)], 1)
        v = np.diff(sm, axis=0) * m.fps
        sp = np.linalg.norm(v, axis=1)
        heading = np.unwrap(np.arctan2(v[:, 1], v[:, 0]))[sp > 0.3]
        inner = sp[n:-n] if len(sp) > 3 * n else sp
        sps = np.convolve(sp, box, "valid")
        acc = np.abs(np.diff(sps)) * m.fps
        out.setdefault(c.style_key, []).append((
            float(np.degrees(abs(heading[-1] - heading[0]))) if len(heading) > 2 else 0.0,
            float(inner.min() / walk_speeds.style_speeds(c.style_key, "walk")[0]),
            float(np.percentile(acc[sps[1:] > 0.3], 95))))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--style", default="active")
    ap.add_argument("--draw", type=int, default=80, help="validation paths drawn")
    ap.add_argument("--paths", type=int, default=16, help="of those, how many with a U-turn (>= 150 deg)")
    ap.add_argument("--accel-scale", type=float, nargs="+", default=[1.0])
    ap.add_argument("--data", default=str(controllers.default_data_dir()))
    args = ap.parse_args(argv)
    features.build_cache(args.data, features.DEFAULT_CACHE_DIR, seed=0)
    clf = eval.cached_classifier(features.DEFAULT_CACHE_DIR, 0)
    ctl = controllers.load_controller("neural")
    paths = [p for p in path_sets.random_paths(path_sets.VALIDATION_SEED, args.draw) if np.any(np.abs(p.turns_deg) >= 150)]
    paths = paths[:args.paths]
    print(f"{len(paths)} validation paths with a U-turn: {', '.join(p.name for p in paths)}")
    limits = path_follow._gait_limits
    try:
        for f in args.accel_scale:
            path_follow._gait_limits = lambda top, lateral_scale=1.0, f=f: tuple(
                x * m for x, m in zip(limits(top, lateral_scale), (f, f, 1.0)))
            rows, per_path = style_windows(ctl, clf, paths, args.style)
            probs = [p for p, _ in per_path]
            print(f"\n{args.style}, walking accel/brake x{f}: mean P({args.style}) over paths {np.mean(probs):.3f}, "
                  f"lowest {np.min(probs):.2f}; paths read {args.style}: "
                  f"{sum(h for _, h in per_path)} of {len(per_path)}; windows read {args.style}: "
                  f"{sum(r[1] for r in rows)}/{len(rows)}")
            print("| window | mean speed (m/s) | windows | read as " + args.style + " |\n|---|---|---|---|")
            for lo, hi in BINS:
                sel = [r for r in rows if r[2] == "walk" and lo <= r[0] < hi]
                share = 100.0 * np.mean([r[1] for r in sel]) if sel else float("nan")
                print(f"| walking | {lo:.1f}-{hi if hi < 9 else 'up':} | {len(sel)} | {share:.0f}% |")
            for ph in ("start", "stop"):
                sel = [r for r in rows if r[2] == ph]
                print(f"| {ph} | {np.mean([r[0] for r in sel]):.2f} (mean) | {len(sel)} | "
                      f"{100.0 * np.mean([r[1] for r in sel]):.0f}% |")
    finally:
        path_follow._gait_limits = limits
    print("\n| style | turn clips | turn (deg, median) | slowest speed / default (median) | along-track accel p95 (m/s^2, median) |")
    print("|---|---|---|---|---|")
    for style, r in sorted(turn_clips(args.data).items()):
        r = np.array(r)
        print(f"| {style} | {len(r)} | {np.median(r[:, 0]):.0f} | {np.median(r[:, 1]):.2f} | {np.median(r[:, 2]):.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
