"""Foot skate of Bake Walk Cycle's loops with the neural controller: the
foot cleanup on the shown pose's feet with detected contacts (before) and on
the controller's predicted feet and contacts (now), per style and speed.

    .venv/bin/python bench/bench_cycle_feet.py

Foot skate is the issue #4 metric (metrics.foot_skate, cm per 1/30 s frame);
jitter in m/s³ (the validation mocap: 131).
"""

from rigmind.backend.locomotion import metrics
from rigmind.backend.locomotion.cleanup import pin_feet
from rigmind.backend.locomotion.controller import LocomotionController
from rigmind.backend.locomotion.cycle import extract_cycle
from rigmind.backend.locomotion.path_follow import walk_cycle


def main():
    ctl = LocomotionController.load()
    print("| style | speed (m/s) | loop skate before | loop skate now | jitter before | jitter now |")
    print("|---|---|---|---|---|---|")
    for style, speed in (("normal", 1.1), ("active", 1.4), ("elderly", 0.8), ("normal", 3.0)):
        record = {}
        clip = walk_cycle(ctl, speed=speed, style=style, record=record)
        before = extract_cycle(pin_feet(clip), root="root_motion")
        now = extract_cycle(pin_feet(clip, predicted=record["contacts"], feet=record["feet"]), root="root_motion")
        print(f"| {style} | {speed} | {metrics.foot_skate(before)['skate_cm_per_frame']:.2f} | "
              f"{metrics.foot_skate(now)['skate_cm_per_frame']:.2f} | {metrics.jitter(before):.0f} | {metrics.jitter(now):.0f} |")


if __name__ == "__main__":
    main()
