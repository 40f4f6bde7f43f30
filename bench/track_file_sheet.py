"""Side-view contact sheet of ``rigmind track --trackers-from CLIP`` read
from the exported file (issue #30): one column every 0.5 s; rows = the clip
(grey), the model's BVH on the rig (blue), the baseline's (orange), each
seen from the subject's right along the clip's direction of travel and
centred on the clip's hips; the floor of each file (its feet's 1st
percentile height) is the grey line, its feet are dots (red where the foot
is low and slow: a planted foot that moves between columns slides).

    .venv/bin/python bench/track_file_sheet.py [--clip 131_01] [--rig mannequin|xbot] [--out bench/img/track_file_131_01.png]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_track_from_file import _rig_file  # noqa: E402
from take_pictures import Canvas, write_png  # noqa: E402

from rigmind.backend.paths import data_dir  # noqa: E402
from rigmind.backend.resample import resample  # noqa: E402
from rigmind.backend.tracking.evaluate import FEET  # noqa: E402
from rigmind.backend.tracking.mocap_trackers import load_mocap  # noqa: E402


def _row(path, fps=30.0):
    m, mp = load_mocap(path)
    m = resample(m, fps) if abs(m.fps - fps) > 1e-6 else m
    p = m.world_positions()
    feet = [m.skeleton.index(mp[k]) for k in FEET if k in mp]
    floor = np.percentile(p[:, feet, 2], 1)
    p = p - np.array([0.0, 0.0, floor])
    speed = np.zeros((len(p), len(feet)))
    speed[1:] = np.linalg.norm(np.diff(p[:, feet, :2], axis=0), axis=-1) * fps
    low = (p[:, feet, 2] < 0.08) & (speed < 0.35)
    lines = [(int(q), j) for j, q in enumerate(m.skeleton.parents) if q >= 0]
    return p, lines, feet, low, m.skeleton.index(mp["hips"])


def side_sheet(rows, frames, cell: int = 170, dots=None) -> np.ndarray:
    """The sheet's pixels ``[H, W, 3]``: one row per ``(_row(...), colour)``,
    one column per frame of ``frames``, each cell seen from the right of the
    first row's direction of travel and centred on its hips; ``dots [F, K,
    3]`` (metres, on the first row's floor) drawn green in every row."""
    ps, _, _, _, hips = rows[0][0]
    travel = ps[-1, hips, :2] - ps[0, hips, :2]
    axis = travel / max(np.linalg.norm(travel), 1e-6) if np.linalg.norm(travel) > 0.2 else np.array([1.0, 0.0])
    ppm = 75.0 * cell / 170

    def uv(x):
        return np.stack([x[..., :2] @ axis, x[..., 2]], -1)

    img = np.full((cell * len(rows), cell * len(frames), 3), 255, np.uint8)
    for ci, f in enumerate(frames):
        centre = float(ps[f, hips, :2] @ axis)
        for ri, ((p, lines, feet, low, _), color) in enumerate(rows):
            cv = Canvas(cell, cell, (centre, 0.9), ppm)
            cv.line((centre - 2.0, 0.0), (centre + 2.0, 0.0), (170, 170, 170), 1.0)
            for i, j in lines:
                cv.line(uv(p[f, i]), uv(p[f, j]), color, 2.0)
            for k, j in enumerate(feet):
                cv.dots(uv(p[f, j])[None], (220, 0, 0) if low[f, k] else (60, 60, 60), 3.0)
            if dots is not None:
                cv.dots(uv(dots[f]), (0, 170, 0), 3.0)
            img[ri * cell:(ri + 1) * cell, ci * cell:(ci + 1) * cell] = cv.img
            img[ri * cell:(ri + 1) * cell, ci * cell] = 200
    return img


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clip", default="131_01")
    ap.add_argument("--rig", default="mannequin")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args(argv)
    clip = data_dir() / "cmu_131_start_walk_stop" / f"{a.clip}.bvh"
    out = a.out or REPO / "bench" / "img" / f"track_file_{a.clip}.png"
    rows = [(_row(clip), (120, 120, 120))]
    with tempfile.TemporaryDirectory() as tmp:
        rig = _rig_file(a.rig, Path(tmp))
        for method, color in (("model", (40, 90, 200)), ("baseline", (230, 130, 20))):
            bvh = Path(tmp) / f"{method}.bvh"
            subprocess.run([sys.executable, "-m", "rigmind", "track", "--trackers-from", str(clip), "--rig", str(rig),
                            "--method", method, "--out", str(bvh)], check=True, capture_output=True, cwd=REPO.parent)
            rows.append((_row(bvh), color))
    n = min(len(r[0][0]) for r in rows)
    img = side_sheet(rows, np.arange(0, n, 15))
    write_png(out, img)
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
