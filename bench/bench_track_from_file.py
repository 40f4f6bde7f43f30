"""Issue #30's acceptance read from the exported file: whole `rigmind track
--trackers-from CLIP --rig RIG --out t.bvh` processes on the CMU 131 clips
(a skeleton the model never saw), the written BVH read back and scored
against the clip.

Per clip and rig: limb directions (upper arm, forearm, thigh, shin, left and
right, each in its body frame: the hips' left-right axis, world up and their
cross product) against the clip's, mean over frames and limbs, and per limb;
foot skate of the file against the clip's (cm per 30 fps contact frame,
``locomotion.metrics.foot_skate`` with each file's own floor); foot
touch-downs while the clip's head moves (> 0.3 m/s) in the file and in the
clip (the start, the walk and the stop are walked, not slid); wall time of the
process, start to file written.

    python bench/bench_track_from_file.py [--rigs mannequin,xbot,rpm,rigify] [--method model|baseline] [--json OUT]
    python bench/bench_track_from_file.py --markdown OUT.json [OUT2.json ...]   # the results table

``--python EXE`` runs the processes with another interpreter (another Blender
as a module: ``.venv-bpy52/bin/python`` for Blender 5.2), ``--path DIR``
(repeatable) puts folders before its ``PYTHONPATH`` (that interpreter's
onnxruntime and scipy, e.g. unpacked from the extension's cp313 wheels in
``.cache/wheels``); each row records the Blender version that ran it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from rigmind.backend.paths import data_dir  # noqa: E402
from rigmind.backend.resample import resample  # noqa: E402
from rigmind.backend.tracking.evaluate import FEET, LIMB_NAMES, LIMBS, _touch_downs, limb_angles  # noqa: E402
from rigmind.backend.tracking.mocap_trackers import load_mocap  # noqa: E402
from rigmind.backend.locomotion.metrics import foot_skate  # noqa: E402

CLIPS = ("131_01", "131_02", "131_03")
RIGS = ("mannequin", "xbot", "rpm", "rigify")


def _rig_file(name: str, tmp: Path) -> Path:
    """The rig file of ``name`` (one of :data:`RIGS`; the mannequin and the Rigify rig are made in ``tmp``)."""
    from bench_actions import rig_files

    if name not in RIGS:
        raise SystemExit(f"unknown rig {name!r}: one of {', '.join(RIGS)}")
    return rig_files([name], data_dir(), tmp)[name]


def _skate(motion, mapping) -> float:
    names = [mapping[k] for k in FEET if k in mapping]
    return foot_skate(motion, names, lift=[None] * len(names), floor="clip")["skate_cm_per_frame"]


def score_file(clip_path: Path, out_path: Path) -> dict:
    src, smap = load_mocap(clip_path)
    out, omap = load_mocap(out_path)
    src = resample(src, out.fps)
    n = min(src.num_frames, out.num_frames)
    src, out = src.slice(0, n), out.slice(0, n)
    keys = [k for a, b in LIMBS for k in (a, b)] + list(FEET) + ["head"]
    keys = [k for k in dict.fromkeys(keys) if k in smap and k in omap]
    si = {k: src.skeleton.index(smap[k]) for k in keys}
    oi = {k: out.skeleton.index(omap[k]) for k in keys}
    ps, po = src.world_positions(), out.world_positions()
    ang = limb_angles(ps, si, po, oi)
    head = ps[:, si["head"], :2]
    speed = np.convolve(np.linalg.norm(np.gradient(head, axis=0), axis=-1) * out.fps, np.ones(9) / 9, mode="same")
    moving = speed > 0.3
    return {
        "frames": int(n), "limb_angle_deg": float(ang.mean()),
        "per_limb_deg": {nm: float(a) for nm, a in zip(LIMB_NAMES, ang.mean(axis=0))},
        "skate_cm": _skate(out, omap), "skate_clip_cm": _skate(src, smap),
        "touch_downs_moving": _touch_downs(po, oi, out.fps, moving),
        "touch_downs_moving_clip": _touch_downs(ps, si, out.fps, moving),
        "moving_s": float(moving.sum() / out.fps),
    }


def markdown(rows) -> str:
    """The results table (bench/results/tracking.md) of rows from ``--json`` files."""
    lines = ["| Blender | rig | clip | method | limbs ° (target ≤ 15) | worst limb ° | skate cm (clip's) | "
             "touch-downs moving (clip's) | wall s |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        worst = max(r["per_limb_deg"], key=r["per_limb_deg"].get)
        lines.append(f"| {r['blender']} | {r['rig']} | {r['clip']} | {r['method']} | {r['limb_angle_deg']:.1f} | "
                     f"{worst} {r['per_limb_deg'][worst]:.0f} | {r['skate_cm']:.2f} ({r['skate_clip_cm']:.2f}) | "
                     f"{r['touch_downs_moving']} ({r['touch_downs_moving_clip']}) | {r['wall_s']:.1f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rigs", default=",".join(RIGS))
    ap.add_argument("--method", default="model")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--markdown", type=Path, nargs="+", help="print the table of these --json files and stop")
    ap.add_argument("--python", default=sys.executable, help="interpreter of the rigmind processes")
    ap.add_argument("--path", action="append", default=[], help="folder put first on their PYTHONPATH")
    a = ap.parse_args(argv)
    if a.markdown:
        print(markdown([r for p in a.markdown for r in json.loads(p.read_text())]))
        return 0
    if os.sep in a.python:  # the processes run in the checkout's parent folder
        a.python = str(Path(a.python).absolute())
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(a.path + [p for p in [env.get("PYTHONPATH")] if p])
    blender = subprocess.run([a.python, "-c", "import bpy; print(bpy.app.version_string)"], check=True,
                             capture_output=True, text=True, env=env).stdout.strip()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for rig in a.rigs.split(","):
            rig_path = _rig_file(rig, tmp)
            for clip in CLIPS:
                clip_path = data_dir() / "cmu_131_start_walk_stop" / f"{clip}.bvh"
                out = tmp / f"{rig}_{clip}.bvh"
                t0 = time.perf_counter()
                subprocess.run([a.python, "-m", "rigmind", "track", "--trackers-from", str(clip_path), "--rig",
                                str(rig_path), "--method", a.method, "--out", str(out)], check=True,
                               capture_output=True, cwd=REPO.parent, env=env)
                wall = time.perf_counter() - t0
                row = {"rig": rig, "clip": clip, "method": a.method, "blender": blender, "wall_s": wall, **score_file(clip_path, out)}
                rows.append(row)
                print(f"{rig:9s} {clip} limbs {row['limb_angle_deg']:5.1f} deg  skate {row['skate_cm']:.2f} "
                      f"(clip {row['skate_clip_cm']:.2f}) cm  touch-downs moving {row['touch_downs_moving']} "
                      f"(clip {row['touch_downs_moving_clip']})  {wall:.1f} s", flush=True)
                print("          " + ", ".join(f"{k} {v:.0f}" for k, v in row["per_limb_deg"].items()), flush=True)
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
