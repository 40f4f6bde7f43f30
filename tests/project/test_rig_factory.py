"""The test rigs of ``rig_factory`` are what they claim: each builds into an
empty scene, its truth names real bones, its truth agrees with its bone tree
(except documented quirks), and the reshaped rigs are reshaped as intended.
Real Blender throughout; Rigify is generated once per session (cached)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from support import rig_factory

RIGS = dict(rig_factory.ALL_RIGS)


@pytest.fixture(scope="session")
def rigify_cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("rigify_cache")


def _build(name, rigify_cache_dir):
    if name == "rigify":
        return rig_factory.rigify_rig_cached(rigify_cache_dir)
    return RIGS[name]()


@pytest.mark.parametrize("name", list(RIGS))
def test_rig_builds_and_truth_matches_hierarchy(bpy_clean, rigify_cache_dir, name):
    bpy = bpy_clean
    arm, truth = _build(name, rigify_cache_dir)
    assert arm.type == "ARMATURE" and arm.name in bpy.context.scene.objects
    armatures = [o for o in bpy.context.scene.objects if o.type == "ARMATURE"]
    assert armatures == [arm], "one character armature per scene"
    j = rig_factory.joints(truth)
    bones = arm.data.bones
    missing = {c: b for c, b in j.items() if b not in bones}
    assert not missing, missing
    assert set(j) <= set(rig_factory.CANONICAL_JOINTS)
    assert len(set(j.values())) == len(j), "two joints share a bone"
    for key in ("_twist", "_extra"):
        for b in truth.get(key, ()):
            assert b in bones, f"{key} bone {b} missing"
            assert b not in j.values()
    # Every humanoid rig here has the required joints.
    assert set(rig_factory.CANONICAL["required"]) <= set(j), set(rig_factory.CANONICAL["required"]) - set(j)
    assert rig_factory.hierarchy_problems(arm, truth) == []
    # Sides: the character's left is +X in the world, feet below hips below head.
    w = rig_factory.rest_heads_world(arm)
    assert w[j["hand_l"]][0] > w[j["hips"]][0] > w[j["hand_r"]][0]
    assert w[j["foot_l"]][2] < w[j["hips"]][2] < w[j["head"]][2]


def test_documented_quirks_are_real(bpy_clean, rigify_cache_dir):
    """The hierarchy exemptions are needed: without them the check fails
    (so they document something true, not hide a truth-table typo)."""
    arm, truth = rig_factory.robot_expressive()
    bare = {k: v for k, v in truth.items() if k != "_hierarchy_exempt"}
    problems = rig_factory.hierarchy_problems(arm, bare)
    for joint in truth["_hierarchy_exempt"]:
        assert any(p.startswith(f"{joint} ") for p in problems), joint
    assert arm.data.bones["Foot.L"].parent.name == "Bone"


def test_rigify_alias_needed_and_twist_segments(bpy_clean, rigify_cache_dir):
    arm, truth = rig_factory.rigify_rig_cached(rigify_cache_dir)
    assert len(arm.data.bones) == 706
    assert sum(b.name.startswith("DEF-") for b in arm.data.bones) == 160
    assert "DEF-upper_arm.L.001" in truth["_twist"] and "DEF-shin.R.001" in truth["_twist"]
    assert arm.data.bones["DEF-forearm.L"].parent.name == "DEF-upper_arm.L.001"
    bare = {k: v for k, v in truth.items() if k != "_ancestor_alias"}
    assert rig_factory.hierarchy_problems(arm, bare), "Rigify's DEF tree is split; the ORG- alias is needed"


def test_rigify_cache_appends_same_rig(bpy_clean, rigify_cache_dir):
    bpy = bpy_clean
    first, _ = rig_factory.rigify_rig_cached(rigify_cache_dir)
    heads = {n: np.array(v) for n, v in rig_factory.rest_heads_world(first).items()}
    bpy.ops.wm.read_factory_settings(use_empty=True)
    again, truth = rig_factory.rigify_rig_cached(rigify_cache_dir)
    assert again.name in bpy.context.scene.objects
    heads2 = rig_factory.rest_heads_world(again)
    assert heads.keys() == heads2.keys()
    assert max(np.abs(heads[n] - heads2[n]).max() for n in heads) < 1e-6


@pytest.mark.parametrize("kind", ["fbx", "gltf_node", "yawed"])
def test_transformed_rig_stands_like_the_mannequin(bpy_clean, kind):
    bpy = bpy_clean
    plain, _ = rig_factory.mannequin_rig(keep_meshes=False)
    ref = rig_factory.rest_heads_world(plain)
    ref_mats = {b.name: plain.matrix_world @ b.matrix_local for b in plain.data.bones}
    bpy.ops.wm.read_factory_settings(use_empty=True)
    arm, truth = rig_factory.transformed_rig(kind)
    mw = arm.matrix_world
    if kind == "fbx":
        assert math.isclose(mw.to_scale()[0], 0.01, rel_tol=1e-6)
        assert math.isclose(mw.to_euler().x, math.pi / 2, abs_tol=1e-6)
        assert math.isclose(arm.data.bones["Hips"].head_local.length, 95.0, rel_tol=1e-3)  # cm
    got = rig_factory.rest_heads_world(arm)
    assert got.keys() == ref.keys()
    err = max(np.linalg.norm(got[n] - ref[n]) for n in ref)
    assert err < 1e-3, f"world rest joints off by {err * 1000:.3f} mm"
    # Orientations too: bone axes (incl. roll) point the same way in the world.
    for b in arm.data.bones:
        m = (mw @ b.matrix_local).to_3x3().normalized()
        assert np.allclose(np.array(m), np.array(ref_mats[b.name].to_3x3()), atol=1e-4), b.name
    assert {pb.rotation_mode for pb in arm.pose.bones} == {"XYZ"}


def test_apose_hands_are_lower(bpy_clean):
    bpy = bpy_clean
    plain, truth = rig_factory.mannequin_rig(keep_meshes=False)
    t_pose = rig_factory.rest_heads_world(plain)
    t_hands = [t_pose[truth[f"hand_{s}"]] for s in "lr"]
    lengths = {b.name: b.length for b in plain.data.bones}
    bpy.ops.wm.read_factory_settings(use_empty=True)
    arm, atruth = rig_factory.mixamo_apose_prefixed()
    a_pose = rig_factory.rest_heads_world(arm)
    assert all(b.name.startswith("mixamorig:") for b in arm.data.bones)
    assert len(arm.data.bones) == 55
    for s, th in zip("lr", t_hands):
        ah = a_pose[atruth[f"hand_{s}"]]
        assert th[2] - ah[2] >= 0.25, (s, th, ah)
        # 45 deg: the upper arm points down-and-out at 45 deg.
        sh, el = a_pose[atruth[f"upperarm_{s}"]], a_pose[atruth[f"lowerarm_{s}"]]
        d = (el - sh) / np.linalg.norm(el - sh)
        assert math.isclose(math.degrees(math.asin(-d[2])), 45.0, abs_tol=0.01)
    # Bone lengths are kept.
    for b in arm.data.bones:
        assert math.isclose(b.length, lengths[b.name[len("mixamorig:"):]], rel_tol=1e-5), b.name


def test_rolls_and_names_differ_where_claimed(bpy_clean):
    bpy = bpy_clean
    plain, truth = rig_factory.mannequin_rig(keep_meshes=False)
    rolls = {c: plain.data.bones[b].matrix_local.to_3x3() for c, b in rig_factory.joints(truth).items()}
    bpy.ops.wm.read_factory_settings(use_empty=True)
    vrm, vt = rig_factory.vrm_rig()
    for c, b in rig_factory.joints(vt).items():
        zx = np.array(vrm.data.bones[b].matrix_local.to_3x3().col[2])
        ref_x = np.array(rolls[c].col[0])
        assert abs(abs(zx @ ref_x) - 1.0) < 1e-4, c  # +90 deg roll: new Z = +-old X
    bpy.ops.wm.read_factory_settings(use_empty=True)
    sc, st = rig_factory.scrambled_rig(seed=3)
    names = [b.name for b in sc.data.bones]
    assert all(n.startswith("b_") and len(n) == 6 for n in names) and len(set(names)) == 55
    # Same joints as the mannequin, other rolls: the bone Y axes agree, X axes mostly not.
    changed = 0
    for c, b in rig_factory.joints(st).items():
        m, ref = sc.data.bones[b].matrix_local.to_3x3(), rolls[c]
        assert np.allclose(np.array(m.col[1]), np.array(ref.col[1]), atol=1e-5), c
        changed += float(np.array(m.col[0]) @ np.array(ref.col[0])) < 0.99
    assert changed >= 50
    bpy.ops.wm.read_factory_settings(use_empty=True)
    ue, ut = rig_factory.unreal_rig()
    bones = ue.data.bones
    assert bones["pelvis"].parent.name == "root" and bones["root"].head_local.length < 1e-6
    for tw in ("upperarm_twist_01_l", "lowerarm_twist_01_l", "thigh_twist_01_l"):
        assert tw in ut["_twist"] and not bones[tw].children
    assert bones["upperarm_twist_01_l"].parent.name == "upperarm_l"
    assert np.allclose(bones["ik_foot_l"].head_local, bones["foot_l"].head_local)


def test_smplx_rig_matches_preset_tree(bpy_clean):
    arm, truth = rig_factory.smplx_rig()
    sk = rig_factory.load_preset("smplx_skeleton")
    bones = arm.data.bones
    # Blender lists bones depth-first whatever the creation order, so compare sets.
    assert sorted(b.name for b in bones) == sorted(sk["names"])
    for name, p in zip(sk["names"], sk["parents"]):
        assert (bones[name].parent.name if bones[name].parent else None) == (sk["names"][p] if p >= 0 else None)


def test_smplx_fallback_uses_mannequin_joints(bpy_clean):
    """The path taken when backend.smplx_motion is absent: SMPL-X names and
    tree at the mannequin's joint positions."""
    plain, truth = rig_factory.mannequin_rig(keep_meshes=False)
    heads = rig_factory.rest_heads_world(plain)
    sk = rig_factory._smplx_from_mannequin()
    assert sorted(sk.names) == sorted(rig_factory.load_preset("smplx_skeleton")["names"])
    pos = dict(zip(sk.names, sk.rest_positions()))
    for c, b in rig_factory.joints(truth).items():
        assert np.allclose(pos[rig_factory._SMPLX_TRUTH[c]], heads[b], atol=1e-6), c
