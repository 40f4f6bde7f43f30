"""A side view of one foot through two strides, every frame drawn over the
last (a stroboscope), to see how it leaves and lands: the validation mocap
(a normal walk), Walk Along Path's clean-up without the swing pitch and
with it (``PinConfig.swing_pitch``, issue #12 session 8), on the
controller's skeleton at X Bot's scale (no Blender).

    .venv/bin/python bench/foot_strobe.py --out bench/img/heel_strike_strobe.png

Each panel: the right shank (knee -> ankle) grey, the foot (ankle -> toe)
black, drawn every frame, red while the ankle is planted; the floor (the
toe joint's planted height) as a grey line. Metres along the direction of
travel, Z up; 1 px = 2.5 mm.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from take_pictures import Canvas, write_png  # noqa: E402

from rigmind.backend.locomotion import cleanup  # noqa: E402
from rigmind.backend.locomotion import features  # noqa: E402
from rigmind.evaluation import locomotion_rig_scores as rig_scores  # noqa: E402
from rigmind.backend.locomotion import controllers, path_pin, walk_generation, walk_speeds


def panel(motion, frames, leg, title_color):
    names = list(motion.skeleton.names)
    wp = motion.world_positions()
    k, a, t = (wp[frames, names.index(n)] for n in ("LowerLeg_R", "Foot_R", "Toes_R"))
    hips = wp[:, names.index("Hips"), :2]
    d = hips[frames[-1]] - hips[frames[0]]
    d /= np.linalg.norm(d)
    floor = np.percentile(wp[:, names.index("Toes_R"), 2], 2)

    def uv(p):
        return np.stack([p[:, :2] @ d, p[:, 2] - floor], 1)

    ku, au, tu = uv(k), uv(a), uv(t)
    planted = rig_scores.planted_contacts(wp[:, names.index("Foot_R")], motion.fps, leg)[frames]
    lo, hi = au[:, 0].min() - 0.15, au[:, 0].max() + 0.25
    cv = Canvas(int((hi - lo) * 400), 260, ((lo + hi) / 2, 0.2), 400)
    cv.line((lo, 0.0), (hi, 0.0), (170, 170, 170))
    for i in range(len(frames)):
        cv.line(ku[i], au[i], (200, 200, 200))
    for i in range(len(frames)):
        cv.line(au[i], tu[i], (220, 30, 30) if planted[i] else (20, 20, 20), 1.5)
    cv.img[:6, :60] = title_color
    return cv.img


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--frames", type=int, nargs=2, default=[75, 115], help="frame window of the walk")
    ap.add_argument("--data", default=str(controllers.default_data_dir()))
    args = ap.parse_args(argv)
    ctl = controllers.load_controller("neural")
    leg = controllers.controller_leg_length(ctl)
    frames = np.arange(*args.frames)
    import bench_swing_toe_angle

    mocap = features.load_clip(next(c for c in bench_swing_toe_angle.validation_mocap(args.data) if c.content == "walk"))
    scale = 1.11  # X Bot's legs over the controller's
    default = walk_speeds.resolve_speed(None, "normal", "walk", 1.0)[0]
    _, res = walk_generation.generate_path(ctl, np.array([[0.0, 0.0], [8.0, 0.0]]), style="normal", speed=default, scale=scale)
    cfg = path_pin.path_pin_config("normal")
    takes = [(mocap, (120, 120, 120)),
             (cleanup.pin_feet(res.motion, predicted=res.contacts, feet=res.feet, config=replace(cfg, swing_pitch=None)),
              (40, 40, 200)),
             (cleanup.pin_feet(res.motion, predicted=res.contacts, feet=res.feet, config=cfg), (30, 160, 30))]
    panels = [panel(m, frames, leg, col) for m, col in takes]
    w = max(p.shape[1] for p in panels)
    rows = []
    for p in panels:
        pad = np.full((p.shape[0], w - p.shape[1], 3), 255, np.uint8)
        rows += [np.concatenate([p, pad], 1), np.zeros((3, w, 3), np.uint8)]
    write_png(args.out, np.concatenate(rows, 0))
    print("wrote", args.out, "(top: mocap, grey tag; middle: without the swing pitch, blue; bottom: with it, green)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
