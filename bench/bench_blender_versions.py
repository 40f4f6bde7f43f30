"""Install time and first Generate Gesture time of the shipped extension in
Blender 5.0 (bpy 5.0.1, Python 3.11) and Blender 5.2 LTS (bpy 5.2.3,
Python 3.13), as a new user meets them (#25).

    .venv/bin/python bench/bench_blender_versions.py [--runs 1]

Per Blender, each in a fresh user folder and its own process started with
``-I -S`` on only what that Blender bundles (tests/support/blender_envs.py):
- install: ``extensions.package_install_files`` of this platform's zip
  (Blender unpacks the zip and installs the matching wheels), process start
  to the operator's return, and the operator alone;
- first gesture: a new process enables the add-on, adds the mannequin and
  runs Generate Gesture with its face on 8 s of synthetic speech; process
  start to the take written, and the operator alone (model loading included:
  it is the first generation in the process).
Both Blenders are measured in one run, alternating, so their ratio is fair.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
sys.path.insert(0, str(REPO / "tests"))
from support import blender_envs  # noqa: E402
import build_extension  # noqa: E402

MARK = "BENCH:"
PRELUDE = "import sys, json, time\nsys.path.insert(0, {site!r})\nT0 = time.perf_counter()\n"
INSTALL = """
import bpy
t = time.perf_counter()
r = bpy.ops.extensions.package_install_files(filepath={zip!r}, repo="user_default", enable_on_install=True)
print({mark!r} + json.dumps({{"result": sorted(r), "op_s": time.perf_counter() - t}}), flush=True)
"""
GESTURE = """
import math, struct, wave, os
import bpy, addon_utils
addon_utils.enable("bl_ext.user_default.rigmind", default_set=True)
bpy.ops.rigmind.add_mannequin()
arm = [o for o in bpy.data.objects if o.type == "ARMATURE"][0]
{speech}
t = time.perf_counter()
r = bpy.ops.rigmind.generate_gesture(armature=arm.name, audio_path=wav, face_mesh="auto")
print({mark!r} + json.dumps({{"result": sorted(r), "op_s": time.perf_counter() - t}}), flush=True)
"""


def timed(env, site, code, user) -> dict:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    e.update(BLENDER_USER_RESOURCES=str(user), HOME=str(user))
    t = time.perf_counter()
    proc = subprocess.run([env.python, "-I", "-S", "-c", PRELUDE.format(site=str(site)) + code], cwd=user,
                          env=e, capture_output=True, text=True)
    wall = time.perf_counter() - t
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(MARK)]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"{env.label}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
    res = json.loads(lines[-1][len(MARK):])
    assert res["result"] == ["FINISHED"], res
    return {"wall_s": wall, "op_s": res["op_s"]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=1, help="runs per Blender (alternating)")
    args = ap.parse_args(argv)
    envs = [e for e in (blender_envs.blender_50(), blender_envs.blender_52()) if e is not None]
    tmp = Path(tempfile.mkdtemp(prefix="rigmind-bench-versions-"))
    plat = build_extension.this_platform()
    zip_path = build_extension.build_platform_zip(REPO, tmp / "dist", plat, build_extension.fetch_wheels(REPO, plat))
    sites = {e.label: e.bundled_site(tmp / f"bundled-{e.label}") for e in envs}
    rows = {e.label: [] for e in envs}
    for run in range(args.runs):
        for env in envs:
            user = tmp / f"user-{env.label}-{run}"
            user.mkdir()
            inst = timed(env, sites[env.label], INSTALL.format(zip=str(zip_path), mark=MARK), user)
            gest = timed(env, sites[env.label], GESTURE.format(mark=MARK, speech=blender_envs.speech_wav_code(8)), user)
            rows[env.label].append((inst, gest))
    print(f"# Blender versions: install and first Generate Gesture, {datetime.datetime.now():%Y-%m-%d %H:%M}, "
          f"{platform.machine()} {os.cpu_count()} cores, `python bench/bench_blender_versions.py --runs {args.runs}`\n")
    print(f"zip: {zip_path.name}, {zip_path.stat().st_size / 1e6:.1f} MB\n")
    print("| Blender | install: process (s) | install: operator (s) | first gesture: process (s) | "
          "first gesture: operator (s) |")
    print("|---|---:|---:|---:|---:|")
    for env in envs:
        for inst, gest in rows[env.label]:
            print(f"| {env.label} | {inst['wall_s']:.1f} | {inst['op_s']:.1f} | {gest['wall_s']:.1f} | "
                  f"{gest['op_s']:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
