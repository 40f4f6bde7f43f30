"""The gesture style layer (issue #29): emotions and styles move the body's
energy, speed and posture without touching its timing; the style
classifier and the style clip."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import DATA

from rigmind.backend.emotion.timeline import parse_emotions
from rigmind.backend.gesture import style_features as sf
from rigmind.backend.gesture.style_layer import BodyStyle, StyleError, apply_layer, check_style, style_motion
from rigmind.backend.gesture.style_take import style_take
from rigmind.backend.motion import Motion
from rigmind.backend import rotations
from rigmind.backend.gesture.representation import names, standing_root
from rigmind.backend.smplx_motion import smplx_rest_skeleton

BANDAI_D2 = DATA / "bandai_namco_d2_hand_gestures" / "bvh"


def _talking_motion(seconds=8.0, seed=0) -> Motion:
    """SMPL-X motion with the arms down and the upper body swinging at
    speech-like rates (0.5-3 Hz), the legs at rest."""
    rng = np.random.default_rng(seed)
    T = int(seconds * 30)
    t = np.arange(T) / 30.0
    sk = smplx_rest_skeleton()
    aa = np.zeros((T, len(sk.names), 3))
    n = list(names())
    aa[:, n.index("left_shoulder"), 2] = -1.2     # arms down from the T pose
    aa[:, n.index("right_shoulder"), 2] = 1.2
    for j in sf.MOVING:
        for f in (0.6, 1.3, 2.7):
            aa[:, n.index(j)] += 0.08 * np.sin(2 * np.pi * f * t[:, None] + rng.uniform(0, 6, 3))
    return Motion(sk, rotations.from_axis_angle(aa), np.tile(standing_root(), (T, 1)), 30.0)


def _wrists(m: Motion):
    p = m.world_positions()[:, [names().index("left_wrist"), names().index("right_wrist")]]
    return np.linalg.norm(np.diff(p, axis=0), axis=-1).mean() * m.fps, float(np.median(p[..., 2]))


def test_zero_weights_leave_the_take_as_it_is():
    m = _talking_motion()
    assert style_take(m, BodyStyle(emotion=parse_emotions(["happy:0", "sad:0@0-3"]))) is m
    T = m.num_frames
    same = apply_layer(m, np.zeros((T, len(sf.POSTURE), 3)), np.zeros(T), np.zeros(T))
    assert np.allclose(rotations.canonical(same.rotations), rotations.canonical(m.rotations), atol=1e-6)


def test_happy_is_faster_sad_slower_and_lower():
    m = _talking_motion()
    speed, _ = _wrists(m)
    happy_speed, happy_h = _wrists(style_motion(m, BodyStyle(emotion=parse_emotions(["happy:1"]))))
    sad_speed, sad_h = _wrists(style_motion(m, BodyStyle(emotion=parse_emotions(["sad:1"]))))
    assert happy_speed >= 1.1 * speed
    assert sad_speed <= 0.9 * speed
    assert sad_h < happy_h


def test_layer_keeps_the_legs_and_the_root():
    m = _talking_motion()
    out = style_motion(m, BodyStyle(emotion=parse_emotions(["angry:1"]), style="old"))
    legs = [names().index(j) for j in ("left_hip", "right_hip", "left_knee", "right_knee", "left_ankle", "right_ankle")]
    assert np.allclose(out.rotations[:, legs], m.rotations[:, legs])
    assert np.allclose(out.root_positions, m.root_positions)


def test_unknown_style_is_one_line():
    assert check_style("Old") == "old"
    with pytest.raises(StyleError) as e:
        check_style("wobbly")
    assert "\n" not in str(e.value) and "choose from" in str(e.value)


def test_too_short_style_clip_is_refused():
    from rigmind.backend.bone_mapping import auto_map
    from rigmind.backend.gesture.style_clip import clip_style

    m = _talking_motion(seconds=0.5)
    with pytest.raises(StyleError) as e:
        clip_style(m, auto_map(m.skeleton).bones, "short.npz")
    assert "\n" not in str(e.value)


def test_style_clip_pulls_the_hands_to_its_distributions():
    from rigmind.backend.gesture.style_clip import distances, from_smplx, match_energy

    take = _talking_motion(seed=1)
    speaker = style_motion(_talking_motion(seed=2), BodyStyle(emotion=parse_emotions(["sad:1"])))
    clip = from_smplx(speaker.rotations, speaker.root_positions, 30.0)
    before = distances(take, clip)["speed_pct"]
    after = distances(match_energy(take, clip), clip)["speed_pct"]
    assert after < 0.5 * before


@pytest.mark.skipif(not BANDAI_D2.is_dir(), reason="needs ../shared/data/bandai_namco_d2_hand_gestures")
def test_classifier_names_a_held_out_real_clip():
    from rigmind.backend.gesture.dataset import bandai_to_smplx
    from rigmind.backend.gesture.style_classifier import StyleClassifier
    from rigmind.backend.gesture.style_layer import STYLE_FILE

    clf = StyleClassifier.from_arrays(np.load(STYLE_FILE))
    # NNN % 5 == 0: the validation split, never seen by the classifier.
    path = BANDAI_D2 / "dataset-2_raise-up-both-hands_elderly_005.bvh.gz"
    rot, root = bandai_to_smplx(path)
    assert clf.classify_motion(rot.astype(np.float64), root.astype(np.float64), 30.0) == "elderly"
