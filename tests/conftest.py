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
