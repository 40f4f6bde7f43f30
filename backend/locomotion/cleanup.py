"""Foot-contact cleanup: pin planted feet with leg IK, and measure foot skate.

:func:`pin_feet` works on any :class:`Motion` of the Bandai skeleton
(controller output, mocap, a loop): during each contact the foot is locked
where the contact began (horizontally) at its planted height, the legs are
re-solved with analytic two-bone IK (:func:`~..ik.two_bone_ik`, knee pole
from the current pose, reach softened with :func:`~..ik.soft_reach` so the
knee straightens gradually instead of popping), and the lock fades in before
touchdown and out after lift-off with a smoothstep of ``blend_seconds``.

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

import numpy as np

from .. import ik
from .. import rotations as R
from ..motion import Motion
from . import features as FT

#: Leg joints of the Bandai skeleton: (hip, knee, ankle, toe) per side.
BANDAI_LEGS = (
    ("UpperLeg_L", "LowerLeg_L", "Foot_L", "Toes_L"),
    ("UpperLeg_R", "LowerLeg_R", "Foot_R", "Toes_R"),
)
#: Height (m) under which a foot joint counts in :func:`planted_skate` (the issue's H).
SKATE_HEIGHT = 0.033


def _smoothstep(x):
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def _segments(c: np.ndarray):
    """``[(start, stop)]`` of runs where ``c`` is set (stop exclusive)."""
    c = np.concatenate([[False], np.asarray(c) > 0.5, [False]])
    d = np.diff(c.astype(np.int8))
    return list(zip(np.nonzero(d == 1)[0], np.nonzero(d == -1)[0]))


def _lock_offsets(pos, contact, nb: float, *, hip=None, to_end=None, reach=None, max_slide: float = 0.25,
                  catchup: float = None, height_q: float = 20.0):
    """Per frame ``(offset [F, 3], weight [F])``: where a locked joint should
    move from its animated position ``pos [F, 3]``.

    Each contact run gets a lock at the run's first position (horizontal)
    and its planted height (``height_q`` percentile of the run's heights,
    robust to the heel lifting before the contact ends), with a weight of 1
    over the run and smoothstep ramps of ``nb`` frames before and after it.

    A lock is released early (the ramp out starts there) at the first frame
    where the IK chain could no longer reach it (``|lock - to_end - hip| >
    reach``, ``to_end [F, 3]`` being the offset from the chain's end to the
    locked joint) or where the animation has slid more than ``max_slide``
    (m) away: holding on would stretch the leg straight while the animation
    already bends it, and the knee would snap at the release. The ramp out
    lasts at least the time to catch up the offset at ``catchup`` (m per
    frame). Overlapping ramps of neighbouring runs are normalised, so the
    offset is continuous."""
    f = len(pos)
    frames = np.arange(f)
    total = np.zeros((f, 3))
    wsum = np.zeros(f)
    for s, e in _segments(contact):
        lock = pos[s].copy()
        lock[2] = np.percentile(pos[s:e, 2], height_q)
        bad = np.linalg.norm(lock[None, :2] - pos[s:e, :2], axis=-1) > max_slide
        if hip is not None:
            end_target = lock[None] - (0.0 if to_end is None else to_end[s:e])
            bad |= np.linalg.norm(end_target - hip[s:e], axis=-1) > reach[s:e]
        if np.any(bad):
            e = s + max(int(np.argmax(bad)), 1)
        n_out = nb
        if catchup:
            n_out = max(nb, float(np.linalg.norm(lock - pos[e - 1])) / catchup)
        if nb > 0:
            w_in = _smoothstep(1.0 - (s - frames) / nb)
        else:
            w_in = np.zeros(f)
        w_out = _smoothstep(1.0 - (frames - (e - 1)) / n_out) if n_out > 0 else np.zeros(f)
        w = np.where(frames < s, w_in, np.where(frames >= e, w_out, 1.0))
        total += w[:, None] * (lock[None] - pos)
        wsum += w
    norm = np.maximum(wsum, 1.0)
    return total / norm[:, None], np.minimum(wsum, 1.0)


def _pole(hip, knee, ankle, toe):
    """Knee pole from the current pose: the knee's offset from the hip-ankle
    line, plus a little of the foot's forward direction so a straight leg
    (no offset) still bends forward, not sideways."""
    mid = 0.5 * (hip + ankle)
    fwd = toe - ankle
    fwd[..., 2] = 0.0
    fwd /= np.maximum(np.linalg.norm(fwd, axis=-1, keepdims=True), 1e-9)
    return knee + (knee - mid) + 0.05 * fwd


def pin_feet(
    motion: Motion,
    contacts=None,
    *,
    foot_joints=("Foot_L", "Foot_R"),
    toe_joints=("Toes_L", "Toes_R"),
    hip_joints=("UpperLeg_L", "UpperLeg_R"),
    knee_joints=("LowerLeg_L", "LowerLeg_R"),
    blend_seconds: float = 0.1,
    soft: float = ik.SOFT_REACH,
    release_reach: float = ik.MAX_REACH,
    max_slide: float = 0.25,
    catchup_speed: float = 1.0,
) -> Motion:
    """``motion`` with planted feet pinned (see the module docstring).

    Args:
        contacts: ``[F, 4]`` (0/1 or probabilities, thresholded at 0.5) for
            ``(foot_L, toe_L, foot_R, toe_R)``; detected with
            :func:`~.features.foot_contacts` when None (e.g. pass a
            controller's predicted contacts instead).
        foot_joints, toe_joints, hip_joints, knee_joints: per side (left,
            right); the defaults are the Bandai names.
        blend_seconds: duration of the smoothstep fade into and out of a lock.
        soft: fraction of the leg length where the reach starts being
            compressed (a leg already more extended keeps its own extension).
        release_reach: a lock is let go (faded out from there) once it is
            farther from the hip than this fraction of the leg length.
        max_slide: ... or once the animated foot is this far (m) from it.
        catchup_speed: the fade out lasts at least the offset to catch up
            divided by this speed (m/s), so a released foot does not dart.

    Returns a new :class:`Motion` (same skeleton, fps, root and
    translations); only the upper leg, lower leg and foot rotations change.
    """
    sk = motion.skeleton
    names = list(sk.names)
    f = motion.num_frames
    world_rot, world_pos = motion.world()
    if contacts is None:
        contacts = FT.foot_contacts(world_pos, names, motion.fps, joints=(foot_joints[0], toe_joints[0], foot_joints[1], toe_joints[1]))
    contacts = np.asarray(contacts, dtype=np.float64)
    if contacts.shape != (f, 4):
        raise ValueError(f"contacts must be [frames, 4] (foot_L, toe_L, foot_R, toe_R), got {contacts.shape}")
    nb = blend_seconds * motion.fps
    catchup = catchup_speed / motion.fps
    parents = sk.parents
    legs = []
    for side in range(2):
        h, k, a, t = (names.index(n) for n in (hip_joints[side], knee_joints[side], foot_joints[side], toe_joints[side]))
        if parents[k] != h or parents[a] != k or parents[t] != a:
            raise ValueError(f"{names[h]} -> {names[k]} -> {names[a]} -> {names[t]} is not a chain of the skeleton")
        legs.append((h, k, a, t))

    def targets(pos, reach_frac):
        """Per leg: (ankle target, ankle lock weight, toe offset, chain
        length); locks farther than ``reach_frac`` of the leg are released."""
        out = []
        for side, (h, k, a, t) in enumerate(legs):
            hip, knee, ankle, toe = pos[:, h], pos[:, k], pos[:, a], pos[:, t]
            chain = np.linalg.norm(knee - hip, axis=-1) + np.linalg.norm(ankle - knee, axis=-1)
            kw = dict(hip=hip, reach=reach_frac * chain, max_slide=max_slide, catchup=catchup)
            # Ankle lock, then the toe lock relative to where the foot lands after it.
            off_a, w_a = _lock_offsets(ankle, contacts[:, 2 * side], nb, **kw)
            off_t, _ = _lock_offsets(toe + off_a, contacts[:, 2 * side + 1], nb, to_end=toe - ankle, **kw)
            # A planted ankle turns the foot to reach the toe lock; a free ankle is
            # carried along by it (the foot keeps its animated orientation).
            target = ankle + off_a + (1.0 - w_a)[:, None] * off_t
            out.append((target, w_a, off_t, chain))
        return out

    rot = motion.rotations.copy()
    for (h, k, a, t), (target, w_a, off_t, chain) in zip(legs, targets(world_pos, release_reach)):
        hip, knee, ankle, toe = world_pos[:, h], world_pos[:, k], world_pos[:, a], world_pos[:, t]
        extension = np.linalg.norm(ankle - hip, axis=-1) / np.maximum(chain, 1e-9)
        q_up, q_low, reached = ik.two_bone_ik(
            hip, knee, ankle, target, _pole(hip, knee, ankle, toe), soft=np.maximum(soft, extension)
        )
        up_w = R.mul(q_up, world_rot[:, h])
        low_w = R.mul(q_low, world_rot[:, k])
        # The foot keeps its animated world orientation, turned toward the toe lock by its weighted share.
        toe_now = reached + (toe - ankle)
        toe_goal = toe_now + w_a[:, None] * off_t
        turn = R.between_vectors(toe_now - reached, toe_goal - reached)
        foot_w = R.mul(turn, world_rot[:, a])
        parent_w = world_rot[:, parents[h]] if parents[h] >= 0 else R.identity((f,))
        rot[:, h] = R.mul(R.inv(parent_w), up_w)
        rot[:, k] = R.mul(R.inv(up_w), low_w)
        rot[:, a] = R.mul(R.inv(low_w), foot_w)

    translations = None if motion.translations is None else motion.translations.copy()
    out = Motion(
        sk,
        R.make_continuous(R.normalize(rot), axis=0),
        motion.root_positions.copy(),
        motion.fps,
        translations,
        list(motion.shape_names),
        None if motion.shape_weights is None else motion.shape_weights.copy(),
        motion.name,
    )
    return out


def foot_floors(motion: Motion, joints=FT.CONTACT_JOINTS) -> np.ndarray:
    """Floor height ``[K]`` of each joint: its 1st-percentile height (m)."""
    ix = [list(motion.skeleton.names).index(n) for n in joints]
    return np.percentile(motion.world_positions()[:, ix, 2], 1.0, axis=0)


def planted_skate(motion: Motion, contacts, joints=FT.CONTACT_JOINTS, height: float = SKATE_HEIGHT, floors=None) -> float:
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
        floors = np.percentile(p[..., 2], 1.0, axis=0)
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


__all__ = ["pin_feet", "planted_skate", "foot_floors", "knee_angles", "BANDAI_LEGS", "SKATE_HEIGHT"]
