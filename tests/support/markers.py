"""Which tests need Blender (``bpy``) or the real data (``data``), read from
the test modules' source, so that conftest marks them without a decorator
on each (tests/README.md lists the markers).

A test is ``bpy`` when it takes the ``bpy_clean``, ``registered`` or
``blender_in_subprocess`` fixture (directly or through another fixture),
or when its module, the test function, or a helper, fixture or constant of
its module that it uses:

- imports bpy or Blender's other modules, the Blender side of RigMind
  (``rigmind.operators``, ``rigmind.blender_addon``), the test rigs
  (``support.rig_factory``) or the Blender 5.0 / 5.2 environments
  (``support.blender_envs``);
- calls ``pytest.importorskip("bpy")`` or conftest's ``call_as_panel``;
- holds a script that imports bpy (run in a Blender subprocess).

A test is ``data`` when it takes the ``data_dir`` fixture or uses, the same
way, conftest's ``data_file`` or ``DATA``. Imports at a module's top level
count for all of its tests. What the source cannot show (a ``rigmind``
command in a subprocess that loads Blender) is marked by hand; the fast
subset's guard finds what was missed.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

BLENDER_MODULES = {"bpy", "_bpy", "mathutils", "bpy_extras", "bmesh", "addon_utils"}
BLENDER_PACKAGES = ("rigmind.operators", "rigmind.blender_addon", "support.rig_factory", "support.blender_envs")
BLENDER_NAMES = {"call_as_panel"}
BLENDER_FIXTURES = {"bpy_clean", "registered", "blender_in_subprocess"}
DATA_NAMES = {"data_file", "DATA"}
DATA_FIXTURES = {"data_dir"}
_SCRIPT_IMPORTS_BPY = re.compile(r"^\s*(import\s+[\w., ]*\b(bpy|addon_utils)\b|from\s+bpy\b)", re.M)


def _is_blender(module: str) -> bool:
    return module.split(".")[0] in BLENDER_MODULES or any(
        module == p or module.startswith(p + ".") for p in BLENDER_PACKAGES)


def _importorskip_bpy(node) -> bool:
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
    return (name == "importorskip" and node.args and isinstance(node.args[0], ast.Constant)
            and _is_blender(str(node.args[0].value)))


def _scan(node, local: set) -> tuple[set, set, set]:
    """(flags, names of the module's own definitions used, flags that hold
    for the whole module when ``node`` runs at import)."""
    flags, refs, at_import = set(), set(), set()
    for n in ast.walk(node):
        if isinstance(n, ast.Import):
            if any(_is_blender(a.name) for a in n.names):
                flags.add("bpy")
        elif isinstance(n, ast.ImportFrom):
            if n.level == 0 and (_is_blender(n.module or "")
                                 or any(_is_blender(f"{n.module}.{a.name}") for a in n.names)):
                flags.add("bpy")
        elif isinstance(n, ast.Call) and _importorskip_bpy(n):
            flags.add("bpy")
            at_import.add("bpy")
        elif isinstance(n, ast.Name):
            if n.id in DATA_NAMES:
                flags.add("data")
            if n.id in BLENDER_NAMES:
                flags.add("bpy")
            if n.id in local:
                refs.add(n.id)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and _SCRIPT_IMPORTS_BPY.search(n.value):
            flags.add("bpy")
    return flags, refs, at_import


@lru_cache(maxsize=None)
def analyse(path: str) -> tuple[frozenset, dict]:
    """The flags of the whole module and, per top-level function, class or
    constant, its own flags closed over what it uses in the module."""
    tree = ast.parse(Path(path).read_text(encoding="utf-8"), filename=path)
    defs = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defs[stmt.name] = stmt
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        defs[n.id] = stmt
    local = set(defs)
    module, own, uses = set(), {}, {}
    for stmt in tree.body:
        flags, refs, at_import = _scan(stmt, local)
        if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.If, ast.Try)):
            module |= flags
        module |= at_import
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own[stmt.name], uses[stmt.name] = flags, refs
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            for name in (k for k, v in defs.items() if v is stmt):
                own[name], uses[name] = flags, refs
    closed = {}
    for name in own:
        seen, todo, flags = {name}, [name], set()
        while todo:
            k = todo.pop()
            flags |= own.get(k, set())
            for r in uses.get(k, ()):
                if r not in seen:
                    seen.add(r)
                    todo.append(r)
        closed[name] = frozenset(flags)
    return frozenset(module), closed


def needs(item) -> set:
    """``{"bpy", "data"}``, or a part of it, for a collected test item."""
    flags = set()
    fixtures = set(getattr(item, "fixturenames", ()))
    if fixtures & BLENDER_FIXTURES:
        flags.add("bpy")
    if fixtures & DATA_FIXTURES:
        flags.add("data")
    path = str(item.path)
    if path.endswith(".py"):
        module, closed = analyse(path)
        flags |= module
        names = {getattr(item, "originalname", item.name)} | fixtures
        if getattr(item, "cls", None) is not None:
            names.add(item.cls.__name__)
        for n in names:
            flags |= closed.get(n, frozenset())
    return flags


def module_needs_blender(path) -> bool:
    """The whole module needs Blender to be imported at all."""
    return "bpy" in analyse(str(path))[0]
