"""From the network's rows (or any body pose) to the final pose on the
canonical skeleton: decode, foot locks with two-bone leg IK, two-bone arm IK
that puts the wrists exactly on the hand trackers, head and hands turned to
their trackers. Offline (whole takes, arrays ``[F, ...]``); :mod:`.live`
does the same one frame at a time.

Metres, radians, Blender Z up; quaternions (w, x, y, z).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import ik, rotations
from ..foot_contacts import close_gaps, hysteresis
from ..foot_lock import knee_pole, lock_offsets, solve_leg
from ..locomotion.features import quat_from_6d, yaw_quat
from ..motion import Motion
from ..skeleton import Skeleton
from .features import split_targets

LEGS = (("UpperLeg_L", "LowerLeg_L", "Foot_L", "Toes_L"), ("UpperLeg_R", "LowerLeg_R", "Foot_R", "Toes_R"))
ARMS = (("UpperArm_L", "LowerArm_L", "Hand_L"), ("UpperArm_R", "LowerArm_R", "Hand_R"))


@dataclass(frozen=True)
class PoseConfig:
    """How a decoded pose is finished."""

    #: Contact probability that plants a foot / that releases it.
    contact_on: float = 0.55
    contact_off: float = 0.35
    #: Frames over which a foot eases into and out of its lock.
    lock_ramp: float = 5.0
    #: Contacts shorter than this (frames) are dropped, gaps this short closed.
    min_contact: int = 3
    #: Hard reach limit of the arm solve (fraction of the arm's length)...
    arm_reach: float = 1.0
    #: ...beyond which the hand bone slides along the forearm to the target
    #: (an arm a little longer than the skeleton's); False leaves it short.
    stretch_arms: bool = True
    #: Fraction of the leg length where the leg's reach starts to soften.
    leg_soft: float = 0.97


def scaled_skeleton(sk: Skeleton, scale: float) -> Skeleton:
    out = sk.copy()
    out.offsets = out.offsets * scale
    out.tails = out.tails * scale
    return out


def decode(y: np.ndarray, origin: np.ndarray, hinv: np.ndarray, scale: float, sk: Skeleton) -> Motion:
    """Network rows ``y [F, O]`` (heading frame, canonical size) as a
    :class:`Motion` on ``sk`` (the canonical skeleton already scaled by
    ``scale``): joint_Root fixed at the origin, the hips placed by
    ``translations``."""
    parts = split_targets(y.astype(np.float64), len(sk))
    yaw = rotations.inv(hinv)
    F = len(y)
    local = rotations.identity((F, len(sk)))
    local[:, 1] = rotations.mul(yaw, quat_from_6d(parts["hip_rot"]))
    local[:, 2:] = quat_from_6d(parts["local"])
    trans = np.broadcast_to(sk.offsets, (F, len(sk), 3)).copy()
    trans[:, 1] = origin + rotations.rotate(yaw, parts["hip_pos"] * scale)
    trans[:, 0] = 0.0
    return Motion(sk, rotations.make_continuous(local), np.zeros((F, 3)), 30.0, trans)


def contact_mask(prob: np.ndarray, cfg: PoseConfig) -> np.ndarray:
    """Planted feet ``[F, 2]`` (bool) from contact probabilities, with hysteresis."""
    c = hysteresis(prob > cfg.contact_on, prob < cfg.contact_off, prob[0] > 0.5)
    return np.stack([close_gaps(c[:, k], cfg.min_contact, cfg.min_contact) for k in range(c.shape[1])], axis=1)


def _set_chain(local, W, parents, chain, new_world):
    """Local rotations of ``chain`` (joint indices, each the parent of the
    next) for new world rotations ``new_world`` (list, same order)."""
    for k, j in enumerate(chain):
        pw = W[:, parents[j]] if k == 0 else new_world[k - 1]
        local[:, j] = rotations.mul(rotations.inv(pw), new_world[k])


def finish(motion: Motion, targets: np.ndarray, target_rot: np.ndarray, contacts: np.ndarray,
           cfg: PoseConfig = None, fps: float = 30.0) -> tuple:
    """Lock planted feet (``contacts [F, 2]`` bool), solve both arms so the
    wrists sit on ``targets [F, 3, 3]`` (head, left, right hand), turn the
    head and hands to ``target_rot [F, 3, 4]``. Returns ``(motion, info)``,
    info: ``{"arm_stretch_m": [F, 2]}``."""
    cfg = cfg or PoseConfig()
    sk = motion.skeleton
    par = sk.parents
    ix = sk.index
    W, P = motion.world()
    local = motion.rotations.copy()
    trans = motion.local_translations() if motion.translations is None else motion.translations.copy()
    for side, (up, low, foot, toe) in enumerate(LEGS):
        u, l, f, t = ix(up), ix(low), ix(foot), ix(toe)
        leg = np.linalg.norm(sk.offsets[l]) + np.linalg.norm(sk.offsets[f])
        off, w, _ = lock_offsets(P[:, f], contacts[:, side], cfg.lock_ramp, hip=P[:, u],
                                 reach=np.full(len(P), 0.995 * leg))
        target = P[:, f] + off
        q_up, q_low, _ = solve_leg(P[:, u], P[:, l], P[:, f], target, knee_pole(P[:, u], P[:, l], P[:, f], P[:, t]),
                                   soft=cfg.leg_soft)
        new_up, new_low = rotations.mul(q_up, W[:, u]), rotations.mul(q_low, W[:, l])
        _set_chain(local, W, par, (u, l, f), [new_up, new_low, W[:, f]])
    stretch = np.zeros((len(P), 2))
    for side, (up, low, hand) in enumerate(ARMS):
        u, l, h = ix(up), ix(low), ix(hand)
        goal = targets[:, 1 + side]
        bend = P[:, l] - 0.5 * (P[:, u] + P[:, h])
        pole = P[:, l] + ik.unit_vectors(bend, np.broadcast_to([0.0, 0.3, -1.0], bend.shape)) * 0.3
        q_up, q_low, reached = ik.two_bone_ik(P[:, u], P[:, l], P[:, h], goal, pole, max_reach=cfg.arm_reach)
        new_up, new_low = rotations.mul(q_up, W[:, u]), rotations.mul(q_low, W[:, l])
        _set_chain(local, W, par, (u, l, h), [new_up, new_low, target_rot[:, 1 + side]])
        if cfg.stretch_arms:
            miss = goal - reached
            trans[:, h] = trans[:, h] + rotations.rotate(rotations.inv(new_low), miss)
            stretch[:, side] = np.linalg.norm(miss, axis=-1)
    head = ix("Head")
    local[:, head] = rotations.mul(rotations.inv(W[:, par[head]]), target_rot[:, 0])
    out = Motion(sk, rotations.make_continuous(local), motion.root_positions.copy(), fps, trans, name=motion.name)
    return out, {"arm_stretch_m": stretch}


def heading_quat(yaw) -> np.ndarray:
    return yaw_quat(yaw)
