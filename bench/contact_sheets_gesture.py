"""Contact sheets of Generate Gesture takes (issue #13): full body at a fixed
interval, and face close-ups where the rig has a face (Ready Player Me), one
PNG per rig, rows = time. Cycles on the CPU (no GL needed).

    .venv/bin/python bench/contact_sheets_gesture.py --out /tmp/sheets [--seconds 8] [--every 15] [--side]
"""

import argparse
import os
import tempfile
from pathlib import Path

os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="rigmind-sheets-"))

import bpy  # noqa: E402
import numpy as np  # noqa: E402
import soundfile as sf  # noqa: E402

from rigmind.evaluation.gesture_viewer import load_rig  # noqa: E402

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


def _body_camera(arm, side=False):
    """A camera framing the bone heads from the front (-Y), slightly from the
    right, or (``side``) from the character's right (-X), where how far the
    hands work in front of the chest shows. (Bone tails are not used: glTF
    imports such as the X Bot carry tails metres long, which pull
    render.py's automatic framing away.)"""
    from mathutils import Vector

    mw = np.array(arm.matrix_world)
    heads = np.array([mw[:3, :3] @ np.array(pb.head) + mw[:3, 3] for pb in arm.pose.bones])
    lo, hi = heads.min(axis=0), heads.max(axis=0)
    centre = Vector(((lo + hi) / 2).tolist())
    height = float(hi[2] - lo[2]) + 0.25
    name = "Side Camera" if side else "Body Camera"
    cam = bpy.data.objects.get(name)
    if cam is None:
        cam = bpy.data.objects.new(name, bpy.data.cameras.new(name))
        cam.data.lens = 50
        bpy.context.scene.collection.objects.link(cam)
    fov = 2 * np.arctan(cam.data.sensor_width / (2 * cam.data.lens))  # along the longer (vertical) side
    dist = 1.15 * height / (2 * np.tan(fov / 2))
    cam.location = centre + Vector((-dist, 0.0, 0.1 * height) if side else (0.3 * dist, -dist, 0.1 * height))
    cam.rotation_euler = (centre - cam.location).to_track_quat("-Z", "Y").to_euler()
    return cam


def _face_camera(arm):
    """A camera 0.75 m in front of the eyes (or the head bone), looking at them."""
    from mathutils import Vector

    eyes = [b for b in ("LeftEye", "RightEye") if b in arm.pose.bones]
    if eyes:  # aim at the eyes: the gaze is what the close-up is for
        pos = sum((arm.matrix_world @ arm.pose.bones[b].head for b in eyes), Vector()) / len(eyes) - Vector((0, 0, 0.08))
    else:
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
    ap.add_argument("--side", action="store_true", help="also a row from the side under each front row")
    args = ap.parse_args()
    from rigmind.backend.requests.gesture import GestureRequest
    from rigmind.operators import gesture_scene
    from rigmind.operators.render import render

    args.out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp())
    x, sr = sf.read(args.data / "speech_multilingual" / args.lang, dtype="float32")
    wav = tmp / args.lang
    sf.write(wav, x[: int(args.seconds * sr)], sr)
    for rig in args.rigs.split(","):
        arm, face = load_rig(rig, args.data)
        res = gesture_scene.generate_gesture_on_rig(arm, GestureRequest(audio_path=wav, seed=0), face)
        scene = bpy.context.scene
        frames = list(range(1, res.frames + 1, args.every))
        body, sides, faces = [], [], []
        for f in frames:
            scene.frame_set(f)
            scene.camera = _body_camera(arm)
            body.append(_png(render(tmp / f"b{f}.png", resolution=(200, 300), samples=4, targets=[arm])))
            if args.side:
                scene.camera = _body_camera(arm, side=True)
                sides.append(_png(render(tmp / f"s{f}.png", resolution=(200, 300), samples=4, targets=[arm])))
            if face is not None:
                scene.camera = _face_camera(arm)
                faces.append(_png(render(tmp / f"f{f}.png", resolution=(200, 200), samples=4, targets=[arm])))
        per_row = 8
        rows = []
        for i in range(0, len(body), per_row):
            chunk = body[i:i + per_row] + [np.zeros_like(body[0])] * (per_row - len(body[i:i + per_row]))
            rows.append(np.concatenate(chunk, axis=1))
            if sides:
                sc = sides[i:i + per_row] + [np.zeros_like(sides[0])] * (per_row - len(sides[i:i + per_row]))
                rows.append(np.concatenate(sc, axis=1))
            if faces:
                fc = faces[i:i + per_row] + [np.zeros_like(faces[0])] * (per_row - len(faces[i:i + per_row]))
                rows.append(np.concatenate(fc, axis=1))
        # Blender images are stored bottom row first: the first row goes on top.
        _save(np.concatenate(rows[::-1], axis=0), args.out / f"gesture_{rig}_{Path(args.lang).stem}.png")
        print("wrote", args.out / f"gesture_{rig}_{Path(args.lang).stem}.png", f"frames {frames}", flush=True)


if __name__ == "__main__":
    main()
