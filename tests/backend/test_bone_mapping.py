"""Bone-map presets and automatic humanoid mapping (pure backend, no bpy)."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from rigmind.backend.bone_mapping import (
    BoneMapping,
    NotHumanoidError,
    PRESETS_DIR,
    auto_map,
    list_presets,
    load_humanoid,
    load_preset,
    match_preset,
    name_info,
)
from rigmind.backend.skeleton import Skeleton

from conftest import data_file
from support.humanoid_generator import make_humanoid, make_renamed_humanoid

HUM = load_humanoid()
REQUIRED = HUM["required"]


# -- the canonical humanoid and SMPL-X tree ------------------------------------
def test_humanoid_definition_is_a_tree_with_required_subset():
    joints, parents = HUM["joints"], HUM["parents"]
    assert len(joints) == len(set(joints)) == 55  # 9 centre + 2 x (4 arm + 15 finger + 4 leg)
    for j in joints:
        p = parents[j]
        assert p is None or joints.index(p) < joints.index(j)
    assert set(REQUIRED) <= set(joints)
    assert set(REQUIRED) | set(HUM["optional"]) == set(joints)
    assert not set(REQUIRED) & set(HUM["optional"])
    for a, b in HUM["mirror"].items():
        assert HUM["mirror"][b] == a and parents[a] in (None, parents[b], HUM["mirror"].get(parents[b]))


def test_smplx_skeleton_and_preset_agree():
    sk = json.loads((PRESETS_DIR / "smplx_skeleton.json").read_text())
    names, parents = sk["names"], sk["parents"]
    assert len(names) == len(parents) == 55 and parents[0] == -1
    assert all(0 <= p < j for j, p in enumerate(parents) if j)
    assert names[:3] == ["pelvis", "left_hip", "right_hip"] and names[22] == "jaw"
    assert names[parents[names.index("left_wrist")]] == "left_elbow"
    assert names[parents[names.index("left_thumb1")]] == "left_wrist"
    assert names[parents[names.index("right_pinky3")]] == "right_pinky2"
    table = load_preset("smplx")["bones"]
    assert set(table.values()) <= set(names)
    assert len(table) == 55  # every SMPL-X joint plays a canonical joint


# -- presets --------------------------------------------------------------------
CANON_FORCE = dict(spine_bones=3, clavicles=True, fingers=True, twist="none", a_pose=False, ends=False,
                   root=False, jaw_eyes=True, pelvis_helpers=False, neck_bones=1, frame="z_up")


def preset_rig(name, variant="", prefix=None):
    """The canonical synthetic humanoid named after a preset (with its first
    prefix unless given); bones the preset does not name get neutral names.
    Returns ``(skeleton, expected bones)``."""
    p = load_preset(name)
    prefix = p["prefixes"][0] if prefix is None else prefix
    table = dict(p["bones"])
    for k, v in p["variants"].get(variant, {}).items():
        if v is None:
            table.pop(k, None)
        else:
            table[k] = v
    skel, keys = make_humanoid(np.random.default_rng(7), **CANON_FORCE)
    names = [prefix + table[k[0]] if k[0] in table else f"extra_{j}" for j, k in enumerate(keys)]
    skel = Skeleton(names, skel.parents, skel.offsets, skel.rest_rotations, skel.tails, {"name": name})
    return skel, {c: prefix + b for c, b in table.items()}


def test_list_presets_has_every_family():
    names = list_presets()
    for want in ("mixamo", "ready_player_me", "rigify_def", "rigify_fk", "blender_metarig", "auto_rig_pro", "vrm",
                 "unity_humanoid", "unreal_mannequin", "smplx", "bandai_namco", "cmu", "lafan_bvh", "games105",
                 "robot_expressive", "rigmind_mannequin"):
        assert want in names
    for n in names:
        p = load_preset(n)
        assert set(p["bones"]) <= set(HUM["joints"]), n
        assert set(REQUIRED) <= set(p["bones"]), f"preset {n} lacks required joints"
        assert len(set(p["bones"].values())) == len(p["bones"]), f"preset {n} names a bone twice"


@pytest.mark.parametrize("name", list_presets())
def test_every_preset_maps_its_own_rig(name):
    skel, want = preset_rig(name)
    m = auto_map(skel)
    assert m.preset == name
    assert m.bones == want
    assert m.overall >= 0.9 and not m.missing_required


@pytest.mark.parametrize("name,variant,prefix", [
    ("mixamo", "", "mixamorig:"),
    ("mixamo", "", "mixamorig1:"),
    ("unreal_mannequin", "ue4", ""),
    ("vrm", "no_upper_chest", ""),
    ("unity_humanoid", "no_upper_chest", ""),
    ("lafan_bvh", "beat", ""),
    ("auto_rig_pro", "rig", ""),
    ("auto_rig_pro", "two_spine", ""),
    ("rigify_fk", "old_toe", ""),
])
def test_preset_prefixes_and_variants(name, variant, prefix):
    skel, want = preset_rig(name, variant, prefix)
    m = auto_map(skel)
    assert (m.preset, m.variant) == (name, variant)
    assert m.bones == want


def test_explicit_preset_that_does_not_fit_says_what_is_missing():
    skel, _ = preset_rig("mixamo")
    with pytest.raises(NotHumanoidError, match=r"preset 'vrm' does not fit.*J_Bip_C_Hips.*by hand"):
        auto_map(skel, preset="vrm")
    assert match_preset(skel, "mixamo").preset == "mixamo"


def test_mapping_json_roundtrip_and_user_preset(tmp_path):
    skel, truth = make_renamed_humanoid(np.random.default_rng(3), scramble=True)
    m = auto_map(skel)
    back = BoneMapping.from_json(m.to_json())
    assert back == m and back.preset == "auto"
    path = tmp_path / "my_rig.json"
    m.save(path)
    again = auto_map(skel, preset=str(path))
    assert again.bones == m.bones
    assert auto_map(skel, preset=m).bones == m.bones
    with pytest.raises(ValueError, match="bones"):
        BoneMapping.from_json("{}")


# -- names -----------------------------------------------------------------------
@pytest.mark.parametrize("name,role,side", [
    ("mixamorig:LeftForeArm", "lowerarm", "l"),
    ("DEF-upper_arm.L", "upperarm", "l"),
    ("Bip01 R Thigh", "upperleg", "r"),
    ("CC_Base_L_Calf", "lowerleg", "l"),
    ("J_Bip_R_ToeBase", "toes", "r"),
    ("thigh_l", "upperleg", "l"),
    ("r_clavicle", "clavicle", "r"),
    ("Hand_left", "hand", "l"),
    ("lHip", "upperleg", "l"),
    ("pelvis", "hips", None),
    ("LeftUpLeg", "upperleg", "l"),
    ("calf_r", "lowerleg", "r"),
    ("ball_l", "toes", "l"),
    ("J_Bip_C_UpperChest", "chest", None),
])
def test_name_normalisation(name, role, side):
    info = name_info(name)
    assert info["side"] == side
    assert max(info["roles"], key=info["roles"].get) == role


@pytest.mark.parametrize("name", ["upperarm_twist_01_l", "HeadTop_End", "LeftToe_End", "ik_foot_l",
                                  "PoleTarget.L", "Bip01 L Toe0Nub", "thigh_roll.R"])
def test_helper_bones_are_recognised(name):
    assert name_info(name)["helper"]


def test_finger_names():
    assert name_info("Left Index Proximal")["finger"] == "index"
    assert name_info("J_Bip_L_Little2")["finger"] == "pinky"
    assert name_info("f_pinky.03.R")["finger"] == "pinky"


# -- heuristics on generated rigs -------------------------------------------------------
def _accuracy(rigs):
    total = correct = 0
    worst = []
    for skel, truth in rigs:
        m = auto_map(skel)
        inv = m.rig_to_canonical()
        bad = [(b, truth[b], inv.get(b)) for b in skel.names if truth[b] != inv.get(b)]
        total += len(truth)
        correct += len(truth) - len(bad)
        if bad:
            worst.append(bad[:4])
        assert not m.missing_required
    return correct / total, total, worst


def test_auto_mapping_accuracy_on_generated_rigs():
    rng = np.random.default_rng(2024)
    named = [make_renamed_humanoid(rng) for _ in range(24)]
    scrambled = [make_renamed_humanoid(rng, scramble=True) for _ in range(8)]
    acc, n, worst = _accuracy(named + scrambled)
    acc_s, n_s, _ = _accuracy(scrambled)
    print(f"\nauto-mapping accuracy: {acc:.4f} over {n} bones of 32 rigs; "
          f"scrambled names only: {acc_s:.4f} ({n_s} bones)")
    assert all(m.preset == "auto" for m in (auto_map(s) for s, _ in scrambled))
    assert acc >= 0.95, worst
    assert acc_s >= 0.95, worst


@pytest.mark.parametrize("frame", ["yaw", "y_up"])
@pytest.mark.parametrize("scramble", [False, True])
def test_rotated_rigs_map(frame, scramble):
    for seed in range(3):
        skel, truth = make_renamed_humanoid(np.random.default_rng(100 + seed), scramble=scramble, frame=frame)
        m = auto_map(skel)
        for c in REQUIRED:
            assert truth[m.bones[c]] == c, (frame, seed, c, m.bones[c])


def test_confidence_is_lower_without_names():
    rng = np.random.default_rng(5)
    named, _ = make_renamed_humanoid(rng, scramble=False, **CANON_FORCE)
    scrambled, _ = make_renamed_humanoid(np.random.default_rng(5), scramble=True, **CANON_FORCE)
    a, b = auto_map(named, use_presets=False), auto_map(scrambled)
    assert 0.0 < b.overall < a.overall <= 1.0
    assert all(0.0 <= v <= 1.0 for v in b.confidence.values())


@pytest.mark.parametrize("name", list_presets())
def test_heuristics_alone_get_required_joints_of_preset_rigs(name):
    skel, want = preset_rig(name)
    m = auto_map(skel, use_presets=False)
    wrong = {c: (m.bones.get(c), want[c]) for c in REQUIRED if m.bones.get(c) != want[c]}
    assert not wrong


# -- not humanoid ------------------------------------------------------------------------
def _build(spec, name):
    names = [s[0] for s in spec]
    parents = [names.index(s[1]) if s[1] else -1 for s in spec]
    pos = np.array([s[2] for s in spec], float)
    offs = np.array([pos[j] - (pos[p] if p >= 0 else 0) for j, p in enumerate(parents)])
    return Skeleton(names, parents, offs, meta={"name": name})


def test_three_bone_chain_is_not_humanoid():
    skel = _build([("Tail", None, (0, 0, 0)), ("Tail.001", "Tail", (0, 0.2, 0)), ("Tail.002", "Tail.001", (0, 0.4, 0))],
                  "Tail")
    with pytest.raises(NotHumanoidError) as e:
        auto_map(skel)
    msg = str(e.value)
    assert "'Tail'" in msg and "3 bones in one chain" in msg and "humanoid" in msg and "by hand" in msg
    assert isinstance(e.value, ValueError)


def test_quadruped_is_not_humanoid():
    spec = [("pelvis", None, (0, 0.5, 0.6))]
    for s, x in (("L", 0.15), ("R", -0.15)):
        spec += [(f"thigh.{s}", "pelvis", (x, 0.5, 0.55)), (f"shin.{s}", f"thigh.{s}", (x, 0.45, 0.3)),
                 (f"foot.{s}", f"shin.{s}", (x, 0.5, 0.05)), (f"toe.{s}", f"foot.{s}", (x, 0.42, 0.0))]
    spec += [("spine", "pelvis", (0, 0.3, 0.62)), ("spine.001", "spine", (0, 0.0, 0.63)),
             ("chest", "spine.001", (0, -0.3, 0.63))]
    for s, x in (("L", 0.15), ("R", -0.15)):
        spec += [(f"shoulder.{s}", "chest", (x, -0.35, 0.55)), (f"upper_arm.{s}", f"shoulder.{s}", (x, -0.35, 0.35)),
                 (f"forearm.{s}", f"upper_arm.{s}", (x, -0.35, 0.15)), (f"hand.{s}", f"forearm.{s}", (x, -0.38, 0.02))]
    spec += [("neck", "chest", (0, -0.45, 0.7)), ("head", "neck", (0, -0.6, 0.85))]
    spec += [("tail", "pelvis", (0, 0.65, 0.62)), ("tail.001", "tail", (0, 0.85, 0.6)),
             ("tail.002", "tail.001", (0, 1.05, 0.55))]
    with pytest.raises(NotHumanoidError) as e:
        auto_map(_build(spec, "Dog"))
    msg = str(e.value)
    assert "'Dog'" in msg and "4 leg-like chains" in msg and "quadruped" in msg and "pick a preset" in msg


# -- real rigs -----------------------------------------------------------------------------
def _gltf_matrix(node):
    if "matrix" in node:
        return np.array(node["matrix"], dtype=float).reshape(4, 4).T
    x, y, z, w = node.get("rotation", [0, 0, 0, 1])
    r = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                  [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                  [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
    m = np.eye(4)
    m[:3, :3] = r * np.array(node.get("scale", [1, 1, 1]), float)
    m[:3, 3] = node.get("translation", [0, 0, 0])
    return m


def glb_skeleton(path) -> Skeleton:
    """The first skin's joints as a Skeleton (rest = node transforms), glTF Y-up
    converted to Blender Z-up with (x, y, z) -> (x, -z, y). A non-joint,
    mesh-less child (Blender's ``*_end`` export) gives the bone's tail."""
    blob = path.read_bytes()
    assert blob[:4] == b"glTF"
    length = struct.unpack("<I", blob[12:16])[0]
    g = json.loads(blob[20:20 + length])
    nodes = g["nodes"]
    parent = {c: i for i, nd in enumerate(nodes) for c in nd.get("children", [])}
    world = {}

    def w(i):
        if i not in world:
            world[i] = (w(parent[i]) if i in parent else np.eye(4)) @ _gltf_matrix(nodes[i])
        return world[i]

    def blender(i):
        x, y, z = w(i)[:3, 3]
        return np.array([x, -z, y])

    joints = set(g["skins"][0]["joints"])

    def depth(i):
        return 0 if i not in parent else 1 + depth(parent[i])

    order = sorted(joints, key=lambda i: (depth(i), i))
    idx, names, parents, pos, tails = {}, [], [], [], []
    for i in order:
        p = parent.get(i)
        while p is not None and p not in joints:
            p = parent.get(p)
        idx[i] = len(names)
        names.append(nodes[i]["name"])
        parents.append(idx[p] if p is not None else -1)
        pos.append(blender(i))
        tail = np.zeros(3)
        for c in nodes[i].get("children", []):
            if c not in joints and "mesh" not in nodes[c]:
                tail = blender(c) - pos[-1]
                break
        tails.append(tail)
    pos = np.array(pos)
    offsets = np.array([pos[j] - (pos[p] if p >= 0 else 0.0) for j, p in enumerate(parents)])
    return Skeleton(names, parents, offsets, tails=np.array(tails), meta={"name": path.name})


ROBOT = {"hips": "Body", "spine": "Hips", "head": "Head"}
for _s, _S in (("l", "L"), ("r", "R")):
    ROBOT.update({f"upperarm_{_s}": f"UpperArm.{_S}", f"lowerarm_{_s}": f"LowerArm.{_S}", f"hand_{_s}": f"Palm2.{_S}",
                  f"upperleg_{_s}": f"UpperLeg.{_S}", f"lowerleg_{_s}": f"LowerLeg.{_S}", f"foot_{_s}": f"Foot.{_S}"})
MIXAMO = {"hips": "Hips", "spine": "Spine", "head": "Head"}
for _s, _S in (("l", "Left"), ("r", "Right")):
    MIXAMO.update({f"upperarm_{_s}": f"{_S}Arm", f"lowerarm_{_s}": f"{_S}ForeArm", f"hand_{_s}": f"{_S}Hand",
                   f"upperleg_{_s}": f"{_S}UpLeg", f"lowerleg_{_s}": f"{_S}Leg", f"foot_{_s}": f"{_S}Foot"})


@pytest.mark.parametrize("rel,preset,want", [
    ("characters/RobotExpressive.glb", "robot_expressive", ROBOT),
    ("character_rpm_arkit/brunette-t.glb", "ready_player_me", MIXAMO),
])
@pytest.mark.parametrize("use_presets", [True, False])
def test_real_gltf_rigs(rel, preset, want, use_presets):
    skel = glb_skeleton(data_file(rel))
    assert set(want) == set(REQUIRED)
    m = auto_map(skel, use_presets=use_presets)
    assert m.preset == (preset if use_presets else "auto")
    assert {c: m.bones.get(c) for c in REQUIRED} == want
    # the character's left is +X in Blender's frame
    pos = skel.rest_positions()
    assert pos[skel.index(m.bones["hand_l"]), 0] > 0 > pos[skel.index(m.bones["hand_r"]), 0]


def test_real_gltf_xbot_mixamorig_prefix():
    skel = glb_skeleton(data_file("characters/Xbot.glb"))
    m = auto_map(skel)
    assert m.preset == "mixamo" and m.bones["hips"] == "mixamorig:Hips"
    heur = auto_map(skel, use_presets=False)
    assert {c: heur.bones[c] for c in REQUIRED} == {c: m.bones[c] for c in REQUIRED}


@pytest.mark.parametrize("rel,preset", [
    ("cmu_131_start_walk_stop/131_01.bvh", "cmu"),
    ("games105_locomotion/walk_forward.bvh", "games105"),
])
def test_real_bvh_rigs(rel, preset):
    from rigmind.backend.bvh import read_bvh

    skel = read_bvh(data_file(rel)).skeleton
    m = auto_map(skel)
    assert m.preset == preset and not m.missing_required
    heur = auto_map(skel, use_presets=False)
    assert heur.bones == m.bones  # topology + geometry + names agree with the hand-written preset


def test_real_bandai_bvh_names():
    import glob
    import gzip

    folder = data_file("bandai_namco_d2_locomotion/bvh")
    files = sorted(glob.glob(str(folder / "*.bvh.gz")))
    if not files:
        pytest.skip(f"no .bvh.gz in {folder}")
    with gzip.open(files[0], "rt") as f:
        head = f.read().split("MOTION")[0]
    names = [ln.split()[1] for ln in head.splitlines() if ln.strip().startswith(("ROOT", "JOINT"))]
    table = load_preset("bandai_namco")["bones"]
    assert set(table.values()) <= set(names)
