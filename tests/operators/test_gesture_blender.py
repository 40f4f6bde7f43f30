"""Generate Gesture in real Blender: the operator on the mannequin (new
action, sound strip in sync, fps, nothing lost), layering over a walk's legs,
bad audio in the report bar, our EMAGE-schema take landing on the Ready
Player Me avatar and a Rigify rig with the hands clear of the torso, and the
`rigmind gesture` CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import call_as_panel
import soundfile as sf

from support import rig_factory
from rigmind.backend.requests.gesture import GestureRequest
from rigmind.backend.requests.walk import WalkCycleRequest

RIGMIND = Path(sys.executable).parent / "rigmind"


@pytest.fixture(scope="module")
def speech_wav(tmp_path_factory):
    from rigmind.backend.face.espeak import synthesize

    s = synthesize("So here is the thing. We built it, we tested it, and it works.", "en-us", rate=150)
    path = tmp_path_factory.mktemp("speech") / "talk.wav"
    sf.write(path, s.samples, s.sample_rate, subtype="PCM_16")
    return path


@pytest.fixture
def mannequin(bpy_clean):
    import rigmind
    from rigmind.operators import mannequin

    rigmind.register()
    yield mannequin.build_mannequin()
    rigmind.unregister()


def test_operator_on_mannequin(mannequin, speech_wav):
    import bpy

    arm, head = mannequin["armature"], mannequin["head"]
    s = bpy.context.scene.rigmind
    s.target_armature = arm
    s.audio_path = str(speech_wav)
    s.face_mesh = head
    s.start_frame = 11
    s.seed = 2
    bpy.context.scene.render.fps = 24
    assert call_as_panel("rigmind.generate_gesture") == {"FINISHED"}
    action = arm.animation_data.action
    assert action.name.startswith("RigMind Gesture · talk")
    scene = bpy.context.scene
    # The scene keeps its 24 fps (Set Scene FPS is off by default) and its
    # range grows to cover the take.
    assert scene.render.fps == 24
    assert scene.frame_start <= 11 and scene.frame_end >= int(action.frame_range[1])
    strips = [st for st in scene.sequence_editor.strips_all if st.type == "SOUND"]
    assert len(strips) == 1 and strips[0].frame_start == 11
    assert action.frame_range[0] == pytest.approx(11)
    secs = sf.info(speech_wav).duration
    assert action.frame_range[1] - action.frame_range[0] == pytest.approx((np.ceil(secs * 30) - 1) * 24 / 30, abs=1)
    # the face came along, on the Key datablock
    assert head.data.shape_keys.animation_data.action is not None
    # a second take is a new action; the first is kept
    s.seed = 3
    assert call_as_panel("rigmind.generate_gesture") == {"FINISHED"}
    assert arm.animation_data.action != action and action.name in bpy.data.actions
    assert len([st for st in scene.sequence_editor.strips_all if st.type == "SOUND"]) == 1


def test_operator_uses_scene_sound_strip(mannequin, speech_wav):
    import bpy

    arm = mannequin["armature"]
    scene = bpy.context.scene
    se = scene.sequence_editor_create()
    se.strips.new_sound(name="vo", filepath=str(speech_wav), channel=2, frame_start=40)
    scene.rigmind.target_armature = arm
    scene.rigmind.audio_path = ""
    assert call_as_panel("rigmind.generate_gesture") == {"FINISHED"}
    assert arm.animation_data.action.frame_range[0] == pytest.approx(40)
    assert len([st for st in se.strips_all if st.type == "SOUND"]) == 1


def test_bad_audio_reports(mannequin, tmp_path):
    import bpy

    bad = tmp_path / "broken.wav"
    bad.write_bytes(b"not audio at all" * 10)
    s = bpy.context.scene.rigmind
    s.target_armature = mannequin["armature"]
    s.audio_path = str(bad)
    with pytest.raises(RuntimeError, match="cannot decode audio file broken.wav"):
        call_as_panel("rigmind.generate_gesture")
    assert mannequin["armature"].animation_data is None or mannequin["armature"].animation_data.action is None


def test_keep_legs_layers_over_walk(mannequin, speech_wav):
    """Gesture over a walk: the walk's hips/legs stay (NLA underneath), the
    upper body is the gesture's."""
    import bpy

    from rigmind.operators import gesture_scene, locomotion_scene, retarget_scene

    arm = mannequin["armature"]
    walk = locomotion_scene.bake_walk_cycle(arm, WalkCycleRequest(style="normal", gait="walk", speed=1.3, in_place=False))
    legs = ["LeftUpLeg", "LeftLeg", "RightFoot", "Hips"]
    frames = np.arange(1, 20, 3)
    before = retarget_scene.sample_positions_world(arm, {b: b for b in legs + ["LeftHand"]}, frames)
    res = gesture_scene.generate_gesture_on_rig(arm, GestureRequest(audio_path=speech_wav, base="keep_legs", seed=0))
    bag_paths = {fc.data_path for fc in res.action.layers[0].strips[0].channelbags[0].fcurves}
    assert not any("LeftUpLeg" in p or '"Hips"' in p for p in bag_paths)
    assert any("LeftArm" in p for p in bag_paths)
    after = retarget_scene.sample_positions_world(arm, {b: b for b in legs + ["LeftHand"]}, frames)
    for b in legs:
        assert np.abs(after[b] - before[b]).max() < 1e-4, f"{b} should still follow the walk"
    assert np.abs(after["LeftHand"] - before["LeftHand"]).max() > 0.02
    assert walk.name in bpy.data.actions
    # The walk cycle keeps walking for the whole take (past its own length).
    a, b = walk.frame_range
    late = np.arange(int(b) + 5, int(res.action.frame_range[1]), 2)
    feet = retarget_scene.sample_positions_world(arm, {"LeftFoot": "LeftFoot"}, late)
    assert np.ptp(feet["LeftFoot"][:, 1]) > 0.3, "the legs should keep walking after one cycle"


@pytest.mark.parametrize("rig_name", ["rpm_avatar", "rigify"])
def test_our_npz_lands_with_hands_clear_of_torso(bpy_clean, tmp_path, rig_name):
    """Our EMAGE-schema take → `Retarget Motion`'s npz path → RPM / Rigify;
    the hands never come within 12% of leg length of the torso axis."""
    from rigmind.backend import retarget_metrics
    from rigmind.backend.audio import load_audio
    from rigmind.backend.gesture.generate import generate_gesture
    from rigmind.operators import gesture_scene, retarget_scene

    wav = Path(rig_factory.data_file("beat2_speech_gesture_sample/2_scott_0_2_2.wav"))
    clip = load_audio(wav)
    clip.samples = clip.samples[: 16000 * 20]
    take = gesture_scene.write_npz(tmp_path / "ours.npz", generate_gesture(clip, seed=4))
    motion, smap = retarget_scene.load_source(take)
    maker = dict(rig_factory.ALL_RIGS)[rig_name]
    arm, truth = maker()
    action, tmap, _ = retarget_scene.retarget_onto(arm, motion, smap)
    bones = {c: tmap.bones[c] for c in ("hips", "neck", "head", "hand_l", "hand_r", "upperleg_l", "lowerleg_l",
                                        "foot_l", "upperleg_r", "lowerleg_r", "foot_r") if c in tmap.bones}
    tgt = retarget_scene.sample_positions_world(arm, bones, np.arange(1, motion.num_frames, 3))
    rest = retarget_scene.rest_positions_world(arm, bones)
    clearance = retarget_metrics.hand_torso_clearance(tgt, rest)
    assert np.isfinite(clearance).all()
    assert clearance.min() > retarget_metrics.TORSO_RADIUS, f"a hand comes within {100 * clearance.min():.0f}% leg length of the torso"


def test_cli_gesture(tmp_path, speech_wav):
    from rigmind.operators import mannequin

    blend = tmp_path / "mannequin.blend"
    r = subprocess.run([str(RIGMIND), "mannequin", "--out", str(blend)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "talk.glb"
    r = subprocess.run([str(RIGMIND), "gesture", "--audio", str(speech_wav), "--rig", str(blend), "--face", "auto",
                        "--amount", "0.7", "--seed", "5", "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert out.stat().st_size > 10_000 and "RigMind Gesture" in r.stdout
    npz = tmp_path / "take.npz"
    r = subprocess.run([str(RIGMIND), "gesture", "--audio", str(speech_wav), "--out", str(npz)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert np.load(npz)["poses"].shape[1] == 165
    r = subprocess.run([str(RIGMIND), "gesture", "--audio", str(tmp_path / "nope.wav"), "--out", str(npz)],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "audio file not found" in r.stderr
    del mannequin


def test_modal_job_cancel_leaves_scene_unchanged(mannequin, speech_wav):
    """Esc in the modal operator closes the job: the worker stops and nothing
    is written (no action, no sound strip)."""
    import bpy

    from rigmind.operators import gesture_scene

    arm = mannequin["armature"]
    actions = set(bpy.data.actions.keys())
    job = gesture_scene.gesture_job(arm, GestureRequest(audio_path=speech_wav, seed=1))
    next(job)
    job.close()
    assert set(bpy.data.actions.keys()) == actions
    se = bpy.context.scene.sequence_editor
    assert se is None or not any(st.type == "SOUND" for st in se.strips_all)
    # and run to the end, the job writes the take
    job = gesture_scene.gesture_job(arm, GestureRequest(audio_path=speech_wav, seed=1))
    try:
        while True:
            next(job)
    except StopIteration as done:
        result = done.value
    assert result.action.name in bpy.data.actions and result.frames > 30


def test_non_humanoid_rig_is_refused(mannequin, speech_wav):
    """A 3-bone chain is not a character: a clear message, nothing written."""
    import bpy

    arm_data = bpy.data.armatures.new("Chain")
    arm = bpy.data.objects.new("Chain", arm_data)
    bpy.context.scene.collection.objects.link(arm)
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="EDIT")
    parent = None
    for k in range(3):
        b = arm_data.edit_bones.new(f"b{k}")
        b.head, b.tail = (0, 0, k * 0.3), (0, 0, (k + 1) * 0.3)
        b.parent = parent
        parent = b
    bpy.ops.object.mode_set(mode="OBJECT")
    s = bpy.context.scene.rigmind
    s.target_armature = arm
    s.audio_path = str(speech_wav)
    bpy.context.scene.render.fps = 24
    with pytest.raises(RuntimeError, match="humanoid"):
        call_as_panel("rigmind.generate_gesture")
    assert arm.animation_data is None or arm.animation_data.action is None
    se = bpy.context.scene.sequence_editor
    assert bpy.context.scene.render.fps == 24
    assert se is None or not any(st.type == "SOUND" for st in se.strips_all)
