"""The README's still: a frame of the demo's gesture take (the mannequin,
talking, with the face) rendered with RigMind's own render stage.

    .venv/bin/rigmind demo --out /tmp/demo          # writes /tmp/demo/gesture.blend
    .venv/bin/python bench/render_readme_still.py /tmp/demo/gesture.blend [--frame 150] [--out /tmp/still.png]
    # the README's copy is that PNG saved as JPEG (quality 85): docs/demo_still.jpg
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="rigmind-still-"))

import bpy  # noqa: E402

from rigmind.operators import render  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("blend", help="the demo's gesture.blend")
    ap.add_argument("--frame", type=int, default=150)
    ap.add_argument("--samples", type=int, default=32)
    ap.add_argument("--out", default="demo_still.png")
    args = ap.parse_args(argv)
    bpy.ops.wm.open_mainfile(filepath=args.blend)
    bpy.context.scene.frame_set(args.frame)
    out = render.render(args.out, engine="CYCLES", resolution=(480, 640), samples=args.samples)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
