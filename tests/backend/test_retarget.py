"""Pose transfer (backend/retarget.py) on a real Bandai-Namco walk.

Pure NumPy. Targets are built from the clip's own skeleton: the same rig, the
same rig with random bone rolls/axes, scaled copies, and clean T-/A-pose rigs
with 1 or 4 spine bones and arm twist bones. End effectors (hands, feet,
head) are compared relative to the hips and divided by each rig's leg length.
"""

from __future__ import annotations

import numpy as np
import pytest

from rigmind.backend import rotations
from rigmind.backend.bvh import read_bvh
from rigmind.backend.ik import soft_reach, two_bone_ik
from rigmind.backend.retarget import RetargetConfig, RetargetError, foot_contacts, leg_length, retarget
from rigmind.backend.skeleton import Skeleton

from conftest import data_file

CLIP = "bandai_namco_d2_locomotion/bvh/dataset-2_walk_normal_001.bvh.gz"
RUN_CLIP = "bandai_namco_d2_locomotion/bvh/dataset-2_run_normal_001.bvh.gz"

BANDAI = {"hips": "Hips", "spine": "Spine", "spine2": "Chest", "neck": "Neck", "head": "Head"}
for _s, _S in (("l", "L"), ("r", "R")):
    BANDAI.update({
        f"clavicle_{_s}": f"Shoulder_{_S}", f"upperarm_{_s}": f"UpperArm_{_S}",
        f"lowerarm_{_s}": f"LowerArm_{_S}", f"hand_{_s}": f"Hand_{_S}",
        f"upperleg_{_s}": f"UpperLeg_{_S}", f"lowerleg_{_s}": f"LowerLeg_{_S}",
        f"foot_{_s}": f"Foot_{_S}", f"toes_{_s}": f"Toes_{_S}",
    })
EFFECTORS = ("hand_l", "hand_r", "foot_l", "foot_r", "head")


@pytest.fixture(scope="module")
def clip():
    return read_bvh(data_file(CLIP))


# --- target rigs ---------------------------------------------------------------


def build(names, parents, world):
    """Identity-rest skeleton from parent names and rest world positions."""
    idx = {n: i for i, n in enumerate(names)}
    par = [idx[p] if p else -1 for p in parents]
    world = np.asarray(world, dtype=np.float64)
    off = np.array([world[i] - (world[p] if p >= 0 else 0.0) for i, p in enumerate(par)])
    return Skeleton(names, par, off)


def with_random_rest(sk, rng):
    rot_w, pos_w = sk.rest_world()
    new_w = rotations.normalize(rng.normal(size=(len(sk), 4)))
    rest, off = np.empty((len(sk), 4)), np.empty((len(sk), 3))
    for j, p in enumerate(sk.parents):
        if p < 0:
            rest[j], off[j] = new_w[j], pos_w[j]
        else:
            rest[j] = rotations.mul(rotations.inv(new_w[p]), new_w[j])
            off[j] = rotations.rotate(rotations.inv(new_w[p]), pos_w[j] - pos_w[p])
    tails = rotations.rotate(rotations.inv(new_w), rotations.rotate(rot_w, sk.tails))
    return Skeleton(list(sk.names), sk.parents.copy(), off, rest, tails)


def scaled(sk, s):
    return Skeleton(list(sk.names), sk.parents.copy(), sk.offsets * s, sk.rest_rotations.copy(), sk.tails * s)


def clean_pose(clip, arm_drop_deg=0.0, frame=60):
    """The clip's pose at ``frame`` (mid-walk, so not the frame the source is
    aligned at), turned to face -Y, hips above the
    origin, arms straightened out sideways (T-pose) then lowered by
    ``arm_drop_deg`` about the forward axis (45 = A-pose). Returns names,
    parent names and rest world positions."""
    sk = clip.skeleton
    pos = clip.world_positions()[frame]
    i = sk.index
    lat = pos[i("UpperLeg_L")] - pos[i("UpperLeg_R")]
    yaw = np.arctan2(lat[1], lat[0])
    q = rotations.from_axis_angle(np.array([0.0, 0.0, -yaw]))
    pos = rotations.rotate(q, pos - pos[i("Hips")] * np.array([1, 1, 0]))
    a = np.radians(arm_drop_deg)
    for s, sign in (("L", 1.0), ("R", -1.0)):
        d = np.array([sign * np.cos(a), 0.0, -np.sin(a)])
        for seg_from, seg_to in (("UpperArm", "LowerArm"), ("LowerArm", "Hand")):
            length = np.linalg.norm(sk.offsets[i(f"{seg_to}_{s}")])
            pos[i(f"{seg_to}_{s}")] = pos[i(f"{seg_from}_{s}")] + d * length
    parents = [sk.names[p] if p >= 0 else None for p in sk.parents]
    return list(sk.names), parents, pos


def rig(names, parents, pos, *, drop=(), insert=()):
    """Edit a rig: ``drop`` joint names (children move to the grandparent),
    ``insert`` tuples (new, below, above, frac, extra_children): a new joint
    at ``frac`` between ``below`` and ``above`` (parent of ``above``), with
    ``extra_children`` reparented to it."""
    names, parents, pos = list(names), list(parents), [np.asarray(p) for p in pos]
    for d in drop:
        k = names.index(d)
        parents = [parents[k] if p == d else p for p in parents]
        del names[k], parents[k], pos[k]
    for new, below, above, frac, extra in insert:
        pb, pa = pos[names.index(below)], pos[names.index(above)]
        k = names.index(above)
        names.insert(k, new)
        parents.insert(k, below)
        pos.insert(k, pb + frac * (pa - pb))
        parents = [new if (n in extra or n == above) else p for n, p in zip(names, parents)]
    return build(names, parents, pos)


def flat_foot(clip, side):
    """Ankle and toe heights (metres) of the clip's flat planted foot: low
    percentiles over the frames where that foot is in contact."""
    sk = clip.skeleton
    pos = clip.world_positions()
    feet = [sk.index(f"Foot_{s}") for s in "LR"]
    c = foot_contacts(pos, feet, clip.fps, leg_length(sk, {k: sk.index(v) for k, v in BANDAI.items()}))
    k = "LR".index(side)
    za, zt = pos[c[:, k], feet[k], 2], pos[c[:, k], sk.index(f"Toes_{side}"), 2]
    return float(np.percentile(za, 10)), float(np.percentile(zt, 10))


def standing_pose(clip, spine=1.0, legs=1.0, ankle=1.0):
    """A clean standing rig from the clip's skeleton: torso and A-pose arms
    from :func:`clean_pose`, legs straight down, feet flat with the clip's own
    planted ankle/toe heights, so it stands on z = 0 like the source. Then
    the hips-to-head offsets are scaled by ``spine`` and the leg bones
    (thigh, shin, foot) by ``legs`` (the feet keep standing on z = 0);
    ``ankle`` scales the ankle's height above the toe (a flatter foot).
    Returns names, parent names and rest world positions."""
    names, parents, pos = clean_pose(clip, 45.0)
    pos = np.array(pos)
    i = names.index
    foot_len = np.linalg.norm(clip.skeleton.offsets[clip.skeleton.index("Toes_L")])
    for s, sign in (("L", 1.0), ("R", -1.0)):
        h_a, h_t = flat_foot(clip, s)
        drop = ankle * (h_a - h_t)
        hip = pos[i("Hips")] + np.array([sign * 0.065, 0.0, -0.022])
        thigh = np.linalg.norm(clip.skeleton.offsets[clip.skeleton.index(f"LowerLeg_{s}")])
        shin = np.linalg.norm(clip.skeleton.offsets[clip.skeleton.index(f"Foot_{s}")])
        pos[i(f"UpperLeg_{s}")] = hip
        pos[i(f"LowerLeg_{s}")] = hip - [0.0, 0.0, thigh]
        pos[i(f"Foot_{s}")] = hip - [0.0, 0.0, thigh + shin]
        pos[i(f"Toes_{s}")] = pos[i(f"Foot_{s}")] + [0.0, -np.sqrt(foot_len**2 - drop**2), -drop]
    # offsets from parents, scaled, then forward kinematics again
    par = [names.index(p) if p else -1 for p in parents]
    off = np.array([pos[j] - (pos[p] if p >= 0 else 0.0) for j, p in enumerate(par)])
    for n in ("Spine", "Chest", "Neck", "Head"):
        off[i(n)] *= spine
    for s in "LR":
        for n in ("LowerLeg", "Foot", "Toes"):
            off[i(f"{n}_{s}")] *= legs
    for j, p in enumerate(par):
        pos[j] = off[j] + (pos[p] if p >= 0 else 0.0)
    # stand on z = 0: the left toe at its (scaled) planted height
    dz = legs * flat_foot(clip, "L")[1] - pos[i("Toes_L")][2]
    pos[:, 2] += dz
    pos[i("joint_Root")][2] = 0.0
    return names, parents, pos


def ik_style(names, parents, pos):
    """The same rig with the feet as children of the root bone (siblings of
    the legs), like RobotExpressive's IK targets: the legs end at the knee."""
    parents = ["joint_Root" if n in ("Foot_L", "Foot_R") else p for n, p in zip(names, parents)]
    # keep the topological order: move the feet (and toes) right after the root
    order = [0] + [names.index(n) for n in ("Foot_L", "Toes_L", "Foot_R", "Toes_R")]
    order += [k for k in range(len(names)) if k not in order]
    return build([names[k] for k in order], [parents[k] for k in order], [pos[k] for k in order])


# --- measures --------------------------------------------------------------------


def effector_error(clip, src_map, res, tgt_map, effectors=EFFECTORS):
    """Max over frames and effectors of |(e - hips)/leg| target vs source."""
    ps = clip.world_positions()
    pt = res.motion.world_positions()
    ls = leg_length(clip.skeleton, {c: clip.skeleton.index(b) for c, b in src_map.items()})
    lt = leg_length(res.motion.skeleton, {c: res.motion.skeleton.index(b) for c, b in tgt_map.items()})
    out = {}
    for e in effectors:
        s = (ps[:, clip.skeleton.index(src_map[e])] - ps[:, clip.skeleton.index(src_map["hips"])]) / ls
        j = res.motion.skeleton.index(tgt_map[e])
        h = res.motion.skeleton.index(tgt_map["hips"])
        t = (pt[:, j] - pt[:, h]) / lt
        out[e] = float(np.linalg.norm(s - t, axis=-1).max())
    return out


def chain_error(clip, src_map, res, tgt_map):
    """Per effector, the max over frames of the distance between target and
    source, each taken relative to the chain's top and divided by the
    chain's rest length: hands from the upper arm joint (arm length), feet
    from the upper leg joint (leg length), head from the hips (hips-to-head
    length)."""
    chains = {f"hand_{s}": f"upperarm_{s}" for s in "lr"}
    chains.update({f"foot_{s}": f"upperleg_{s}" for s in "lr"})
    chains["head"] = "hips"

    def rel(sk, pos, m, e, top):
        _, rest = sk.rest_world()
        if top == "hips":
            length = np.linalg.norm(rest[sk.index(m["head"])] - rest[sk.index(m["hips"])])
        else:
            mid = "lowerarm" if e.startswith("hand") else "lowerleg"
            a, b, c = (sk.index(m[x]) for x in (top, f"{mid}_{e[-1]}", e))
            length = np.linalg.norm(rest[b] - rest[a]) + np.linalg.norm(rest[c] - rest[b])
        return (pos[:, sk.index(m[e])] - pos[:, sk.index(m[top])]) / length

    ps, pt = clip.world_positions(), res.motion.world_positions()
    return {
        e: float(np.linalg.norm(rel(clip.skeleton, ps, src_map, e, top) - rel(res.motion.skeleton, pt, tgt_map, e, top),
                                axis=-1).max())
        for e, top in chains.items()
    }


def planted_height(res, tgt_map, side):
    """Per contact frame of one foot, the lowest point of the target foot
    above its floor: min(ankle - rest ankle height, toe - rest toe height),
    metres (the target stands on z = 0 at rest)."""
    sk = res.motion.skeleton
    _, rest = sk.rest_world()
    pos = res.motion.world_positions()
    c = res.contacts[:, "lr".index(side)]
    h = [pos[c, sk.index(tgt_map[f"{j}_{side}"]), 2] - rest[sk.index(tgt_map[f"{j}_{side}"]), 2]
         for j in ("foot", "toes") if f"{j}_{side}" in tgt_map]
    return np.min(h, axis=0)


def _unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def assert_clean(res):
    rot = res.motion.rotations
    assert np.all(np.isfinite(rot)) and np.all(np.isfinite(res.motion.world_positions()))
    assert np.all(np.sum(rot[1:] * rot[:-1], axis=-1) > 0.0), "quaternion sign flips between frames"


# --- tests -----------------------------------------------------------------------


def test_identity_reproduces_world_positions(clip):
    res = retarget(clip, BANDAI, clip.skeleton, BANDAI, RetargetConfig(ik=False))
    assert_clean(res)
    assert res.leg_scale == pytest.approx(1.0)
    err = np.abs(res.motion.world_positions() - clip.world_positions()).max()
    assert err < 1e-6, err


def test_identity_with_ik_changes_little(clip):
    res = retarget(clip, BANDAI, clip.skeleton, BANDAI, RetargetConfig(ik=True))
    assert_clean(res)
    assert res.contacts.shape == (clip.num_frames, 2) and res.contacts.any(axis=0).all()
    d = np.linalg.norm(res.motion.world_positions() - clip.world_positions(), axis=-1)
    print(f"identity+IK: max joint shift {d.max():.4f} m, 99th pct {np.percentile(d, 99):.4f} m")
    # Planted ankles are capped at 1.5 cm above their level; pulling a rising
    # heel down on a nearly straight leg moves the knee a few times as much.
    assert d.max() < 0.05 and np.percentile(d, 99) < 0.01


def test_random_rest_rotations(clip):
    target = with_random_rest(clip.skeleton, np.random.default_rng(1))
    res = retarget(clip, BANDAI, target, BANDAI, RetargetConfig(ik=False))
    assert_clean(res)
    err = np.abs(res.motion.world_positions() - clip.world_positions()).max()
    assert err < 1e-3, err


@pytest.mark.parametrize("s", [0.6, 1.4])
def test_scaled_copy(clip, s):
    res = retarget(clip, BANDAI, scaled(clip.skeleton, s), BANDAI, RetargetConfig(ik=True))
    assert_clean(res)
    assert res.leg_scale == pytest.approx(s)
    err = effector_error(clip, BANDAI, res, BANDAI)
    print(f"scaled {s}: {err}")
    assert max(err.values()) < 0.05, err
    # planted feet: the lowest point (ankle or toe over its flat level,
    # taken from the source and scaled) within 2 cm of the floor
    pt = res.motion.world_positions()
    for side, s_c in enumerate("LR"):
        c = res.contacts[:, side]
        h_a, h_t = flat_foot(clip, s_c)
        lowest = np.minimum(pt[c, clip.skeleton.index(f"Foot_{s_c}"), 2] - s * h_a,
                            pt[c, clip.skeleton.index(f"Toes_{s_c}"), 2] - s * h_t)
        print(f"scaled {s} {s_c}: planted lowest point {lowest.min():.4f} .. {lowest.max():.4f} m")
        assert np.abs(lowest).max() < 0.02


@pytest.mark.parametrize("drop", [0.0, 45.0], ids=["T-pose", "A-pose"])
def test_clean_rest_pose(clip, drop):
    target = rig(*clean_pose(clip, drop), drop=["joint_Root"])
    res = retarget(clip, BANDAI, target, BANDAI, RetargetConfig(ik=False))
    assert_clean(res)
    assert res.reference_frame is not None
    err = effector_error(clip, BANDAI, res, BANDAI)
    print(f"rest pose {drop} deg arms: {err}")
    assert max(err.values()) < 0.05, err
    # bone rolls/axes of the target do not matter
    rolled = retarget(clip, BANDAI, with_random_rest(target, np.random.default_rng(2)), BANDAI, RetargetConfig(ik=False))
    d = np.abs(rolled.motion.world_positions() - res.motion.world_positions()).max()
    assert d < 1e-3, d


def test_one_spine_bone(clip):
    target = rig(*clean_pose(clip, 45.0), drop=["joint_Root", "Spine"])
    tmap = {k: v for k, v in BANDAI.items() if k != "spine"}
    tmap["spine"] = tmap.pop("spine2")
    res = retarget(clip, BANDAI, target, tmap, RetargetConfig(ik=False))
    assert_clean(res)
    err = effector_error(clip, BANDAI, res, tmap, ("hand_l", "hand_r", "head"))
    print(f"1 spine: {err}")
    assert max(err.values()) < 0.05, err


def test_four_spine_bones_and_twist(clip):
    ins = [
        ("Spine1", "Spine", "Chest", 0.5, ()),
        ("Chest1", "Chest", "Neck", 0.5, ("Shoulder_L", "Shoulder_R")),
    ]
    for s in "LR":
        ins += [
            (f"UpperArmTwist_{s}", f"UpperArm_{s}", f"LowerArm_{s}", 0.5, ()),
            (f"ForeArmTwist_{s}", f"LowerArm_{s}", f"Hand_{s}", 0.6, ()),
        ]
    target = rig(*clean_pose(clip), insert=ins)
    assert len(target) == len(clip.skeleton) + 6
    tmap = dict(BANDAI, spine1="Spine1", spine2="Chest1")
    res = retarget(clip, BANDAI, target, tmap, RetargetConfig(ik=False))
    assert_clean(res)
    err = effector_error(clip, BANDAI, res, tmap, ("hand_l", "hand_r", "head"))
    print(f"4 spine + twist: {err}")
    assert max(err.values()) < 0.05, err
    # the forearm twist bone turns by a share of the hand's twist
    tw = res.motion.rotations[:, target.index("ForeArmTwist_L")]
    assert rotations.angle_between(tw[:1], tw).max() > 1e-3


def test_root_modes(clip):
    sk = clip.skeleton
    hips = sk.index("Hips")
    base = retarget(clip, BANDAI, sk, BANDAI, RetargetConfig(ik=False))
    p_base = base.motion.world_positions()[:, hips]

    inplace = retarget(clip, BANDAI, sk, BANDAI, RetargetConfig(root_mode="in_place", ik=True))
    assert_clean(inplace)
    p = inplace.motion.world_positions()[:, hips]
    assert np.ptp(p[:, :2], axis=0).max() < 1e-9
    # vertical kept, except that the hips may drop a little (2 mm here) so
    # that fully straight planted legs reach the floor
    np.testing.assert_allclose(p[:, 2], p_base[:, 2], atol=5e-3)

    obj = retarget(clip, BANDAI, sk, BANDAI, RetargetConfig(root_mode="object", ik=False))
    assert obj.root_motion.shape == (clip.num_frames, 3)
    assert np.ptp(obj.root_motion[:, 1]) > 5.0  # the walk covers ~9 m along Y
    # everything from the hips down rides on the object
    p = obj.motion.world_positions()[:, 1:] + obj.root_motion[:, None]
    np.testing.assert_allclose(p, base.motion.world_positions()[:, 1:], atol=1e-6)

    rb = retarget(clip, BANDAI, sk, BANDAI, RetargetConfig(root_mode="root_bone", root_bone="joint_Root", ik=False))
    assert_clean(rb)
    pw = rb.motion.world_positions()
    np.testing.assert_allclose(pw[:, 1:], base.motion.world_positions()[:, 1:], atol=1e-6)
    np.testing.assert_allclose(pw[:, 0, :2], p_base[:, :2], atol=1e-9)
    assert np.abs(pw[:, 0, 2]).max() < 1e-9
    assert base.root_motion is None


def test_broken_leg_raises(clip):
    sk = clip.skeleton
    # a foot above its own leg, a lower leg that is not below the upper leg
    with pytest.raises(RetargetError, match="foot_l"):
        retarget(clip, BANDAI, sk, dict(BANDAI, foot_l="Hips"))
    with pytest.raises(RetargetError, match="lowerleg_l"):
        retarget(clip, BANDAI, sk, dict(BANDAI, lowerleg_l="LowerLeg_R"))


@pytest.fixture(scope="module")
def run_clip():
    return read_bvh(data_file(RUN_CLIP))


def knee_angles(pos, sk, side):
    a, b, c = (pos[:, sk.index(f"{n}_{side}")] for n in ("UpperLeg", "LowerLeg", "Foot"))
    u, v = b - a, c - b
    cos = np.sum(u * v, -1) / (np.linalg.norm(u, axis=-1) * np.linalg.norm(v, axis=-1))
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


@pytest.mark.parametrize("style", ["fk", "ik", "flat"], ids=["feet-below-legs", "feet-on-root", "flatter-feet"])
@pytest.mark.parametrize("which", ["walk", "run"])
def test_planted_feet_other_proportions(clip, run_clip, which, style):
    """Longer torso (x1.2), shorter legs (x0.9), standing on z = 0; the feet
    below the legs, (like RobotExpressive) children of the root bone, or
    with a lower ankle above the toe (0.6x: the foot's rest pitch differs)."""
    src = clip if which == "walk" else run_clip
    make = ik_style if style == "ik" else build
    target = make(*standing_pose(src, spine=1.2, legs=0.9, ankle=0.6 if style == "flat" else 1.0))
    res = retarget(src, BANDAI, target, BANDAI)
    assert_clean(res)
    assert res.leg_scale == pytest.approx(0.9, abs=0.01)
    assert res.rest_floor == 0.0
    # per chain end effectors: the pose, with the proportions factored out
    err = chain_error(src, BANDAI, res, BANDAI)
    print(f"{which} {style}: chain errors {err}")
    assert max(err.values()) < 0.05, err
    pt = res.motion.world_positions()
    for s in "lr":
        c = res.contacts[:, "lr".index(s)]
        assert c.sum() > 5
        h = planted_height(res, BANDAI, s)
        print(f"{which} {style} {s}: planted lowest point {h.min():.4f} .. {h.max():.4f} m over {c.sum()} frames")
        assert np.abs(h).max() <= 0.02
        # no sliding: over each contact, the toe while it is on the floor
        # (within 5 mm of its rest height) moves no more than the source's
        # own toe, scaled, + 5 mm
        toe = target.index(f"Toes_{s.upper()}")
        toe_t = pt[:, toe, :2]
        toe_down = pt[:, toe, 2] - target.rest_world()[1][toe, 2] < 0.005
        toe_s = src.world_positions()[:, src.skeleton.index(f"Toes_{s.upper()}"), :2] * res.leg_scale
        m = np.concatenate([[False], c, [False]]).astype(np.int8)
        for a, b in zip(np.nonzero(np.diff(m) == 1)[0], np.nonzero(np.diff(m) == -1)[0]):
            down = np.nonzero(toe_down[a:b])[0] + a
            if len(down) < 2:
                continue
            slide_t = np.linalg.norm(toe_t[down] - toe_t[down[0]], axis=-1).max()
            slide_s = np.linalg.norm(toe_s[a:b] - toe_s[a], axis=-1).max()
            assert slide_t <= slide_s + 0.005, (a, b, slide_t, slide_s)
        # knees never pop: the knee angle changes per frame about as the source's
        dk_t = np.abs(np.diff(knee_angles(pt, target, s.upper()))).max()
        dk_s = np.abs(np.diff(knee_angles(src.world_positions(), src.skeleton, s.upper()))).max()
        assert dk_t < dk_s + 5.0, (dk_t, dk_s)


def test_feet_on_root_match_feet_below_legs(clip):
    """An IK-target-style foot (a child of the root bone, like
    RobotExpressive's) is placed where the leg ends: the same world motion as
    the same rig with the feet below the legs, whatever the bone rolls."""
    pose = standing_pose(clip, spine=1.2, legs=0.9)
    fk = retarget(clip, BANDAI, build(*pose), BANDAI)
    target = with_random_rest(ik_style(*pose), np.random.default_rng(3))
    res = retarget(clip, BANDAI, target, BANDAI)
    assert_clean(res)
    names = fk.motion.skeleton.names
    pt = res.motion.world_positions()[:, [target.index(n) for n in names]]
    d = np.abs(pt - fk.motion.world_positions()).max()
    assert d < 1e-6, d
    # the foot stays at the end of the shin (rest knee-to-ankle distance)
    _, rest = target.rest_world()
    for s in "LR":
        knee, foot = target.index(f"LowerLeg_{s}"), target.index(f"Foot_{s}")
        shin = np.linalg.norm(res.motion.world_positions()[:, foot] - res.motion.world_positions()[:, knee], axis=-1)
        np.testing.assert_allclose(shin, np.linalg.norm(rest[foot] - rest[knee]), atol=1e-6)
    # without IK too (the foot goes where the transferred leg ends)
    res0 = retarget(clip, BANDAI, target, BANDAI, RetargetConfig(ik=False))
    assert_clean(res0)
    fk0 = retarget(clip, BANDAI, build(*pose), BANDAI, RetargetConfig(ik=False))
    pt0 = res0.motion.world_positions()[:, [target.index(n) for n in names]]
    assert np.abs(pt0 - fk0.motion.world_positions()).max() < 1e-6


def test_missing_joint_raises(clip):
    bad = {k: v for k, v in BANDAI.items() if k != "lowerleg_l"}
    with pytest.raises(RetargetError, match="lowerleg_l"):
        retarget(clip, bad, clip.skeleton, BANDAI)
    with pytest.raises(RetargetError, match="target.*lowerleg_l|lowerleg_l.*target"):
        retarget(clip, BANDAI, clip.skeleton, bad)
    with pytest.raises(RetargetError, match="Nope"):
        retarget(clip, dict(BANDAI, head="Nope"), clip.skeleton, BANDAI)
    with pytest.raises(RetargetError, match="root_bone"):
        retarget(clip, BANDAI, clip.skeleton, BANDAI, RetargetConfig(root_mode="root_bone"))


def test_two_bone_ik_reaches_and_clamps():
    rng = np.random.default_rng(0)
    n = 200
    a = rng.normal(size=(n, 3))
    b = a + np.array([0.0, 0.05, -0.4])
    c = b + np.array([0.0, -0.05, -0.4])
    target = a + rng.normal(size=(n, 3)) * 0.3
    target[:5] = a[:5] + np.array([0, 0, -2.0])  # out of reach
    target[5] = a[5]  # on the root
    q1, q2, reached = two_bone_ik(a, b, c, target, b + np.array([0.0, 1.0, 0.0]))
    assert np.all(np.isfinite(q1)) and np.all(np.isfinite(q2))
    b2 = a + rotations.rotate(q1, b - a)
    c2 = b2 + rotations.rotate(q2, c - b)
    l1, l2 = np.linalg.norm(b - a, axis=-1), np.linalg.norm(c - b, axis=-1)
    np.testing.assert_allclose(np.linalg.norm(b2 - a, axis=-1), l1, atol=1e-9)
    np.testing.assert_allclose(c2, reached, atol=1e-7)
    d = np.linalg.norm(target - a, axis=-1)
    ok = (d < 0.999 * (l1 + l2)) & (d > np.abs(l1 - l2) + 1e-3)
    np.testing.assert_allclose(c2[ok], target[ok], atol=1e-7)
    assert np.linalg.norm(c2[:5] - a[:5], axis=-1).max() <= 0.999 * (l1 + l2)[0] + 1e-9
    # the knee bends towards the pole's side of the root->end line
    u = (c2 - a) / np.linalg.norm(c2 - a, axis=-1, keepdims=True)
    perp = lambda v: v - np.sum(v * u, -1, keepdims=True) * u  # noqa: E731
    side = np.sum(perp(b2 - a) * perp(b + np.array([0.0, 1.0, 0.0]) - a), -1)
    assert np.all(side[ok] > 0.0)


def test_soft_reach_is_smooth():
    d = np.linspace(0.0, 1.5, 3001)
    out = soft_reach(d, 1.0, 0.97, 0.999)
    np.testing.assert_allclose(out[d <= 0.97], d[d <= 0.97])
    assert out.max() <= 0.999 and np.all(np.diff(out) >= 0.0)
    slope = np.diff(out) / np.diff(d)
    assert np.abs(np.diff(slope)).max() < 0.05  # no kink (a hard limit jumps by 1)
    # as the IK's limit: a target moving out of reach straightens the knee
    # gradually (a hard limit snaps the last degrees in one step)
    n = 400
    a = np.zeros((n, 3))
    b = np.broadcast_to([0.0, 0.05, -0.4], (n, 3))
    c = np.broadcast_to([0.0, 0.0, -0.8], (n, 3))
    t = np.stack([np.zeros(n), np.zeros(n), -np.linspace(0.75, 0.82, n)], -1)
    q1, q2, reached = two_bone_ik(a, b, c, t, b + [0.0, 1.0, 0.0], soft=0.97)
    knee = a + rotations.rotate(q1, b - a)
    ang = np.degrees(np.arccos(np.clip(np.sum(_unit(knee - a) * _unit(reached - knee), -1), -1, 1)))
    assert np.abs(np.diff(ang)).max() < 1.0
