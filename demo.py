"""The end-to-end demo on the procedural mannequin; needs no external asset.

What it runs grows with the product. Today: build the mannequin (armature,
skinned body, head with the 52 ARKit shape keys), pose its face through the
shape-key writer, export it with Blender's own FBX/glTF/BVH exporters and
render a still with Cycles on the CPU. Locomotion, gesture and face from
speech join as they land (see README, "Status").
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np


def _step(label: str):
    print(f"[demo] {label} ...", flush=True)
    return time.perf_counter()


def run(out_dir: Path) -> list:
    import bpy

    from .operators import export, mannequin, render, scene_io
    from .presets import arkit52_names

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []

    t = _step("building the procedural mannequin")
    bpy.ops.wm.read_factory_settings(use_empty=True)
    parts = mannequin.build_mannequin()
    arm, head = parts["armature"], parts["head"]
    print(f"[demo]   {len(arm.data.bones)} bones, {len(head.data.shape_keys.key_blocks) - 1} ARKit shape keys "
          f"({time.perf_counter() - t:.2f} s)")

    t = _step("keying an expression test on the face (every ARKit shape in turn)")
    names = arkit52_names()
    fps = 30.0
    frames_per = 6
    weights = np.zeros((len(names) * frames_per + 1, len(names)))
    ramp = np.sin(np.linspace(0.0, np.pi, frames_per + 1))[:-1]
    for k in range(len(names)):
        weights[k * frames_per:(k + 1) * frames_per, k] = ramp
    bpy.context.scene.render.fps = int(fps)
    action, wrote, skipped = scene_io.write_shape_keys(head, names, weights, fps, "RigMind Face · ARKit test")
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, len(weights)
    print(f"[demo]   {len(wrote)} curves x {len(weights)} frames ({time.perf_counter() - t:.2f} s)")

    blend = out_dir / "mannequin.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    written.append(("mannequin scene (.blend)", blend))

    for suffix, label in ((".glb", "glTF binary"), (".fbx", "FBX"), (".bvh", "BVH skeleton")):
        t = _step(f"exporting {label}")
        path = export.export_character(arm, out_dir / f"mannequin{suffix}", frame_range=(1, len(weights)))
        written.append((f"mannequin ({label})", path))

    t = _step("rendering a still with Cycles (CPU)")
    bpy.context.scene.frame_set(1 + names.index("jawOpen") * frames_per + frames_per // 2)
    png = render.render(out_dir / "mannequin.png", engine="CYCLES", resolution=(480, 640), samples=8)
    written.append(("render (Cycles, PNG)", png))
    print(f"[demo]   rendered in {time.perf_counter() - t:.1f} s")
    return written
