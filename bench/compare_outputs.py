"""Show two runs' outputs identical where they should be: the demo's files
and the evaluations of ``bench/eval_all.sh`` (for a refactor's before/after).

    .venv/bin/python bench/compare_outputs.py BEFORE_DEMO AFTER_DEMO
    .venv/bin/python bench/eval_diff.py BEFORE_EVAL AFTER_EVAL      # the evaluations

Each demo file is compared the way its format allows:
- byte for byte (BVH, GLB, the EMAGE ``.npz``, the speech WAV);
- PNG: the decoded pixels (the text chunks carry the date and render time);
- FBX: the node tree from Blender's own FBX parser, object ids (Blender's
  exporter derives them from Python's per-process string hash), the creation
  time stamp and the output folder's name left out;
- ``.blend``: every action's f-curve keys, every object's world matrix, the
  scene's frame range and fps and its sequencer strips, read back in Blender;
- MP4: the bytes outside the container's time stamps (reported as the count of
  differing bytes).
"""

from __future__ import annotations

import hashlib
import struct
import subprocess
import sys
import zlib
from pathlib import Path

BLEND_DIGEST = r"""
import sys, hashlib, numpy as np, bpy
from bpy_extras.anim_utils import action_get_channelbag_for_slot
bpy.ops.wm.open_mainfile(filepath=sys.argv[-1])
h = hashlib.sha256()
for a in sorted(bpy.data.actions, key=lambda a: a.name):
    h.update(a.name.encode())
    for slot in a.slots:
        cb = action_get_channelbag_for_slot(a, slot)
        for fc in (cb.fcurves if cb else []):
            co = np.empty(2 * len(fc.keyframe_points)); fc.keyframe_points.foreach_get("co", co)
            h.update(fc.data_path.encode()); h.update(co.tobytes())
for o in sorted(bpy.data.objects, key=lambda o: o.name):
    h.update(o.name.encode()); h.update(np.array(o.matrix_world).tobytes())
s = bpy.context.scene
h.update(repr((s.frame_start, s.frame_end, s.render.fps)).encode())
se = s.sequence_editor
h.update(repr(sorted(st.name for st in se.strips_all) if se else []).encode())
print("DIGEST", h.hexdigest())
"""

FBX_TREE = r"""
import sys, hashlib, bpy
sys.path.insert(0, bpy.utils.system_resource("SCRIPTS") + "/addons_core")
from io_scene_fbx import parse_fbx
folder = sys.argv[-2].encode()
h = hashlib.sha256()
def walk(e, path):
    path = path + "/" + e.id.decode(errors="replace")
    if "CreationTimeStamp" in path:
        return
    h.update(path.encode())
    for p, t in zip(e.props, e.props_type):
        t = chr(t) if isinstance(t, int) else t.decode()
        if t == "L":
            continue
        v = p if isinstance(p, bytes) else p.tobytes() if hasattr(p, "tobytes") else repr(p).encode()
        h.update(v.replace(folder, b"<out>"))
    for c in e.elems:
        walk(c, path)
root, _ = parse_fbx.parse(sys.argv[-1])
walk(root, "")
print("DIGEST", h.hexdigest())
"""


def _in_blender(code: str, *args) -> str:
    # Run from the file's folder, never from a folder whose *.py could shadow Blender's add-ons.
    proc = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True,
                          cwd=Path(args[-1]).parent)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("DIGEST ")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(proc.stderr[-2000:])
    return lines[-1].split()[1]


def _png_pixels(path: Path) -> str:
    data, i, idat = path.read_bytes(), 8, b""
    while i < len(data):
        n = struct.unpack(">I", data[i:i + 4])[0]
        if data[i + 4:i + 8] == b"IDAT":
            idat += data[i + 8:i + 8 + n]
        i += 12 + n
    return hashlib.sha256(zlib.decompress(idat)).hexdigest()


def digest(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix == ".png":
        return _png_pixels(path)
    if suffix == ".fbx":
        return _in_blender(FBX_TREE, path.parent.name, path)
    if suffix == ".blend":
        return _in_blender(BLEND_DIGEST, path)
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    before, after = Path(argv[0]), Path(argv[1])
    worst = 0
    for a in sorted(before.iterdir()):
        b = after / a.name
        if a.suffix == ".log":
            continue
        if not b.is_file():
            print(f"{a.name}: only before"); worst = 1
            continue
        if a.suffix.lower() == ".mp4":
            x, y = a.read_bytes(), b.read_bytes()
            n = sum(1 for i, j in zip(x, y) if i != j) + abs(len(x) - len(y))
            print(f"{a.name}: {n} bytes differ of {len(x)} (time stamps)" if n else f"{a.name}: identical")
            continue
        same = digest(a) == digest(b)
        worst = max(worst, 0 if same else 1)
        print(f"{a.name}: {'identical' if same else 'DIFFERENT'}")
    return worst


if __name__ == "__main__":
    sys.exit(main())
