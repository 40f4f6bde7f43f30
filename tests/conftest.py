"""Shared fixtures. Tests run against the real PyPI ``bpy`` (Blender 5.0.1),
headless, with Blender's user folders isolated in a temporary directory.

No mocks of bpy anywhere: a test that needs Blender takes the ``bpy_clean``
fixture, which resets to factory settings (an empty scene) first.
"""

from __future__ import annotations

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


def pytest_sessionfinish(session, exitstatus):
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
