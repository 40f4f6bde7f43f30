"""Pose transfer (backend/retarget.py) on a real Bandai-Namco walk.

Pure NumPy. Targets are built from the clip's own skeleton: the same rig, the
same rig with random bone rolls/axes, scaled copies, and clean T-/A-pose rigs
with 1 or 4 spine bones and arm twist bones. End effectors (hands, feet,
head) are compared relative to the hips and divided by each rig's leg length.
"""

from __future__ import annotations

import numpy as np
import pytest

from rigmind.backend import rotations as R
from rigmind.backend.bvh import read_bvh
from rigmind.backend.ik import two_bone_ik
from rigmind.backend.retarget import RetargetError, leg_length, retarget
from rigmind.backend.skeleton import Skeleton

from conftest import data_file

CLIP = "bandai_namco_d2_locomotion/bvh/dataset-2_walk_normal_001.bvh.gz"

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
    new_w = R.normalize(rng.normal(size=(len(sk), 4)))
    rest, off = np.empty((len(sk), 4)), np.empty((len(sk), 3))
    for j, p in enumerate(sk.parents):
        if p < 0:
            rest[j], off[j] = new_w[j], pos_w[j]
        else:
            rest[j] = R.mul(R.inv(new_w[p]), new_w[j])
            off[j] = R.rotate(R.inv(new_w[p]), pos_w[j] - pos_w[p])
    tails = R.rotate(R.inv(new_w), R.rotate(rot_w, sk.tails))
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
    q = R.from_axis_angle(np.array([0.0, 0.0, -yaw]))
    pos = R.rotate(q, pos - pos[i("Hips")] * np.array([1, 1, 0]))
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


def assert_clean(res):
    rot = res.motion.rotations
    assert np.all(np.isfinite(rot)) and np.all(np.isfinite(res.motion.world_positions()))
    assert np.all(np.sum(rot[1:] * rot[:-1], axis=-1) > 0.0), "quaternion sign flips between frames"


# --- tests -----------------------------------------------------------------------


def test_identity_reproduces_world_positions(clip):
    res = retarget(clip, BANDAI, clip.skeleton, BANDAI, ik=False)
    assert_clean(res)
    assert res.leg_scale == pytest.approx(1.0)
    err = np.abs(res.motion.world_positions() - clip.world_positions()).max()
    assert err < 1e-6, err


def test_identity_with_ik_changes_little(clip):
    res = retarget(clip, BANDAI, clip.skeleton, BANDAI, ik=True)
    assert_clean(res)
    assert res.contacts.shape == (clip.num_frames, 2) and res.contacts.any(axis=0).all()
    d = np.linalg.norm(res.motion.world_positions() - clip.world_positions(), axis=-1)
    print(f"identity+IK: max joint shift {d.max():.4f} m, 99th pct {np.percentile(d, 99):.4f} m")
    # Planted ankles are capped at 1.5 cm above their level; pulling a rising
    # heel down on a nearly straight leg moves the knee a few times as much.
    assert d.max() < 0.05 and np.percentile(d, 99) < 0.01


def test_random_rest_rotations(clip):
    target = with_random_rest(clip.skeleton, np.random.default_rng(1))
    res = retarget(clip, BANDAI, target, BANDAI, ik=False)
    assert_clean(res)
    err = np.abs(res.motion.world_positions() - clip.world_positions()).max()
    assert err < 1e-3, err


@pytest.mark.parametrize("s", [0.6, 1.4])
def test_scaled_copy(clip, s):
    res = retarget(clip, BANDAI, scaled(clip.skeleton, s), BANDAI, ik=True)
    assert_clean(res)
    assert res.leg_scale == pytest.approx(s)
    err = effector_error(clip, BANDAI, res, BANDAI)
    print(f"scaled {s}: {err}")
    assert max(err.values()) < 0.05, err
    # planted feet stay on the (scaled) floor level: within 2 cm
    pt = res.motion.world_positions()
    for side, name in enumerate(("Foot_L", "Foot_R")):
        z = pt[:, res.motion.skeleton.index(name), 2]
        level = s * np.percentile(clip.world_positions()[:, clip.skeleton.index(name), 2], 5)
        dz = np.abs(z[res.contacts[:, side]] - level)
        print(f"scaled {s} {name}: contact height max |dz| {dz.max():.4f} m")
        assert dz.max() < 0.02


@pytest.mark.parametrize("drop", [0.0, 45.0], ids=["T-pose", "A-pose"])
def test_clean_rest_pose(clip, drop):
    target = rig(*clean_pose(clip, drop), drop=["joint_Root"])
    res = retarget(clip, BANDAI, target, BANDAI, ik=False)
    assert_clean(res)
    assert res.reference_frame is not None
    err = effector_error(clip, BANDAI, res, BANDAI)
    print(f"rest pose {drop} deg arms: {err}")
    assert max(err.values()) < 0.05, err
    # bone rolls/axes of the target do not matter
    rolled = retarget(clip, BANDAI, with_random_rest(target, np.random.default_rng(2)), BANDAI, ik=False)
    d = np.abs(rolled.motion.world_positions() - res.motion.world_positions()).max()
    assert d < 1e-3, d


def test_one_spine_bone(clip):
    target = rig(*clean_pose(clip, 45.0), drop=["joint_Root", "Spine"])
    tmap = {k: v for k, v in BANDAI.items() if k != "spine"}
    tmap["spine"] = tmap.pop("spine2")
    res = retarget(clip, BANDAI, target, tmap, ik=False)
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
    res = retarget(clip, BANDAI, target, tmap, ik=False)
    assert_clean(res)
    err = effector_error(clip, BANDAI, res, tmap, ("hand_l", "hand_r", "head"))
    print(f"4 spine + twist: {err}")
    assert max(err.values()) < 0.05, err
    # the forearm twist bone turns by a share of the hand's twist
    tw = res.motion.rotations[:, target.index("ForeArmTwist_L")]
    assert R.angle_between(tw[:1], tw).max() > 1e-3


def test_root_modes(clip):
    sk = clip.skeleton
    hips = sk.index("Hips")
    base = retarget(clip, BANDAI, sk, BANDAI, ik=False)
    p_base = base.motion.world_positions()[:, hips]

    inplace = retarget(clip, BANDAI, sk, BANDAI, root_mode="in_place", ik=True)
    assert_clean(inplace)
    p = inplace.motion.world_positions()[:, hips]
    assert np.ptp(p[:, :2], axis=0).max() < 1e-9
    np.testing.assert_allclose(p[:, 2], p_base[:, 2], atol=1e-9)

    obj = retarget(clip, BANDAI, sk, BANDAI, root_mode="object", ik=False)
    assert obj.root_motion.shape == (clip.num_frames, 3)
    assert np.ptp(obj.root_motion[:, 1]) > 5.0  # the walk covers ~9 m along Y
    # everything from the hips down rides on the object
    p = obj.motion.world_positions()[:, 1:] + obj.root_motion[:, None]
    np.testing.assert_allclose(p, base.motion.world_positions()[:, 1:], atol=1e-6)

    rb = retarget(clip, BANDAI, sk, BANDAI, root_mode="root_bone", root_bone="joint_Root", ik=False)
    assert_clean(rb)
    pw = rb.motion.world_positions()
    np.testing.assert_allclose(pw[:, 1:], base.motion.world_positions()[:, 1:], atol=1e-6)
    np.testing.assert_allclose(pw[:, 0, :2], p_base[:, :2], atol=1e-9)
    assert np.abs(pw[:, 0, 2]).max() < 1e-9
    assert base.root_motion is None


def test_missing_joint_raises(clip):
    bad = {k: v for k, v in BANDAI.items() if k != "lowerleg_l"}
    with pytest.raises(RetargetError, match="lowerleg_l"):
        retarget(clip, bad, clip.skeleton, BANDAI)
    with pytest.raises(RetargetError, match="target.*lowerleg_l|lowerleg_l.*target"):
        retarget(clip, BANDAI, clip.skeleton, bad)
    with pytest.raises(RetargetError, match="Nope"):
        retarget(clip, dict(BANDAI, head="Nope"), clip.skeleton, BANDAI)
    with pytest.raises(RetargetError, match="root_bone"):
        retarget(clip, BANDAI, clip.skeleton, BANDAI, root_mode="root_bone")


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
    b2 = a + R.rotate(q1, b - a)
    c2 = b2 + R.rotate(q2, c - b)
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
