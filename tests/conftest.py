"""Shared fixtures. Tests run against the real PyPI ``bpy`` (Blender 5.0.1),
headless, with Blender's user folders isolated in a temporary directory.

No mocks of bpy anywhere: a test that needs Blender takes the ``bpy_clean``
fixture, which resets to factory settings (an empty scene) first.

Markers (pyproject.toml, tests/README.md): ``bpy``, ``data`` and ``pure`` are
set here from each test's source (tests/support/markers.py), ``slow`` by
hand. ``--fast`` runs the ``pure and not slow`` tests with Blender refused
in this process and in its subprocesses (tests/support/no_bpy/).
"""

from __future__ import annotations

import importlib.util
import os
import random
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

# Must happen before anything imports bpy: `import bpy` creates
# ~/.config/blender/5.0 otherwise, and installed extensions would leak
# between runs.
_USER_DIR = Path(tempfile.mkdtemp(prefix="rigmind-blender-user-"))
os.environ["BLENDER_USER_RESOURCES"] = str(_USER_DIR)

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("RIGMIND_DATA", REPO.parent / "shared" / "data")).resolve()

from support import markers  # noqa: E402  (tests/ is on sys.path: this file's folder)

#: The fast subset's guard: a folder whose ``sitecustomize`` refuses Blender.
_NO_BPY = Path(__file__).resolve().parent / "support" / "no_bpy"
FAST_MARKERS = "pure and not slow"
_current_test = ["(collection)"]


def pytest_addoption(parser):
    parser.addoption("--fast", action="store_true",
                     help=f"run only the '{FAST_MARKERS}' tests, with bpy refused (a test that imports it fails)")


def pytest_configure(config):
    if not config.getoption("--fast"):
        return
    config.option.markexpr = (f"({config.option.markexpr}) and ({FAST_MARKERS})" if config.option.markexpr
                              else FAST_MARKERS)
    log = _USER_DIR / "blender-imports.log"
    log.touch()
    os.environ["RIGMIND_NO_BPY_LOG"] = str(log)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_NO_BPY), os.environ.get("PYTHONPATH")]))
    spec = importlib.util.spec_from_file_location("rigmind_tests_no_bpy", _NO_BPY / "sitecustomize.py")
    guard = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(guard)
    if any(m.split(".")[0] in guard.BLENDER_MODULES for m in sys.modules):
        raise pytest.UsageError("--fast: bpy was imported before the tests were collected")
    guard.install(lambda: _current_test[0])
    config._rigmind_no_bpy_log = log


def pytest_ignore_collect(collection_path, config):
    """--fast: a module that imports Blender at its top level is not even collected."""
    if (config.getoption("--fast") and collection_path.suffix == ".py"
            and collection_path.name.startswith("test_") and markers.module_needs_blender(collection_path)):
        return True
    return None


@pytest.hookimpl(tryfirst=True)      # before -m deselects by marker
def pytest_collection_modifyitems(config, items):
    for item in items:
        needs = markers.needs(item)
        needs |= {m for m in ("bpy", "data") if item.get_closest_marker(m)}
        for m in sorted(needs):
            item.add_marker(m)
        if not needs:
            item.add_marker("pure")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _current_test[0] = item.nodeid
    yield
    _current_test[0] = "(between tests)"


def pytest_sessionfinish(session, exitstatus):
    log = getattr(session.config, "_rigmind_no_bpy_log", None)
    if log is not None and log.exists() and log.read_text().strip():
        lines = sorted(set(log.read_text().splitlines()))
        session.config.get_terminal_writer().line(
            "\n--fast: Blender was imported (mark these tests `bpy`):\n  " + "\n  ".join(lines), red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    shutil.rmtree(_USER_DIR, ignore_errors=True)


#: Add-ons whose persistent load_post handlers outlive them: in Blender 5.0.1
#: ``read_factory_settings`` disables Rigify but leaves its
#: ``rigify.utils.action_layers.versioning_5_0`` handler registered, and the
#: next file load prints its AttributeError traceback (a later test that
#: checks a command's stderr then fails, depending on test order).
_LEAKY_ADDONS = ("rigify",)


def drop_stale_addon_handlers() -> int:
    """Remove the load_post handlers of :data:`_LEAKY_ADDONS` that are no
    longer enabled; the number removed. Nothing when bpy is not imported."""
    if "bpy" not in sys.modules:
        return 0
    import addon_utils
    import bpy

    handlers = bpy.app.handlers.load_post
    stale = [h for h in list(handlers)
             if getattr(h, "__module__", "").split(".")[0] in _LEAKY_ADDONS
             and not addon_utils.check(h.__module__.split(".")[0])[1]]
    for h in stale:
        handlers.remove(h)
    return len(stale)


@pytest.fixture(autouse=True)
def _no_stale_addon_handlers():
    drop_stale_addon_handlers()
    yield
    drop_stale_addon_handlers()


@pytest.fixture(autouse=True)
def _seed():
    random.seed(0)
    np.random.seed(0)
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(0)
    yield


@pytest.fixture
def bpy_clean():
    """The real ``bpy`` module with an empty factory scene."""
    import bpy

    bpy.ops.wm.read_factory_settings(use_empty=True)
    yield bpy
    bpy.ops.wm.read_factory_settings(use_empty=True)


@pytest.fixture(scope="session")
def blender_in_subprocess():
    """Taken by a test or fixture that runs Blender in a child process (a
    ``rigmind`` command that loads bpy): it marks the tests that use it
    ``bpy``, as :func:`bpy_clean` does. Nothing else."""
    return None


@pytest.fixture
def registered(bpy_clean):
    """The add-on registered in an empty factory scene, unregistered after."""
    import rigmind

    rigmind.register()
    yield bpy_clean
    rigmind.unregister()


class CodePayload:
    """Unpickling this creates the file ``marker``: what a crafted weights or
    cache file could do. Tests save one and check it never runs."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """``../shared/data`` (or ``$RIGMIND_DATA``); tests that need it skip
    with the reason when it is absent."""
    if not DATA.is_dir():
        pytest.skip(f"real data folder {DATA} is absent (set RIGMIND_DATA to a copy of shared/data)")
    return DATA


def data_file(rel: str) -> Path:
    """A file under the data folder, or skip the test saying which is missing."""
    p = DATA / rel
    if not p.exists():
        pytest.skip(f"real data file {p} is absent")
    return p


@pytest.fixture
def tmp_out(tmp_path) -> Path:
    return tmp_path


def call_as_panel(idname: str, **overrides):
    """Run a RigMind operator as its panel button does (its properties from
    the scene settings; headless Blender runs ``execute`` for any call)."""
    from rigmind.operators.op_common import call_as_panel as call

    return call(idname, **overrides)
