"""The live tracker's step alone (issue #30): ``LiveTracker.step_world`` on
CMU 131_01's trackers at 30 fps, no Blender; the median tick of a pass over
the take, best of ``--passes``. Milliseconds. To compare code, run it from two
checkouts alternately: ``git worktree add /tmp/old/rigmind REV``, copy this
file into its ``bench/``, then ``python /tmp/old/rigmind/bench/bench_live_step.py``
and ``python bench/bench_live_step.py`` (each imports the checkout it sits in).

    .venv/bin/python bench/bench_live_step.py [--passes 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO.parent))

from rigmind.backend.paths import data_dir  # noqa: E402
from rigmind.backend.tracking.body_from_trackers import resample_take  # noqa: E402
from rigmind.backend.tracking.live import LiveTracker  # noqa: E402
from rigmind.backend.tracking.mocap_trackers import load_mocap, trackers_from_motion  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--passes", type=int, default=5)
    a = ap.parse_args(argv)
    src, mapping = load_mocap(data_dir() / "cmu_131_start_walk_stop" / "131_01.bvh")
    _, pos, rot = resample_take(trackers_from_motion(src, mapping), 30.0)
    tracker = LiveTracker()
    medians = []
    for _ in range(a.passes):
        tracker.reset()
        ticks = []
        for i in range(len(pos)):
            t = time.perf_counter()
            tracker.step_world(pos[i], rot[i], 1.0 / 30.0)
            ticks.append(time.perf_counter() - t)
        medians.append(1000.0 * float(np.median(ticks)))
    print(f"{REPO}: LiveTracker.step_world median {min(medians):.3f} ms (best of {a.passes} passes, {len(pos)} ticks)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
