"""Time the locomotion issue's speed figures:

1. ms per controller step (batch 1, one thread), torch vs onnxruntime, with
   the committed weights;
2. the wall time of baking 60 s of Walk Along Path onto a 65-bone rig: path
   following, foot cleanup, retargeting and writing the keys.

    .venv/bin/python bench/bench_walk.py [--data ../shared/data]

The rig is the Mixamo X Bot from shared/data/characters when present (65
bones, local use only), else RigMind's 55-bone mannequin.
"""

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="rigmind-bench-"))

import bpy  # noqa: E402,F401  (before rigmind: Blender's user folder is set above)
import numpy as np  # noqa: E402

from rigmind.backend.locomotion.controller import LocomotionController  # noqa: E402
from rigmind.backend.locomotion.motion_matching import Control  # noqa: E402
from bench_rig import load_bench_rig  # noqa: E402
from rigmind.backend.locomotion import controllers
from rigmind.operators import locomotion_scene  # noqa: E402
from rigmind.backend.requests.walk import WalkPathRequest  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def step_ms(engine: str, steps: int = 600) -> float:
    ctl = LocomotionController.load(REPO / "models" / f"locomotion.{'onnx' if engine == 'onnxruntime' else 'pt'}",
                                    engine=engine, threads=1)
    ctl.reset(style="normal")
    for _ in range(20):
        ctl.step(Control(velocity=(0.0, -1.3)))
    times = []
    for i in range(steps):
        a = 0.5 * np.pi * i / ctl.fps  # turning at 90°/s keeps every branch busy
        t0 = time.perf_counter()
        ctl.step(Control(velocity=(1.3 * np.sin(a), -1.3 * np.cos(a))))
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    args = ap.parse_args()
    print("| engine | ms per controller step (median, 1 thread) |")
    print("|---|---|")
    for engine in ("onnxruntime", "torch"):
        print(f"| {engine} | {step_ms(engine):.3f} |")

    arm = load_bench_rig(args.data)
    # A 78 m square-ish loop walked at 1.3 m/s: about 60 s.
    path = np.array([(0, 0), (20, 0), (20, 19), (0, 19), (0, 2)], dtype=float)
    ctl = controllers.load_controller("neural")
    t0 = time.perf_counter()
    action = locomotion_scene.walk_along_path(arm, WalkPathRequest(points=path, style="normal", speed=1.3), controller=ctl)
    wall = time.perf_counter() - t0
    a, b = action.frame_range
    print()
    print(f"| bake Walk Along Path onto '{arm.name}' ({len(arm.data.bones)} bones) | {(b - a) / 30:.1f} s of motion | "
          f"{wall:.2f} s wall (path following + foot cleanup + retarget + keys) |")


if __name__ == "__main__":
    main()
