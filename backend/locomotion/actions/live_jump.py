"""The jump of a live drive (Drive's jump key): the DeepMimic jump played
from the character's current pose, where it stands and the way it faces,
and handed back to the locomotion controller where it lands.

:func:`.jump.splice_jumps` puts jumps into a whole path walk, knowing the
walk after the jump. Live there is no future to splice into, so
:class:`LiveJump` does the same in three parts:

- **Into the clip** (:meth:`LiveJump.start`): the clip (prepared once per
  session, :func:`prepare_jump`: :func:`.jump.prepare_clip` on the
  controller's standing pose, its flight made ballistic by
  :func:`.jump.warp_flight`) is placed rigidly (a yaw that turns its travel
  onto the character's facing, a translation that puts its hips over the
  character's hips: the ground phases keep their planted feet, as
  :func:`.jump.place` does for a path) from the clip frame whose feet,
  relative to the hips, are nearest the character's (a standing
  character: the clip's first frame). The offset of the current pose and
  its velocity decay over ``blend_in_seconds`` (inertialization, Bollo
  2018: the pose and its velocity are continuous).
- **The clip**: its frames, one per controller frame, with their contacts
  (0 in the air) and feet (forward kinematics).
- **Back into the controller** (:meth:`LiveJump.landing`,
  :class:`BlendOut`): the clip ends standing; the controller is reset
  there (its standing stance at the clip's last root position and facing)
  and the clip's last pose offset decays over ``blend_out_seconds`` on top
  of the controller's frames, so walking resumes from where the jump
  landed. Resetting (rather than stepping the controller unseen during the
  jump and moving it) keeps the network in its own data: its state is its
  standing pose, not a walk that went on 1.5 m ahead.

Arrays: rotations ``[J, 4]`` (w, x, y, z) local, positions metres, the
controller's Bandai skeleton at its frame rate, world space (Blender Z up,
yaw 0 faces -Y). Pure NumPy (no bpy).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ... import rotations
from ...motion import Motion
from ..inertialize import decay_slope, decay_value
from .clip_bank import clip_on
from .jump import FEET, HIPS, JumpClip, JumpConfig, Warped, place, prepare_clip, warp_flight


@dataclass(frozen=True)
class LiveJumpConfig:
    """Knobs of the live jump (seconds, metres, the controller's frame)."""

    #: Decay of the walk's offset into the clip (s; ``JumpConfig.blend_in_seconds``).
    blend_in_seconds: float = 0.3
    #: The same from standing (s; ``JumpConfig.stand_blend_seconds``).
    stand_blend_seconds: float = 0.5
    #: Decay of the clip's last pose into the controller's stance (s).
    blend_out_seconds: float = 0.35
    #: The character counts as standing below this root speed (m/s): the
    #: clip then starts at its first frame.
    stand_speed: float = 0.1
    #: Clip frames kept at least before take-off (the crouch and the push).
    min_prep_frames: int = 9
    #: Apex of the hips over standing (m; None: the clip's own, ~0.24 m on
    #: the controller's skeleton).
    height: float = None
    #: Hips travel in the air (m; None: the clip's own, ~0.6 m).
    length: float = None


@dataclass(frozen=True, eq=False)
class PreparedJump:
    """The session's jump: the clip on the controller's standing feet
    (``clip``), its ballistic flight (``warped``), its feet relative to the
    hips' ground point in the clip's frame ``feet_rel [F, 4, 3]`` (to pick
    the frame to start from), and the config."""

    clip: JumpClip
    warped: Warped
    feet_rel: np.ndarray
    config: LiveJumpConfig


def prepare_jump(skeleton, stand: Motion, config: LiveJumpConfig = LiveJumpConfig(), models_dir=None) -> PreparedJump:
    """The jump clip on ``skeleton`` (the controller's) standing on the
    one-frame pose ``stand``, its flight warped to ``config``'s height and
    length (default: the clip's own). Done once per session (~0.2-0.3 s)."""
    clip = prepare_clip(clip_on(skeleton, "jump", stand, models_dir), stand)
    height = clip.apex_rise if config.height is None else float(config.height)
    length = clip.flight_length if config.length is None else float(config.length)
    warped = warp_flight(clip, height, length, JumpConfig())
    placed = place(clip, warped, 0.0, 0, (0.0, 0.0))
    feet_rel = placed.feet - np.concatenate([placed.hips[:, None, :2], np.zeros((len(placed.hips), 1, 1))], axis=-1)
    return PreparedJump(clip, warped, feet_rel, config)


def _yaw_of_pose(pose: Motion) -> float:
    """The character's heading (rad about +Z, 0 faces -Y) from joint 0's rotation."""
    w, z = float(pose.rotations[0, 0, 0]), float(pose.rotations[0, 0, 3])
    return 2.0 * math.atan2(z, w)


def _turn(xy: np.ndarray, angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return xy @ np.array([[c, s], [-s, c]])


def _pose_arrays(pose: Motion) -> tuple:
    """``(rotations [J, 4], root [3], translations [J, 3])`` of a one-frame pose."""
    return pose.rotations[0], pose.root_positions[0], pose.local_translations()[0]


def _rot_offset(a, b):
    """Rotation vectors ``[J, 3]`` of ``a * inv(b)``."""
    return rotations.to_axis_angle(rotations.canonical(rotations.mul(a, rotations.inv(b))))


@dataclass(frozen=True)
class Offset:
    """An inertialization offset: old minus new source at the hand-over
    (``rot [J, 3]`` rotation vectors, ``root [3]``, ``trans [J, 3]``) and
    its per-frame velocity (``*_vel``), decaying over ``frames``."""

    rot: np.ndarray
    rot_vel: np.ndarray
    root: np.ndarray
    root_vel: np.ndarray
    trans: np.ndarray
    trans_vel: np.ndarray
    frames: float

    @classmethod
    def between(cls, old2: tuple, new2: tuple, frames: float) -> "Offset":
        """From the old source's last two frames and the new source's two
        frames before its first (each ``((rot, root, trans), (rot, root, trans))``)."""
        (o0, o1), (n0, n1) = old2, new2
        return cls(_rot_offset(o1[0], n1[0]), _rot_offset(o1[0], o0[0]) - _rot_offset(n1[0], n0[0]),
                   o1[1] - n1[1], (o1[1] - o0[1]) - (n1[1] - n0[1]),
                   o1[2] - n1[2], (o1[2] - o0[2]) - (n1[2] - n0[2]), float(frames))

    def weights(self, k) -> tuple:
        """``(h0, h1 x frames)`` at frame(s) ``k`` after the hand-over (1 = the first new frame)."""
        u = np.minimum(np.asarray(k, dtype=np.float64) / max(self.frames, 1.0), 1.0)
        return decay_value(u), decay_slope(u) * self.frames

    def add(self, rot, root, trans, k) -> tuple:
        """``rot [K, J, 4]``, ``root [K, 3]``, ``trans [K, J, 3]`` of the new
        source at frames ``k [K]`` after the hand-over, with the offset added."""
        h0, h1 = self.weights(k)
        aa = h0[:, None, None] * self.rot[None] + h1[:, None, None] * self.rot_vel[None]
        out = rotations.normalize(rotations.mul(rotations.from_axis_angle(aa), rot))
        return (out, root + h0[:, None] * self.root + h1[:, None] * self.root_vel,
                trans + h0[:, None, None] * self.trans + h1[:, None, None] * self.trans_vel)


class LiveJump:
    """One jump, from the current pose to the landing (see the module docstring).

    Args:
        prepared: :func:`prepare_jump`'s clip.
        prev, last: the two latest shown poses (one-frame Motions; the
            jump starts after ``last``).
        speed: the character's ground speed (m/s): below
            ``config.stand_speed`` the clip starts at its first frame.
    """

    def __init__(self, prepared: PreparedJump, prev: Motion, last: Motion, speed: float):
        cfg = prepared.config
        clip, warped = prepared.clip, prepared.warped
        self.prepared = prepared
        self.skeleton = last.skeleton
        self.fps = float(clip.fps)
        yaw = _yaw_of_pose(last)
        self.yaw = yaw + math.atan2(-1.0, 0.0) - math.atan2(clip.direction[1], clip.direction[0])
        hips_j = list(self.skeleton.names).index(HIPS)
        hips_xy = last.world_positions()[0, hips_j, :2]
        standing = speed < cfg.stand_speed
        self.s_in = 0 if standing else self._start_frame(last, hips_xy, yaw)
        placed = place(clip, warped, self.yaw, self.s_in, hips_xy)
        n_blend = (cfg.stand_blend_seconds if standing else cfg.blend_in_seconds) * self.fps
        s = self.s_in
        k = np.maximum([s - 2, s - 1], 0)
        new2 = tuple((placed.rotations[i], placed.root[i], placed.translations[i]) for i in k)
        self.offset_in = Offset.between((_pose_arrays(prev), _pose_arrays(last)), new2, n_blend)
        rot, root, trans = self.offset_in.add(placed.rotations[s:], placed.root[s:], placed.translations[s:],
                                              np.arange(1, len(placed.root) - s + 1))
        self.motion = Motion(self.skeleton, rotations.make_continuous(rot, axis=0), root, self.fps, trans, name="jump")
        pos = self.motion.world_positions()
        feet_j = [list(self.skeleton.names).index(n) for n in FEET]
        self.feet = pos[:, feet_j]  # [F, 4, 3]
        self.hips = pos[:, hips_j]
        self.contacts = warped.contacts[s:].copy()  # [F, 4], 0 in the air
        self.airborne = warped.airborne[s:].copy()
        self.flight = warped.flight
        self.blend_in_frames = int(math.ceil(n_blend))
        self.frame = 0

    def _start_frame(self, last: Motion, hips_xy, yaw: float) -> int:
        """The clip frame (before the take-off's preparation) whose feet,
        relative to the hips' ground point and turned to the character's
        heading, are nearest the current pose's."""
        prep = self.prepared
        names = list(self.skeleton.names)
        feet = last.world_positions()[0, [names.index(n) for n in FEET]]
        rel = feet - np.array([hips_xy[0], hips_xy[1], 0.0])
        rel[:, :2] = _turn(rel[:, :2], -self.yaw)  # into the clip's own frame
        last_ok = max(prep.warped.take_off - prep.config.min_prep_frames, 0)
        cost = np.linalg.norm(prep.feet_rel[: last_ok + 1] - rel[None], axis=-1).mean(axis=1)
        return int(np.argmin(cost))

    @property
    def done(self) -> bool:
        return self.frame >= self.motion.num_frames

    def next_frame(self) -> tuple:
        """``(pose (one-frame Motion), contacts [4], feet [4, 3])`` of the
        next controller frame of the jump."""
        i = self.frame
        self.frame += 1
        return self.motion.slice(i, i + 1), self.contacts[i].copy(), self.feet[i].copy()

    def landing(self) -> tuple:
        """``(position [2], yaw)`` to reset the controller at: the clip's
        last root position and its facing."""
        return self.motion.root_positions[-1, :2].copy(), float(self.yaw)

    def blend_out(self, controller_pose: Motion) -> "BlendOut":
        """The hand-back from the clip's last two frames to
        ``controller_pose`` (the controller's pose right after its reset at
        :meth:`landing`, at rest)."""
        m = self.motion
        old2 = tuple((m.rotations[i], m.root_positions[i], m.local_translations()[i]) for i in (-2, -1))
        new = _pose_arrays(controller_pose)
        return BlendOut(Offset.between(old2, (new, new), self.prepared.config.blend_out_seconds * self.fps))


class BlendOut:
    """The clip's offset decaying on the controller's frames after a jump."""

    def __init__(self, offset: Offset):
        self.offset = offset
        self.frame = 0

    @property
    def done(self) -> bool:
        return self.frame >= self.offset.frames

    def apply(self, pose: Motion) -> Motion:
        """``pose`` (the controller's next frame) with the decayed offset added."""
        self.frame += 1
        rot, root, trans = self.offset.add(pose.rotations, pose.root_positions, pose.local_translations(),
                                           np.array([self.frame]))
        return Motion(pose.skeleton, rot, root, pose.fps, trans, name=pose.name)


__all__ = ["LiveJumpConfig", "PreparedJump", "prepare_jump", "Offset", "LiveJump", "BlendOut"]
