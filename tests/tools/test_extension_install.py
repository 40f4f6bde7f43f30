"""The shipped layout: build the extension zip, install it into an isolated
Blender user folder and enable it in fresh processes, as Blender itself would.

Every Blender step runs in its own subprocess (not multiprocessing: spawn
breaks after ``import bpy``) with its own BLENDER_USER_RESOURCES, and with
``-I`` so neither the current folder nor PYTHONPATH can make a stray absolute
``import backend`` work by accident.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from conftest import REPO

import rigmind

sys.path.insert(0, str(REPO / "tools"))
import build_extension, install_into_blender  # noqa: E402,E401  (stdlib-only tools, never shipped)

PY = sys.executable
MODULE = "bl_ext.user_default.rigmind"
MARK = "RESULT:"
FORBIDDEN_TOP_LEVEL = ("backend", "operators", "blender_addon", "presets")


def run_blender_py(code: str, user_dir: Path, cwd: Path, timeout: float = 300) -> dict:
    env = dict(os.environ, BLENDER_USER_RESOURCES=str(user_dir))
    proc = subprocess.run([PY, "-I", "-c", code], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(MARK)]
    assert proc.returncode == 0 and lines, (
        f"exit {proc.returncode}\n--- stdout\n{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-4000:]}"
    )
    return json.loads(lines[-1][len(MARK):])


def install_code(zip_path: Path) -> str:
    return (
        "import json, bpy\n"
        "res = bpy.ops.extensions.package_install_files(\n"
        f"    filepath={str(zip_path)!r}, repo='user_default', enable_on_install=False)\n"
        f"print({MARK!r} + json.dumps({{'result': sorted(res)}}))\n"
    )


ENABLE = f"""
import json, sys, time
import bpy, addon_utils

MODULE = {MODULE!r}

def handlers():
    return {{n: len(getattr(bpy.app.handlers, n)) for n in dir(bpy.app.handlers)
            if isinstance(getattr(bpy.app.handlers, n), list)}}

def raise_(ex):
    raise ex

out = {{}}
h0 = handlers()
before = set(sys.modules)
mod = addon_utils.enable(MODULE, default_set=True, handle_error=raise_)
new = sorted(set(sys.modules) - before)
out["module"] = mod.__name__
out["torch"] = "torch" in sys.modules
out["bad_modules"] = sorted(k for k in sys.modules
                            if k.split(".")[0] in {FORBIDDEN_TOP_LEVEL!r})
out["venv_package"] = sorted(k for k in sys.modules if k.split(".")[0] == "rigmind")
out["new_modules"] = [k for k in new if k.startswith(MODULE)]
out["panel"] = hasattr(bpy.types, "VIEW3D_PT_rigmind")
out["scene_prop"] = hasattr(bpy.types.Scene, "rigmind")
out["speed"] = bpy.context.scene.rigmind.speed
addon = bpy.context.preferences.addons.get(MODULE)
out["prefs_idname"] = type(addon.preferences).bl_idname if addon and addon.preferences else None
out["prefs_engine"] = addon.preferences.inference_engine if addon and addon.preferences else None

addon_utils.disable(MODULE, default_set=True, handle_error=raise_)
out["after_types"] = sorted(n for n in dir(bpy.types) if "rigmind" in n.lower())
out["after_scene_prop"] = hasattr(bpy.types.Scene, "rigmind")
out["after_addon"] = MODULE in bpy.context.preferences.addons
out["handlers_same"] = handlers() == h0
print({MARK!r} + json.dumps(out))
"""


@pytest.fixture(scope="module")
def built_zip(tmp_path_factory) -> Path:
    return build_extension.build_zip(REPO, tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="module")
def installed(built_zip, tmp_path_factory) -> Path:
    user = tmp_path_factory.mktemp("blender-user")
    res = run_blender_py(install_code(built_zip), user, user)
    assert res["result"] == ["FINISHED"]
    assert (user / "extensions" / "user_default" / "rigmind" / "blender_manifest.toml").is_file()
    return user


def test_manifest_matches_package_version():
    manifest = tomllib.loads((REPO / "blender_addon" / "blender_manifest.toml").read_text())
    assert manifest["version"] == rigmind.__version__
    assert manifest["id"] == "rigmind"
    assert manifest["type"] == "add-on"
    assert manifest["blender_version_min"] == "5.0.0"
    assert manifest["license"] == ["SPDX:GPL-3.0-or-later"]
    assert "files" in manifest["permissions"]


def test_manifest_passes_blenders_strict_validator(built_zip):
    import bpy

    scripts = Path(bpy.utils.system_resource("SCRIPTS"))
    tool = scripts / "addons_core" / "bl_pkg" / "cli" / "blender_ext.py"
    tags = scripts / "modules" / "_bpy_internal" / "extensions" / "tags.py"
    proc = subprocess.run([PY, "-I", str(tool), "validate", "--valid-tags", str(tags), str(built_zip)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_blender_version_min_is_the_version_the_code_needs():
    """5.0.0: the code writes slotted actions (``Action.fcurves`` is gone in
    5.0) and install_into_blender refuses any other Blender; the manifest
    must not let 4.x install it."""
    import bpy

    manifest = tomllib.loads((REPO / "blender_addon" / "blender_manifest.toml").read_text())
    need = tuple(int(x) for x in manifest["blender_version_min"].split("."))
    assert need == install_into_blender.REQUIRED + (0,)
    assert tuple(bpy.app.version[:2]) >= need[:2]
    rna = bpy.types.Action.bl_rna
    assert "fcurves" not in rna.properties                # what a 4.x Blender would still have
    assert "fcurve_ensure_for_datablock" in rna.functions


def test_zip_layout_is_flat_and_deterministic(built_zip, tmp_path):
    again = build_extension.build_zip(REPO, tmp_path)
    assert again.name == built_zip.name == f"rigmind-{rigmind.__version__}.zip"
    assert again.read_bytes() == built_zip.read_bytes()
    names = zipfile.ZipFile(built_zip).namelist()
    assert names == sorted(names)
    for required in ("blender_manifest.toml", "__init__.py", "blender_addon/registration.py",
                     "blender_addon/panel.py", "backend/__init__.py"):
        assert required in names, required
    for name in names:
        parts = name.split("/")
        assert "__pycache__" not in parts and not name.endswith(".pyc"), name
        assert parts[0] not in {"tests", "bench", "tools", ".venv", ".venv-bpy52", ".git", "dist", "build", ".cache"}, name
        # The evaluation drivers are the pip package's (`rigmind eval`), never the add-on's.
        assert parts[0] != "evaluation", name
        assert name != "install.py", name
    # No set-up tool anywhere in the tree (they live in tools/, never shipped).
    for tool in ("build_extension.py", "install_into_blender.py", "install.py"):
        assert not any(n.split("/")[-1] == tool for n in names), tool
    # Every root-level module ships (cli.py, api.py, ... as they appear).
    for p in REPO.glob("*.py"):
        if p.name != "install.py":
            assert p.name in names, p.name


def test_installed_extension_enables_lazily_and_disables_cleanly(installed):
    res = run_blender_py(ENABLE, installed, installed)
    assert res["module"] == MODULE
    assert res["new_modules"], "the extension's modules were not imported"
    assert res["torch"] is False, "enabling RigMind imported torch"
    assert res["bad_modules"] == [], "generic top-level modules leaked into sys.modules"
    assert res["venv_package"] == [], "the extension imported the venv's `rigmind` by absolute name"
    assert res["panel"] and res["scene_prop"]
    assert res["speed"] == pytest.approx(1.3)
    assert res["prefs_idname"] == MODULE
    assert res["prefs_engine"] == "onnxruntime"        # the installed add-on bakes with the faster runtime
    assert res["after_types"] == []
    assert res["after_scene_prop"] is False
    assert res["after_addon"] is False
    assert res["handlers_same"] is True


STAYS_ENABLED = f"""
import json, sys, bpy
bpy.ops.wm.read_userpref()
print({MARK!r} + json.dumps({{
    "addons": [a.module for a in bpy.context.preferences.addons],
    "panel": hasattr(bpy.types, "VIEW3D_PT_rigmind"),
    "torch": "torch" in sys.modules,
}}))
"""


def test_install_into_blender_main_with_pypi_bpy(tmp_path, monkeypatch, capsys):
    user = tmp_path / "blender-user"
    user.mkdir()
    monkeypatch.setenv("BLENDER_USER_RESOURCES", str(user))
    rc = install_into_blender.main(PY, REPO, wheels=False, out_dir=tmp_path / "dist")
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "Blender 5.0." in out and "installed bl_ext.user_default.rigmind" in out
    assert (tmp_path / "dist" / f"rigmind-{rigmind.__version__}.zip").is_file()
    assert (user / "extensions" / "user_default" / "rigmind" / "__init__.py").is_file()
    assert not (user / "scripts" / "modules").exists()      # nothing pip-installed into Blender
    # Saved preferences keep it enabled in the next session.
    res = run_blender_py(STAYS_ENABLED, user, tmp_path)
    assert MODULE in res["addons"]
    assert res["panel"] is True
    assert res["torch"] is False


def test_install_into_blender_reports_a_missing_blender(tmp_path, capsys):
    rc = install_into_blender.main(str(tmp_path / "no-such-blender"), REPO, wheels=False,
                                   out_dir=tmp_path / "dist")
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert len(err.splitlines()) == 1 and "does not exist" in err
    assert not (tmp_path / "dist").exists()


def test_runtime_wheels_are_pinned_requirements_without_torch_or_bpy():
    """Every wheel the zips carry is a locked requirement (or a locked
    dependency of one); torch, bpy and numpy (Blender bundles it) never ship."""
    locked = build_extension.locked_versions(REPO)
    names = {build_extension._norm(n) for n in build_extension.RUNTIME_WHEELS}
    assert names <= set(locked)
    assert not names & {"torch", "bpy", "numpy", "librosa", "smplx"}
    assert "onnxruntime" in names


def test_install_into_blender_main_installs_into_blender_52_lts(tmp_path, monkeypatch, capsys):
    """`install.py blender` with Blender 5.2 LTS (bpy 5.2.3, Python 3.13):
    the platform zip with its wheels installs and enables there."""
    from support import blender_envs

    env = blender_envs.require(blender_envs.blender_52(), "5.2")
    user = tmp_path / "blender-user"
    user.mkdir()
    monkeypatch.setenv("BLENDER_USER_RESOURCES", str(user))
    try:
        build_extension.fetch_wheels(REPO, build_extension.this_platform())
    except build_extension.WheelsMissing as ex:
        pytest.skip(f"cannot fetch the runtime wheels (PyPI unreachable and .cache/wheels empty?): {ex}")
    rc = install_into_blender.main(env.python, REPO, out_dir=tmp_path / "dist")
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "Blender 5.2." in out and "installed bl_ext.user_default.rigmind" in out
    assert (user / "extensions" / "user_default" / "rigmind" / "__init__.py").is_file()
    site = list((user / "extensions" / ".local").glob("lib/python3.13/site-packages"))
    assert site and (site[0] / "onnxruntime").is_dir(), "Blender 5.2 did not install the cp313 wheels"


@pytest.mark.parametrize("info, words", [
    ({"version": [4, 2, 9], "version_string": "4.2.9 LTS", "python_version": "3.11"}, "too old"),
    ({"version": [4, 5, 0], "version_string": "4.5.0 LTS", "python_version": "3.11"}, "too old"),
    ({"version": [6, 0, 0], "version_string": "6.0.0", "python_version": "3.15"}, "embeds Python 3.15"),
])
def test_install_into_blender_says_plainly_why_a_blender_cannot_run_it(info, words):
    why = install_into_blender.unsupported_because(info)
    assert words in why and "\n" not in why
    assert "5.0" in why


@pytest.mark.parametrize("version, python", [((5, 0, 1), "3.11"), ((5, 1, 0), "3.13"), ((5, 2, 3), "3.13"),
                                             ((5, 3, 0), "3.13")])
def test_install_into_blender_accepts_every_supported_blender(version, python):
    info = {"version": list(version), "version_string": ".".join(map(str, version)), "python_version": python}
    assert install_into_blender.unsupported_because(info) is None


def test_install_py_finds_python_313_the_way_it_finds_311():
    """install.py's search (this interpreter, pythonX.Y on PATH, pyenv) finds
    a 3.13 for the Blender 5.2 environment where one is installed."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("rigmind_install_script", REPO / "install.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    for version in (script.PY_VERSION, script.PY_VERSION_BPY52):
        try:
            exe = script.find_python(version, "a test")
        except SystemExit:
            pytest.skip(f"no Python {version} on this machine")
        assert script._python_version(exe) == version
