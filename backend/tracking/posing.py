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
from ..filters import gaussian_filter1d
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
    #: "locks": one foot lock per predicted contact run held with leg IK;
    #: "pin_feet": the walk controller's clean-up (``locomotion.cleanup.pin_feet``:
    #: contacts from the network's probabilities and the feet's own height and
    #: speed, ankle and toe locks, swing lift, eased knees).
    legs: str = "pin_feet"
    #: Also plant a foot where the decoded body's own foot is low and slow
    #: (:func:`.features.contacts_of`), not only where the network says so.
    geometric_contacts: bool = False
    #: Hard reach limit of the arm solve (fraction of the arm's length)...
    arm_reach: float = 1.0
    #: ...beyond which the hand bone slides along the forearm to the target
    #: (an arm a little longer than the skeleton's); False leaves it short.
    stretch_arms: bool = True
    #: Fraction of the leg length where the leg's reach starts to soften.
    leg_soft: float = 0.97
    #: The leg's soft reach starts no lower than its animated extension.
    keep_extension: bool = False
    #: A planted foot whose animated position strays this far (m, canonical
    #: size) from its lock lifts and plants anew (:func:`split_contacts`);
    #: None (default) keeps one lock per contact run (in a trial on the
    #: validation clips splitting changed nothing and added jitter on CMU 131).
    max_slide: float = None
    #: Move the whole body so the head joint sits on the head tracker before
    #: the legs are solved (the knees then bend or straighten under it), as
    #: far as the arms still reach their hand trackers (:func:`put_head_on`).
    head_on_target: bool = True
    #: Gaussian σ (frames at 30 fps) of that move: the network's own
    #: frame-to-frame head noise stays off the body.
    head_smooth: float = 1.0
    #: Height (m, canonical size; scaled with the body) below which no ankle
    #: goes (the Bandai ankles' planted height above the floor z = 0): a
    #: crouch then bends the knees instead of sinking the feet
    #: (:func:`keep_above_floor`; None: off). It lowers skate on the
    #: validation clips and on CMU 131 (bench/results/tracking_variants.md).
    ankle_height: float = 0.1174
    #: With ``legs="locks"``: put planted ankles at ``ankle_height`` (else they
    #: keep the network's height, only never below it).
    plant_on_floor: bool = False


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


def decode_matrices(y: np.ndarray, origin: np.ndarray, yaw: np.ndarray, scale: float, sk: Skeleton) -> tuple:
    """One network row ``y [O]`` as :func:`decode` makes it, in matrices:
    ``(local rotation matrices [J, 3, 3], local translations [J, 3])`` on
    ``sk`` (``origin [3]`` and ``yaw [3, 3]``, heading -> world: the frame's
    heading). The live tracker's one-frame path (no quaternion round trips)."""
    parts = split_targets(np.asarray(y, dtype=np.float64)[None], len(sk))
    six = np.concatenate([parts["hip_rot"], parts["local"][0]])  # [J - 1, 6]: Hips, then every joint below
    mats = np.empty((len(sk), 3, 3))
    mats[0] = np.eye(3)
    mats[1:] = rotations.matrix_from_6d(six)
    mats[1] = yaw @ mats[1]
    trans = np.array(sk.offsets, dtype=np.float64)
    trans[1] = origin + yaw @ (parts["hip_pos"][0] * scale)
    trans[0] = 0.0
    return mats, trans


def contact_mask(prob: np.ndarray, cfg: PoseConfig) -> np.ndarray:
    """Planted feet ``[F, 2]`` (bool) from contact probabilities, with hysteresis."""
    c = hysteresis(prob > cfg.contact_on, prob < cfg.contact_off, prob[0] > 0.5)
    return np.stack([close_gaps(c[:, k], cfg.min_contact, cfg.min_contact) for k in range(c.shape[1])], axis=1)


def split_contacts(pos, contact, hip, reach, max_slide: float, gap: int = 4) -> np.ndarray:
    """``contact [F]`` with each run cut where the foot at ``pos [F, 3]``
    strays more than ``max_slide`` (m, horizontal) from where the run began,
    or its hip (``hip [F, 3]``) cannot reach that place (``reach``, m): the
    foot lifts for ``gap`` frames and plants anew (a step) instead of
    sliding along unlocked, as one lock per run that cannot hold would."""
    out = np.asarray(contact, bool).copy()
    f = len(out)
    i = 0
    while i < f:
        if not out[i]:
            i += 1
            continue
        anchor = pos[i]
        j = i + 1
        while j < f and out[j]:
            far = np.linalg.norm(pos[j, :2] - anchor[:2]) > max_slide
            # out of reach: beyond the leg's reach and beyond the animated leg's own extension
            if far or np.linalg.norm(anchor - hip[j]) > max(reach, np.linalg.norm(pos[j] - hip[j])) + 0.01:
                out[j:min(j + gap, f)] = False
                j += gap
                break
            j += 1
        i = j
    return out


def put_head_on(motion: Motion, head: int, targets: np.ndarray, legs=(), keep_reach=(), *, smooth: float = 0.0,
                soft: float = 0.97, legs_reach: bool = False) -> Motion:
    """``motion`` moved as a whole (its root's path) so joint ``head`` sits
    on ``targets [F, 3]`` (metres, world), the move smoothed by a Gaussian of
    ``smooth`` frames (the network's own frame-to-frame noise stays off the
    body). ``legs``: per leg the joint indices (hip, knee, ankle, toe) whose
    ankles stay where they were, by two-bone leg IK with reach softened
    from ``soft`` of the leg's length (the knees bend or straighten under
    the moved body instead of carrying the feet along). ``keep_reach``:
    ``[(joint, goals [F, 3], reach m)]``, e.g. the shoulders and their hand
    trackers: a frame's move is cut short where one of them would end
    farther than ``reach`` from its goal (or than it is now, if farther),
    and with ``legs_reach`` where a leg would (its length; the legs then
    reach their ankles exactly, a straight leg included): a head tracker
    higher than the body can stand under, with its hands and feet where
    they go, leaves the head below it instead of lifting the feet off the
    floor or the hands off their trackers."""
    _, before = motion.world()
    sk = motion.skeleton
    miss = np.asarray(targets, dtype=np.float64)[:motion.num_frames] - before[:, head]
    rest = sk.rest_world()[1] if legs else None  # limb lengths across any twist bones between the joints
    lengths = [np.linalg.norm(rest[l] - rest[u]) + np.linalg.norm(rest[f] - rest[l]) for u, l, f, _ in legs]
    exts = [np.linalg.norm(before[:, f] - before[:, u], axis=-1) / n for (u, _, f, _), n in zip(legs, lengths)]
    limits = list(keep_reach) + ([(u, before[:, f], ik.MAX_REACH * n) for (u, _, f, _), n in zip(legs, lengths)]
                                 if legs_reach else [])
    if limits:
        goals = np.stack([np.asarray(g, dtype=np.float64)[:len(miss)] - before[:, j] for j, g, _ in limits])
        reach = np.stack([np.broadcast_to(np.asarray(r, dtype=np.float64), (len(miss),)) for _, _, r in limits])
        miss = ik.within_reach(miss, goals, reach)
    if smooth > 0 and len(miss) > 1:
        miss = gaussian_filter1d(miss, smooth, axis=0, mode="nearest")
    moved = Motion(sk, motion.rotations.copy(), motion.root_positions + miss, motion.fps,
                   None if motion.translations is None else motion.translations.copy(), name=motion.name)
    if not legs:
        return moved
    W, P = moved.world()
    local = moved.rotations
    for (u, l, f, t), ext, n in zip(legs, exts, lengths):
        # The reach softens no lower than the leg's own extension, so a leg
        # the move leaves as it was is left exactly as it was (and, with
        # legs_reach, no lower than the extension the move asks for, which
        # the cut keeps within the leg's length).
        if legs_reach:
            ext = np.maximum(ext, np.linalg.norm(before[:, f] - P[:, u], axis=-1) / n)
        q_up, q_low, _ = solve_leg(P[:, u], P[:, l], P[:, f], before[:, f],
                                   knee_pole(P[:, u], P[:, l], P[:, f], P[:, t]), soft=np.maximum(soft, ext))
        _turn_limb(local, W, sk.parents, (u, l, f), q_up, q_low)
    return moved


def _canonical_limbs(sk: Skeleton, targets: np.ndarray, cfg: PoseConfig) -> tuple:
    """``(legs, keep_reach)`` of :func:`put_head_on` for the canonical
    skeleton: both legs held, both shoulders within ``cfg.arm_reach`` of
    their arm's length from the hand trackers (``targets [F, 3, 3]``)."""
    ix = sk.index
    length = [np.linalg.norm(sk.offsets[ix(lo)]) + np.linalg.norm(sk.offsets[ix(h)]) for _, lo, h in ARMS]
    arms = [(ix(u), targets[:, 1 + side], cfg.arm_reach * length[side]) for side, (u, _, _) in enumerate(ARMS)]
    return [tuple(ix(n) for n in leg) for leg in LEGS], arms


def keep_above_floor(motion: Motion, ankle_floor: float, soft: float) -> Motion:
    """``motion`` with every ankle kept at least ``ankle_floor`` (m) above
    z = 0 by two-bone leg IK (the knees bend): a crouch whose legs the network
    left too long does not sink into the floor (and the clean-up's floor
    estimate, the feet's lowest heights, stays the real floor)."""
    sk = motion.skeleton
    ix, par = sk.index, sk.parents
    W, P = motion.world()
    local = motion.rotations.copy()
    changed = False
    for up, low, foot, toe in LEGS:
        u, l, f, t = ix(up), ix(low), ix(foot), ix(toe)
        low_frames = P[:, f, 2] < ankle_floor
        if not low_frames.any():
            continue
        changed = True
        target = P[:, f].copy()
        target[:, 2] = np.maximum(target[:, 2], ankle_floor)
        q_up, q_low, _ = solve_leg(P[:, u], P[:, l], P[:, f], target, knee_pole(P[:, u], P[:, l], P[:, f], P[:, t]),
                                   soft=soft)
        new_up, new_low = rotations.mul(q_up, W[:, u]), rotations.mul(q_low, W[:, l])
        fixed = local.copy()
        _set_chain(fixed, W, par, (u, l, f), [new_up, new_low, W[:, f]])
        local[low_frames] = fixed[low_frames]
    if not changed:
        return motion
    return Motion(sk, local, motion.root_positions.copy(), motion.fps, motion.translations, name=motion.name)


def _set_chain(local, W, parents, chain, new_world):
    """Local rotations of ``chain`` (joint indices, each the parent of the
    next) for new world rotations ``new_world`` (list, same order)."""
    for k, j in enumerate(chain):
        pw = W[:, parents[j]] if k == 0 else new_world[k - 1]
        local[:, j] = rotations.mul(rotations.inv(pw), new_world[k])


def finish(motion: Motion, targets: np.ndarray, target_rot: np.ndarray, contacts: np.ndarray,
           cfg: PoseConfig = None, fps: float = 30.0, scale: float = 1.0, prob: np.ndarray = None) -> tuple:
    """Lock planted feet (``contacts [F, 2]`` bool), solve both arms so the
    wrists sit on ``targets [F, 3, 3]`` (head, left, right hand), turn the
    head and hands to ``target_rot [F, 3, 4]``. Returns ``(motion, info)``,
    info: ``{"arm_stretch_m": [F, 2]}``. ``scale``: the body's size
    relative to the canonical skeleton (the floor heights scale with it)."""
    cfg = cfg or PoseConfig()
    contacts = np.array(contacts, bool)  # split in place below: the caller's stays as it was
    if cfg.head_on_target:
        legs, arms = _canonical_limbs(motion.skeleton, targets, cfg)
        motion = put_head_on(motion, motion.skeleton.index("Head"), targets[:, 0], legs, arms,
                             smooth=cfg.head_smooth, soft=cfg.leg_soft)
    if cfg.ankle_height is not None:
        motion = keep_above_floor(motion, cfg.ankle_height * scale, cfg.leg_soft)
    if cfg.legs == "pin_feet":
        from ..locomotion.cleanup import pin_feet, stance_contacts

        predicted = np.repeat(contacts.astype(np.float64) if prob is None else prob, 2, axis=1)
        c4 = stance_contacts(motion.world_positions(), motion.skeleton.names, fps, predicted)
        motion = pin_feet(motion, c4 > 0.5)
        contacts = np.stack([c4[:, :2].max(1), c4[:, 2:].max(1)], axis=1) > 0.5
    sk = motion.skeleton
    par = sk.parents
    ix = sk.index
    W, P = motion.world()
    local = motion.rotations.copy()
    trans = motion.local_translations() if motion.translations is None else motion.translations.copy()
    leg_miss = np.zeros((len(P), 2))
    for side, (up, low, foot, toe) in enumerate(LEGS if cfg.legs == "locks" else ()):
        u, l, f, t = ix(up), ix(low), ix(foot), ix(toe)
        leg = np.linalg.norm(sk.offsets[l]) + np.linalg.norm(sk.offsets[f])
        if cfg.max_slide is not None:
            contacts[:, side] = split_contacts(P[:, f], contacts[:, side], P[:, u], 0.99 * leg, cfg.max_slide * scale)
        off, w, _ = lock_offsets(P[:, f], contacts[:, side], cfg.lock_ramp, hip=P[:, u],
                                 reach=np.full(len(P), 0.995 * leg))
        target = P[:, f] + off
        if cfg.ankle_height is not None:
            floor = cfg.ankle_height * scale
            if cfg.plant_on_floor:
                target[:, 2] = (1.0 - w) * target[:, 2] + w * floor
            target[:, 2] = np.maximum(target[:, 2], floor)
        # The soft reach starts no lower than the animated leg's own extension, so
        # a straight standing leg still reaches its lock.
        ext = np.linalg.norm(P[:, f] - P[:, u], axis=-1) / leg
        q_up, q_low, reached = solve_leg(P[:, u], P[:, l], P[:, f], target,
                                         knee_pole(P[:, u], P[:, l], P[:, f], P[:, t]),
                                         soft=np.maximum(cfg.leg_soft, ext) if cfg.keep_extension else cfg.leg_soft)
        leg_miss[:, side] = np.linalg.norm(reached - target, axis=-1)
        new_up, new_low = rotations.mul(q_up, W[:, u]), rotations.mul(q_low, W[:, l])
        _set_chain(local, W, par, (u, l, f), [new_up, new_low, W[:, f]])
    stretch = np.zeros((len(P), 2))
    for side, (up, low, hand) in enumerate(ARMS):
        u, l, h = ix(up), ix(low), ix(hand)
        goal = targets[:, 1 + side]
        pole = ik.elbow_pole(P[:, u], P[:, l], P[:, h])
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
    return out, {"arm_stretch_m": stretch, "leg_miss_m": leg_miss, "contacts": contacts}


def heading_quat(yaw) -> np.ndarray:
    return yaw_quat(yaw)


def _leg_names(sk: Skeleton, mapping: dict, direct: bool = True):
    """Per leg (left, right) the mapped bone names ``{"upperleg", "lowerleg",
    "foot", "toes"}`` when ``mapping`` (canonical name -> bone name) makes
    each leg one hip -> knee -> ankle -> toe chain of ``sk`` (``direct``:
    each the parent of the next; else bones between them, such as a
    rig's twist bones, allowed); else None."""
    try:
        names = [{k: mapping[f"{k}_{s}"] for k in ("upperleg", "lowerleg", "foot", "toes")} for s in "lr"]
    except KeyError:
        return None
    for leg in names:
        if not all(n in sk.names for n in leg.values()):
            return None
        ix = {k: sk.names.index(n) for k, n in leg.items()}
        pairs = (("upperleg", "lowerleg"), ("lowerleg", "foot"), ("foot", "toes"))
        if any((sk.parents[ix[b]] != ix[a]) if direct else not _descends(sk.parents, ix[b], ix[a]) for a, b in pairs):
            return None
    return names


def pin_feet_on(motion: Motion, mapping: dict, contact_prob: np.ndarray) -> Motion:
    """``motion`` (world space, on any skeleton: a rig the tracked body was
    retargeted onto) with its feet pinned by the same clean-up as the
    tracked body's (``locomotion.cleanup.pin_feet``, contacts where the
    network's ``contact_prob [F, 2]`` (left, right) says so and the foot is
    near the floor). The rotation transfer keeps the tracked legs' angles,
    not where the feet stand: on legs of other proportions planted feet
    would slide. ``mapping``: canonical name -> bone name; a rig whose legs
    are not mapped hip -> knee -> ankle -> toe chains is returned as it is."""
    from ..locomotion.cleanup import PinConfig, pin_feet, stance_contacts

    legs = _leg_names(motion.skeleton, mapping)
    if legs is None:
        return motion
    left, right = legs
    cfg = PinConfig(foot_joints=(left["foot"], right["foot"]), toe_joints=(left["toes"], right["toes"]),
                    hip_joints=(left["upperleg"], right["upperleg"]),
                    knee_joints=(left["lowerleg"], right["lowerleg"]))
    joints = (left["foot"], left["toes"], right["foot"], right["toes"])
    c4 = stance_contacts(motion.world_positions(), motion.skeleton.names, motion.fps,
                         np.repeat(np.asarray(contact_prob, dtype=np.float64), 2, axis=1), joints)
    return pin_feet(motion, c4 > 0.5, config=cfg)


def reach_head_on(motion: Motion, mapping: dict, targets: np.ndarray, smooth: float = 1.0,
                  soft: float = 0.97) -> Motion:
    """``motion`` (world space, on any skeleton: a rig the tracked body was
    retargeted onto) moved as a whole so its mapped head joint sits on
    ``targets [F, 3, 3]`` (head, left hand, right hand; metres, world), the
    ankles kept where they were by leg IK; the move is cut short where a
    leg would not reach its ankle or an arm its hand tracker
    (:func:`put_head_on`). The retarget carries the tracked body's angles
    onto a trunk and legs of other lengths, which leaves the rig's head a
    few centimetres from a head tracker made for it. ``mapping``: canonical
    name -> bone name; without a mapped head the motion is returned as it
    is, legs not mapped as chains move with the body."""
    sk = motion.skeleton
    if mapping.get("head") not in sk.names:
        return motion
    legs = _leg_names(sk, mapping, direct=False) or ()
    chains = [tuple(sk.names.index(leg[k]) for k in ("upperleg", "lowerleg", "foot", "toes")) for leg in legs]
    arms, rest = [], sk.rest_world()[1]
    for side, s in enumerate("lr"):
        names = [mapping.get(f"{k}_{s}") for k in ("upperarm", "lowerarm", "hand")]
        if all(n in sk.names for n in names):
            u, low, h = (sk.names.index(n) for n in names)
            reach = np.linalg.norm(rest[low] - rest[u]) + np.linalg.norm(rest[h] - rest[low])
            arms.append((u, np.asarray(targets, dtype=np.float64)[:, 1 + side], reach))
    return put_head_on(motion, sk.names.index(mapping["head"]), np.asarray(targets)[:, 0], chains, arms,
                       smooth=smooth, soft=soft, legs_reach=True)


def _turn_limb(local, W, par, limb, q_up, q_low) -> None:
    """Local rotations ``local [F, J, 4]`` (in place) of a limb ``(upper,
    lower, end)`` whose upper joint's subtree turns by the world rotations
    ``q_up [F, 4]`` and the lower's by ``q_low`` (which includes ``q_up``),
    the end keeping its world rotation; ``W [F, J, 4]`` the world rotations
    before. Bones between the three (twist bones) ride along."""
    u, low, h = limb
    pu, pl, ph = int(par[u]), int(par[low]), int(par[h])
    new_u, new_l = rotations.mul(q_up, W[:, u]), rotations.mul(q_low, W[:, low])
    parent_l = new_u if pl == u else rotations.mul(q_up, W[:, pl])
    parent_h = new_l if ph == low else rotations.mul(q_low, W[:, ph])
    local[:, u] = rotations.mul(rotations.inv(W[:, pu]), new_u) if pu >= 0 else new_u
    local[:, low] = rotations.mul(rotations.inv(parent_l), new_l)
    local[:, h] = rotations.mul(rotations.inv(parent_h), W[:, h])


def _descends(parents, joint: int, ancestor: int) -> bool:
    j = int(parents[joint])
    while j >= 0:
        if j == ancestor:
            return True
        j = int(parents[j])
    return False


def reach_hands_on(motion: Motion, mapping: dict, targets: np.ndarray, arm_reach: float = 1.0) -> Motion:
    """``motion`` (world space, on any skeleton: a rig the tracked body was
    retargeted onto) with each hand joint moved onto ``targets [F, 2, 3]``
    (left, right; metres, world) by two-bone arm IK: the upper arm and the
    forearm turn, the elbow bending on the side it bent before, the hand
    keeps its world rotation. The retarget places a rig's hands relative to
    its own shoulders, so on a rig of other proportions they miss trackers
    made for it; this puts them on. Bones between the mapped ones (twist
    bones) ride along. ``mapping``: canonical name -> bone name; an arm
    whose upper arm, forearm and hand are not one chain is left as it is."""
    sk = motion.skeleton
    par = sk.parents
    W, P = motion.world()
    local = motion.rotations.copy()
    changed = False
    for side, s in enumerate("lr"):
        names = [mapping.get(f"{k}_{s}") for k in ("upperarm", "lowerarm", "hand")]
        if not all(n in sk.names for n in names):
            continue
        u, low, h = (sk.names.index(n) for n in names)
        if not (_descends(par, low, u) and _descends(par, h, low)):
            continue
        goal = np.asarray(targets, dtype=np.float64)[:, side]
        pole = ik.elbow_pole(P[:, u], P[:, low], P[:, h])
        q_up, q_low, _ = ik.two_bone_ik(P[:, u], P[:, low], P[:, h], goal, pole, max_reach=arm_reach)
        _turn_limb(local, W, par, (u, low, h), q_up, q_low)
        changed = True
    if not changed:
        return motion
    return Motion(sk, rotations.make_continuous(local), motion.root_positions.copy(), motion.fps,
                  None if motion.translations is None else motion.translations.copy(), name=motion.name)

