"""Foot-contact cleanup: pin planted feet with leg IK, and measure foot skate.

:func:`pin_feet` works on any :class:`Motion` of the Bandai skeleton
(controller output, mocap, a loop):

- **Contacts** (:func:`stance_contacts`): a controller's *predicted* contact
  probabilities where it gives them (kept only where the joint is near its
  floor), together with detection (low and slow), flickers bridged.
- **Locks**: each contact run locks its joint at the run's median horizontal
  position and its planted height. Runs are cut where the leg cannot reach
  the lock or the animation has slid too far from it.
- **Blends**: out of a lock the correction eases to zero (and into the next
  lock from zero) with a quintic Hermite that matches the correction's
  velocity and acceleration at the lock's edge over ``blend_seconds``, so a
  foot leaves and lands at zero speed with no jerk.
- **Swing lift** (:func:`_swing_lift`): between footholds the foot is kept
  above a cone around them (``swing_slope`` x the distance to the nearest,
  up to ``swing_clearance``): the network's swing skims the floor and glides
  into touch-down, skate that no lock can remove.
- **IK**: the legs are re-solved with analytic two-bone IK
  (:func:`~..ik.two_bone_ik`), knee pole in the animated leg's plane
  (:func:`_pole`), reach softened with :func:`~..ik.soft_reach` so the knee
  straightens gradually instead of popping, and the knee's speed bounded
  (:func:`_ease_knee_snaps`): where a lock at the edge of reach would snap
  the leg straight in a frame, it bends a little more instead.

Contacts are per joint, in :data:`~.features.CONTACT_JOINTS` order
(``Foot_L, Toes_L, Foot_R, Toes_R``): the ankle lock follows the ``Foot_*``
contact (heel strike to heel off), the toe lock the ``Toes_*`` contact (flat
foot to toe off). While only the toe is planted the whole foot is moved so
the toe stays put (the foot keeps its animated orientation, so it rolls about
the toe); while both are, the foot bone is turned toward the locked toe.

:func:`planted_skate` measures what pinning fixes: the issue's
height-weighted horizontal foot displacement (see
:func:`~.metrics.foot_skate`) restricted to joints in contact, with heights
from each joint's floor (its 1st-percentile height in the clip), because
Bandai's foot joints sit 4-12 cm above the sole.

Units: metres, seconds; Blender Z-up.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import ik
from .. import rotations as R
from ..motion import Motion
from . import features as FT
from .inertialize import decay_curvature, decay_slope, decay_value

#: Leg joints of the Bandai skeleton: (hip, knee, ankle, toe) per side.
BANDAI_LEGS = (
    ("UpperLeg_L", "LowerLeg_L", "Foot_L", "Toes_L"),
    ("UpperLeg_R", "LowerLeg_R", "Foot_R", "Toes_R"),
)
#: Height (m) under which a foot joint counts in :func:`planted_skate` (the issue's H).
SKATE_HEIGHT = 0.033


def _smoothstep(x):
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def _segments(c: np.ndarray):
    """``[(start, stop)]`` of runs where ``c`` is set (stop exclusive)."""
    c = np.concatenate([[False], np.asarray(c) > 0.5, [False]])
    d = np.diff(c.astype(np.int8))
    return list(zip(np.nonzero(d == 1)[0], np.nonzero(d == -1)[0]))


def _close_gaps(c: np.ndarray, max_gap: int, min_run: int) -> np.ndarray:
    """Boolean ``c [F]`` with gaps of at most ``max_gap`` frames between runs
    filled (a contact that flickers off for a frame is one contact) and runs
    shorter than ``min_run`` frames dropped (too short to be a footstep)."""
    c = np.asarray(c, dtype=bool).copy()
    runs = _segments(c)
    for (_, e), (s, _) in zip(runs[:-1], runs[1:]):
        if s - e <= max_gap:
            c[e:s] = True
    for s, e in _segments(c):
        if e - s < min_run:
            c[s:e] = False
    return c


def stance_contacts(world_pos, names, fps: float, predicted=None, joints=FT.CONTACT_JOINTS, *, height: float = 0.04,
                    speed: float = 0.3, max_height: float = 0.08, max_gap: int = 2, min_run: int = 3) -> np.ndarray:
    """Contacts ``[F, K]`` (0/1) of ``joints`` for pinning.

    Without ``predicted`` they are detected (:func:`~.features.foot_contacts`:
    low and slow, with hysteresis). With ``predicted [F, K]`` (a controller's
    contact probabilities) a joint is in contact where the model says so
    (> 0.5) and the joint is really near its floor (below ``max_height`` m:
    a probability that lingers as the foot lifts must not lock it in the
    air), or where detection finds it low and slow though the model is late
    (heights from each joint's floor, its 1st-percentile height in the clip).
    Flickers of up to ``max_gap`` frames are bridged and runs shorter than
    ``min_run`` frames dropped."""
    det = FT.foot_contacts(world_pos, names, fps, joints=joints, height=height, speed=speed) > 0.5
    if predicted is None:
        c = det
    else:
        pred = np.asarray(predicted, dtype=np.float64)
        if pred.shape != det.shape:
            raise ValueError(f"predicted contacts must be {det.shape}, got {pred.shape}")
        ix = [list(names).index(n) for n in joints]
        z = world_pos[:, ix, 2]
        low = z - np.percentile(z, 1.0, axis=0)[None] < max_height
        c = ((pred > 0.5) & low) | det
    return np.stack([_close_gaps(c[:, k], max_gap, min_run) for k in range(c.shape[1])], axis=1).astype(np.float32)


def _lock_runs(pos, contact, *, hip=None, to_end=None, reach=None, max_slide: float = 0.25, height_q: float = 20.0):
    """``[(start, stop, lock [3])]``: one lock per contact run of ``contact``
    for a joint at ``pos [F, 3]``.

    The lock sits at the run's median horizontal position (the animated
    joint slides during the run: the median halves the largest correction
    the legs must absorb compared with the first position) and at its planted
    height (``height_q`` percentile of the run's heights, robust to the heel
    lifting before the contact ends). Frames where the lock cannot hold —
    farther than ``max_slide`` (m) from the animated joint, or out of the IK
    chain's reach (``|lock - to_end - hip| > reach``, ``to_end [F, 3]`` the
    offset from the chain's end to the joint) — cut the run: the longest
    stretch of good frames is kept, and its lock recomputed.

    A run that lasts to the clip's last frame locks at that frame's
    position instead, and is not cut for reach (a standing leg is nearly
    straight; the IK's reach limit holds it): a clip that ends standing
    ends exactly in its standing pose (a lock a few cm off would bend the
    straight standing knee by 10-30 degrees to reach it)."""
    out = []
    for s, e in _segments(contact):
        for _ in range(2):
            lock = np.median(pos[s:e], axis=0)
            lock[2] = np.percentile(pos[s:e, 2], height_q)
            final = e == len(pos)
            if final:
                lock = pos[e - 1].copy()
            bad = np.linalg.norm(lock[None, :2] - pos[s:e, :2], axis=-1) > max_slide
            if hip is not None and not final:
                end_target = lock[None] - (0.0 if to_end is None else to_end[s:e])
                bad |= np.linalg.norm(end_target - hip[s:e], axis=-1) > reach[s:e]
            if not np.any(bad):
                break
            good = [(a + s, b + s) for a, b in _segments(~bad)]
            if not good:
                lock = None
                break
            # (a run that ends the clip keeps its end: the standing pose)
            ends = [r for r in good if final and r[1] == e]
            s, e = ends[0] if ends else max(good, key=lambda r: r[1] - r[0])
        if lock is not None and e - s >= 1:
            out.append((s, e, lock))
    return out


def _lock_offsets(pos, contact, nb: float, **lock_kw):
    """Per frame ``(offset [F, 3], weight [F])``: where a locked joint should
    move from its animated position ``pos [F, 3]`` (``lock_kw``: see
    :func:`_lock_runs`).

    Inside a lock the offset puts the joint exactly on it (weight 1). Out of
    a lock the offset eases from what the lock needed to zero over ``nb``
    frames (or the whole gap to the next lock, when shorter) with a quintic
    Hermite that matches the offset's slope and curvature at the lock's edge:
    the shown joint leaves its lock and arrives at the next one with zero
    velocity and acceleration, so there is no jerk at lift-off or touch-down
    and the low frames around a step move slowly, as in mocap. The weight
    eases the same way (the value basis) and tells how locked the joint is."""
    f = len(pos)
    runs = _lock_runs(pos, contact, **lock_kw)
    off = np.zeros((f, 3))
    w = np.zeros(f)
    if not runs:
        return off, w, runs
    # Animated velocity and acceleration per frame (m/frame, m/frame^2).
    vel = np.gradient(pos, axis=0) if f > 1 else np.zeros_like(pos)
    acc = np.gradient(vel, axis=0) if f > 2 else np.zeros_like(pos)
    frames = np.arange(f)
    bounds = [r[0] for r in runs[1:]] + [f + int(nb) + 1]
    prev_ends = [-int(nb) - 2] + [r[1] - 1 for r in runs[:-1]]
    for (s, e, lock), nxt, prev in zip(runs, bounds, prev_ends):
        off[s:e] = lock[None] - pos[s:e]
        w[s:e] = 1.0
        # Ease out after the lock: the shown joint = lock at e - 1 with zero speed.
        n_out = max(min(nb, nxt - (e - 1)), 1.0)
        t = frames[e:min(nxt, f)]
        u = (t - (e - 1)) / n_out
        inside = u < 1.0
        t, u = t[inside], u[inside][:, None]
        o0, d0, a0 = off[e - 1], -vel[e - 1], -acc[e - 1]
        off[t] += decay_value(u) * o0 + decay_slope(u) * n_out * d0 + decay_curvature(u) * n_out**2 * a0
        w[t] += decay_value(u[:, 0])
        # Ease in before the lock, time reversed (the slope changes sign).
        n_in = max(min(nb, s - prev), 1.0)
        t = frames[max(prev + 1, 0):s]
        u = (s - t) / n_in
        inside = u < 1.0
        t, u = t[inside], u[inside][:, None]
        o1, d1, a1 = lock - pos[s], -vel[s], -acc[s]
        off[t] += decay_value(u) * o1 - decay_slope(u) * n_in * d1 + decay_curvature(u) * n_in**2 * a1
        w[t] += decay_value(u[:, 0])
    return off, np.clip(w, 0.0, 1.0), runs


def _ramp(x, k: float):
    """Smooth ``max(x, 0)``: exactly 0 for ``x <= 0`` and ``x - k / 2`` for
    ``x >= k``, the integral of a smoothstep in between, so the result has
    continuous first and second derivatives (no jerk where it starts)."""
    x = np.asarray(x, dtype=np.float64)
    u = np.clip(x / k, 0.0, 1.0)
    return np.where(x >= k, x - 0.5 * k, k * u**3 * (1.0 - 0.5 * u))


def _swing_lift(xy, z, runs, floor: float, *, slope: float, clearance: float, margin: float = 0.0, knee: float = 0.015,
                landing_slope: float = None):
    """Lift ``[F]`` (m, >= 0) that keeps a joint off the floor while it
    travels between footholds: the joint at ``xy [F, 2]``, ``z [F]`` must be
    at least ``slope`` times its horizontal distance to the nearest foothold
    (the lock before or after it, ``runs`` of :func:`_lock_runs`) above
    ``floor`` (m), less ``margin`` (so there is no lift on and right next to
    a foothold) and at most ``clearance`` (m) above it.

    Why: a network trained on mocap regresses toward the mean swing, so its
    feet skim the floor (toe clearance ~1-3 cm against ~6 cm in the data) and
    glide in to touch-down: skating that no lock can remove, because the foot
    is not in contact yet. Raising it along this cone turns the glide into a
    step that leaves and lands on its foothold. Both the cone and the limit
    are smoothed over ``knee`` (m, :func:`_ramp`), so the lift has no kink.
    ``landing_slope`` (None: ``slope``) is the cone's slope toward the next
    foothold: a gentler one brings the foot down over more of the swing, so
    a high lift does not drop it onto a foothold at the edge of reach in the
    last frames (the leg then snaps straight, sweeping the knee)."""
    f = len(z)
    if not runs:
        return np.zeros(f)
    starts = np.array([r[0] for r in runs])
    locks = np.array([r[2][:2] for r in runs])  # [R, 2]
    frames = np.arange(f)
    # The footholds before and after each frame in time (not any foothold
    # nearby: a path that comes back over its own steps still lifts).
    prev = np.searchsorted(starts, frames, side="right") - 1
    nxt = prev + 1
    d_prev = np.where(prev >= 0, np.linalg.norm(xy - locks[np.maximum(prev, 0)], axis=-1), np.inf)
    d_next = np.where(nxt < len(runs), np.linalg.norm(xy - locks[np.minimum(nxt, len(runs) - 1)], axis=-1), np.inf)
    land = slope if landing_slope is None else landing_slope
    locked = np.zeros(f, dtype=bool)
    for s, e, _ in runs:
        locked[s:e] = True
    rise = np.where(np.isfinite(d_prev), slope * np.where(np.isfinite(d_prev), d_prev, 0.0), np.inf)
    fall = np.where(np.isfinite(d_next), land * np.where(np.isfinite(d_next), d_next, 0.0), np.inf)
    cone = np.where(locked, 0.0, np.minimum(rise, fall)) - margin
    cone = clearance - _ramp(clearance - cone, knee)
    lift = _ramp(cone - (z - floor), knee)
    if runs[-1][1] == f:
        # The clip ends standing on this foothold: no lift at all there (the
        # ramp's millimetre on a foot at floor level bends a straight
        # standing knee by several degrees).
        lift[runs[-1][0]:] = 0.0
    return lift


def _pole(hip, knee, ankle, toe, straight: float = 0.03):
    """Knee pole ``[F, 3]`` from the current pose: the knee pushed further
    along its own offset from the hip-ankle line, so the solved knee bends
    in the animated leg's plane (target = animated ankle gives the animated
    knee back). Only where that offset is under ``straight`` (m), an almost
    straight leg whose plane is ill-defined, is the foot's forward direction
    faded in so the knee still bends forward, not sideways."""
    axis = ankle - hip
    axis = axis / np.maximum(np.linalg.norm(axis, axis=-1, keepdims=True), 1e-9)
    rel = knee - hip
    perp = rel - np.sum(rel * axis, axis=-1, keepdims=True) * axis
    fwd = toe - ankle
    fwd[..., 2] = 0.0
    fwd /= np.maximum(np.linalg.norm(fwd, axis=-1, keepdims=True), 1e-9)
    fade = _smoothstep(1.0 - np.linalg.norm(perp, axis=-1, keepdims=True) / straight)
    return knee + perp + straight * fade * fwd


def _ease_knee_snaps(dist, l1, l2, fps: float, max_speed: float):
    """Target distances ``[F]`` (m, hip to ankle, already within reach) such
    that the knee's flexion never changes faster than ``max_speed`` (rad/s):
    the flexion is replaced by the lowest curve at or above it whose slope
    stays within the limit (its upper envelope under cones of that slope),
    so the leg only ever bends more, which it always can. Near full
    extension a few degrees of bend move the foot by millimetres: a foot
    landing on a lock at the edge of reach no longer snaps the knee straight
    in one frame. Frames where the knee is slower keep their distance."""
    cos_flex = np.clip((dist**2 - l1**2 - l2**2) / np.maximum(2.0 * l1 * l2, 1e-12), -1.0, 1.0)
    flex = np.arccos(cos_flex)
    step = max_speed / fps
    env = flex.copy()
    for k in range(1, min(int(np.ceil(np.pi / step)), len(flex) - 1) + 1):
        np.maximum(env[k:], flex[:-k] - k * step, out=env[k:])
        np.maximum(env[:-k], flex[k:] - k * step, out=env[:-k])
    changed = env > flex
    out = np.array(dist, dtype=np.float64, copy=True)
    out[changed] = np.sqrt(np.maximum(l1**2 + l2**2 + 2.0 * l1 * l2 * np.cos(env), 0.0))[changed]
    return out


def _keep_feet_apart(legs_out, left, apart: float, fps: float) -> None:
    """Push the two legs' targets apart sideways (in place) where the ankle
    targets are closer than ``apart`` (m) along ``left [F, 2]`` (unit, the
    hip joints' line) or crossed. The free (swinging) foot takes the push;
    two planted feet share it. The push is smoothed over ~0.1 s so it eases
    in and out. ``legs_out``: per leg ``[target, toe_target, lock weight]``."""
    from ..filters import gaussian_filter1d

    (t_l, tt_l, w_l), (t_r, tt_r, w_r) = legs_out
    sep = np.sum((t_l[:, :2] - t_r[:, :2]) * left, axis=1)
    deficit = np.maximum(apart - sep, 0.0)
    if not deficit.any():
        return
    # A smooth envelope that still covers the deficit at its peaks.
    push = np.maximum(gaussian_filter1d(deficit, 0.1 * fps, mode="nearest"), deficit)
    push = gaussian_filter1d(push, 0.05 * fps, mode="nearest")
    free_l, free_r = 1.0 - w_l, 1.0 - w_r
    total = free_l + free_r
    share_l = np.where(total > 1e-6, free_l / np.maximum(total, 1e-6), 0.5)
    # The share moves from foot to foot as locks begin and end: eased over
    # ~0.1 s, or the push jumps across at a touch-down (a one-frame pop).
    share_l = np.clip(gaussian_filter1d(share_l, 0.1 * fps, mode="nearest"), 0.0, 1.0)
    for arr in (t_l, tt_l):
        arr[:, :2] += (share_l * push)[:, None] * left
    for arr in (t_r, tt_r):
        arr[:, :2] -= ((1.0 - share_l) * push)[:, None] * left


@dataclass(frozen=True)
class PinConfig:
    """How :func:`pin_feet` pins the feet. Metres, seconds, radians.

    - ``foot_joints``, ``toe_joints``, ``hip_joints``, ``knee_joints``: per
      side (left, right); the defaults are the Bandai names.
    - ``blend_seconds``: duration of the ease into and out of a lock
      (shorter when the gap between two locks is).
    - ``soft``: fraction of the leg length where the reach starts being
      compressed (a leg already more extended keeps its own extension).
    - ``release_reach``: a lock is let go (faded out from there) once it is
      farther from the hip than this fraction of the leg length ...
    - ``max_slide`` (m): ... or once the animated foot is this far from it.
    - ``swing_slope``, ``swing_clearance`` (m): between footholds the foot is
      kept at least ``swing_slope`` x its horizontal distance to the nearest
      one above the floor, up to ``swing_clearance``; see
      :func:`_swing_lift`. 0 turns the lift off. ``swing_landing_slope``
      (None: ``swing_slope``) is the cone's slope toward the next foothold.
    - ``feet_smoothing`` (s): the wanted ``feet`` positions are smoothed over
      time with a Gaussian of this standard deviation (zero lag, the clip is
      whole): a network's per-frame positions carry frame-to-frame noise
      that would show as jitter.
    - ``knee_speed`` (rad/s): the fastest the solved knee may flex or
      straighten; where the IK would go faster the leg bends a little more
      (:func:`_ease_knee_snaps`). The default, 18 degrees per frame at 30
      fps, is just above the fastest knee in the Bandai mocap (17.4);
      ``inf`` turns it off.
    - ``feet_apart`` (m): the least sideways distance between the ankles,
      measured along the hip joints' line (left minus right): where the
      pinned feet come closer, or cross, they are pushed apart (the swinging
      foot first; see :func:`_keep_feet_apart`). The network's feet crossed
      by up to 11 cm in sharp turns and stops; the validation mocap's ankles
      stay >= 3.6 cm apart on every rig measured. 0 turns it off.
    """

    foot_joints: tuple = ("Foot_L", "Foot_R")
    toe_joints: tuple = ("Toes_L", "Toes_R")
    hip_joints: tuple = ("UpperLeg_L", "UpperLeg_R")
    knee_joints: tuple = ("LowerLeg_L", "LowerLeg_R")
    blend_seconds: float = 0.4
    soft: float = ik.SOFT_REACH
    release_reach: float = ik.MAX_REACH
    max_slide: float = 0.25
    swing_slope: float = 0.5
    swing_clearance: float = 0.05
    swing_landing_slope: float = None
    feet_smoothing: float = 2.0 / 30.0
    knee_speed: float = float(np.radians(540.0))
    feet_apart: float = 0.05


def _leg_chains(names, parents, cfg: PinConfig) -> list:
    """Per side ``(hip, knee, ankle, toe)`` joint indices, checked to be a chain."""
    legs = []
    for side in range(2):
        h, k, a, t = (names.index(n) for n in (cfg.hip_joints[side], cfg.knee_joints[side], cfg.foot_joints[side],
                                               cfg.toe_joints[side]))
        if parents[k] != h or parents[a] != k or parents[t] != a:
            raise ValueError(f"{names[h]} -> {names[k]} -> {names[a]} -> {names[t]} is not a chain of the skeleton")
        legs.append((h, k, a, t))
    return legs


def _goal_positions(world_pos: np.ndarray, ix, feet, fps: float, cfg: PinConfig) -> np.ndarray:
    """World positions ``[F, J, 3]`` the feet should follow: the pose's own,
    with the four foot joints ``ix`` replaced by the (smoothed) wanted
    ``feet [F, 4, 3]`` when given."""
    if feet is None:
        return world_pos
    f = len(world_pos)
    feet = np.asarray(feet, dtype=np.float64)
    if feet.shape != (f, 4, 3):
        raise ValueError(f"feet must be [frames, 4, 3] (foot_L, toe_L, foot_R, toe_R), got {feet.shape}")
    if cfg.feet_smoothing > 0 and f > 1:
        from ..filters import gaussian_filter1d

        feet = gaussian_filter1d(feet, cfg.feet_smoothing * fps, axis=0, mode="nearest")
    goal_pos = world_pos.copy()
    goal_pos[:, ix] = feet
    return goal_pos


def _one_leg_targets(pos, leg, side: int, contacts, floors, nb: float, cfg: PinConfig):
    """``(ankle target [F, 3], toe target [F, 3], chain length [F], ankle
    lock weight [F])`` of one leg: its locks, blends and swing lift."""
    h, k, a, t = leg
    hip, knee, ankle, toe = pos[:, h], pos[:, k], pos[:, a], pos[:, t]
    chain = np.linalg.norm(knee - hip, axis=-1) + np.linalg.norm(ankle - knee, axis=-1)
    kw = dict(hip=hip, reach=cfg.release_reach * chain, max_slide=cfg.max_slide)
    # Ankle lock, then the toe lock relative to where the foot lands after it.
    off_a, w_a, runs_a = _lock_offsets(ankle, contacts[:, 2 * side], nb, **kw)
    off_t, _, runs_t = _lock_offsets(toe + off_a, contacts[:, 2 * side + 1], nb, to_end=toe - ankle, **kw)
    # A planted ankle turns the foot to reach the toe lock; a free ankle is
    # carried along by it (the foot keeps its animated orientation).
    target = ankle + off_a + (1.0 - w_a)[:, None] * off_t
    toe_target = toe + off_a + off_t
    if cfg.swing_slope > 0:
        # The foot is rigid here: lift it by what the ankle or the toe needs.
        lift_a = _swing_lift(target[:, :2], target[:, 2], runs_a, floors[2 * side], slope=cfg.swing_slope,
                             clearance=cfg.swing_clearance, landing_slope=cfg.swing_landing_slope)
        lift_t = _swing_lift(toe_target[:, :2], toe_target[:, 2], runs_t, floors[2 * side + 1], slope=cfg.swing_slope,
                             clearance=cfg.swing_clearance, landing_slope=cfg.swing_landing_slope)
        lift = lift_t + _ramp(lift_a - lift_t, 0.01)  # a smooth max of the two
        target[:, 2] += lift
        toe_target[:, 2] += lift
    return target, toe_target, chain, w_a


def _leg_targets(pos, legs, contacts, floors, nb: float, fps: float, cfg: PinConfig) -> list:
    """Per leg ``(ankle target, toe target, chain length)``, the feet kept
    apart sideways."""
    out = [_one_leg_targets(pos, leg, side, contacts, floors, nb, cfg) for side, leg in enumerate(legs)]
    if cfg.feet_apart > 0:
        left = pos[:, legs[0][0], :2] - pos[:, legs[1][0], :2]
        left = left / np.maximum(np.linalg.norm(left, axis=1, keepdims=True), 1e-9)
        _keep_feet_apart([[o[0], o[1], o[3]] for o in out], left, cfg.feet_apart, fps)
    return [o[:3] for o in out]


def _solve_leg(rot, world_rot, world_pos, parents, leg, target, toe_target, chain, fps: float, cfg: PinConfig) -> None:
    """Re-solve one leg's hip, knee and foot rotations (in ``rot``, local,
    in place) so the ankle reaches ``target`` (reach softened, knee speed
    bounded) and the foot points at ``toe_target``."""
    h, k, a, t = leg
    hip, knee, ankle, toe = world_pos[:, h], world_pos[:, k], world_pos[:, a], world_pos[:, t]
    extension = np.linalg.norm(ankle - hip, axis=-1) / np.maximum(chain, 1e-9)
    l1, l2 = np.linalg.norm(knee - hip, axis=-1), np.linalg.norm(ankle - knee, axis=-1)
    # The reach the solver would give (soft roll-off, then its clamp) ...
    to_target = target - hip
    dist = np.linalg.norm(to_target, axis=-1)
    reach = np.clip(ik.soft_reach(dist, l1 + l2, np.maximum(cfg.soft, extension), ik.MAX_REACH),
                    np.abs(l1 - l2) + 1e-6, ik.MAX_REACH * (l1 + l2))
    # ... with fast knee changes eased; the solver then reaches it exactly.
    if np.isfinite(cfg.knee_speed):
        reach = _ease_knee_snaps(reach, l1, l2, fps, cfg.knee_speed)
    solve_to = hip + to_target * (reach / np.maximum(dist, 1e-9))[:, None]
    q_up, q_low, reached = ik.two_bone_ik(hip, knee, ankle, solve_to, _pole(hip, knee, ankle, toe))
    up_w = R.mul(q_up, world_rot[:, h])
    low_w = R.mul(q_low, world_rot[:, k])
    # The foot keeps its animated world orientation, turned so that the toe
    # lies from the ankle where the toe target lies from the ankle target
    # (a toe lock's weighted share, or the wanted feet's direction).
    turn = R.between_vectors(toe - ankle, toe_target - target)
    foot_w = R.mul(turn, world_rot[:, a])
    parent_w = world_rot[:, parents[h]] if parents[h] >= 0 else R.identity((len(rot),))
    rot[:, h] = R.mul(R.inv(parent_w), up_w)
    rot[:, k] = R.mul(R.inv(up_w), low_w)
    rot[:, a] = R.mul(R.inv(low_w), foot_w)


def pin_feet(motion: Motion, contacts=None, *, predicted=None, feet=None, config: PinConfig = PinConfig()) -> Motion:
    """``motion`` with planted feet pinned (see the module docstring).

    Args:
        contacts: ``[F, 4]`` (0/1 or probabilities, thresholded at 0.5) for
            ``(foot_L, toe_L, foot_R, toe_R)``, used as given; when None
            they come from :func:`stance_contacts` (detected, or combined
            with ``predicted``).
        predicted: ``[F, 4]`` contact probabilities from a controller (its
            ``contacts`` after each step), same order; see
            :func:`stance_contacts`.
        feet: ``[F, 4, 3]`` world positions (m) where the animation wants
            ``(foot_L, toe_L, foot_R, toe_R)``, when they are not where the
            rotations put them: a controller's predicted joint positions
            (its ``feet``). They replace the forward-kinematics positions as
            what the locks, the lift and the IK start from; the knee's bend
            still comes from the pose. Default: the pose's own.
        config: joints, lock, lift and IK settings (:class:`PinConfig`).

    Returns a new :class:`Motion` (same skeleton, fps, root and
    translations); only the upper leg, lower leg and foot rotations change.
    """
    cfg = config
    sk = motion.skeleton
    names = list(sk.names)
    f = motion.num_frames
    world_rot, world_pos = motion.world()
    joints = (cfg.foot_joints[0], cfg.toe_joints[0], cfg.foot_joints[1], cfg.toe_joints[1])
    ix = [names.index(n) for n in joints]
    goal_pos = _goal_positions(world_pos, ix, feet, motion.fps, cfg)
    if contacts is None:
        contacts = stance_contacts(goal_pos, names, motion.fps, predicted, joints)
    contacts = np.asarray(contacts, dtype=np.float64)
    if contacts.shape != (f, 4):
        raise ValueError(f"contacts must be [frames, 4] (foot_L, toe_L, foot_R, toe_R), got {contacts.shape}")
    # Floor of each foot joint (m): its lowest height in the clip (1st percentile).
    floors = np.percentile(goal_pos[:, ix, 2], 1.0, axis=0)
    legs = _leg_chains(names, sk.parents, cfg)
    targets = _leg_targets(goal_pos, legs, contacts, floors, cfg.blend_seconds * motion.fps, motion.fps, cfg)
    rot = motion.rotations.copy()
    for leg, (target, toe_target, chain) in zip(legs, targets):
        _solve_leg(rot, world_rot, world_pos, sk.parents, leg, target, toe_target, chain, motion.fps, cfg)
    translations = None if motion.translations is None else motion.translations.copy()
    return motion.with_pose(R.make_continuous(R.normalize(rot), axis=0), translations)


def foot_floors(motion: Motion, joints=FT.CONTACT_JOINTS) -> np.ndarray:
    """Floor height ``[K]`` of each joint: its 1st-percentile height (m)."""
    ix = [list(motion.skeleton.names).index(n) for n in joints]
    return np.percentile(motion.world_positions()[:, ix, 2], 1.0, axis=0)


def planted_skate(motion: Motion, contacts, joints=FT.CONTACT_JOINTS, height: float = SKATE_HEIGHT, floors=None) -> float:
    """Skate of the *planted* feet (m per frame): the issue's height-weighted
    horizontal displacement ``|dxy| * (2 - 2^(h / height))`` (zero for
    ``h >= height``), averaged over the pairs of consecutive frames in which
    a joint is in contact at both frames (``contacts [F, K]`` for
    ``joints``). ``h`` is the height above the joint's floor (``floors
    [K]``, default :func:`foot_floors` of ``motion``; pass the source's to
    compare a cleaned clip with it on the same ground).

    The issue's plain metric (:func:`~.metrics.foot_skate`) also counts the
    swing foot: on Bandai mocap the toe joint passes within 1-2 cm of its
    stance height at ~3 m/s mid-swing, which dominates it and which no
    contact cleanup should change; this one isolates what pinning fixes."""
    ix = [list(motion.skeleton.names).index(n) for n in joints]
    p = motion.world_positions()[:, ix]
    if floors is None:
        floors = np.percentile(p[..., 2], 1.0, axis=0)
    if len(p) < 2:
        return 0.0
    hgt = p[..., 2] - np.asarray(floors)[None]
    h = np.maximum(0.5 * (hgt[1:] + hgt[:-1]), 0.0)
    disp = np.linalg.norm(np.diff(p[..., :2], axis=0), axis=-1)
    w = np.where(h < height, 2.0 - np.power(2.0, h / height), 0.0)
    c = np.asarray(contacts) > 0.5
    pairs = c[1:] & c[:-1]
    return float(np.sum(disp * w * pairs) / max(int(pairs.sum()), 1))


def knee_angles(motion: Motion, legs=BANDAI_LEGS) -> np.ndarray:
    """Knee flexion ``[F, 2]`` (radians, 0 = straight) of each leg."""
    names = list(motion.skeleton.names)
    p = motion.world_positions()
    out = []
    for hip, knee, ankle, _ in legs:
        h, k, a = (p[:, names.index(n)] for n in (hip, knee, ankle))
        u, v = k - h, a - k
        c = np.sum(u * v, axis=-1) / np.maximum(np.linalg.norm(u, axis=-1) * np.linalg.norm(v, axis=-1), 1e-12)
        out.append(np.arccos(np.clip(c, -1.0, 1.0)))
    return np.stack(out, axis=1)


__all__ = ["PinConfig", "pin_feet", "stance_contacts", "planted_skate", "foot_floors", "knee_angles", "BANDAI_LEGS", "SKATE_HEIGHT"]
