"""Build the RigMind extension zip for Blender 4.2+ / 5.0. Standard library only.

    python3 blender_addon/build_extension.py [--out DIR]

The repository root *is* the package, so the zip holds that tree flat: the
manifest, the root ``__init__.py`` and the package folders at the top of the
archive. Blender then imports it as ``bl_ext.<repo>.rigmind``.

install.py imports this module under whatever ``python3`` the user has, which
need not be 3.11: no ``tomllib``, nothing newer than Python 3.8.
"""

from __future__ import annotations

import re
import sys
import zipfile
from pathlib import Path

MANIFEST = "blender_manifest.toml"

# Package folders shipped when present. `models` holds bundled weights, if any.
PACKAGE_DIRS = ("backend", "operators", "blender_addon", "presets", "models")

# Root-level modules that are set-up tools, not part of the running add-on.
ROOT_EXCLUDE = {"install.py"}

# Install-time helpers inside blender_addon/: Blender never imports them, and the
# manifest is already at the archive root.
ADDON_EXCLUDE = {MANIFEST, "build_extension.py", "install_into_blender.py"}

SKIP_DIRS = {"__pycache__", "tests", "bench", ".venv", ".git", "build", "dist", "out", "rigmind_out", ".cache"}
SKIP_SUFFIXES = (".pyc", ".pyo", ".blend1", ".orig", ".rej", ".swp")

# Zip entries carry a local date/time; a fixed one makes the archive
# byte-identical across builds (1980-01-01 is the earliest zip can store).
FIXED_DATE = (1980, 1, 1, 0, 0, 0)


def manifest_version(root: Path) -> str:
    text = (Path(root) / "blender_addon" / MANIFEST).read_text(encoding="utf-8")
    m = re.search(r'^\s*version\s*=\s*"([^"]+)"', text, re.MULTILINE)
    if not m:
        raise ValueError(f"no version in blender_addon/{MANIFEST}")
    return m.group(1)


def package_version(root: Path) -> str:
    text = (Path(root) / "__init__.py").read_text(encoding="utf-8")
    m = re.search(r'^__version__\s*=\s*["\']([^"\']+)["\']', text, re.MULTILINE)
    if not m:
        raise ValueError("no __version__ in the root __init__.py")
    return m.group(1)


def _skip(path: Path) -> bool:
    return (
        path.name.startswith(".")
        or path.name in SKIP_DIRS
        or path.name.endswith(SKIP_SUFFIXES)
    )


def _walk(folder: Path):
    for p in sorted(folder.iterdir()):
        if _skip(p):
            continue
        if p.is_dir():
            yield from _walk(p)
        elif p.is_file():
            yield p


def collect(root: Path) -> list[tuple[str, Path]]:
    """(name in the archive, file on disk), sorted by name."""
    root = Path(root).resolve()
    entries = {MANIFEST: root / "blender_addon" / MANIFEST}
    for p in sorted(root.glob("*.py")):
        if p.name not in ROOT_EXCLUDE:
            entries[p.name] = p
    for d in PACKAGE_DIRS:
        folder = root / d
        if not folder.is_dir():
            continue
        for p in _walk(folder):
            rel = p.relative_to(root).as_posix()
            if d == "blender_addon" and p.parent == folder and p.name in ADDON_EXCLUDE:
                continue
            entries[rel] = p
    if "__init__.py" not in entries:
        raise FileNotFoundError(f"{root} has no __init__.py: not the RigMind package root")
    return sorted(entries.items())


def build_zip(root: Path, out: Path) -> Path:
    """Write ``<out>/rigmind-<version>.zip`` and return its path.

    Refuses to build when the manifest and ``__version__`` disagree: Blender
    shows the manifest's version, the CLI reports the package's.
    """
    root = Path(root).resolve()
    version = manifest_version(root)
    pkg_version = package_version(root)
    if version != pkg_version:
        raise ValueError(
            f"version mismatch: blender_manifest.toml says {version}, __init__.py says {pkg_version}"
        )
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"rigmind-{version}.zip"
    tmp = target.with_name(target.name + ".part")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name, path in collect(root):
            info = zipfile.ZipInfo(name, date_time=FIXED_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o100644 & 0xFFFF) << 16
            info.create_system = 3  # Unix, so the mode bits above are honoured everywhere
            zf.writestr(info, path.read_bytes())
    tmp.replace(target)
    return target


def main(argv=None) -> int:
    import argparse

    here = Path(__file__).resolve().parent
    ap = argparse.ArgumentParser(description="Build the RigMind Blender extension zip.")
    ap.add_argument("--root", default=str(here.parent), help="package root (default: this repository)")
    ap.add_argument("--out", default=str(here.parent / "dist"), help="output folder (default: ./dist)")
    args = ap.parse_args(argv)
    path = build_zip(Path(args.root), Path(args.out))
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
