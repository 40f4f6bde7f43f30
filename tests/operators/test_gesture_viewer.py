"""Generate Gesture as a viewer sees it (issue #13), measured on baked rigs in
real Blender: planted feet and real steps, a live first frame, no seams,
Keep Legs keeping the walk's trunk, eyes that look, hands in gesture space.
Short takes; the full figures come from `rigmind eval gesture --viewer`."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from support import rig_factory
from conftest import data_file
from rigmind.backend.gesture import viewer_metrics
from rigmind.backend.requests.gesture import GestureRequest
from rigmind.backend.requests.retarget import RetargetRequest
from rigmind.backend.requests.walk import WalkCycleRequest


@pytest.fixture(scope="module")
def speech_20s(tmp_path_factory):
    """~20 s of synthetic English speech (eSpeak NG), pauses included."""
    from rigmind.backend.face.espeak import synthesize

    s = synthesize("So here is the thing. We built it, we tested it, and it works. "
                   "Nobody believed us at first, but every single day it got a little better.", "en-us", rate=150)
    pause = np.zeros(int(0.6 * s.sample_rate), np.float32)
    x = np.concatenate([s.samples, pause] * 3)[: 20 * s.sample_rate]
    path = tmp_path_factory.mktemp("speech") / "talk20.wav"
    sf.write(path, x, s.sample_rate, subtype="PCM_16")
    return path


def _mannequin():
    from rigmind.operators import mannequin

    return mannequin.build_mannequin()["armature"]


def _sample(arm, frames):
    from rigmind.operators.retarget_scene import sample_positions_world, target_mapping

    tgt = target_mapping(arm)
    bones = {c: b for c, b in tgt.bones.items() if b in arm.pose.bones}
    return sample_positions_world(arm, bones, frames)


@pytest.fixture(scope="module")
def idle_take(speech_20s):
    """The mannequin with a 20-s Idle take, sampled from the evaluated scene."""
    import bpy

    from rigmind.operators import gesture_scene

    bpy.ops.wm.read_factory_settings(use_empty=True)
    arm = _mannequin()
    res = gesture_scene.generate_gesture_on_rig(arm, GestureRequest(audio_path=speech_20s, seed=3))
    return arm, res, _sample(arm, range(1, res.frames + 1))


def test_standing_feet_stay_planted_on_the_rig(idle_take):
    """No skate, and the feet are on the floor (not held up in the air,
    which the height-weighted skate would not see)."""
    from rigmind.operators.retarget_scene import rest_positions_world, target_mapping

    arm, _, pos = idle_take
    ank = np.stack([pos["foot_l"], pos["foot_r"]], axis=1)
    assert viewer_metrics.standing_foot_skate(ank) <= 0.15
    tgt = target_mapping(arm)
    rest = rest_positions_world(arm, {c: tgt.get(c) for c in ("foot_l", "foot_r")})
    assert viewer_metrics.foot_hover(ank, [rest["foot_l"][2], rest["foot_r"][2]]) <= 1.5


def test_a_drift_becomes_a_lifted_step():
    """The model's feet dragged 45 cm sideways over 6 s: the planted feet
    do not slide along; each foot lifts (> 3 cm) and lands elsewhere."""
    from rigmind.backend.gesture import representation
    from rigmind.backend.gesture.generate import get_model
    from rigmind.backend.gesture.standing import plant_feet
    from rigmind.backend.smplx_motion import smplx_joint_names

    model = get_model()
    poses = np.repeat(model.start_poses[:1], 180, axis=0)
    m = representation.decode(poses, 30.0, model.finger_basis)
    m.root_positions[:, 0] += np.linspace(0.0, 0.45, 180)
    names = list(smplx_joint_names())
    ix = [names.index("left_ankle"), names.index("right_ankle")]
    before = m.world_positions()[:, ix]
    planted = plant_feet(m).world_positions()[:, ix]
    assert viewer_metrics.standing_foot_skate(before) > 0.2
    assert viewer_metrics.standing_foot_skate(planted) <= 0.15
    lift = planted[..., 2] - planted[:1, :, 2]
    assert (lift.max(axis=0) > 0.03).all(), "each foot should lift to step"
    assert (np.abs(planted[-1, :, 0] - planted[0, :, 0]) > 0.3).all(), "the feet should follow the body by stepping"


def test_a_sway_is_not_a_drift_to_step_for():
    """A pelvis swaying ±13 cm at 0.5 Hz over still feet: planned on the
    swayed take the feet step after it (the sway reads as a drift), planned
    on the take before the sway (what generation does after the settling
    layer) they stay where they are."""
    from rigmind.backend.gesture import representation
    from rigmind.backend.gesture.generate import get_model
    from rigmind.backend.gesture.standing import plant_feet
    from rigmind.backend.smplx_motion import smplx_joint_names

    model = get_model()
    poses = np.repeat(model.start_poses[:1], 240, axis=0)
    still = representation.decode(poses, 30.0, model.finger_basis)
    swayed = representation.decode(poses, 30.0, model.finger_basis)
    swayed.root_positions[:, 0] += 0.13 * np.sin(2 * np.pi * 0.5 * np.arange(240) / 30.0)
    names = list(smplx_joint_names())
    ix = [names.index("left_ankle"), names.index("right_ankle")]

    def travel(m):  # how far each foot moves along the sway (m), and the skate
        p = m.world_positions()[:, ix]
        return np.ptp(p[..., 0], axis=0).max(), viewer_metrics.standing_foot_skate(p)

    stepped, skate_stepped = travel(plant_feet(swayed))
    kept, skate_kept = travel(plant_feet(swayed, steps_from=still))
    assert stepped > 0.15 and kept < 0.03
    assert skate_kept < 0.5 * skate_stepped
    same = plant_feet(still, steps_from=still).world_positions()
    np.testing.assert_allclose(same, plant_feet(still).world_positions(), atol=1e-9)


def test_alive_from_the_first_frame(idle_take):
    _, _, pos = idle_take
    allj = np.stack(list(pos.values()), axis=1)
    assert viewer_metrics.longest_frozen_stretch(allj) <= 5
    # the first half second already moves (breathing/sway, not a held pose)
    assert np.linalg.norm(np.diff(allj[:15], axis=0), axis=-1).max() > 1e-3


def test_no_periodic_hitch_at_window_joins(idle_take):
    from rigmind.backend.gesture.generate import STRIDE

    _, _, pos = idle_take
    up = np.stack([pos[c] for c in ("spine", "chest", "neck", "head", "upperarm_l", "upperarm_r", "lowerarm_l",
                                    "lowerarm_r", "hand_l", "hand_r") if c in pos], axis=1)
    assert viewer_metrics.seam_periodicity(up, STRIDE) <= 2.0
    assert viewer_metrics.seam_periodicity(up, 48) <= 2.0


def test_hands_rise_with_amount(speech_20s):
    """Wrist height during speech grows with `amount` (0 → none of the lift)."""
    import bpy

    from rigmind.operators import gesture_scene

    bpy.ops.wm.read_factory_settings(use_empty=True)
    arm = _mannequin()
    heights = []
    for amount in (0.0, 1.0):
        res = gesture_scene.generate_gesture_on_rig(arm, GestureRequest(audio_path=speech_20s, seed=3, amount=amount))
        pos = _sample(arm, range(1, res.frames + 1, 3))
        heights.append(np.percentile(np.r_[pos["hand_l"][:, 2], pos["hand_r"][:, 2]], 90))
    assert heights[1] > heights[0] + 0.05


def test_stress_moves_the_hands_forward_and_up_on_the_rig(speech_20s):
    """The lift on a 10-s take, baked onto the mannequin: frames with stress
    1 get their wrists raised and moved forward (in the rig's body frame)
    more than unstressed frames do; the hands stay clear of the torso, the
    arms do not pop; and amount 0 bakes exactly the unlifted motion."""
    import bpy

    from rigmind.backend import retarget_metrics
    from rigmind.backend.audio import load_audio
    from rigmind.backend.audio.features import speech_features
    from rigmind.backend.gesture.generate import FPS, get_model, standing_gesture
    from rigmind.backend.gesture.gesture_space import lift_hands
    from rigmind.operators import gesture_scene
    from rigmind.operators.retarget_scene import rest_positions_world, retarget_onto, target_mapping

    clip = load_audio(speech_20s)
    clip.samples = clip.samples[: 10 * clip.sample_rate]
    res, _ = standing_gesture(get_model(), speech_features(clip, FPS), seed=2)
    T = res.motion.num_frames
    stress = (np.arange(T) >= T // 2).astype(np.float64)  # the second half stressed
    bpy.ops.wm.read_factory_settings(use_empty=True)
    arm = _mannequin()
    tgt = target_mapping(arm)

    def baked(motion):
        retarget_onto(arm, motion, gesture_scene.smplx_source_map(), RetargetRequest(root_mode="hips", ik=True), tgt_map=tgt)
        return _sample(arm, range(1, T + 1))

    base = baked(res.motion)
    lifted = baked(lift_hands(res.motion, stress, 0.5))
    same = baked(lift_hands(res.motion, stress, 0.0))
    for c in base:
        np.testing.assert_allclose(same[c], base[c], atol=1e-6)

    def hand_space(p):
        fwd = viewer_metrics.facing(p["upperleg_l"], p["upperleg_r"])
        return viewer_metrics.hand_space(np.stack([p["hand_l"], p["hand_r"]], axis=1), p["hips"], fwd, 0.0).reshape(T, 2, 2)

    move = hand_space(lifted) - hand_space(base)       # [T, wrist, (height, forward)]
    calm = move[T // 8: T // 2 - 15].mean(axis=(0, 1))  # away from the ends and the step's smoothing
    stressed = move[T // 2 + 15: T - T // 8].mean(axis=(0, 1))
    assert stressed[0] > calm[0] + 0.05, f"wrists should rise with stress: {stressed} vs {calm}"
    assert stressed[1] > calm[1] + 0.03, f"wrists should move forward with stress: {stressed} vs {calm}"
    assert stressed[0] > 0.03 and stressed[1] > 0.0
    rest = rest_positions_world(arm, {c: tgt.bones[c] for c in ("hips", "neck", "hand_l", "hand_r", "upperleg_l",
                                                               "lowerleg_l", "foot_l", "upperleg_r", "lowerleg_r",
                                                               "foot_r")})
    assert retarget_metrics.hand_torso_clearance(lifted, rest).min() > retarget_metrics.TORSO_RADIUS
    # No pops: the arms accelerate no harder than the model's own gestures do.
    arms = lambda p: np.stack([p[c] for c in ("lowerarm_l", "lowerarm_r", "hand_l", "hand_r")], axis=1)  # noqa: E731
    assert viewer_metrics.largest_acceleration(arms(lifted)) < 1.5 * viewer_metrics.largest_acceleration(arms(base)) + 5.0


def test_hand_space_closer_to_the_real_take():
    """On the paired speaker's own speech, the lifted hands' height
    distribution is nearer the real take's than without the lift."""
    from rigmind.backend.audio import load_audio
    from rigmind.backend.gesture import representation
    from rigmind.backend.gesture.generate import generate_gesture
    from rigmind.backend.smplx_motion import read_smplx_npz, smplx_joint_names

    npz = data_file("beat2_speech_gesture_sample/2_scott_0_1_1.npz")
    wav = npz.with_suffix(".wav")
    names = list(smplx_joint_names())
    ix = names.index

    def hs(p):
        fwd = viewer_metrics.facing(p[:, ix("left_hip")], p[:, ix("right_hip")])
        floor = np.percentile(p[:, [ix("left_ankle"), ix("right_ankle")], 2], 1)
        return viewer_metrics.hand_space(p[:, [ix("left_wrist"), ix("right_wrist")]], p[:, 0], fwd, floor)

    ref = hs(read_smplx_npz(npz).world_positions())
    clip = load_audio(wav)
    lifted = generate_gesture(clip, seed=1, amount=0.5)
    flat = generate_gesture(clip, seed=1, amount=0.0)
    assert representation.POSE_DIM
    d1 = viewer_metrics.hand_space_distance(hs(lifted.motion.world_positions()), ref)["sum_cm"]
    d0 = viewer_metrics.hand_space_distance(hs(flat.motion.world_positions()), ref)["sum_cm"]
    assert d1 < d0


def test_keep_legs_keeps_the_walks_trunk(speech_20s):
    import bpy

    from rigmind.operators import gesture_scene, locomotion_scene

    bpy.ops.wm.read_factory_settings(use_empty=True)
    arm = _mannequin()
    walk = locomotion_scene.bake_walk_cycle(arm, WalkCycleRequest(style="normal", gait="walk", speed=1.3, in_place=False))
    wpos = _sample(arm, range(1, int(walk.frame_range[1]) + 1))
    walk_lean = viewer_metrics.trunk_lean(wpos["hips"], wpos["neck"], viewer_metrics.facing(wpos["upperleg_l"], wpos["upperleg_r"])).mean()
    res = gesture_scene.generate_gesture_on_rig(arm, GestureRequest(audio_path=speech_20s, seed=0, base="keep_legs"))
    kpos = _sample(arm, range(1, res.frames + 1, 2))
    lean = viewer_metrics.trunk_lean(kpos["hips"], kpos["neck"], viewer_metrics.facing(kpos["upperleg_l"], kpos["upperleg_r"]))
    assert abs(lean.mean() - walk_lean) <= 5.0
    # the upper body still gestures
    assert np.ptp(kpos["hand_l"][:, 2]) > 0.05


def test_gaze_timing_is_natural():
    """Fixations of a few hundred ms, 2-4 saccades per second, saccades
    within two frames, the gaze coming back to the listener."""
    from rigmind.backend.face.gaze import gaze_angles

    g = gaze_angles(60 * 30, 30.0, seed=2)
    st = viewer_metrics.gaze_statistics(g, 30.0)
    assert 200 <= st["fixation_ms_median"] <= 450
    assert 2.0 <= st["saccades_per_s"] <= 4.0
    assert st["saccade_ms_median"] <= 70
    near = np.degrees(np.linalg.norm(g, axis=1)) < 4.0
    assert 0.4 < near.mean() < 0.85


def test_eyes_look_on_the_rpm_avatar(bpy_clean, speech_20s):
    """Ready Player Me: eyeLook* shape keys move and the eye bones are keyed
    and turn; blinks still come from the face."""
    import bpy

    from rigmind.operators import gesture_scene

    arm, _ = rig_factory.rpm_avatar()
    meshes = [o for o in bpy.data.objects if o.type == "MESH" and o.data.shape_keys is not None
              and any(k.name == "eyeLookInLeft" for k in o.data.shape_keys.key_blocks)]
    face = max(meshes, key=lambda o: len(o.data.vertices))
    res = gesture_scene.generate_gesture_on_rig(arm, GestureRequest(audio_path=speech_20s, seed=1, face_mesh=face.name, face_method="words"), face)
    eye_paths = [fc.data_path for fc in res.action.layers[0].strips[0].channelbags[0].fcurves if "Eye" in fc.data_path]
    assert any("LeftEye" in p for p in eye_paths) and any("RightEye" in p for p in eye_paths)
    w = res.face.animation.weights
    names = list(res.face.animation.names)
    look = np.stack([w[:, names.index(n)] for n in names if n.startswith("eyeLook")], axis=1)
    assert look.max() > 0.15
    assert w[:, names.index("eyeBlinkLeft")].max() > 0.5
    scene = bpy.context.scene
    d = []
    for f in range(1, res.frames, 5):
        scene.frame_set(f)
        head = np.array(arm.pose.bones["Head"].matrix)[:3, :3]
        eye = np.array(arm.pose.bones["LeftEye"].matrix)[:3, :3]
        d.append(np.linalg.inv(head) @ eye[:, 1])
    d = np.array(d)
    spread = np.degrees(np.arccos(np.clip(d @ d.mean(axis=0) / np.linalg.norm(d.mean(axis=0)), -1, 1)))
    assert spread.max() > 5.0


def test_eval_viewer_command(tmp_path, data_dir):
    """`rigmind eval gesture --viewer` on one rig and one language: a real
    reference row and our row with every viewer metric."""
    import json

    from rigmind.evaluation.gesture_viewer import main_viewer_eval

    out = tmp_path / "viewer.json"
    assert main_viewer_eval(["--data", str(data_dir), "--rigs", "mannequin", "--langs", "silero_de.wav",
                             "--seconds", "6", "--no-keep-legs", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert [r["take"] for r in rows] == ["real BEAT2 (reference)", "silero_de.wav"]
    ours = rows[1]
    for k in ("skate_cm_per_frame", "foot_hover_cm", "frozen_frames", "seam48", "seam32", "hands_sum_cm"):
        assert np.isfinite(ours[k]) or k.startswith("seam")
    assert ours["skate_cm_per_frame"] <= 0.15 and ours["frozen_frames"] <= 5


def test_clip_wav_cuts_a_copy_and_never_the_speech_file(tmp_path):
    """`--langs` takes paths too: the cut speech goes into the temporary
    folder under the file's name, the given file is only read (an absolute
    path joined onto the temporary folder used to name the file itself)."""
    import soundfile as sf

    from rigmind.evaluation.gesture_viewer import clip_wav

    src_dir, tmp = tmp_path / "data", tmp_path / "tmp"
    src_dir.mkdir()
    tmp.mkdir()
    src = src_dir / "take.wav"
    sf.write(src, np.linspace(-0.5, 0.5, 16000 * 3, dtype=np.float32), 16000)
    before = src.read_bytes()
    out = clip_wav(src.resolve(), 1.0, tmp)
    assert out == tmp / "take.wav" and sf.info(out).frames == 16000
    assert src.read_bytes() == before
    assert clip_wav(src, 1.0, tmp, "kl.wav") == tmp / "kl.wav"
    with pytest.raises(ValueError, match="in place"):
        clip_wav(src, 1.0, src_dir)
