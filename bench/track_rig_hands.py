"""Where Track Body puts a rig's head and hands against trackers made for that rig (issue #30).

A rig performs CMU 131_01 (``rigmind retarget``); the tracker file is that
performance's own head and wrists (``trackers_from_motion`` on the rig's
BVH, so each tracker is exactly where the rig's joint was); ``rigmind track
--trackers FILE --rig R --out X.bvh`` makes the body from them and puts it
on the same rig. Read back, the rig's head and hand joints are compared with
the trackers, frame by frame (both at the output's 30 fps): what an animator
driving a rig with three empties placed for it would see. The tracked body
itself (the canonical skeleton) has its hands on the trackers to 0.00 cm
(bench/results/tracking.md); the rig is posed from it by the retarget
(leg-length root scale, hands placed relative to the shoulders).

    PYTHONPATH=/tmp/pkg .venv/bin/python bench/track_rig_hands.py [--rigs mannequin,xbot,rpm] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench_actions import rig_files  # noqa: E402
from rigmind.backend.locomotion.metrics import foot_skate  # noqa: E402
from rigmind.backend.paths import data_dir  # noqa: E402
from rigmind.backend.resample import resample  # noqa: E402
from rigmind.backend.tracking.mocap_trackers import load_mocap, trackers_from_motion  # noqa: E402
from rigmind.backend.tracking.trackers import write_tracker_csv  # noqa: E402

CLIP = "cmu_131_start_walk_stop/131_01.bvh"
JOINTS = ("head", "hand_l", "hand_r")
FEET = ("foot_l", "toes_l", "foot_r", "toes_r")


def run(cmd: list) -> None:
    subprocess.run([sys.executable, "-m", "rigmind", *cmd], check=True, stdout=subprocess.DEVNULL)


def _skate(motion, mapping) -> float:
    names = [mapping[k] for k in FEET if k in mapping]
    return foot_skate(motion, names, lift=[None] * len(names), floor="clip")["skate_cm_per_frame"]


def rig_row(name: str, rig: Path, clip: Path, tmp: Path) -> dict:
    """Distances (cm) of the rig's head and hands from the trackers made for
    it, and the feet's skate (cm per frame) of the tracked and the performed take."""
    performed = tmp / f"{name}_performed.bvh"
    run(["retarget", "--src", str(clip), "--rig", str(rig), "--out", str(performed)])
    perf, pmap = load_mocap(performed)
    csv = tmp / f"{name}_trackers.csv"
    write_tracker_csv(csv, trackers_from_motion(perf, pmap))
    tracked = tmp / f"{name}_tracked.bvh"
    run(["track", "--trackers", str(csv), "--rig", str(rig), "--out", str(tracked)])
    out, omap = load_mocap(tracked)
    perf = resample(perf, out.fps)
    n = min(perf.num_frames, out.num_frames)
    po, pp = out.world_positions()[:n], perf.world_positions()[:n]
    row = {"rig": name, "frames": int(n), "skate": _skate(out, omap), "skate_performed": _skate(perf, pmap)}
    for k in JOINTS:
        d = 100.0 * np.linalg.norm(po[:, out.skeleton.index(omap[k])] - pp[:, perf.skeleton.index(pmap[k])], axis=-1)
        row[k] = (float(np.median(d)), float(np.percentile(d, 95)), float(d.max()))
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rigs", default="mannequin,xbot,rpm")
    ap.add_argument("--out", type=Path, help="keep the files here (default: a temporary folder)")
    a = ap.parse_args(argv)
    t0 = time.time()
    with tempfile.TemporaryDirectory() as td:
        tmp = a.out or Path(td)
        tmp.mkdir(parents=True, exist_ok=True)
        rigs = rig_files(a.rigs.split(","), data_dir(), tmp)
        rows = [rig_row(name, rig, data_dir() / CLIP, tmp) for name, rig in rigs.items()]
    print(f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
          f"{time.strftime('%Y-%m-%d')}; {time.time() - t0:.0f} s.\n")
    print("| rig | frames | head cm: median / 95th / max | left hand cm | right hand cm | skate cm/frame (performed) |\n"
          "|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['rig']} | {r['frames']} | " + " | ".join("{:.1f} / {:.1f} / {:.1f}".format(*r[k]) for k in JOINTS)
              + f" | {r['skate']:.2f} ({r['skate_performed']:.2f}) |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
