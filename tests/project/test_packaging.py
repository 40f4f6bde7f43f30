"""The project as a Python package: ``pip install -e .`` in a fresh virtual
environment gives ``import rigmind`` and the ``rigmind`` script, and the
package list in pyproject.toml is the shipped tree."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tomllib
import venv
from pathlib import Path

from conftest import REPO

#: Folders of the repository that never ship (set-up and build tools, tests, benchmarks).
NOT_SHIPPED = {"tools", "tests", "bench", ".venv", ".venv-bpy52", ".git", "build", "dist", ".cache"}


def shipped_packages() -> set[str]:
    found = {"rigmind"}
    for init in REPO.rglob("__init__.py"):
        rel = init.parent.relative_to(REPO)
        if not rel.parts or rel.parts[0] in NOT_SHIPPED or rel.parts[0].endswith(".egg-info"):
            continue
        found.add(".".join(("rigmind",) + rel.parts))
    return found


def test_pyproject_lists_every_shipped_package():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    setup = project["tool"]["setuptools"]
    assert setup["package-dir"] == {"rigmind": "."}
    assert set(setup["packages"]) == shipped_packages()
    assert project["project"]["scripts"] == {"rigmind": "rigmind.cli:main"}
    assert {"training", "batch", "dev"} <= set(project["project"]["optional-dependencies"])


def test_pip_install_editable_in_a_fresh_venv(tmp_path):
    """A brand-new venv; the dependencies come from this one through a ``.pth``
    (the same as ``--system-site-packages``), so pip resolves them without
    downloading the 2 GB tree; the build backend comes from the package index."""
    env_dir = tmp_path / "fresh"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    site = Path(subprocess.check_output(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True).strip())
    (site / "deps-from-test-venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    pip = subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-e", str(REPO)],
                         capture_output=True, text=True, timeout=600, env=env)
    assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]

    script = env_dir / "bin" / "rigmind"
    assert script.is_file()
    help_ = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=120,
                           cwd=tmp_path, env=env)
    assert help_.returncode == 0, help_.stderr
    assert "usage: rigmind" in help_.stdout
    where = subprocess.run([str(py), "-I", "-c", "import rigmind, rigmind.backend.locomotion.controller as c; "
                            "print(rigmind.__file__); print(c.__file__)"],
                           capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert where.returncode == 0, where.stderr
    init, controller = where.stdout.split()
    assert Path(init) == REPO / "__init__.py"          # editable: this checkout, not a copy
    assert Path(controller) == REPO / "backend" / "locomotion" / "controller.py"


def test_install_py_setup_is_a_no_op_when_set_up():
    """`install.py test` set this venv up just before: a second set-up installs
    nothing, and the package is pip's editable install (no hand-made link,
    ``.pth`` or script)."""
    venv_dir = Path(sys.prefix)
    if venv_dir != REPO / ".venv":
        import pytest

        pytest.skip(f"runs against the checkout's own .venv; this is {venv_dir}")
    proc = subprocess.run([sys.executable, str(REPO / "install.py"), "setup"], capture_output=True,
                          text=True, timeout=600, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert "installing" not in proc.stdout, proc.stdout
    assert "environment ready" in proc.stdout
    site = Path(sysconfig.get_paths()["purelib"])
    assert not (venv_dir / "rigmind-src").exists()
    assert not (site / "rigmind.pth").exists()
    assert list(site.glob("__editable___rigmind_*_finder.py"))
    assert "rigmind.cli" in (venv_dir / "bin" / "rigmind").read_text()
