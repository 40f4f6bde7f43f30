"""Real Blender test rigs for the retargeting acceptance tests (no mocks).

Every factory builds into the *current* scene and returns
``(armature_object, truth)``. ``truth`` maps RigMind's canonical joints
(``presets/humanoid.json``: hips, spine, ..., toes_r) to the bone that plays
each on that rig: the answer auto-mapping must find, and where the end
effectors (hand_l, foot_r ...) are measured. Keys starting with ``_`` are
metadata, not joints:

- ``_twist``: twist/roll helper bones (deforming, but no canonical joint);
- ``_extra``: other bones a mapper must NOT pick (IK targets, end bones, a
  UE-style ``root``, palms ...), listed where they are likely decoys;
- ``_notes``: quirks of the rig in words;
- ``_hierarchy_exempt``: canonical joints whose bone is NOT below the bone of
  the canonical parent (a real rig's quirk, e.g. RobotExpressive's IK feet);
- ``_ancestor_alias``: ``{prefix_from: prefix_to}`` applied to ancestor names
  before the hierarchy check (Rigify parents DEF- bones to ORG- bones).

The truth tables are written out by hand here (from the rigs' actual bone
names, inspected in Blender 5.0.1), deliberately NOT taken from
``presets/bone_maps``: they are what the bone maps are tested against.

Mannequin-derived rigs drop the mannequin meshes by default (``keep_meshes``)
because most of them reshape the rest pose in Edit Mode, which the skin
would not follow.
"""

from __future__ import annotations

import math
import random
import tempfile
from contextlib import contextmanager
from pathlib import Path

import bpy
import numpy as np
from mathutils import Matrix

from rigmind.operators.mannequin import build_mannequin
from rigmind.presets import load_preset

from conftest import data_file

CANONICAL = load_preset("humanoid")
CANONICAL_JOINTS = list(CANONICAL["joints"])
CANONICAL_PARENTS = dict(CANONICAL["parents"])

_FINGERS = ("thumb", "index", "middle", "ring", "pinky")
_SIDES = (("l", "Left", "L"), ("r", "Right", "R"))


# ---------------------------------------------------------------------------
# truth helpers
# ---------------------------------------------------------------------------


def joints(truth: dict) -> dict:
    """The canonical joint -> bone pairs of ``truth`` (metadata dropped)."""
    return {k: v for k, v in truth.items() if not k.startswith("_")}


def _ancestors(arm_obj, bone_name: str, alias: dict) -> list:
    out = []
    b = arm_obj.data.bones[bone_name].parent
    while b is not None:
        name = b.name
        for src, dst in alias.items():
            if name.startswith(src):
                name = dst + name[len(src):]
        out.append(name)
        b = b.parent
    return out


def hierarchy_problems(arm_obj, truth: dict) -> list:
    """Where the rig's bone tree disagrees with the canonical tree: for every
    mapped joint, the bone of its nearest *mapped* canonical ancestor must be
    an ancestor of its bone. Joints in ``_hierarchy_exempt`` are skipped.
    Returns human-readable problems (empty when consistent)."""
    j = joints(truth)
    alias = truth.get("_ancestor_alias", {})
    exempt = set(truth.get("_hierarchy_exempt", ()))
    problems = []
    for joint, bone in j.items():
        if joint in exempt:
            continue
        p = CANONICAL_PARENTS.get(joint)
        while p is not None and p not in j:
            p = CANONICAL_PARENTS.get(p)
        if p is None:
            continue
        if j[p] not in _ancestors(arm_obj, bone, alias):
            problems.append(f"{joint} ({bone}) is not below {p} ({j[p]})")
    return problems


def rest_heads_world(arm_obj) -> dict:
    """Bone name -> world-space rest head (metres), object transform included."""
    mw = arm_obj.matrix_world
    return {b.name: np.array(mw @ b.head_local) for b in arm_obj.data.bones}


def _mixamo_truth(prefix: str = "") -> dict:
    """The mannequin's (Mixamo-named) truth, all 55 canonical joints."""
    t = {
        "hips": "Hips", "spine": "Spine", "spine1": "Spine1", "spine2": "Spine2",
        "neck": "Neck", "head": "Head", "jaw": "Jaw",
    }
    for s, side, _ in _SIDES:
        t.update({
            f"eye_{s}": f"{side}Eye",
            f"clavicle_{s}": f"{side}Shoulder",
            f"upperarm_{s}": f"{side}Arm",
            f"lowerarm_{s}": f"{side}ForeArm",
            f"hand_{s}": f"{side}Hand",
            f"upperleg_{s}": f"{side}UpLeg",
            f"lowerleg_{s}": f"{side}Leg",
            f"foot_{s}": f"{side}Foot",
            f"toes_{s}": f"{side}ToeBase",
        })
        for f in _FINGERS:
            for k in (1, 2, 3):
                t[f"{f}{k}_{s}"] = f"{side}Hand{f.capitalize()}{k}"
    return {c: prefix + t[c] for c in CANONICAL_JOINTS if c in t}


# ---------------------------------------------------------------------------
# Blender helpers
# ---------------------------------------------------------------------------


def _object_mode():
    if bpy.context.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")


@contextmanager
def _edit_bones(arm_obj):
    """Edit Mode on ``arm_obj`` (made active), back to Object Mode after."""
    _object_mode()
    bpy.context.view_layer.objects.active = arm_obj
    bpy.ops.object.mode_set(mode="EDIT")
    try:
        yield arm_obj.data.edit_bones
    finally:
        bpy.ops.object.mode_set(mode="OBJECT")


def _rename_bones(arm_obj, mapping: dict) -> None:
    """Rename bones old -> new in two passes through unique temporary names,
    so a chain of renames (Spine -> spine1 while spine1 ... ) never collides
    and Blender never appends '.001'. Vertex groups of skinned children follow
    (Blender renames them with the bone)."""
    _object_mode()
    bones = arm_obj.data.bones
    todo = [(old, new) for old, new in mapping.items() if old in bones and old != new]
    for i, (old, _) in enumerate(todo):
        bones[old].name = f"__rigfactory_tmp_{i}"
    for i, (_, new) in enumerate(todo):
        bones[f"__rigfactory_tmp_{i}"].name = new
    for _, new in todo:
        assert new in bones, f"rename to {new!r} failed"


def _mannequin(name: str, keep_meshes: bool):
    _object_mode()
    parts = build_mannequin(name=name)
    arm = parts["armature"]
    if not keep_meshes:
        for key in ("body", "head"):
            mesh = parts[key].data
            bpy.data.objects.remove(parts[key])
            bpy.data.meshes.remove(mesh)
    return arm


def _delete_bones(arm_obj, names) -> None:
    with _edit_bones(arm_obj) as eb:
        for n in names:
            if n in eb:
                eb.remove(eb[n])


def _make_active(obj) -> None:
    view_layer = bpy.context.view_layer
    view_layer.update()  # drop stale entries of just-deleted objects
    for o in view_layer.objects:
        if o is not None:
            o.select_set(False)
    obj.select_set(True)
    bpy.context.view_layer.objects.active = obj


# ---------------------------------------------------------------------------
# mannequin-derived rigs
# ---------------------------------------------------------------------------


def mannequin_rig(keep_meshes: bool = True):
    """RigMind's own mannequin, untouched: T-pose, Mixamo names, no prefix."""
    arm = _mannequin("Mannequin", keep_meshes)
    return arm, dict(_mixamo_truth(), _notes=["plain mannequin: T-pose, 55 Mixamo-named bones, no prefix"])


def mixamo_apose_prefixed(angle_deg: float = 45.0, prefix: str = "mixamorig:", keep_meshes: bool = False):
    """Mixamo names with the ``mixamorig:`` namespace, arms ``angle_deg`` down
    (A-pose). Each arm (upper arm, forearm, hand, fingers) is rotated in Edit
    Mode about its shoulder joint (the upper arm's head) around the world Y
    axis, so bone lengths and rolls relative to the arm are kept."""
    arm = _mannequin("MixamoAPose", keep_meshes)
    a = math.radians(angle_deg)
    with _edit_bones(arm) as eb:
        for side, sign in (("Left", 1.0), ("Right", -1.0)):
            root = eb[f"{side}Arm"]
            pivot = root.head.copy()
            # Ry(+a) takes +X to (cos a, 0, -sin a): the left arm goes down;
            # the right arm (along -X) needs Ry(-a).
            m = Matrix.Translation(pivot) @ Matrix.Rotation(sign * a, 4, "Y") @ Matrix.Translation(-pivot)
            chain = [root] + list(root.children_recursive)
            # Disconnect first: moving a parent's tail drags a connected
            # child's head along, which would then be rotated a second time.
            connected = [b for b in chain if b.use_connect]
            for b in connected:
                b.use_connect = False
            for b in chain:
                b.transform(m, scale=False, roll=True)
            for b in connected:  # heads sit on the parents' tails again
                b.use_connect = True
    truth = _mixamo_truth()
    _rename_bones(arm, {b: prefix + b for b in [bb.name for bb in arm.data.bones]})
    truth = {c: prefix + b for c, b in truth.items()}
    truth["_notes"] = [f"A-pose: arms {angle_deg:g} deg below horizontal", f"every bone prefixed {prefix!r}"]
    return arm, truth


def _vrm_names() -> dict:
    m = {
        "Hips": "J_Bip_C_Hips", "Spine": "J_Bip_C_Spine", "Spine1": "J_Bip_C_Chest",
        "Spine2": "J_Bip_C_UpperChest", "Neck": "J_Bip_C_Neck", "Head": "J_Bip_C_Head",
    }
    fingers = {"Thumb": "Thumb", "Index": "Index", "Middle": "Middle", "Ring": "Ring", "Pinky": "Little"}
    for _, side, s in _SIDES:
        m.update({
            f"{side}Eye": f"J_Adj_{s}_FaceEye",
            f"{side}Shoulder": f"J_Bip_{s}_Shoulder",
            f"{side}Arm": f"J_Bip_{s}_UpperArm",
            f"{side}ForeArm": f"J_Bip_{s}_LowerArm",
            f"{side}Hand": f"J_Bip_{s}_Hand",
            f"{side}UpLeg": f"J_Bip_{s}_UpperLeg",
            f"{side}Leg": f"J_Bip_{s}_LowerLeg",
            f"{side}Foot": f"J_Bip_{s}_Foot",
            f"{side}ToeBase": f"J_Bip_{s}_ToeBase",
        })
        for mf, vf in fingers.items():
            for k in (1, 2, 3):
                m[f"{side}Hand{mf}{k}"] = f"J_Bip_{s}_{vf}{k}"
    return m


def vrm_rig(keep_meshes: bool = False):
    """VRoid/VRM-named rig (J_Bip_*), eyes as J_Adj_*_FaceEye, no jaw (VRoid
    models have none), and every bone rolled +90 deg relative to the
    mannequin so rest orientations differ from the Mixamo rigs."""
    arm = _mannequin("VRM", keep_meshes)
    _delete_bones(arm, ["Jaw"])
    with _edit_bones(arm) as eb:
        for b in eb:
            b.roll += math.pi / 2
    names = _vrm_names()
    _rename_bones(arm, names)
    truth = {c: names[b] for c, b in _mixamo_truth().items() if b in names}
    truth["_notes"] = ["VRM: pinky is 'Little', spine1/spine2 are Chest/UpperChest, no jaw bone",
                       "every bone rolled +90 deg relative to the mannequin"]
    return arm, truth


def _unreal_names() -> dict:
    m = {
        "Hips": "pelvis", "Spine": "spine_01", "Spine1": "spine_02", "Spine2": "spine_03",
        "Neck": "neck_01", "Head": "head",
    }
    for s, side, _ in _SIDES:
        m.update({
            f"{side}Shoulder": f"clavicle_{s}", f"{side}Arm": f"upperarm_{s}",
            f"{side}ForeArm": f"lowerarm_{s}", f"{side}Hand": f"hand_{s}",
            f"{side}UpLeg": f"thigh_{s}", f"{side}Leg": f"calf_{s}",
            f"{side}Foot": f"foot_{s}", f"{side}ToeBase": f"ball_{s}",
        })
        for f in _FINGERS:
            for k in (1, 2, 3):
                m[f"{side}Hand{f.capitalize()}{k}"] = f"{f}_0{k}_{s}"
    return m


def unreal_rig(keep_meshes: bool = False):
    """UE4-mannequin-named rig: ``root`` at the origin above ``pelvis``, twist
    bones as leaf children (like UE), and UE's IK helper bones
    (ik_foot_root/ik_foot_l/r, ik_hand_root/ik_hand_gun/ik_hand_l/r) under
    root, which sit exactly on the feet/hands: decoys for position-based
    mapping. No jaw or eye bones (the UE4 mannequin has none)."""
    arm = _mannequin("UE_Mannequin", keep_meshes)
    _delete_bones(arm, ["Jaw", "LeftEye", "RightEye"])
    names = _unreal_names()
    _rename_bones(arm, names)
    twist, extra = [], ["root"]
    with _edit_bones(arm) as eb:
        root = eb.new("root")
        # FBX imports of UE skeletons show a short root bone pointing along +Y.
        root.head, root.tail = (0.0, 0.0, 0.0), (0.0, 0.1, 0.0)
        eb["pelvis"].use_connect = False
        eb["pelvis"].parent = root
        for s in ("l", "r"):
            # (twist bone, parent, fraction along the parent where it starts)
            for tname, parent, frac in (
                (f"upperarm_twist_01_{s}", f"upperarm_{s}", 0.05),
                (f"lowerarm_twist_01_{s}", f"lowerarm_{s}", 0.75),
                (f"thigh_twist_01_{s}", f"thigh_{s}", 0.05),
                (f"calf_twist_01_{s}", f"calf_{s}", 0.6),
            ):
                p = eb[parent]
                t = eb.new(tname)
                t.head = p.head.lerp(p.tail, frac)
                t.tail = p.head.lerp(p.tail, min(frac + 0.25, 1.0))
                t.roll = p.roll
                t.parent = p
                twist.append(tname)
        ik_foot_root = eb.new("ik_foot_root")
        ik_foot_root.head, ik_foot_root.tail = (0.0, 0.0, 0.0), (0.0, 0.0, 0.1)
        ik_foot_root.parent = root
        ik_hand_root = eb.new("ik_hand_root")
        ik_hand_root.head, ik_hand_root.tail = (0.0, 0.0, 0.0), (0.0, 0.0, 0.1)
        ik_hand_root.parent = root
        gun = eb.new("ik_hand_gun")
        gun.head, gun.tail = eb["hand_r"].head, eb["hand_r"].tail
        gun.parent = ik_hand_root
        extra += ["ik_foot_root", "ik_hand_root", "ik_hand_gun"]
        for s in ("l", "r"):
            for ik, src, par in ((f"ik_foot_{s}", f"foot_{s}", ik_foot_root), (f"ik_hand_{s}", f"hand_{s}", gun)):
                b = eb.new(ik)
                b.head, b.tail, b.roll = eb[src].head, eb[src].tail, eb[src].roll
                b.parent = par
                extra.append(ik)
    truth = {c: names[b] for c, b in _mixamo_truth().items() if b in names}
    truth.update(
        _twist=twist,
        _extra=extra,
        _notes=[
            "UE4 naming: spine_01..spine_03 (UE5 Manny has spine_01..spine_05)",
            "root bone at the origin is pelvis's parent; twist bones are leaf children",
            "ik_foot_*/ik_hand_* sit exactly on foot_*/hand_* but hang off root",
        ],
    )
    return arm, truth


def _smplx_from_mannequin():
    """A Skeleton with SMPL-X's 55 joints in SMPL-X order and tree, at the
    mannequin's joint positions (identity rest rotations, like SMPL-X's
    kinematic tree). SMPL-X and the mannequin have the same 55 joints."""
    from rigmind.backend.skeleton import Skeleton

    sk = load_preset("smplx_skeleton")
    names, parents = sk["names"], sk["parents"]
    smplx_to_mixamo = {v: _mixamo_truth()[c] for c, v in _SMPLX_TRUTH.items()}
    _object_mode()
    tmp = _mannequin("__smplx_src", keep_meshes=False)
    heads = {b.name: np.array(b.head_local) for b in tmp.data.bones}
    tails = {b.name: np.array(b.tail_local) for b in tmp.data.bones}
    data = tmp.data
    bpy.data.objects.remove(tmp)
    bpy.data.armatures.remove(data)
    pos = np.array([heads[smplx_to_mixamo[n]] for n in names])
    offsets = np.array([pos[j] - (pos[p] if p >= 0 else 0.0) for j, p in enumerate(parents)])
    tl = np.array([tails[smplx_to_mixamo[n]] - heads[smplx_to_mixamo[n]] for n in names])
    return Skeleton(names, parents, offsets, None, tl, {"source": "mannequin"})


def _smplx_truth() -> dict:
    t = {
        "hips": "pelvis", "spine": "spine1", "spine1": "spine2", "spine2": "spine3",
        "neck": "neck", "head": "head", "jaw": "jaw",
    }
    for s, _, _ in _SIDES:
        side = "left" if s == "l" else "right"
        t.update({
            f"eye_{s}": f"{side}_eye_smplhf",
            f"clavicle_{s}": f"{side}_collar",
            f"upperarm_{s}": f"{side}_shoulder",
            f"lowerarm_{s}": f"{side}_elbow",
            f"hand_{s}": f"{side}_wrist",
            f"upperleg_{s}": f"{side}_hip",
            f"lowerleg_{s}": f"{side}_knee",
            f"foot_{s}": f"{side}_ankle",
            f"toes_{s}": f"{side}_foot",
        })
        for f in _FINGERS:
            for k in (1, 2, 3):
                t[f"{f}{k}_{s}"] = f"{side}_{f}{k}"
    return {c: t[c] for c in CANONICAL_JOINTS}


_SMPLX_TRUTH = _smplx_truth()


def smplx_rig():
    """An armature with SMPL-X's 55 joint names, SMPL-X tree and joint order,
    built with ``scene_io.build_armature`` (bones point at their child, roll 0:
    rest orientations unlike the mannequin's). Uses
    ``backend.smplx_motion.smplx_rest_skeleton()`` (the approximate neutral
    template, Z up) lifted to stand on the floor when that exists, else the
    mannequin's joint positions."""
    from rigmind.operators.scene_io import build_armature

    skeleton = None
    try:  # a colleague's synthetic SMPL-X rest skeleton, when present
        from rigmind.backend.smplx_motion import smplx_rest_skeleton

        skeleton = smplx_rest_skeleton()
        if set(skeleton.names) != set(_SMPLX_TRUTH.values()):
            skeleton = None
    except Exception:  # module absent or a different signature: fall back
        skeleton = None
    source = "backend.smplx_motion" if skeleton is not None else "mannequin joints"
    if skeleton is None:
        skeleton = _smplx_from_mannequin()
    else:
        # SMPL-X's rest pelvis sits ~0.35 m below its origin: lift the whole
        # skeleton so its lowest joint (the toes) is 2 cm above the floor, as
        # a character standing in a scene would.
        skeleton = skeleton.copy()
        lift = 0.02 - skeleton.rest_positions()[:, 2].min()
        skeleton.offsets[skeleton.parents < 0, 2] += lift
    _object_mode()
    arm = build_armature(skeleton, "SMPLX")
    _make_active(arm)
    truth = dict(_SMPLX_TRUTH)
    truth["_notes"] = [
        f"joint positions from {source}",
        "SMPL-X naming traps: left_shoulder = upper arm, left_hip = thigh, "
        "left_ankle = foot, left_foot = toes, left_collar = clavicle",
    ]
    return arm, truth


def scrambled_rig(seed: int = 0, keep_meshes: bool = False):
    """The mannequin with every bone renamed to a meaningless token (``b_7f3a``)
    and a random Edit-Mode roll in [-pi, pi]: only geometry and topology are
    left for a mapper to go on."""
    rng = random.Random(seed)
    arm = _mannequin(f"Scrambled_{seed}", keep_meshes)
    with _edit_bones(arm) as eb:
        for b in eb:
            b.roll = rng.uniform(-math.pi, math.pi)
    old = [b.name for b in arm.data.bones]
    tokens = set()
    while len(tokens) < len(old):
        tokens.add(f"b_{rng.getrandbits(16):04x}")
    tokens = sorted(tokens)
    rng.shuffle(tokens)
    mapping = dict(zip(old, tokens))
    _rename_bones(arm, mapping)
    truth = {c: mapping[b] for c, b in _mixamo_truth().items()}
    truth["_notes"] = [f"names scrambled with seed {seed}; random rolls"]
    return arm, truth


# Object transforms that make a rig "look imported"; the bone data gets the
# inverse, so the character stands exactly where the plain mannequin does.
_TRANSFORM_KINDS = {
    # FBX (cm units, Y-up source): object rotated +90 deg about X, scale 0.01.
    "fbx": Matrix.Rotation(math.pi / 2, 4, "X") @ Matrix.Diagonal((0.01, 0.01, 0.01, 1.0)),
    # A glTF node transform like RobotExpressive's: -90 deg about X, scale 100.
    "gltf_node": Matrix.Rotation(-math.pi / 2, 4, "X") @ Matrix.Diagonal((100.0, 100.0, 100.0, 1.0)),
    # Moved and turned about Z, unit scale (a rig placed in a layout).
    "yawed": Matrix.Translation((1.5, -2.0, 0.0)) @ Matrix.Rotation(math.radians(150), 4, "Z"),
}


def transformed_rig(kind: str = "fbx", keep_meshes: bool = False):
    """The mannequin with a non-identity ARMATURE OBJECT transform (``kind``:
    'fbx' = rotated 90 deg about X and scaled 0.01, as FBX imports look;
    'gltf_node' = -90 deg about X, scale 100; 'yawed' = moved and turned about
    Z). The bone data carries the inverse transform, so world-space rest joints
    equal the plain mannequin's. Pose bones use Euler 'XYZ'."""
    obj_m = _TRANSFORM_KINDS[kind]
    arm = _mannequin(f"Transformed_{kind}", keep_meshes)
    kids = [o for o in bpy.data.objects if o.parent is arm]
    # Armature.transform moves heads, tails and rolls together (rest matrices
    # are transformed as a whole), in Object Mode.
    arm.data.transform(obj_m.inverted())
    arm.matrix_world = obj_m
    for k in kids:  # keep the skin where it was in the world
        k.matrix_parent_inverse = obj_m.inverted()
    for pb in arm.pose.bones:
        pb.rotation_mode = "XYZ"
    bpy.context.view_layer.update()
    truth = _mixamo_truth()
    truth["_notes"] = [f"object transform '{kind}'; bone data carries its inverse; Euler XYZ pose bones"]
    return arm, truth


# ---------------------------------------------------------------------------
# Rigify
# ---------------------------------------------------------------------------


def _enable_rigify() -> None:
    import addon_utils

    # read_factory_settings disables add-ons that are not on by default, so
    # check every time (enabling an enabled add-on is cheap but noisy).
    if not addon_utils.check("rigify")[1]:
        addon_utils.enable("rigify", default_set=True)


def _rigify_truth(rig) -> dict:
    """Truth on the DEF- (deform) bones of a generated Human rig, checked
    against the rig: the arm/leg bones are split in two twist segments
    (``DEF-upper_arm.L`` + ``DEF-upper_arm.L.001``); the first is the joint."""
    t = {
        "hips": "DEF-spine", "spine": "DEF-spine.001", "spine1": "DEF-spine.002",
        "spine2": "DEF-spine.003", "neck": "DEF-spine.004", "head": "DEF-spine.006",
        "jaw": "DEF-jaw",
    }
    twist = []
    rigify_finger = {"thumb": "thumb", "index": "f_index", "middle": "f_middle", "ring": "f_ring", "pinky": "f_pinky"}
    for s, _, S in _SIDES:
        t.update({
            f"clavicle_{s}": f"DEF-shoulder.{S}",
            f"upperarm_{s}": f"DEF-upper_arm.{S}",
            f"lowerarm_{s}": f"DEF-forearm.{S}",
            f"hand_{s}": f"DEF-hand.{S}",
            f"upperleg_{s}": f"DEF-thigh.{S}",
            f"lowerleg_{s}": f"DEF-shin.{S}",
            f"foot_{s}": f"DEF-foot.{S}",
            f"toes_{s}": f"DEF-toe.{S}",
        })
        for f in _FINGERS:
            for k in (1, 2, 3):
                t[f"{f}{k}_{s}"] = f"DEF-{rigify_finger[f]}.0{k}.{S}"
        for limb in ("upper_arm", "forearm", "thigh", "shin"):
            twist += [n for n in rig.data.bones.keys() if n.startswith(f"DEF-{limb}.{S}.")]
    bones = rig.data.bones
    missing = [b for b in t.values() if b not in bones]
    if missing:
        raise RuntimeError(f"Rigify generated no {missing}: Rigify's Human metarig changed")
    truth = {c: t[c] for c in CANONICAL_JOINTS if c in t}
    extra = sorted(n for n in bones.keys() if n.startswith("DEF-palm.")) + ["DEF-spine.005"]
    truth.update(
        _twist=sorted(twist),
        _extra=extra,
        _ancestor_alias={"ORG-": "DEF-"},
        _notes=[
            "DEF- bones follow ORG- bones by constraints and are often parented to them "
            "(DEF-thigh.L <- ORG-spine, DEF-upper_arm.L <- ORG-shoulder.L, fingers <- ORG-palm.0x); "
            "read ORG-x as DEF-x for the hierarchy",
            "arms/legs are split into twist segments (.001), mapped to the first",
            "DEF-spine.005 is a second neck bone; DEF-palm.0x are metacarpals",
            "no DEF- eye bones: the eyes are unmapped",
            "706 bones in all (160 DEF-); the widget objects stay in collection WGTS_<rig>",
        ],
    )
    return truth


def rigify_rig():
    """Blender's Human metarig generated by Rigify (~3-4 s). The metarig is
    deleted afterwards so the scene holds one character armature."""
    _object_mode()
    _enable_rigify()
    bpy.ops.object.armature_human_metarig_add()
    meta = bpy.context.view_layer.objects.active
    bpy.ops.pose.rigify_generate()
    rig = bpy.context.view_layer.objects.active
    assert rig is not meta and rig.type == "ARMATURE", "rigify_generate made no rig"
    meta_data = meta.data
    bpy.data.objects.remove(meta)
    bpy.data.armatures.remove(meta_data)
    _make_active(rig)
    return rig, _rigify_truth(rig)


# tmp dir -> (blend path, rig object name) written by this process; files
# from an earlier session are never trusted (another Blender may have made them).
_RIGIFY_CACHE: dict = {}
_DEFAULT_CACHE_DIR = None


def rigify_rig_cached(tmp_dir=None):
    """``rigify_rig()`` once per session, then appended from a .blend.

    The first call generates the rig in the current scene and writes just the
    rig (and what it needs: armature data, widget meshes) with
    ``bpy.data.libraries.write``; later calls append it with
    ``bpy.data.libraries.load`` (~0.1 s instead of ~4 s) into the current
    scene's master collection."""
    global _DEFAULT_CACHE_DIR
    if tmp_dir is None:
        if _DEFAULT_CACHE_DIR is None:
            _DEFAULT_CACHE_DIR = tempfile.mkdtemp(prefix="rigmind-rigify-")
        tmp_dir = _DEFAULT_CACHE_DIR
    tmp_dir = Path(tmp_dir)
    key = str(tmp_dir.resolve())
    if key not in _RIGIFY_CACHE:
        rig, truth = rigify_rig()
        tmp_dir.mkdir(parents=True, exist_ok=True)
        path = tmp_dir / "rigify_rig.blend"
        bpy.data.libraries.write(str(path), {rig}, fake_user=False)
        _RIGIFY_CACHE[key] = (path, rig.name)
        return rig, truth
    path, name = _RIGIFY_CACHE[key]
    _object_mode()
    with bpy.data.libraries.load(str(path), link=False) as (src, dst):
        dst.objects = [name]
    rig = dst.objects[0]
    bpy.context.scene.collection.objects.link(rig)
    _make_active(rig)
    return rig, _rigify_truth(rig)


# ---------------------------------------------------------------------------
# real characters (glTF)
# ---------------------------------------------------------------------------


def _import_gltf(path: Path):
    _object_mode()
    before = set(bpy.data.objects)
    bpy.ops.import_scene.gltf(filepath=str(path))
    arms = [o for o in bpy.data.objects if o not in before and o.type == "ARMATURE"]
    assert len(arms) == 1, f"{path.name}: expected one armature, got {[a.name for a in arms]}"
    _make_active(arms[0])
    return arms[0]


def rpm_avatar():
    """Ready Player Me avatar (``character_rpm_arkit/brunette-t.glb``; skips
    when absent): 67 bones, Mixamo names without a namespace, finger tips
    (``*4``), HeadTop_End and *Toe_End end bones. Despite the '-t' in the
    file name its rest pose is an A-pose (upper arms ~55 deg down)."""
    arm = _import_gltf(data_file("character_rpm_arkit/brunette-t.glb"))
    truth = {c: b for c, b in _mixamo_truth().items() if c != "jaw"}
    ends = ["HeadTop_End", "LeftToe_End", "RightToe_End"] + [
        f"{side}Hand{f.capitalize()}4" for _, side, _ in _SIDES for f in _FINGERS
    ]
    truth.update(
        _extra=ends,
        _notes=[
            "Mixamo names, no prefix; LeftEye/RightEye; no jaw bone",
            "end bones: HeadTop_End, *Toe_End, finger tips *4",
            "rest pose is an A-pose (arms well below horizontal), palms facing in",
        ],
    )
    return arm, truth


def robot_expressive():
    """three.js RobotExpressive (``characters/RobotExpressive.glb``; skips when
    absent): 43 bones under a root 'Bone'; object transform -90 deg X, x100.

    Quirks (hand-checked): 'Body' is the pelvis that carries the legs and
    'Hips' is a child of it that bends the torso (so it is the first spine
    bone); there is no hand bone, Palm1/2/3.L hang off LowerArm.L side by side
    and Palm2 (middle finger) stands in for the hand; Thumb.L hangs off
    LowerArm.L and Index.L/Ring1.L off Palm1/Palm3, so they are not below the
    'hand'; fingers have 2 phalanges, no pinky; Foot.L/R are IK bones parented
    to the root 'Bone', not to the shins; there are no toe bones."""
    arm = _import_gltf(data_file("characters/RobotExpressive.glb"))
    t = {
        "hips": "Body", "spine": "Hips", "spine1": "Abdomen", "spine2": "Torso",
        "neck": "Neck", "head": "Head",
    }
    for s, _, S in _SIDES:
        t.update({
            f"clavicle_{s}": f"Shoulder.{S}", f"upperarm_{s}": f"UpperArm.{S}",
            f"lowerarm_{s}": f"LowerArm.{S}", f"hand_{s}": f"Palm2.{S}",
            f"thumb1_{s}": f"Thumb.{S}", f"thumb2_{s}": f"Thumb2.{S}",
            f"index1_{s}": f"Index.{S}", f"index2_{s}": f"Index2.{S}",
            f"middle1_{s}": f"Middle1.{S}", f"middle2_{s}": f"Middle2.{S}",
            f"ring1_{s}": f"Ring1.{S}", f"ring2_{s}": f"Ring2.{S}",
            f"upperleg_{s}": f"UpperLeg.{S}", f"lowerleg_{s}": f"LowerLeg.{S}",
            f"foot_{s}": f"Foot.{S}",
        })
    truth = {c: t[c] for c in CANONICAL_JOINTS if c in t}
    truth.update(
        _extra=["Bone", "Palm1.L", "Palm3.L", "Palm1.R", "Palm3.R", "PoleTarget.L", "PoleTarget.R"],
        _hierarchy_exempt=[f"{j}_{s}" for s in ("l", "r") for j in ("foot", "thumb1", "index1", "ring1")],
        _notes=[
            "'Body' = pelvis (carries the legs); 'Hips' is the first spine bone",
            "no hand bone: Palm2 (middle finger's palm) stands in; Palm1/Palm3 are its siblings",
            "Thumb.* is a child of LowerArm.*, Index.* of Palm1.*, Ring1.* of Palm3.*",
            "Foot.L/R are IK bones parented to the root 'Bone', not to LowerLeg.*",
            "2 phalanges per finger, no pinky, no toes, no jaw/eyes",
            "object transform: -90 deg about X, scale 100 (under the 'RootNode' empty)",
        ],
    )
    return arm, truth


# ---------------------------------------------------------------------------
# the acceptance loop
# ---------------------------------------------------------------------------

ALL_RIGS = [
    ("mannequin", mannequin_rig),
    ("mixamo_apose_prefixed", mixamo_apose_prefixed),
    ("vrm", vrm_rig),
    ("unreal", unreal_rig),
    ("smplx", smplx_rig),
    ("scrambled", scrambled_rig),
    ("transformed_fbx", lambda: transformed_rig("fbx")),
    ("transformed_gltf_node", lambda: transformed_rig("gltf_node")),
    ("transformed_yawed", lambda: transformed_rig("yawed")),
    ("rigify", rigify_rig_cached),
    ("rpm_avatar", rpm_avatar),
    ("robot_expressive", robot_expressive),
]
