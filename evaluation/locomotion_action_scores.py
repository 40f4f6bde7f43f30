"""Scores of a path walk with actions (jumps, crouches, a get-up), read from
the exported file (issue #28 item 7): pure NumPy on a :class:`Motion` (e.g.
``backend.bvh.read_bvh`` of ``rigmind walk --out X.bvh``).

Units: metres, seconds, Blender Z-up; arcs are metres along the path from
its first point. A foot joint (ankle or toe) is off the floor when it is
:data:`OFF_FLOOR_M` above its own floor (its 2nd-percentile height over the
take); the body is in the air when all four are.
"""

from __future__ import annotations

import numpy as np

from ..backend.bone_mapping import auto_map
from ..backend.locomotion.path_follow import Path2D

OFF_FLOOR_M = 0.03
GRAVITY = 9.81
#: A foot joint this close to its floor in two frames running is planted (m).
PLANTED_M = 0.02
#: Seconds around an action window counted as its transitions.
TRANSITION_S = 0.5
FEET = ("foot_l", "toes_l", "foot_r", "toes_r")


def body(motion) -> dict:
    """``{"hips": [F, 3], "feet": [F, 4, 3], "knees": [F, 2] (rad), "all": [F, J, 3], "fps"}``."""
    bones = auto_map(motion.skeleton).bones
    names = list(motion.skeleton.names)
    pos = motion.world_positions()

    def at(c):
        return pos[:, names.index(bones[c])]

    knees = []
    for s in "lr":
        u, v = at(f"lowerleg_{s}") - at(f"upperleg_{s}"), at(f"foot_{s}") - at(f"lowerleg_{s}")
        c = np.sum(u * v, -1) / np.maximum(np.linalg.norm(u, axis=-1) * np.linalg.norm(v, axis=-1), 1e-12)
        knees.append(np.arccos(np.clip(c, -1.0, 1.0)))
    return {"hips": at("hips"), "feet": np.stack([at(c) for c in FEET], 1), "knees": np.stack(knees, 1),
            "all": pos, "fps": float(motion.fps)}


def arcs(path: Path2D, xy: np.ndarray) -> np.ndarray:
    """``[F]`` arc of each hips point, projected in order (never more than 2 m ahead)."""
    out, prev = np.empty(len(xy)), None
    for f, p in enumerate(xy):
        prev = out[f] = path.project(p, prev)
    return out


def runs(mask: np.ndarray) -> list:
    """``[(first, end), ...]`` of the True stretches of ``mask``."""
    m = np.concatenate([[False], np.asarray(mask, bool), [False]])
    d = np.diff(m.astype(np.int8))
    return list(zip(np.nonzero(d == 1)[0], np.nonzero(d == -1)[0]))


def joint_steps(pos: np.ndarray) -> np.ndarray:
    """``[F - 1]`` the largest joint move (m) from each frame to the next."""
    return np.linalg.norm(np.diff(pos, axis=0), axis=-1).max(axis=1)


def planted_skate(feet: np.ndarray, frames) -> float:
    """Mean horizontal slide (mm per frame) of foot joints within
    :data:`PLANTED_M` of their floor in both frames of a pair, over the
    frame pairs starting in ``frames``."""
    floor = np.percentile(feet[..., 2], 2, axis=0)
    low = feet[..., 2] < floor + PLANTED_M
    both = low[:-1] & low[1:]
    slide = np.linalg.norm(np.diff(feet[..., :2], axis=0), axis=-1)
    sel = np.zeros(len(both), bool)
    idx = np.asarray([f for f in frames if 0 <= f < len(both)], dtype=int)
    sel[idx] = True
    pick = both & sel[:, None]
    return float(slide[pick].mean() * 1000.0) if pick.any() else 0.0


def ballistic(hips_z: np.ndarray, first: int, end: int, fps: float) -> dict:
    """The flight ``[first, end)`` against gravity: its measured time, the time
    a body thrown from the take-off height through the measured apex down to
    the touch-down height takes, and the RMS residual (m) of the hips'
    heights against the parabola of gravity fitted through them."""
    z = hips_z[first:end]
    t = np.arange(len(z)) / fps
    # z + g t^2 / 2 is linear in t for a ballistic body.
    a = np.polyfit(t, z + 0.5 * GRAVITY * t * t, 1) if len(z) >= 2 else np.array([0.0, z[0]])
    resid = z - (np.polyval(a, t) - 0.5 * GRAVITY * t * t)
    z_off, z_down = hips_z[max(first - 1, 0)], hips_z[min(end, len(hips_z) - 1)]
    apex = z.max()
    physics = np.sqrt(2 * max(apex - z_off, 0.0) / GRAVITY) + np.sqrt(2 * max(apex - z_down, 0.0) / GRAVITY)
    # The gravity the hips' own arc implies: a free parabola's curvature.
    g_fit = float(-2.0 * np.polyfit(t, z, 2)[0]) if len(z) >= 3 else float("nan")
    return {"flight_s": (end - first + 1) / fps, "physics_s": float(physics), "fitted_g": g_fit,
            "residual_m": float(np.sqrt(np.mean(resid ** 2)))}


def score_take(motion, points_xy, jumps=(), crouches=(), *, start: str = "standing", reference_step: float = None,
               plain=None) -> dict:
    """Scores of a take walked along ``points_xy [N, 2]`` (world m) with
    ``jumps`` ``[(arc, length), ...]`` and ``crouches`` ``[(a, b), ...]``
    (m along the path). ``reference_step``: the mocap's p99.9 joint step on
    this rig (m), for the transitions' ratio; ``plain``: the :func:`body` of
    the same path walked without actions, for the skate and "as before"
    comparisons."""
    b = body(motion)
    fps, hips, feet = b["fps"], b["hips"], b["feet"]
    path = Path2D(np.asarray(points_xy, float))
    arc = arcs(path, hips[:, :2])
    windows = [(a - 1.0, a + length + 1.5) for a, length in jumps] + [(a - 1.0, b_ + 1.0) for a, b_ in crouches]
    outside = np.ones(len(arc), bool)
    for lo, hi in windows:
        outside &= ~((arc >= lo) & (arc <= hi))
    if start != "standing":
        outside[:int(5 * fps)] = False  # the get-up and its blend
    walking = float(np.median(hips[outside, 2]))
    floor = np.percentile(feet[..., 2], 2, axis=0)
    air = np.all(feet[..., 2] > floor + OFF_FLOOR_M, axis=1)
    steps = joint_steps(b["all"])
    out = {"frames": len(arc), "walking_hips_m": walking, "jumps": [], "crouches": [],
           "path_error_mean_m": float(np.mean(path.distance(hips[:, :2]))),
           "arrival_m": float(np.linalg.norm(hips[-1, :2] - path.points[-1])),
           "step_max_m": float(steps.max()), "step_p999_outside_m": float(np.percentile(steps[outside[1:]], 99.9))}
    edges = []
    for a, length in jumps:
        near = [(f, e) for f, e in runs(air) if a - 0.6 <= arc[f] <= a + length + 0.6]
        if not near:
            out["jumps"].append({"arc": a, "air_s": 0.0})
            continue
        f, e = max(near, key=lambda r: r[1] - r[0])
        one = {"arc": a, "air_s": (e - f) / fps, "apex_over_walking_m": float(hips[f:e, 2].max() - walking),
               "hips_off_path_m": float(path.distance(hips[f:e, :2]).max())}
        one.update(ballistic(hips[:, 2], f, e, fps))
        n = int(fps)
        one["skate_take_off_mm"] = planted_skate(feet, range(max(f - n, 0), f))
        one["skate_landing_mm"] = planted_skate(feet, range(e, e + n))
        out["jumps"].append(one)
        edges += [f, e]
    for a, b_ in crouches:
        inside = (arc >= a) & (arc <= b_)
        fr = np.nonzero(inside)[0]
        out["crouches"].append({"range": (a, b_), "hips_ratio_max": float(hips[inside, 2].max() / walking),
                                "hips_ratio_mean": float(hips[inside, 2].mean() / walking),
                                "knee_bend_deg": float(np.degrees(b["knees"][inside].mean()))})
        edges += [fr[0], fr[-1]] if len(fr) else []
    if start != "standing":
        edges.append(int(np.argmax(hips[:, 2] > 0.9 * walking)))
    n = int(TRANSITION_S * fps)
    near_edges = sorted({i for e in edges for i in range(max(e - n, 0), min(e + n, len(steps)))})
    out["transition_step_max_m"] = float(steps[near_edges].max()) if near_edges else 0.0
    if reference_step:
        out["transition_step_ratio"] = out["transition_step_max_m"] / reference_step
    out["skate_mm"] = planted_skate(feet, range(len(feet)))
    if plain is not None:
        out["plain_skate_mm"] = planted_skate(plain["feet"], range(len(plain["feet"])))
        out["plain_walking_hips_m"] = float(np.median(plain["hips"][:, 2]))
        out["plain_step_p999_m"] = float(np.percentile(joint_steps(plain["all"]), 99.9))
    return out


def seam(motion) -> dict:
    """A cyclic take's seam. The file's last frame is the loop's first again,
    moved on by the loop's travel (``closure_m``: how far any joint is from
    that, m); the step into it (``wrap_step_m``) is the seam, against the
    largest step inside the loop (``inner_step_max_m``)."""
    pos = motion.world_positions()
    steps = joint_steps(pos)
    travel = pos[-1, 0] - pos[0, 0]
    closure = np.linalg.norm(pos[-1] - (pos[0] + travel), axis=-1).max()
    return {"closure_m": float(closure), "wrap_step_m": float(steps[-1]), "inner_step_max_m": float(steps[:-1].max()),
            "frames": len(pos)}


__all__ = ["OFF_FLOOR_M", "GRAVITY", "body", "arcs", "runs", "joint_steps", "planted_skate", "ballistic",
           "score_take", "seam"]
