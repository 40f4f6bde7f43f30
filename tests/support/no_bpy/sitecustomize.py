"""The fast subset's guard (``python3 install.py test --fast``): ``import bpy``
(or mathutils, bpy_extras, bmesh, addon_utils) fails loudly, naming the
process, and is logged to ``$RIGMIND_NO_BPY_LOG`` so that conftest fails the
run even when the importing code caught the error.

conftest installs :class:`RefuseBlender` in the pytest process; child
processes get it through ``PYTHONPATH`` (this folder holds the
``sitecustomize`` that Python imports at start-up). A test that needs
Blender, in process or in a subprocess, must carry the ``bpy`` marker."""

from __future__ import annotations

import importlib.abc
import os
import sys

BLENDER_MODULES = ("bpy", "_bpy", "mathutils", "bpy_extras", "bmesh", "addon_utils")
LOG_ENV = "RIGMIND_NO_BPY_LOG"


class BlenderRefused(ImportError):
    """Blender was imported where the fast subset promises it never is."""


class RefuseBlender(importlib.abc.MetaPathFinder):
    def __init__(self, who=lambda: " ".join(sys.argv)[:300]):
        self.who = who

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] not in BLENDER_MODULES:
            return None
        where = self.who()
        log = os.environ.get(LOG_ENV)
        if log:
            with open(log, "a", encoding="utf-8") as f:
                f.write(f"{name}\t{where}\n")
        raise BlenderRefused(f"`import {name}` in the fast subset (pure tests only), from {where}: "
                             f"mark the test `bpy` (tests/README.md)")


def install(who=None) -> RefuseBlender:
    finder = RefuseBlender(who) if who else RefuseBlender()
    sys.meta_path.insert(0, finder)
    return finder


if os.environ.get(LOG_ENV):
    install()
