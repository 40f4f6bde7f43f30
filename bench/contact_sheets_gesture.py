"""Contact sheets of Generate Gesture takes (issue #13): full body at a fixed
interval, and face close-ups where the rig has a face (Ready Player Me), one
PNG per rig, rows = time. Cycles on the CPU (no GL needed).

    .venv/bin/python bench/contact_sheets_gesture.py --out /tmp/sheets [--seconds 8] [--every 15]
"""

import argparse
import os
import tempfile
from pathlib import Path

os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="rigmind-sheets-"))

import bpy  # noqa: E402
import numpy as np  # noqa: E402
import soundfile as sf  # noqa: E402

from rigmind.operators.gesture_viewer_eval import load_rig  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def _png(path):
    img = bpy.data.images.load(str(path))
    w, h = img.size
    px = np.empty(w * h * 4, np.float32)
    img.pixels.foreach_get(px)
    bpy.data.images.remove(img)
    return px.reshape(h, w, 4)


def _save(grid, path):
    h, w, _ = grid.shape
    img = bpy.data.images.new("sheet", w, h, alpha=True)
    img.pixels.foreach_set(grid.astype(np.float32).ravel())
    img.filepath_raw = str(path)
    img.file_format = "PNG"
    img.save()
    bpy.data.images.remove(img)


def _face_camera(arm):
    """A camera 0.7 m in front of the head bone, looking at it."""
    from mathutils import Vector

    head = next(b for b in ("Head", "head", "mixamorig:Head") if b in arm.pose.bones)
    pos = arm.matrix_world @ arm.pose.bones[head].head
    cam = bpy.data.objects.get("Face Camera")
    if cam is None:
        cam = bpy.data.objects.new("Face Camera", bpy.data.cameras.new("Face Camera"))
        cam.data.lens = 85
        bpy.context.scene.collection.objects.link(cam)
    cam.location = pos + Vector((0.0, -0.75, 0.12))
    cam.rotation_euler = (pos + Vector((0, 0, 0.08)) - cam.location).to_track_quat("-Z", "Y").to_euler()
    return cam


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--every", type=int, default=15, help="frames between panels")
    ap.add_argument("--rigs", default="mannequin,xbot,rpm")
    ap.add_argument("--lang", default="silero_de.wav")
    args = ap.parse_args()
    from rigmind.operators import gesture_scene
    from rigmind.operators.render import render

    args.out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp())
    x, sr = sf.read(args.data / "speech_multilingual" / args.lang, dtype="float32")
    wav = tmp / args.lang
    sf.write(wav, x[: int(args.seconds * sr)], sr)
    for rig in args.rigs.split(","):
        arm, face = load_rig(rig, args.data)
        res = gesture_scene.generate_gesture_on_rig(arm, wav, seed=0, face_mesh=face)
        scene = bpy.context.scene
        frames = list(range(1, res.frames + 1, args.every))
        body, faces = [], []
        for f in frames:
            scene.frame_set(f)
            body.append(_png(render(tmp / f"b{f}.png", resolution=(200, 300), samples=4, targets=[arm])))
            if face is not None:
                main_cam = scene.camera
                scene.camera = _face_camera(arm)
                faces.append(_png(render(tmp / f"f{f}.png", resolution=(200, 200), samples=4, targets=[arm])))
                scene.camera = main_cam
        per_row = 8
        rows = []
        for i in range(0, len(body), per_row):
            chunk = body[i:i + per_row] + [np.zeros_like(body[0])] * (per_row - len(body[i:i + per_row]))
            rows.append(np.concatenate(chunk, axis=1))
            if faces:
                fc = faces[i:i + per_row] + [np.zeros_like(faces[0])] * (per_row - len(faces[i:i + per_row]))
                rows.append(np.concatenate(fc, axis=1))
        # Blender images are stored bottom row first: the first row goes on top.
        _save(np.concatenate(rows[::-1], axis=0), args.out / f"gesture_{rig}_{Path(args.lang).stem}.png")
        print("wrote", args.out / f"gesture_{rig}_{Path(args.lang).stem}.png", f"frames {frames}", flush=True)


if __name__ == "__main__":
    main()
