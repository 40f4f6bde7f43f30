"""One module resolves RigMind's folders (models, caches, presets, data), and
``RIGMIND_DATA`` is honoured by every command that reads the data."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from conftest import REPO

from rigmind.backend import paths

SHIPPED = ("backend", "operators", "blender_addon", "presets")
#: Modules allowed to turn __file__ into a folder: the resolver, and the
#: set-up tools that run before the package is importable.
ALLOWED = {"backend/paths.py", "install.py"}


def shipped_modules():
    for p in sorted(REPO.glob("*.py")):
        yield p
    for d in SHIPPED:
        yield from sorted((REPO / d).rglob("*.py"))


def test_no_module_but_paths_computes_a_folder_from_file():
    pattern = re.compile(r"Path\(\s*__file__\s*\)|os\.path\.\w+\(\s*__file__")
    offenders = []
    for p in shipped_modules():
        rel = p.relative_to(REPO).as_posix()
        if rel in ALLOWED or "__pycache__" in rel:
            continue
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{rel}:{n}: {line.strip()}")
    assert offenders == [], "resolve folders with rigmind.backend.paths:\n" + "\n".join(offenders)


def test_folders_are_the_package_s():
    assert paths.PACKAGE_ROOT == REPO
    assert (paths.MODELS_DIR / "locomotion.onnx").is_file()
    assert (paths.PRESETS_DIR / "humanoid.json").is_file()
    assert paths.cache_dir("locomotion") == REPO / ".cache" / "locomotion"


def test_data_dir_honours_rigmind_data(monkeypatch, tmp_path):
    monkeypatch.delenv("RIGMIND_DATA", raising=False)
    assert paths.data_dir() == REPO.parent / "shared" / "data"
    monkeypatch.setenv("RIGMIND_DATA", str(tmp_path))
    assert paths.data_dir() == tmp_path


def test_every_data_default_follows_rigmind_data(tmp_path):
    """In a fresh process with RIGMIND_DATA set, every module-level data
    default and every data-reading command's default points there."""
    code = (
        "import sys\n"
        "from rigmind.backend import paths\n"
        "from rigmind.backend.locomotion import dataset as D\n"
        "from rigmind.backend.face import train as FTR\n"
        "print(paths.data_dir()); print(D.DEFAULT_DATA_DIR); print(FTR.default_data())\n"
    )
    env = dict(os.environ, RIGMIND_DATA=str(tmp_path))
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, env=env,
                         timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(tmp_path)] * 3
