#!/usr/bin/env python3
"""Set up RigMind on a fresh machine, then run a job. Standard library only.

    python3 install.py demo      # .venv + dependencies, then the end-to-end demo
    python3 install.py test      # .venv and .venv-bpy52, then ruff and the whole pytest suite
    python3 install.py test --fast
                                 # .venv, ruff, then the pure tests that are not
                                 # slow (no Blender, no data: under 2 minutes)
    python3 install.py setup [--with ray]
                                 # only the set-up (plus optional extras)
    python3 install.py blender [--blender PATH]
                                 # build this platform's extension zip (its runtime
                                 # wheels inside) and install it into a desktop
                                 # Blender 5.0, 5.1 or 5.2 LTS, which installs the
                                 # wheels itself

Two environments: ``.venv`` (Python 3.11: bpy 5.0.1, Torch, the whole
project, where the suite runs) and ``.venv-bpy52`` (Python 3.13: bpy 5.2.3
alone, the Blender 5.2 LTS that the shipped extension is tested in; `test`
and `setup` make it, `demo` does not need it).

Set-up is idempotent: a second run with nothing to install only checks a stamp
per environment (the hash of its requirement files) and that the editable
install of this folder (`pip install -e .`) is there, well under 10 s.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
REQUIREMENTS = ROOT / "requirements.txt"
LOCK = ROOT / "requirements.lock"
PYPROJECT = ROOT / "pyproject.toml"
STAMP = VENV / ".rigmind-deps.sha256"
PY_VERSION = (3, 11)
#: Blender 5.2 LTS as a module (bpy 5.2.3 is built for CPython 3.13 only).
VENV_BPY52 = ROOT / ".venv-bpy52"
LOCK_BPY52 = ROOT / "requirements-bpy52.lock"
STAMP_BPY52 = VENV_BPY52 / ".rigmind-deps.sha256"
PY_VERSION_BPY52 = (3, 13)
#: tests/support/blender_envs.py: where this is set, a missing .venv-bpy52 fails its tests instead of skipping them.
REQUIRE_BPY52 = "RIGMIND_REQUIRE_BPY52"


def say(msg: str) -> None:
    print(f"[install] {msg}", flush=True)


def fail(msg: str, code: int = 2) -> "None":
    print(f"install.py: {msg}", file=sys.stderr, flush=True)
    sys.exit(code)


# --- Python 3.11 ----------------------------------------------------------------


def _python_version(exe: str):
    try:
        out = subprocess.run(
            [exe, "-c", "import sys; print(sys.version_info[0], sys.version_info[1])"],
            capture_output=True, text=True, timeout=30,
        )
        major, minor = out.stdout.split()
        return int(major), int(minor)
    except Exception:
        return None


def _pyenv_pythons(version) -> list:
    """pyenv's installs of ``version`` (newest patch first): pyenv's shims on
    PATH answer only for the versions a project selected, so its folders are
    looked in too."""
    root = Path(subprocess.run(["pyenv", "root"], capture_output=True, text=True).stdout.strip()
                if shutil.which("pyenv") else Path.home() / ".pyenv")
    tag = f"{version[0]}.{version[1]}"
    found = [p / "bin" / f"python{tag}" for p in (root / "versions").glob(f"{tag}.*")]
    return [str(p) for p in sorted(found, reverse=True) if p.is_file()]


def find_python(version, why: str) -> str:
    """A CPython ``version`` ((3, 11)): the interpreter running this script,
    ``pythonX.Y`` on PATH, or a pyenv install; else exit 2 saying how to get
    one. ``why`` says what needs it."""
    if sys.version_info[:2] == version:
        return sys.executable
    tag = f"{version[0]}.{version[1]}"
    on_path = shutil.which(f"python{tag}")
    for exe in ([on_path] if on_path else []) + _pyenv_pythons(version):
        if _python_version(exe) == version:
            return exe
    fail(
        f"RigMind needs Python {tag} ({why}); this is {sys.version.split()[0]} and no python{tag} "
        f"was found on PATH or in pyenv. Install it (e.g. `apt-get install python{tag}`, "
        f"`pyenv install {tag}`, or python.org) and run again."
    )


def find_python311() -> str:
    return find_python(PY_VERSION, "Blender 5.0's bpy is built for 3.11 only")


def venv_python() -> Path:
    return VENV / "bin" / "python"


def _deps_hash() -> str:
    h = hashlib.sha256()
    for f in (REQUIREMENTS, LOCK, PYPROJECT):
        h.update(f.read_bytes())
    return h.hexdigest()


def ensure_venv() -> Path:
    t0 = time.perf_counter()
    py = venv_python()
    if not py.exists() or _python_version(str(py)) != PY_VERSION:
        base = find_python311()
        if VENV.exists():
            shutil.rmtree(VENV)
        say(f"creating {VENV} with {base}")
        subprocess.run([base, "-m", "venv", str(VENV)], check=True)
    want = _deps_hash()
    changed = not STAMP.exists() or STAMP.read_text().strip() != want
    if changed:
        say("installing pinned dependencies (bpy 5.0.1, torch 2.13.0 CPU, onnxruntime, librosa, ...)")
        cmd = [str(py), "-m", "pip", "install", "--disable-pip-version-check", "-q",
               "-r", str(REQUIREMENTS), "-c", str(LOCK)]
        r = subprocess.run(cmd)
        if r.returncode != 0:
            fail("pip could not install the dependencies (see above); fix the cause and run again")
    install_package(py, force=changed)
    if changed:
        STAMP.write_text(want + "\n")
    say(f"environment ready in {time.perf_counter() - t0:.1f} s")
    return py


def ensure_venv_bpy52() -> Path:
    """``.venv-bpy52``: Python 3.13 with bpy 5.2.3 and only what bpy brings
    (requirements-bpy52.lock), the Blender 5.2 LTS the extension is tested in.
    Nothing of the project is installed into it."""
    t0 = time.perf_counter()
    py = VENV_BPY52 / "bin" / "python"
    if not py.exists() or _python_version(str(py)) != PY_VERSION_BPY52:
        base = find_python(PY_VERSION_BPY52, "the tests run the extension in Blender 5.2 LTS, whose bpy is 3.13 only")
        if VENV_BPY52.is_symlink():
            VENV_BPY52.unlink()
        elif VENV_BPY52.exists():
            shutil.rmtree(VENV_BPY52)
        say(f"creating {VENV_BPY52} with {base}")
        subprocess.run([base, "-m", "venv", str(VENV_BPY52)], check=True)
    want = hashlib.sha256(LOCK_BPY52.read_bytes()).hexdigest()
    if not STAMP_BPY52.exists() or STAMP_BPY52.read_text().strip() != want:
        say("installing Blender 5.2 LTS as a module (bpy 5.2.3) for the extension's tests")
        r = subprocess.run([str(py), "-m", "pip", "install", "--disable-pip-version-check", "-q",
                            "-r", str(LOCK_BPY52)])
        if r.returncode != 0:
            fail("pip could not install bpy 5.2.3 (see above); fix the cause and run again")
        STAMP_BPY52.write_text(want + "\n")
    say(f"Blender 5.2 environment ready in {time.perf_counter() - t0:.1f} s")
    return py


def _site_packages() -> Path:
    return VENV / "lib" / f"python{PY_VERSION[0]}.{PY_VERSION[1]}" / "site-packages"


def _editable_points_here() -> bool:
    """True when ``pip install -e .`` of THIS folder is in the venv: its
    finder maps ``rigmind`` to ROOT (a moved or copied checkout re-installs)."""
    for finder in _site_packages().glob("__editable___rigmind_*_finder.py"):
        if repr(str(ROOT)) in finder.read_text(encoding="utf-8"):
            return True
    return False


def _remove_hand_made_link() -> None:
    """Older set-ups linked the package by hand; pip's editable install replaces them."""
    src = VENV / "rigmind-src"
    if src.is_symlink():
        src.unlink()
    elif src.exists():
        shutil.rmtree(src, ignore_errors=True)
    pth = _site_packages() / "rigmind.pth"
    if pth.exists():
        pth.unlink()


def install_package(py: Path, force: bool = False) -> None:
    """``pip install -e . --no-deps``: ``import rigmind`` resolves to this folder
    (the repository root is the package, the same tree that is zipped into the
    Blender extension) and pip writes ``.venv/bin/rigmind``. The dependencies
    were installed from the lock just before, so pip resolves nothing here.
    Skipped when the editable install already points at this folder and
    ``force`` (pyproject.toml or the requirements changed) is off."""
    _remove_hand_made_link()
    if not force and _editable_points_here() and (VENV / "bin" / "rigmind").exists():
        return
    say("installing the rigmind package in editable mode (pip install -e .)")
    r = subprocess.run([str(py), "-m", "pip", "install", "--disable-pip-version-check", "-q",
                        "--no-deps", "-e", str(ROOT)])
    if r.returncode != 0:
        fail("pip could not install the rigmind package (see above); fix the cause and run again")


# --- optional extras ---------------------------------------------------------------

#: Optional extras: pinned packages and a module that shows they are there.
#: Never needed by `demo` or `test` (the Ray tests skip without it).
EXTRAS = {"ray": (["ray==2.60.0"], "ray")}


def install_extra(py: Path, name: str) -> None:
    packages, module = EXTRAS[name]
    probe = subprocess.run([str(py), "-c", f"import {module}"], capture_output=True)
    if probe.returncode == 0:
        say(f"{name}: already installed")
        return
    say(f"installing the optional extra {name} ({' '.join(packages)})")
    # The lock file as constraints: the extra must not move numpy, bpy & co.
    r = subprocess.run([str(py), "-m", "pip", "install", "--disable-pip-version-check", "-q",
                        *packages, "-c", str(LOCK)])
    if r.returncode != 0:
        fail(f"pip could not install the extra {name} (see above)")


# --- jobs -----------------------------------------------------------------------


def run_demo(args) -> int:
    py = ensure_venv()
    cmd = [str(py), "-m", "rigmind", "demo"] + (["--out", args.out] if args.out else [])
    return subprocess.run(cmd, cwd=ROOT).returncode


def run_lint() -> int:
    """``ruff check .`` with the project's settings (pyproject.toml [tool.ruff])."""
    say("ruff check .")
    r = subprocess.run([str(VENV / "bin" / "ruff"), "check", "--no-cache", "."], cwd=ROOT)
    if r.returncode != 0:
        print("install.py: ruff found problems (above); `.venv/bin/ruff check --fix .` fixes the simple ones",
              file=sys.stderr, flush=True)
    return r.returncode


def run_tests(args) -> int:
    """ruff, then pytest: the whole suite, or with ``--fast`` the pure tests
    that are not slow, with bpy refused (tests/README.md)."""
    ensure_venv()
    if not args.fast:
        ensure_venv_bpy52()
    lint = run_lint()
    if lint != 0:
        return lint
    # The console script, not `python -m pytest`: the latter puts the current
    # folder on sys.path, which would let a stray `import backend` pass.
    cmd = [str(VENV / "bin" / "pytest"), "tests", "-p", "no:cacheprovider"] + (["--fast"] if args.fast else [])
    env = dict(os.environ) if args.fast else dict(os.environ, **{REQUIRE_BPY52: "1"})
    t0 = time.perf_counter()
    rc = subprocess.run(cmd + list(args.pytest_args), cwd=ROOT, env=env).returncode
    say(f"tests{' (--fast)' if args.fast else ''}: {time.perf_counter() - t0:.0f} s")
    return rc


def run_blender(args) -> int:
    """Build this platform's self-contained extension zip (runtime wheels
    inside) and install it into a desktop Blender 5.0 or newer; Blender
    installs the wheels itself. Needs no .venv."""
    sys.path.insert(0, str(ROOT / "tools"))
    import install_into_blender  # stdlib-only set-up tool, never shipped

    return install_into_blender.main(args.blender, ROOT)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="install.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="job", required=True)
    d = sub.add_parser("demo", help="set up, then run the end-to-end demo on the mannequin")
    d.add_argument("--out", help="output folder (default: ./rigmind_out/demo)")
    t = sub.add_parser("test", help="set up, then ruff and the whole test suite (extra arguments go to pytest)")
    t.add_argument("--fast", action="store_true",
                   help="only the pure tests that are not slow (no Blender, no data; tests/README.md)")
    b = sub.add_parser("blender", help="install into a desktop Blender 5.0, 5.1 or 5.2 LTS")
    b.add_argument("--blender", help="path to the Blender executable (default: search PATH and usual places)")
    s = sub.add_parser("setup", help="only create .venv and install dependencies")
    s.add_argument("--with", dest="extras", action="append", default=[], choices=sorted(EXTRAS),
                   help="also install an optional extra: ray (rigmind batch --engine ray)")
    args, extra = ap.parse_known_args(argv)
    if extra and args.job != "test":
        ap.error(f"unrecognized arguments: {' '.join(extra)}")
    args.pytest_args = extra
    if args.job == "demo":
        return run_demo(args)
    if args.job == "test":
        return run_tests(args)
    if args.job == "blender":
        return run_blender(args)
    py = ensure_venv()
    ensure_venv_bpy52()
    for extra in args.extras:
        install_extra(py, extra)
    return 0


if __name__ == "__main__":
    sys.exit(main())
