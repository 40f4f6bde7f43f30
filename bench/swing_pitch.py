"""The swing foot's pitch through the swing, generated vs mocap (issue #12, session 8).

On the controller's skeleton (no Blender): for each swing (a run of >= 5
frames with the ankle not planted, as the rig evaluation counts them), the
foot's pitch (ankle -> toe joint, below the horizontal, degrees, + = toe
down) minus the foot's median stance pitch, resampled at phases 0, 0.1 ..
1; the median over swings is printed for

- the validation mocap (6 normal walk and turn clips, as the rig evaluation's reference),
- the controller's walks along 16 validation paths at X Bot's scale, cleaned
  as Walk Along Path cleans them (``locomotion_scene.path_pin_config``),
- the same walks before the clean-up (the network's own pitch).

Usage:
    .venv/bin/python bench/swing_pitch.py [--data ../shared/data] [--count 16]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_swing_lift  # noqa: E402
import bench_swing_toe_angle  # noqa: E402

from rigmind.backend.locomotion import cleanup  # noqa: E402
from rigmind.backend.locomotion import features  # noqa: E402
from rigmind.backend.locomotion import path_sets  # noqa: E402
from rigmind.evaluation import locomotion_rig_scores as rig_scores  # noqa: E402
from rigmind.backend.foot_contacts import runs  # noqa: E402
from rigmind.backend.locomotion import controllers, path_pin

PHASES = np.linspace(0.0, 1.0, 11)


def swing_profiles(motion, leg: float) -> np.ndarray:
    """``[swings, 11]`` relative pitch (deg) of each swing of both feet."""
    names = list(motion.skeleton.names)
    _, wp = motion.world()
    rows = []
    for s in "LR":
        ankle, toe = wp[:, names.index(f"Foot_{s}")], wp[:, names.index(f"Toes_{s}")]
        pitch = bench_swing_toe_angle.pitch_deg(ankle, toe)
        swing = ~rig_scores.planted_contacts(ankle, motion.fps, leg)
        flat = np.median(pitch[~swing])
        for a, b in zip(*runs(swing)):
            if b - a >= 5:
                rows.append(np.interp(PHASES, np.linspace(0.0, 1.0, b - a), pitch[a:b] - flat))
    return np.array(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(controllers.default_data_dir()))
    ap.add_argument("--count", type=int, default=16)
    args = ap.parse_args(argv)
    ctl = controllers.load_controller("neural")
    leg = controllers.controller_leg_length(ctl)
    mocap = np.concatenate([swing_profiles(features.load_clip(c), leg) for c in bench_swing_toe_angle.validation_mocap(args.data)])
    cfg = path_pin.path_pin_config("normal")
    walks = bench_swing_lift.walks(ctl, path_sets.random_paths(path_sets.VALIDATION_SEED, args.count), scale=1.11)
    cleaned = np.concatenate([swing_profiles(cleanup.pin_feet(r.motion, predicted=r.contacts, feet=r.feet, config=cfg), leg)
                              for _, r in walks])
    raw = np.concatenate([swing_profiles(r.motion, leg) for _, r in walks])
    print("swing phase 0..1 step .1; foot pitch minus stance pitch (deg, + = toe down), median")
    for name, rows in (("mocap  ", mocap), ("gen    ", cleaned), ("gen raw", raw)):
        print(name, np.round(np.median(rows, 0), 1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
