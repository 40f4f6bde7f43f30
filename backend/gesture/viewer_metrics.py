"""What a viewer sees of a gesture take, as numbers (issue #13).

Every function takes world positions (metres, Blender Z up) sampled at the
take's frame rate, from a baked rig or from backend arrays; none needs bpy.

- :func:`standing_foot_skate`: the ankles' height-weighted horizontal slide
  (cm per frame): ``|Δxy| · (2 − 2^(h/H))`` for heights ``h`` above each
  ankle's own floor (its 1st-percentile height) under ``H`` = 3.3 cm, zero
  above; averaged over all frames and both ankles. A lifted foot (a real
  step) does not count; a foot that pivots or slides on the floor does.
- :func:`longest_frozen_stretch`: the longest run of consecutive frames in
  which no joint moves more than ``FROZEN_MM`` mm from one frame to the next.
- :func:`largest_acceleration`: the worst single-frame acceleration of a
  set of joints (mm/frame²): pops.
- :func:`seam_periodicity`: upper-body acceleration averaged per frame index
  modulo the generator's window stride; the worst phase ÷ the mean over
  phases. A hitch at every window join shows as one phase far above the
  rest (real motion: ~1.1-1.4 on a minute).
- :func:`hand_space` / :func:`hand_space_distance`: wrist height above the
  floor and forward distance in front of the pelvis (along the body's
  facing), and the 1-D Wasserstein distances (cm) of the two to a reference.
- :func:`trunk_lean`: forward lean (degrees) of the pelvis → neck line from
  vertical.
- :func:`gaze_statistics`: fixation durations and saccade rate of gaze
  angles.
"""

from __future__ import annotations

import numpy as np

SKATE_HEIGHT = 0.033     # m: H of the height weighting
FROZEN_MM = 0.3          # mm per frame: below this for every joint, a frame "does not move"
SACCADE_SPEED = np.radians(30.0)  # rad/s: a gaze step faster than this is a saccade (1 deg per frame at 30 fps)


def standing_foot_skate(ankles: np.ndarray, height: float = SKATE_HEIGHT) -> float:
    """``ankles [F, 2, 3]`` (m) → mean height-weighted slide, **cm per frame**."""
    p = np.asarray(ankles, np.float64)
    if len(p) < 2:
        return 0.0
    floor = np.percentile(p[..., 2], 1.0, axis=0)
    h = np.maximum(0.5 * (p[1:, :, 2] + p[:-1, :, 2]) - floor[None], 0.0)
    w = np.where(h < height, 2.0 - np.power(2.0, h / height), 0.0)
    disp = np.linalg.norm(np.diff(p[..., :2], axis=0), axis=-1)
    return float(100.0 * np.mean(disp * w))


def foot_lift(ankles: np.ndarray) -> float:
    """Largest ankle height above its floor (m) over the take: a real step lifts."""
    p = np.asarray(ankles, np.float64)
    return float((p[..., 2] - np.percentile(p[..., 2], 1.0, axis=0)[None]).max())


def foot_hover(ankles: np.ndarray, rest_heights) -> float:
    """Median over frames of the lower ankle's height above its rest-pose
    height (cm): a planted foot sits near 0; a foot held in the air (a lock
    the leg cannot reach, a lift that never lands) shows here, where the
    skate weighting, which ignores lifted feet, cannot see it."""
    p = np.asarray(ankles, np.float64)
    return float(100.0 * np.median((p[..., 2] - np.asarray(rest_heights)[None]).min(axis=1)))


def longest_frozen_stretch(positions: np.ndarray, threshold_mm: float = FROZEN_MM) -> int:
    """``positions [F, J, 3]`` (m) → the longest run of frames (count) in which
    every joint moved less than ``threshold_mm`` since the previous frame
    (a run of k still steps is k + 1 frames that look the same)."""
    p = np.asarray(positions, np.float64)
    if len(p) < 2:
        return len(p)
    still = np.linalg.norm(np.diff(p, axis=0), axis=-1).max(axis=1) < threshold_mm / 1000.0
    best = run = 0
    for s in still:
        run = run + 1 if s else 0
        best = max(best, run)
    return best + 1 if best else 0


def acceleration(positions: np.ndarray) -> np.ndarray:
    """``[F, J, 3]`` → mean joint acceleration magnitude per frame ``[F-2]`` (m/frame²)."""
    p = np.asarray(positions, np.float64)
    return np.linalg.norm(p[2:] - 2 * p[1:-1] + p[:-2], axis=-1).mean(axis=1)


def largest_acceleration(positions: np.ndarray) -> float:
    """``positions [F, J, 3]`` (m) → the largest acceleration of any joint in
    any frame, **mm/frame²**: a pop (an elbow flipping, an arm snapping
    straight) shows here, where averages hide it."""
    p = np.asarray(positions, np.float64)
    if len(p) < 3:
        return 0.0
    return float(1000.0 * np.linalg.norm(p[2:] - 2 * p[1:-1] + p[:-2], axis=-1).max())


def seam_periodicity(positions: np.ndarray, stride: int) -> float:
    """``positions [F, J, 3]`` of the upper body → worst phase ÷ mean of the
    acceleration averaged per frame index modulo ``stride``."""
    a = acceleration(positions)
    n = (len(a) // stride) * stride
    if n < 2 * stride:
        return float("nan")
    per_phase = a[:n].reshape(-1, stride).mean(axis=0)
    return float(per_phase.max() / max(per_phase.mean(), 1e-12))


def off_stride_periodicity(positions: np.ndarray, stride: int, spread: int = 5) -> float:
    """The median of :func:`seam_periodicity` over the periods ``stride - spread
    .. stride + spread`` other than ``stride``: what the statistic reads on
    the same motion where no window joins repeat, the floor a seam at
    ``stride`` shows above (a worst-of-phase-means ratio is above 1 for any
    motion, more so the fewer, larger movements a take has)."""
    periods = [k for k in range(stride - spread, stride + spread + 1) if k != stride and k >= 2]
    return float(np.median([seam_periodicity(positions, k) for k in periods]))


def facing(left_hip: np.ndarray, right_hip: np.ndarray) -> np.ndarray:
    """Unit horizontal forward ``[F, 3]`` from the hip joints (left × up... =
    forward for a Z-up right-handed world: left (+X) × up (+Z) = −Y)."""
    left = np.asarray(left_hip, np.float64) - np.asarray(right_hip, np.float64)
    left[:, 2] = 0.0
    fwd = np.cross(left, np.array([0.0, 0.0, 1.0]))
    return fwd / np.maximum(np.linalg.norm(fwd, axis=-1, keepdims=True), 1e-9)


def hand_space(wrists: np.ndarray, pelvis: np.ndarray, fwd: np.ndarray, floor: float) -> np.ndarray:
    """``wrists [F, 2, 3]``, ``pelvis [F, 3]``, ``fwd [F, 3]`` → ``[F·2, 2]``:
    (height above ``floor``, forward distance from the pelvis), metres."""
    w = np.asarray(wrists, np.float64)
    h = w[..., 2] - floor
    f = np.sum((w - np.asarray(pelvis)[:, None]) * np.asarray(fwd)[:, None], axis=-1)
    return np.stack([h.reshape(-1), f.reshape(-1)], axis=1)


def hand_space_distance(ours: np.ndarray, ref: np.ndarray) -> dict:
    """1-D Wasserstein-1 distances (cm) of wrist height and forward distance
    between two :func:`hand_space` samples, and their sum."""
    from scipy.stats import wasserstein_distance

    dh = 100 * wasserstein_distance(ours[:, 0], ref[:, 0])
    df = 100 * wasserstein_distance(ours[:, 1], ref[:, 1])
    return {"height_cm": float(dh), "forward_cm": float(df), "sum_cm": float(dh + df)}


def trunk_lean(pelvis: np.ndarray, neck: np.ndarray, fwd: np.ndarray) -> np.ndarray:
    """Forward lean ``[F]`` (degrees, + = forward) of the pelvis → neck line."""
    d = np.asarray(neck, np.float64) - np.asarray(pelvis, np.float64)
    f = np.sum(d * fwd, axis=-1)
    return np.degrees(np.arctan2(f, d[:, 2]))


def gaze_statistics(yaw_pitch: np.ndarray, fps: float) -> dict:
    """Gaze angles ``[F, 2]`` (radians) → saccades (frames where the gaze
    turns faster than ``SACCADE_SPEED``, adjacent frames merged), their rate
    (per second), the fixation durations between them (ms: median, mean),
    and the angular range (degrees)."""
    g = np.asarray(yaw_pitch, np.float64)
    speed = np.linalg.norm(np.diff(g, axis=0), axis=-1) * fps
    fast = speed > SACCADE_SPEED
    starts = np.nonzero(fast & ~np.r_[False, fast[:-1]])[0]
    ends = np.nonzero(fast & ~np.r_[fast[1:], False])[0]
    fix = (starts[1:] - ends[:-1]) / fps * 1000.0 if len(starts) > 1 else np.zeros(0)
    dur = (ends - starts + 1) / fps * 1000.0
    return {"saccades_per_s": float(len(starts) / (len(g) / fps)),
            "fixation_ms_median": float(np.median(fix)) if len(fix) else float("nan"),
            "fixation_ms_mean": float(np.mean(fix)) if len(fix) else float("nan"),
            "saccade_ms_median": float(np.median(dur)) if len(dur) else float("nan"),
            "range_deg": float(np.degrees(np.ptp(g, axis=0).max())) if len(g) else 0.0}
