"""Time writing 600 frames x 65 bones (quaternion rotations + root location)
onto an armature as a new action: ``write_motion`` end to end (read the rig,
convert to pose-bone space, create 263 f-curves, foreach_set the keys).

    .venv/bin/python bench/bench_write_keys.py
"""

import os
import statistics
import tempfile
import time

os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="rigmind-bench-"))

import bpy  # noqa: E402
import numpy as np  # noqa: E402

from rigmind.backend import rotations  # noqa: E402
from rigmind.backend.motion import Motion  # noqa: E402
from rigmind.backend.skeleton import Skeleton  # noqa: E402
from rigmind.operators import scene_io  # noqa: E402

FRAMES, BONES, RUNS = 600, 65, 7


def main():
    bpy.ops.wm.read_factory_settings(use_empty=True)
    rng = np.random.default_rng(0)
    parents = [-1] + [int(rng.integers(0, j)) for j in range(1, BONES)]
    offsets = rng.normal(size=(BONES, 3)) * 0.1
    sk = Skeleton([f"Bone{j:02d}" for j in range(BONES)], parents, offsets)
    rots = rotations.make_continuous(rotations.normalize(rng.normal(size=(FRAMES, BONES, 4))))
    motion = Motion(sk, rots, rng.normal(size=(FRAMES, 3)), fps=30.0)
    arm = scene_io.build_armature(sk, "Bench")
    on_rig = motion.with_rest(scene_io.read_skeleton(arm))
    times = []
    for i in range(RUNS):
        t0 = time.perf_counter()
        scene_io.write_motion(arm, on_rig, f"bench {i}")
        times.append(time.perf_counter() - t0)
    print(f"| write {FRAMES} frames x {BONES} bones (rot + root loc, {4 * BONES + 3} curves) | "
          f"median {statistics.median(times):.3f} s | min {min(times):.3f} s | {RUNS} runs |")


if __name__ == "__main__":
    main()
