"""Emotion weights as keyable scene properties (#29), in real Blender: keys
on ``scene.rigmind.emotion_happy`` drive the face Generate Face writes, in
time; unkeyed weights are constant; a bad curve is an ERROR report."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import call_as_panel, data_file

from rigmind.backend.options import EMOTIONS

WAV = "speech_english_ljspeech/wavs/LJ001-0001.wav"


def _smile_curve(mesh):
    act = mesh.data.shape_keys.animation_data.action
    fcs = act.layers[0].strips[0].channelbags[0].fcurves
    return next(fc for fc in fcs if fc.data_path == 'key_blocks["mouthSmileLeft"].value')


def _key(scene, name, frame, value):
    setattr(scene.rigmind, f"emotion_{name}", value)
    scene.keyframe_insert(f'rigmind.emotion_{name}', frame=frame)


def test_keyed_happy_rises_and_the_smile_follows(registered):
    bpy = registered
    bpy.ops.rigmind.add_mannequin()
    scene = bpy.context.scene
    s = scene.rigmind
    s.audio_path = str(data_file(WAV))
    s.start_frame = 1
    fps = scene.render.fps / scene.render.fps_base
    last = int(9.5 * fps)
    _key(scene, "happy", 1, 0.0)
    _key(scene, "happy", last, 1.0)
    assert call_as_panel("rigmind.generate_face") == {"FINISHED"}
    smile = np.array([_smile_curve(s.face_mesh).evaluate(f) for f in range(1, last)])
    weight = np.array([scene.animation_data.action.layers[0].strips[0].channelbags[0].fcurves[0].evaluate(f)
                       for f in range(1, last)])
    third = len(smile) // 3
    assert smile[:third].mean() + 0.15 < smile[2 * third:].mean()
    assert np.corrcoef(smile, weight)[0, 1] > 0.7


def test_unkeyed_weights_are_constant_and_zero_is_neutral(registered):
    bpy = registered
    from rigmind.operators.emotion_keys import scene_emotion

    scene = bpy.context.scene
    assert scene_emotion(scene, 1, 24.0) is None
    scene.rigmind.emotion_sad = 0.6
    w = scene_emotion(scene, 1, 24.0).weights(48, 24.0)
    assert np.allclose(w[:, EMOTIONS.index("sad")], 0.6) and np.allclose(np.delete(w, EMOTIONS.index("sad"), 1), 0)
    # A key on another weight: sampled in seconds from the take's first frame.
    _key(scene, "angry", 25, 0.0)
    _key(scene, "angry", 49, 1.0)
    w = scene_emotion(scene, 25, 24.0).weights(48, 24.0)
    assert w[0, EMOTIONS.index("angry")] == pytest.approx(0.0, abs=1e-6)
    assert w[-1, EMOTIONS.index("angry")] == pytest.approx(1.0, abs=0.05)
    assert np.allclose(w[:, EMOTIONS.index("sad")], 0.6)


def test_weight_outside_0_1_cannot_be_set(registered):
    s = registered.context.scene.rigmind
    s.emotion_happy = 2.0
    assert s.emotion_happy == 1.0
    prop = type(s).bl_rna.properties["emotion_happy"]
    assert prop.is_animatable and prop.hard_min == 0.0 and prop.hard_max == 1.0


def test_a_broken_curve_is_an_error_report(registered):
    bpy = registered
    bpy.ops.rigmind.add_mannequin()
    scene = bpy.context.scene
    scene.rigmind.audio_path = str(data_file(WAV))
    _key(scene, "happy", 1, 0.5)
    fc = scene.animation_data.action.layers[0].strips[0].channelbags[0].fcurves[0]
    fc.keyframe_points[0].co = (1.0, float("nan"))
    fc.update()
    with pytest.raises(RuntimeError) as err:
        call_as_panel("rigmind.generate_face")
    assert "Traceback" not in str(err.value) and "between 0 and 1" in str(err.value)


def test_generate_gesture_face_follows_keyed_anger(registered):
    bpy = registered
    from rigmind.operators import mannequin

    parts = mannequin.build_mannequin()
    scene = bpy.context.scene
    s = scene.rigmind
    s.target_armature, s.face_mesh, s.face_auto = parts["armature"], parts["head"], False
    s.audio_path = str(data_file(WAV))
    _key(scene, "angry", 1, 0.0)
    _key(scene, "angry", 60, 1.0)
    assert call_as_panel("rigmind.generate_gesture") == {"FINISHED"}
    act = parts["head"].data.shape_keys.animation_data.action
    fc = next(fc for fc in act.layers[0].strips[0].channelbags[0].fcurves if "browDownLeft" in fc.data_path)
    early = np.mean([fc.evaluate(f) for f in range(1, 10)])
    late = np.mean([fc.evaluate(f) for f in range(60, 120)])
    assert late > early + 0.3
