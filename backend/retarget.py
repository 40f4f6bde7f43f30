"""Pose transfer from one humanoid skeleton onto another.

Mappings are plain dicts ``canonical joint name -> bone name`` (canonical
names: ``hips, spine, spine1, spine2, neck, head, jaw, eye_l/r, clavicle_l/r,
upperarm_l/r, lowerarm_l/r, hand_l/r, thumb1_l..pinky3_r, upperleg_l/r,
lowerleg_l/r, foot_l/r, toes_l/r``).

How a rotation crosses over: for every joint mapped on both sides a *bone
frame* is built from geometry in a reference pose (primary axis towards the
mapped child joint, secondary axis from the body's forward/up or the parent's
frame). The source's world rotation change from its reference pose is moved
onto the target bone so that both bone frames coincide::

    target_world(t) = src_world(t) * inv(src_ref_world) * Align * tgt_rest_world
    Align = B_src_ref * inv(B_tgt_rest)

so a target in A-pose gets the same world limb directions as a source in
T-pose, and bone rolls/axes never twist anything. The reference pose is each
skeleton's rest pose; when the source's rest is not a standing pose (e.g. the
Bandai-Namco BVH rest lies along X with left/right legs pointing opposite
ways) but the target's is, the most upright frame of the clip is used
instead. World rotations are then turned into local ones along the target
hierarchy; unmapped target bones keep their rest *local* rotation except
spine chains (the source's hips-to-chest rotation is spread over the target's
spine bones) and twist bones along the arms (a share of the twist).

Everything is metres, seconds, radians, armature space (Z up, characters
face -Y), quaternions ``(w, x, y, z)``; arrays are ``[frames, joints, ...]``
and no code loops over frames.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import options
from . import rotations
from .ik import MAX_REACH, SOFT_REACH, two_bone_ik
from .motion import Motion
from .skeleton import Skeleton
from .errors import UserError
from .filters import running_mean
from .foot_contacts import ContactConfig, detect_contacts
from .foot_lock import leaning_pole, lock_weights
from .foot_lock import solve_leg as solve_leg_ik

__all__ = ["RetargetConfig", "RetargetError", "RetargetResult", "retarget", "standing_rest", "two_bone_ik", "REQUIRED",
           "leg_length"]

SPINE = ("spine", "spine1", "spine2")
REQUIRED = (
    "hips", "head",
    "upperarm_l", "upperarm_r", "lowerarm_l", "lowerarm_r", "hand_l", "hand_r",
    "upperleg_l", "upperleg_r", "lowerleg_l", "lowerleg_r", "foot_l", "foot_r",
)
FINGERS = tuple(f"{f}{i}" for f in ("thumb", "index", "middle", "ring", "pinky") for i in (1, 2, 3))
ROOT_MODES = options.ROOT_MODES
_CHEST = "_chest"  # the lowest common ancestor of head and upper arms, mapped or not
_TRUNK = ("hips", "spine", "spine1", "spine2", _CHEST, "neck")
_EPS = 1e-9
#: The lowest point of a planted foot stays at most this far (metres) above
#: the floor (the acceptance limit is 2 cm)...
_PLANT_CAP = 0.015
#: ...and at most this far below it (a toe the rotation transfer tips down).
_SINK_CAP = 0.005
#: A swinging toe keeps the source's (scaled) clearance over the floor up to
#: about this much (m, a soft cap): enough to leave the skate metric's 3.3 cm
#: contact band the way the source's toe does, without lifting a foot of
#: another shape far off the source's path when it is pitched far toe-down.
_TOE_CLEARANCE = 0.05


class RetargetError(UserError):
    """A mapping or skeleton that cannot be retargeted; the message names the
    joint and says how to fix it."""


@dataclass
class RetargetResult:
    """``motion``: the clip on the target skeleton (local rotations incl.
    rest). ``root_motion``: ``[F, 3]`` armature-object translation (metres)
    for ``root_mode="object"``, else None. ``contacts``: ``[F, 2]`` bool
    (left, right foot planted in the source). ``leg_scale``: target / source
    hip-to-ankle length. ``reference_frame``: the source frame used as the
    source's reference pose, or None when its rest pose was used.
    ``foot_levels``: ``[2]`` the height (metres, above z = 0 of the target
    space) that planted left/right ankles are put at for a flat source foot.
    ``rest_floor``: the height of the floor the target stands on in its rest
    pose (0, or its root bone's height), None when the rest pose is not
    standing."""

    motion: Motion
    root_motion: np.ndarray
    contacts: np.ndarray
    leg_scale: float
    reference_frame: int = None
    foot_levels: np.ndarray = None
    rest_floor: float = None


# --- small helpers ---------------------------------------------------------------


def _unit(v, fallback=None):
    v = np.asarray(v, dtype=np.float64)
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    out = v / np.maximum(n, _EPS)
    if fallback is not None:
        out = np.where(n > 1e-8, out, np.asarray(fallback, dtype=np.float64))
    return out


def _frame_from(primary, reference, alt):
    """Rotation (quaternion) whose X column is ``primary`` and whose Y column
    is ``reference`` made orthogonal to it (``alt`` when they are parallel)."""
    x = _unit(primary, [0.0, 0.0, 1.0])
    y = reference - np.dot(reference, x) * x
    if np.linalg.norm(y) < 1e-3:
        y = alt - np.dot(alt, x) * x
    if np.linalg.norm(y) < 1e-3:
        k = np.argmin(np.abs(x))
        e = np.zeros(3)
        e[k] = 1.0
        y = e - np.dot(e, x) * x
    y = _unit(y)
    z = np.cross(x, y)
    return rotations.from_matrix(np.stack([x, y, z], axis=-1))


def _ancestors(sk: Skeleton, j: int) -> list:
    out = []
    while j >= 0:
        out.append(j)
        j = int(sk.parents[j])
    return out


def _lca(sk: Skeleton, joints) -> int:
    common = None
    for j in joints:
        a = _ancestors(sk, j)
        common = a if common is None else [x for x in common if x in set(a)]
    return common[0] if common else -1


def _chain_length(sk: Skeleton, top: int, j: int) -> float:
    """Sum of rest offset lengths from ``top`` down to ``j`` (``top`` must be
    an ancestor of ``j``)."""
    chain = _ancestors(sk, j)
    return float(sum(np.linalg.norm(sk.offsets[i]) for i in chain[: chain.index(top)]))


def leg_attached(sk: Skeleton, idx: dict, side: str) -> bool:
    """True when ``foot_<side>`` hangs below ``lowerleg_<side>`` (a plain FK
    leg); False for an IK-target-style foot elsewhere in the hierarchy (e.g.
    RobotExpressive's ``Foot.L``, a child of the root bone ``Bone`` that an IK
    constraint made the legs reach in the original file; glTF keeps no
    constraints, so in Blender the imported legs just end at the knee bone and
    the foot is placed on its own). Raises RetargetError when the leg is
    broken: the lower leg not below the upper leg, or the foot above them."""
    ul, ll, ft = idx[f"upperleg_{side}"], idx[f"lowerleg_{side}"], idx[f"foot_{side}"]
    if ll == ul or ul not in _ancestors(sk, ll):
        raise RetargetError(
            f"'lowerleg_{side}' ({sk.names[ll]}) is not below 'upperleg_{side}' ({sk.names[ul]}) in the skeleton: "
            f"fix the bone mapping"
        )
    if ft in _ancestors(sk, ll):
        raise RetargetError(
            f"'foot_{side}' ({sk.names[ft]}) is not below the leg: it is the lower leg or one of its ancestors: "
            f"fix the bone mapping"
        )
    return ll in _ancestors(sk, ft)


def leg_length(sk: Skeleton, idx: dict) -> float:
    """Mean hip-to-ankle length (metres) of both legs, from rest offsets (so
    it is independent of the rest pose). For a foot that is not below its
    lower leg (IK-target style) the shin is the rest distance from the knee
    joint to the foot joint."""
    total = []
    rest = None
    for s in ("l", "r"):
        ul, ll, ft = idx[f"upperleg_{s}"], idx[f"lowerleg_{s}"], idx[f"foot_{s}"]
        attached = leg_attached(sk, idx, s)
        thigh = _chain_length(sk, ul, ll)
        if attached:
            shin = _chain_length(sk, ll, ft)
        else:
            rest = sk.rest_world()[1] if rest is None else rest
            shin = float(np.linalg.norm(rest[ft] - rest[ll]))
            if shin < 1e-4 * max(thigh, 1e-3):
                raise RetargetError(
                    f"'foot_{s}' ({sk.names[ft]}) sits on the knee 'lowerleg_{s}' ({sk.names[ll]}) at rest: "
                    f"fix the bone mapping"
                )
        total.append(thigh + shin)
    return max(float(np.mean(total)), 1e-6)


# --- mapping validation ----------------------------------------------------------


def joint_indices(mapping: dict, sk: Skeleton, side: str) -> dict:
    """``canonical -> joint index`` of ``mapping`` (canonical -> bone name) on
    ``sk``, the required joints present and below the hips; raises
    RetargetError naming what is wrong (``side``: "source" or "target")."""
    if not isinstance(mapping, dict):
        raise RetargetError(f"the {side} bone mapping must be a dict canonical name -> bone name")
    idx = {}
    for canon, bone in mapping.items():
        if bone is None or bone == "":
            continue
        if bone not in sk.names:
            raise RetargetError(
                f"{side} mapping: '{canon}' -> '{bone}', but the {side} skeleton has no bone '{bone}': "
                f"fix the {side} bone mapping"
            )
        idx[str(canon)] = sk.names.index(bone)
    missing = [c for c in REQUIRED if c not in idx]
    if not any(s in idx for s in SPINE):
        missing.append("spine (or spine1/spine2)")
    if missing:
        raise RetargetError(
            f"required joint(s) {', '.join(repr(m) for m in missing)} missing from the {side} mapping: "
            f"map them to bones of the {side} skeleton (fix the {side} bone mapping)"
        )
    hips = idx["hips"]
    for c in ("head", "upperarm_l", "upperarm_r", "upperleg_l", "upperleg_r"):
        if hips not in _ancestors(sk, idx[c]):
            raise RetargetError(
                f"{side} mapping: '{c}' ({sk.names[idx[c]]}) is not below 'hips' ({sk.names[hips]}): "
                f"fix the {side} bone mapping"
            )
    chest = _lca(sk, [idx["head"], idx["upperarm_l"], idx["upperarm_r"]])
    if chest == hips or hips not in _ancestors(sk, chest):
        raise RetargetError(
            f"{side} skeleton: no spine bone between 'hips' and the head/arms: "
            f"the head and arms must hang from a spine bone below them"
        )
    idx[_CHEST] = chest
    return idx


# --- reference poses -------------------------------------------------------------


def _body_frame(pos, idx):
    """Body axes ``(forward, up, left)`` (unit ``[..., 3]``) of posed joint
    positions ``[..., J, 3]``: left from the hips/shoulders, up from hips to
    head, forward = left x up (-Y for a character in Blender's convention)."""
    def p(c):
        return pos[..., idx[c], :]

    lat = _unit(p("upperleg_l") - p("upperleg_r")) + _unit(p("upperarm_l") - p("upperarm_r"))
    lat = _unit(lat, [1.0, 0.0, 0.0])
    up = p("head") - p("hips")
    up = up - np.sum(up * lat, -1, keepdims=True) * lat
    up = _unit(up, [0.0, 0.0, 1.0])
    fwd = _unit(np.cross(lat, up), [0.0, -1.0, 0.0])
    return fwd, up, lat


def upright_score(pos, idx):
    """How much posed positions ``[..., J, 3]`` look like standing: legs down
    and straight, hips and shoulders agreeing on left/right. ~3 for a T- or
    A-pose, negative for a rest pose like Bandai-Namco's."""
    up = _unit(pos[..., idx["head"], :] - pos[..., idx["hips"], :])
    score = 0.0
    for s in ("l", "r"):
        leg = pos[..., idx[f"foot_{s}"], :] - pos[..., idx[f"upperleg_{s}"], :]
        thigh = np.linalg.norm(pos[..., idx[f"lowerleg_{s}"], :] - pos[..., idx[f"upperleg_{s}"], :], axis=-1)
        shin = np.linalg.norm(pos[..., idx[f"foot_{s}"], :] - pos[..., idx[f"lowerleg_{s}"], :], axis=-1)
        score = score - np.sum(_unit(leg) * up, -1) + 0.5 * np.linalg.norm(leg, axis=-1) / np.maximum(thigh + shin, _EPS)
    lat_l = _unit(pos[..., idx["upperleg_l"], :] - pos[..., idx["upperleg_r"], :])
    lat_a = _unit(pos[..., idx["upperarm_l"], :] - pos[..., idx["upperarm_r"], :])
    return score + np.sum(lat_l * lat_a, -1) - np.abs(np.sum(lat_a * up, -1))


_UPRIGHT = 2.8  # legs within ~25° of straight down, shoulders level-ish


# --- bone frames ----------------------------------------------------------------


def _side(c):
    return c[-1] if c.endswith(("_l", "_r")) else ""


def _child_candidates(c, driven, spine_inter):
    """Canonical joints whose direction gives ``c``'s primary axis, in order."""
    s = _side(c)
    if c == "hips":
        return (spine_inter[:1] or []) + [_CHEST]
    if c in spine_inter:
        k = spine_inter.index(c)
        return spine_inter[k + 1:k + 2] + [_CHEST]
    if c == _CHEST:
        return ["neck", "head"]
    if c == "neck":
        return ["head"]
    base = c[:-2] if s else c
    table = {
        "clavicle": ["upperarm"], "upperarm": ["lowerarm"], "lowerarm": ["hand"],
        "hand": ["middle1", "index1", "ring1", "pinky1"],
        "upperleg": ["lowerleg"], "lowerleg": ["foot"], "foot": ["toes"],
    }
    if base in table:
        return [f"{n}_{s}" for n in table[base]]
    if base in FINGERS and base[-1] in "12":
        return [f"{base[:-1]}{int(base[-1]) + 1}_{s}", f"{base[:-1]}3_{s}"] if base[-1] == "1" else [f"{base[:-1]}3_{s}"]
    return []


def _bone_frames(pos, idx, driven, spine_inter, order):
    """World bone frames ``{key: quat}`` for the driven keys, in a pose with
    joint positions ``pos [J, 3]``. Only joints mapped on *both* sides give
    primary axes, so source and target frames mean the same thing."""
    fwd, up, lat = _body_frame(pos, idx)
    frames = {}
    for c in order:
        s = _side(c)
        base = c[:-2] if s else c
        if c in ("head", "jaw") or base == "eye":
            frames[c] = _frame_from(up, fwd, lat)
            continue
        if c in _TRUNK:
            # The trunk is aligned on its overall hips-to-head direction, not
            # on each joint-to-joint segment: skeletons place spine joints
            # very differently (SMPL-X's zigzag inside the body vs a straight
            # game spine), and copying each segment's direction would bend
            # the target's spine into the source skeleton's shape.
            frames[c] = _frame_from(pos[idx["head"]] - pos[idx["hips"]], fwd, up)
            continue
        primary = None
        for k in _child_candidates(c, driven, spine_inter):
            if k in driven:
                d = pos[idx[k]] - pos[idx[c]]
                if np.linalg.norm(d) > 1e-4:
                    primary = d
                    break
        if primary is None:
            if base in ("foot", "toes"):
                primary = fwd
            else:
                parent = {"hand": f"lowerarm_{s}"}.get(base)
                if parent is None and base in FINGERS:
                    n = int(base[-1])
                    parent = f"{base[:-1]}{n - 1}_{s}" if n > 1 and f"{base[:-1]}{n - 1}_{s}" in driven else f"hand_{s}"
                if parent is None:
                    parent = "hips" if c == _CHEST else None
                d = pos[idx[c]] - pos[idx[parent]] if parent in idx else up
                primary = d if np.linalg.norm(d) > 1e-4 else up
        if base in ("foot", "toes"):
            ref, alt = up, lat
        elif base in FINGERS:
            hand = frames.get(f"hand_{s}")
            hm = rotations.to_matrix(hand) if hand is not None else np.stack([lat, fwd, up], -1)
            ref, alt = (hm[:, 2], hm[:, 1]) if base.startswith("thumb") else (hm[:, 1], hm[:, 2])
        else:
            ref, alt = fwd, up
        frames[c] = _frame_from(primary, ref, alt)
    return frames


def _match_trunk_direction(target, tidx, W, trans, src_dir, compose, iterations: int = 3):
    """Bend the target's spine (the bones strictly between hips and head) so
    its hips-to-head direction is the source's ``src_dir [F, 3]``, the
    correction shared evenly along the chain. Skeletons place spine joints
    differently (SMPL-X's curve inside the body, a straight game spine), so
    per-bone rotations alone put the head elsewhere when the spine bends;
    this keeps the posture (lean, slump, turn) and leaves the head's and the
    arms' world rotations as transferred."""
    hips, head = tidx["hips"], tidx["head"]
    chain = _ancestors(target, head)
    if hips not in chain:
        return
    spine = chain[1: chain.index(hips)][::-1]  # bottom to top, hips and head excluded
    if not spine:
        return
    n = len(spine)
    for _ in range(iterations):
        P = _fk(target, W, trans)
        q = rotations.between_vectors(P[:, head] - P[:, hips], src_dir)
        step = rotations.slerp(rotations.identity(q.shape[:-1]), q, np.full(q.shape[:-1], 1.0 / n))
        acc = rotations.identity(q.shape[:-1])
        moved = set()
        for j in spine:
            acc = rotations.mul(step, acc)
            W[:, j] = rotations.mul(acc, W[:, j])
            moved.add(j)
        # Unmapped bones hanging off the spine (clavicle helpers, twist
        # bones) follow their parents again.
        compose()
        if np.max(rotations.angle_between(q, rotations.identity(q.shape[:-1]))) < 1e-4:
            break


def _arm_ik(st, fwd_rest):
    """Two-bone arm IK toward the source's shoulder-relative hand position
    scaled by the arm-length ratio; updates ``st.W`` (the target's world
    rotations ``[F, Jt, 4]``) in place. ``fwd_rest [3]``: the target's
    forward axis at rest. Arms whose hand is not below the lower arm are
    left alone."""
    target, src, sidx, tidx, W = st.target, st.motion.skeleton, st.sidx, st.tidx, st.W
    trans, s_pos_w, world_off, t_rest_rot = st.trans, st.s_pos_w, st.world_off, st.t_rest_rot
    _, s_rest = src.rest_world()
    _, t_rest = target.rest_world()
    Pw = _fk(target, W, trans, world_off)
    for s_c in "lr":
        ua, la, h = (tidx[f"{b}_{s_c}"] for b in ("upperarm", "lowerarm", "hand"))
        chain = _ancestors(target, h)
        if la not in chain or ua not in chain:
            continue
        su, sl, sh = (sidx[f"{b}_{s_c}"] for b in ("upperarm", "lowerarm", "hand"))
        arm_s = np.linalg.norm(s_rest[sl] - s_rest[su]) + np.linalg.norm(s_rest[sh] - s_rest[sl])
        arm_t = np.linalg.norm(t_rest[la] - t_rest[ua]) + np.linalg.norm(t_rest[h] - t_rest[la])
        if arm_s < _EPS or arm_t < _EPS:
            continue
        a, b, end = Pw[:, ua], Pw[:, la], Pw[:, h]
        goal = a + (s_pos_w[:, sh] - s_pos_w[:, su]) * (arm_t / arm_s)
        # A straight arm has no bend plane: elbows then point backwards.
        elbow_back = rotations.rotate(W[:, la], rotations.rotate(rotations.inv(t_rest_rot[la]), -fwd_rest))
        pole = leaning_pole(a, b, end, elbow_back)
        length = np.linalg.norm(b - a, axis=-1) + np.linalg.norm(end - b, axis=-1)
        soft = np.clip(np.linalg.norm(end - a, axis=-1) / np.maximum(length, _EPS), SOFT_REACH, MAX_REACH)
        q1, q2, _ = two_bone_ik(a, b, end, goal, pole, soft=soft)
        # Frames whose hand is already in place keep their exact pose (the
        # reach clamp would otherwise bend an arm that is perfectly straight).
        keep = np.linalg.norm(goal - end, axis=-1) < 1e-5
        q1[keep] = (1.0, 0.0, 0.0, 0.0)
        q2[keep] = (1.0, 0.0, 0.0, 0.0)
        upper = chain[chain.index(la) + 1: chain.index(ua) + 1]
        for j in upper:
            W[:, j] = rotations.mul(q1, W[:, j])
        W[:, la] = rotations.mul(q2, W[:, la])


# --- contacts ---------------------------------------------------------------------


def foot_contacts(pos, feet, fps, leg, height_thr=0.025, speed_thr=0.35):
    """Planted-foot mask ``[F, len(feet)]`` from joint positions ``[F, J, 3]``.

    A foot joint is planted when it is within ``height_thr * leg`` metres of
    its own lowest level (5th percentile of its height over the clip) and its
    horizontal speed is below ``speed_thr * leg`` metres/second; leaving
    needs 1.5x the speed (hysteresis, both ways in time; the height limit is
    not relaxed, as a rising heel means the foot is leaving), and runs/gaps
    shorter than ~0.07 s are removed/filled (:func:`~.foot_contacts.detect_contacts`).
    """
    if pos.shape[0] < 2:
        return np.zeros((pos.shape[0], len(feet)), dtype=bool)
    min_len = max(2, int(round(0.07 * fps)))
    cfg = ContactConfig(floor_percentile=5, height=height_thr, speed=speed_thr, per_leg=True, release=1.5,
                        release_height=1.0, both_ways=True, max_gap=min_len, min_run=min_len)
    return detect_contacts(pos[:, list(feet)], fps, cfg, leg)


def _soft_band(x, lo, hi):
    """``x`` squashed into ``(lo, hi)`` (lo < 0 < hi) with tanh on either
    side of 0: slope 1 at 0, so small values pass almost unchanged."""
    x = np.asarray(x, dtype=np.float64)
    return np.where(x > 0, hi * np.tanh(x / hi), lo * np.tanh(x / lo))


def _rest_floor(sk: Skeleton, idx: dict, rest_pos, leg: float):
    """Height of the floor a target stands on in its rest pose, or None.

    z = 0 when the rest ankles are a plausible ankle height above it (the
    usual case: mannequin, Ready Player Me); else the rig's root bone (the
    top ancestor of the hips) when the ankles stand just above it (e.g.
    RobotExpressive, whose imported rest pose stands 2.4 m below its origin
    on its root bone ``Bone``); None when the rest pose is not standing."""
    if upright_score(rest_pos, idx) <= _UPRIGHT:
        return None
    ankle = min(rest_pos[idx["foot_l"], 2], rest_pos[idx["foot_r"], 2])
    top = _ancestors(sk, idx["hips"])[-1]
    for z in (0.0, float(rest_pos[top, 2])):
        if 0.0 < ankle - z < 0.25 * leg:
            return z
    return None


def _smooth_max(x, r):
    """A smooth curve ``>= x`` (nearly): a running max over ``2r + 1``
    frames, then a running mean over the same window, so a requirement
    that appears for a few frames is eased in and out."""
    pad = np.pad(x, r, mode="edge")
    win = np.lib.stride_tricks.sliding_window_view(pad, 2 * r + 1)
    return running_mean(win.max(axis=-1), 2 * r + 1)


def _fk(sk: Skeleton, W, trans, offset=None):
    """Joint positions ``[F, J, 3]`` from world rotations and local
    translations, ``offset`` (``[F, 1, 3]``, the object's motion) added in
    place: ``_fk(...) + offset`` without a second ``[F, J, 3]`` array."""
    P = np.empty(trans.shape)
    for j, p in enumerate(sk.parents):
        P[:, j] = trans[:, j] if p < 0 else P[:, p] + rotations.rotate(W[:, p], trans[:, j])
    if offset is not None:
        P += offset
    return P


def _flat_frame(s_pos_w, contact, fs, ts) -> int:
    """The frame where a planted source foot is flattest: among its contact
    frames whose foot pitch (ankle -> toe) is near the stance's median (the
    lowest ankle + toe alone can fall on a heel strike or a toe-off in a
    varied take, e.g. a Drive recording, and a pitched reference pitches
    every flat target foot), the one with the lowest ankle + toe."""
    frames = np.nonzero(contact)[0]
    if ts is not None and len(frames) > 4:
        v = s_pos_w[frames, ts] - s_pos_w[frames, fs]
        pitch = np.arctan2(v[:, 2], np.linalg.norm(v[:, :2], axis=-1))
        near = np.abs(pitch - np.median(pitch)) < np.radians(4.0)
        frames = frames[near] if near.any() else frames
    h = s_pos_w[frames, fs, 2] + (0.0 if ts is None else s_pos_w[frames, ts, 2])
    return int(frames[np.argmin(h)])


# --- the phases' shared state -----------------------------------------------------


@dataclass
class _State:
    """What the phases of :func:`retarget` share, filled phase by phase.

    Metres, radians, armature space (Z up); quaternions ``(w, x, y, z)``.
    ``s_*`` arrays index source joints, ``t_*`` / ``W`` / ``trans`` target
    joints; ``[F, J, ...]`` per frame. After the phase that sets them, only
    ``W`` / ``trans`` (the pose), the bone frame dicts (feet references) and
    ``p_hips``'s height (once the trunk is assembled) change."""

    motion: Motion
    target: Skeleton
    sidx: dict  # canonical name -> source joint (incl. _CHEST)
    tidx: dict  # canonical name -> target joint (incl. _CHEST)
    root_j: int = None  # the root bone carrying ground motion (root_mode "root_bone")
    driven: list = None  # canonical joints whose rotation crosses over
    spine_inter: list = None  # spine joints mapped on both sides between hips and chest
    order: list = None  # ``driven``, parents before children
    # source pose [F, Js, 4] / [F, Js, 3] and target rest [Jt, 4] / [Jt, 3]
    s_rot_w: np.ndarray = None
    s_pos_w: np.ndarray = None
    t_rest_rot: np.ndarray = None
    t_rest_pos: np.ndarray = None
    # the source reference pose and the bone frames matched in it
    ref_frame: int = None
    posed_ref: bool = False  # the reference is a posed frame, not the source's rest
    s_ref_rot: np.ndarray = None
    s_ref_pos: np.ndarray = None
    flat_rot: np.ndarray = None  # flat_pose's world pose, or None
    flat_pos: np.ndarray = None
    b_src: dict = None
    b_tgt: dict = None
    ref_rot: dict = None
    # legs and floors
    s_leg: float = None
    t_leg: float = None
    contacts: np.ndarray = None  # [F, 2] bool
    t_floor: float = None
    k: float = None  # leg ratio, target / source
    attached: list = None
    s_feet: list = None
    s_toes: list = None
    t_feet: list = None
    t_toes: list = None
    g_s: float = None  # the source's floor height
    s_flat: np.ndarray = None  # [2] source flat-foot ankle heights
    t_level: np.ndarray = None  # [2] target planted ankle heights
    toe_drop: list = None
    # target rotations: Y world deltas from rest, desired world rotations,
    # twist shares [F, 4] per target joint
    Y: dict = None
    desired: dict = None
    twist: dict = None
    # translation and the assembled pose
    p_hips: np.ndarray = None  # [F, 3]
    root_motion: np.ndarray = None  # [F, 3] or None
    W: np.ndarray = None  # [F, Jt, 4] world rotations
    trans: np.ndarray = None  # [F, Jt, 3] local translations
    yaw_q: np.ndarray = None
    world_off: np.ndarray = None  # [F, 1, 3]

    @property
    def F(self) -> int:
        return self.motion.num_frames


# --- phases -------------------------------------------------------------------------


def _in_spine_chain(sk, ix, c):
    return ix[c] != ix[_CHEST] and ix[c] in _ancestors(sk, ix[_CHEST]) and ix[c] != ix["hips"]


def _setup(motion, src_map, target, tgt_map, root_mode, root_bone) -> _State:
    """Checks the options and mappings; picks the driven joints."""
    if root_mode not in ROOT_MODES:
        raise RetargetError(f"root_mode must be one of {ROOT_MODES}, got {root_mode!r}")
    src = motion.skeleton
    sidx = joint_indices(src_map, src, "source")
    tidx = joint_indices(tgt_map, target, "target")

    root_j = None
    if root_mode == "root_bone":
        if not root_bone or root_bone not in target.names:
            raise RetargetError(
                f"root_mode='root_bone' needs root_bone set to a bone of the target skeleton, got {root_bone!r}"
            )
        root_j = target.names.index(root_bone)
        if root_j not in _ancestors(target, int(target.parents[tidx["hips"]])):
            raise RetargetError(f"root bone '{root_bone}' is not an ancestor of the hips bone: pick the rig's root bone")

    # Spine anchors: hips, joints mapped on both sides strictly between the
    # hips and each side's chest, and the chests themselves.
    spine_inter = [c for c in SPINE if c in sidx and c in tidx
                   and _in_spine_chain(src, sidx, c) and _in_spine_chain(target, tidx, c)]
    chest_names = {c for c in SPINE if c in sidx and sidx[c] == sidx[_CHEST]} | {
        c for c in SPINE if c in tidx and tidx[c] == tidx[_CHEST]}
    chest_names |= {c for c in SPINE if c not in spine_inter}
    driven = [c for c in sidx if c in tidx and c not in chest_names and c != _CHEST]
    driven = [c for c in driven if not (tidx[c] == tidx[_CHEST] or sidx[c] == sidx[_CHEST])]
    driven.append(_CHEST)
    # Parents before children, so fingers can use the hand's frame.
    order = sorted(driven, key=lambda c: (target.depth()[tidx[c]], c))
    return _State(motion, target, sidx, tidx, root_j, driven, spine_inter, order)


def _reference_poses(st: _State, reference, flat_pose) -> None:
    """The source's reference pose, both sides' bone frames in it, contacts
    and leg lengths."""
    src, target, sidx, tidx = st.motion.skeleton, st.target, st.sidx, st.tidx
    s_rot_w, s_pos_w = st.motion.world()
    s_rest_rot, s_rest_pos = src.rest_world()
    t_rest_rot, t_rest_pos = target.rest_world()
    ref_frame = None
    posed_ref = False
    if reference is not None:
        r_rot, r_pos = reference.world()
        s_ref_rot, s_ref_pos = r_rot[0], r_pos[0]
        posed_ref = True
    elif upright_score(t_rest_pos, tidx) > _UPRIGHT and upright_score(s_rest_pos, sidx) <= _UPRIGHT:
        if flat_pose is not None:
            # The standing pose is the reference: the most upright frame
            # can be one of the steps into it, whose pelvis is rolled ~1
            # degree; that roll, mapped onto the target's level rest
            # pelvis, is 4 mm on a hip joint and bends a standing knee 6
            # degrees.
            s_ref_rot, s_ref_pos = (x[0] for x in flat_pose.world())
        else:
            ref_frame = int(np.argmax(upright_score(s_pos_w, sidx)))
            s_ref_rot, s_ref_pos = s_rot_w[ref_frame], s_pos_w[ref_frame]
        posed_ref = True
    else:
        s_ref_rot, s_ref_pos = s_rest_rot, s_rest_pos
    st.s_rot_w, st.s_pos_w, st.t_rest_rot, st.t_rest_pos = s_rot_w, s_pos_w, t_rest_rot, t_rest_pos
    st.ref_frame, st.posed_ref, st.s_ref_rot, st.s_ref_pos = ref_frame, posed_ref, s_ref_rot, s_ref_pos
    st.b_src = _bone_frames(s_ref_pos, sidx, set(st.driven), st.spine_inter, st.order)
    st.b_tgt = _bone_frames(t_rest_pos, tidx, set(st.driven), st.spine_inter, st.order)
    st.ref_rot = {c: s_ref_rot[sidx[c]] for c in st.driven}
    st.s_leg = leg_length(src, sidx)
    st.t_leg = leg_length(target, tidx)
    st.contacts = foot_contacts(s_pos_w, [sidx["foot_l"], sidx["foot_r"]], st.motion.fps, st.s_leg)
    st.t_floor = _rest_floor(target, tidx, t_rest_pos, st.t_leg)
    if flat_pose is not None:
        st.flat_rot, st.flat_pos = (x[0] for x in flat_pose.world())


def _foot_references(st: _State, has_reference: bool) -> None:
    """Feet: the source's reference is a frame where that foot is flat on the
    ground (not the most upright frame, where it may be tipped), and both
    frames are "horizontal foot direction, world up": a flat planted source
    foot is then a flat target foot, whatever each rig's ankle height and
    foot pitch at rest. A given ``reference`` pose is taken as standing flat:
    its feet are the reference (the same for every clip)."""
    has_flat = st.flat_pos is not None
    if not ((st.posed_ref or has_flat) and st.t_floor is not None):
        return
    sidx, tidx, t_rest_pos, contacts = st.sidx, st.tidx, st.t_rest_pos, st.contacts
    up = np.array([0.0, 0.0, 1.0])
    for k_, side in enumerate(("l", "r")):
        keys = [c for c in (f"foot_{side}", f"toes_{side}") if c in st.driven]
        if not keys or (not has_reference and not has_flat and not contacts[:, k_].any()):
            continue
        fs, ts = sidx[f"foot_{side}"], sidx.get(f"toes_{side}")
        if has_flat:
            f_rot, f_pos = st.flat_rot, st.flat_pos
        elif has_reference:
            f_rot, f_pos = st.s_ref_rot, st.s_ref_pos
        else:
            fr = _flat_frame(st.s_pos_w, contacts[:, k_], fs, ts)
            f_rot, f_pos = st.s_rot_w[fr], st.s_pos_w[fr]
        fwd_s = _body_frame(f_pos, sidx)[0]
        d_s = f_pos[ts] - f_pos[fs] if ts is not None else fwd_s
        tt = tidx.get(f"toes_{side}")
        d_t = t_rest_pos[tt] - t_rest_pos[tidx[f"foot_{side}"]] if tt is not None else _body_frame(t_rest_pos, tidx)[0]
        for c in keys:
            st.b_src[c] = _frame_from(d_s * [1.0, 1.0, 0.0], up, fwd_s)
            st.b_tgt[c] = _frame_from(d_t * [1.0, 1.0, 0.0], up, _body_frame(t_rest_pos, tidx)[0])
            st.ref_rot[c] = f_rot[sidx[c]]


def _desired_rotations(st: _State) -> None:
    """Desired world rotations of driven target bones (``Y``: the world delta
    from rest), spine bones between anchors slerped between theirs."""
    sidx, tidx, target, t_rest_pos, F = st.sidx, st.tidx, st.target, st.t_rest_pos, st.F
    Y = {}
    for c in st.driven:
        s, t = sidx[c], tidx[c]
        align = rotations.mul(st.b_src[c], rotations.inv(st.b_tgt[c]))
        Y[t] = rotations.mul(rotations.mul(st.s_rot_w[:, s], rotations.inv(st.ref_rot[c])), align)

    chain = _ancestors(target, tidx[_CHEST])
    chain = chain[: chain.index(tidx["hips"]) + 1][::-1]  # hips ... chest
    cum = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(t_rest_pos[chain], axis=0), axis=-1))])
    anchors = [k for k, j in enumerate(chain) if j in Y]
    for k, j in enumerate(chain):
        if j in Y:
            continue
        a = max(x for x in anchors if x < k)
        b = min(x for x in anchors if x > k)
        span = cum[b] - cum[a]
        f = (cum[k] - cum[a]) / span if span > 1e-6 else (k - a) / (b - a)
        Y[j] = rotations.slerp(Y[chain[a]], Y[chain[b]], np.full(F, f))
    st.Y = Y
    st.desired = {j: rotations.mul(y, st.t_rest_rot[j]) for j, y in Y.items()}


def _arm_twists(st: _State) -> None:
    """Twist bones along the arms: a share of the segment end's twist."""
    target, tidx, t_rest_rot, t_rest_pos, desired, F = (
        st.target, st.tidx, st.t_rest_rot, st.t_rest_pos, st.desired, st.F)
    twist = {}
    for s in ("l", "r"):
        for a_c, n_c in ((f"upperarm_{s}", f"lowerarm_{s}"), (f"lowerarm_{s}", f"hand_{s}")):
            if a_c not in st.driven or n_c not in st.driven:
                continue
            A, N = tidx[a_c], tidx[n_c]
            path = _ancestors(target, N)
            if A not in path:
                continue
            inner = path[1: path.index(A)][::-1]  # bones strictly between A and N
            leaves = [c for c in target.children(A) + [x for i in inner for x in target.children(i)]
                      if c not in inner and c != N and not any(c in _ancestors(target, v) for v in tidx.values())
                      and any(w in target.names[c].lower() for w in ("twist", "roll"))]
            if not inner and not leaves:
                continue
            axis_local = rotations.rotate(rotations.inv(t_rest_rot[A]), t_rest_pos[N] - t_rest_pos[A])
            seg = max(np.linalg.norm(t_rest_pos[N] - t_rest_pos[A]), 1e-6)
            # N's rotation relative to its rest continuation of A, in world
            cont = rotations.mul(desired[A], rotations.mul(rotations.inv(t_rest_rot[A]), t_rest_rot[N]))
            rel = rotations.mul(desired[N], rotations.inv(cont))
            axis = _unit(rotations.rotate(desired[A], axis_local))
            proj = np.sum(rel[:, 1:] * axis, -1, keepdims=True) * axis
            tw = rotations.normalize(np.concatenate([rel[:, :1], proj], -1))
            for j in inner:
                f = np.clip(np.linalg.norm(t_rest_pos[j] - t_rest_pos[A]) / seg, 0.0, 1.0)
                twist[j] = rotations.slerp(rotations.identity((F,)), tw, np.full(F, f))
            for j in leaves:
                twist[j] = rotations.slerp(rotations.identity((F,)), tw, np.full(F, 0.5))
    st.twist = twist


def _floors(st: _State, ground_height) -> None:
    """Leg ratio, both floors and the planted ankle heights of each side."""
    sidx, tidx, s_pos_w, contacts, t_rest_pos, F = st.sidx, st.tidx, st.s_pos_w, st.contacts, st.t_rest_pos, st.F
    k = st.t_leg / st.s_leg
    st.attached = [leg_attached(st.target, tidx, s) for s in ("l", "r")]
    s_feet = [sidx["foot_l"], sidx["foot_r"]]
    if ground_height is None:
        low = [np.percentile(s_pos_w[:, j, 2], 5) for j in s_feet + [sidx[c] for c in ("toes_l", "toes_r") if c in sidx]]
        low = float(min(low)) if F else 0.0
        # feet on a floor at z = 0 unless the clip's lowest joints say otherwise
        g_s = 0.0 if -0.02 * st.s_leg <= low <= 0.25 * st.s_leg else low - 0.05 * st.s_leg
    else:
        g_s = float(ground_height)
    # The source's ankle height when the foot is flat on the ground: a low
    # percentile over its contact frames (its rest pose may not be standing,
    # e.g. Bandai-Namco's), else over the whole clip.
    s_flat = np.array([
        np.percentile(s_pos_w[contacts[:, k_] if contacts[:, k_].any() else slice(None), j, 2], 10) if F else 0.0
        for k_, j in enumerate(s_feet)
    ])
    if st.flat_pos is not None:
        # A given flat pose beats the estimate: the target's standing legs
        # are nearly straight, where each mm of hips height bends the knee
        # 2-3 degrees.
        s_flat = st.flat_pos[s_feet, 2].astype(np.float64)
    t_feet = [tidx["foot_l"], tidx["foot_r"]]
    t_toes = [tidx.get("toes_l"), tidx.get("toes_r")]
    if st.t_floor is not None:
        # the target's own planted ankle height: its rest height above the floor it stands on
        t_level = np.array([t_rest_pos[j, 2] - st.t_floor for j in t_feet])
        toe_drop = [None if j is None else t_rest_pos[j, 2] - t_rest_pos[f, 2] for f, j in zip(t_feet, t_toes)]
    else:
        # unknown (rest pose not standing): the source's, scaled
        t_level = k * (s_flat - g_s)
        toe_drop = [None, None]
    st.k, st.s_feet, st.t_feet, st.t_toes = k, s_feet, t_feet, t_toes
    st.s_toes = [sidx.get("toes_l"), sidx.get("toes_r")]
    st.g_s, st.s_flat, st.t_level, st.toe_drop = g_s, s_flat, t_level, toe_drop


def _root_translation(st: _State, root_mode, root_scale, ground_height) -> None:
    """The hips' path (scaled by the leg ratio) and, for "object", the
    armature object's."""
    s_hips, k = st.sidx["hips"], st.k
    p_hips = st.s_pos_w[:, s_hips] * k
    if root_scale is not None:
        p_hips[:, :2] = st.s_pos_w[:, s_hips, :2] * float(root_scale)
    if ground_height is not None:
        p_hips[:, 2] -= k * st.g_s  # height set below, once the hips' rotation is known
    root_motion = None
    rest_xy = st.t_rest_pos[st.tidx["hips"], :2]
    if root_mode in ("in_place", "object"):
        if root_mode == "object":
            root_motion = np.zeros((st.F, 3))
            root_motion[:, :2] = p_hips[:, :2] - rest_xy
        p_hips = p_hips.copy()
        p_hips[:, :2] = rest_xy
    st.p_hips, st.root_motion = p_hips, root_motion
    st.world_off = np.zeros((st.F, 1, 3)) if root_motion is None else root_motion[:, None]


def _compose(st: _State) -> None:
    """World rotations of bones not set directly: the parent's, times the
    rest local rotation (and an arm twist share)."""
    W, target = st.W, st.target
    for j, p in enumerate(target.parents):
        p = int(p)
        if j in st.desired:
            continue
        if j == st.root_j:
            W[:, j] = rotations.mul(st.yaw_q, st.t_rest_rot[j])
        elif p < 0:
            W[:, j] = target.rest_rotations[j]
        else:
            W[:, j] = rotations.mul(W[:, p], target.rest_rotations[j])
            if j in st.twist:
                W[:, j] = rotations.mul(st.twist[j], W[:, j])


def _assemble(st: _State, ground_height) -> None:
    """World rotations and local translations along the target hierarchy
    (before any IK): the trunk bent to the source's direction, the hips (and
    root bone) carrying the translation."""
    target, tidx, sidx, s_pos_w, F, JT = st.target, st.tidx, st.sidx, st.s_pos_w, st.F, len(st.target)
    hips_t = tidx["hips"]
    st.W = np.empty((F, JT, 4))
    st.trans = np.broadcast_to(target.offsets, (F, JT, 3)).copy()
    W, trans = st.W, st.trans
    if st.root_j is not None:
        fwd_t, _, _ = _body_frame(st.t_rest_pos, tidx)
        fwd_now = rotations.rotate(st.Y[hips_t], fwd_t)
        heading = np.unwrap(np.arctan2(fwd_now[:, 1], fwd_now[:, 0]))
        yaw = heading - np.arctan2(fwd_t[1], fwd_t[0])
        st.yaw_q = rotations.from_axis_angle_pair(np.broadcast_to([0.0, 0.0, 1.0], (F, 3)), yaw)

    for j, q in st.desired.items():
        W[:, j] = q
    _compose(st)
    _match_trunk_direction(target, tidx, W, trans, s_pos_w[:, sidx["head"]] - s_pos_w[:, sidx["hips"]],
                           lambda: _compose(st))
    p_hips = st.p_hips
    if ground_height is None:
        # Hips height: the source's hip joints above its flat-foot ankles,
        # scaled by the leg ratio (legs are measured hip joint to ankle), on
        # top of the target's own planted ankle height, plus the target's own
        # hips-to-hip-joint offset in the current pose. A flat planted source
        # foot is then a flat planted target foot without IK stretching the
        # legs, whatever the pelvis and ankle heights of either rig (SMPL-X's
        # hip joints sit ~9 cm lower below its pelvis joint than the
        # mannequin's: scaling hips height alone left its feet 8 cm up).
        s_hipjoint = 0.5 * (s_pos_w[:, sidx["upperleg_l"], 2] + s_pos_w[:, sidx["upperleg_r"], 2])
        rel = _fk(target, W, trans)
        t_drop = 0.5 * (rel[:, tidx["upperleg_l"], 2] + rel[:, tidx["upperleg_r"], 2]) - rel[:, hips_t, 2]
        p_hips[:, 2] = float(np.mean(st.t_level)) + st.k * (s_hipjoint - float(np.mean(st.s_flat))) - t_drop
    # the hips (and root bone) carry the translation
    for j in (st.root_j, hips_t):
        if j is None:
            continue
        if j == hips_t:
            pj = p_hips
        else:
            pj = np.concatenate([p_hips[:, :2], np.full((F, 1), st.t_rest_pos[j, 2])], -1)
        _set_world_position(st, j, pj)


def _set_world_position(st: _State, j: int, pos) -> None:
    """Puts joint ``j`` at ``pos [F, 3]`` (armature space) through its local
    translation in its parent's current frame."""
    p = int(st.target.parents[j])
    st.trans[:, j] = pos if p < 0 else rotations.rotate(rotations.inv(st.W[:, p]), pos - _fk(st.target, st.W, st.trans)[:, p])


def _leg_end(st: _State, side: int, Pw):
    """Where the leg ends (the ankle) ``[F, 3]``, world (incl. object motion)."""
    tidx, s_c = st.tidx, "lr"[side]
    ll, tf = tidx[f"lowerleg_{s_c}"], st.t_feet[side]
    if st.attached[side]:
        return Pw[:, tf]
    # An IK-target-style foot: the leg's end is where the foot sits
    # relative to the knee bone at rest, carried by the knee bone's
    # world rotation (the rotation transfer already points the shin
    # along the source's knee-to-ankle direction).
    e_local = rotations.rotate(rotations.inv(st.t_rest_rot[ll]), st.t_rest_pos[tf] - st.t_rest_pos[ll])
    return Pw[:, ll] + rotations.rotate(st.W[:, ll], e_local)


def _planted_xy(st: _State, side: int, Pw, base, anchor):
    """Horizontal: from the contact's first frame on, the foot moves only as
    the source's own (scaled) foot does; sliding that the retarget itself
    introduces disappears. With toes on both sides the toe is what stays
    put: the source ankle travels 1-2.5 cm per contact as the foot rolls
    heel-to-toe, its toe ~0.5 cm, and a target foot of another shape rolling
    about the source's ankle path would drag its toe by up to 1 cm."""
    k, tf, sf = st.k, st.t_feet[side], st.s_feet[side]
    tt, st_ = st.t_toes[side], st.s_toes[side]
    if tt is not None and st_ is not None:
        reach_xy = Pw[:, tt, :2] - Pw[:, tf, :2]  # ankle -> toe, final foot rotation
        src_now = st.s_pos_w[:, st_, :2] * k
        return base[anchor, :2] + reach_xy[anchor] + src_now - src_now[anchor] - reach_xy
    src_now = st.s_pos_w[:, sf, :2] * k
    return base[anchor, :2] + src_now - src_now[anchor]


def _source_toe_heights(st: _State, side: int):
    """The source toe's height ``[F]`` and its flat level: a low percentile
    over its contact frames (else over the whole clip)."""
    s_tz = st.s_pos_w[:, st.s_toes[side], 2]
    c_ = st.contacts[:, side]
    return s_tz, np.percentile(s_tz[c_] if c_.any() else s_tz, 10)


def _planted_z(st: _State, side: int, Pw):
    """Vertical: the target's planted ankle height plus the source's (scaled)
    ankle height above its flat-foot level, so heel strike and heel-off carry
    over and a flat source foot is a flat target foot, but the lowest point
    of the planted foot stays within _PLANT_CAP above the floor and at most
    _SINK_CAP below it (soft limits, so the motion stays smooth)."""
    k, tf, sf, s_pos_w = st.k, st.t_feet[side], st.s_feet[side], st.s_pos_w
    ankle_z = st.t_level[side] + k * (s_pos_w[:, sf, 2] - st.s_flat[side])
    lowest = ankle_z - st.t_level[side]
    if st.toe_drop[side] is not None:
        # (the toe's height over its rest height; the foot's world
        # rotation is final, so its toe-ankle height difference is known)
        toe_rel = lowest + (Pw[:, st.t_toes[side], 2] - Pw[:, tf, 2]) - st.toe_drop[side]
        lowest = np.minimum(lowest, toe_rel)
    elif st.t_toes[side] is not None and st.s_toes[side] is not None:
        # no standing rest pose to read the target's flat toe from: the
        # source toe's height above its own flat level, scaled. (A target
        # without a toe bone keeps its ankle down: its lowest point is
        # the ankle, so the source's heel-off is capped there.)
        s_tz, flat_toe = _source_toe_heights(st, side)
        lowest = np.minimum(lowest, k * (s_tz - flat_toe))
    return ankle_z + _soft_band(lowest, -_SINK_CAP, _PLANT_CAP) - lowest


def _leg_goal(st: _State, side: int, Pw, end, ramp, root_mode) -> dict:
    """One leg's IK set-up: where it should end (``base_rel`` from its hip
    joint), the planted position, the lock weight and the reach limit."""
    s_c = "lr"[side]
    ul, ll, tf, sf = st.tidx[f"upperleg_{s_c}"], st.tidx[f"lowerleg_{s_c}"], st.t_feet[side], st.s_feet[side]
    # Where the leg should end: the source ankle relative to its hip
    # joint, scaled by the leg ratio. The rotation transfer alone puts it
    # elsewhere when thigh:shin ratios differ (RobotExpressive 0.66 vs
    # Bandai 0.95: 17% of the leg length); the IK bends the knee to fix
    # that, keeping the transferred bend plane.
    base_rel = st.k * (st.s_pos_w[:, sf] - st.s_pos_w[:, st.sidx[f"upperleg_{s_c}"]])
    base = Pw[:, ul] + base_rel
    w, anchor = lock_weights(st.contacts[:, side], ramp)
    planted = base.copy()
    if root_mode != "in_place":
        planted[:, :2] = _planted_xy(st, side, Pw, base, anchor)
    planted[:, 2] = _planted_z(st, side, Pw)
    a, b = Pw[:, ul], Pw[:, ll]
    length = np.linalg.norm(b - a, axis=-1) + np.linalg.norm(end - b, axis=-1)
    # Reach limit: soft from the FK extension (or 97% of the leg) up to
    # MAX_REACH, so knees straighten smoothly and never snap.
    soft = np.clip(np.linalg.norm(end - a, axis=-1) / np.maximum(length, _EPS), SOFT_REACH, MAX_REACH)
    return dict(side=side, ul=ul, ll=ll, tf=tf, end=end, base_rel=base_rel, w=w[:, None],
                planted=planted, length=length, soft=soft)


def _drop_hips(st: _State, legs, Pw, ramp):
    """Hips drop: a planted foot the leg cannot reach (a wider pelvis that
    rolls/turns moves the hip joints more than the source's, a straighter
    target stance) lowers the hips just enough, instead of lifting the foot
    off the floor. Returns the world positions after the drop."""
    need = np.zeros(st.F)
    for g in legs:
        hip = Pw[:, g["ul"]]
        goal = hip + g["base_rel"]
        goal = goal + g["w"] * (g["planted"] - goal)
        reach = g["soft"] * g["length"]
        dh = np.linalg.norm(goal[:, :2] - hip[:, :2], axis=-1)
        v = np.sqrt(np.maximum(reach**2 - dh**2, 0.0))
        need = np.maximum(need, (hip[:, 2] - goal[:, 2]) - v)
    need = np.clip(need, 0.0, 0.15 * st.t_leg)
    if not need.any():
        return Pw
    hips_t = st.tidx["hips"]
    drop = _smooth_max(need, ramp)
    down = drop[:, None] * np.array([0.0, 0.0, 1.0])
    p = int(st.target.parents[hips_t])
    st.trans[:, hips_t] -= down if p < 0 else rotations.rotate(rotations.inv(st.W[:, p]), down)
    Pw = _fk(st.target, st.W, st.trans, st.world_off)
    for g in legs:
        if st.attached[g["side"]]:
            g["end"] = Pw[:, g["tf"]]
        else:
            g["end"] = g["end"] - down
    return Pw


def _toe_floor(st: _State, g, Pw):
    """The lowest ankle height ``[F]`` that keeps the toe out of the floor:
    the foot's rotation is final, so the toe sits at a known height from the
    ankle; where it would go below its own flat level (a toe-down foot near
    the floor at touch-down / toe-off: 2 cm through it on the mannequin) the
    ankle goes up instead."""
    side = g["side"]
    toe_rel = Pw[:, st.t_toes[side], 2] - Pw[:, g["tf"], 2]
    toe_floor = st.t_level[side] + st.toe_drop[side] - _SINK_CAP - toe_rel
    s_toe = st.s_toes[side]
    if s_toe is not None:
        # A swinging toe clears the floor as far as the source's
        # (scaled) does: the floor alone left a target foot that
        # is pitched further toe-down than the source's skimming
        # it at full walking speed (read as a sliding contact).
        s_tz, flat_toe = _source_toe_heights(st, side)
        clear = _TOE_CLEARANCE * np.tanh(st.k * np.maximum(s_tz - flat_toe, 0.0) / _TOE_CLEARANCE)
        clear = clear * (1.0 - g["w"][:, 0])
        toe_floor = toe_floor + clear
    return toe_floor


def _solve_leg(st: _State, g, Pw, fwd_rest):
    """Two-bone IK of one leg toward its goal; updates ``st.W``. Returns
    where the leg's end reached ``[F, 3]`` (world)."""
    ul, ll, _tf, end, side = g["ul"], g["ll"], g["tf"], g["end"], g["side"]
    W = st.W
    a, b = Pw[:, ul], Pw[:, ll]
    goal = a + g["base_rel"]
    goal = goal + g["w"] * (g["planted"] - goal)
    # never below the floor, planted or not (a dropped pelvis must
    # not push the swinging foot through it)
    goal[:, 2] = np.maximum(goal[:, 2], st.t_level[side] - _SINK_CAP)
    if st.t_toes[side] is not None and st.toe_drop[side] is not None and st.attached[side]:
        # ... and neither may the toe
        goal[:, 2] = np.maximum(goal[:, 2], _toe_floor(st, g, Pw))
    knee_fwd = rotations.rotate(W[:, ll], rotations.rotate(rotations.inv(st.t_rest_rot[ll]), fwd_rest))
    pole = leaning_pole(a, b, end, knee_fwd)
    q1, q2, reached = solve_leg_ik(a, b, end, goal, pole, soft=g["soft"])
    upper = _ancestors(st.target, ll)
    upper = upper[1: upper.index(ul) + 1]
    for j in upper:
        W[:, j] = rotations.mul(q1, W[:, j])
    W[:, ll] = rotations.mul(q2, W[:, ll])
    return reached


def _fit_legs(st: _State, ik: bool, root_mode, fwd_rest) -> dict:
    """Foot locking and leg IK. Returns where IK-target-style feet go:
    ``{target joint: [F, 3]}`` armature space."""
    world_off = st.world_off
    Pw = _fk(st.target, st.W, st.trans, world_off)
    ramp = max(1, int(round(0.1 * st.motion.fps)))
    foot_pos = {}
    legs = []
    for side in (0, 1):
        end = _leg_end(st, side, Pw)
        if not ik:
            if not st.attached[side]:
                foot_pos[st.t_feet[side]] = end - world_off[:, 0]
            continue
        legs.append(_leg_goal(st, side, Pw, end, ramp, root_mode))
    if legs:
        Pw = _drop_hips(st, legs, Pw, ramp)
        for g in legs:
            reached = _solve_leg(st, g, Pw, fwd_rest)
            if not st.attached[g["side"]]:
                foot_pos[g["tf"]] = reached - world_off[:, 0]
    return foot_pos


def _result(st: _State) -> RetargetResult:
    """Local rotations along the target hierarchy and the result."""
    motion, target, W, trans = st.motion, st.target, st.W, st.trans
    JT = len(target)
    local = np.empty_like(W)
    for j, p in enumerate(target.parents):
        local[:, j] = W[:, j] if p < 0 else rotations.mul(rotations.inv(W[:, int(p)]), W[:, j])
    # In place: the whole clip's two copies were the retarget's peak.
    local = rotations.normalize_continuous_in_place(local)
    root_positions = trans[:, 0].copy()
    needs_trans = JT > 1 and not np.array_equal(trans[:, 1:], np.broadcast_to(target.offsets[1:], trans[:, 1:].shape))
    out = Motion(
        target,
        local,
        root_positions,
        motion.fps,
        trans if needs_trans else None,
        list(motion.shape_names),
        None if motion.shape_weights is None else motion.shape_weights.copy(),
        motion.name,
    )
    if not np.all(np.isfinite(out.rotations)):
        raise RetargetError("retargeting produced non-finite rotations: check the skeletons for zero-length bones")
    return RetargetResult(out, st.root_motion, st.contacts, float(st.k), st.ref_frame, st.t_level.copy(),
                          None if st.t_floor is None else float(st.t_floor))


# --- main -------------------------------------------------------------------------


def standing_rest(skeleton: Skeleton, stand: Motion) -> Skeleton:
    """``skeleton`` with the one-frame pose ``stand`` (on it, standing) as
    its rest pose, facing -Y (the root joint's rotation left out). The
    retarget matches the source's standing pose to the target's rest pose,
    bone rolls and foot soles included; a target whose rest is not standing
    (the Bandai skeleton of the walk controller and of tracking has every
    bone laid along X) gives it no body frame, and clips came out with the
    pelvis turned ~35 degrees from the feet and the feet a few cm into the
    floor. A motion retargeted onto the result has local rotations that are
    ``skeleton``'s own (``Motion.rotations`` are full local rotations)."""
    import dataclasses

    if stand.skeleton is not skeleton and tuple(stand.skeleton.names) != tuple(skeleton.names):
        raise ValueError("the standing pose is on another skeleton")
    rest = np.asarray(stand.rotations[0], dtype=np.float64).copy()
    rest[0] = rotations.identity()
    return dataclasses.replace(skeleton, rest_rotations=rest, meta=dict(skeleton.meta))


@dataclass(frozen=True)
class RetargetConfig:
    """How :func:`retarget` puts a clip on a rig."""

    #: "hips" (the hips bone carries the translation), "in_place" (horizontal
    #: translation removed, vertical kept), "root_bone" (``root_bone``, an
    #: ancestor of the hips, carries the ground-projected horizontal motion
    #: and facing; hips relative to it) or "object" (horizontal motion
    #: returned as ``root_motion`` for the armature object, the armature
    #: plays in place).
    root_mode: str = "hips"
    #: The target's root bone for ``root_mode="root_bone"``.
    root_bone: str = None
    #: Lock planted feet with two-bone leg IK.
    ik: bool = True
    #: Place each hand where the source's is relative to its shoulder, scaled
    #: by the arm-length ratio, with two-bone arm IK (the elbow bends in the
    #: transferred plane and the hand keeps its transferred rotation): claps,
    #: touches and reaches survive different upper/lower arm ratios.
    hand_ik: bool = True
    #: The source's floor height (metres, source armature Z); None estimates
    #: it (0 when the feet touch z ~ 0). The target's floor is z = 0 of its
    #: armature space.
    ground_height: float = None
    #: The factor on the hips' horizontal travel (about the world origin);
    #: None = the leg-length ratio. A caller whose source already walks a
    #: path scaled by 1 / leg ratio (Walk Along Path: the path is the user's,
    #: in scene metres) passes the ratio it used, so the hips land on the
    #: path exactly.
    root_scale: float = None


def retarget(motion: Motion, src_map: dict, target: Skeleton, tgt_map: dict,
             config: RetargetConfig = RetargetConfig(), *, reference: Motion = None,
             flat_pose: Motion = None) -> RetargetResult:
    """Put ``motion`` (on its own skeleton) onto ``target``, as ``config``
    says (:class:`RetargetConfig`).

    Args:
        motion: the source clip.
        src_map, tgt_map: ``canonical name -> bone name`` for the source and
            target skeletons (unmapped canonical joints may be absent, except
            hips, a spine joint, head, and both arms' upperarm/lowerarm/hand
            and legs' upperleg/lowerleg/foot).
        target: the target rest skeleton (e.g. ``read_skeleton`` of an
            armature).
        reference: a pose of the source skeleton (its first frame) to match
            with the target's rest pose, instead of the source's rest pose or
            (a rest pose that is not standing) the clip's most upright
            frame; e.g. Drive's standing pose, so that a live preview and the
            baked take agree whatever the take holds.
        flat_pose: a one-frame pose of the source skeleton standing with
            both feet flat on the floor (e.g. the take's own end stance: Walk
            Along Path ends in the controller's idle stance). Its ankle
            heights are the source's flat-foot level and its feet the
            flat-foot orientation, instead of estimates from the clip's
            contact frames (a low percentile of the planted ankle heights
            and the flattest contact frame, which vary by a few mm and
            degrees from take to take); it is also the reference pose when
            ``reference`` is None and the source's rest pose is not standing.

    Returns:
        :class:`RetargetResult`. Root translation is scaled by the leg-length
        ratio (target / source hip-to-ankle length) about the source origin
        and floor.

    Raises:
        RetargetError: missing required joints, unknown bone names, bad
            hierarchy or root mode.
    """
    cfg = config
    root_mode, root_bone, ground_height = cfg.root_mode, cfg.root_bone, cfg.ground_height
    st = _setup(motion, src_map, target, tgt_map, root_mode, root_bone)
    _reference_poses(st, reference, flat_pose)
    _foot_references(st, reference is not None)
    _desired_rotations(st)
    # What no later phase reads is let go as soon as it is done (each is
    # 80-100 MB at 100 000 frames): the source's world rotations after the
    # desired rotations, their world deltas and values once the trunk is
    # assembled (_compose only asks which bones were set directly).
    st.s_rot_w = None
    _arm_twists(st)
    _floors(st, ground_height)
    _root_translation(st, root_mode, cfg.root_scale, ground_height)
    _assemble(st, ground_height)
    st.Y, st.desired = None, dict.fromkeys(st.desired)
    fwd_rest = _body_frame(st.t_rest_pos, st.tidx)[0]
    foot_pos = _fit_legs(st, cfg.ik, root_mode, fwd_rest)
    if cfg.hand_ik:
        _arm_ik(st, fwd_rest)
    # bones that follow their parents (leg twist/helper bones) follow the IK
    _compose(st)
    # IK-target-style feet sit where their leg ends, in their parent's frame
    for tf, pos in sorted(foot_pos.items()):
        _set_world_position(st, tf, pos)
    return _result(st)
