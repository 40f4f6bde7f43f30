"""backend/ must run without Blender: no module under it may import bpy,
mathutils or bpy_extras, directly, as a submodule or with ``from``."""

from __future__ import annotations

import ast

import pytest
from conftest import REPO

BACKEND = REPO / "backend"
FORBIDDEN = {"bpy", "mathutils", "bpy_extras"}


def forbidden_imports(source: str, filename: str = "<string>") -> list:
    """``(line, module)`` for every import of a forbidden top-level package,
    wherever it sits (function bodies and ``try`` blocks included)."""
    hits = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            # relative imports (level > 0) stay inside the package
            names = [node.module or ""] if node.level == 0 else []
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, (ast.Name, ast.Attribute))
            and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr) in ("__import__", "import_module")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names = [node.args[0].value]
        else:
            continue
        hits += [(node.lineno, n) for n in names if n.split(".")[0] in FORBIDDEN]
    return hits


def test_scanner_catches_every_form():
    src = (
        "import bpy\nimport os, mathutils.geometry\nfrom bpy_extras.io_utils import x\n"
        "from . import bpy\ndef f():\n    from bpy import types\n"
        "importlib.import_module('bpy')\n__import__('mathutils')\nimport bpyx\n"
    )
    assert [m for _, m in forbidden_imports(src)] == [
        "bpy", "mathutils.geometry", "bpy_extras.io_utils", "bpy", "bpy", "mathutils",
    ]


def test_backend_never_imports_blender():
    files = sorted(BACKEND.rglob("*.py"))
    if not files:
        pytest.fail(f"no Python files under {BACKEND}")
    bad = []
    for f in files:
        for line, mod in forbidden_imports(f.read_text(encoding="utf-8"), str(f)):
            bad.append(f"{f.relative_to(BACKEND.parent)}:{line}: imports {mod}")
    assert not bad, "backend/ must not depend on Blender:\n" + "\n".join(bad)
