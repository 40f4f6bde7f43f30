"""How much of the image the character fills in `rigmind render`'s automatic
framing (#15 item 7): the larger of the width and height fractions its
evaluated meshes take in a 480x640 image, on the mannequin and X Bot.

    .venv/bin/python bench/bench_render_framing.py [--old OLD_RENDER_PY]

``--old`` measures a previous ``operators/render.py`` (its
``ensure_camera_and_lights``) in the same run, for a before/after table.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile

os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="rigmind-bench-"))

import bpy  # noqa: E402
import numpy as np  # noqa: E402

from rigmind.backend import paths  # noqa: E402
from rigmind.operators import mannequin, render_stage, rig_files  # noqa: E402


def fill() -> float:
    from bpy_extras.object_utils import world_to_camera_view
    from mathutils import Vector

    sc = bpy.context.scene
    dg = bpy.context.evaluated_depsgraph_get()
    pts = []
    for ob in sc.objects:
        if ob.type == "MESH" and ob.visible_get() and not ob.get(render_stage.STAGE_TAG):
            ev = ob.evaluated_get(dg)
            for c in ev.bound_box:
                v = world_to_camera_view(sc, sc.camera.evaluated_get(dg), ev.matrix_world @ Vector(c))
                pts.append((v.x, v.y))
    uv = np.array(pts)
    return float(max(np.ptp(uv[:, 0]), np.ptp(uv[:, 1])))


def load(name: str) -> None:
    if name == "X Bot":
        rig_files.load_rig_file(paths.data_dir() / "characters" / "Xbot.glb")
    else:
        bpy.ops.wm.read_factory_settings(use_empty=True)
        mannequin.build_mannequin()
    sc = bpy.context.scene
    sc.render.resolution_x, sc.render.resolution_y = 480, 640


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", help="a previous operators/render.py to measure as well")
    args = ap.parse_args(argv)
    stagers = {"render_stage (now)": lambda t: render_stage.set_stage(t, None, (480, 640))}
    if args.old:
        spec = importlib.util.spec_from_file_location("rigmind.operators._render_old", args.old)
        old = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(old)
        stagers = {"before (bone heads and tails)": lambda t: old.ensure_camera_and_lights(
            t, frames=[bpy.context.scene.frame_current]), **stagers}
    print("| character | " + " | ".join(stagers) + " |")
    print("|---|" + "---:|" * len(stagers))
    for name in ("mannequin", "X Bot"):
        row = []
        for stage in stagers.values():
            load(name)
            sc = bpy.context.scene
            stage([o for o in sc.objects if o.type in ("ARMATURE", "MESH")
                   and (o.type == "ARMATURE" or o.visible_get())])
            row.append(f"{fill():.2f}")
        print(f"| {name} | " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
