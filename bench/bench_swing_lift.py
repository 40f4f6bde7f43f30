"""Swing lift vs knee pops, on the controller's own skeleton (issue #12, session 7).

Walks the controller along seeded random paths (validation seed by default;
`path_sets`), normal style at each path's speeds x the style's default,
exactly as Walk Along Path does up to the foot clean-up, then runs
`cleanup.pin_feet` with each swing clearance asked for and reports:

- the median swing peak of the toe over its planted level (cm; a swing is a
  run of >= 5 frames with the ankle not planted, as the rig evaluation
  counts them), against the validation mocap's on the same skeleton;
- the largest one-frame move of any leg joint relative to the hips (leg
  lengths), against the validation mocap's 99.9th percentile (median over
  its clips) on the same skeleton, and where it happens;
- the knees' one-frame moves (same measure): the largest, the largest while
  the knee straightens (the landing), and how many knee frames move more
  than :data:`KNEE_STEP_LIMIT` (the mocap's largest is 0.067).

No Blender. Usage:
    .venv/bin/python bench/bench_swing_lift.py --count 16 --scale 1.055 1.11 1.12 1.237 --clearance 0.08 0.11 \
        [--knee-speed 400]

(``--scale``: the four evaluation rigs' leg lengths over the controller's;
the controller walks each path shrunk by it, as Walk Along Path does.)
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import numpy as np


from rigmind.backend.locomotion import cleanup
from rigmind.backend.locomotion import path_sets
from rigmind.backend.locomotion.path_follow import FollowConfig, Path2D, follow_path, snap_to_path
from rigmind.backend.locomotion.swing_pitch import style_profiles
from rigmind.evaluation import locomotion_rigs
from rigmind.evaluation import locomotion_rig_scores as rig_scores
from rigmind.backend.locomotion import controllers, walk_speeds

#: Knee move (leg lengths, one frame, relative to the hips) counted as a sweep:
#: above the validation mocap's largest (0.067 on this skeleton).
KNEE_STEP_LIMIT = 0.08
BODY = ("Hips", "UpperLeg_L", "UpperLeg_R", "LowerLeg_L", "LowerLeg_R", "Foot_L", "Foot_R", "Toes_L", "Toes_R")


def measures(motion, leg: float) -> dict:
    names = list(motion.skeleton.names)
    _, wp = motion.world()
    pos = {n: wp[:, names.index(n)] for n in BODY}
    fps = motion.fps
    hips = pos["Hips"]
    legs = [n for n in BODY if n != "Hips"]
    stack = np.stack([pos[n] for n in legs], 1)
    rel = np.linalg.norm(np.diff(stack - hips[:, None], axis=0), axis=-1) / leg  # [F-1, J]
    fr, j = np.unravel_index(np.argmax(rel), rel.shape)
    peaks = []
    for side in "LR":
        toe = pos[f"Toes_{side}"][:, 2]
        toe = toe - np.percentile(toe, 2)
        peaks += rig_scores.swing_peaks(toe, ~rig_scores.planted_contacts(pos[f"Foot_{side}"], fps, leg))
    knee = np.degrees(cleanup.knee_angles(motion))
    kj = [legs.index("LowerLeg_L"), legs.index("LowerLeg_R")]
    kfr, kside = np.unravel_index(np.argmax(rel[:, kj]), (len(rel), 2))
    # Knee steps while the knee straightens (flexion falling): the landing.
    straightening = np.diff(knee, axis=0) < 0
    land = float(np.max(np.where(straightening, rel[:, kj], 0.0)))
    return {"toe_peak_cm": float(np.median(peaks) * 100) if peaks else float("nan"),
            "max_step": float(rel.max()), "p999": float(np.percentile(rel.max(axis=1), 99.9)),
            "where": (int(fr) + 1, legs[j]), "knee_step_deg": float(np.abs(np.diff(knee, axis=0)).max()),
            "knee_step": float(rel[:, kj].max()), "knee_land_step": land,
            "knee_frames_over": int((rel[:, kj] > KNEE_STEP_LIMIT).sum()), "knee_where": (int(kfr) + 1, "LR"[kside]),
            "knee_p999": float(np.percentile(rel[:, kj].max(axis=1), 99.9))}


def mocap_reference(data_dir, leg: float) -> dict:
    from rigmind.backend.locomotion import dataset
    from rigmind.backend.locomotion import features

    split = dataset.split_of(dataset.load_split())
    clips = [c for c in dataset.list_clips(data_dir, datasets=("d2",)) if split.get(c.file) == "validation"]
    rows = []
    for key in locomotion_rigs.MOCAP_CLIPS:
        for c in sorted((c for c in clips if f"{c.content}_{c.style_key}" == key), key=lambda c: c.file)[:2]:
            rows.append(measures(features.load_clip(c), leg))
    return {"toe_peak_cm": float(np.median([r["toe_peak_cm"] for r in rows])),
            "p999": float(np.median([r["p999"] for r in rows])),
            "knee_p999": float(np.median([r["knee_p999"] for r in rows])),
            "knee_max": float(max(r["knee_step"] for r in rows))}


def walks(ctl, paths, style="normal", scale: float = 1.0):
    """The controller's walks as Walk Along Path makes them for a rig whose
    legs are ``scale`` x the controller's (the path shrunk by it)."""
    default = walk_speeds.resolve_speed(None, style, "walk", 1.0)[0]
    out = []
    for p in paths:
        path = Path2D(p.points / scale)
        res = follow_path(ctl, path.points, speed=p.speeds(default), style=style, config=FollowConfig())
        out.append((p, snap_to_path(res, path.points)))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", default="validation", choices=["validation", "held-out"])
    ap.add_argument("--count", type=int, default=16)
    ap.add_argument("--clearance", type=float, nargs="+", default=[0.08, 0.11])
    ap.add_argument("--knee-speed", type=float, default=None, help="deg/s (default PinConfig's)")
    ap.add_argument("--landing-slope", type=float, default=None, help="PinConfig.swing_landing_slope")
    ap.add_argument("--no-swing-pitch", action="store_true",
                    help="leave the swing foot's pitch to the network (Walk Along Path sets it: PinConfig.swing_pitch)")
    ap.add_argument("--scale", type=float, nargs="+", default=[1.0],
                    help="rig leg length / the controller's (mannequin 1.055, X Bot 1.110, RPM 1.120, Rigify 1.237)")
    ap.add_argument("--data", default=str(controllers.default_data_dir()))
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    seed = path_sets.VALIDATION_SEED if args.set == "validation" else path_sets.HELD_OUT_SEED
    ctl = controllers.load_controller("neural")
    leg = controllers.controller_leg_length(ctl)
    ref = mocap_reference(args.data, leg)
    print(f"mocap (validation, normal): toe peak {ref['toe_peak_cm']:.1f} cm, p99.9 step {ref['p999']:.4f} leg, "
          f"knee p99.9 step {ref['knee_p999']:.4f}, knee max step {ref['knee_max']:.4f}")
    t0 = time.perf_counter()
    taken = [w for sc in args.scale for w in walks(ctl, path_sets.random_paths(seed, args.count), scale=sc)]
    print(f"walked {len(taken)} paths in {time.perf_counter() - t0:.0f} s")
    for cl in args.clearance:
        cfg = cleanup.PinConfig(swing_clearance=cl, swing_pitch=None if args.no_swing_pitch else style_profiles("normal"))
        if args.landing_slope is not None:
            cfg = replace(cfg, swing_landing_slope=args.landing_slope)
        if args.knee_speed is not None:
            cfg = replace(cfg, knee_speed=float(np.radians(args.knee_speed)))
        rows = []
        for p, res in taken:
            m = cleanup.pin_feet(res.motion, predicted=res.contacts, feet=res.feet, config=cfg)
            r = measures(m, leg)
            rows.append(r)
            if args.verbose:
                print(f"  {cl:.3f} {p.name} toe {r['toe_peak_cm']:.1f} step {r['max_step']:.3f} "
                      f"({r['max_step'] / ref['p999']:.2f}x) at {r['where']} knee {r['knee_step']:.3f} at {r['knee_where']}")
        worst = max(rows, key=lambda r: r["max_step"])
        print(f"clearance {cl:.3f}: toe peak {np.median([r['toe_peak_cm'] for r in rows]):.1f} cm "
              f"({np.median([r['toe_peak_cm'] for r in rows]) / ref['toe_peak_cm']:.2f}x mocap), largest leg step "
              f"{worst['max_step']:.3f} leg ({worst['max_step'] / ref['p999']:.2f}x mocap p99.9), "
              f"largest knee step {max(r['knee_step'] for r in rows):.3f} leg (straightening "
              f"{max(r['knee_land_step'] for r in rows):.3f}; takes with a straightening step over {KNEE_STEP_LIMIT}: "
              f"{sum(r['knee_land_step'] > KNEE_STEP_LIMIT for r in rows)} of {len(rows)}; leg-frames over it: "
              f"{sum(r['knee_frames_over'] for r in rows)}), fastest knee flexion "
              f"{max(r['knee_step_deg'] for r in rows):.1f} deg/frame", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
