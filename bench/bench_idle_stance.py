"""How Walk Along Path ends standing, per style, on the rigs (issue #12's
"the standing pose is the mocap's idle stance").

For each rig and style, bake the issue's L path ``0,0;4,0;4,3`` at the
style's default speed and read the evaluated pose
(:func:`rigmind.evaluation.locomotion_rigs.end_stance`): the last
frame's ankle distance, hip-joint width and knee flexion, and the ankles'
speed over the held frames and the feet's skate over the final settle
(the steps into the stance + the hold).

``--stored-start-pose`` measures the behaviour before the idle stance: the
controller stands in its stored start pose (the stillest two-feet-down
training frame of the style) instead.

Usage: .venv/bin/python bench/bench_idle_stance.py [--rigs mannequin,xbot] [--styles all] [--stored-start-pose]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="rigmind-bench-"))

import bpy  # noqa: E402,F401  (before rigmind: Blender's user folder is set above)
import numpy as np  # noqa: E402

from rigmind.backend.locomotion import vector_layout  # noqa: E402
from rigmind.evaluation import locomotion_rigs  # noqa: E402
from rigmind.backend.locomotion import controllers

PATH = np.array([[0.0, 0.0], [4.0, 0.0], [4.0, 3.0]])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rigs", default="mannequin,xbot")
    ap.add_argument("--styles", default="all")
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[1] / ".." / "shared" / "data"))
    ap.add_argument("--stored-start-pose", action="store_true", help="before: stand in the stored start pose")
    a = ap.parse_args(argv)
    styles = vector_layout.STYLES if a.styles == "all" else a.styles.split(",")
    ctl = controllers.load_controller("neural")
    if a.stored_start_pose:
        def stored(name):
            start = ctl.start_poses.get(name, ctl.start_poses["normal"])
            parts = vector_layout.unpack_pose(start[: vector_layout.POSE_SIZE])
            return parts["joint_pos"], parts["joint_vel"], parts["rot6d"], start[vector_layout.POSE_SIZE:].copy()
        ctl._stance = stored
    print("| rig | style | end ankle distance (cm) | hip-joint width (cm) | end knee flexion (deg) | ankle speed, held frames (m/s) | skate over the settle (cm/frame) | skate, whole take (cm/frame) | final err (cm) | heading (deg) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for rig in a.rigs.split(","):
        for st in styles:
            arm = locomotion_rigs.load_rig(rig, a.data)
            r = locomotion_rigs.bake_and_score(arm, PATH, style=st, speed=None, controller=ctl)
            print(f"| {rig} | {st} | {r['end_ankle_cm']:.1f} | {r['end_hip_width_cm']:.1f} | {r['end_knee_deg']:.1f} | "
                  f"{r['hold_ankle_speed']:.3f} | {r['settle_skate_cm_per_frame']:.2f} | {r['skate_cm_per_frame']:.2f} | {r['final_cm']:.1f} | {r['heading_deg']:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
