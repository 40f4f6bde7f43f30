"""How often the knees move fast after the foot cleanup: the share of
leg-frames whose knee flexion changes by more than 20° in one 1/30 s frame,
for the neural controller on the evaluation paths (6 paths × 7 styles): raw,
cleaned on the shown pose's feet, and cleaned on the predicted feet (the
default since 2026-11-29) with and without the knee speed limit
(``PinConfig(knee_speed=)``, on by default since 2026-11-29, session 4).

    .venv/bin/python bench/bench_knee_snaps.py
"""

import numpy as np

from rigmind.backend.locomotion import cleanup
from rigmind.backend.locomotion import dataset
from rigmind.backend.locomotion import eval
from rigmind.backend.locomotion import features
from rigmind.backend.locomotion.controller import LocomotionController


def main():
    ctl = LocomotionController.load()
    train = features.load_cache(features.DEFAULT_CACHE_DIR, split="train", mirrored=False, keys=("root_vel",))
    speeds = eval.walking_speeds(train, dataset.D2_STYLES)
    count = {"raw": 0, "cleaned, shown feet": 0, "cleaned, predicted feet, no knee limit": 0,
             "cleaned, predicted feet": 0}
    worst = dict.fromkeys(count, 0.0)
    total = 0
    for path in eval.FIXED_PATHS:
        for style in dataset.D2_STYLES:
            r = eval.follow(ctl, path, speeds[style], style)
            for label, m in (
                ("raw", r.motion),
                ("cleaned, shown feet", cleanup.pin_feet(r.motion, predicted=r.contacts)),
                ("cleaned, predicted feet, no knee limit",
                 cleanup.pin_feet(r.motion, predicted=r.contacts, feet=r.feet, config=cleanup.PinConfig(knee_speed=np.inf))),
                ("cleaned, predicted feet", cleanup.pin_feet(r.motion, predicted=r.contacts, feet=r.feet)),
            ):
                d = np.abs(np.diff(np.degrees(cleanup.knee_angles(m)), axis=0))
                count[label] += int((d > 20.0).sum())
                worst[label] = max(worst[label], float(d.max()))
            total += 2 * (r.motion.num_frames - 1)
    print("| motion | leg-frames with a knee change > 20°/frame | largest change (°/frame) |")
    print("|---|---|---|")
    for label in count:
        print(f"| {label} | {count[label]} of {total} ({100 * count[label] / total:.2f} %) | {worst[label]:.1f} |")


if __name__ == "__main__":
    main()
