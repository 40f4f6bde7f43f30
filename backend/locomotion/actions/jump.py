"""Jumps spliced into a path walk (issue #28): the DeepMimic standing broad
jump (``clip_bank.clip_on(skeleton, "jump")``: stand, crouch, take-off,
flight, landing crouch, stand) put into a :class:`~..path_follow.PathResult`
at each jump's take-off point, the walk after it continuing from the
landing, later in time by the jump's extra time.

How one jump goes in (:func:`splice_jumps`):

- **The clip on the walk's feet**: the retargeted clip stands on flatter
  feet than the controller (its ankles ~5 cm lower, toes on the floor), so
  each foot's local rotation gets one constant correction that gives it the
  walk's standing foot orientation, and the clip is raised to the walk's
  standing foot heights (:func:`prepare_clip`). Without it the clip's
  planted ankles would be the lowest in the take and drag every foot floor
  (``pin_feet``'s 1st percentile) down with them.
- **Ground phases rigid, flight warped**: the crouch before take-off and the
  landing are the clip's own, placed rigidly (a translation and a yaw that
  turns the clip's travel onto the path's heading at the take-off point) so
  their planted feet stay planted. Between take-off and touch-down the hips
  follow gravity exactly (:func:`ballistic_flight`) through the clip's
  take-off and touch-down heights with the apex at the clip's standing hips
  plus ``height``, moving ``length`` along the heading at constant speed;
  the other joints are the clip's flight poses resampled to that duration;
  the landing is moved by the change of flight length.
- **Splice frames**: the walk frame and clip frame where the walk hands over
  (and, after the landing, takes back) are the pair whose feet (and hips)
  are nearest in the world (:func:`_best_pair`), searched over the clip's
  stance frames before take-off (after touch-down) and the walk frames about
  that point of the path.
- **Transitions**: inertialization (Bollo 2018; ``inertialize.decay_value``
  / ``decay_slope``): the offset of every local rotation, of the root and of
  the joints' translations, and its velocity, at the hand-over decay to zero
  over ``blend_in_seconds`` (into the clip) and ``blend_out_seconds`` (back
  into the walk), so the pose and its velocity are continuous.
- **A standing jump**: when the walk is paused at the jump's arc (it stands
  there), the clip starts from its first frame, placed on the standing
  character (hips over hips), rather than at the take-off point.

Per-frame arrays of the clip's frames: ``contacts [F, 4]`` (``Foot_L,
Toes_L, Foot_R, Toes_R``) from the clip's feet (low and slow; 0 in the
air), ``feet [F, 4, 3]`` the output's forward-kinematics positions of those
joints (plus the walk's predicted-minus-posed difference at the hand-over,
decaying with the pose's), ``root_xy``/``error``/``arc``/``target_xy`` of the
new root, ``command`` the root's velocity, ``stopping``/``paused`` False.

Units: metres, seconds, radians; Blender Z up, yaw 0 faces -Y; arrays
``[frames, joints, ...]``. Pure NumPy (no bpy).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ... import rotations
from ...errors import UserError
from ...filters import gaussian_filter1d
from ...motion import Motion
from .. import features
from ..inertialize import decay_slope, decay_value
from ..path_follow import Path2D, PathResult
from .clip_bank import FLIGHT_CLEARANCE_M, clip_on

#: The foot joints of the contacts/feet layout (``features.CONTACT_JOINTS``).
FEET = ("Foot_L", "Toes_L", "Foot_R", "Toes_R")
HIPS = "Hips"
#: Standard gravity (m/s^2).
GRAVITY = 9.81


@dataclass(frozen=True)
class JumpConfig:
    """Knobs of :func:`splice_jumps` (seconds, metres, the controller's frame)."""

    #: Gravity of the flight (m/s^2).
    gravity: float = GRAVITY
    #: Decay of the walk's offset into the clip (s): long enough to hide a
    #: walking pose turning into the crouch, short enough to be done before
    #: the take-off push (~0.5 s after the crouch starts).
    blend_in_seconds: float = 0.3
    #: The same from a standing pause (s): nothing hurries there, and the
    #: arms go from hanging to the clip's wind-up more calmly.
    stand_blend_seconds: float = 0.5
    #: Decay of the clip's offset back into the walk after the landing (s).
    blend_out_seconds: float = 0.35
    #: Clip frames kept at least before take-off (the crouch and push, ~0.3 s).
    min_prep_frames: int = 9
    #: Clip frames kept at least after touch-down (the landing's absorption).
    min_land_frames: int = 9
    #: How far (m along the path) from the clip's own first/last hips position
    #: the walk's hand-over frame is searched.
    search_m: float = 0.8
    #: Weight of the hips' distance next to the feet's in the splice cost
    #: (the feet matter most: they are what skates).
    hips_weight: float = 0.5
    #: Weight (s) of the joints' velocity mismatch in the splice cost (a
    #: velocity error of 1 m/s counts as this many metres).
    velocity_weight: float = 0.1
    #: Cost (m) of each of the walk's four foot joints not planted at the
    #: hand-over (mean over them): hand over in double support, where the
    #: feet are slow and the clip's stance is nearest.
    support_weight: float = 0.1
    #: A clip foot joint is planted below this height over its standing
    #: height (m) ...
    contact_height: float = 0.03
    #: ... and slower than this (m/s).
    contact_speed: float = 0.5
    #: Smoothing (s) of the clip's hips ground track into its root track (the
    #: controller's root is the character's smoothed ground position).
    root_smooth_seconds: float = 0.1
    #: A jump whose arc is within this (m) of a paused frame's is a standing jump.
    pause_radius_m: float = 0.3
    #: ... and the character stands there where its hips are slower than this (m/s).
    stand_speed: float = 0.05


@dataclass(frozen=True)
class Flight:
    """A ballistic flight of the hips: ``time`` (s, take-off to
    touch-down), ``t_apex`` (s after take-off), ``vz`` (m/s, vertical speed
    at take-off), heights ``z_off``/``z_apex``/``z_down`` (m) and ``gravity``."""

    time: float
    t_apex: float
    vz: float
    z_off: float
    z_apex: float
    z_down: float
    gravity: float

    def height(self, t) -> np.ndarray:
        """Hips height (m) at ``t`` seconds after take-off: ``z_off + vz t - g t^2 / 2``."""
        t = np.asarray(t, dtype=np.float64)
        return self.z_off + self.vz * t - 0.5 * self.gravity * t * t


def ballistic_flight(z_off: float, z_apex: float, z_down: float, gravity: float = GRAVITY) -> Flight:
    """The flight through heights ``z_off`` (take-off), ``z_apex`` and
    ``z_down`` (touch-down), metres: rise ``sqrt(2 (apex - off) / g)``,
    fall ``sqrt(2 (apex - down) / g)``. ``z_apex`` must be above both."""
    assert z_apex > max(z_off, z_down) and gravity > 0, (z_off, z_apex, z_down, gravity)
    t_up = math.sqrt(2.0 * (z_apex - z_off) / gravity)
    t_down = math.sqrt(2.0 * (z_apex - z_down) / gravity)
    return Flight(t_up + t_down, t_up, gravity * t_up, z_off, z_apex, z_down, gravity)


# --- the clip, prepared -----------------------------------------------------------


@dataclass(frozen=True)
class JumpClip:
    """The jump clip in its own frame (root at the origin, identity root
    rotation, travelling along ``direction``), standing on the walk's feet.

    ``rotations [F, J, 4]`` local, ``hips [F, 3]`` the hips' world position
    (m), ``translations [J, 3]`` the other joints' (constant) local
    translations; ``take_off``/``touch_down`` its flight frames (the first
    with both feet up, the first with one back down); ``stand_hips`` (m) its
    standing hips height; ``direction [2]`` the unit ground direction of its
    travel; ``floors [4]`` its feet's standing heights (m, :data:`FEET`)."""

    skeleton: object
    rotations: np.ndarray
    hips: np.ndarray
    translations: np.ndarray
    fps: float
    take_off: int
    touch_down: int
    stand_hips: float
    direction: np.ndarray
    floors: np.ndarray

    @property
    def apex_rise(self) -> float:
        """The clip's own apex of the hips over standing (m)."""
        return float(self.hips[:, 2].max() - self.stand_hips)

    @property
    def flight_length(self) -> float:
        """The clip's own hips travel in the air, take-off to touch-down (m)."""
        return float(np.linalg.norm(self.hips[self.touch_down, :2] - self.hips[self.take_off, :2]))


def _index(skeleton, names) -> list:
    sk_names = list(skeleton.names)
    return [sk_names.index(n) for n in names]


def _flight_frames(feet_z: np.ndarray) -> tuple:
    """``(take_off, touch_down)`` from ``feet_z [F, 4]``: the longest stretch
    with every foot joint :data:`FLIGHT_CLEARANCE_M` above its first-frame
    height (``clip_bank.flight_frames``' rule, on this skeleton's joints)."""
    up = np.append(np.all(feet_z > feet_z[0] + FLIGHT_CLEARANCE_M, axis=1), False)
    edges = np.diff(np.concatenate([[0], up.astype(int)]))
    starts, stops = np.nonzero(edges == 1)[0], np.nonzero(edges == -1)[0]
    assert len(starts), "the jump clip has no flight"
    k = int(np.argmax(stops - starts))
    return int(starts[k]), int(stops[k])


def _yaw_of(q: np.ndarray) -> np.ndarray:
    """Heading angle (rad about +Z) of rotations ``[..., 4]``: where they turn
    the facing -Y, measured from -Y."""
    f = rotations.rotate(q, np.broadcast_to([0.0, -1.0, 0.0], q.shape[:-1] + (3,)))
    return np.arctan2(f[..., 0], -f[..., 1])


def prepare_clip(clip: Motion, stand: Motion) -> JumpClip:
    """The retargeted jump ``clip`` (joint 0 at the origin, the hips carrying
    the motion) standing on the feet of ``stand`` (a one-frame standing pose
    of the walk): each foot's local rotation turned by one constant rotation
    that gives its standing world orientation (relative to the character's
    yaw) the walk's, the whole clip raised by the mean height difference of
    the four foot joints then."""
    sk = clip.skeleton
    hips_j, feet_j = _index(sk, [HIPS])[0], _index(sk, FEET)
    rot = clip.rotations.copy()
    hips = clip.translations[:, hips_j].copy()
    assert np.allclose(clip.root_positions, 0.0) and np.allclose(clip.rotations[:, 0, 1:], 0.0)
    # The walk's standing foot orientations with the character's yaw removed.
    st_rot = stand.world_rotations()[0]
    unyaw = rotations.inv(stand.rotations[0, 0])
    c_rot = Motion(sk, rot[:1], clip.root_positions[:1], clip.fps, clip.translations[:1]).world_rotations()[0]
    for foot in (feet_j[0], feet_j[2]):
        want = rotations.mul(unyaw, st_rot[foot])
        fix = rotations.mul(rotations.inv(c_rot[foot]), want)  # local post-rotation: foot_w * fix = want
        rot[:, foot] = rotations.mul(rot[:, foot], fix[None])
    trans = clip.translations.copy()
    trans[:, hips_j] = hips
    fixed = Motion(sk, rot, clip.root_positions, clip.fps, trans)
    feet_z = fixed.world_positions()[:, feet_j, 2]
    lift = float(np.mean(stand.world_positions()[0, feet_j, 2] - feet_z[0]))
    hips[:, 2] += lift
    feet_z = feet_z + lift
    off, down = _flight_frames(feet_z)
    travel = hips[-1, :2] - hips[0, :2]
    return JumpClip(skeleton=sk, rotations=rot, hips=hips, translations=clip.translations[0].copy(), fps=clip.fps,
                    take_off=off, touch_down=down, stand_hips=float(np.median(hips[:3, 2])),
                    direction=travel / np.linalg.norm(travel), floors=feet_z[0].copy())


# --- the flight, warped ------------------------------------------------------------


@dataclass(frozen=True)
class Warped:
    """One jump in the clip's frame after the flight warp: ``rotations [F,
    J, 4]``, ``hips [F, 3]`` (m), ``contacts [F, 4]``, ``flight`` (the
    :class:`Flight`), ``airborne [F]`` (bool), ``take_off`` (the output frame
    of the take-off), ``land_start`` (the first output frame after touch-down)."""

    rotations: np.ndarray
    hips: np.ndarray
    contacts: np.ndarray
    flight: Flight
    airborne: np.ndarray
    take_off: int
    land_start: int


def _sample(clip: JumpClip, c: np.ndarray) -> tuple:
    """The clip at fractional frames ``c [K]``: rotations slerped, hips lerped."""
    c = np.clip(c, 0.0, len(clip.hips) - 1.0)
    lo = np.minimum(np.floor(c).astype(int), len(clip.hips) - 2)
    t = c - lo
    rot = rotations.slerp(clip.rotations[lo], clip.rotations[lo + 1], np.broadcast_to(t[:, None], clip.rotations[lo].shape[:2]))
    hips = clip.hips[lo] + t[:, None] * (clip.hips[lo + 1] - clip.hips[lo])
    return rot, hips


def _clip_contacts(clip: JumpClip, rot: np.ndarray, hips: np.ndarray, cfg: JumpConfig) -> np.ndarray:
    """``[F, 4]`` 0/1 contacts of the warped clip's feet: low (within
    ``contact_height`` of their standing height) and slow."""
    trans = np.broadcast_to(clip.translations, rot.shape[:2] + (3,)).copy()
    trans[:, _index(clip.skeleton, [HIPS])[0]] = hips
    m = Motion(clip.skeleton, rot, np.zeros((len(rot), 3)), clip.fps, trans)
    p = m.world_positions()[:, _index(clip.skeleton, FEET)]
    speed = np.linalg.norm(np.gradient(p[..., :2], axis=0), axis=-1) * clip.fps
    return ((p[..., 2] - clip.floors < cfg.contact_height) & (speed < cfg.contact_speed)).astype(np.float64)


def warp_flight(clip: JumpClip, height: float, length: float, cfg: JumpConfig = JumpConfig()) -> Warped:
    """The clip with its flight made ballistic: the hips rise ``height`` (m)
    over the clip's standing hips at the apex and travel ``length`` (m)
    along the clip's flight direction between take-off and touch-down at
    constant speed; the flight's poses resampled in time to the physics'
    duration (:func:`ballistic_flight`); the landing moved by the change in
    length and sampled from the touch-down instant on (a fractional frame)."""
    off, down, fps = clip.take_off, clip.touch_down, clip.fps
    z_apex = clip.stand_hips + height
    if not z_apex > max(clip.hips[off, 2], clip.hips[down, 2]) + 1e-3:
        raise UserError(f"jump height {height:g} m is too low for the jump clip: the hips take off "
                        f"{clip.hips[off, 2] - clip.stand_hips:+.2f} m from standing")
    fl = ballistic_flight(float(clip.hips[off, 2]), z_apex, float(clip.hips[down, 2]), cfg.gravity)
    n_air = int(math.ceil(fl.time * fps - 1e-9))  # output frames at t = 0 .. < time after take-off
    n_land = len(clip.hips) - down
    t_air = np.arange(n_air) / fps
    t_land = n_air / fps - fl.time  # the first landing frame's time after touch-down (s, in [0, 1/fps))
    c = np.concatenate([np.arange(off, dtype=np.float64), off + t_air / fl.time * (down - off),
                        down + t_land * fps + np.arange(n_land)])
    keep = c <= len(clip.hips) - 1.0
    c = c[keep]
    rot, hips = _sample(clip, c)
    flight_dir = clip.hips[down, :2] - clip.hips[off, :2]
    flight_dir = flight_dir / max(np.linalg.norm(flight_dir), 1e-9)
    start = clip.hips[off, :2]
    air = slice(off, off + n_air)
    hips[air, 2] = fl.height(t_air)
    hips[air, :2] = start + (length * t_air / fl.time)[:, None] * flight_dir
    hips[off + n_air:, :2] += start + length * flight_dir - clip.hips[down, :2]
    contacts = _clip_contacts(clip, rot, hips, cfg)
    airborne = np.zeros(len(c), dtype=bool)
    airborne[air] = True
    contacts[airborne] = 0.0
    return Warped(rot, hips, contacts, fl, airborne, off, off + n_air)


# --- placement and the splice ------------------------------------------------------


@dataclass(frozen=True)
class Placed:
    """A warped jump in the world, as the walk's arrays: ``rotations [F, J,
    4]`` (joint 0 the yaw), ``root [F, 3]``, ``translations [F, J, 3]``,
    ``feet [F, 4, 3]`` (FK), ``hips [F, 3]`` world."""

    rotations: np.ndarray
    root: np.ndarray
    translations: np.ndarray
    feet: np.ndarray
    hips: np.ndarray


def place(clip: JumpClip, warped: Warped, yaw: float, anchor_frame: int, anchor_xy, smooth_seconds: float = 0.1) -> Placed:
    """``warped`` turned by ``yaw`` (rad about +Z) and moved so its hips'
    ground position at ``anchor_frame`` is ``anchor_xy [2]`` (m); its root
    the hips' ground track smoothed over ``smooth_seconds`` (the
    controller's root convention)."""
    sk = clip.skeleton
    hips_j = _index(sk, [HIPS])[0]
    q = features.yaw_quat(yaw)
    hips = rotations.rotate(q[None], warped.hips)
    hips[:, :2] += np.asarray(anchor_xy, dtype=np.float64) - hips[anchor_frame, :2]
    root = np.zeros_like(hips)
    root[:, :2] = gaussian_filter1d(hips[:, :2], max(smooth_seconds * clip.fps, 1e-3), axis=0, mode="nearest")
    rot = warped.rotations.copy()
    rot[:, 0] = q
    trans = np.broadcast_to(clip.translations, rot.shape[:2] + (3,)).copy()
    trans[:, 0] = root
    trans[:, hips_j] = rotations.rotate(rotations.inv(q)[None], hips - root)
    pos = Motion(sk, rot, root, clip.fps, trans).world_positions()
    return Placed(rot, root, trans, pos[:, _index(sk, FEET)], hips)


def _walk_arrays(res: PathResult) -> tuple:
    """The walk's ``(feet [F, 4, 3], hips [F, 3])`` world positions: the
    predicted feet where the controller gives them (they are where the
    pinned feet end up), else the pose's."""
    pos = res.motion.world_positions()
    hips = pos[:, _index(res.motion.skeleton, [HIPS])[0]]
    feet = res.feet if res.feet is not None else pos[:, _index(res.motion.skeleton, FEET)]
    return feet, hips


def _best_pair(w_feet, w_hips, c_feet, c_hips, w_frames, c_frames, fps: float, cfg: JumpConfig,
               w_contacts=None) -> tuple:
    """``(walk frame, clip frame)`` among ``w_frames`` x ``c_frames`` whose
    feet ``[., 4, 3]`` and hips ``[., 3]`` are nearest (mean foot distance
    plus ``hips_weight`` x the hips', and the same of their velocities
    weighted by ``velocity_weight``; with the walk's ``w_contacts [F, 4]``,
    ``support_weight`` x its share of foot joints in the air)."""
    w, c = np.asarray(w_frames), np.asarray(c_frames)
    assert len(w) and len(c)

    def vel(x, i):
        return (x[np.minimum(i + 1, len(x) - 1)] - x[np.maximum(i - 1, 0)]) * 0.5 * fps

    def cost(a_w, a_c, weight):
        return weight * np.linalg.norm(a_w[:, None] - a_c[None], axis=-1).reshape(len(w), len(c), -1).mean(-1)

    total = (cost(w_feet[w], c_feet[c], 1.0) + cost(w_hips[w], c_hips[c], cfg.hips_weight)
             + cost(vel(w_feet, w), vel(c_feet, c), cfg.velocity_weight)
             + cost(vel(w_hips, w), vel(c_hips, c), cfg.velocity_weight * cfg.hips_weight))
    if w_contacts is not None:
        total = total + cfg.support_weight * np.mean(1.0 - np.clip(w_contacts[w], 0.0, 1.0), axis=1)[:, None]
    i, j = np.unravel_index(int(np.argmin(total)), total.shape)
    return int(w[i]), int(c[j])


def _rot_offset(a, b):
    """Rotation vector of ``a * inv(b)`` (``[..., 3]``)."""
    return rotations.to_axis_angle(rotations.canonical(rotations.mul(a, rotations.inv(b))))


def _decayed(frames: int, n: float) -> tuple:
    """``(h0, h1 * n)`` ``[frames]`` of the quintic decay over ``n`` frames,
    starting one frame after the hand-over (zero past ``n``)."""
    u = np.minimum(np.arange(1, frames + 1) / max(n, 1.0), 1.0)
    return decay_value(u), decay_slope(u) * n


def _inertialize(rot, root, trans, prev2: tuple, n: float) -> tuple:
    """``(rot [K, J, 4], root [K, 3], trans [K, J, 3])`` of the new source
    with the offset of the old one added, decaying over ``n`` frames.

    ``prev2``: ``((rot, root, trans) of the old source's last two frames,
    (the same of the new source's two frames before its first))``, each
    array ``[2, ...]``: the offset is old minus new at the last frame, its
    velocity the difference of their last steps."""
    (o_rot, o_root, o_tr), (n_rot, n_root, n_tr) = prev2
    h0, h1 = _decayed(len(rot), n)
    off = _rot_offset(o_rot[1], n_rot[1])
    vel = _rot_offset(o_rot[1], o_rot[0]) - _rot_offset(n_rot[1], n_rot[0])
    out_rot = rotations.mul(rotations.from_axis_angle(h0[:, None, None] * off + h1[:, None, None] * vel), rot)

    def lin(x, o, nw):
        shape = (-1,) + (1,) * (x.ndim - 1)
        return x + h0.reshape(shape) * (o[1] - nw[1]) + h1.reshape(shape) * ((o[1] - o[0]) - (nw[1] - nw[0]))

    return rotations.normalize(out_rot), lin(root, o_root, n_root), lin(trans, o_tr, n_tr)


def _two_before(rot, root, trans, i: int) -> tuple:
    """Frames ``i - 2, i - 1`` (clamped at 0: a clip starting at rest)."""
    k = np.maximum([i - 2, i - 1], 0)
    return rot[k], root[k], trans[k]


# --- one jump -----------------------------------------------------------------------


def _standing_frames(res: PathResult, arc: float, cfg: JumpConfig) -> np.ndarray:
    """The paused frames standing still at ``arc`` (m along the path): the
    hips slower than ``stand_speed`` (a pause's frames include its braking
    and its blend into the stand), or empty."""
    if res.paused is None or not np.any(res.paused):
        return np.zeros(0, dtype=int)
    hips = _walk_arrays(res)[1]
    speed = np.linalg.norm(np.gradient(hips[:, :2], axis=0), axis=-1) * res.motion.fps
    return np.nonzero(res.paused & (np.abs(res.arc - arc) <= cfg.pause_radius_m) & (speed < cfg.stand_speed))[0]


def _jump_yaw(res: PathResult, clip: JumpClip, arc: float) -> float:
    """The yaw (rad) that turns the clip's travel onto the path's heading at ``arc``."""
    path = Path2D(res.path_xy)
    t = path.tangent_at(arc)
    return float(math.atan2(t[1], t[0]) - math.atan2(clip.direction[1], clip.direction[0]))


def _check_reach(res: PathResult, jump, first: float, last: float) -> None:
    """UserError when the walk does not reach where the jump needs it."""
    reach = float(np.max(res.arc))
    if last > reach or first < float(np.min(res.arc)) - 0.05:
        raise UserError(f"{jump.text()}: the jump needs the walk from {max(first, 0):.2f} to {last:.2f} m along "
                        f"the path, but the walk covers only {float(np.min(res.arc)):.2f}-{reach:.2f} m "
                        f"(move the jump or let the walk go further)")


def _splice_frames(res: PathResult, placed: Placed, warped: Warped, standing, start_frame: int,
                   cfg: JumpConfig) -> tuple:
    """``(w_in, s_in, w_out, s_out)``: the walk frame the clip replaces from
    and the clip frame it starts at; the walk frame that takes over after
    the clip's frame ``s_out``."""
    fps = res.motion.fps
    w_feet, w_hips = _walk_arrays(res)
    arc = res.arc
    path = Path2D(res.path_xy)
    c_arc = np.array([path.project(h, None) for h in placed.hips[[0, -1], :2]])
    frames = np.arange(len(arc))
    if len(standing):
        w_in, s_in = int(standing[len(standing) // 2]), 0
    else:
        w_range = frames[(frames >= start_frame + 2) & (np.abs(arc - c_arc[0]) <= cfg.search_m)]
        w_range = w_range[w_range >= 2]
        c_range = np.arange(0, warped.take_off - cfg.min_prep_frames + 1)
        if not len(w_range):
            raise UserError(f"the jump at {c_arc[0]:.2f} m: the walk does not pass there")
        w_in, s_in = _best_pair(w_feet, w_hips, placed.feet, placed.hips, w_range, c_range, fps, cfg, res.contacts)
    after = frames[(frames > w_in + 2) & (np.abs(arc - c_arc[1]) <= cfg.search_m) & ~_paused(res)]
    after = after[after >= 2]
    if not len(after):
        raise UserError(f"the jump's landing at {c_arc[1]:.2f} m: the walk does not get there "
                        f"(it reaches {float(np.max(arc)):.2f} m)")
    c_out = np.arange(warped.land_start + cfg.min_land_frames, len(placed.hips))
    w_out, s_out = _best_pair(w_feet, w_hips, placed.feet, placed.hips, after, c_out, fps, cfg, res.contacts)
    return w_in, s_in, w_out, s_out


def _paused(res: PathResult) -> np.ndarray:
    return np.zeros(len(res.arc), dtype=bool) if res.paused is None else res.paused


def _splice_one(res: PathResult, clip: JumpClip, jump, start_frame: int, cfg: JumpConfig) -> tuple:
    """``(result, end_frame, info)``: one jump spliced into ``res``;
    ``end_frame`` the first output frame past the blend back into the walk."""
    height = clip.apex_rise if jump.height is None else float(jump.height)
    length = clip.flight_length if jump.length is None else float(jump.length)
    warped = warp_flight(clip, height, length, cfg)
    standing = _standing_frames(res, jump.arc, cfg)
    yaw = _jump_yaw(res, clip, jump.arc)
    if len(standing):
        # Standing: the clip's first frame on the standing character's feet
        # (their mean), so the blend from the stand turns them in place
        # rather than sliding them.
        w_feet, w_hips = _walk_arrays(res)
        w = standing[len(standing) // 2]
        placed = place(clip, warped, yaw, 0, w_hips[w, :2], cfg.root_smooth_seconds)
        nudge = w_feet[w, :, :2].mean(axis=0) - placed.feet[0, :, :2].mean(axis=0)
        placed = place(clip, warped, yaw, 0, w_hips[w, :2] + nudge, cfg.root_smooth_seconds)
    else:
        placed = place(clip, warped, yaw, warped.take_off, Path2D(res.path_xy).at(jump.arc), cfg.root_smooth_seconds)
    path = Path2D(res.path_xy)
    first, last = (path.project(h, None) for h in placed.hips[[0, -1], :2])
    _check_reach(res, jump, first, last)
    w_in, s_in, w_out, s_out = _splice_frames(res, placed, warped, standing, start_frame, cfg)
    m = res.motion
    fps = m.fps
    # Into the clip.
    c_rot, c_root, c_tr = (x[s_in:s_out + 1] for x in (placed.rotations, placed.root, placed.translations))
    j_rot, j_root, j_tr = _inertialize(
        c_rot, c_root, c_tr,
        ((m.rotations[w_in - 2:w_in], m.root_positions[w_in - 2:w_in], m.translations[w_in - 2:w_in]),
         _two_before(placed.rotations, placed.root, placed.translations, s_in)),
        (cfg.stand_blend_seconds if len(standing) else cfg.blend_in_seconds) * fps)
    # Back into the walk.
    w_rot, w_root, w_tr = m.rotations[w_out:], m.root_positions[w_out:], m.translations[w_out:]
    b_rot, b_root, b_tr = _inertialize(
        w_rot, w_root, w_tr,
        ((j_rot[-2:], j_root[-2:], j_tr[-2:]),
         (m.rotations[w_out - 2:w_out], m.root_positions[w_out - 2:w_out], m.translations[w_out - 2:w_out])),
        cfg.blend_out_seconds * fps)
    rot = rotations.make_continuous(np.concatenate([m.rotations[:w_in], j_rot, b_rot]), axis=0)
    root = np.concatenate([m.root_positions[:w_in], j_root, b_root])
    trans = np.concatenate([m.translations[:w_in], j_tr, b_tr])
    motion = Motion(m.skeleton, rot, root, fps, trans, name=m.name)
    n_clip = len(j_rot)
    blend_in = (cfg.stand_blend_seconds if len(standing) else cfg.blend_in_seconds) * fps
    out = _arrays(res, motion, (w_in, w_out, n_clip), warped.contacts[s_in:s_out + 1], blend_in)
    info = {"w_in": w_in, "s_in": s_in, "w_out": w_out, "s_out": s_out, "flight": warped.flight,
            "airborne": np.nonzero(warped.airborne[s_in:s_out + 1])[0] + w_in, "frames": (w_in, w_in + n_clip),
            "shift": n_clip - (w_out - w_in), "standing": bool(len(standing))}
    return out, w_in + n_clip + int(math.ceil(cfg.blend_out_seconds * fps)), info


def _arrays(res: PathResult, motion: Motion, cut: tuple, clip_contacts: np.ndarray, blend_in: float) -> PathResult:
    """The per-frame arrays of the spliced ``motion``: the walk's before
    ``w_in`` and (time-shifted) from ``w_out``; the clip's in between
    (``n_clip`` frames); feet and root-derived arrays recomputed
    (``blend_in``: the blend into the clip, frames)."""
    w_in, w_out, n_clip = cut
    fps = motion.fps
    path = Path2D(res.path_xy)
    sk = motion.skeleton
    pos = motion.world_positions()
    fk = pos[:, _index(sk, FEET)]
    old_fk = res.motion.world_positions()[:, _index(sk, FEET)]

    def spliced(a, mid):
        return np.concatenate([a[:w_in], mid, a[w_out:]])

    root_xy = motion.root_positions[:, :2]
    mid_root = root_xy[w_in:w_in + n_clip]
    a0 = res.arc[w_in - 1]
    mid_arc = np.maximum.accumulate(np.array([path.project(p, a0) for p in mid_root]))
    arc = spliced(res.arc, mid_arc)
    vel = np.gradient(root_xy, axis=0) * fps
    feet = None
    if res.feet is not None:
        # The walk's feet where it says, moved with the blend; the clip's
        # feet its own, plus the walk's predicted-minus-posed difference at
        # the hand-over decaying with the pose's offset.
        h0 = _decayed(n_clip, blend_in)[0]
        mid = fk[w_in:w_in + n_clip] + h0[:, None, None] * (res.feet[w_in - 1] - old_fk[w_in - 1])[None]
        shifted = fk[w_in + n_clip:] - old_fk[w_out:]
        feet = np.concatenate([res.feet[:w_in], mid, res.feet[w_out:] + shifted])
    contacts = None if res.contacts is None else spliced(res.contacts, clip_contacts)
    false = np.zeros(n_clip, dtype=bool)
    stopped_at = res.stopped_at
    if stopped_at is not None and stopped_at >= w_in:
        stopped_at = max(stopped_at, w_out) + n_clip - (w_out - w_in)
    return PathResult(
        motion=motion, target_xy=path.at(arc), arc=arc, root_xy=root_xy.copy(), error=path.distance(root_xy),
        command=spliced(res.command, vel[w_in:w_in + n_clip]), stopping=spliced(res.stopping, false),
        path_xy=res.path_xy, profile=res.profile, stopped_at=stopped_at, length=res.length,
        contacts=contacts, feet=feet, paused=None if res.paused is None else spliced(res.paused, false),
    )


def jump_clip(result: PathResult, models_dir=None) -> JumpClip:
    """The bank's jump on ``result``'s skeleton, standing on its first frame's feet."""
    m = result.motion
    stand = m.slice(0, 1)
    return prepare_clip(clip_on(m.skeleton, "jump", stand, models_dir), stand)


def splice_jumps(result: PathResult, jumps, config: JumpConfig = JumpConfig(), *, clip: JumpClip = None,
                 info: list = None) -> PathResult:
    """``result`` (a path walk, after ``snap_to_path``) with each of
    ``jumps`` (:class:`~.action_plan.Jump`, in the controller's metres)
    spliced in at its take-off point (see the module docstring); the walk
    after each continues from its landing, later by the jump's extra time.
    ``clip``: the prepared clip (default :func:`jump_clip` of ``result``);
    ``info``: when a list, one dict per jump is appended (splice frames,
    ``flight``, ``airborne`` output frames, ``shift`` in frames).

    UserError (one line) for a jump the walk does not reach (its take-off
    or landing past the walk's end, e.g. cut by ``max_seconds``)."""
    if not jumps:
        return result
    assert result.motion.translations is not None, "the walk carries the hips' translations"
    clip = jump_clip(result) if clip is None else clip
    out, start = result, 0
    for jump in sorted(jumps, key=lambda j: j.arc):
        out, start, one = _splice_one(out, clip, jump, start, config)
        if info is not None:
            info.append(one)
    return out


__all__ = ["FEET", "GRAVITY", "JumpConfig", "Flight", "ballistic_flight", "JumpClip", "prepare_clip", "Warped",
           "warp_flight", "Placed", "place", "jump_clip", "splice_jumps"]
