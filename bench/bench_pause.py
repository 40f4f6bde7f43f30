"""Issue #16 (one path follower): the evaluation's stop-and-go path (8 m
straight, stand 1.5 s at 4 m) walked by each controller in each style at the
evaluation's speeds, with whichever follower the checkout's evaluation uses
(``eval.follow``: before issue #16's pause support, ``eval.pursue_path``; after
it, ``path_follow.follow_path``). Prints one row per controller (mean over the
7 styles, worst style in brackets) and writes the per-run numbers as JSON.

    .venv/bin/python bench/bench_pause.py --out after.json
    PYTHONPATH=/tmp/old .venv/bin/python bench/bench_pause.py --cache .cache/locomotion --out before.json

where /tmp/old/rigmind is ``git archive`` of a commit before the change. The
motion-matching controller is the evaluation's (every training clip of the
feature cache, mirrored copies included).

Measured per run: trajectory error (root to the polyline: mean, max; final =
last frame to the end point, cm), the evaluation's foot skate (cm per frame,
raw), the stop: the longest stretch of frames with the hips slower than
``STILL`` m/s while the root is within 0.5 m of the pause point (its
duration, s; the root's mean distance from the pause point over it, cm),
and the hips' peak speed (m/s).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from rigmind.backend.locomotion import eval
from rigmind.backend.locomotion import features
from rigmind.backend.locomotion import metrics
from rigmind.backend.locomotion.controller import LocomotionController
from rigmind.backend.locomotion.motion_matching import MotionMatchingController
from rigmind.backend import paths

#: Hip speed (m/s) below which the character counts as standing.
STILL = 0.1
MM_KEYS = ("traj_pos", "traj_dir", "joint_pos", "joint_vel", "rot6d", "root_vel", "root_ang_vel")


def stop_stats(motion, root_xy, pause_xy) -> dict:
    """The longest still stretch near the pause point (see the module docstring)."""
    fps = motion.fps
    hips = motion.world_positions()[:, motion.skeleton.index("Hips"), :2]
    hip_speed = np.linalg.norm(np.gradient(hips, axis=0), axis=1) * fps
    near = np.linalg.norm(root_xy - pause_xy, axis=1) < 0.5
    still = (hip_speed < STILL) & near
    best, k = (0, 0), 0
    while k < len(still):
        if still[k]:
            j = k
            while j < len(still) and still[j]:
                j += 1
            best = max(best, (k, j), key=lambda r: r[1] - r[0])
            k = j
        else:
            k += 1
    a, b = best
    dist = float(np.mean(np.linalg.norm(root_xy[a:b] - pause_xy, axis=1))) if b > a else None
    return {"stop_s": (b - a) / fps, "stop_dist_cm": None if dist is None else 100 * dist,
            "hip_peak_m_s": float(hip_speed.max())}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", help="feature cache (default the checkout's .cache/locomotion)")
    ap.add_argument("--out", help="per-run JSON")
    args = ap.parse_args(argv)
    spec = next(p for p in eval.FIXED_PATHS if p.name == "stop-and-go")
    pause_arc = spec.pauses[0][0]
    pause_xy = np.array([pause_arc, 0.0])  # the path runs along +X from the origin
    train = features.load_cache(args.cache, split="train", mirrored=True, keys=MM_KEYS)
    speeds = eval.walking_speeds([c for c in train if not c.mirrored], eval.D.D2_STYLES)
    controllers = {"neural": LocomotionController.load(paths.model_path("locomotion.pt")),
                   "motion matching": MotionMatchingController.build(train)}
    runs = []
    for name, ctl in controllers.items():
        for style in eval.D.D2_STYLES:
            t0 = time.perf_counter()
            res = eval.follow(ctl, spec, speeds[style], style)
            m = res.motion
            root = m.root_positions[:, :2]
            te = metrics.trajectory_error(root, spec.points)
            run = dict(controller=name, style=style, follower=getattr(res, "follower", "?"), frames=m.num_frames,
                       traj_mean_cm=te.mean_cm, traj_max_cm=te.max_cm, traj_final_cm=te.final_cm,
                       skate_cm_per_frame=metrics.foot_skate(m)["skate_cm_per_frame"], seconds=time.perf_counter() - t0)
            run.update(stop_stats(m, root, pause_xy))
            runs.append(run)
    keys = ("traj_mean_cm", "traj_max_cm", "traj_final_cm", "skate_cm_per_frame", "stop_s", "stop_dist_cm",
            "hip_peak_m_s")
    print(f"stop-and-go ({spec.description}), follower: {runs[0]['follower']}; mean over styles [worst]")
    print("| controller | " + " | ".join(keys) + " |")
    print("|---|" + "---|" * len(keys))
    for name in controllers:
        mine = [r for r in runs if r["controller"] == name]
        cells = []
        for k in keys:
            v = np.array([np.nan if r[k] is None else r[k] for r in mine], dtype=float)
            worst = np.nanmin(v) if k == "stop_s" else np.nanmax(v)
            cells.append(f"{np.nanmean(v):.2f} [{worst:.2f}]")
        print(f"| {name} | " + " | ".join(cells) + " |")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(runs, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
