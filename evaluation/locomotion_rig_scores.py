"""Scores of Walk Along Path on a rig, from positions read off the
evaluated pose (``evaluation.locomotion_rigs``): pure NumPy, no bpy.

For a take (``canonical -> [F, 3]`` world positions, m) and the drawn path
(``[N, 2]`` m):

- trajectory error: horizontal distance of the hips bone's head to the
  polyline, mean / max over frames, and of the last frame's hips to the end
  point (cm);
- arrival heading: the body's facing on the last frame (the horizontal
  normal of the hip-joint line, up x left) against the last segment (deg);
- skate: height-weighted horizontal slide of the feet and toes while they
  are within 3.3 cm of their planted height (:func:`~rigmind.backend.locomotion.metrics.foot_skate`
  with each joint's own planted height), cm per 1/30 s frame;
- jitter: mean jerk of the mapped joints (m/s^3);
- hip-speed variation: within each stride (two steps, found from the feet's
  contacts), the standard deviation of the hips' horizontal speed over its
  mean, averaged over strides (dimensionless: rigs of any size compare);
- largest joint step: the largest per-frame move of any mapped joint
  relative to the hips' own move (a one-frame pop), in leg lengths;
- lowest toe: the lowest toe (or foot tip) height over the floor, cm;
- feet crossing: the smallest signed lateral distance between the ankles
  (positive = left ankle on the left), cm;
- swing clearance: the median over swings (>= 5 frames with the ankle not
  planted) of the toe's peak height over its rest height, cm.

Units: metres, seconds, radians internally; Blender Z-up.
"""

from __future__ import annotations

import math

import numpy as np

from ..backend.foot_contacts import runs


CANONICAL_BODY = (
    "hips", "spine", "head", "upperarm_l", "upperarm_r", "lowerarm_l", "lowerarm_r", "hand_l", "hand_r",
    "upperleg_l", "upperleg_r", "lowerleg_l", "lowerleg_r", "foot_l", "foot_r", "toes_l", "toes_r",
)


def _polyline_distance(xy, pts) -> np.ndarray:
    a, b = pts[:-1], pts[1:]
    d = b - a
    flat = xy.reshape(-1, 1, 2)
    t = np.clip(np.sum((flat - a) * d, -1) / np.maximum(np.sum(d * d, -1), 1e-12), 0.0, 1.0)
    q = a + t[..., None] * d
    return np.sqrt(np.min(np.sum((q - flat) ** 2, -1), axis=1))


def planted_contacts(pos, fps, leg):
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


#: The last this many seconds of a take stand still (the path follower's
#: hold of the standing pose, 0.4 s) ...
HOLD_SECONDS = 0.4


#: ... and the last this many are its settle: the feet stepping into the
#: stance while the body blends into it, then the hold.
SETTLE_SECONDS = 1.2


def end_stance(pos: dict, fps: float, leg: float) -> dict:
    """How the take ends standing, from evaluated positions ``pos``
    (``canonical -> [F, 3]``, m): on the last frame the ankles' horizontal
    distance (``end_ankle_cm``), the hip joints' (the thigh heads',
    ``end_hip_width_cm``) and the larger knee flexion (``end_knee_deg``, 0 =
    straight: the angle between thigh and shin); over the last
    :data:`HOLD_SECONDS` the fastest horizontal ankle speed
    (``hold_ankle_speed``, m/s); over the last :data:`SETTLE_SECONDS` the
    skate of the feet and toes (``settle_skate_cm_per_frame``, as the
    take's skate: height-weighted slide while within 3.3 cm of the floor)."""
    last = {c: pos[c][-1] for c in ("upperleg_l", "upperleg_r", "lowerleg_l", "lowerleg_r", "foot_l", "foot_r")}
    flex = []
    for side in ("l", "r"):
        u = last[f"lowerleg_{side}"] - last[f"upperleg_{side}"]
        v = last[f"foot_{side}"] - last[f"lowerleg_{side}"]
        flex.append(math.degrees(math.acos(float(np.clip(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)), -1.0, 1.0)))))
    n_hold = min(max(int(round(HOLD_SECONDS * fps)), 2), len(pos["hips"]))
    hold = max(float((np.linalg.norm(np.diff(pos[c][-n_hold:, :2], axis=0), axis=1) * fps).max()) for c in ("foot_l", "foot_r"))
    n = min(max(int(round(SETTLE_SECONDS * fps)), 2), len(pos["hips"]))
    skates, pairs = [], 0
    for c in ("foot_l", "foot_r", "toes_l", "toes_r"):
        if c in pos:
            sk, k = _skate(pos[c][-n:], fps)
            skates.append(sk)
            pairs += k
    return {
        "end_ankle_cm": float(np.linalg.norm(last["foot_l"][:2] - last["foot_r"][:2]) * 100),
        "end_hip_width_cm": float(np.linalg.norm(last["upperleg_l"][:2] - last["upperleg_r"][:2]) * 100),
        "end_knee_deg": float(max(flex)),
        "hold_ankle_speed": hold,
        "settle_skate_cm_per_frame": float(sum(skates) / max(pairs, 1)),
    }


def swing_peaks(toe_z: np.ndarray, swing: np.ndarray, min_frames: int = 5) -> list:
    """Peak of ``toe_z [F]`` (m, over the planted level) in each swing: each
    run of ``swing [F]`` (the ankle not planted) of at least ``min_frames``
    frames. The rig evaluation's swing clearance is their median."""
    return [float(toe_z[a:b].max()) for a, b in zip(*runs(swing)) if b - a >= min_frames]


def score_take(pos: dict, path_xy, fps: float, leg: float, toe_rest=None) -> dict:
    """Metrics (see the module docstring) of evaluated positions ``pos``
    (``canonical -> [F, 3]``) against the drawn ``path_xy [N, 2]`` (None:
    a mocap take, no trajectory figures). ``toe_rest``: the toe joints'
    height (m) over the floor when standing at rest; the lowest toe is
    reported relative to it (how far the toe sinks below where a flat
    foot has it), else as its raw height."""
    hips = pos["hips"]
    traj = {}
    if path_xy is not None:
        path_xy = np.asarray(path_xy, dtype=np.float64)
        err = _polyline_distance(hips[:, :2], path_xy)
        lat = pos["upperleg_l"][-1, :2] - pos["upperleg_r"][-1, :2]
        facing = np.array([lat[1], -lat[0]])  # up x left = forward (Z-up, right-handed)
        end_dir = path_xy[-1] - path_xy[-2]
        ang = math.degrees(abs(math.atan2(facing[0] * end_dir[1] - facing[1] * end_dir[0], float(facing @ end_dir))))
        traj = {"mean_cm": float(err.mean() * 100), "max_cm": float(err.max() * 100),
                "final_cm": float(np.linalg.norm(hips[-1, :2] - path_xy[-1]) * 100), "heading_deg": ang}
    skates, pairs = [], 0
    for c in ("foot_l", "foot_r", "toes_l", "toes_r"):
        if c in pos:
            s, n = _skate(pos[c], fps)
            skates.append(s)
            pairs += n
    jerk = np.diff(np.stack([pos[c] for c in pos], 1), n=3, axis=0) * fps**3
    cl = planted_contacts(pos["foot_l"], fps, leg)
    cr = planted_contacts(pos["foot_r"], fps, leg)
    hv = np.zeros(len(hips))
    hv[1:] = np.linalg.norm(np.diff(hips[:, :2], axis=0), axis=1) * fps
    moving = hv > 0.3 * leg
    stack = np.stack([pos[c] for c in pos], 1)
    rel_step = np.linalg.norm(np.diff(stack - hips[:, None], axis=0), axis=-1)
    toe_keys = [c for c in ("toes_l", "toes_r") if c in pos] or ["foot_l", "foot_r"]
    toes = [pos[c][:, 2] - (0.0 if toe_rest is None else toe_rest.get(c, 0.0)) for c in toe_keys]
    # Lateral: the ankles' offset along the body's left direction (from the hip joints).
    left = pos["upperleg_l"][:, :2] - pos["upperleg_r"][:, :2]
    left /= np.maximum(np.linalg.norm(left, axis=1, keepdims=True), 1e-9)
    sep = np.sum((pos["foot_l"][:, :2] - pos["foot_r"][:, :2]) * left, axis=1)
    # Swing clearance: each swing (a run of >= 5 frames with the ankle not
    # planted) of each foot, the peak height of its toe over its planted height.
    peaks = []
    for side in ("l", "r"):
        toe = pos.get(f"toes_{side}", pos[f"foot_{side}"])[:, 2]
        toe = toe - (np.percentile(toe, 2) if toe_rest is None else toe_rest.get(f"toes_{side}", np.percentile(toe, 2)))
        peaks += swing_peaks(toe, ~(cl if side == "l" else cr))
    return {
        "frames": len(hips),
        **traj,
        **end_stance(pos, fps, leg),
        "swing_clear_cm": float(np.median(peaks) * 100) if peaks else float("nan"),
        "skate_cm_per_frame": float(sum(skates) / max(pairs, 1)),
        "jitter_m_s3": float(np.mean(np.linalg.norm(jerk, axis=-1))),
        "hip_speed_cv": hip_speed_variation(hips[:, :2], cl, cr, fps, moving),
        "max_step_leg": float(rel_step.max() / leg),
        "p999_step_leg": float(np.percentile(rel_step, 99.9) / leg),
        "min_toe_cm": float(min(t.min() for t in toes) * 100),
        "min_feet_sep_cm": float(sep.min() * 100),
        "max_hip_speed": float(hv.max()),
    }


def _mean(rows, key):
    v = [r[key] for r in rows if key in r and r[key] is not None and np.isfinite(r[key])]
    return float(np.mean(v)) if v else float("nan")


def _max(rows, key):
    v = [r[key] for r in rows if key in r and np.isfinite(r[key])]
    return float(np.max(v)) if v else float("nan")


def _min(rows, key):
    v = [r[key] for r in rows if key in r and np.isfinite(r[key])]
    return float(np.min(v)) if v else float("nan")


def summarize(rig: dict) -> dict:
    """Per-rig figures and the ratios the issue asks for."""
    t, m = rig["takes"], rig["mocap"]
    mo_p999 = float(np.percentile([r["p999_step_leg"] for r in m], 50)) if m else float("nan")
    return {
        "rig": rig["rig"], "paths": len(t), "leg_scale": rig["leg_scale"], "default_speed": rig["default_speed"],
        "mean_cm": _mean(t, "mean_cm"), "max_cm": _max(t, "max_cm"), "final_cm": _max(t, "final_cm"),
        "heading_deg": _max(t, "heading_deg"),
        "skate": _mean(t, "skate_cm_per_frame"), "skate_mocap": _mean(m, "skate_cm_per_frame"),
        "jitter": _mean(t, "jitter_m_s3"), "jitter_mocap": _mean(m, "jitter_m_s3"),
        "hip_cv": _mean(t, "hip_speed_cv"), "hip_cv_mocap": _mean(m, "hip_speed_cv"),
        "max_step": _max(t, "max_step_leg"), "mocap_p999_step": mo_p999,
        "min_toe_cm": _min(t, "min_toe_cm"), "min_toe_mocap_cm": _min(m, "min_toe_cm"),
        "min_feet_sep_cm": _min(t, "min_feet_sep_cm"), "min_feet_sep_mocap_cm": _min(m, "min_feet_sep_cm"),
        "swing_clear_cm": _mean(t, "swing_clear_cm"), "swing_clear_mocap_cm": _mean(m, "swing_clear_cm"),
        "bake_s_per_10s": float(np.mean([r["bake_s"] / (r["frames"] / 300.0) for r in t])),
    }


def style_accuracy(paths, controller, styles=None, cache_dir=None, seed: int = 0, data_dir=None) -> dict:
    """Per style, the share of ``paths`` whose walk (the controller's
    output after the path snap and foot clean-up, on its own skeleton, the
    same for every rig) the style classifier of ``rigmind eval locomotion``
    (trained on the training clips' features cache; built when absent)
    names correctly; ``{"styles": {style: share}, "mean": share}``."""
    from ..backend.locomotion import dataset
    from ..backend.locomotion import eval
    from ..backend.locomotion import features
    from ..backend.locomotion import style_classifier
    from ..backend.locomotion.walk_generation import generate_path
    from ..backend.locomotion.walk_speeds import style_speeds
    from ..backend.paths import data_dir as default_data_dir  # the argument `paths` hides the module here

    cache = cache_dir or features.DEFAULT_CACHE_DIR
    features.build_cache(data_dir or default_data_dir(), cache, seed=seed)
    clf = eval.cached_classifier(cache, seed)
    out = {}
    for style in styles or dataset.D2_STYLES:
        default = style_speeds(style, "walk")[0]
        hits = []
        for p in paths:
            motion, _ = generate_path(controller, p.points, style=style, speed=p.speeds(default))
            probs = style_classifier.predict_style(clf, motion)
            hits.append(clf.styles[int(np.argmax(probs))] == style)
        out[style] = float(np.mean(hits))
    return {"styles": out, "mean": float(np.mean(list(out.values())))}


def format_markdown(summaries, meta) -> str:
    def f(x, d=1):
        return "n/a" if x is None or not np.isfinite(x) else f"{x:.{d}f}"

    lines = [
        f"### Walk Along Path on the rigs ({meta['set']} paths)",
        "",
        f"Command: `{meta['command']}`  ",
        f"Machine: {meta['machine']}  ",
        f"Date: {meta['date']}  ",
        f"Paths: {meta['paths_desc']}; style {meta['style']}, speeds x the style's default on each rig.",
        "",
        "| rig | leg scale | mean / max / final traj. err (cm) | arrival heading (deg, max) | skate (cm/frame) gen / mocap | "
        "jitter (m/s^3) gen / mocap | hip-speed CV gen / mocap | largest joint step / mocap p99.9 | lowest toe (cm) gen / mocap | "
        "min ankle separation (cm) gen / mocap | swing toe clearance (cm, median peak) gen / mocap |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in summaries:
        lines.append(
            f"| {s['rig']} | {f(s['leg_scale'], 3)} | {f(s['mean_cm'])} / {f(s['max_cm'])} / {f(s['final_cm'])} | "
            f"{f(s['heading_deg'])} | {f(s['skate'], 2)} / {f(s['skate_mocap'], 2)} | {f(s['jitter'], 0)} / "
            f"{f(s['jitter_mocap'], 0)} ({f(s['jitter'] / s['jitter_mocap'], 2)}x) | {f(s['hip_cv'], 3)} / "
            f"{f(s['hip_cv_mocap'], 3)} ({f(s['hip_cv'] / s['hip_cv_mocap'], 2)}x) | {f(s['max_step'], 3)} / "
            f"{f(s['mocap_p999_step'], 3)} ({f(s['max_step'] / s['mocap_p999_step'], 2)}x) | {f(s['min_toe_cm'])} / "
            f"{f(s['min_toe_mocap_cm'])} | {f(s['min_feet_sep_cm'])} / {f(s['min_feet_sep_mocap_cm'])} | "
            f"{f(s['swing_clear_cm'])} / {f(s['swing_clear_mocap_cm'])} |")
    acc = meta.get("style_accuracy")
    if acc:
        lines += ["", f"Style accuracy (the controller's walk along the same paths, before retargeting, so the same for "
                  f"every rig; the evaluation's style classifier): mean {acc['mean']:.0%}; "
                  + ", ".join(f"{k} {v:.0%}" for k, v in acc["styles"].items())]
    lines += ["", "Per take (cm, deg):", "", "| rig | path | turns (deg) | length (m) | mean | max | final | heading | hip CV |",
              "|---|---|---|---|---|---|---|---|---|"]
    for rig in meta["rigs"]:
        for r in rig["takes"]:
            lines.append(f"| {rig['rig']} | {r['path']} | {r['turns_deg']} | {r['length_m']:.1f} | {f(r['mean_cm'])} | "
                         f"{f(r['max_cm'])} | {f(r['final_cm'])} | {f(r['heading_deg'])} | {f(r['hip_speed_cv'], 3)} |")
    return "\n".join(lines) + "\n"


__all__ = [
    "CANONICAL_BODY", "HOLD_SECONDS", "SETTLE_SECONDS", "planted_contacts", "hip_speed_variation", "end_stance",
    "swing_peaks", "score_take", "summarize", "style_accuracy", "format_markdown",
]
