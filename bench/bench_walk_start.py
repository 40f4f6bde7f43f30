"""The start of Walk Along Path's walk, and walks that never arrive (issue #12, session 8).

1. The start: each style walks a straight 8 m path at its default speed as
   the add-on makes it (`locomotion_scene.generate_path`). Printed: the
   torso's pitch (hips to neck from vertical, degrees, + = forward), its
   largest value over the first 1.5 s and over the steady walk (2.5-4 s),
   and the hips' speed (m/s) over 0.5-1.0 s. The network starts from
   standing well only in the normal style (the one style whose clips
   begin standing); from the others' stances it lunges.
2. Stalls (``--stall-paths N``): each style walks the first N validation
   paths (seed 1012, `path_sets`; never the held-out seed). A walk stalls
   when it never begins its stop (``stopped_at`` None) or stands still
   (root under 0.05 m/s) for more than 1 s before its stop.

``--lead`` sets `path_follow.FACING_LEAD_SECONDS` (s) for both. No
Blender. Usage:
    .venv/bin/python bench/bench_walk_start.py [--lead 0.2 0.45] [--stall-paths 80]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from rigmind.backend.locomotion import dataset
from rigmind.backend.locomotion import path_follow
from rigmind.backend.locomotion import path_sets
from rigmind.backend.locomotion import controllers, walk_generation, walk_speeds


def start_pitch(ctl, style: str):
    """``(largest pitch over the first 1.5 s, over 2.5-4 s, hips speed over 0.5-1 s)``."""
    v = walk_speeds.style_speeds(style, "walk")[0]
    motion, _ = walk_generation.generate_path(ctl, np.array([[0.0, 0.0], [8.0, 0.0]]), style=style, speed=v)
    fps = motion.fps
    wp = motion.world_positions()
    names = list(motion.skeleton.names)
    hips = int(np.nonzero(motion.skeleton.parents == 0)[0][0])
    d = wp[:, names.index("Neck")] - wp[:, hips]
    pitch = np.degrees(np.arctan2(d[:, 0], d[:, 2]))  # the path runs along +X
    a, b, c = (int(round(t * fps)) for t in (1.5, 2.5, 4.0))
    h = wp[int(0.5 * fps):int(1.0 * fps) + 1, hips, :2]
    speed = np.linalg.norm(np.diff(h, axis=0), axis=1).sum() / 0.5
    return float(pitch[:a].max()), float(pitch[b:c].max()), float(speed)


def stalls(ctl, paths, styles) -> list:
    """``(style, path, stopped_at, longest still run in frames)`` of the walks that stall."""
    out = []
    for style in styles:
        v = walk_speeds.style_speeds(style, "walk")[0]
        for p in paths:
            _, res = walk_generation.generate_path(ctl, p.points, style=style, speed=p.speeds(v))
            fps = res.motion.fps
            sp = np.linalg.norm(np.diff(res.root_xy, axis=0), axis=1) * fps
            still = (sp < 0.05) & ~res.stopping[1:]
            longest = run = 0
            for s in still:
                run = run + 1 if s else 0
                longest = max(longest, run)
            if res.stopped_at is None or longest > fps:
                out.append((style, p.name, res.stopped_at, longest))
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lead", type=float, nargs="+", default=[path_follow.FACING_LEAD_SECONDS])
    ap.add_argument("--stall-paths", type=int, default=0, help="validation paths per style for the stall check")
    a = ap.parse_args(argv)
    ctl = controllers.load_controller("neural")
    print("| lead (s) | style | torso pitch, first 1.5 s (deg, max) | steady 2.5-4 s | hips speed 0.5-1 s (m/s) |")
    print("|---|---|---|---|---|")
    for lead in a.lead:
        path_follow.FACING_LEAD_SECONDS = lead
        for style in dataset.D2_STYLES:
            s, w, v = start_pitch(ctl, style)
            print(f"| {lead:g} | {style} | {s:.1f} | {w:.1f} | {v:.2f} |", flush=True)
    if a.stall_paths:
        paths = path_sets.random_paths(path_sets.VALIDATION_SEED, a.stall_paths)
        for lead in a.lead:
            path_follow.FACING_LEAD_SECONDS = lead
            t0 = time.time()
            bad = stalls(ctl, paths, dataset.D2_STYLES)
            print(f"\nlead {lead:g} s: {len(dataset.D2_STYLES)} styles x {len(paths)} validation paths: "
                  f"{len(bad)} stalled {bad} ({time.time() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
