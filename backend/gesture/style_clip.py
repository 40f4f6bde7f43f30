"""The speaker's own style from a clip of them gesturing (``--style-clip``).

The clip (any humanoid: BVH, FBX, glTF, SMPL-X npz, read by the front end)
is retargeted onto the gesture skeleton and summarised as distributions
(:class:`ClipStyle`): wrist height relative to the shoulders and forward
distance in front of the pelvis (the targets :func:`.gesture_space.lift_hands`
maps the take's hands onto, in place of the training speaker's), lateral
spread, mean wrist speed (the energy, matched by the style layer's
amplitude gain) and, where the clip has fingers, the quantiles of its
finger-pose PCA coefficients (the take's coefficients are quantile-mapped
onto them). :func:`distances` measures how far a take's distributions are
from the clip's (1-D Wasserstein, per feature).

Units: metres, seconds; Blender Z up; SMPL-X joint names.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import rotations
from ..motion import Motion
from .gesture_space import QUANTILES, GestureSpaceTarget
from .representation import finger_index
from .style_features import hand_places, wrist_speed
from .style_layer import StyleError

#: Fewest frames a style clip needs (1 s at 30 fps).
MIN_FRAMES = 30
#: Range of the energy gain a clip may ask for.
CLIP_GAIN_RANGE = (0.25, 3.0)
#: A finger channel counts as animated when it turns more than this (rad) over the clip.
FINGER_MOTION_RAD = 0.05


@dataclass(frozen=True)
class ClipStyle:
    """A speaker's distributions: ``hand_target`` (height/forward quantiles
    and rest place, a :class:`~.gesture_space.GestureSpaceTarget`),
    ``lateral`` quantiles (m), ``speed`` mean wrist speed (m/s), ``fingers``
    axis-angles ``[N, 90]`` of the clip's finger frames or None, ``name``."""

    hand_target: GestureSpaceTarget
    lateral: np.ndarray
    speed: float
    fingers: np.ndarray = None
    name: str = ""


def to_gesture_skeleton(motion: Motion, src_map: dict) -> Motion:
    """A humanoid clip (``src_map``: its canonical bone mapping) on the SMPL-X
    skeleton at 30 fps, hips rooted, no IK (as the Bandai training clips)."""
    from ..bone_mapping import auto_map
    from ..resample import resample
    from ..retarget import RetargetConfig, retarget
    from ..smplx_motion import smplx_rest_skeleton

    tgt = smplx_rest_skeleton()
    m = retarget(motion, src_map, tgt, auto_map(tgt).bones,
                 RetargetConfig(root_mode="hips", ik=False, hand_ik=False)).motion
    return resample(m, 30.0) if abs(m.fps - 30.0) > 1e-3 else m


def clip_style(motion: Motion, src_map: dict, label: str = "") -> ClipStyle:
    """A style clip (``motion`` with its bone mapping ``src_map``) → its
    :class:`ClipStyle`. Too short a clip is a one-line :class:`StyleError`."""
    if motion.num_frames < MIN_FRAMES:
        raise StyleError(f"style clip {label or motion.name!r} has {motion.num_frames} frames; "
                         f"give at least {MIN_FRAMES} (1 s) of the speaker gesturing")
    m = to_gesture_skeleton(motion, src_map)
    fingers = None
    has_fingers = all(h in src_map for h in ("index1_l", "index1_r")) if isinstance(src_map, dict) else False
    if has_fingers:
        aa = rotations.to_axis_angle(rotations.normalize(m.rotations[:, finger_index()])).reshape(len(m.rotations), -1)
        fingers = aa if np.ptp(aa, axis=0).max() > FINGER_MOTION_RAD else None
    return from_smplx(m.rotations, m.root_positions, m.fps, fingers, label or motion.name)


def from_smplx(rot: np.ndarray, root: np.ndarray, fps: float, fingers=None, name: str = "") -> ClipStyle:
    """SMPL-X motion (``rot [T, 55, 4]``, ``root [T, 3]``) → its :class:`ClipStyle`."""
    from .dataset import positions

    pos = positions(rot, root)
    hp = hand_places(pos)
    sp = wrist_speed(pos, fps)
    calm = np.concatenate([sp[:1], sp]).max(axis=1)
    quiet = hp[calm <= np.percentile(calm, 25)][..., :2].reshape(-1, 2)
    target = GestureSpaceTarget(np.quantile(hp[..., 0], QUANTILES), np.quantile(hp[..., 1], QUANTILES),
                                np.median(quiet, axis=0), f"style clip {name}")
    return ClipStyle(target, np.quantile(hp[..., 2], QUANTILES), float(sp.mean()), fingers, name)


def match_energy(motion: Motion, clip: ClipStyle, passes: int = 2) -> Motion:
    """``motion`` with its amplitude around the slow pose scaled until its
    mean wrist speed is the clip's (within :data:`CLIP_GAIN_RANGE`)."""
    from .style_layer import apply_layer
    from .style_features import POSTURE

    total = 0.0
    for _ in range(passes):
        speed = wrist_speed(motion.world_positions(), motion.fps).mean()
        step = float(np.log(max(clip.speed, 1e-4) / max(speed, 1e-4)))
        step = float(np.clip(total + step, *np.log(CLIP_GAIN_RANGE))) - total
        if abs(step) < 1e-3:
            break
        T = motion.num_frames
        motion = apply_layer(motion, np.zeros((T, len(POSTURE), 3)), np.full(T, step), np.zeros(T))
        total += step
    return motion


def match_fingers(motion: Motion, clip: ClipStyle, finger_basis: dict) -> Motion:
    """``motion`` with its finger-pose PCA coefficients quantile-mapped onto
    the clip's (the part of the pose outside the basis is kept); unchanged
    when the clip has no finger motion or there is no basis."""
    if clip.fingers is None or finger_basis is None:
        return motion
    comps, mean = np.asarray(finger_basis["components"]), np.asarray(finger_basis["mean"])
    rot = motion.rotations.copy()
    T = len(rot)
    aa = rotations.to_axis_angle(rotations.normalize(rot[:, finger_index()])).reshape(T, -1)
    c = (aa - mean) @ comps.T
    ref = (clip.fingers - mean) @ comps.T
    new = np.empty_like(c)
    for k in range(c.shape[1]):
        rank = np.argsort(np.argsort(c[:, k], kind="stable"), kind="stable") / max(T - 1, 1)
        new[:, k] = np.quantile(ref[:, k], rank)
    aa = aa + (new - c) @ comps
    rot[:, finger_index()] = rotations.from_axis_angle(aa.reshape(T, 30, 3))
    return Motion(motion.skeleton, rotations.make_continuous(rotations.normalize(rot), axis=0),
                  motion.root_positions.copy(), motion.fps, None if motion.translations is None else motion.translations.copy(),
                  list(motion.shape_names), None if motion.shape_weights is None else motion.shape_weights.copy(),
                  motion.name)


def match_spread(motion: Motion, clip: ClipStyle, smooth_seconds: float = 0.2) -> Motion:
    """``motion`` with each wrist's lateral distance from the pelvis
    quantile-mapped onto the clip's (rank kept, the offsets smoothed over
    ``smooth_seconds``), the arm re-solved with two-bone IK as the hand lift
    does (only shoulder and elbow rotations change)."""
    from .. import ik
    from ..filters import gaussian_filter1d
    from .gesture_space import ARMS

    names_ = list(motion.skeleton.names)
    world_rot, pos = motion.world()
    hp = hand_places(pos)
    lat = hp[..., 2]
    rank = np.argsort(np.argsort(lat.reshape(-1), kind="stable"), kind="stable").reshape(lat.shape) / max(lat.size - 1, 1)
    delta = gaussian_filter1d(np.interp(rank, QUANTILES, clip.lateral) - lat, smooth_seconds * motion.fps, axis=0,
                              mode="nearest")
    from .viewer_metrics import facing

    fwd = facing(pos[:, names_.index("left_hip")], pos[:, names_.index("right_hip")])
    left = np.cross(np.array([0.0, 0.0, 1.0]), fwd)
    rot = motion.rotations.copy()
    parents = motion.skeleton.parents
    for side, (sh, el, wr) in enumerate(ARMS):
        a, b, c = (names_.index(n) for n in (sh, el, wr))
        out = left if side == 0 else -left
        goal = pos[:, c] + delta[:, side, None] * out
        pole = pos[:, b] + 0.03 * (pos[:, b] - 0.5 * (pos[:, a] + pos[:, c]))
        q_up, q_low, _ = ik.two_bone_ik(pos[:, a], pos[:, b], pos[:, c], goal, pole, soft=ik.SOFT_REACH)
        up_w = rotations.mul(q_up, world_rot[:, a])
        low_w = rotations.mul(q_low, world_rot[:, b])
        rot[:, a] = rotations.mul(rotations.inv(world_rot[:, parents[a]]), up_w)
        rot[:, b] = rotations.mul(rotations.inv(up_w), low_w)
    return Motion(motion.skeleton, rotations.make_continuous(rotations.normalize(rot), axis=0),
                  motion.root_positions.copy(), motion.fps, None if motion.translations is None else motion.translations.copy(),
                  list(motion.shape_names), None if motion.shape_weights is None else motion.shape_weights.copy(),
                  motion.name)


def _w1(a: np.ndarray, qb: np.ndarray) -> float:
    """1-D Wasserstein distance of samples ``a`` to a distribution given by quantiles ``qb`` at QUANTILES."""
    return float(np.mean(np.abs(np.quantile(np.asarray(a).reshape(-1), QUANTILES) - qb)))


def distances(motion: Motion, clip: ClipStyle, finger_basis: dict = None) -> dict:
    """How far a take's distributions are from the clip's: Wasserstein-1 of
    wrist height, forward, lateral (cm), the mean wrist speed's relative
    difference (%) and, with fingers, the mean W1 of the PCA coefficients."""
    pos = motion.world_positions()
    hp = hand_places(pos)
    t = clip.hand_target
    out = {"height_cm": 100 * _w1(hp[..., 0], t.height), "forward_cm": 100 * _w1(hp[..., 1], t.forward),
           "lateral_cm": 100 * _w1(hp[..., 2], clip.lateral),
           "speed_pct": 100 * abs(wrist_speed(pos, motion.fps).mean() / clip.speed - 1)}
    if clip.fingers is not None and finger_basis is not None:
        comps, mean = np.asarray(finger_basis["components"]), np.asarray(finger_basis["mean"])
        T = motion.num_frames
        aa = rotations.to_axis_angle(rotations.normalize(motion.rotations[:, finger_index()])).reshape(T, -1)
        c, ref = (aa - mean) @ comps.T, (clip.fingers - mean) @ comps.T
        out["finger_pca"] = float(np.mean([_w1(c[:, k], np.quantile(ref[:, k], QUANTILES)) for k in range(c.shape[1])]))
    return out


__all__ = ["ClipStyle", "clip_style", "distances", "from_smplx", "match_energy", "match_fingers", "match_spread", "to_gesture_skeleton"]
