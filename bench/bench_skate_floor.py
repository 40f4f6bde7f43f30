"""Foot skate on the evaluation paths with two floor conventions, and how
high the cleaned feet stand: a check that a cleanup does not win the skate
metric by lifting or sinking the feet.

- floor z = 0 (the issue's metric as `rigmind eval locomotion` computes it);
- floor per clip (`metrics.foot_skate(..., floor="clip")`: the 1st
  percentile of the toe joints' height above their planted height);
- the median over frames of the lowest foot joint's height above its
  planted height (cm).

    .venv/bin/python bench/bench_skate_floor.py
"""

import numpy as np

from rigmind.backend.locomotion import cleanup
from rigmind.backend.locomotion import dataset
from rigmind.backend.locomotion import eval
from rigmind.backend.locomotion import features
from rigmind.backend.locomotion import metrics
from rigmind.backend.locomotion.controller import LocomotionController
from rigmind.backend.locomotion.motion_matching import MotionMatchingController


def main():
    keys = ("traj_pos", "traj_dir", "joint_pos", "joint_vel", "rot6d", "root_vel", "root_ang_vel")
    train = features.load_cache(features.DEFAULT_CACHE_DIR, split="train", mirrored=True, keys=keys)
    controllers = {"neural": LocomotionController.load(), "motion matching": MotionMatchingController.build(train)}
    speeds = eval.walking_speeds([c for c in train if not c.mirrored], dataset.D2_STYLES)
    ix = [features.BANDAI_NAMES.index(n) for n in features.CONTACT_JOINTS]
    lift = np.array([metrics.BANDAI_PLANTED_HEIGHT[n] for n in features.CONTACT_JOINTS])
    rows = {}
    for name, ctl in controllers.items():
        for path in eval.FIXED_PATHS:
            for style in dataset.D2_STYLES:
                r = eval.follow(ctl, path, speeds[style], style)
                variants = {"cleanup on the shown feet": cleanup.pin_feet(r.motion, predicted=r.contacts)}
                if getattr(r, "feet", None) is not None:
                    variants["cleanup on the predicted feet (default)"] = cleanup.pin_feet(r.motion, predicted=r.contacts, feet=r.feet)
                for label, m in variants.items():
                    o = rows.setdefault((name, label), ([], [], []))
                    o[0].append(metrics.foot_skate(m)["skate_cm_per_frame"])
                    o[1].append(metrics.foot_skate(m, floor="clip")["skate_cm_per_frame"])
                    o[2].append(100 * np.median((m.world_positions()[:, ix, 2] - lift).min(axis=1)))
    print("| controller | cleanup | skate, floor z = 0 | skate, floor per clip | lowest foot joint, median (cm) |")
    print("|---|---|---|---|---|")
    for (name, label), (z0, clip, low) in rows.items():
        print(f"| {name} | {label} | {np.mean(z0):.3f} | {np.mean(clip):.3f} | {np.mean(low):+.1f} |")


if __name__ == "__main__":
    main()
