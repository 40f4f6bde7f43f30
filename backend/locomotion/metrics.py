"""Quality metrics for generated locomotion (pure NumPy, no bpy).

Every metric takes a :class:`~..motion.Motion` or world joint positions
``[F, J, 3]`` (metres, Blender Z-up) with their joint names and frame rate.
Units are in the names of the returned fields: ``_cm`` centimetres,
``_cm_per_frame`` centimetres per 1/30 s frame, ``_m_s3`` m/s³, ``_ms``
milliseconds.

Definitions (exactly as implemented):

- **Foot skate** (:func:`foot_skate`, after Zhang et al. 2018, "Mode-Adaptive
  Neural Networks"): for each foot joint ``k`` (``Foot_L, Toes_L, Foot_R,
  Toes_R``) and each pair of consecutive frames ``(f, f+1)``, the height
  ``h = (z[f] + z[f+1]) / 2 - floor - lift_k`` and the horizontal
  displacement ``d = |xy[f+1] - xy[f]| * fps / 30`` (per 1/30 s frame so
  clips at other rates compare). ``lift_k`` is the joint's height above the
  sole when the foot is planted flat (the Bandai ankle sits 11.74 cm and the
  toe joint 4.25 cm above the floor: :data:`BANDAI_PLANTED_HEIGHT`, medians of
  the joints' 1st-percentile heights over the 124 validation clips; for other
  skeletons the joint's own 1st-percentile height in the clip). ``floor`` is
  z = 0 (every controller here and the mocap stand on z = 0) or, with
  ``floor="clip"``, estimated per clip as the 1st percentile of the toe
  joints' ``z - lift``. A pair is a *contact* pair when ``h < H = 3.3 cm``.
  ``skate_cm_per_frame`` = mean over the contact pairs of all foot joints of
  ``d * (2 - 2^(h / H))`` (the weight is 1 at ``h = H``, 2 at ``h = -inf``);
  ``sliding_fraction`` = the fraction of contact pairs whose raw ``d`` exceeds
  1 cm (0.3 m/s at 30 fps: a planted foot moving faster than a slow
  shuffle). Both are 0 when no pair is in contact (``contact_fraction`` = 0
  tells that apart).
- **Trajectory error** (:func:`trajectory_error`): the horizontal distance of
  the character root ``root_xy[f]`` to the path polyline (nearest point on any
  segment), mean and max over frames, and the distance of the last root
  position to the path's end point; centimetres.
- **Jitter** (:func:`jitter`): the third finite difference of the world joint
  positions times ``fps^3`` (jerk, m/s³), its Euclidean norm averaged over
  joints and frames. Joint 0 is left out by default: it is a static ground
  root in the Bandai mocap and the character root in generated motion, not a
  body part.
- **Speed** (:func:`ms_per_step`): wall-clock milliseconds per
  ``controller.step`` with one thread.
"""

from __future__ import annotations

import sys
import time
from typing import NamedTuple

import numpy as np

#: Contact height threshold H (m) of the foot-skate metric.
SKATE_HEIGHT = 0.033
#: A contact pair "slides" when it moves more than this (m) per 1/30 s frame.
SLIDE_DISTANCE = 0.01
#: Frame rate that skate distances are expressed per frame of.
REFERENCE_FPS = 30.0
#: Feet joints of the skate metric (Bandai names).
FOOT_JOINTS = ("Foot_L", "Toes_L", "Foot_R", "Toes_R")
#: Height (m) of each Bandai foot joint above the floor when the foot is
#: planted flat: the median over the validation clips of each joint's 1st
#: percentile height (ankles 11.74 cm, toe joints 4.25 cm; 5th-95th
#: percentile of clips 11.74-12.10 and 4.21-5.38 cm).
BANDAI_PLANTED_HEIGHT = {"Foot_L": 0.1174, "Toes_L": 0.0425, "Foot_R": 0.1175, "Toes_R": 0.0426}


def _positions(motion, names=None, fps=None):
    """``(world positions [F, J, 3], names, fps)`` of a Motion, or of an
    array with ``names`` and ``fps`` given."""
    if hasattr(motion, "world_positions"):
        return motion.world_positions(), list(motion.skeleton.names), float(motion.fps)
    p = np.asarray(motion, dtype=np.float64)
    if p.ndim != 3 or p.shape[-1] != 3:
        raise ValueError(f"positions must be [frames, joints, 3], got {p.shape}")
    if fps is None:
        raise ValueError("fps is needed with a positions array")
    return p, (list(names) if names is not None else None), float(fps)


# --- foot skate ---------------------------------------------------------------------


def foot_skate(
    motion,
    foot_joints=FOOT_JOINTS,
    *,
    names=None,
    fps=None,
    height: float = SKATE_HEIGHT,
    slide: float = SLIDE_DISTANCE,
    floor=0.0,
    lift=None,
) -> dict:
    """Foot skate of ``motion`` (see the module docstring for the exact
    definition).

    Args:
        motion: a Motion, or world positions ``[F, J, 3]`` (m) with ``names``
            and ``fps``.
        foot_joints: joint names (or indices with a positions array).
        height: contact threshold H, metres (3.3 cm).
        slide: sliding threshold, metres per 1/30 s frame (1 cm).
        floor: floor height z (m), or ``"clip"`` to estimate it per clip as
            the 1st percentile of ``z - lift`` of the joints named ``Toes*``
            (all foot joints when none is).
        lift: planted heights (m) of the joints above the floor, a dict, a
            sequence or one number for all; default :data:`BANDAI_PLANTED_HEIGHT` for the Bandai
            names, else each joint's own 1st-percentile height in the clip.

    Returns:
        ``{"skate_cm_per_frame", "sliding_fraction", "contact_fraction",
        "per_joint_cm_per_frame" {name: value}}``; fractions in [0, 1].
    """
    p, jnames, fps = _positions(motion, names, fps)
    if jnames is None:
        idx = [int(j) for j in foot_joints]
        labels = [str(j) for j in foot_joints]
    else:
        idx = [jnames.index(j) if isinstance(j, str) else int(j) for j in foot_joints]
        labels = [jnames[i] for i in idx]
    feet = p[:, idx]  # [F, K, 3]
    z = feet[..., 2]
    if lift is None:
        lift = [BANDAI_PLANTED_HEIGHT.get(n, None) for n in labels]
    elif isinstance(lift, dict):
        lift = [lift.get(n, None) for n in labels]
    elif np.ndim(lift) == 0:
        lift = [float(lift)] * len(labels)
    lift = np.array(
        [np.percentile(z[:, k], 1.0) if v is None else float(v) for k, v in enumerate(lift)], dtype=np.float64
    )
    if isinstance(floor, str):
        if floor != "clip":
            raise ValueError(f"floor must be a height or 'clip', got {floor!r}")
        toes = [k for k, n in enumerate(labels) if n.startswith("Toes")] or list(range(len(labels)))
        floor = float(np.percentile((z - lift)[:, toes], 1.0))
    h_frame = z - float(floor) - lift[None]
    if len(p) < 2:
        zeros = {n: 0.0 for n in labels}
        return {"skate_cm_per_frame": 0.0, "sliding_fraction": 0.0, "contact_fraction": 0.0, "per_joint_cm_per_frame": zeros}
    h = 0.5 * (h_frame[1:] + h_frame[:-1])  # [F-1, K] height of each frame pair
    d = np.linalg.norm(np.diff(feet[..., :2], axis=0), axis=-1) * (fps / REFERENCE_FPS)
    contact = h < height
    w = 2.0 - np.power(2.0, h / height)
    weighted = np.where(contact, d * w, 0.0)
    n_contact = int(contact.sum())
    per_joint = {
        n: float(weighted[:, k].sum() / max(int(contact[:, k].sum()), 1) * 100.0) for k, n in enumerate(labels)
    }
    return {
        "skate_cm_per_frame": float(weighted.sum() / max(n_contact, 1) * 100.0),
        "sliding_fraction": float((contact & (d > slide)).sum() / max(n_contact, 1)),
        "contact_fraction": float(n_contact / contact.size),
        "per_joint_cm_per_frame": per_joint,
    }


# --- trajectory ------------------------------------------------------------------------


class TrajectoryError(NamedTuple):
    """Horizontal distances, centimetres."""

    mean_cm: float
    max_cm: float
    final_cm: float


def distance_to_polyline(points: np.ndarray, path: np.ndarray) -> np.ndarray:
    """Distance ``[N]`` (same unit as the inputs) of 2D ``points [N, 2]`` to
    the polyline ``path [M, 2]`` (nearest point on any segment; a single
    point path is a point)."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    path = np.asarray(path, dtype=np.float64).reshape(-1, 2)
    if len(path) == 1:
        return np.linalg.norm(pts - path[0], axis=-1)
    a, b = path[:-1], path[1:]  # [S, 2]
    ab = b - a
    len2 = np.maximum(np.sum(ab * ab, axis=-1), 1e-18)
    out = np.empty(len(pts))
    # Chunked so a long clip against a finely sampled path stays small in memory.
    for s in range(0, len(pts), 2048):
        q = pts[s : s + 2048, None, :]  # [n, 1, 2]
        t = np.clip(np.sum((q - a) * ab, axis=-1) / len2, 0.0, 1.0)  # [n, S]
        near = a + t[..., None] * ab
        out[s : s + 2048] = np.min(np.linalg.norm(q - near, axis=-1), axis=1)
    return out


def trajectory_error(root_xy, path_xy) -> TrajectoryError:
    """Mean and max horizontal distance (cm) of ``root_xy [F, 2]`` (m, the
    character root per frame) to the polyline ``path_xy [M, 2]`` (m), and the
    distance (cm) of the last root position to the path's last point."""
    root = np.asarray(root_xy, dtype=np.float64).reshape(-1, 2)
    path = np.asarray(path_xy, dtype=np.float64).reshape(-1, 2)
    if len(root) == 0:
        raise ValueError("trajectory_error needs at least one root position")
    d = distance_to_polyline(root, path)
    return TrajectoryError(
        float(d.mean() * 100.0), float(d.max() * 100.0), float(np.linalg.norm(root[-1] - path[-1]) * 100.0)
    )


# --- jitter ------------------------------------------------------------------------------


def jerk(motion, *, names=None, fps=None, joints=None) -> np.ndarray:
    """Jerk magnitudes ``[F-3, J']`` (m/s³): ``|p[f+3] - 3 p[f+2] + 3 p[f+1]
    - p[f]| * fps^3`` of the world joint positions. ``joints``: names or
    indices to keep (default: every joint but joint 0)."""
    p, jnames, fps = _positions(motion, names, fps)
    if joints is None:
        idx = list(range(1, p.shape[1])) if p.shape[1] > 1 else [0]
    else:
        idx = [jnames.index(j) if isinstance(j, str) else int(j) for j in joints]
    p = p[:, idx]
    if len(p) < 4:
        return np.zeros((0, len(idx)))
    d3 = p[3:] - 3.0 * p[2:-1] + 3.0 * p[1:-2] - p[:-3]
    return np.linalg.norm(d3, axis=-1) * fps**3


def jitter(motion, *, names=None, fps=None, joints=None) -> float:
    """Mean joint jerk, m/s³ (see :func:`jerk`); 0 for fewer than 4 frames."""
    j = jerk(motion, names=names, fps=fps, joints=joints)
    return float(j.mean()) if j.size else 0.0


# --- speed -------------------------------------------------------------------------------


def default_controls(steps: int, speed: float = 1.3, turn_rate: float = np.radians(45.0), fps: float = 30.0):
    """Controls that walk at ``speed`` (m/s) while the heading turns at
    ``turn_rate`` (rad/s): a mix of straight-ish walking and turns, so a
    search-based controller searches about as often as on a path."""
    from .motion_matching import Control

    t = np.arange(steps) / fps
    ang = turn_rate * t
    return [Control(velocity=(speed * np.sin(a), -speed * np.cos(a))) for a in ang]


def ms_per_step(controller, steps: int = 300, *, controls=None, warmup: int = 10, threads: int = 1, reset_kwargs=None) -> float:
    """Mean wall-clock milliseconds per ``controller.step(control)`` over
    ``steps`` steps (after ``warmup`` untimed ones), with torch, BLAS and
    OpenMP limited to ``threads`` threads (restored afterwards).

    ``controls``: one :class:`~.motion_matching.Control` per step (default: a
    1.3 m/s walk whose heading turns 45°/s). The controller is reset first
    (``reset(**reset_kwargs)``) and left wherever the timing ends.
    """
    controls = list(controls) if controls is not None else default_controls(steps + warmup)
    if len(controls) < steps + warmup:
        controls = controls + [controls[-1]] * (steps + warmup - len(controls))
    torch = sys.modules.get("torch")
    old_threads = torch.get_num_threads() if torch is not None else None
    limiter = None
    try:
        from threadpoolctl import threadpool_limits

        limiter = threadpool_limits(limits=threads)
    except ImportError:  # numpy works without it; timings may then use more threads
        pass
    try:
        if torch is not None:
            torch.set_num_threads(threads)
        controller.reset(**(reset_kwargs or {}))
        for c in controls[:warmup]:
            controller.step(c)
        t0 = time.perf_counter()
        for c in controls[warmup : warmup + steps]:
            controller.step(c)
        return (time.perf_counter() - t0) / max(steps, 1) * 1000.0
    finally:
        if torch is not None:
            torch.set_num_threads(old_threads)
        if limiter is not None:
            limiter.restore_original_limits()


def turning_frames(root_vel, yaw_rate, fps: float = 30.0, *, min_speed: float = 0.8, min_yaw_rate: float = 0.4,
                   smooth_seconds: float = 0.5):
    """``(beta [K], omega [K])`` of the frames that walk and turn, for
    :func:`facing_lead`. ``root_vel [F, 2]``: the root's ground velocity
    (m/s) in its own frame (facing -Y, +X to its left: the features'
    ``root_vel``); ``yaw_rate [F]`` (rad/s, + = turning left). Both are
    averaged over ``smooth_seconds`` (a stride's sway left out); a frame
    counts when that speed is at least ``min_speed`` and the yaw rate at
    least ``min_yaw_rate`` either way. ``beta``: the angle (rad) of the
    velocity from the facing, + toward the left."""
    rv = np.asarray(root_vel, dtype=np.float64).reshape(-1, 2)
    w = np.asarray(yaw_rate, dtype=np.float64).reshape(-1)
    from ..filters import running_mean

    n = max(int(round(smooth_seconds * fps)), 1)
    rv, w = running_mean(rv, n), running_mean(w, n)
    beta = np.arctan2(rv[:, 0], -rv[:, 1])
    keep = (np.linalg.norm(rv, axis=1) >= min_speed) & (np.abs(w) >= min_yaw_rate)
    return beta[keep], w[keep]


def facing_lead(betas, omegas) -> float:
    """How far (s) the facing leads the travel direction in turns: the
    least-squares slope ``-sum(beta * omega) / sum(omega^2)`` over the
    frames of :func:`turning_frames` (one array or a list of arrays per
    clip). A body that faces ``lead`` seconds ahead of where it travels has
    ``beta = -lead * omega``; negative = it turns after its path (crabs
    sideways round the corner). NaN without turning frames."""
    b = np.concatenate([np.ravel(x) for x in betas]) if isinstance(betas, (list, tuple)) else np.ravel(betas)
    w = np.concatenate([np.ravel(x) for x in omegas]) if isinstance(omegas, (list, tuple)) else np.ravel(omegas)
    if len(w) == 0:
        return float("nan")
    return float(-np.sum(b * w) / np.sum(w * w))


__all__ = [
    "foot_skate", "trajectory_error", "TrajectoryError", "distance_to_polyline", "jerk", "jitter",
    "ms_per_step", "turning_frames", "facing_lead", "SKATE_HEIGHT", "SLIDE_DISTANCE", "FOOT_JOINTS", "BANDAI_PLANTED_HEIGHT", "REFERENCE_FPS",
]
