"""Is FILE a complete, readable animated take? Prints one JSON line
``{"ok": bool, "frames": N, "error": str}``: the file is loaded with the
loaders RigMind itself uses (BVH: RigMind's strict reader; .blend: opened;
.fbx/.glb: Blender's importers) and the frame count of the armature's action
is reported. Used by bench_ctrl_c.py and tests/backend/test_atomic_write.py.

    .venv/bin/python bench/check_take.py FILE
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def check(path: Path) -> dict:
    try:
        if path.suffix.lower() == ".bvh":
            from rigmind.backend.bvh import loads_bvh

            motion = loads_bvh(path.read_text())
            return {"ok": True, "frames": int(motion.num_frames), "error": ""}
        from rigmind.operators import rig_files

        objs = rig_files.load_rig_file(path)
        arms = [o for o in objs if o.type == "ARMATURE" and o.animation_data and o.animation_data.action]
        if not arms:
            return {"ok": False, "frames": 0, "error": "no animated armature"}
        a, b = arms[0].animation_data.action.frame_range
        return {"ok": True, "frames": int(round(b - a)) + 1, "error": ""}
    except Exception as e:  # the point is to report any failure to read
        return {"ok": False, "frames": 0, "error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}


if __name__ == "__main__":
    print(json.dumps(check(Path(sys.argv[1]))))
