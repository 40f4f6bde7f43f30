"""The shipped tree's layout: every module outside the Blender side imports
without bpy, and the Blender side (``operators/``, ``blender_addon/``) fails
only for want of bpy, nothing else. Runs in a fresh interpreter where bpy and
its companions cannot be imported (a meta-path finder refuses them)."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import REPO

BLENDER_SIDE = ("operators", "blender_addon")
NOT_SHIPPED = ("tests", "bench", "tools")

CODE = r"""
import importlib, importlib.abc, json, pathlib, sys

class NoBlender(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("bpy", "mathutils", "bpy_extras", "bmesh", "addon_utils", "_bpy"):
            raise ImportError("NO-BPY " + name)

sys.meta_path.insert(0, NoBlender())
root = pathlib.Path({root!r})
out = {{}}
for p in sorted(root.rglob("*.py")):
    rel = p.relative_to(root)
    if rel.parts[0] in {skip!r} or rel.parts[0].startswith(".") or rel.parts[0] in ("build", "dist") \
            or (len(rel.parts) == 1 and rel.name == "install.py"):
        continue
    name = ".".join(("rigmind",) + rel.with_suffix("").parts).removesuffix(".__init__")
    try:
        importlib.import_module(name)
        out[name] = None
    except BaseException as e:
        out[name] = type(e).__name__ + ": " + str(e)[:200]
print("RESULT:" + json.dumps(out))
"""


def test_every_module_imports_without_bpy_but_the_blender_side():
    proc = subprocess.run([sys.executable, "-I", "-c", CODE.format(root=str(REPO), skip=NOT_SHIPPED)],
                          capture_output=True, text=True, timeout=600, cwd=REPO.parent)
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT:")]
    assert proc.returncode == 0 and line, proc.stderr[-3000:]
    result = json.loads(line[-1][len("RESULT:"):])
    assert len(result) > 100
    def side(m):
        return m.split(".")[1] if "." in m else ""

    pure = {m: e for m, e in result.items() if side(m) not in BLENDER_SIDE and e is not None}
    assert pure == {}, "modules outside operators/ and blender_addon/ that need bpy or fail:\n" + "\n".join(
        f"{m}: {e}" for m, e in pure.items())
    blender = {m: e for m, e in result.items() if side(m) in BLENDER_SIDE and e is not None}
    other_errors = {m: e for m, e in blender.items() if "NO-BPY" not in e}
    assert other_errors == {}, other_errors
    # (Which Blender-side modules need bpy at import: ARCHITECTURE.md lists them.)
