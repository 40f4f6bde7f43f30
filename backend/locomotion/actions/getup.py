"""Get up: a take that starts lying face up or face down and gets up into
the walk (issue #28).

The DeepMimic get-up clips (``clip_bank``: ``getup_faceup`` 114 frames,
``getup_facedown`` 92 frames at 30 fps) start lying and end standing. On
the controller's Bandai skeleton they need three repairs before they meet
the walk:

- **twist**: the retarget aligns bone directions but leaves each bone's
  roll about its own axis (Bandai bones run along local +X) off by a
  constant 50-175 degrees (the two rests' rolls do not correspond). Each
  bone below the hips gets the constant roll that makes the clip's last
  frame agree with the walk's first (:func:`untwist`); joint positions do
  not move, except the shoulders, which hang off the chest's axis. The
  feet also take the walk's pitch (the clip stood on its heels).
- **floor**: DeepMimic's ankle sits lower over its sole than Bandai's, so
  the retargeted stance has the ankles 9 cm and the toes 3 cm in the
  floor, while the lying body rests right. The body is lifted per frame
  just enough that no joint and no sole point (the standing foot's heel and
  toe tip, carried by the foot and toe bones) is below the floor
  (:func:`floor_lift`): lying needs no lift, standing ~9 cm.
- **root**: the clips keep ``joint_Root`` at the origin; the controller's
  root is under the hips facing the heading. The root is put there
  (:func:`reroot`), so the hand-over to the walk moves no root.

:func:`prepend_getup` places the clip rigidly (a yaw about +Z and a shift)
so that its last frame's hips stand where the walk's first frame's do,
facing the same way (the hip line's normal), puts it before the walk, and
inertialises (``inertialize``'s quintic offset decay) from the clip's last
frame into the walk's first ``blend_seconds``. Every per-frame array of
the :class:`~..path_follow.PathResult` grows with it, ready for
``cleanup.pin_feet``.

Units: metres, seconds, radians; Blender's frame (Z up; yaw 0 faces -Y).
Arrays ``[frames, joints, ...]``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ... import rotations
from ...errors import UserError
from ...filters import gaussian_filter1d
from ...motion import Motion
from .. import features
from ..inertialize import decay_slope, decay_value
from ..path_follow import Path2D, PathResult
from .clip_bank import clip_on

#: The lying start poses (``options.START_POSES``) and their clips.
GETUP_CLIPS = {"lying-up": "getup_faceup", "lying-down": "getup_facedown"}
#: The start that needs no get-up.
STANDING = "standing"
#: The Bandai joints of the walk's ``contacts``/``feet`` columns, in order.
FEET_JOINTS = ("Foot_L", "Toes_L", "Foot_R", "Toes_R")
#: The joints whose line (left minus right) gives the body's facing.
HIP_JOINTS = ("UpperLeg_L", "UpperLeg_R")
HIPS = "Hips"
#: Bandai bones run along their local +X: the axis a bone's roll is about.
BONE_AXIS = 0


@dataclass(frozen=True)
class GetUpConfig:
    """How the get-up is fitted to the walk. Metres, seconds, m/s.

    - ``blend_seconds`` (0.4): the inertialised hand-over: the offset
      between the clip's last frame and the walk's first (pose, root and
      hips translation, and their velocity) decays to zero over this much
      of the walk (0.3-0.5 s reads as one movement; shorter pops).
    - ``root_smooth_seconds`` (0.25): Gaussian sigma of the prefix root's
      ground track (the hips' ground position): the hips rock while the
      body rolls and pushes up; a root that jitters with them would swing
      a root-driven rig.
    - ``lift_seconds`` (0.1): Gaussian sigma the floor lift is smoothed
      over (after a running maximum of the same width, so smoothing never
      puts a point back under the floor by more than millimetres).
    - ``contact_height`` (0.03): a foot's sole point (heel or toe tip) is
      planted within this height of the floor ...
    - ``contact_speed`` (0.3): ... and moving slower than this.
    """

    blend_seconds: float = 0.4
    root_smooth_seconds: float = 0.25
    lift_seconds: float = 0.1
    contact_height: float = 0.03
    contact_speed: float = 0.3


def check_start(start: str) -> str:
    """``start`` if it is a known start pose, else a one-line UserError."""
    if start != STANDING and start not in GETUP_CLIPS:
        raise UserError(f"start pose {start!r}: use one of {', '.join((STANDING,) + tuple(GETUP_CLIPS))}")
    return start


# --- the body's facing and placement ---------------------------------------------------


def _index(skeleton, names) -> list:
    order = list(skeleton.names)
    return [order.index(n) for n in names]


def facing_yaw(positions: np.ndarray, skeleton) -> np.ndarray:
    """Yaw (rad; 0 faces -Y) of the body from world joint positions
    ``[..., J, 3]``: the ground normal of the hip line (left hip minus
    right hip turned -90 degrees), which no bone roll changes."""
    left, right = _index(skeleton, HIP_JOINTS)
    lr = positions[..., left, :2] - positions[..., right, :2]
    forward = np.stack([lr[..., 1], -lr[..., 0]], axis=-1)
    return np.arctan2(forward[..., 0], -forward[..., 1])


def place_world(world_rot, world_pos, turn: float, shift) -> tuple:
    """World rotations ``[F, J, 4]`` and positions ``[F, J, 3]`` turned by
    ``turn`` (rad) about the world +Z axis through the origin, then moved by
    ``shift`` ``[3]`` (m)."""
    q = features.yaw_quat(turn)
    return rotations.mul(q, world_rot), rotations.rotate(q, world_pos) + np.asarray(shift, dtype=np.float64)


def locals_from_world(world_rot: np.ndarray, parents) -> np.ndarray:
    """Local rotations ``[F, J, 4]`` (each joint's relative to its parent's
    world rotation) from world rotations ``[F, J, 4]``."""
    local = world_rot.copy()
    for j, p in enumerate(parents):
        if p >= 0:
            local[:, j] = rotations.mul(rotations.inv(world_rot[:, p]), world_rot[:, j])
    return rotations.normalize(local)


def positions_from_world(world_rot, root_pos, local_trans, parents) -> np.ndarray:
    """World positions ``[F, J, 3]`` from world rotations ``[F, J, 4]``,
    the root's position ``[F, 3]`` and the local translations ``[F, J, 3]``
    (each joint's offset in its parent's frame)."""
    pos = np.empty(world_rot.shape[:2] + (3,))
    for j, p in enumerate(parents):
        pos[:, j] = root_pos if p < 0 else pos[:, p] + rotations.rotate(world_rot[:, p], local_trans[:, j])
    return pos


# --- the clip's repairs ----------------------------------------------------------------


def roll_about_axis(q: np.ndarray, axis: int = BONE_AXIS) -> np.ndarray:
    """The twist part ``[..., 4]`` of rotations ``q [..., 4]`` about the
    local axis ``axis`` (0 = X): ``q = swing * twist``, the swing moving the
    axis, the twist turning about it."""
    t = np.zeros_like(q)
    t[..., 0] = q[..., 0]
    t[..., 1 + axis] = q[..., 1 + axis]
    n = np.linalg.norm(t, axis=-1, keepdims=True)
    return np.where(n > 1e-9, t / np.maximum(n, 1e-12), rotations.identity(q.shape[:-1]))


def untwist(world_rot: np.ndarray, reference_rot: np.ndarray, skeleton) -> np.ndarray:
    """World rotations ``[F, J, 4]`` with each bone below the hips given the
    constant roll about its own axis that makes the last frame's roll equal
    the reference's (``reference_rot [J, 4]``, the walk's first standing
    frame, same placement): the retarget leaves the rolls arbitrary.
    The feet and toes get the whole constant rotation (pitch too): DeepMimic's
    box foot is retargeted 25 degrees flatter than Bandai's standing foot
    (ankle over the heel, toe joint at the ball), so the stance ended on the
    heels with the toes 7-10 cm up. The root and the hips (whose roll is the
    body's facing) are kept."""
    diff = rotations.canonical(rotations.mul(rotations.inv(reference_rot), world_rot[-1]))  # [J, 4], bone frames
    fix = roll_about_axis(diff)
    fix[_index(skeleton, ("joint_Root", HIPS))] = rotations.identity()
    feet = _index(skeleton, FEET_JOINTS)
    fix[feet] = diff[feet]
    return rotations.normalize(rotations.mul(world_rot, rotations.inv(fix)[None]))


def sole_offsets(reference: Motion) -> np.ndarray:
    """``[4, 3]``: each of :data:`FEET_JOINTS`'s floor point in the standing
    ``reference`` (the joint dropped onto the ground: the heel under the
    ankle, the toe tip under the toe), in that joint's own frame, so it
    moves rigidly with the bone."""
    rot, pos = reference.world()
    ix = _index(reference.skeleton, FEET_JOINTS)
    down = np.zeros((len(ix), 3))
    down[:, 2] = -pos[0, ix, 2]
    return rotations.rotate(rotations.inv(rot[0, ix]), down)


def sole_points(world_rot, world_pos, skeleton, offsets) -> np.ndarray:
    """``[F, 4, 3]`` world positions of the sole points (:func:`sole_offsets`)."""
    ix = _index(skeleton, FEET_JOINTS)
    return world_pos[:, ix] + rotations.rotate(world_rot[:, ix], offsets[None])


def _envelope(x: np.ndarray, frames: float) -> np.ndarray:
    """``x [F]`` smoothed from above: a running maximum over ``±2 frames``
    then a Gaussian of ``frames`` (sigma), never below ``x``."""
    w = max(int(np.ceil(2 * frames)), 1)
    padded = np.pad(x, w, mode="edge")
    run = np.max(np.lib.stride_tricks.sliding_window_view(padded, 2 * w + 1), axis=-1)
    return np.maximum(gaussian_filter1d(run, max(frames, 1e-3), mode="nearest"), x)


def floor_lift(world_rot, world_pos, skeleton, offsets, fps: float, cfg: GetUpConfig) -> np.ndarray:
    """``[F]`` upward shift (m) per frame that puts no joint and no sole
    point below the floor (z = 0), smoothed (:func:`_envelope`)."""
    soles = sole_points(world_rot, world_pos, skeleton, offsets)
    lowest = np.minimum(world_pos[..., 2].min(axis=1), soles[..., 2].min(axis=1))
    return _envelope(np.maximum(-lowest, 0.0), cfg.lift_seconds * fps)


def reroot(world_rot, world_pos, skeleton, yaw: float, fps: float, cfg: GetUpConfig):
    """``(root_pos [F, 3], root_rot [F, 4], hips_rot [F, 4], hips_trans
    [F, 3])``: the controller's root convention for a world pose: the root
    on the ground under the hips (its track smoothed over
    ``root_smooth_seconds``), facing ``yaw`` (the stance's, held: lying has
    no facing of its own), and the hips relative to it."""
    hips = _index(skeleton, (HIPS,))[0]
    f = len(world_pos)
    root_pos = np.zeros((f, 3))
    root_pos[:, :2] = gaussian_filter1d(world_pos[:, hips, :2], max(cfg.root_smooth_seconds * fps, 1e-3), axis=0,
                                        mode="nearest")
    root_rot = np.broadcast_to(features.yaw_quat(yaw), (f, 4)).copy()
    inv_root = rotations.inv(root_rot)
    return (root_pos, root_rot, rotations.mul(inv_root, world_rot[:, hips]),
            rotations.rotate(inv_root, world_pos[:, hips] - root_pos))


def getup_clip(skeleton, start: str, heading: float, position, reference: Motion,
               config: GetUpConfig = GetUpConfig()) -> Motion:
    """The get-up clip for ``start`` ("lying-up"/"lying-down") on the
    controller's ``skeleton``, ending standing with its hips over
    ``position`` (m, XY) facing ``heading`` (rad, yaw; 0 faces -Y), the body
    on the floor, the root under the hips. ``reference``: a one-frame
    standing pose on the same skeleton (the walk's first frame): the clip
    is retargeted onto it (``clip_bank.clip_on``) and adopts its bone rolls
    and foot soles."""
    m = clip_on(skeleton, GETUP_CLIPS[check_start(start)], reference)
    rot, pos = m.world()
    hips = _index(skeleton, (HIPS,))[0]
    turn = float(heading) - float(facing_yaw(pos[-1], skeleton))
    shift = np.zeros(3)
    rot, pos = place_world(rot, pos, turn, shift)
    shift[:2] = np.asarray(position, dtype=np.float64)[:2] - pos[-1, hips, :2]
    pos = pos + shift
    if reference is not None:
        rot = untwist(rot, reference.world_rotations()[0], skeleton)
        pos = positions_from_world(rot, pos[:, 0], m.local_translations(), skeleton.parents)
        offsets = sole_offsets(reference)
    else:
        offsets = sole_offsets(m.slice(m.num_frames - 1, m.num_frames))
    pos = pos.copy()
    pos[..., 2] += floor_lift(rot, pos, skeleton, offsets, m.fps, config)[:, None]
    return _rooted(m, rot, pos, float(heading), config)


def _rooted(m: Motion, world_rot, world_pos, heading: float, cfg: GetUpConfig) -> Motion:
    """The clip rebuilt from its world pose with the controller's root."""
    sk = m.skeleton
    hips = _index(sk, (HIPS,))[0]
    root_pos, root_rot, hips_rot, hips_trans = reroot(world_rot, world_pos, sk, heading, m.fps, cfg)
    world_rot = world_rot.copy()
    world_rot[:, 0] = root_rot
    local = locals_from_world(world_rot, sk.parents)
    local[:, hips] = hips_rot
    trans = m.local_translations()
    trans[:, 0] = root_pos
    trans[:, hips] = hips_trans
    return Motion(sk, rotations.make_continuous(local, axis=0), root_pos, m.fps, trans, name=f"getup_{m.name}")


# --- the hand-over into the walk ------------------------------------------------------------


def _rotation_offset(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rotation vectors ``[..., 3]`` of ``a * inv(b)`` (local rotations)."""
    return rotations.to_axis_angle(rotations.canonical(rotations.mul(a, rotations.inv(b))))


def inertialize_into(clip: Motion, walk: Motion, frames: int) -> Motion:
    """``walk``'s first ``frames`` frames with the offset from ``clip``'s
    last frame (and the offset of their velocities, clip's last step against
    walk's first) added, decaying with the quintic of
    :mod:`..inertialize` to nothing at ``frames``: the walk picks up
    exactly where the clip left off, in pose and speed. Local rotations,
    the root position and the translations (m); both on one skeleton."""
    n = int(min(frames, walk.num_frames - 1))
    u = (np.arange(1, n + 1) / float(n))[:, None]
    h0, h1 = decay_value(u), decay_slope(u) * n  # [n, 1]
    w = walk.slice(0, n + 1)
    off = _rotation_offset(clip.rotations[-1], w.rotations[0])  # [J, 3]
    vel = _rotation_offset(clip.rotations[-1], clip.rotations[-2]) - _rotation_offset(w.rotations[1], w.rotations[0])
    delta = h0[:, :, None] * off[None] + h1[:, :, None] * vel[None]
    rots = rotations.mul(rotations.from_axis_angle(delta), w.rotations[:n])
    tc, tw = clip.local_translations(), w.local_translations()
    t_off = tc[-1] - tw[0]
    t_vel = (tc[-1] - tc[-2]) - (tw[1] - tw[0])
    trans = tw[:n] + h0[:, :, None] * t_off[None] + h1[:, :, None] * t_vel[None]
    return Motion(walk.skeleton, rotations.normalize(rots), trans[:, 0].copy(), walk.fps, trans, name=walk.name)


def join(clip: Motion, walk: Motion, frames: int) -> Motion:
    """``clip`` then ``walk``, the walk's first ``frames`` inertialised
    (:func:`inertialize_into`)."""
    head = inertialize_into(clip, walk, frames)
    n = head.num_frames
    rest = walk.slice(n, walk.num_frames)
    trans = np.concatenate([clip.local_translations(), head.translations, rest.local_translations()])
    rots = rotations.make_continuous(np.concatenate([clip.rotations, head.rotations, rest.rotations]), axis=0)
    return Motion(walk.skeleton, rots, trans[:, 0].copy(), walk.fps, trans, name=walk.name)


def detect_contacts(motion: Motion, offsets: np.ndarray, cfg: GetUpConfig) -> np.ndarray:
    """``[F, 4]`` 0/1 foot contacts (:data:`FEET_JOINTS` columns) from the
    pose: the joint's sole point (:func:`sole_offsets`) within
    ``contact_height`` of the floor and slower than ``contact_speed``."""
    rot, pos = motion.world()
    soles = sole_points(rot, pos, motion.skeleton, offsets)
    speed = np.linalg.norm(np.gradient(soles, axis=0), axis=-1) * motion.fps
    return ((soles[..., 2] < cfg.contact_height) & (speed < cfg.contact_speed)).astype(np.float64)


def feet_positions(motion: Motion) -> np.ndarray:
    """``[F, 4, 3]`` world positions of :data:`FEET_JOINTS` (m)."""
    return motion.world_positions()[:, _index(motion.skeleton, FEET_JOINTS)]


def _extend(head, tail):
    """``head`` rows before ``tail`` rows (None stays None)."""
    return None if tail is None else np.concatenate([np.asarray(head, dtype=np.asarray(tail).dtype), tail])


def prepend_getup(result: PathResult, start: str, config: GetUpConfig = GetUpConfig()) -> PathResult:
    """``result`` (a walked path, after ``snap_to_path``, before
    ``pin_feet``) starting with the get-up for ``start``: "standing"
    returns it unchanged; "lying-up"/"lying-down" put the get-up clip
    (:func:`getup_clip`) before it, its last frame standing where the walk's
    first stands (hips over the path start, facing the first segment), and
    inertialise the walk's first ``blend_seconds`` out of it.

    The per-frame arrays grow by the clip's K frames: ``target_xy`` the
    path's start, ``arc`` 0, ``root_xy``/``error`` the clip root's,
    ``command`` zero, ``stopping``/``paused`` False, ``contacts``
    (:func:`detect_contacts`, 0/1) and ``feet`` (the pose's own) for the
    clip and the hand-over; ``stopped_at`` moves K later."""
    if check_start(start) == STANDING:
        return result
    walk = result.motion
    sk = walk.skeleton
    first = walk.slice(0, 1)
    p0 = first.world_positions()[0]
    hips = _index(sk, (HIPS,))[0]
    clip = getup_clip(sk, start, float(facing_yaw(p0, sk)), p0[hips, :2], first, config)
    if abs(clip.fps - walk.fps) > 1e-6:
        raise ValueError(f"the get-up clip is at {clip.fps} fps, the walk at {walk.fps}")
    n_blend = max(int(round(config.blend_seconds * walk.fps)), 1)
    motion = join(clip, walk, n_blend)
    k = clip.num_frames
    return _grown(result, motion, k, k + n_blend, sole_offsets(first), config)


def _grown(res: PathResult, motion: Motion, k: int, posed: int, offsets, cfg: GetUpConfig) -> PathResult:
    """``res``'s arrays grown by ``k`` prefix frames for ``motion``; its
    first ``posed`` frames' contacts and feet come from the pose."""
    path = Path2D(res.path_xy)
    root_xy = motion.root_positions[:, :2]
    contacts = feet = None
    if res.contacts is not None:
        contacts = np.concatenate([np.zeros((k, 4)), res.contacts])
        contacts[:posed] = detect_contacts(motion.slice(0, posed), offsets, cfg)
    if res.feet is not None:
        feet = np.concatenate([np.zeros((k, 4, 3)), res.feet])
        feet[:posed] = feet_positions(motion.slice(0, posed))
        # Through the hand-over the pose's feet ease into the controller's
        # predictions (which pin_feet trusts over the pose), by the blend's
        # own decay: switching at once jumped the foot goals by centimetres.
        n = posed - k
        u = (np.arange(1, n + 1) / float(n))[:, None, None]
        walk_fk = feet_positions(res.motion.slice(0, n))
        feet[k:posed] += (1.0 - decay_value(u)) * (res.feet[:n] - walk_fk)
    paused = None if res.paused is None else _extend(np.zeros(k, dtype=bool), res.paused)
    error = np.concatenate([path.distance(root_xy[:posed]), res.error[posed - k:]])
    return replace(
        res, motion=motion, target_xy=_extend(np.repeat(res.path_xy[:1], k, axis=0), res.target_xy),
        arc=_extend(np.zeros(k), res.arc), root_xy=root_xy.copy(), error=error,
        command=_extend(np.zeros((k, 2)), res.command), stopping=_extend(np.zeros(k, dtype=bool), res.stopping),
        stopped_at=None if res.stopped_at is None else res.stopped_at + k, contacts=contacts, feet=feet,
        paused=paused,
    )


__all__ = ["GETUP_CLIPS", "STANDING", "FEET_JOINTS", "GetUpConfig", "check_start", "facing_yaw",
           "place_world", "locals_from_world", "positions_from_world", "roll_about_axis", "untwist", "sole_offsets", "sole_points",
           "floor_lift", "reroot", "getup_clip", "inertialize_into", "join", "detect_contacts", "feet_positions",
           "prepend_getup"]
