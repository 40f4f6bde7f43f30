"""Walk Along Path measured where the user sees it: on the rig, in the scene.

For a rig in the scene and a path (``[N, 2]`` m, optional speeds), bake the
walk with :func:`.locomotion_scene.walk_along_path`, then read Blender's
*evaluated* pose frame by frame (constraints, Rigify's DEF- bones, the
object transform included) and score it against the drawn path:

- trajectory error: horizontal distance of the hips bone's head to the
  polyline, mean / max over frames, and of the last frame's hips to the end
  point (cm);
- arrival heading: the body's facing on the last frame (the horizontal
  normal of the hip-joint line, up x left) against the last segment (deg);
- skate: height-weighted horizontal slide of the feet and toes while they
  are within 3.3 cm of their planted height (:func:`~..backend.locomotion.metrics.foot_skate`
  with each joint's own planted height), cm per 1/30 s frame;
- jitter: mean jerk of the mapped joints (m/s^3);
- hip-speed variation: within each stride (two steps, found from the feet's
  contacts), the standard deviation of the hips' horizontal speed over its
  mean, averaged over strides (dimensionless: rigs of any size compare);
- largest joint step: the largest per-frame move of any mapped joint
  relative to the hips' own move (a one-frame pop), in leg lengths;
- lowest toe: the lowest toe (or foot tip) height over the floor, cm;
- feet crossing: the smallest signed lateral distance between the ankles
  (positive = left ankle on the left), cm.

Units: metres, seconds, radians internally; Blender Z-up. Needs bpy.
"""

from __future__ import annotations

import math
import time

import numpy as np

CANONICAL_BODY = (
    "hips", "spine", "head", "upperarm_l", "upperarm_r", "lowerarm_l", "lowerarm_r", "hand_l", "hand_r",
    "upperleg_l", "upperleg_r", "lowerleg_l", "lowerleg_r", "foot_l", "foot_r", "toes_l", "toes_r",
)


def evaluated_positions(arm, bones: dict, frames) -> dict:
    """``canonical -> [F, 3]`` world positions (m) of the bones' heads in the
    evaluated pose at scene ``frames`` (matrix_world x pose matrix, read with
    foreach_get per frame)."""
    import bpy

    scene = bpy.context.scene
    names = list(bones)
    order = [arm.pose.bones.find(bones[c]) for c in names]
    buf = np.empty(len(arm.pose.bones) * 16, dtype=np.float32)
    out = np.empty((len(frames), len(names), 3))
    saved = scene.frame_current
    try:
        for i, f in enumerate(frames):
            scene.frame_set(int(f))
            arm.pose.bones.foreach_get("matrix", buf)
            heads = buf.reshape(-1, 4, 4).transpose(0, 2, 1)[order][:, :3, 3]
            mw = np.array([list(r) for r in arm.matrix_world])
            out[i] = heads @ mw[:3, :3].T + mw[:3, 3]
    finally:
        scene.frame_set(saved)
    return {c: out[:, k] for k, c in enumerate(names)}


def _polyline_distance(xy, pts) -> np.ndarray:
    a, b = pts[:-1], pts[1:]
    d = b - a
    flat = xy.reshape(-1, 1, 2)
    t = np.clip(np.sum((flat - a) * d, -1) / np.maximum(np.sum(d * d, -1), 1e-12), 0.0, 1.0)
    q = a + t[..., None] * d
    return np.sqrt(np.min(np.sum((q - flat) ** 2, -1), axis=1))


def _contacts(pos, fps, leg):
    """``[F]`` bool: a foot joint low (within 3 % of the leg of its planted
    height) and slow (< 0.4 leg/s horizontally)."""
    z = pos[:, 2] - np.percentile(pos[:, 2], 2)
    v = np.zeros(len(pos))
    v[1:] = np.linalg.norm(np.diff(pos[:, :2], axis=0), axis=1) * fps
    return (z < 0.03 * leg) & (v < 0.4 * leg)


def _skate(pos, fps, height=0.033):
    """Height-weighted slide (cm per 1/30 s frame) of one foot joint over its
    contact pairs (its planted height = its 2nd-percentile height), and the
    number of contact pairs."""
    z = pos[:, 2] - np.percentile(pos[:, 2], 2)
    h = 0.5 * (z[1:] + z[:-1])
    d = np.linalg.norm(np.diff(pos[:, :2], axis=0), axis=1) * fps / 30.0
    c = h < height
    if not c.any():
        return 0.0, 0
    w = 2.0 - np.power(2.0, np.clip(h[c], None, height) / height)
    return float(np.sum(d[c] * w) * 100.0), int(c.sum())


def hip_speed_variation(hips_xy, contact_l, contact_r, fps, moving=None) -> float:
    """Mean over strides of std/mean of the hips' horizontal speed. A
    stride runs from one left-foot touch-down to the next; strides while the
    body is not moving (``moving`` False anywhere in it) are left out."""
    v = np.zeros(len(hips_xy))
    v[1:] = np.linalg.norm(np.diff(hips_xy, axis=0), axis=1) * fps
    v[0] = v[1] if len(v) > 1 else 0.0
    down = np.nonzero(contact_l[1:] & ~contact_l[:-1])[0] + 1
    cvs = []
    for a, b in zip(down[:-1], down[1:]):
        if b - a < 0.5 * fps or b - a > 2.0 * fps:
            continue
        if moving is not None and not moving[a:b].all():
            continue
        seg = v[a:b]
        if seg.mean() > 0.2:
            cvs.append(seg.std() / seg.mean())
    return float(np.mean(cvs)) if cvs else float("nan")


def score_take(pos: dict, path_xy, fps: float, leg: float) -> dict:
    """Metrics (see the module docstring) of evaluated positions ``pos``
    (``canonical -> [F, 3]``) against the drawn ``path_xy [N, 2]``."""
    path_xy = np.asarray(path_xy, dtype=np.float64)
    hips = pos["hips"]
    err = _polyline_distance(hips[:, :2], path_xy)
    lat = pos["upperleg_l"][-1, :2] - pos["upperleg_r"][-1, :2]
    facing = np.array([lat[1], -lat[0]])  # up x left = forward (Z-up, right-handed)
    end_dir = path_xy[-1] - path_xy[-2]
    ang = math.degrees(abs(math.atan2(facing[0] * end_dir[1] - facing[1] * end_dir[0], float(facing @ end_dir))))
    skates, pairs = [], 0
    for c in ("foot_l", "foot_r", "toes_l", "toes_r"):
        if c in pos:
            s, n = _skate(pos[c], fps)
            skates.append(s)
            pairs += n
    jerk = np.diff(np.stack([pos[c] for c in pos], 1), n=3, axis=0) * fps**3
    cl = _contacts(pos["foot_l"], fps, leg)
    cr = _contacts(pos["foot_r"], fps, leg)
    hv = np.zeros(len(hips))
    hv[1:] = np.linalg.norm(np.diff(hips[:, :2], axis=0), axis=1) * fps
    moving = hv > 0.3 * leg
    stack = np.stack([pos[c] for c in pos], 1)
    rel_step = np.linalg.norm(np.diff(stack - hips[:, None], axis=0), axis=-1)
    toes = [pos[c][:, 2] for c in ("toes_l", "toes_r") if c in pos] or [pos["foot_l"][:, 2], pos["foot_r"][:, 2]]
    # Lateral: the ankles' offset along the body's left direction (from the hip joints).
    left = pos["upperleg_l"][:, :2] - pos["upperleg_r"][:, :2]
    left /= np.maximum(np.linalg.norm(left, axis=1, keepdims=True), 1e-9)
    sep = np.sum((pos["foot_l"][:, :2] - pos["foot_r"][:, :2]) * left, axis=1)
    return {
        "frames": len(hips),
        "mean_cm": float(err.mean() * 100),
        "max_cm": float(err.max() * 100),
        "final_cm": float(np.linalg.norm(hips[-1, :2] - path_xy[-1]) * 100),
        "heading_deg": ang,
        "skate_cm_per_frame": float(sum(skates) / max(pairs, 1)),
        "jitter_m_s3": float(np.mean(np.linalg.norm(jerk, axis=-1))),
        "hip_speed_cv": hip_speed_variation(hips[:, :2], cl, cr, fps, moving),
        "max_step_leg": float(rel_step.max() / leg),
        "p999_step_leg": float(np.percentile(rel_step, 99.9) / leg),
        "min_toe_cm": float(min(t.min() for t in toes) * 100),
        "min_feet_sep_cm": float(sep.min() * 100),
        "max_hip_speed": float(hv.max()),
    }


def bake_and_score(arm, points, *, style="normal", speed=1.3, controller=None, frames_step: int = 1) -> dict:
    """Bake Walk Along Path on ``arm`` (``points [N, 2]`` or ``[N, 3]`` with
    speeds) and score the evaluated take (:func:`score_take`); adds
    ``bake_s`` (wall seconds of the bake) and ``action``."""
    from . import locomotion_scene as LS
    from . import retarget_scene

    t0 = time.perf_counter()
    action = LS.walk_along_path(arm, points, style=style, speed=speed, controller=controller)
    bake_s = time.perf_counter() - t0
    tmap = retarget_scene.target_mapping(arm)
    bones = {c: tmap.bones[c] for c in CANONICAL_BODY if tmap.bones.get(c)}
    a, b = (int(round(x)) for x in action.frame_range)
    frames = list(range(a, b + 1, frames_step))
    pos = evaluated_positions(arm, bones, frames)
    import bpy

    fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base / frames_step
    res = score_take(pos, np.asarray(points, dtype=np.float64)[:, :2], fps, LS.rig_leg_length(arm))
    res.update(bake_s=bake_s, action=action.name)
    return res


__all__ = ["evaluated_positions", "score_take", "bake_and_score", "hip_speed_variation", "CANONICAL_BODY"]
