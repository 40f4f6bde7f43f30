"""Install RigMind into a desktop Blender 5.0, 5.1 or 5.2 LTS as a self-contained extension.
Standard library only: ``python3 install.py blender [--blender PATH]`` runs it
under whatever Python the user has.

Steps:
1. find Blender (``--blender PATH``, ``blender`` on PATH, the usual install
   places) and check it is 5.0 or newer and embeds a Python the zip has
   wheels for (3.11: 5.0; 3.13: 5.1, 5.2 LTS);
2. build this platform's extension zip with its runtime wheels
   (tools/build_extension.py; wheels are downloaded once into
   ``.cache/wheels/<platform>`` with pip, then reused offline);
3. install that zip into the ``user_default`` repository with
   ``extensions.package_install_files``, enabled, and save the preferences so it
   stays enabled. Blender installs the wheels itself: nothing is pip-installed
   into Blender, and the extension needs no network at run time.

PATH may also be a Python interpreter that can ``import bpy`` (the PyPI
module); code then runs through ``PATH -c`` instead of Blender's
``--python-expr``. Tests use that, with ``wheels=False`` (a zip without wheels,
the test venv already has the run time).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_extension  # noqa: E402  (the sibling tool)

#: The oldest Blender the code runs on (slotted actions, the 5.0 render engines).
REQUIRED = (5, 0)
MARK = "RIGMIND_JSON:"


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
        raise RuntimeError(f"{exe} cannot be run (not found)") from None
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{exe} did not finish within {timeout:.0f} s") from None
    answer = None
    for line in proc.stdout.splitlines():
        if line.startswith(MARK):
            answer = json.loads(line[len(MARK):])
    if proc.returncode != 0 or answer is None:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise RuntimeError(f"{exe} failed (exit code {proc.returncode}):\n{tail}")
    return answer


QUERY = """
import bpy, sys
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
    "python_version": "%d.%d" % sys.version_info[:2],
})
"""


def query(exe: str) -> dict:
    return run_in_blender(exe, QUERY, factory=True)


# --- wheels -------------------------------------------------------------------


def _has_pip(python: str) -> bool:
    return subprocess.run([python, "-m", "pip", "--version"], capture_output=True).returncode == 0


def pip_python(blender_python: str) -> str:
    """A Python with pip to download wheels: this one, else Blender's
    (bootstrapped with ensurepip). Only ``pip download`` runs; nothing is
    installed into either."""
    if _has_pip(sys.executable):
        return sys.executable
    if not _has_pip(blender_python):
        say("no pip here; bootstrapping it in Blender's Python with ensurepip")
        if subprocess.run([blender_python, "-m", "ensurepip", "--upgrade"]).returncode != 0:
            raise RuntimeError(f"{blender_python} -m ensurepip failed; see the output above")
    return blender_python


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


def unsupported_because(info: dict):
    """Why this Blender cannot run RigMind (one sentence), or None."""
    version = tuple(info["version"][:2])
    if version < REQUIRED:
        want = ".".join(map(str, REQUIRED))
        return (f"Blender {info['version_string']} is too old: RigMind needs Blender {want} or newer "
                f"(5.0, 5.1 or 5.2 LTS)")
    py = info.get("python_version")
    if py is not None and py not in build_extension.PYTHONS:
        return (f"Blender {info['version_string']} embeds Python {py}; this RigMind carries wheels for Python "
                f"{' and '.join(build_extension.PYTHONS)} (Blender 5.0 to 5.2 LTS)")
    return None


def _pick_blender(blender_path):
    """(path, info) of a usable Blender (5.0 or newer), or (None, message)."""
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
        why = unsupported_because(info)
        if why is None:
            return exe, info
        seen.append(f"{exe}: {why}")
    if len(seen) == 1:
        return None, seen[0].split(": ", 1)[1] if blender_path else seen[0]
    return None, "no usable Blender found: " + "; ".join(seen)


def build_for(root: Path, out: Path, info: dict, wheels: bool) -> Path:
    """This platform's zip with its wheels, or (``wheels=False``) the plain zip."""
    if not wheels:
        return build_extension.build_zip(root, out)
    platform = build_extension.this_platform()
    found = build_extension.fetch_wheels(root, platform, python=pip_python(info["python"]))
    return build_extension.build_platform_zip(root, out, platform, found)


def main(blender_path=None, root=None, *, wheels: bool = True, out_dir=None) -> int:
    root = Path(root) if root is not None else Path(__file__).resolve().parents[1]
    exe, info = _pick_blender(blender_path)
    if exe is None:
        err(info)
        return 2
    say(f"Blender {info['version_string']} at {exe}")

    out = Path(out_dir) if out_dir is not None else root / "dist"
    try:
        zip_path = build_for(root, out, info, wheels)
    except (OSError, ValueError, RuntimeError) as ex:
        err(f"could not build the extension: {ex}")
        return 1
    say(f"built {zip_path} ({zip_path.stat().st_size / 1e6:.1f} MB)")

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
    ap.add_argument("--no-wheels", action="store_true",
                    help="install a zip without wheels (Blender must already have the run time)")
    a = ap.parse_args()
    sys.exit(main(a.blender, wheels=not a.no_wheels))
