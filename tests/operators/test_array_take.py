"""A take asked for as a BVH only (``rigmind retarget/gesture --out X.bvh``)
is kept as the values its keys would hold (``scene_io.ArrayTake``) and the
file written from them: it must be the file that keying the take and
exporting it writes, byte for byte, on every kind of rig (quaternion, Euler
and axis-angle bones, an object rotated and scaled by an import, Mixamo and
Ready Player Me names), and the keys must come back wherever sampling
them would not read them straight back (constraints, object root motion)."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from conftest import DATA, data_file
from support import rig_factory
from rigmind.backend.requests.gesture import GestureRequest
from rigmind.backend.requests.retarget import RetargetRequest

FRAMES = 240


def _clip():
    from rigmind.backend.bvh import read_bvh

    m = read_bvh(data_file("cmu_131_start_walk_stop/131_02.bvh"))
    m.rotations, m.root_positions = m.rotations[:FRAMES], m.root_positions[:FRAMES]
    if m.translations is not None:
        m.translations = m.translations[:FRAMES]
    return m


def _rig(kind):
    import bpy

    from rigmind.operators import mannequin, rig_files

    if kind in ("mannequin", "mixed_modes"):
        arm = mannequin.build_mannequin()["armature"]
        if kind == "mixed_modes":
            # Every rotation mode the scene write converts to.
            for i, pb in enumerate(arm.pose.bones):
                pb.rotation_mode = ("QUATERNION", "XZY", "AXIS_ANGLE", "ZYX")[i % 4]
        return arm
    if kind == "transformed":
        return rig_factory.transformed_rig("fbx")[0]
    if kind == "xbot":
        xbot = DATA / "characters" / "Xbot.glb"
        if not xbot.exists():
            pytest.skip(f"{xbot} is absent (the X Bot is local data, never shipped)")
        rig_files.load_rig_file(xbot)
        return rig_files.find_armature()
    arm, _ = rig_factory.rpm_avatar()
    assert arm.type == "ARMATURE" and bpy.context.scene is not None
    return arm


def _retarget_twice(arm, tmp_path, **request):
    """The clip retargeted without keys (written from the arrays) and with
    them (the keyed action exported); both files' bytes and the first take."""
    from rigmind.backend.bone_mapping import auto_map
    from rigmind.operators import export, retarget_scene, scene_io

    motion = _clip()
    src_map = auto_map(motion.skeleton)
    take, _, _ = retarget_scene.retarget_onto(arm, motion, src_map, RetargetRequest(keyed=False, **request))
    a = export.export_written(arm, take, tmp_path / "arrays.bvh")
    action, _, _ = retarget_scene.retarget_onto(arm, motion, src_map, RetargetRequest(**request))
    if isinstance(take, scene_io.ArrayTake):
        assert action.name == take.name  # no action was made for the first
    b = export.export_written(arm, action, tmp_path / "keyed.bvh")
    return a.read_bytes(), b.read_bytes(), take


@pytest.mark.parametrize("kind", ["mannequin", "mixed_modes", "transformed", "xbot", "rpm"])
def test_retarget_bvh_from_arrays_is_the_keyed_export(bpy_clean, tmp_path, kind):
    from rigmind.operators import scene_io

    arm = _rig(kind)
    a, b, take = _retarget_twice(arm, tmp_path)
    # The glTF imports (X Bot, Ready Player Me) leave pose bones' scale a
    # hair off 1: the take is keyed and exported stepping the scene, as ever.
    assert isinstance(take, scene_io.ArrayTake) == (kind not in ("xbot", "rpm")), scene_io.pose_blocker(arm, [])
    assert a == b
    assert b"Frames: %d" % FRAMES in a


def test_keys_come_back_where_the_curves_alone_do_not_move_the_bones(bpy_clean, tmp_path):
    """Constraints move bones beyond their curves, and root motion on the
    object is an object curve: the take is keyed (and exported stepping the
    scene) as ever."""
    from rigmind.operators import scene_io

    arm = _rig("mannequin")
    a, b, take = _retarget_twice(arm, tmp_path, root_mode="object")
    assert not isinstance(take, scene_io.ArrayTake) and a == b
    arm.pose.bones[3].constraints.new("COPY_ROTATION")
    assert scene_io.pose_blocker(arm, []) == "constraints"
    a, b, take = _retarget_twice(arm, tmp_path)
    assert not isinstance(take, scene_io.ArrayTake) and a == b


def test_array_take_refuses_curves_on_other_frames():
    from rigmind.operators.scene_io import ArrayTake, array_take_blocker

    take = ArrayTake("t", 1 + np.arange(5.0))
    assert take.frame_range == (1.0, 5.0)
    with pytest.raises(ValueError):
        take.add([("pose.bones[\"a\"].location", 0, "a", np.zeros(4))], 1 + np.arange(4.0))

    class Arm:  # what array_take_blocker reads before the rig itself
        pass

    assert array_take_blocker(Arm(), np.array([1.0]), False) == "one frame"
    assert array_take_blocker(Arm(), 1 + np.arange(4) * 1.25, False) == "keys between scene frames"


def test_gesture_bvh_from_arrays_is_the_keyed_export(bpy_clean, tmp_path):
    """The gesture's body (and its eyes, keyed after the retarget) from the
    arrays: the same file as the keyed take's."""
    from rigmind.backend.face.espeak import synthesize
    from rigmind.operators import export, gesture_scene, mannequin, scene_io

    s = synthesize("We built it, we tested it, and it works.", "en-us", rate=150)
    wav = tmp_path / "talk.wav"
    sf.write(wav, s.samples, s.sample_rate, subtype="PCM_16")
    arm = mannequin.build_mannequin()["armature"]
    res_a = gesture_scene.generate_gesture_on_rig(arm, GestureRequest(audio_path=wav, keyed=False))
    assert isinstance(res_a.action, scene_io.ArrayTake)
    assert any("eye" in path.lower() for path, _ in res_a.action.curves)
    a = export.export_written(arm, res_a.action, tmp_path / "arrays.bvh")
    res_b = gesture_scene.generate_gesture_on_rig(arm, GestureRequest(audio_path=wav, add_sound=False))
    assert res_b.action.name == res_a.action.name
    b = export.export_written(arm, res_b.action, tmp_path / "keyed.bvh")
    assert a.read_bytes() == b.read_bytes()
