"""The crouch: a crouched stretch of a path walk (``crouch@A-B``) and the
crouched gait of a cycle, as a posture layer over the controller's own walk.

The locomotion controller has no crouched data, so the crouch is not
generated: the controller walks the stretch slowly (:func:`crouch_speeds`
asks the path follower for the sneak's speed there) in the user's style,
and :func:`apply_crouch` lowers that walk into a crouch with what
DeepMimic's sneaking walk differs by from its plain walk
(:func:`crouch_layer`): the upper body's mean rotations (lean, head kept
up, arms held closer), the hips' height and their shift back over the
feet. The legs are then re-solved with two-bone IK so every foot stays
exactly where the (already foot-pinned) walk put it: the knees bend to
take the lowered hips, in the walk's own knee plane. Offsets on mean
rotations keep the style's own motion (its arm swing, its sway) on top.

:func:`crouch_weights` says how crouched each frame is (1 inside each
range, smooth ramps outside it); :func:`crouch_cycle` crouches a seamless
loop (the ``crouch`` gait of Bake Walk Cycle), seam kept.

Units: metres, seconds, radians; Blender Z up, the ground the XY plane;
arrays ``[frames, joints, ...]``; the Bandai skeleton of the controller
(``joint_Root`` on the ground, ``Hips`` its child with translations).
Pure Python + NumPy (no bpy).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from ... import ik, rotations
from ...foot_lock import knee_pole
from ...motion import Motion
from ..cleanup import BANDAI_LEGS, knee_angles
from ..inertialize import decay_value
from .clip_bank import clip_on

#: The joints the crouch leans (its learned offsets): hips tilt, spine,
#: neck and head (the sneak leans forward and keeps the head up).
LEAN_JOINTS = ("Hips", "Spine", "Chest", "Neck", "Head")
#: The arm joints (the sneak holds its arms closer, elbows bent). Hands
#: and shoulders are left as they are: the clips' offsets there are under a
#: degree (DeepMimic has no shoulder or wrist joints).
ARM_JOINTS = ("UpperArm_L", "LowerArm_L", "UpperArm_R", "LowerArm_R")
HIPS = "Hips"


@dataclass(frozen=True)
class CrouchConfig:
    """How deep and how fast the crouch is.

    - ``hips_ratio`` (0.75): the crouched hips' height over the walk's
      (every frame's height above the ground is scaled by it, bob
      included). DeepMimic's sneak is 0.80 on its skeleton and 0.81 on the
      controller's; 0.75 is a crouch, not a sneak, and keeps every frame
      of a crouched stretch at or under 80 % of the walking hips height.
    - ``ramp_seconds`` (0.6): the time the body takes to go down before a
      range's start and to come back up after its end (a quintic ramp, so
      the hips start and stop moving with zero speed and acceleration).
    - ``speed`` (None: the sneak clip's own on the controller skeleton,
      :attr:`CrouchLayer.speed`, 0.38 m/s): the walking speed asked for
      inside a range (m/s, the controller's frame).
    - ``lean`` (1.0), ``arms`` (1.0): how much of the sneak's upper-body
      and arm offsets to apply (0: none, the walk's own posture).
    - ``hips_back`` (1.0): how much of the sneak's shift of the hips back
      over the feet (``CrouchLayer.hips_back`` m) to apply.
    - ``margin_m`` (0.2): the range is held this much wider at both ends
      (m along the path): the walk's progress is its smoothed hips' track,
      and the hips themselves sway up to ~0.1 m ahead of it and behind it
      in each step, so without it they rise a step before the range ends.
    """

    hips_ratio: float = 0.75
    ramp_seconds: float = 0.6
    speed: float = None
    lean: float = 1.0
    arms: float = 1.0
    hips_back: float = 1.0
    margin_m: float = 0.2


@dataclass(frozen=True, eq=False)
class CrouchLayer:
    """What the sneak differs by from the walk, on one skeleton.

    ``joints``: the joint names the offsets apply to (:data:`LEAN_JOINTS`
    then :data:`ARM_JOINTS`, those the skeleton has); ``offsets [K, 4]``
    (w, x, y, z): per joint ``inv(mean walk) * mean sneak`` local
    rotation, applied on the right (in the joint's own frame, so the hips'
    heading does not matter); ``hips_ratio``: the sneak's median hips
    height over the walk's; ``hips_back`` (m): how much further back the
    sneak's hips are over the midpoint of its feet than the walk's, along
    the facing; ``speed`` (m/s): the sneak's travel speed; ``knee_flexion
    [2]`` / ``walk_knee_flexion [2]`` (rad): the clips' mean knee flexion
    (left, right), to compare a crouch with."""

    joints: tuple
    offsets: np.ndarray
    hips_ratio: float
    hips_back: float
    speed: float
    knee_flexion: np.ndarray
    walk_knee_flexion: np.ndarray


_LOCK = threading.Lock()
_LAYERS = {}


def mean_rotation(q) -> np.ndarray:
    """The mean ``[4]`` of unit quaternions ``q [F, 4]``: signs put on the
    first frame's hemisphere, averaged, normalised (exact enough for the
    few degrees a clip's joint swings about its mean)."""
    q = np.asarray(q, dtype=np.float64)
    q = q * np.where(np.sum(q * q[:1], axis=-1, keepdims=True) < 0.0, -1.0, 1.0)
    return rotations.normalize(q.mean(axis=0))


def facing(world_pos, names) -> np.ndarray:
    """The body's horizontal facing ``[F, 3]`` (unit, z = 0): square to the
    line from the right hip joint to the left one."""
    left = world_pos[:, names.index(BANDAI_LEGS[0][0])] - world_pos[:, names.index(BANDAI_LEGS[1][0])]
    fwd = np.cross(left, np.array([0.0, 0.0, 1.0]))
    fwd[:, 2] = 0.0
    return ik.unit_vectors(fwd, np.array([0.0, -1.0, 0.0]))


def _hips_over_feet(m: Motion) -> float:
    """Mean distance (m) the hips are ahead of the midpoint of the ankles, along the facing."""
    names = list(m.skeleton.names)
    p = m.world_positions()
    mid = 0.5 * (p[:, names.index(BANDAI_LEGS[0][2])] + p[:, names.index(BANDAI_LEGS[1][2])])
    return float(np.mean(np.sum((p[:, names.index(HIPS)] - mid) * facing(p, names), axis=-1)))


def _hips_height(m: Motion) -> np.ndarray:
    """``[F]`` the hips' height (m) above the ground root."""
    p = m.world_positions()
    return p[:, list(m.skeleton.names).index(HIPS), 2] - p[:, 0, 2]


def _skeleton_key(skeleton) -> tuple:
    return (tuple(skeleton.names), np.asarray(skeleton.offsets).tobytes(),
            np.asarray(skeleton.rest_rotations).tobytes())


def crouch_layer(skeleton, stand: Motion) -> CrouchLayer:
    """The :class:`CrouchLayer` of ``skeleton`` (the controller's): the
    sneak and walk clips retargeted onto its standing pose ``stand`` (one
    frame, ``clip_bank.clip_on``) and compared. Cached per skeleton (names,
    offsets, rest) and pose."""
    key = _skeleton_key(skeleton) + (np.asarray(stand.rotations[0, 1:]).round(9).tobytes(),)
    with _LOCK:
        if key in _LAYERS:
            return _LAYERS[key]
    sneak, walk = clip_on(skeleton, "sneak", stand), clip_on(skeleton, "walk", stand)
    names = list(skeleton.names)
    joints = tuple(n for n in LEAN_JOINTS + ARM_JOINTS if n in names)
    ix = [names.index(n) for n in joints]
    offsets = np.stack([rotations.mul(rotations.inv(mean_rotation(walk.rotations[:, j])),
                                      mean_rotation(sneak.rotations[:, j])) for j in ix])
    hips_xy = sneak.world_positions()[[0, -1], names.index(HIPS), :2]
    travel = float(np.linalg.norm(hips_xy[1] - hips_xy[0]))
    layer = CrouchLayer(
        joints=joints,
        offsets=rotations.canonical(offsets),
        hips_ratio=float(np.median(_hips_height(sneak)) / np.median(_hips_height(walk))),
        hips_back=float(_hips_over_feet(walk) - _hips_over_feet(sneak)),
        speed=float(travel / sneak.duration),
        knee_flexion=knee_angles(sneak).mean(axis=0),
        walk_knee_flexion=knee_angles(walk).mean(axis=0),
    )
    for a in (layer.offsets, layer.knee_flexion, layer.walk_knee_flexion):
        a.flags.writeable = False  # shared by every caller through the cache
    with _LOCK:
        _LAYERS[key] = layer
    return layer


def crouch_speed(layer: CrouchLayer, config: CrouchConfig = CrouchConfig()) -> float:
    """The speed (m/s, the controller's frame) walked inside a range."""
    return float(layer.speed if config.speed is None else config.speed)


# --- how crouched each frame is ------------------------------------------------


def smootherstep(u):
    """``6u^5 - 15u^4 + 10u^3`` of ``u`` clipped to [0, 1]: zero slope and
    curvature at both ends (C2 where it meets 0 and 1)."""
    return 1.0 - decay_value(np.clip(u, 0.0, 1.0))


def _crossing_time(arc, t, level: float, last: bool) -> float:
    """The time (s) ``arc`` reaches ``level``: the first frame at or past it
    (``last``: the last frame at or before it), interpolated with its
    neighbour to the fraction of a frame."""
    if last:
        i = int(np.nonzero(arc <= level)[0][-1])
        j = min(i + 1, len(arc) - 1)
    else:
        j = int(np.nonzero(arc >= level)[0][0])
        i = max(j - 1, 0)
    da = arc[j] - arc[i]
    if i == j or da <= 1e-12:
        return float(t[j] if not last else t[i])
    return float(t[i] + (t[j] - t[i]) * np.clip((level - arc[i]) / da, 0.0, 1.0))


def crouch_weights(arc, crouches, fps: float, config: CrouchConfig = CrouchConfig()) -> np.ndarray:
    """How crouched each frame is, ``[F]`` in 0..1, from the walk's progress
    ``arc [F]`` (m along the path, ``PathResult.arc``, in the same metres as
    the ``crouches``' ``start``/``end``) at ``fps``: 1 from the time the
    walk reaches a range's start to the time it leaves its end (and at every
    frame whose arc is inside it; both ends ``config.margin_m`` further
    out), a :func:`smootherstep` ramp of
    ``config.ramp_seconds`` before that (the body is down when the range
    starts) and after it (it stays down to the range's end). A range the
    walk never reaches adds nothing; overlapping ramps take the larger."""
    arc = np.asarray(arc, dtype=np.float64)
    t = np.arange(len(arc)) / float(fps)
    ramp = max(float(config.ramp_seconds), 1e-6)
    w = np.zeros(len(arc))
    margin = max(float(config.margin_m), 0.0)
    for c in crouches:
        start, end = c.start - margin, c.end + margin
        if not np.any(arc >= start) or not np.any(arc <= end):
            continue
        t_in = _crossing_time(arc, t, start, last=False)
        t_out = max(_crossing_time(arc, t, end, last=True), t_in)
        wc = np.where(t < t_in, smootherstep((t - t_in + ramp) / ramp),
                      np.where(t > t_out, smootherstep((t_out + ramp - t) / ramp), 1.0))
        wc[(arc >= start) & (arc <= end)] = 1.0
        w = np.maximum(w, wc)
    return w


# --- the posture -----------------------------------------------------------------


def _joint_scales(layer: CrouchLayer, config: CrouchConfig) -> np.ndarray:
    """``[K]``: each offset's share, ``config.arms`` for the arm joints, ``config.lean`` for the rest."""
    return np.array([config.arms if n in ARM_JOINTS else config.lean for n in layer.joints])


def lean_upper_body(rot, weights, layer: CrouchLayer, names, config: CrouchConfig) -> None:
    """Apply the layer's offsets times ``weights [F]`` to the local
    rotations ``rot [F, J, 4]`` (in place, on the right)."""
    ix = [names.index(n) for n in layer.joints]
    share = _joint_scales(layer, config)
    aa = rotations.to_axis_angle(layer.offsets)[None] * (np.asarray(weights)[:, None, None] * share[None, :, None])
    off = rotations.from_axis_angle(aa)  # [F, K, 4]
    rot[:, ix] = rotations.mul(rot[:, ix], off)


def lowered_hips(world_pos, weights, layer: CrouchLayer, names, config: CrouchConfig) -> np.ndarray:
    """The hips' crouched world positions ``[F, 3]``: their height above
    the ground root scaled by ``1 - w (1 - hips_ratio)`` and moved back
    along the facing by ``w x hips_back``, ``w = weights [F]``."""
    w = np.asarray(weights, dtype=np.float64)
    h = names.index(HIPS)
    hips = world_pos[:, h].copy()
    ground = world_pos[:, 0, 2]
    hips[:, 2] = ground + (hips[:, 2] - ground) * (1.0 - w * (1.0 - config.hips_ratio))
    hips -= (w * config.hips_back * layer.hips_back)[:, None] * facing(world_pos, names)
    return hips


def _solve_legs(rot, src_world, new: Motion, names) -> None:
    """Re-solve both legs' hip, knee and foot rotations (in ``rot``, local,
    in place) of the posture ``new`` so that each ankle and toe is where it
    is in ``src_world`` (``(world rotations, world positions)`` of the input
    walk) and each foot keeps its world orientation; the knee bends toward
    the input's knee (its own leg plane, :func:`~...foot_lock.knee_pole`)."""
    src_rot, src_pos = src_world
    new_rot, new_pos = new.world()
    parents = new.skeleton.parents
    for leg in BANDAI_LEGS:
        h, k, a, t = (names.index(n) for n in leg)
        # The input knee's bend direction, square to its hip-ankle line, one
        # metre off the new leg's middle: a pole carried along as a point
        # would lie behind the lowered hip's leg line for some steps (the
        # line tilts as the hips drop and move back) and flip the knee.
        bend = ik.unit_vectors(knee_pole(src_pos[:, h], src_pos[:, k], src_pos[:, a], src_pos[:, t]) - src_pos[:, k])
        pole = 0.5 * (new_pos[:, h] + src_pos[:, a]) + bend
        q_up, q_low, _ = ik.two_bone_ik(new_pos[:, h], new_pos[:, k], new_pos[:, a], src_pos[:, a], pole)
        up_w = rotations.mul(q_up, new_rot[:, h])
        low_w = rotations.mul(q_low, new_rot[:, k])
        rot[:, h] = rotations.mul(rotations.inv(new_rot[:, parents[h]]), up_w)
        rot[:, k] = rotations.mul(rotations.inv(up_w), low_w)
        rot[:, a] = rotations.mul(rotations.inv(low_w), src_rot[:, a])


def apply_crouch(motion: Motion, weights, layer: CrouchLayer, config: CrouchConfig = CrouchConfig()) -> Motion:
    """``motion`` (the controller's Bandai skeleton, world space, feet
    already pinned) crouched by ``weights [F]`` (0..1,
    :func:`crouch_weights`): the upper body leaned by the layer's offsets,
    the hips lowered and moved back (:func:`lowered_hips`), both legs
    re-solved so the ankles, toes and feet's orientations stay exactly
    where they were (unless a hip is moved out of its leg's reach, which
    the crouch never does: it brings the hips closer to the feet). A frame
    of weight 0 comes back as it was. Returns a new :class:`Motion` with
    per-joint ``translations``."""
    w = np.asarray(weights, dtype=np.float64).reshape(-1)
    if len(w) != motion.num_frames:
        raise ValueError(f"{len(w)} weights for {motion.num_frames} frames")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or np.any(w > 1):
        raise ValueError("crouch weights must be finite and within 0..1")
    sk = motion.skeleton
    names = list(sk.names)
    h = names.index(HIPS)
    src_world = motion.world()
    rot = motion.rotations.copy()
    lean_upper_body(rot, w, layer, names, config)
    trans = motion.local_translations()
    parent = sk.parents[h]
    hips = lowered_hips(src_world[1], w, layer, names, config)
    trans[:, h] = rotations.rotate(rotations.inv(src_world[0][:, parent]), hips - src_world[1][:, parent])
    posed = motion.with_pose(rot, trans)
    _solve_legs(rot, src_world, posed, names)
    # Uncrouched frames exactly as they came (the leg solve's pole fades the
    # foot's direction in on straight legs: a few hundredths of a millimetre).
    rest = w == 0.0
    rot[rest], trans[rest] = motion.rotations[rest], motion.local_translations()[rest]
    return motion.with_pose(rotations.make_continuous(rotations.normalize(rot), axis=0), trans)


def crouch_cycle(loop: Motion, layer: CrouchLayer, config: CrouchConfig = CrouchConfig()) -> Motion:
    """The crouched gait of a seamless loop (``walk_generation.generate_walk_cycle``
    at :func:`crouch_speed`): :func:`apply_crouch` at weight 1 on every
    frame. Each frame is crouched on its own, relative to its own ground
    root and facing, so a loop that repeats translated (root motion) or in
    place stays seamless."""
    out = apply_crouch(loop, np.ones(loop.num_frames), layer, config)
    out.name = f"{loop.name}_crouch" if loop.name else "crouch"
    return out


# --- the speeds along the path ----------------------------------------------------


def _arc_knots(points) -> np.ndarray:
    return np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(points, axis=0), axis=1))])


def crouch_share(s, crouches, ramps) -> np.ndarray:
    """``[M]`` in 0..1 at arcs ``s``: 1 inside each range, falling linearly
    to 0 over ``ramps[i] = (before m, after m)`` outside range ``i``."""
    s = np.asarray(s, dtype=np.float64)
    c = np.zeros(len(s))
    for r, (before, after) in zip(crouches, ramps):
        up = np.clip((s - (r.start - before)) / max(before, 1e-9), 0.0, 1.0)
        down = np.clip(((r.end + after) - s) / max(after, 1e-9), 0.0, 1.0)
        c = np.maximum(c, np.minimum(up, down))
    return c


def crouch_speeds(points_xy, speeds, crouches, layer: CrouchLayer, config: CrouchConfig = CrouchConfig(),
                  scale: float = 1.0):
    """``(points [M, 2], speeds [M])`` for the path follower: the path
    ``points_xy [N, 2]`` (distinct points, m) with points inserted at each
    range's start and end and at its ramp's far ends, and a speed per point
    (m/s): ``speeds`` (a number or ``[N]``, the walk's, already clamped
    to the style) outside the ranges, :func:`crouch_speed` x ``scale``
    inside them, linear in between. ``path_follow.speed_profile``
    interpolates a per-point speed linearly along the arc length to the
    next point, so this is the profile asked for; its ramp is the distance
    walked while slowing over ``config.ramp_seconds`` (the time the body
    takes to go down), so the walk is at the crouch's speed when the range
    starts. ``crouches`` and the points are in the same metres (world:
    ``scale`` = the rig's legs over the controller's; the controller's
    frame: 1)."""
    p = np.asarray(points_xy, dtype=np.float64).reshape(-1, 2)
    base = np.broadcast_to(np.asarray(speeds, dtype=np.float64), (len(p),)).copy()
    knots = _arc_knots(p)
    if not crouches:
        return p.copy(), base
    v_c = crouch_speed(layer, config) * float(scale)
    ramp = float(config.ramp_seconds)
    ramps = [(ramp * 0.5 * (np.interp(c.start, knots, base) + v_c), ramp * 0.5 * (np.interp(c.end, knots, base) + v_c))
             for c in crouches]
    wanted = np.clip([x for c, (b, a) in zip(crouches, ramps) for x in (c.start - b, c.start, c.end, c.end + a)],
                     0.0, knots[-1])
    # Arcs within 0.1 mm of a path point use that point (the follower drops
    # repeated points, so a duplicate would misalign the speeds).
    extra = np.sort(wanted[np.min(np.abs(wanted[:, None] - knots[None]), axis=1) >= 1e-4])
    extra = extra[np.concatenate([[True], np.diff(extra) >= 1e-4])] if len(extra) else extra
    s = np.concatenate([knots, extra])
    order = np.argsort(s, kind="stable")
    s = s[order]
    inserted = np.stack([np.interp(extra, knots, p[:, 0]), np.interp(extra, knots, p[:, 1])], axis=1)
    pts = np.concatenate([p, inserted])[order]  # the drawn points exactly, the new ones on their segments
    share = crouch_share(s, crouches, ramps)
    return pts, (1.0 - share) * np.interp(s, knots, base) + share * v_c


__all__ = ["LEAN_JOINTS", "ARM_JOINTS", "CrouchConfig", "CrouchLayer", "crouch_layer", "crouch_speed", "mean_rotation",
           "facing", "smootherstep", "crouch_weights", "lean_upper_body", "lowered_hips",
           "apply_crouch", "crouch_cycle", "crouch_share", "crouch_speeds"]
