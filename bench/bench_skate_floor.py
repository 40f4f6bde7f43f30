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

from rigmind.backend.locomotion import cleanup as C
from rigmind.backend.locomotion import dataset as D
from rigmind.backend.locomotion import eval as E
from rigmind.backend.locomotion import features as FT
from rigmind.backend.locomotion import metrics as MX
from rigmind.backend.locomotion.controller import LocomotionController
from rigmind.backend.locomotion.motion_matching import MotionMatchingController


def main():
    keys = ("traj_pos", "traj_dir", "joint_pos", "joint_vel", "rot6d", "root_vel", "root_ang_vel")
    train = FT.load_cache(FT.DEFAULT_CACHE_DIR, split="train", mirrored=True, keys=keys)
    controllers = {"neural": LocomotionController.load(), "motion matching": MotionMatchingController.build(train)}
    speeds = E.walking_speeds([c for c in train if not c.mirrored], D.D2_STYLES)
    ix = [FT.BANDAI_NAMES.index(n) for n in FT.CONTACT_JOINTS]
    lift = np.array([MX.BANDAI_PLANTED_HEIGHT[n] for n in FT.CONTACT_JOINTS])
    rows = {}
    for name, ctl in controllers.items():
        for path in E.FIXED_PATHS:
            for style in D.D2_STYLES:
                r = E.follow(ctl, path, speeds[style], style)
                variants = {"cleanup on the shown feet": C.pin_feet(r.motion, predicted=r.contacts)}
                if getattr(r, "feet", None) is not None:
                    variants["cleanup on the predicted feet (default)"] = C.pin_feet(r.motion, predicted=r.contacts, feet=r.feet)
                for label, m in variants.items():
                    o = rows.setdefault((name, label), ([], [], []))
                    o[0].append(MX.foot_skate(m)["skate_cm_per_frame"])
                    o[1].append(MX.foot_skate(m, floor="clip")["skate_cm_per_frame"])
                    o[2].append(100 * np.median((m.world_positions()[:, ix, 2] - lift).min(axis=1)))
    print("| controller | cleanup | skate, floor z = 0 | skate, floor per clip | lowest foot joint, median (cm) |")
    print("|---|---|---|---|---|")
    for (name, label), (z0, clip, low) in rows.items():
        print(f"| {name} | {label} | {np.mean(z0):.3f} | {np.mean(clip):.3f} | {np.mean(low):+.1f} |")


if __name__ == "__main__":
    main()
