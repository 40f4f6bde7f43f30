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
- **Swing lift** (:func:`~..foot_lock.swing_lift`): between footholds the foot is kept
  above a cone around them (``swing_slope`` x the distance to the nearest,
  up to ``swing_clearance``): the network's swing skims the floor and glides
  into touch-down, skate that no lock can remove.
- **Swing pitch** (optional, :func:`~.swing_pitch.pitch_swing`): the swinging
  foot's pitch follows the mocap's profile (toe-off, heel strike, roll to
  flat) instead of the network's flat landing.
- **IK**: the legs are re-solved with analytic two-bone IK
  (:func:`~..ik.two_bone_ik`), knee pole in the animated leg's plane
  (:func:`~..foot_lock.knee_pole`), reach softened with :func:`~..ik.soft_reach` so the knee
  straightens gradually instead of popping, and the knee's speed bounded
  (:func:`~..foot_lock.ease_knee_snaps`): where a lock at the edge of reach would snap
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
from .. import rotations
from ..foot_contacts import close_gaps, floor_heights, heights_above_floor
from ..foot_lock import knee_pole, lock_offsets, ramp, swing_lift
from ..foot_lock import solve_leg as solve_leg_ik
from ..motion import Motion
from . import features
from .swing_pitch import PitchTiming, airborne, pitch_swing

#: Leg joints of the Bandai skeleton: (hip, knee, ankle, toe) per side.
BANDAI_LEGS = (
    ("UpperLeg_L", "LowerLeg_L", "Foot_L", "Toes_L"),
    ("UpperLeg_R", "LowerLeg_R", "Foot_R", "Toes_R"),
)
#: Height (m) under which a foot joint counts in :func:`planted_skate` (the issue's H).
SKATE_HEIGHT = 0.033


@dataclass(frozen=True)
class StanceConfig:
    """How :func:`stance_contacts` finds planted feet. Metres, m/s, frames.

    - ``height``, ``speed``: detection's "low and slow" (a joint below
      ``height`` over its floor moving slower than ``speed``).
    - ``max_height``: a predicted contact counts only below this height over
      the joint's floor (a probability that lingers as the foot lifts must
      not lock it in the air).
    - ``max_gap``: flickers of up to this many frames are bridged;
      ``min_run``: shorter runs are dropped.
    """

    height: float = 0.04
    speed: float = 0.3
    max_height: float = 0.08
    max_gap: int = 2
    min_run: int = 3


def stance_contacts(world_pos, names, fps: float, predicted=None, joints=features.CONTACT_JOINTS,
                    config: StanceConfig = StanceConfig()) -> np.ndarray:
    """Contacts ``[F, K]`` (0/1) of ``joints`` for pinning, from world
    positions ``[F, J, 3]`` (m) of the joints ``names``.

    Without ``predicted`` they are detected (:func:`~.features.foot_contacts`:
    low and slow, with hysteresis). With ``predicted [F, K]`` (a controller's
    contact probabilities) a joint is in contact where the model says so
    (> 0.5) and the joint is really near its floor (below
    ``config.max_height``), or where detection finds it low and slow though
    the model is late (heights from each joint's floor, its 1st-percentile
    height in the clip). Flickers are bridged and short runs dropped
    (:class:`StanceConfig`)."""
    cfg = config
    height, speed, max_height, max_gap, min_run = cfg.height, cfg.speed, cfg.max_height, cfg.max_gap, cfg.min_run
    det = features.foot_contacts(world_pos, names, fps, joints=joints, height=height, speed=speed) > 0.5
    if predicted is None:
        c = det
    else:
        pred = np.asarray(predicted, dtype=np.float64)
        if pred.shape != det.shape:
            raise ValueError(f"predicted contacts must be {det.shape}, got {pred.shape}")
        ix = [list(names).index(n) for n in joints]
        low = heights_above_floor(world_pos[:, ix, 2], 1.0) < max_height
        c = ((pred > 0.5) & low) | det
    return close_gaps(c, max_gap, min_run).astype(np.float32)


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
      :func:`~..foot_lock.swing_lift`. 0 turns the lift off. ``swing_landing_slope``
      (None: ``swing_slope``) is the cone's slope toward the next foothold.
    - ``feet_smoothing`` (s): the wanted ``feet`` positions are smoothed over
      time with a Gaussian of this standard deviation (zero lag, the clip is
      whole): a network's per-frame positions carry frame-to-frame noise
      that would show as jitter.
    - ``knee_speed`` (rad/s): the fastest the solved knee may flex or
      straighten; where the IK would go faster the leg bends a little more
      (:func:`~..foot_lock.ease_knee_snaps`). The default, 18 degrees per frame at 30
      fps, is just above the fastest knee in the Bandai mocap (17.4);
      ``inf`` turns it off.
    - ``swing_pitch``: None (the animated foot's pitch) or ``(walk, run)``
      relative pitch profiles (radians, + = toe down, at uniform phases of
      the flight from toe-off to heel strike; None for a gait left alone):
      the swinging foot's pitch is set to the stance pitch plus the profile,
      with a ``swing_roll_seconds`` roll to flat on the ankle lock after heel
      strike (:func:`~.swing_pitch.pitch_swing`). Walk Along Path passes the
      style's profiles from the training mocap
      (``presets/locomotion_swing_pitch.json``).
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
    swing_pitch: tuple = None
    swing_roll_seconds: float = 0.1


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


def _one_leg_targets(pos, leg, side: int, contacts, floors, nb: float, fps: float, cfg: PinConfig):
    """``(ankle target [F, 3], toe target [F, 3], chain length [F], ankle
    lock weight [F])`` of one leg: its locks, blends and swing lift."""
    h, k, a, t = leg
    hip, knee, ankle, toe = pos[:, h], pos[:, k], pos[:, a], pos[:, t]
    chain = np.linalg.norm(knee - hip, axis=-1) + np.linalg.norm(ankle - knee, axis=-1)
    kw = dict(hip=hip, reach=cfg.release_reach * chain, max_slide=cfg.max_slide)
    # Ankle lock, then the toe lock relative to where the foot lands after it.
    off_a, w_a, runs_a = lock_offsets(ankle, contacts[:, 2 * side], nb, **kw)
    off_t, _, runs_t = lock_offsets(toe + off_a, contacts[:, 2 * side + 1], nb, to_end=toe - ankle, **kw)
    # A planted ankle turns the foot to reach the toe lock; a free ankle is
    # carried along by it (the foot keeps its animated orientation).
    target = ankle + off_a + (1.0 - w_a)[:, None] * off_t
    toe_target = toe + off_a + off_t
    if cfg.swing_slope > 0:
        # The foot is rigid here: lift it by what the ankle or the toe needs.
        lift_a = swing_lift(target[:, :2], target[:, 2], runs_a, floors[2 * side], slope=cfg.swing_slope,
                             clearance=cfg.swing_clearance, landing_slope=cfg.swing_landing_slope)
        lift_t = swing_lift(toe_target[:, :2], toe_target[:, 2], runs_t, floors[2 * side + 1], slope=cfg.swing_slope,
                             clearance=cfg.swing_clearance, landing_slope=cfg.swing_landing_slope)
        lift = lift_t + ramp(lift_a - lift_t, 0.01)  # a smooth max of the two
        target[:, 2] += lift
        toe_target[:, 2] += lift
    if cfg.swing_pitch is not None:
        target, toe_target = pitch_swing(target, toe_target, runs_a, runs_t, airborne(contacts), cfg.swing_pitch,
                                         floors[2 * side:2 * side + 2], fps,
                                         PitchTiming(roll_seconds=cfg.swing_roll_seconds))
    return target, toe_target, chain, w_a


def _leg_targets(pos, legs, contacts, floors, nb: float, fps: float, cfg: PinConfig) -> list:
    """Per leg ``(ankle target, toe target, chain length)``, the feet kept
    apart sideways."""
    out = [_one_leg_targets(pos, leg, side, contacts, floors, nb, fps, cfg) for side, leg in enumerate(legs)]
    if cfg.feet_apart > 0:
        left = pos[:, legs[0][0], :2] - pos[:, legs[1][0], :2]
        left = left / np.maximum(np.linalg.norm(left, axis=1, keepdims=True), 1e-9)
        _keep_feet_apart([[o[0], o[1], o[3]] for o in out], left, cfg.feet_apart, fps)
    return [o[:3] for o in out]


def _solve_leg(rot, world_rot, world_pos, parents, leg, goal, fps: float, cfg: PinConfig) -> None:
    """Re-solve one leg's hip, knee and foot rotations (in ``rot``, local,
    in place) so the ankle reaches the goal's target (reach softened, knee
    speed bounded) and the foot points at its toe target. ``goal``:
    ``(target [F, 3], toe_target [F, 3], chain length m)`` of
    :func:`_leg_targets`."""
    target, toe_target, chain = goal
    h, k, a, t = leg
    hip, knee, ankle, toe = world_pos[:, h], world_pos[:, k], world_pos[:, a], world_pos[:, t]
    extension = np.linalg.norm(ankle - hip, axis=-1) / np.maximum(chain, 1e-9)
    q_up, q_low, _ = solve_leg_ik(hip, knee, ankle, target, knee_pole(hip, knee, ankle, toe),
                                  soft=np.maximum(cfg.soft, extension), knee_speed=cfg.knee_speed, fps=fps)
    up_w = rotations.mul(q_up, world_rot[:, h])
    low_w = rotations.mul(q_low, world_rot[:, k])
    # The foot keeps its animated world orientation, turned so that the toe
    # lies from the ankle where the toe target lies from the ankle target
    # (a toe lock's weighted share, or the wanted feet's direction).
    turn = rotations.between_vectors(toe - ankle, toe_target - target)
    foot_w = rotations.mul(turn, world_rot[:, a])
    parent_w = world_rot[:, parents[h]] if parents[h] >= 0 else rotations.identity((len(rot),))
    rot[:, h] = rotations.mul(rotations.inv(parent_w), up_w)
    rot[:, k] = rotations.mul(rotations.inv(up_w), low_w)
    rot[:, a] = rotations.mul(rotations.inv(low_w), foot_w)


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
    floors = floor_heights(goal_pos[:, ix, 2], 1.0)
    legs = _leg_chains(names, sk.parents, cfg)
    targets = _leg_targets(goal_pos, legs, contacts, floors, cfg.blend_seconds * motion.fps, motion.fps, cfg)
    rot = motion.rotations.copy()
    for leg, goal in zip(legs, targets):
        _solve_leg(rot, world_rot, world_pos, sk.parents, leg, goal, motion.fps, cfg)
    translations = None if motion.translations is None else motion.translations.copy()
    # In place (rot is this function's copy): the same numbers without two more copies of the clip.
    return motion.with_pose(rotations.normalize_continuous_in_place(rot), translations)


def foot_floors(motion: Motion, joints=features.CONTACT_JOINTS) -> np.ndarray:
    """Floor height ``[K]`` of each joint: its 1st-percentile height (m)."""
    ix = [list(motion.skeleton.names).index(n) for n in joints]
    return floor_heights(motion.world_positions()[:, ix, 2], 1.0)


def planted_skate(motion: Motion, contacts, joints=features.CONTACT_JOINTS, height: float = SKATE_HEIGHT, floors=None) -> float:
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
        floors = floor_heights(p[..., 2], 1.0)
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


__all__ = ["StanceConfig", "PinConfig", "pin_feet", "stance_contacts", "planted_skate", "foot_floors", "knee_angles", "BANDAI_LEGS", "SKATE_HEIGHT"]
