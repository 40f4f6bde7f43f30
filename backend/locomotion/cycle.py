"""Cut a seamless gait loop out of steady locomotion.

:func:`extract_cycle` takes a clip of steady walking or running (e.g. from
:func:`~.path_follow.walk_cycle`) and returns one or two gait cycles that
loop:

1. The cycle length comes from the steps: the median interval between
   consecutive left-foot strikes (onsets of the ``Foot_L`` contact), or, when
   there are too few strikes, the first strong peak of the autocorrelation of
   the root-space joint positions (left and right differ, so the full stride
   beats the half stride).
2. The cut: among start frames ``a`` and lengths ``L`` within ~15 % of one
   or two cycles, the pair whose frame ``a + L`` (the frame that would follow
   the loop's last frame) best matches frame ``a`` in root-space joint
   positions and velocities.
3. The residual between frame ``a + L`` and frame ``a`` (local rotations as a
   left-multiplied correction slerped from identity, the hips' position
   relative to the character root linearly) is spread over the cycle, so the
   last frame flows into the first as any two consecutive frames do.
4. Root motion: the character root moves at a constant velocity (``"root
   motion"``: the loop repeats translated by the cycle's displacement) or
   stays put (``"in_place"``: the average forward drift is removed, the
   hips' bob and sway are kept), with a constant yaw (the mean facing).

The result is in the character-root convention of
:meth:`~.features.ClipFeatures.to_motion` (joint 0 = the ground root at
``(x, y, 0)`` with the yaw, the hips placed by ``translations`` relative to
it), whatever the input's joint 0 was; world joint positions are the input's
up to the seam correction (and the drift, in place).

Units: metres, seconds, radians; Blender Z-up; yaw 0 faces -Y.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from ..filters import gaussian_filter1d

from .. import rotations
from ..motion import Motion
from . import features

#: Velocity weight in the seam cost: seconds, turns m/s into metres (a 0.5 m/s
#: mismatch counts like a 5 cm pose mismatch).
VELOCITY_WEIGHT = 0.1


class Jumps(NamedTuple):
    """Frame-to-frame jumps: ``pose`` (m, largest joint displacement in root
    space between two consecutive frames) and ``velocity`` (m per frame,
    largest change of a joint's root-space frame difference)."""

    pose: float
    velocity: float


def _root_frame(world_pos: np.ndarray, names, fps: float, cyclic: bool = False, joints=None):
    """Character root ``(pos [F, 2], yaw [F])``; with ``cyclic`` the facing is
    smoothed as a loop (the clip's last frame is followed by its first)."""
    if not cyclic:
        pos, _, yaw = features.character_root(world_pos, names, fps, joints=joints)
        return pos, yaw
    pos, facing, _ = features.character_root(world_pos, names, fps, sigma=0.0, joints=joints)
    facing = gaussian_filter1d(facing, 0.25 * fps, axis=0, mode="wrap")
    facing /= np.maximum(np.linalg.norm(facing, axis=-1, keepdims=True), 1e-9)
    return pos, np.unwrap(features.yaw_from_facing(facing))


def root_space_positions(motion: Motion, cyclic: bool = False, joints=None) -> np.ndarray:
    """World joint positions ``[F, J, 3]`` in the character root's frame of
    each frame (origin at the ground-projected hips, facing -Y)."""
    world_pos = motion.world_positions()
    pos, yaw = _root_frame(world_pos, motion.skeleton.names, motion.fps, cyclic, joints)
    origin = np.concatenate([pos, np.zeros((len(pos), 1))], axis=1)
    return rotations.rotate(features.yaw_quat(-yaw)[:, None], world_pos - origin[:, None])


def seam_jump(motion: Motion, joints=None):
    """``(seam, max_inside)``: the :class:`Jumps` across the loop's seam (last
    frame -> first frame, and the velocity changes at the two frames around
    it) and the largest jumps between consecutive frames inside the clip.
    Measured on root-space joint positions (root = ground-projected hips and
    facing, the facing smoothed cyclically), so a root-motion loop's
    translation per cycle does not count as a jump."""
    p = root_space_positions(motion, cyclic=True, joints=joints)
    f = len(p)
    if f < 3:
        raise ValueError("seam_jump needs at least 3 frames")
    nxt = np.roll(p, -1, axis=0)  # frame i+1, the first frame after the last
    step = nxt - p  # [F, J, 3]: step[i] = p[i+1] - p[i]; step[F-1] crosses the seam
    pose = np.max(np.linalg.norm(step, axis=-1), axis=1)
    acc = np.roll(step, -1, axis=0) - step  # acc[i] = step[i+1] - step[i]
    vel = np.max(np.linalg.norm(acc, axis=-1), axis=1)
    seam = Jumps(float(pose[f - 1]), float(max(vel[f - 2], vel[f - 1])))
    inside = Jumps(float(pose[: f - 1].max()), float(vel[: f - 2].max()))
    return seam, inside


def _onsets(c: np.ndarray) -> np.ndarray:
    c = np.asarray(c) > 0.5
    return np.nonzero(c[1:] & ~c[:-1])[0] + 1


def cycle_period(motion: Motion, contacts=None, joints=None, min_seconds: float = 0.5, max_seconds: float = 2.0) -> float:
    """Gait cycle length in frames (float): the median interval between
    left-foot strikes, else the autocorrelation peak of root-space joint
    positions within ``[min_seconds, max_seconds]``."""
    fps = motion.fps
    lo, hi = int(np.floor(min_seconds * fps)), int(np.ceil(max_seconds * fps))
    if contacts is None:
        contacts = features.foot_contacts(motion.world_positions(), motion.skeleton.names, fps)
    contacts = np.asarray(contacts)
    for k in (0, 1):  # Foot_L strikes, else Toes_L
        on = _onsets(contacts[:, k])
        gaps = np.diff(on)
        gaps = gaps[(gaps >= lo) & (gaps <= hi)]
        if len(gaps) >= 2:
            return float(np.median(gaps))
    # Autocorrelation of the (mean removed) root-space pose.
    p = root_space_positions(motion, joints=joints)
    x = (p - p.mean(axis=0)).reshape(len(p), -1)
    f = len(x)
    hi = min(hi, f - 2)
    if hi <= lo:
        raise ValueError(f"clip too short ({f} frames) to find a gait cycle")
    ac = np.array([np.sum(x[: f - k] * x[k:]) / (f - k) for k in range(hi + 1)])
    ac /= max(ac[0], 1e-12)
    lags = np.arange(lo, hi + 1)
    return float(lags[int(np.argmax(ac[lo : hi + 1]))])


def _best_cut(pos: np.ndarray, vel: np.ndarray, lengths, max_start: int = None):
    """``(start, length, cost)`` minimising the mismatch between frame
    ``start + length`` and frame ``start``."""
    f = len(pos)
    best = (None, None, np.inf)
    for length in lengths:
        n = f - length
        if max_start is not None:
            n = min(n, max_start + 1)
        if n <= 0:
            continue
        dp = np.sum((pos[length : length + n] - pos[:n]) ** 2, axis=-1).mean(axis=1)
        dv = np.sum((vel[length : length + n] - vel[:n]) ** 2, axis=-1).mean(axis=1)
        cost = dp + VELOCITY_WEIGHT**2 * dv
        i = int(np.argmin(cost))
        if cost[i] < best[2]:
            best = (i, int(length), float(cost[i]))
    return best


def extract_cycle(
    motion: Motion,
    contacts=None,
    *,
    cycles=None,
    root: str = "root_motion",
    tolerance: float = 0.15,
    joints=None,
) -> Motion:
    """A seamless loop of one or two gait cycles from ``motion`` (steady
    locomotion of the Bandai skeleton, several cycles long).

    Args:
        contacts: ``[F, 4]`` contacts in :data:`~.features.CONTACT_JOINTS`
            order (detected with :func:`~.features.foot_contacts` when None);
            only used for the cycle length.
        cycles: 1 or 2, or None to take whichever cuts with the smaller
            mismatch (a stride that is not quite periodic often loops better
            over two).
        root: ``"root_motion"`` (the root advances at the cycle's average
            velocity: the loop repeats translated) or ``"in_place"`` (the
            average drift is removed; the hips keep their bob and sway).
        tolerance: the loop length is searched within this fraction of the
            measured cycle length.
        joints: role -> joint name overrides for the character root (see
            :func:`~.features.character_root`).

    Returns the loop (``L`` frames; frame ``L`` would be frame 0 again,
    translated in root-motion mode), named ``<name>_cycle``.
    """
    if root not in ("root_motion", "in_place"):
        raise ValueError(f"root must be 'root_motion' or 'in_place', got {root!r}")
    counts = (1, 2) if cycles is None else (int(cycles),)
    frame = _RootFrame.of(motion, joints)
    a, length = _find_loop(motion, frame, cycle_period(motion, contacts, joints), counts, tolerance)
    local, top_pos, trans, yaw, root3 = _loop_in_root_frame(motion, frame, a, length)
    n = length
    local = local[:n]
    local[:, 0] = features.yaw_quat(np.full(n, yaw))
    if root == "in_place":
        root_out = np.broadcast_to(np.array([frame.pos[a, 0], frame.pos[a, 1], 0.0]), (n, 3)).copy()
    else:
        root_out = root3[:n]
    trans = trans[:n]
    trans[:, 0] = root_out
    trans[:, np.nonzero(motion.skeleton.parents == 0)[0]] = top_pos[:n]
    return Motion(
        motion.skeleton,
        rotations.make_continuous(local, axis=0),
        root_out,
        motion.fps,
        trans,
        name=(motion.name or "motion") + "_cycle",
    )


class _RootFrame(NamedTuple):
    """The clip in its character-root frame: world rotations/positions
    ``[F, J, 4]``/``[F, J, 3]`` (metres), root ground position ``[F, 2]`` and
    yaw ``[F]`` (radians), and joint positions and velocities (m/s) relative
    to the root ``[F, J, 3]``."""

    world_rot: np.ndarray
    world_pos: np.ndarray
    pos: np.ndarray
    yaw: np.ndarray
    rel_pos: np.ndarray
    rel_vel: np.ndarray

    @classmethod
    def of(cls, motion: Motion, joints) -> "_RootFrame":
        world_rot, world_pos = motion.world()
        rpos, ryaw = _root_frame(world_pos, motion.skeleton.names, motion.fps, joints=joints)
        origin = np.concatenate([rpos, np.zeros((len(rpos), 1))], axis=1)
        unyaw = features.yaw_quat(-ryaw)[:, None]
        rel_pos = rotations.rotate(unyaw, world_pos - origin[:, None])
        rel_vel = rotations.rotate(unyaw, np.gradient(world_pos, axis=0) * motion.fps)
        return cls(world_rot, world_pos, rpos, ryaw, rel_pos, rel_vel)


def _find_loop(motion: Motion, frame: _RootFrame, period: float, counts, tolerance: float) -> tuple:
    """(first frame, length) of the best-matching loop of ``counts`` cycles,
    its length searched within ``tolerance`` of ``period`` frames per cycle."""
    best = (None, None, np.inf)
    for k in counts:
        target = k * period
        w = max(int(np.ceil(tolerance * target)), 1)
        lengths = range(max(int(round(target)) - w, 2), int(round(target)) + w + 1)
        cand = _best_cut(frame.rel_pos, frame.rel_vel, lengths)
        if cand[0] is not None and cand[2] < best[2]:
            best = cand
    a, length, _ = best
    if a is None:
        raise ValueError(
            f"clip of {motion.num_frames} frames is too short for a loop of {counts[0]} cycle(s) of {period:.1f} frames"
        )
    return a, length


def _loop_in_root_frame(motion: Motion, frame: _RootFrame, a: int, length: int) -> tuple:
    """Frames ``a .. a+length`` (the loop plus the frame that follows it)
    relative to a constant-yaw, constant-velocity root, with the residual
    (frame L should equal frame 0) spread linearly over the loop.

    Returns (local rotations ``[L+1, J, 4]``, positions of the root's children
    ``[L+1, C, 3]``, local translations ``[L+1, J, 3]``, the loop's yaw
    (radians), the root's positions ``[L+1, 3]``)."""
    sk = motion.skeleton
    idx = np.arange(a, a + length + 1)
    t = (idx - a) / length  # 0 .. 1
    face = np.mean(features.facing_from_yaw(frame.yaw[idx[:-1]]), axis=0)
    yaw = float(features.yaw_from_facing(face)) if np.linalg.norm(face) > 1e-6 else float(frame.yaw[a])
    disp = frame.pos[a + length] - frame.pos[a]
    root_lin = frame.pos[a] + t[:, None] * disp  # [L+1, 2]
    inv_yaw = features.yaw_quat(-yaw)

    # Local rotations, the children of joint 0 expressed relative to the new root.
    top = np.nonzero(sk.parents == 0)[0]
    local = motion.rotations[idx].copy()
    local[:, top] = rotations.mul(inv_yaw, frame.world_rot[idx][:, top])
    local[:, 0] = rotations.identity((len(idx),))
    local = rotations.make_continuous(local, axis=0)
    root3 = np.concatenate([root_lin, np.zeros((len(idx), 1))], axis=1)
    top_pos = rotations.rotate(inv_yaw, frame.world_pos[idx][:, top] - root3[:, None])
    trans = motion.local_translations()[idx]

    fix = rotations.mul(local[0], rotations.inv(local[-1]))  # left-multiplied, in the parent's frame
    corr = rotations.slerp(rotations.identity((1, len(fix))), fix[None], t[:, None])  # [L+1, J, 4]
    local = rotations.mul(corr, local)
    top_pos = top_pos + t[:, None, None] * (top_pos[0] - top_pos[-1])[None]
    trans = trans + t[:, None, None] * (trans[0] - trans[-1])[None]
    return local, top_pos, trans, yaw, root3


def shift_xy(motion: Motion, d) -> Motion:
    """``motion`` moved by ``d`` (m, world X and Y) on the ground plane."""
    d3 = np.array([float(d[0]), float(d[1]), 0.0])
    trans = None
    if motion.translations is not None:
        trans = motion.translations.copy()
        trans[:, motion.skeleton.parents < 0] += d3
    return Motion(motion.skeleton, motion.rotations, motion.root_positions + d3, motion.fps, trans, name=motion.name)


def close_loop(loop: Motion) -> Motion:
    """The loop plus the frame that follows it (frame 0 again, moved on by
    one cycle's displacement): keyed as the last key, it makes the f-curve
    period exactly the loop's length, so a Cycles modifier plays frame
    L-1 -> frame 0 like any two consecutive frames."""
    n = loop.num_frames
    step = loop.root_positions[1] - loop.root_positions[0] if n > 1 else np.zeros(3)
    disp = step * n  # extract_cycle's root moves linearly
    rot = np.concatenate([loop.rotations, loop.rotations[:1]])
    root = np.concatenate([loop.root_positions, loop.root_positions[:1] + disp])
    trans = None
    if loop.translations is not None:
        last = loop.translations[:1].copy()
        roots = loop.skeleton.parents < 0
        last[:, roots] = last[:, roots] + disp
        trans = np.concatenate([loop.translations, last])
    return Motion(loop.skeleton, rot, root, loop.fps, trans, name=loop.name)


__all__ = ["extract_cycle", "seam_jump", "cycle_period", "root_space_positions", "Jumps", "VELOCITY_WEIGHT",
           "shift_xy", "close_loop"]
