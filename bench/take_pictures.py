"""Pictures of a baked walk, for looking at it: a contact sheet and a
top-down plot against the drawn path.

    # bake Walk Along Path on a rig and picture it
    .venv/bin/python bench/take_pictures.py --rig xbot --path "0,0;4,0;4,3" --out bench/img/xbot_L
    # picture a take already baked in a .blend (the armature's action), against a path
    .venv/bin/python bench/take_pictures.py --blend take.blend [--armature NAME] --path "0,0;4,0;4,3" --out /tmp/take

Writes ``OUT_sheet.png``: every ``--every`` seconds one cell per view, the
whole body drawn from Blender's evaluated pose (every bone, head to tail):
top row from the character's right side (the camera turns with the hips,
so a turn reads as a walk seen side on), bottom row from above (facing up
the cell); a grey line is the floor (z = 0), planted feet are red. And
``OUT_top.png``: the scene from above, the drawn path (grey, its corners
as dots, the end as a ring, each ``--pause`` point as an orange ring), the hips' track (blue), the facing every ``--facing-every`` s (0.5)
(dark ticks from the hips) and the footprints (each planted foot's
position, red left / green right).

Images are drawn with NumPy and written as PNG with zlib (no image
library needed); sizes in pixels, world units metres, Blender Z-up.
``--rig`` is one of the rigs of ``rigmind eval locomotion --rigs``
(mannequin, xbot, rpm, rigify); only ``walk_along_path`` is called on the
package, so the script also pictures older checkouts of it.
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
import tempfile
import zlib
from pathlib import Path

os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="rigmind-pictures-"))

import bpy  # noqa: E402
import numpy as np  # noqa: E402
from rigmind.backend.requests.walk import WalkPathRequest  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


# --- drawing -------------------------------------------------------------------------------


def write_png(path, rgb: np.ndarray) -> None:
    """``rgb [H, W, 3]`` uint8 as an 8-bit RGB PNG."""
    h, w, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
    Path(path).write_bytes(png)


class Canvas:
    """An RGB image with a world->pixel map: ``(u, v)`` world metres of the
    view, ``origin`` the world point at the image centre, ``ppm`` pixels a metre."""

    def __init__(self, w, h, origin, ppm, bg=(255, 255, 255)):
        self.img = np.empty((h, w, 3), np.uint8)
        self.img[:] = bg
        self.w, self.h = w, h
        self.origin = np.asarray(origin, float)
        self.ppm = float(ppm)

    def px(self, uv):
        uv = np.asarray(uv, float) - self.origin
        return np.stack([self.w / 2 + uv[..., 0] * self.ppm, self.h / 2 - uv[..., 1] * self.ppm], -1)

    def dots(self, uv, color, r=1.5):
        p = self.px(np.atleast_2d(uv))
        ri = int(np.ceil(r))
        for dx in range(-ri, ri + 1):
            for dy in range(-ri, ri + 1):
                if dx * dx + dy * dy > r * r + 0.5:
                    continue
                x = np.round(p[:, 0] + dx).astype(int)
                y = np.round(p[:, 1] + dy).astype(int)
                ok = (x >= 0) & (x < self.w) & (y >= 0) & (y < self.h)
                self.img[y[ok], x[ok]] = color

    def line(self, a, b, color, width=1.0):
        a, b = np.asarray(a, float), np.asarray(b, float)
        n = max(int(np.linalg.norm(self.px(b) - self.px(a)) * 1.5), 2)
        t = np.linspace(0, 1, n)[:, None]
        self.dots(a + t * (b - a), color, r=max(width / 2, 0.5))

    def polyline(self, pts, color, width=1.0):
        for a, b in zip(pts[:-1], pts[1:]):
            self.line(a, b, color, width)

    def ring(self, c, r_m, color, width=1.5):
        a = np.linspace(0, 2 * np.pi, 64)
        self.polyline(np.asarray(c) + r_m * np.stack([np.cos(a), np.sin(a)], 1), color, width)


# --- reading the take -------------------------------------------------------------------------


def bone_segments(arm, frames) -> tuple:
    """``(heads [F, B, 3], tails [F, B, 3], names)`` in world metres of the
    evaluated pose at scene ``frames``."""
    scene = bpy.context.scene
    n = len(arm.pose.bones)
    h = np.empty((len(frames), n, 3))
    t = np.empty((len(frames), n, 3))
    bh = np.empty(n * 3, np.float32)
    bt = np.empty(n * 3, np.float32)
    saved = scene.frame_current
    for i, f in enumerate(frames):
        scene.frame_set(int(f))
        arm.pose.bones.foreach_get("head", bh)
        arm.pose.bones.foreach_get("tail", bt)
        mw = np.array([list(r) for r in arm.matrix_world])
        h[i] = bh.reshape(-1, 3) @ mw[:3, :3].T + mw[:3, 3]
        t[i] = bt.reshape(-1, 3) @ mw[:3, :3].T + mw[:3, 3]
    scene.frame_set(saved)
    return h, t, [pb.name for pb in arm.pose.bones]


def skeleton_lines(arm, names) -> list:
    """``(parent, child)`` index pairs joining the deforming bones' heads to
    their nearest deforming ancestor's head: the body's stick figure. (Bone
    tails are not used: imported glTF/FBX bones point anywhere.)"""
    deform = {nm for nm in names if arm.data.bones[nm].use_deform} or set(names)
    pos = {nm: i for i, nm in enumerate(names)}
    out = []
    for nm in deform:
        p = arm.data.bones[nm].parent
        while p is not None and p.name not in deform:
            p = p.parent
        if p is not None:
            out.append((pos[p.name], pos[nm]))
    return out


def canonical(arm) -> dict:
    from rigmind.operators import retarget_scene

    return {c: b for c, b in retarget_scene.target_mapping(arm).bones.items() if b}


def planted(z, xy, fps, leg):
    """``[F]`` bool: low (within 3 % of the leg of the joint's 2nd-percentile height) and slow (< 0.4 leg/s)."""
    v = np.r_[0.0, np.linalg.norm(np.diff(xy, axis=0), axis=1) * fps]
    return (z - np.percentile(z, 2) < 0.03 * leg) & (v < 0.4 * leg)


# --- pictures ---------------------------------------------------------------------------------


def contact_sheet(arm, frames, fps, every, out, cell=150):
    heads, tails, names = bone_segments(arm, frames)
    pairs = skeleton_lines(arm, names)
    cmap = canonical(arm)
    ix = {c: names.index(b) for c, b in cmap.items() if b in names}
    step = max(int(round(every * fps)), 1)
    picks = list(range(0, len(frames), step))
    if picks[-1] != len(frames) - 1:
        picks.append(len(frames) - 1)
    height = float(np.max(heads[:, :, 2]) - min(0.0, float(np.min(heads[:, :, 2]))))
    ppm = 0.8 * cell / max(height, 0.5)
    cols = min(len(picks), 12)
    rows_per_view = int(np.ceil(len(picks) / cols))
    sheet = np.full((2 * rows_per_view * cell, cols * cell, 3), 255, np.uint8)
    leg = 0.5 * height
    feet = [c for c in ("foot_l", "foot_r", "toes_l", "toes_r") if c in ix]
    plant = {c: planted(heads[:, ix[c], 2], heads[:, ix[c], :2], fps, leg) for c in feet}
    for k, i in enumerate(picks):
        hips = heads[i, ix["hips"]]
        lat = heads[i, ix["upperleg_l"], :2] - heads[i, ix["upperleg_r"], :2]
        lat /= max(np.linalg.norm(lat), 1e-9)
        fwd = np.array([lat[1], -lat[0]])
        r, c = divmod(k, cols)
        for view in range(2):
            if view == 0:  # side, from the character's right: u = forward, v = up
                def uv(p):
                    return np.stack([(p[..., :2] - hips[:2]) @ fwd, p[..., 2]], -1)  # noqa: B023 - used within the iteration

                cv = Canvas(cell, cell, (0.0, 0.5 * height), ppm)
                cv.line((-2, 0), (2, 0), (170, 170, 170))
            else:  # top, facing up the cell: u = right, v = forward
                def uv(p):
                    d = p[..., :2] - hips[:2]  # noqa: B023 - used within the iteration
                    return np.stack([-(d @ lat), d @ fwd], -1)  # noqa: B023 - used within the iteration

                cv = Canvas(cell, cell, (0.0, 0.0), ppm)
            for pa, ch in pairs:
                cv.line(uv(heads[i, pa]), uv(heads[i, ch]), (40, 40, 40), 1.5)
            for cname in feet:
                if plant[cname][i]:
                    cv.dots(uv(heads[i, ix[cname]]), (220, 30, 30), r=3)
            y0 = (view * rows_per_view + r) * cell
            sheet[y0:y0 + cell, c * cell:(c + 1) * cell] = cv.img
            sheet[y0, c * cell:(c + 1) * cell] = 200
            sheet[y0:y0 + cell, c * cell] = 200
    write_png(out, sheet)
    return out


def top_plot(arm, frames, fps, path_xy, out, size=900, marks=(), facing_every=0.5):
    heads, tails, names = bone_segments(arm, frames)
    ix = {c: names.index(b) for c, b in canonical(arm).items() if b in names}
    hips = heads[:, ix["hips"], :2]
    pts = np.concatenate([hips, path_xy])
    lo, hi = pts.min(0) - 0.6, pts.max(0) + 0.6
    ppm = size / max(hi - lo)
    cv = Canvas(int((hi - lo)[0] * ppm), int((hi - lo)[1] * ppm), 0.5 * (lo + hi), ppm)
    # a 1 m grid
    for x in np.arange(np.floor(lo[0]), hi[0] + 1):
        cv.line((x, lo[1]), (x, hi[1]), (235, 235, 235))
    for y in np.arange(np.floor(lo[1]), hi[1] + 1):
        cv.line((lo[0], y), (hi[0], y), (235, 235, 235))
    cv.polyline(path_xy, (150, 150, 150), 5)
    cv.dots(path_xy, (110, 110, 110), r=5)
    cv.ring(path_xy[-1], 0.1, (110, 110, 110), 2)  # 10 cm: the arrival tolerance
    for m in marks:  # pause points
        cv.ring(m, 0.1, (240, 140, 0), 2)
    height = float(np.max(heads[:, :, 2]))
    leg = 0.5 * height
    for c, col in (("foot_l", (220, 30, 30)), ("foot_r", (30, 160, 30))):
        if c in ix:
            p = planted(heads[:, ix[c], 2], heads[:, ix[c], :2], fps, leg)
            cv.dots(heads[p, ix[c], :2], col, r=2.5)
    cv.polyline(hips, (30, 80, 220), 2)
    step = max(int(round(facing_every * fps)), 1)
    for i in list(range(0, len(frames), step)) + [len(frames) - 1]:
        lat = heads[i, ix["upperleg_l"], :2] - heads[i, ix["upperleg_r"], :2]
        lat /= max(np.linalg.norm(lat), 1e-9)
        fwd = np.array([lat[1], -lat[0]])
        cv.line(hips[i], hips[i] + 0.3 * fwd, (20, 20, 20), 2)
    write_png(out, cv.img)
    return out


# --- main -------------------------------------------------------------------------------------


def at_arc(xy, arc):
    """The point ``arc`` metres along the polyline ``xy [N, 2]``."""
    knots = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(xy, axis=0), axis=1))])
    return np.array([np.interp(arc, knots, xy[:, 0]), np.interp(arc, knots, xy[:, 1])])


def parse_points(text):
    rows = [[float(v) for v in p.split(",")] for p in text.split(";") if p.strip()]
    return np.array([r + [np.nan] * (3 - len(r)) for r in rows])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--rig", help="bake on this rig first: mannequin, xbot, rpm or rigify")
    src.add_argument("--blend", help="a .blend with the baked take (the armature's current action)")
    ap.add_argument("--armature", help="armature object in --blend (default: the largest)")
    ap.add_argument("--path", required=True, help='the drawn path, "x,y[,speed];..." (metres, m/s)')
    ap.add_argument("--speed", type=float, default=None, help="m/s for the bake (default: the package's default)")
    ap.add_argument("--style", default="normal")
    ap.add_argument("--pause", action="append", default=[], metavar="ARC,SECONDS",
                    help="stop this far along the path (m) for this long (s); repeatable")
    ap.add_argument("--action", action="append", default=[], help="jump@ARC / crouch@A-B along the path (issue #28)")
    ap.add_argument("--start", default="standing", help="standing, lying-up or lying-down")
    ap.add_argument("--window", default=None, metavar="FROM:TO", help="seconds of the take the sheet covers (default all)")
    ap.add_argument("--every", type=float, default=0.5, help="seconds between contact-sheet frames")
    ap.add_argument("--facing-every", type=float, default=0.5, help="seconds between the top plot's facing ticks")
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    ap.add_argument("--out", required=True, help="output prefix: OUT_sheet.png and OUT_top.png")
    args = ap.parse_args()
    from rigmind.backend.locomotion.path_follow import parse_pauses

    pts = parse_points(args.path)
    pauses = [p for t in args.pause for p in parse_pauses(t, "--pause")]
    if args.rig:
        from rigmind.backend.locomotion import controllers
        from rigmind.operators import locomotion_scene

        arm = load_rig(args.rig, args.data)
        kw = {} if args.speed is None else {"speed": args.speed}
        if pauses:
            kw["pauses"] = pauses
        if args.action or args.start != "standing":
            from rigmind.backend.locomotion.actions.action_plan import parse_actions

            kw["actions"] = parse_actions(args.action, args.start)
        walk_pts = pts if np.isfinite(pts[:, 2]).any() else pts[:, :2]
        action = locomotion_scene.walk_along_path(arm, WalkPathRequest(points=walk_pts, style=args.style, **kw), controller=controllers.load_controller("neural"))
    else:
        bpy.ops.wm.open_mainfile(filepath=str(Path(args.blend).resolve()))
        arms = [o for o in bpy.data.objects if o.type == "ARMATURE"]
        arm = bpy.data.objects[args.armature] if args.armature else max(arms, key=lambda a: len(a.data.bones))
        action = arm.animation_data.action
    a, b = (int(round(x)) for x in action.frame_range)
    scene = bpy.context.scene
    fps = scene.render.fps / scene.render.fps_base
    frames = list(range(a, b + 1))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    sheet_frames = frames
    if args.window:
        lo, hi = (float(v) for v in args.window.split(":"))
        sheet_frames = [f for f in frames if lo <= (f - a) / fps <= hi]
    s = contact_sheet(arm, sheet_frames, fps, args.every, out.with_name(out.name + "_sheet.png"))
    marks = [at_arc(pts[:, :2], a) for a, _ in pauses]
    t = top_plot(arm, frames, fps, pts[:, :2], out.with_name(out.name + "_top.png"), marks=marks,
                 facing_every=args.facing_every)
    print(f"'{action.name}' on {arm.name}: {len(frames)} frames\nwrote {s}\nwrote {t}")


def load_rig(name, data_dir):
    """The rig in a fresh scene (as ``rigmind eval locomotion --rigs`` loads it)."""
    try:
        from rigmind.evaluation.locomotion_rigs import load_rig as _load

        return _load(name, data_dir)
    except ImportError:  # an older checkout: the mannequin and the glTF characters
        from rigmind.operators import mannequin, rig_files

        bpy.ops.wm.read_factory_settings(use_empty=True)
        if name == "mannequin":
            return mannequin.build_mannequin()["armature"]
        f = Path(data_dir) / ("characters/Xbot.glb" if name == "xbot" else "character_rpm_arkit/brunette-t.glb")
        rig_files.load_rig_file(f)
        return rig_files.find_armature()


if __name__ == "__main__":
    sys.exit(main())
