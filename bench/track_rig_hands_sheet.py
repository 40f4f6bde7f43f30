"""Side-view contact sheet of a rig tracked back from its own head and wrists (issue #30).

The rig performs CMU 131_01 (``rigmind retarget``); its head and wrists
become a tracker file; ``rigmind track --trackers FILE --rig R`` puts the
body back on the same rig. One column every 0.5 s; rows = the performance
(grey), the tracked rig (blue) and, with ``--compare ROOT``, the tracked rig
made by another package root (orange: an earlier version); the three
trackers are green dots, the floor the grey line, feet red where low and
slow. Seen from the performance's right along its direction of travel.

    PYTHONPATH=/tmp/pkg .venv/bin/python bench/track_rig_hands_sheet.py [--rig mannequin] [--compare /tmp/pk_old]
        [--out bench/img/track_rig_hands_mannequin.png]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_actions import rig_files  # noqa: E402
from take_pictures import write_png  # noqa: E402
from track_file_sheet import _row, side_sheet  # noqa: E402

from rigmind.backend.paths import data_dir  # noqa: E402
from rigmind.backend.tracking.evaluate import FEET  # noqa: E402
from rigmind.backend.tracking.mocap_trackers import load_mocap, trackers_from_motion  # noqa: E402
from rigmind.backend.tracking.trackers import read_tracker_csv, write_tracker_csv  # noqa: E402
from track_rig_hands import CLIP  # noqa: E402


def _track(csv: Path, rig: Path, out: Path, root: str = None) -> None:
    env = dict(os.environ, PYTHONPATH=root) if root else None
    subprocess.run([sys.executable, "-m", "rigmind", "track", "--trackers", str(csv), "--rig", str(rig), "--out",
                    str(out)], check=True, capture_output=True, env=env)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rig", default="mannequin")
    ap.add_argument("--compare", help="another package root (PYTHONPATH) for a third row")
    ap.add_argument("--seconds", default="", help="A,B: only the columns from A to B seconds")
    ap.add_argument("--cell", type=int, default=170, help="pixels per cell")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args(argv)
    out = a.out or REPO / "bench" / "img" / f"track_rig_hands_{a.rig}.png"
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        rig = rig_files([a.rig], data_dir(), tmp)[a.rig]
        performed = tmp / "performed.bvh"
        subprocess.run([sys.executable, "-m", "rigmind", "retarget", "--src", str(data_dir() / CLIP), "--rig", str(rig),
                        "--out", str(performed)], check=True, capture_output=True)
        perf, pmap = load_mocap(performed)
        csv = tmp / "trackers.csv"
        write_tracker_csv(csv, trackers_from_motion(perf, pmap))
        rows = [(_row(performed), (120, 120, 120))]
        _track(csv, rig, tmp / "now.bvh")
        rows.append((_row(tmp / "now.bvh"), (40, 90, 200)))
        if a.compare:
            _track(csv, rig, tmp / "other.bvh", a.compare)
            rows.append((_row(tmp / "other.bvh"), (230, 130, 20)))
        take = read_tracker_csv(csv)
        pp = perf.world_positions()
        floor = float(np.percentile(pp[:, [perf.skeleton.index(pmap[k]) for k in FEET if k in pmap], 2], 1))
    # the trackers at 30 fps, lowered onto the performance's floor as _row lowers each file onto its own
    t30 = np.arange(0, take.times[-1] + 1e-9, 1 / 30.0)
    trackers = np.stack([np.stack([np.interp(t30, take.times, take.positions[:, k, d]) for d in range(3)], -1)
                         for k in range(3)], 1) - np.array([0.0, 0.0, floor])
    n = min(min(len(r[0][0]) for r in rows), len(trackers))
    frames = np.arange(0, n, 15)
    if a.seconds:
        lo, hi = (float(x) for x in a.seconds.split(","))
        frames = frames[(frames >= lo * 30) & (frames <= hi * 30)]
    img = side_sheet(rows, frames, a.cell, dots=trackers)
    write_png(out, img)
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
