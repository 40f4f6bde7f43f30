"""Side-view contact sheet of a tracked take (issue #30), drawn with NumPy
(:mod:`take_pictures`' Canvas): one column every ``every`` seconds; rows =
the mocap (grey), the tracking model (blue), the baseline (orange). Each
cell is seen from the subject's right along the take's main direction of
travel (fixed for the whole take, so a walk shows as travel and a slide as a
planted foot that moves between columns), centred on the mocap's hips; the
floor (z = 0) is a grey line, planted feet are red, the three trackers are
green dots. 1 m = ``ppm`` px.

    PYTHONPATH=... .venv/bin/python bench/bench_tracking.py --sheet   (calls sheet())
"""

from __future__ import annotations

import numpy as np

from take_pictures import Canvas, write_png

from rigmind.backend.resample import resample


def _lines(parents, names):
    # The canonical skeleton's joint_Root is a static ground root: no bone to the hips.
    return [(int(p), j) for j, p in enumerate(parents) if p >= 0 and names[int(p)] != "joint_Root"]


def sheet(canon, src, mapping, model_res, base_res, out, every: float = 0.5, cell: int = 170, ppm: float = 75.0):
    src = resample(src, 30.0) if abs(src.fps - 30.0) > 1e-6 else src
    ps = src.world_positions()
    mk = model_res.motion.skeleton
    rows = [(ps, _lines(src.skeleton.parents, src.skeleton.names), (120, 120, 120), None),
            (model_res.motion.world_positions(), _lines(mk.parents, mk.names), (40, 90, 200), model_res.contacts),
            (base_res.motion.world_positions(), _lines(mk.parents, mk.names), (230, 130, 20), base_res.contacts)]
    hips = ps[:, src.skeleton.index(mapping["hips"])]
    travel = hips[-1, :2] - hips[0, :2]
    axis = travel / max(np.linalg.norm(travel), 1e-6) if np.linalg.norm(travel) > 0.2 else np.array([1.0, 0.0])
    n = min(len(ps), model_res.motion.num_frames, base_res.motion.num_frames)
    frames = np.arange(0, n, int(round(every * 30)))
    img = np.full((cell * len(rows), cell * len(frames), 3), 255, np.uint8)
    feet = {"Foot_L": 0, "Toes_L": 0, "Foot_R": 1, "Toes_R": 1}
    for ci, f in enumerate(frames):
        centre = float(hips[f, :2] @ axis)
        for ri, (p, lines, color, contacts) in enumerate(rows):
            cv = Canvas(cell, cell, (centre, 0.9), ppm)

            def uv(x):
                return np.stack([x[..., :2] @ axis, x[..., 2]], -1)

            cv.line((centre - 2.0, 0.0), (centre + 2.0, 0.0), (170, 170, 170), 1.0)
            for a, b in lines:
                cv.line(uv(p[f, a]), uv(p[f, b]), color, 2.0)
            if contacts is not None:
                names = model_res.motion.skeleton.names
                for nm, side in feet.items():
                    if contacts[f, side]:
                        cv.dots(uv(p[f, names.index(nm)])[None], (220, 0, 0), 3.0)
            cv.dots(uv(model_res.targets[f]), (0, 160, 0), 2.5)
            img[ri * cell:(ri + 1) * cell, ci * cell:(ci + 1) * cell] = cv.img
            img[ri * cell:(ri + 1) * cell, ci * cell] = 200
    write_png(out, img)
    return out
