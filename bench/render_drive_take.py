"""Look at a Drive take: the 10 s scripted drive (bench_drive.TEN_SECONDS)
baked onto a rig, as a contact sheet (Cycles, 8 frames from a fixed camera)
and a top-down plot (hips path in grey, planted foot bones in red/blue,
1 px = 2 cm), both PNG.

    .venv/bin/python bench/render_drive_take.py [--rig xbot|mannequin] [--out /tmp/drive_take]
"""

import argparse
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="rigmind-bench-"))

import bpy  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_drive import TEN_SECONDS, drive, foot_bones, load_rig  # noqa: E402
from rigmind.operators import drive_scene  # noqa: E402
from rigmind.backend.locomotion import controllers
from rigmind.operators import retarget_scene  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def save_rgb(path: Path, rgb: np.ndarray) -> None:
    """``rgb [H, W, 3]`` in 0..1 (row 0 at the top) to a PNG through Blender's images."""
    h, w, _ = rgb.shape
    img = bpy.data.images.new(path.stem, w, h, alpha=False)
    px = np.ones((h, w, 4), dtype=np.float32)
    px[..., :3] = rgb[::-1]
    img.pixels.foreach_set(px.ravel())
    img.filepath_raw = str(path)
    img.file_format = "PNG"
    img.save()
    bpy.data.images.remove(img)


def read_rgb(path: Path) -> np.ndarray:
    img = bpy.data.images.load(str(path))
    w, h = img.size
    px = np.empty(w * h * 4, dtype=np.float32)
    img.pixels.foreach_get(px)
    bpy.data.images.remove(img)
    return px.reshape(h, w, 4)[::-1, :, :3]


def top_down(arm, action, fps, path: Path):
    a, b = (int(round(v)) for v in action.frame_range)
    tmap = retarget_scene.target_mapping(arm)
    bones = dict(foot_bones(arm), hips=tmap.bones["hips"])
    pos = retarget_scene.sample_positions_world(arm, bones, range(a, b + 1))
    allxy = np.concatenate([p[:, :2] for p in pos.values()])
    lo = allxy.min(0) - 0.5
    scale = 50.0  # px per metre
    w, h = (np.ceil((allxy.max(0) + 0.5 - lo) * scale).astype(int))
    img = np.ones((h, w, 3))

    def dot(xy, color, r=1):
        x, y = ((xy - lo) * scale).astype(int)
        img[max(h - 1 - y - r, 0):h - y + r, max(x - r, 0):x + r + 1] = color

    for xy in pos["hips"][:, :2]:
        dot(xy, (0.6, 0.6, 0.6))
    for c, color in (("foot_l", (0.9, 0.1, 0.1)), ("foot_r", (0.1, 0.2, 0.9)),
                     ("toes_l", (1.0, 0.6, 0.6)), ("toes_r", (0.6, 0.7, 1.0))):
        z = pos[c][:, 2]
        planted = z < np.percentile(z, 1) + 0.02
        for xy in pos[c][planted, :2]:
            dot(xy, color, 0)
    for k in range(0, b - a + 1, int(fps)):  # a black tick every second
        dot(pos["hips"][k, :2], (0.0, 0.0, 0.0), 2)
    save_rgb(path, img)


def contact_sheet(arm, action, path: Path, n: int = 8):
    scene = bpy.context.scene
    a, b = (int(round(v)) for v in action.frame_range)
    tmap = retarget_scene.target_mapping(arm)
    hips = retarget_scene.sample_positions_world(arm, {"hips": tmap.bones["hips"]}, range(a, b + 1))["hips"]
    cam_data = bpy.data.cameras.new("sheet")
    cam_data.type = "ORTHO"
    cam_data.ortho_scale = 2.6
    cam = bpy.data.objects.new("sheet", cam_data)
    scene.collection.objects.link(cam)
    from mathutils import Vector

    scene.camera = cam
    bpy.ops.mesh.primitive_plane_add(size=200.0)  # the floor, to see the feet on it
    sun = bpy.data.objects.new("sun", bpy.data.lights.new("sun", "SUN"))
    sun.rotation_euler = (0.6, 0.2, 0.8)
    scene.collection.objects.link(sun)
    scene.render.engine = "CYCLES"
    scene.cycles.samples = 4
    scene.render.resolution_x, scene.render.resolution_y = 320, 240
    tiles = []
    for f in np.linspace(a, b, n).round().astype(int):
        scene.frame_set(int(f))
        h = hips[int(f) - a]
        cam.location = (h[0] + 4.0, h[1] - 4.0, 1.6)  # follows the character, from the front right
        cam.rotation_euler = Vector(np.array([h[0], h[1], 0.8]) - np.array(cam.location)).to_track_quat("-Z", "Y").to_euler()
        out = path.with_name(f"{path.stem}_{f:04d}.png")
        scene.render.filepath = str(out)
        bpy.ops.render.render(write_still=True)
        tiles.append(read_rgb(out))
    rows = [np.concatenate(tiles[i:i + 4], axis=1) for i in range(0, n, 4)]
    save_rgb(path, np.concatenate(rows, axis=0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    ap.add_argument("--rig", default="xbot", choices=("xbot", "mannequin"))
    ap.add_argument("--out", default="/tmp/drive_take")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    arm = load_rig(args.rig, Path(args.data))
    s = drive_scene.DriveSession(arm, controller=controllers.load_controller("neural"))
    drive(s, TEN_SECONDS, 10.0, 30.0)
    action, _ = s.finish()
    top_down(arm, action, 30, out / f"{args.rig}_top.png")
    contact_sheet(arm, action, out / f"{args.rig}_sheet.png")
    print(f"wrote {out / (args.rig + '_top.png')} and {out / (args.rig + '_sheet.png')}")


if __name__ == "__main__":
    main()
