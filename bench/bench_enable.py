"""How long enabling the installed RigMind extension takes in a fresh Blender.

    .venv/bin/python bench/bench_enable.py [--runs 5]

Builds the zip, installs it into a throw-away Blender user folder, then starts
RUNS fresh processes that each ``import bpy`` and enable the extension. Prints
one markdown table row (medians): time inside ``addon_utils.enable``, time of
``import bpy``, wall time of the whole process, and whether torch got imported.
Fresh processes because a second enable in the same process hits warm caches.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MODULE = "bl_ext.user_default.rigmind"
MARK = "RESULT:"

CHILD = f"""
import time
t0 = time.perf_counter()
import json, sys
import bpy, addon_utils
t1 = time.perf_counter()
def raise_(ex):
    raise ex
addon_utils.enable({MODULE!r}, default_set=True, handle_error=raise_)
t2 = time.perf_counter()
assert hasattr(bpy.types, "VIEW3D_PT_rigmind")
print({MARK!r} + json.dumps({{"import_bpy": t1 - t0, "enable": t2 - t1,
                              "torch": "torch" in sys.modules}}))
"""


def _run(code: str, user: Path) -> tuple[dict | None, float, str]:
    env = dict(os.environ, BLENDER_USER_RESOURCES=str(user))
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-I", "-c", code], cwd=user, env=env,
                          capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - t0
    for line in proc.stdout.splitlines():
        if line.startswith(MARK):
            return json.loads(line[len(MARK):]), wall, ""
    return None, wall, proc.stdout[-2000:] + proc.stderr[-2000:]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)

    sys.path.insert(0, str(REPO / "tools"))
    import build_extension

    tmp = Path(tempfile.mkdtemp(prefix="rigmind-bench-"))
    try:
        zip_path = build_extension.build_zip(REPO, tmp / "dist")
        user = tmp / "user"
        user.mkdir()
        install = (
            "import bpy\n"
            f"r = bpy.ops.extensions.package_install_files(filepath={str(zip_path)!r}, "
            "repo='user_default', enable_on_install=False)\n"
            f"print({MARK!r} + str(sorted(r)).replace(\"'\", '\"'))\n"
        )
        res, _, log = _run(install, user)
        if res != ["FINISHED"]:
            print(f"install failed:\n{log}", file=sys.stderr)
            return 1

        enable, import_bpy, wall, torch = [], [], [], False
        for _ in range(args.runs):
            res, w, log = _run(CHILD, user)
            if res is None:
                print(f"enable failed:\n{log}", file=sys.stderr)
                return 1
            enable.append(res["enable"])
            import_bpy.append(res["import_bpy"])
            wall.append(w)
            torch = torch or res["torch"]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    med = statistics.median
    print("| what | enable (ms) | import bpy (s) | whole process (s) | torch imported | runs | machine |")
    print("|---|---|---|---|---|---|---|")
    print(
        f"| enable installed extension, fresh process | {med(enable) * 1000:.1f} "
        f"| {med(import_bpy):.2f} | {med(wall):.2f} | {'yes' if torch else 'no'} | {args.runs} "
        f"| {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()} |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
