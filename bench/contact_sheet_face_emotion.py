"""Contact sheet of the face emotions (#29) on the Ready Player Me avatar:
rows neutral, happy, sad, angry (and more with --emotions); columns three
moments of one take — the widest vowel, a p/b/m seal, a pause — so one can
see that the mouth still speaks and seals under each expression.

    PYTHONPATH=<folder holding rigmind> .venv/bin/python bench/contact_sheet_face_emotion.py \
        [--data ../shared/data] [--out bench/img/face_emotion_sheet.png]

Audio: the first 12 s of BEAT2 2_scott_0_2_2.wav (a tuning take), the
learned model; the shape keys are set to the generated weights at each
moment (head, teeth and eyes alike) and rendered with Cycles (24 samples, denoised), 256×256 a cell.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="rigmind-sheet-"))

import bpy  # noqa: E402
import numpy as np  # noqa: E402
from mathutils import Vector  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from take_pictures import write_png  # noqa: E402

CELL = 256


def pick_moments(anim, speech) -> list:
    """``[(label, frame)]``: the widest jaw, the firmest seal, a pause
    without a blink (frames of ``anim``)."""
    jaw, close = anim.curve("jawOpen"), anim.curve("mouthClose")
    blink = anim.curve("eyeBlinkLeft")
    calm = blink < 0.05
    wide = int(np.argmax(np.where(calm, jaw, -1)))
    seal = int(np.argmax(np.where(calm & (jaw < 0.05), close, -1)))
    pause_frames = np.flatnonzero(~speech & calm)
    pause = int(pause_frames[len(pause_frames) // 2]) if len(pause_frames) else 0
    return [("vowel", wide), ("p/b/m seal", seal), ("pause", pause)]


def set_face(meshes, anim, frame) -> None:
    from rigmind.backend.face.arkit_names import resolve_arkit_names

    for ob in meshes:
        kb = ob.data.shape_keys.key_blocks
        for arkit, key in resolve_arkit_names([k.name for k in kb]).items():
            kb[key].value = float(anim.curve(arkit)[frame])


def setup_scene(head):
    scene = bpy.context.scene
    # Cycles on the CPU: EEVEE on this machine's software OpenGL took ~3 min a cell.
    scene.render.engine = "CYCLES"
    scene.cycles.samples = 24
    scene.cycles.use_denoising = True
    scene.render.resolution_x = scene.render.resolution_y = CELL
    scene.render.film_transparent = False
    scene.world = scene.world or bpy.data.worlds.new("World")
    scene.world.color = (0.25, 0.25, 0.27)
    corners = [head.matrix_world @ Vector(c) for c in head.bound_box]
    lo = Vector(np.min(np.array(corners), axis=0))
    hi = Vector(np.max(np.array(corners), axis=0))
    centre = (lo + hi) / 2
    face = centre + Vector((0.0, 0.0, 0.0))
    cam_data = bpy.data.cameras.new("SheetCam")
    cam_data.lens = 85
    cam = bpy.data.objects.new("SheetCam", cam_data)
    scene.collection.objects.link(cam)
    # glTF characters face -Y in Blender (glTF +Z forward).
    cam.location = face + Vector((0.0, -0.72, 0.0))
    cam.rotation_euler = (Vector((0, 0, 0)) - (cam.location - face)).to_track_quat("-Z", "Y").to_euler()
    scene.camera = cam
    for loc, energy in (((0.6, -1.0, 0.6), 60.0), ((-0.8, -0.8, 0.2), 25.0)):
        light = bpy.data.objects.new("SheetLight", bpy.data.lights.new("SheetLight", "AREA"))
        light.data.energy, light.data.size = energy, 0.8
        light.location = face + Vector(loc)
        light.rotation_euler = (face - light.location).to_track_quat("-Z", "Y").to_euler()
        scene.collection.objects.link(light)


def render_cell(path) -> np.ndarray:
    bpy.context.scene.render.filepath = str(path)
    bpy.ops.render.render(write_still=True)
    img = bpy.data.images.load(str(path))
    px = np.array(img.pixels[:], np.float32).reshape(img.size[1], img.size[0], 4)[::-1, :, :3]
    bpy.data.images.remove(img)
    return (np.clip(px, 0, 1) * 255).astype(np.uint8)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "img" / "face_emotion_sheet.png")
    ap.add_argument("--emotions", default="neutral,happy,sad,angry")
    args = ap.parse_args()
    from rigmind.backend.audio import load_audio
    from rigmind.backend.audio.features import speech_mask
    from rigmind.backend.audio.loading import clip_from_array
    from rigmind.backend.emotion.timeline import parse_emotions
    from rigmind.backend.face.generate import generate_face

    src = load_audio(args.data / "beat2_speech_gesture_sample" / "2_scott_0_2_2.wav")
    clip = clip_from_array(src.samples[: 12 * src.sample_rate], src.sample_rate)
    names = args.emotions.split(",")
    anims = {e: generate_face(clip, fps=30.0, emotion=None if e == "neutral" else parse_emotions([f"{e}:1"]))
             for e in names}
    moments = pick_moments(anims["neutral"], speech_mask(clip.samples, 30.0, anims["neutral"].num_frames))
    print("moments (frame at 30 fps):", moments)

    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_scene.gltf(filepath=str(args.data / "character_rpm_arkit" / "brunette-t.glb"))
    meshes = [o for o in bpy.data.objects if o.type == "MESH" and o.data.shape_keys is not None]
    head = bpy.data.objects["Wolf3D_Head"]
    setup_scene(head)
    tmp = Path(tempfile.mkdtemp(prefix="rigmind-sheet-"))
    rows = []
    for e in names:
        row = []
        for _label, frame in moments:
            set_face(meshes, anims[e], frame)
            row.append(render_cell(tmp / f"{e}_{frame}.png"))
        rows.append(row)
        print(f"  {e}: rendered")
    sheet = np.concatenate([np.concatenate(r, axis=1) for r in rows], axis=0)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_png(args.out, sheet)
    # The pause, brows to chin, twice the size, emotions side by side: the
    # expression without speech on it.
    crop = [np.repeat(np.repeat(r[2][40:200, 50:206], 2, 0), 2, 1) for r in rows]
    zoom = args.out.with_name(args.out.stem + "_pause.png")
    write_png(zoom, np.concatenate(crop, axis=1))
    print(f"rows {names}; columns {[m[0] for m in moments]}; wrote {args.out} and {zoom}")


if __name__ == "__main__":
    main()
