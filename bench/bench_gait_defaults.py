"""Gaits and speeds that mean what they say: every style walked and run at
its default speed (presets/locomotion_speeds.json, the median of its own
training clips) by the neural controller, feet cleaned as Walk Along Path
cleans them, and measured:

- achieved speed: the hips' mean horizontal speed over 6 s of steady
  locomotion (after a 2.5 s warm-up), against the default (within 10 %?);
- flight phase (runs): the share of strides (left touch-down to the next)
  with at least one frame where no foot joint is within 2 cm of its planted
  height (both feet off the ground); the validation mocap runs of the style
  for reference;
- cadence: steps a minute.

    .venv/bin/python bench/bench_gait_defaults.py [--data ../shared/data]

Units: m/s, steps/min; Bandai skeleton (the controller's), Blender Z-up.
"""

import argparse
from pathlib import Path

import numpy as np

from rigmind.backend.locomotion import dataset
from rigmind.backend.locomotion import features
from rigmind.backend.locomotion.cleanup import pin_feet
from rigmind.backend.locomotion.metrics import BANDAI_PLANTED_HEIGHT, FOOT_JOINTS
from rigmind.backend.locomotion.path_follow import walk_cycle
from rigmind.backend.locomotion import controllers, walk_speeds

REPO = Path(__file__).resolve().parents[1]
OFF = 0.02


def gait_figures(motion):
    """``(mean hips speed m/s, flight-stride share, steps/min)``."""
    P = motion.world_positions()
    n = motion.skeleton.names
    fps = motion.fps
    hips = P[:, n.index("Hips"), :2]
    speed = float(np.mean(np.linalg.norm(np.diff(hips, axis=0), axis=1)) * fps)
    lift = np.stack([P[:, n.index(j), 2] - BANDAI_PLANTED_HEIGHT[j] for j in FOOT_JOINTS], 1)
    floor = np.percentile(lift, 2, axis=0)
    down = lift - floor < OFF
    left = down[:, 0] | down[:, 1]
    right = down[:, 2] | down[:, 3]
    flight = ~left & ~right
    td_l = np.nonzero(left[1:] & ~left[:-1])[0] + 1
    td_r = np.nonzero(right[1:] & ~right[:-1])[0] + 1
    strides = [(a, b) for a, b in zip(td_l[:-1], td_l[1:]) if b - a > 5]
    share = float(np.mean([flight[a:b].any() for a, b in strides])) if strides else float("nan")
    dur = (len(P) - 1) / fps
    steps = 60.0 * (len(td_l) + len(td_r)) / dur
    return speed, share, steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    args = ap.parse_args()
    ctl = controllers.load_controller("neural")
    split = dataset.split_of(dataset.load_split())
    clips = [c for c in dataset.list_clips(args.data, datasets=("d2",)) if split.get(c.file) == "validation"]
    print("| style | gait | default (m/s) | achieved (m/s) | achieved / default | strides with flight | "
          "mocap strides with flight | steps/min | mocap steps/min |")
    print("|---|---|---|---|---|---|---|---|---|")
    for style in dataset.D2_STYLES:
        for gait in ("walk", "run"):
            default, _ = walk_speeds.style_speeds(style, gait)
            rec = {}
            clip = walk_cycle(ctl, speed=default, style=style, seconds=6.0, record=rec)
            clip = pin_feet(clip, predicted=rec.get("contacts"), feet=rec.get("feet"))
            v, share, steps = gait_figures(clip)
            mo = [gait_figures(features.load_clip(c)) for c in clips if c.style_key == style and c.content == gait]
            mo_share = np.nanmean([m[1] for m in mo]) if mo else float("nan")
            mo_steps = np.mean([m[2] for m in mo]) if mo else float("nan")
            print(f"| {style} | {gait} | {default:.2f} | {v:.2f} | {v / default:.2f} | {share:.0%} | {mo_share:.0%} | "
                  f"{steps:.0f} | {mo_steps:.0f} |", flush=True)


if __name__ == "__main__":
    main()
