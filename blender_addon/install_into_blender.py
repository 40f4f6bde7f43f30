"""Install RigMind, with its Python dependencies, into a desktop Blender 5.0.
Standard library only: ``python3 install.py blender [--blender PATH]`` runs it
under whatever Python the user has.

Steps:
1. find Blender (``--blender PATH``, ``blender`` on PATH, the usual install
   places) and ask it for its bundled Python, its version and the user
   ``scripts/modules`` folder (on Blender's ``sys.path``);
2. ``pip install --target <that folder>`` the runtime dependencies with
   Blender's own Python (never the system one, whose ABI may differ);
3. build the extension zip and install it into the ``user_default``
   repository, enabled, then save the preferences so it stays enabled.

PATH may also be a Python interpreter that can ``import bpy`` (the PyPI
module); code then runs through ``PATH -c`` instead of Blender's
``--python-expr``. Tests use that, with ``skip_deps=True``.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    from . import build_extension  # imported as part of the package (tests)
except ImportError:
    import build_extension  # by install.py or as a script: this folder is on sys.path

REQUIRED = (5, 0)
MARK = "RIGMIND_JSON:"
STAMP_NAME = ".rigmind-deps.sha256"


def say(msg: str) -> None:
    print(f"[install blender] {msg}", flush=True)


def err(msg: str) -> None:
    print(f"install.py blender: {msg}", file=sys.stderr, flush=True)


# --- finding Blender ----------------------------------------------------------


def _is_python(path: str) -> bool:
    return os.path.basename(path).lower().startswith("python")


def candidate_paths() -> list[str]:
    """Blender executables in the usual places, newest-looking first."""
    found = []
    exe = shutil.which("blender")
    if exe:
        found.append(exe)
    home = os.path.expanduser("~")
    patterns = []
    if sys.platform.startswith("linux"):
        patterns = [
            "/usr/bin/blender",
            "/usr/local/bin/blender",
            "/snap/bin/blender",
            "/opt/blender*/blender",
            "/usr/local/blender*/blender",
            f"{home}/blender*/blender",
            f"{home}/Applications/blender*/blender",
            f"{home}/.local/bin/blender",
            f"{home}/.local/share/Steam/steamapps/common/Blender/blender",
        ]
    elif sys.platform == "darwin":
        patterns = [
            "/Applications/Blender*.app/Contents/MacOS/Blender",
            f"{home}/Applications/Blender*.app/Contents/MacOS/Blender",
        ]
    elif sys.platform.startswith("win"):
        for var in ("ProgramFiles", "ProgramFiles(x86)", "LOCALAPPDATA"):
            base = os.environ.get(var)
            if base:
                patterns.append(os.path.join(base, "Blender Foundation", "Blender*", "blender.exe"))
                patterns.append(os.path.join(base, "Steam", "steamapps", "common", "Blender", "blender.exe"))
    for pattern in patterns:
        # Reverse-sorted so "Blender 5.0" is tried before "Blender 4.2".
        found.extend(sorted(glob.glob(pattern), reverse=True))
    seen, out = set(), []
    for p in found:
        real = os.path.realpath(p)
        if real not in seen and os.path.isfile(real) and os.access(real, os.X_OK):
            seen.add(real)
            out.append(p)
    return out


# --- talking to Blender -------------------------------------------------------


def _command(exe: str, code: str, factory: bool) -> list[str]:
    if _is_python(exe):
        # -I: neither the current folder nor PYTHONPATH may shadow what the
        # code imports (the repository root holds `backend/`, `operators/`).
        return [exe, "-I", "-c", code]
    cmd = [exe, "--background"]
    if factory:
        cmd.append("--factory-startup")
    # Without --python-exit-code a failing expression still exits 0.
    return cmd + ["--python-exit-code", "1", "--python-expr", code]


def run_in_blender(exe: str, code: str, *, factory: bool = True, timeout: float = 600) -> dict:
    """Run ``code`` in Blender; it reports back through ``report(dict)``.

    Blender prints banners and warnings on stdout, so the answer is a single
    marked JSON line rather than the whole output.
    """
    prelude = (
        "import json as _j, sys as _s\n"
        f"def report(d):\n    print({MARK!r} + _j.dumps(d), flush=True)\n"
    )
    cmd = _command(exe, prelude + code, factory)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise RuntimeError(f"{exe} cannot be run (not found)")
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{exe} did not finish within {timeout:.0f} s")
    answer = None
    for line in proc.stdout.splitlines():
        if line.startswith(MARK):
            answer = json.loads(line[len(MARK):])
    if proc.returncode != 0 or answer is None:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise RuntimeError(f"{exe} failed (exit code {proc.returncode}):\n{tail}")
    return answer


QUERY = """
import bpy
try:
    import numpy
    numpy_version = numpy.__version__
except ImportError:
    numpy_version = None
report({
    "numpy": numpy_version,
    "python": _s.executable,
    "version": list(bpy.app.version),
    "version_string": bpy.app.version_string,
    "modules": bpy.utils.user_resource('SCRIPTS', path="modules", create=True),
})
"""


def query(exe: str) -> dict:
    return run_in_blender(exe, QUERY, factory=True)


# --- dependencies -------------------------------------------------------------


def runtime_requirements(root: Path, pins: dict | None = None) -> list[str]:
    """requirements.txt without bpy and pytest*; ``pins`` replaces a package's
    line by ``name==version``."""
    pins = {k.lower(): v for k, v in (pins or {}).items() if v}
    reqs = []
    for line in (Path(root) / "requirements.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name = line
        for sep in ("==", ">=", "<=", "~=", "!=", ">", "<", "[", ";", " "):
            name = name.split(sep, 1)[0]
        name = name.strip().lower().replace("_", "-")
        if name == "bpy" or name.startswith("pytest"):
            continue
        reqs.append(f"{name}=={pins[name]}" if name in pins else line)
    return reqs


def _run(cmd: list[str]) -> int:
    say("$ " + " ".join(cmd))
    return subprocess.run(cmd).returncode


def install_dependencies(python: str, target: str, reqs: list[str]) -> None:
    """``pip install --target`` with Blender's Python; skipped when the stamp in
    the target says this exact list is already there."""
    digest = hashlib.sha256("\n".join(reqs).encode()).hexdigest()
    stamp = Path(target) / STAMP_NAME
    if stamp.exists() and stamp.read_text().strip() == digest:
        say(f"dependencies already installed in {target}")
        return
    has_pip = subprocess.run([python, "-m", "pip", "--version"], capture_output=True).returncode == 0
    if not has_pip:
        say("Blender's Python has no pip; bootstrapping it with ensurepip")
        if _run([python, "-m", "ensurepip", "--upgrade"]) != 0:
            raise RuntimeError(f"{python} -m ensurepip failed; see the output above")
    with tempfile.TemporaryDirectory() as tmp:
        req_file = Path(tmp) / "requirements.txt"
        req_file.write_text("\n".join(reqs) + "\n")
        # --upgrade: a second run replaces packages instead of refusing because
        # the target folder already holds them.
        cmd = [python, "-m", "pip", "install", "--disable-pip-version-check",
               "--upgrade", "--target", target, "-r", str(req_file)]
        if _run(cmd) != 0:
            raise RuntimeError("pip could not install the dependencies into Blender; see the output above")
    stamp.write_text(digest + "\n")


# --- the extension ------------------------------------------------------------

INSTALL = """
import bpy, addon_utils
zip_path = {zip!r}
result = bpy.ops.extensions.package_install_files(
    filepath=zip_path, repo="user_default", enable_on_install=True)
if "FINISHED" not in result:
    raise SystemExit("package_install_files returned " + str(result))
module = "bl_ext.user_default.rigmind"
loaded, enabled = addon_utils.check(module)
# Background Blender does not save preferences on exit; without this the
# extension would be installed but disabled on the next start.
saved = "FINISHED" in bpy.ops.wm.save_userpref()
report({{
    "module": module,
    "enabled": bool(enabled),
    "saved": saved,
    "path": bpy.utils.user_resource('EXTENSIONS', path="user_default/rigmind"),
}})
"""


def install_extension(exe: str, zip_path: Path) -> dict:
    # Not --factory-startup here: saving preferences would otherwise replace
    # the user's own (themes, key maps, other add-ons) with factory defaults.
    return run_in_blender(exe, INSTALL.format(zip=str(zip_path)), factory=False)


def _pick_blender(blender_path):
    """(path, info) of a usable Blender 5.0, or (None, message)."""
    if blender_path:
        candidates = [blender_path]
        if not (os.path.isfile(blender_path) or shutil.which(blender_path)):
            return None, f"{blender_path} does not exist"
    else:
        candidates = candidate_paths()
        if not candidates:
            return None, ("no Blender found on PATH or in the usual places; "
                          "pass it with `python3 install.py blender --blender /path/to/blender`")
    seen = []
    for exe in candidates:
        try:
            info = query(exe)
        except RuntimeError as ex:
            seen.append(f"{exe}: {str(ex).splitlines()[0]}")
            continue
        if tuple(info["version"][:2]) == REQUIRED:
            return exe, info
        seen.append(f"{exe} is Blender {info['version_string']}")
    want = ".".join(map(str, REQUIRED))
    return None, f"RigMind needs Blender {want}.x; found: " + "; ".join(seen)


def main(blender_path=None, root=None, *, skip_deps: bool = False, out_dir=None) -> int:
    root = Path(root) if root is not None else Path(__file__).resolve().parents[1]
    exe, info = _pick_blender(blender_path)
    if exe is None:
        err(info)
        return 2
    say(f"Blender {info['version_string']} at {exe}")
    say(f"its Python: {info['python']}")

    if skip_deps:
        say("skipping dependencies (skip_deps)")
    else:
        # Blender ships numpy and the user modules folder comes first on its
        # sys.path: install the very version Blender has, so that shadowing it
        # changes nothing for Blender or for other add-ons.
        reqs = runtime_requirements(root, pins={"numpy": info.get("numpy")})
        say(f"installing {len(reqs)} dependencies into {info['modules']}")
        try:
            install_dependencies(info["python"], info["modules"], reqs)
        except RuntimeError as ex:
            err(str(ex))
            return 1

    out = Path(out_dir) if out_dir is not None else root / "dist"
    try:
        zip_path = build_extension.build_zip(root, out)
    except (OSError, ValueError) as ex:
        err(f"could not build the extension: {ex}")
        return 1
    say(f"built {zip_path}")

    try:
        result = install_extension(exe, zip_path.resolve())
    except RuntimeError as ex:
        err(f"could not install the extension: {ex}")
        return 1
    if not result["enabled"]:
        err(f"installed into {result['path']} but {result['module']} did not enable; "
            "start Blender from a terminal and enable it in Preferences to see why")
        return 1
    say(f"installed {result['module']} into {result['path']} and enabled it")
    if result["saved"]:
        say("saved Blender's preferences, so RigMind stays enabled")
    else:
        say("could not save Blender's preferences: enable RigMind in Preferences ▸ Add-ons once")
    say("open the 3D View sidebar (N) ▸ RigMind")
    return 0


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--blender", help="Blender executable, or a Python that can import bpy")
    ap.add_argument("--skip-deps", action="store_true", help="do not pip-install dependencies")
    a = ap.parse_args()
    sys.exit(main(a.blender, skip_deps=a.skip_deps))
