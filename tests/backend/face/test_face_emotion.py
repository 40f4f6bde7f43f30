"""Emotion on the face (#29): the issue's acceptance deltas on real speech,
the lip sync kept (jaw, p/b/m seals, blinks), weight 0 = neutral, timed and
keyed weights followed in time."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import data_file

from rigmind.backend.audio import load_audio
from rigmind.backend.audio.features import speech_features
from rigmind.backend.emotion.timeline import EmotionError, EmotionTimeline, parse_emotions
from rigmind.backend.face import metrics
from rigmind.backend.face.emotion import blend_emotion, tables
from rigmind.backend.face.generate import ANALYSIS_FPS, at_frames, generate_face
from rigmind.backend.options import EMOTIONS
from rigmind.presets import arkit52_names

FPS = 30.0
LJ = "speech_english_ljspeech/wavs/LJ001-0001.wav"
LJ_TEXT = ("Printing, in the only sense with which we are at present concerned, differs from most if not from all "
           "the arts and crafts represented in the Exhibition")


@pytest.fixture(scope="module")
def clip():
    return load_audio(data_file(LJ))


@pytest.fixture(scope="module")
def faces(clip):
    """Neutral and each emotion at weight 1, the learned model, one seed."""
    out = {"neutral": generate_face(clip, fps=FPS)}
    for e in EMOTIONS:
        out[e] = generate_face(clip, fps=FPS, emotion=parse_emotions([f"{e}:1"]))
    return out


def _mean(anim, *names):
    return float(np.mean([anim.curve(n).mean() for n in names]))


def _delta(faces, emotion, *names):
    return _mean(faces[emotion], *names) - _mean(faces["neutral"], *names)


def test_acceptance_deltas(faces):
    assert _delta(faces, "happy", "mouthSmileLeft", "mouthSmileRight") >= 0.2
    assert _delta(faces, "sad", "browInnerUp") >= 0.2
    assert _delta(faces, "sad", "mouthFrownLeft", "mouthFrownRight") >= 0.1
    assert _delta(faces, "angry", "browDownLeft", "browDownRight") >= 0.2
    assert _delta(faces, "surprised", "browOuterUpLeft", "browOuterUpRight") >= 0.2
    assert _delta(faces, "surprised", "eyeWideLeft", "eyeWideRight") >= 0.2


def test_jaw_still_follows_loudness(faces, clip):
    n = faces["neutral"].num_frames
    loud = at_frames(speech_features(clip, ANALYSIS_FPS).energy, n, FPS)
    r0 = metrics.pearson(faces["neutral"].curve("jawOpen"), loud)
    assert r0 > 0.3
    for e in EMOTIONS:
        assert abs(metrics.pearson(faces[e].curve("jawOpen"), loud) - r0) <= 0.1, e
        # The lip sync's own channels are not touched at all.
        np.testing.assert_array_equal(faces[e].curve("jawOpen"), faces["neutral"].curve("jawOpen"))
        np.testing.assert_array_equal(faces[e].curve("mouthClose"), faces["neutral"].curve("mouthClose"))


def test_bilabial_seals_kept_with_a_transcript(clip):
    neutral = generate_face(clip, transcript=LJ_TEXT, fps=FPS)
    closed0, total = metrics.bilabial_closure(neutral.weights, neutral.names, FPS, neutral.phones)
    assert total >= 3
    names = arkit52_names()
    openers = [names[i] for i in tables().openers]
    sealed = neutral.curve("mouthClose") >= 0.12
    assert sealed.any()
    for e in EMOTIONS:
        anim = generate_face(clip, transcript=LJ_TEXT, fps=FPS, emotion=parse_emotions([f"{e}:1"]))
        assert metrics.bilabial_closure(anim.weights, anim.names, FPS, neutral.phones) == (closed0, total), e
        # Where the lips seal, no emotion opens them further.
        for name in openers:
            assert np.all(anim.curve(name)[sealed] <= neutral.curve(name)[sealed] + 1e-6), (e, name)


def test_blinks_still_close_the_eyes(faces):
    n, s = faces["neutral"], faces["surprised"]
    blink = n.curve("eyeBlinkLeft")
    peak = blink > 0.95
    assert peak.any()
    np.testing.assert_array_less(0.95, s.curve("eyeBlinkLeft")[peak] + 1e-6)
    assert float(s.curve("eyeWideLeft")[peak].max()) <= 0.05   # the lid is not held open by the wide eye


def test_weight_zero_and_neutral_are_the_neutral_face(clip, faces):
    for texts in (["happy:0"], ["neutral"], ["sad:0@0-3"]):
        anim = generate_face(clip, fps=FPS, emotion=parse_emotions(texts))
        np.testing.assert_array_equal(anim.weights, faces["neutral"].weights)


def test_timed_emotion_follows_time(clip, faces):
    anim = generate_face(clip, fps=FPS, emotion=parse_emotions(["happy:1@3-6"]))
    smile = anim.curve("mouthSmileLeft") - faces["neutral"].curve("mouthSmileLeft")
    t = np.arange(anim.num_frames) / FPS
    assert smile[(t > 3.5) & (t < 5.5)].mean() >= 0.3
    assert np.abs(smile[t < 2.5]).max() < 1e-5 and np.abs(smile[t > 6.5]).max() < 1e-5


def test_keyed_weights_rise_with_the_keys(clip, faces):
    n = faces["neutral"].num_frames
    times = np.array([0.0, n / FPS])
    values = np.zeros((2, len(EMOTIONS)))
    values[1, EMOTIONS.index("happy")] = 1.0
    anim = generate_face(clip, fps=FPS, emotion=EmotionTimeline.sampled(times, values))
    smile = anim.curve("mouthSmileRight") - faces["neutral"].curve("mouthSmileRight")
    third = n // 3
    assert smile[:third].mean() + 0.1 < smile[third:2 * third].mean() < smile[2 * third:].mean() - 0.1


def test_expression_varies_over_time(faces):
    brow = faces["angry"].curve("browDownLeft")
    assert 0.01 < float(brow.std()) < 0.2


def test_emotion_starting_after_the_audio_is_refused(clip):
    with pytest.raises(EmotionError, match=r"after the audio ends \(\d+\.\d+ s long\)"):
        generate_face(clip, fps=FPS, emotion=parse_emotions(["sad:1@30-40"]))
    # One that only ends after it is clipped.
    generate_face(clip, fps=FPS, emotion=parse_emotions(["sad:1@2-40"]))


def test_blend_keeps_range_and_lip_channels():
    rng = np.random.default_rng(0)
    base = rng.uniform(0, 1, (50, 52)).astype(np.float32)
    out = blend_emotion(base, np.ones((50, len(EMOTIONS)), np.float32), FPS, stress=rng.uniform(0, 1, 50))
    assert out.min() >= 0 and out.max() <= 1
    names = arkit52_names()
    for name in ("jawOpen", "mouthClose"):
        np.testing.assert_array_equal(out[:, names.index(name)], base[:, names.index(name)])
    t = tables()
    assert t.targets[:, [names.index("jawOpen"), names.index("mouthClose")]].max() == 0


def test_a_sad_smile_is_a_smaller_smile_not_a_closed_mouth(clip):
    smiling = generate_face(clip, fps=FPS, smile=0.8)
    sad = generate_face(clip, fps=FPS, smile=0.8, emotion=parse_emotions(["sad:1"]))
    s0, s1 = smiling.curve("mouthSmileLeft").mean(), sad.curve("mouthSmileLeft").mean()
    assert 0.2 * s0 < s1 < 0.85 * s0
    np.testing.assert_array_equal(sad.curve("jawOpen"), smiling.curve("jawOpen"))
