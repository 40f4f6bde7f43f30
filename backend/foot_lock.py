"""Foot locks and the two-bone leg solve, shared by retargeting
(:mod:`.retarget`: the legs phase), the locomotion cleanup
(:func:`~.locomotion.cleanup.pin_feet`) and, through it, gesture standing
(:func:`~.gesture.standing.plant_feet`).

- Locks: :func:`lock_weights` (retargeting: a smoothstep weight and the
  anchor frame, the first frame of the nearest contact run) and
  :func:`lock_runs` / :func:`lock_offsets` (the cleanup: a lock per contact
  run at its median position, eased in and out with a quintic Hermite).
- Swing: :func:`swing_lift` keeps a foot above a cone around its footholds.
- Leg: :func:`knee_pole` / :func:`leaning_pole` (the animated
  leg's plane: the cleanup's, retargeting's), :func:`ease_knee_snaps`
  (bounded knee speed) and :func:`solve_leg`, the analytic two-bone solve of
  :mod:`.ik` with either its own soft reach or a reach eased here.

Units: metres, seconds, radians; Blender Z up. Arrays ``[F, ...]``.
"""

from __future__ import annotations

import numpy as np

from . import ik
from .foot_contacts import mask_of_runs, runs
from .locomotion.inertialize import decay_curvature, decay_slope, decay_value


def segments(c: np.ndarray):
    """``[(start, stop)]`` of runs where ``c`` is set (> 0.5; stop exclusive)."""
    return list(zip(*runs(np.asarray(c) > 0.5)))


def smoothstep(x):
    """``3x^2 - 2x^3`` of ``x`` clipped to [0, 1]: an ease with zero slope at both ends."""
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def lock_weights(mask, ramp_frames):
    """Blend weights ``[F]`` and anchor frames ``[F]`` (int) for one foot's
    contact ``mask [F]``: frames of a contact run and ``ramp_frames`` frames
    on either side (smoothstep blend) take the first frame of the nearest run
    as anchor."""
    f = len(mask)
    frames = np.arange(f)
    if not mask.any():
        return np.zeros(f), frames
    s, _ = runs(mask)
    prev_c = np.maximum.accumulate(np.where(mask, frames, -1))
    next_c = np.minimum.accumulate(np.where(mask, frames, f)[::-1])[::-1]
    d_prev = np.where(prev_c >= 0, frames - prev_c, f)
    d_next = np.where(next_c < f, next_c - frames, f)
    nearest = np.where(d_next < d_prev, next_c, prev_c)
    run = np.clip(np.searchsorted(s, nearest, side="right") - 1, 0, len(s) - 1)
    dist = np.minimum(d_prev, d_next).astype(np.float64)
    return smoothstep(1.0 - dist / max(ramp_frames, 1)), s[run]


def lock_runs(pos, contact, *, hip=None, to_end=None, reach=None, max_slide: float = 0.25, height_q: float = 20.0):
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
    for s, e in segments(contact):
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
            good = [(a + s, b + s) for a, b in segments(~bad)]
            if not good:
                lock = None
                break
            # (a run that ends the clip keeps its end: the standing pose)
            ends = [r for r in good if final and r[1] == e]
            s, e = ends[0] if ends else max(good, key=lambda r: r[1] - r[0])
        if lock is not None and e - s >= 1:
            out.append((s, e, lock))
    return out


def lock_offsets(pos, contact, nb: float, **lock_kw):
    """Per frame ``(offset [F, 3], weight [F])``: where a locked joint should
    move from its animated position ``pos [F, 3]`` (``lock_kw``: see
    :func:`lock_runs`).

    Inside a lock the offset puts the joint exactly on it (weight 1). Out of
    a lock the offset eases from what the lock needed to zero over ``nb``
    frames (or the whole gap to the next lock, when shorter) with a quintic
    Hermite that matches the offset's slope and curvature at the lock's edge:
    the shown joint leaves its lock and arrives at the next one with zero
    velocity and acceleration, so there is no jerk at lift-off or touch-down
    and the low frames around a step move slowly, as in mocap. The weight
    eases the same way (the value basis) and tells how locked the joint is."""
    f = len(pos)
    runs = lock_runs(pos, contact, **lock_kw)
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


def ramp(x, k: float):
    """Smooth ``max(x, 0)``: exactly 0 for ``x <= 0`` and ``x - k / 2`` for
    ``x >= k``, the integral of a smoothstep in between, so the result has
    continuous first and second derivatives (no jerk where it starts)."""
    x = np.asarray(x, dtype=np.float64)
    u = np.clip(x / k, 0.0, 1.0)
    return np.where(x >= k, x - 0.5 * k, k * u**3 * (1.0 - 0.5 * u))


def swing_lift(xy, z, runs, floor: float, *, slope: float, clearance: float, margin: float = 0.0, knee: float = 0.015,
               landing_slope: float = None):
    """Lift ``[F]`` (m, >= 0) that keeps a joint off the floor while it
    travels between footholds: the joint at ``xy [F, 2]``, ``z [F]`` must be
    at least ``slope`` times its horizontal distance to the nearest foothold
    (the lock before or after it, ``runs`` of :func:`lock_runs`) above
    ``floor`` (m), less ``margin`` (so there is no lift on and right next to
    a foothold) and at most ``clearance`` (m) above it.

    Why: a network trained on mocap regresses toward the mean swing, so its
    feet skim the floor (toe clearance ~1-3 cm against ~6 cm in the data) and
    glide in to touch-down: skating that no lock can remove, because the foot
    is not in contact yet. Raising it along this cone turns the glide into a
    step that leaves and lands on its foothold. Both the cone and the limit
    are smoothed over ``knee`` (m, :func:`ramp`), so the lift has no kink.
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
    locked = mask_of_runs(runs, f)
    rise = np.where(np.isfinite(d_prev), slope * np.where(np.isfinite(d_prev), d_prev, 0.0), np.inf)
    fall = np.where(np.isfinite(d_next), land * np.where(np.isfinite(d_next), d_next, 0.0), np.inf)
    cone = np.where(locked, 0.0, np.minimum(rise, fall)) - margin
    cone = clearance - ramp(clearance - cone, knee)
    lift = ramp(cone - (z - floor), knee)
    if runs[-1][1] == f:
        # The clip ends standing on this foothold: no lift at all there (the
        # ramp's millimetre on a foot at floor level bends a straight
        # standing knee by several degrees).
        lift[runs[-1][0]:] = 0.0
    return lift


def knee_pole(hip, knee, ankle, toe, straight: float = 0.03):
    """Knee pole ``[F, 3]`` from the current pose: the knee pushed further
    along its own offset from the hip-ankle line, so the solved knee bends
    in the animated leg's plane (target = animated ankle gives the animated
    knee back). Only where that offset is under ``straight`` (m), an almost
    straight leg whose plane is ill-defined, is the foot's forward direction
    faded in so the knee still bends forward, not sideways."""
    axis = ankle - hip
    axis = axis / np.maximum(np.sqrt((axis * axis).sum(-1, keepdims=True)), 1e-9)
    rel = knee - hip
    perp = rel - (rel * axis).sum(-1, keepdims=True) * axis
    fwd = toe - ankle
    fwd[..., 2] = 0.0
    fwd /= np.maximum(np.sqrt((fwd * fwd).sum(-1, keepdims=True)), 1e-9)
    fade = smoothstep(1.0 - np.sqrt((perp * perp).sum(-1, keepdims=True)) / straight)
    return knee + perp + straight * fade * fwd


def leaning_pole(root, mid, end, forward, lean: float = 0.02):
    """Pole ``[F, 3]`` of a two-bone chain for retargeting (knees and
    elbows): one metre from the middle joint along its offset from the
    root-end line (the transferred limb's plane), leaning toward ``forward
    [F, 3]`` (unit: the knee's forward axis, the elbow's backward one) by
    ``lean`` x the upper bone's length, so a straight limb still bends the
    right way. (:func:`knee_pole` is the cleanup's: it fades the foot's
    direction in only where the leg is almost straight.)"""
    along = ik.unit_vectors(end - root)
    bend = (mid - root) - np.sum((mid - root) * along, -1, keepdims=True) * along
    return mid + ik.unit_vectors(bend + lean * np.linalg.norm(mid - root, axis=-1, keepdims=True) * forward)


def ease_knee_snaps(dist, l1, l2, fps: float, max_speed: float):
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




def solve_leg(hip, knee, ankle, target, pole, *, soft, knee_speed: float = None, fps: float = None):
    """Two-bone IK of a leg (``hip``, ``knee``, ``ankle`` ``[F, 3]``, m) so the
    ankle reaches ``target [F, 3]``, the knee bending toward ``pole [F, 3]``:
    ``(q_up, q_low, reached)``, world-space delta rotations and where the
    ankle ends (see :func:`~.ik.two_bone_ik`).

    ``soft``: the fraction of the leg length (a number or ``[F]``) where the
    reach starts being compressed (:func:`~.ik.soft_reach`).
    ``knee_speed``: None lets the solver soften the reach itself
    (retargeting); a number (rad/s, ``inf`` for no bound) computes the reach
    here, eases the knee's fast changes (:func:`ease_knee_snaps` at ``fps``)
    and has the solver reach it exactly (the cleanup)."""
    if knee_speed is None:
        return ik.two_bone_ik(hip, knee, ankle, target, pole, soft=soft)
    l1, l2 = np.linalg.norm(knee - hip, axis=-1), np.linalg.norm(ankle - knee, axis=-1)
    # The reach the solver would give (soft roll-off, then its clamp) ...
    to_target = target - hip
    dist = np.linalg.norm(to_target, axis=-1)
    reach = np.clip(ik.soft_reach(dist, l1 + l2, soft, ik.MAX_REACH),
                    np.abs(l1 - l2) + 1e-6, ik.MAX_REACH * (l1 + l2))
    # ... with fast knee changes eased; the solver then reaches it exactly.
    if np.isfinite(knee_speed):
        reach = ease_knee_snaps(reach, l1, l2, fps, knee_speed)
    solve_to = hip + to_target * (reach / np.maximum(dist, 1e-9))[:, None]
    return ik.two_bone_ik(hip, knee, ankle, solve_to, pole)
