"""The procedural mannequin, built in the real bpy (Blender 5.0)."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from rigmind.presets import arkit52_names, preset_path

FINGERS = ("Thumb", "Index", "Middle", "Ring", "Pinky")
EXPECTED_BONES = (
    ["Hips", "Spine", "Spine1", "Spine2", "Neck", "Head", "Jaw", "LeftEye", "RightEye"]
    + [
        f"{side}{n}"
        for side in ("Left", "Right")
        for n in (
            ["Shoulder", "Arm", "ForeArm", "Hand"]
            + [f"Hand{f}{k}" for f in FINGERS for k in (1, 2, 3)]
            + ["UpLeg", "Leg", "Foot", "ToeBase"]
        )
    ]
)
MIRROR = np.array([-1.0, 1.0, 1.0])


def _build():
    from rigmind.operators.mannequin import build_mannequin

    return build_mannequin()


def _key_offsets(head):
    """``{name: [N, 3] displacement from Basis}`` in metres."""
    kb = head.data.shape_keys.key_blocks
    n = len(head.data.vertices)
    base = np.empty(n * 3, np.float32)
    kb["Basis"].data.foreach_get("co", base)
    base = base.reshape(-1, 3).astype(np.float64)
    out = {}
    for k in kb[1:]:
        a = np.empty(n * 3, np.float32)
        k.data.foreach_get("co", a)
        out[k.name] = a.reshape(-1, 3) - base
    return base, out


def _check_rig(arm, body, head):
    bones = arm.data.bones
    assert len(bones) == 55
    assert sorted(b.name for b in bones) == sorted(EXPECTED_BONES)
    roots = [b.name for b in bones if b.parent is None]
    assert roots == ["Hips"]
    assert bones["Jaw"].parent.name == "Head"
    assert bones["LeftEye"].parent.name == "Head"
    assert bones["LeftArm"].parent.name == "LeftShoulder"
    assert bones["LeftShoulder"].parent.name == "Spine2"
    assert bones["LeftUpLeg"].parent.name == "Hips"
    assert bones["RightHandIndex3"].parent.name == "RightHandIndex2"
    assert bones["RightHandThumb1"].parent.name == "RightHand"

    # Body: skinned to the armature through groups named after the bones.
    mods = [m for m in body.modifiers if m.type == "ARMATURE"]
    assert len(mods) == 1 and mods[0].object == arm
    assert body.parent == arm
    assert {g.name for g in body.vertex_groups} == set(EXPECTED_BONES)
    assert len(body.data.materials) >= 1

    # Head: Basis + the 52 ARKit keys in Apple's order, weighted to face bones.
    keys = [k.name for k in head.data.shape_keys.key_blocks]
    assert keys == ["Basis"] + arkit52_names()
    assert head.parent == arm
    assert any(m.type == "ARMATURE" and m.object == arm for m in head.modifiers)
    assert {"Head", "Jaw", "LeftEye", "RightEye"} <= {g.name for g in head.vertex_groups}
    assert {g.name for g in head.vertex_groups} <= set(EXPECTED_BONES)


def test_arkit_preset():
    names = arkit52_names()
    assert len(names) == 52 and len(set(names)) == 52
    assert names[:3] == ["eyeBlinkLeft", "eyeLookDownLeft", "eyeLookInLeft"]
    assert names[14:18] == ["jawForward", "jawLeft", "jawRight", "jawOpen"]
    assert names[-1] == "tongueOut"
    assert preset_path("arkit52").name == "arkit52.json"
    with pytest.raises(FileNotFoundError):
        preset_path("no_such_preset")


def test_skeleton_proportions_and_tpose(bpy_clean):
    t0 = time.perf_counter()
    objs = _build()
    assert time.perf_counter() - t0 < 2.0
    arm, body, head = objs["armature"], objs["body"], objs["head"]
    _check_rig(arm, body, head)
    bones = arm.data.bones

    def h(n):
        return np.array(bones[n].head_local)

    def t(n):
        return np.array(bones[n].tail_local)

    pts = np.array([p for b in bones for p in (b.head_local, b.tail_local)])
    height = pts[:, 2].max() - min(pts[:, 2].min(), 0.0)
    assert 1.65 <= height <= 1.85
    assert -0.01 <= pts[:, 2].min() < 0.05  # standing on the ground

    # T-pose: hands far out along +-X, at shoulder height.
    shoulder_z = h("LeftArm")[2]
    assert h("LeftHand")[0] > 0.6 and h("RightHand")[0] < -0.6
    for n in ("LeftHand", "RightHand", "LeftForeArm", "RightForeArm"):
        assert abs(h(n)[2] - shoulder_z) < 0.05
        assert abs(h(n)[1]) < 0.05
    assert shoulder_z > 1.3
    # Faces -Y: toes and eyes point forward.
    assert t("LeftToeBase")[1] < h("LeftFoot")[1] - 0.1
    assert t("LeftEye")[1] < h("LeftEye")[1]
    assert h("LeftEye")[0] > 0 and h("LeftUpLeg")[0] > 0  # character's left is +X

    # Left/right mirrored, rolls included (compare full rest orientations).
    for b in bones:
        if b.name.startswith("Left"):
            r = bones["Right" + b.name[4:]]
            np.testing.assert_allclose(np.array(r.head_local), h(b.name) * MIRROR, atol=1e-5)
            np.testing.assert_allclose(np.array(r.tail_local), t(b.name) * MIRROR, atol=1e-5)
            ml, mr = np.array(b.matrix_local)[:3, :3], np.array(r.matrix_local)[:3, :3]
            np.testing.assert_allclose(mr[:, 1], ml[:, 1] * MIRROR, atol=1e-5)  # bone axis
            np.testing.assert_allclose(mr[:, 2], ml[:, 2] * MIRROR, atol=1e-5)  # roll (Z axis)

    # The body mesh spans the T-pose and stands on Z = 0.
    n = len(body.data.vertices)
    co = np.empty(n * 3, np.float32)
    body.data.vertices.foreach_get("co", co)
    co = co.reshape(-1, 3)
    assert co[:, 0].max() > 0.8 and co[:, 0].min() < -0.8
    assert abs(co[:, 2].min()) < 0.01
    assert 1.6 < co[:, 2].max() < 1.8


def test_posing_deforms_body(bpy_clean):
    objs = _build()
    arm, body = objs["armature"], objs["body"]
    dg = bpy_clean.context.evaluated_depsgraph_get()

    def evaluated():
        dg.update()
        ev = body.evaluated_get(dg)
        me = ev.to_mesh()
        co = np.empty(len(me.vertices) * 3, np.float32)
        me.vertices.foreach_get("co", co)
        ev.to_mesh_clear()
        return co.reshape(-1, 3)

    rest = evaluated()
    pb = arm.pose.bones["LeftForeArm"]
    pb.rotation_mode = "XYZ"
    pb.rotation_euler = (0.0, 0.0, math.radians(90))
    posed = evaluated()
    d = np.linalg.norm(posed - rest, axis=1)
    left_hand = rest[:, 0] > 0.72
    right_side = rest[:, 0] < -0.1
    assert d[left_hand].min() > 0.1  # the whole left hand swings
    assert d[right_side].max() < 1e-6
    assert d[rest[:, 0] < 0.3].max() < 1e-6  # torso untouched


def test_head_keys_move_their_region_and_mirror(bpy_clean):
    from mathutils.kdtree import KDTree

    from rigmind.operators.mannequin import HEAD_CENTRE

    head = _build()["head"]
    base, offs = _key_offsets(head)
    n = len(base)
    back_of_head = base[:, 1] > HEAD_CENTRE[1] + 0.03
    for name, d in offs.items():
        m = np.linalg.norm(d, axis=1)
        assert m.max() > 0.001, name
        assert m.max() <= 0.021, name
        assert (m > 1e-5).sum() < 0.3 * n, name  # a region, not the whole head
        assert m[back_of_head].max() < 1e-6, name

    # Mirror map of the head's vertices (the mesh is X-symmetric).
    kd = KDTree(n)
    for i, p in enumerate(base):
        kd.insert(p, i)
    kd.balance()
    mirror = np.empty(n, np.int64)
    for i, p in enumerate(base * MIRROR):
        _, j, dist = kd.find(p)
        assert dist < 1e-5
        mirror[i] = j

    names = arkit52_names()
    for name in names:
        d = offs[name]
        if "Left" in name:
            other = offs[name.replace("Left", "Right")]
            # Right key at the mirrored vertex == mirrored Left displacement.
            np.testing.assert_allclose(other[mirror], d * MIRROR, atol=2e-5, err_msg=name)
        elif "Right" not in name:
            np.testing.assert_allclose(d[mirror], d * MIRROR, atol=2e-5, err_msg=name)

    # Sided keys live on their own side (whole-region shifts excepted).
    for name in names:
        if name.endswith("Left") and name not in ("jawLeft", "mouthLeft"):
            m = np.linalg.norm(offs[name], axis=1)
            assert (m[base[:, 0] > 0] ** 2).sum() > 4 * (m[base[:, 0] < 0] ** 2).sum(), name


def test_save_and_reopen(bpy_clean, tmp_path):
    from rigmind.operators.mannequin import save_mannequin

    path = save_mannequin(tmp_path / "sub" / "mannequin.blend")
    assert path.is_file()
    bpy_clean.ops.wm.open_mainfile(filepath=str(path))
    objs = bpy_clean.data.objects
    arm = next(o for o in objs if o.type == "ARMATURE")
    meshes = [o for o in objs if o.type == "MESH"]
    head = next(o for o in meshes if o.data.shape_keys is not None)
    body = next(o for o in meshes if o is not head)
    _check_rig(arm, body, head)
    _, offs = _key_offsets(head)
    assert all(np.linalg.norm(d, axis=1).max() > 0.001 for d in offs.values())
