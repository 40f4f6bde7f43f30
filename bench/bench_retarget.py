"""Time retargeting 60 s of 30 fps mocap onto a 65-bone rig, excluding
Blender's start and file loading: mapping both rigs, pose transfer with foot
IK, and writing the new action.

    .venv/bin/python bench/bench_retarget.py [--data ../shared/data]

Source: Bandai-Namco walk clips concatenated to 1800 frames. Target: the
Mixamo X Bot in shared/data/characters (65 `mixamorig:` bones; local use
only, never shipped), else RigMind's 55-bone mannequin.
"""

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="rigmind-bench-"))

import bpy  # noqa: E402,F401  (before rigmind: Blender's user folder is set above)
import numpy as np  # noqa: E402

from rigmind.backend.bone_mapping import auto_map  # noqa: E402
from rigmind.backend.bvh import read_bvh  # noqa: E402
from rigmind.backend.motion import Motion  # noqa: E402
from bench_rig import data_parser, load_bench_rig  # noqa: E402
from rigmind.backend.requests.retarget import RetargetRequest  # noqa: E402
from rigmind.operators import retarget_scene  # noqa: E402

FRAMES = 1800


def long_clip(data: Path) -> Motion:
    clips = sorted((data / "bandai_namco_d2_locomotion" / "bvh").glob("dataset-2_walk_*.bvh.gz"))
    parts, n = [], 0
    for c in clips:
        m = read_bvh(c)
        parts.append(m)
        n += m.num_frames
        if n >= FRAMES:
            break
    first = parts[0]
    rots = np.concatenate([p.rotations for p in parts])[:FRAMES]
    root = np.concatenate([p.root_positions for p in parts])[:FRAMES]
    trans = np.concatenate([p.local_translations() for p in parts])[:FRAMES]
    return Motion(first.skeleton, rots, root, first.fps, trans, name="bandai walks 60 s")


def main():
    ap = data_parser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    data = Path(args.data)
    if not data.is_dir():
        sys.exit(f"no data folder at {data}")
    motion = long_clip(data)
    arm = load_bench_rig(args.data)
    times = []
    for i in range(args.runs):
        t0 = time.perf_counter()
        src_map = auto_map(motion.skeleton)
        tgt_map = retarget_scene.target_mapping(arm)
        retarget_scene.retarget_onto(arm, motion, src_map, RetargetRequest(action_name=f"bench {i}"), tgt_map=tgt_map)
        times.append(time.perf_counter() - t0)
    print(f"| retarget {motion.num_frames} frames ({motion.num_frames / motion.fps:.0f} s at {motion.fps:g} fps) "
          f"onto '{arm.name}' ({len(arm.data.bones)} bones), IK on, incl. mapping + writing keys | "
          f"median {statistics.median(times):.3f} s | min {min(times):.3f} s | {args.runs} runs |")


if __name__ == "__main__":
    main()
