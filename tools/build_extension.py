"""Build the RigMind extension zips for Blender 5.0 to 5.2 LTS. Standard library only.

    python3 tools/build_extension.py [--out DIR]            # one zip per platform, with wheels
    python3 tools/build_extension.py --no-wheels [--out DIR] # one zip without wheels (development)

The repository root *is* the package, so a zip holds the shipped tree flat: the
manifest, the root modules and the package folders (``backend``, ``operators``,
``blender_addon``, ``presets``, ``models``) at the top of the archive; Blender
imports it as ``bl_ext.<repo>.rigmind``. Set-up tools (``tools/``, ``install.py``),
``tests/`` and ``bench/`` are simply not in that list.

Per platform (Blender's ``--split-platforms`` layout: ``rigmind-<version>-<platform>.zip``,
``platforms = [<platform>]``) the zip also carries, under ``wheels/``, the
PyPI wheels of what the run time imports that Blender does not bundle
(:data:`RUNTIME_WHEELS`, pinned by requirements.lock) for every Python the
supported Blenders embed (:data:`BLENDER_PYTHONS`: 3.11 in 5.0, 3.13 in 5.1
and 5.2), all listed in its manifest; Blender installs the ones that match its
own Python, offline. Wheels are fetched once with ``pip download
--only-binary=:all: --platform ... --python-version X.Y`` into
``.cache/wheels/<platform>/`` and reused from there.

Only what runs inside Blender ships: the models' ONNX exports, not their
Torch weights (``models/*.pt``; Blender has no Torch).

install.py imports this module under whatever ``python3`` the user has, which
need not be 3.11: no ``tomllib``, nothing newer than Python 3.8.
"""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

MANIFEST = "blender_manifest.toml"

#: The shipped tree: root modules (``*.py`` but the set-up script) and these folders
#: (not evaluation/: the rig evaluation drivers are the pip package's, never the add-on's).
PACKAGE_DIRS = ("backend", "operators", "blender_addon", "presets", "models")
SETUP_SCRIPT = "install.py"

# Generated files, never sources.
SKIP_PARTS = {"__pycache__"}
SKIP_SUFFIXES = (".pyc", ".pyo", ".blend1")
#: Files of the tree that Blender cannot use: Torch weights (the extension
#: runs every model on ONNX Runtime; the CLI and training keep the .pt files).
NOT_SHIPPED = ("models/*.pt",)

# Zip entries carry a local date/time; a fixed one makes the archive
# byte-identical across builds (1980-01-01 is the earliest zip can store).
FIXED_DATE = (1980, 1, 1, 0, 0, 0)

#: Blender minor version -> the Python it embeds. 5.0 is the oldest the code
#: runs on (slotted actions); a newer Blender embedding one of these Pythons
#: takes the same wheels.
BLENDER_PYTHONS = {(5, 0): "3.11", (5, 1): "3.13", (5, 2): "3.13"}
#: The Pythons whose wheels each platform zip carries.
PYTHONS = tuple(sorted(set(BLENDER_PYTHONS.values())))

#: What RigMind imports at run time that Blender does not bundle (it
#: bundles numpy): ONNX Runtime for every model (Torch is not needed inside
#: Blender), SciPy's FFT for the audio features, soundfile (+ cffi,
#: typing_extensions) and soxr to read and resample audio, silero-vad for its
#: ONNX voice-activity model, pocketsphinx and espeakng-loader for the face's
#: word and phone methods. Versions come from requirements.lock.
RUNTIME_WHEELS = ("onnxruntime", "scipy", "soundfile", "cffi", "typing_extensions", "soxr",
                  "silero-vad", "pocketsphinx", "espeakng-loader")

#: Blender platform -> the wheel platform tags pip may take for it (Blender 5.x
#: needs glibc 2.28 on Linux and macOS 11.2 on Apple silicon).
PLATFORM_TAGS = {
    "linux-x64": ["manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64",
                  "manylinux2014_x86_64", "manylinux_2_12_x86_64", "manylinux2010_x86_64",
                  "manylinux_2_5_x86_64", "manylinux1_x86_64"],
    "windows-x64": ["win_amd64"],
    "macos-arm64": [f"macosx_{v}_0_{arch}" for v in (11, 12, 13, 14) for arch in ("arm64", "universal2")],
    "macos-x64": [f"macosx_{v}_{arch}" for v in ("10_9", "10_13", "10_15", "11_0", "12_0", "13_0")
                  for arch in ("x86_64", "universal2")],
}
DEFAULT_PLATFORMS = tuple(PLATFORM_TAGS)


class WheelsMissing(RuntimeError):
    """PyPI has no wheel of a runtime package for this platform."""


# --- versions ---------------------------------------------------------------------


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


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def locked_versions(root: Path) -> dict:
    """``{normalised name: version}`` from requirements.lock."""
    pins = {}
    for line in (Path(root) / "requirements.lock").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            pins[_norm(name)] = version.strip()
    return pins


# --- the shipped tree -----------------------------------------------------------------


def _walk(folder: Path):
    for p in sorted(folder.iterdir()):
        if p.name in SKIP_PARTS or p.name.endswith(SKIP_SUFFIXES):
            continue
        if p.is_dir():
            yield from _walk(p)
        elif p.is_file():
            yield p


def collect(root: Path) -> list:
    """(name in the archive, file on disk) of the shipped tree, sorted by name."""
    root = Path(root).resolve()
    entries = {}
    for p in sorted(root.glob("*.py")):
        if p.name != SETUP_SCRIPT:
            entries[p.name] = p
    for d in PACKAGE_DIRS:
        folder = root / d
        if folder.is_dir():
            for p in _walk(folder):
                entries[p.relative_to(root).as_posix()] = p
    for pattern in NOT_SHIPPED:
        for name in [n for n in entries if Path(n).match(pattern)]:
            del entries[name]
    if "__init__.py" not in entries:
        raise FileNotFoundError(f"{root} has no __init__.py: not the RigMind package root")
    # The manifest sits at the archive root, where Blender looks for it.
    entries.pop(f"blender_addon/{MANIFEST}", None)
    return sorted(entries.items())


def manifest_text(root: Path, platform=None, wheels=()) -> str:
    """The manifest, with ``platforms`` and ``wheels`` for a platform build
    (inserted before the first table, where top-level keys must be)."""
    text = (Path(root) / "blender_addon" / MANIFEST).read_text(encoding="utf-8")
    if platform is None:
        return text
    listed = ",\n".join(f'  "./wheels/{w}"' for w in wheels)
    block = (f"# Added by tools/build_extension.py for this platform's zip.\n"
             f'platforms = ["{platform}"]\n'
             f"wheels = [\n{listed}\n]\n\n")
    m = re.search(r"^\[", text, re.MULTILINE)
    at = m.start() if m else len(text)
    return text[:at] + block + text[at:]


def _write(zf: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, date_time=FIXED_DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = (0o100644 & 0xFFFF) << 16
    info.create_system = 3  # Unix, so the mode bits above are honoured everywhere
    zf.writestr(info, data)


def _checked_version(root: Path) -> str:
    version = manifest_version(root)
    pkg_version = package_version(root)
    if version != pkg_version:
        raise ValueError(
            f"version mismatch: blender_manifest.toml says {version}, __init__.py says {pkg_version}"
        )
    return version


def _write_zip(root: Path, target: Path, manifest: str, wheels=()) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".part")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        entries = [(MANIFEST, None)] + collect(root) + [(f"wheels/{w.name}", w) for w in wheels]
        for name, path in sorted(entries, key=lambda e: e[0]):
            _write(zf, name, manifest.encode("utf-8") if path is None else path.read_bytes())
    tmp.replace(target)
    return target


def build_zip(root: Path, out: Path) -> Path:
    """``<out>/rigmind-<version>.zip`` without wheels (any platform; the run
    time's packages must already be importable in Blender). For development
    and tests of the layout.

    Refuses to build when the manifest and ``__version__`` disagree: Blender
    shows the manifest's version, the CLI reports the package's.
    """
    root = Path(root).resolve()
    version = _checked_version(root)
    return _write_zip(root, Path(out) / f"rigmind-{version}.zip", manifest_text(root))


# --- wheels -------------------------------------------------------------------------


def wheel_cache(root: Path) -> Path:
    return Path(root).resolve() / ".cache" / "wheels"


def fetch_wheels(root: Path, platform: str, *, python: str = sys.executable, cache=None,
                 pythons=PYTHONS) -> list:
    """The runtime wheels for ``platform`` (a Blender platform name) and each
    of ``pythons`` (``"3.11"``, ...), from the cache or ``pip download``; one
    wheel serves several Pythons where its tags allow (``py3-none``,
    ``abi3``). Raises :class:`WheelsMissing` naming what PyPI lacks."""
    pins = locked_versions(root)
    folder = Path(cache or wheel_cache(root)) / platform
    folder.mkdir(parents=True, exist_ok=True)
    found, missing = set(), []
    for py in pythons:
        for name in RUNTIME_WHEELS:
            version = pins[_norm(name)]
            want = f"{_norm(name)}=={version}"
            have = _cached(folder, name, version, py)
            if have is None:
                _download(python, folder, platform, py, want)
                have = _cached(folder, name, version, py)
                if have is None:
                    missing.append(f"{want} (Python {py})")
                    continue
            found.add(have)
    if missing:
        raise WheelsMissing(f"{platform}: no wheel on PyPI for " + ", ".join(missing))
    return sorted(found, key=lambda p: p.name)


def _download(python: str, folder: Path, platform: str, py: str, want: str) -> None:
    cp = "cp" + py.replace(".", "")
    cmd = [python, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
           "--only-binary=:all:", "--python-version", py, "--implementation", "cp",
           "--abi", cp, "--abi", "abi3", "--abi", "none", "-d", str(folder)]
    for tag in PLATFORM_TAGS[platform]:
        cmd += ["--platform", tag]
    subprocess.run(cmd + [want], capture_output=True, text=True)


def wheel_fits_python(filename: str, py: str) -> bool:
    """Whether a wheel (by its file name's python and ABI tags) installs on
    CPython ``py`` ("3.13"): ``py3``/``cp313`` tags with ABI ``none`` or
    ``cp313``, or a ``cp3X`` ``abi3`` wheel with X <= 13."""
    parts = filename[:-4].split("-")
    python_tags, abi_tags = parts[-3].split("."), parts[-2].split(".")
    major, minor = (int(x) for x in py.split("."))
    exact = f"cp{major}{minor}"
    for tag in python_tags:
        if tag in (f"py{major}", f"py{major}{minor}") and "none" in abi_tags:
            return True
        if tag == exact and (exact in abi_tags or "none" in abi_tags or "abi3" in abi_tags):
            return True
        m = re.fullmatch(rf"cp{major}(\d+)", tag)
        if m and "abi3" in abi_tags and int(m.group(1)) <= minor:
            return True
    return False


def _cached(folder: Path, name: str, version: str, py: str):
    stem = re.sub(r"[-_.]+", "_", name).lower()
    for p in sorted(folder.glob("*.whl")):
        dist, ver = p.name.split("-")[:2]
        if dist.lower() == stem and ver == version and wheel_fits_python(p.name, py):
            return p
    return None


def build_platform_zip(root: Path, out: Path, platform: str, wheels) -> Path:
    """``<out>/rigmind-<version>-<platform>.zip`` with ``wheels`` under ``wheels/``."""
    root = Path(root).resolve()
    version = _checked_version(root)
    wheels = [Path(w) for w in wheels]
    manifest = manifest_text(root, platform, [w.name for w in wheels])
    name = f"rigmind-{version}-{platform.replace('-', '_')}.zip"
    return _write_zip(root, Path(out) / name, manifest, wheels)


def build_platform_zips(root: Path, out: Path, platforms=DEFAULT_PLATFORMS, *, python: str = sys.executable,
                        cache=None, log=print) -> dict:
    """``{platform: zip path}`` for each platform whose wheels all exist;
    platforms that lack one are reported through ``log`` and left out."""
    built = {}
    for platform in platforms:
        try:
            wheels = fetch_wheels(root, platform, python=python, cache=cache)
        except WheelsMissing as ex:
            log(f"skipped {ex}")
            continue
        built[platform] = build_platform_zip(root, out, platform, wheels)
    return built


def this_platform() -> str:
    """Blender's name for the platform this runs on (``linux-x64``, ...)."""
    import platform

    system = {"darwin": "macos"}.get(sys.platform, "windows" if sys.platform.startswith("win") else "linux")
    machine = platform.machine().lower()
    arch = "arm64" if machine in ("arm64", "aarch64") else "x64"
    return f"{system}-{arch}"


def main(argv=None) -> int:
    import argparse

    root = Path(__file__).resolve().parents[1]
    ap = argparse.ArgumentParser(description="Build the RigMind Blender extension zips.")
    ap.add_argument("--root", default=str(root), help="package root (default: this repository)")
    ap.add_argument("--out", default=str(root / "dist"), help="output folder (default: ./dist)")
    ap.add_argument("--platform", action="append", choices=sorted(PLATFORM_TAGS),
                    help="build only this platform (repeatable; default: every platform with wheels)")
    ap.add_argument("--no-wheels", action="store_true", help="one zip without wheels (development)")
    ap.add_argument("--python", default=sys.executable, help="the Python whose pip downloads the wheels")
    args = ap.parse_args(argv)
    if args.no_wheels:
        print(build_zip(Path(args.root), Path(args.out)))
        return 0
    built = build_platform_zips(Path(args.root), Path(args.out), args.platform or DEFAULT_PLATFORMS,
                                python=args.python)
    for platform, path in built.items():
        print(f"{platform}\t{path.stat().st_size / 1e6:.1f} MB\t{path}")
    return 0 if built else 1


if __name__ == "__main__":
    sys.exit(main())
