"""Size of each platform's self-contained extension zip (#15.6), and what
fills it: the package (code, presets, models) and each runtime wheel.

    .venv/bin/python bench/bench_extension_zips.py [--out DIR]

Wheels come from .cache/wheels/<platform> (downloaded from PyPI with
``pip download --only-binary=:all:`` on the first run).
"""

from __future__ import annotations

import argparse
import datetime
import platform as _platform
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
import build_extension  # noqa: E402


def validate(zip_path: Path) -> str:
    """Blender's own strict check of the manifest, wheels against platforms included."""
    import bpy

    scripts = Path(bpy.utils.system_resource("SCRIPTS"))
    tool = scripts / "addons_core" / "bl_pkg" / "cli" / "blender_ext.py"
    tags = scripts / "modules" / "_bpy_internal" / "extensions" / "tags.py"
    proc = subprocess.run([sys.executable, "-I", str(tool), "validate", "--valid-tags", str(tags), str(zip_path)],
                          capture_output=True, text=True)
    return "passes" if proc.returncode == 0 else "FAILS: " + (proc.stdout + proc.stderr).strip()[-200:]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=None, help="where to write the zips (default: a temp folder)")
    args = ap.parse_args(argv)
    out = Path(args.out or tempfile.mkdtemp(prefix="rigmind-zips-"))
    skipped = []
    built = build_extension.build_platform_zips(REPO, out, log=skipped.append)
    plain = build_extension.build_zip(REPO, out / "plain")
    print(f"# extension zips, {datetime.date.today()}, {_platform.machine()} {_platform.system()}, "
          f"`python bench/bench_extension_zips.py`\n")
    print("| zip | size (MB) | package part (MB) | wheels (MB) | Blender's validator | wheels |")
    print("|---|---:|---:|---:|---|---|")
    for _name, path in built.items():
        infos = zipfile.ZipFile(path).infolist()
        wheels = [i for i in infos if i.filename.startswith("wheels/")]
        w = sum(i.compress_size for i in wheels)
        total = path.stat().st_size
        names = ", ".join(f"{i.filename[7:].split('-')[0]} {i.compress_size / 1e6:.1f}" for i in wheels)
        print(f"| {path.name} | {total / 1e6:.1f} | {(total - w) / 1e6:.1f} | {w / 1e6:.1f} | "
              f"{validate(path)} | {names} |")
    print(f"| {plain.name} (no wheels, development) | {plain.stat().st_size / 1e6:.1f} | | | {validate(plain)} | |")
    for line in skipped:
        print(f"\n{line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
