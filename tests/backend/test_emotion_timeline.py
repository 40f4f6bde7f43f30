"""The emotion timeline (#29): `--emotion NAME[:WEIGHT][@START-END]` texts
and keyframed weights → per-frame weights, and the one-line refusals."""

from __future__ import annotations

import numpy as np
import pytest

from rigmind.backend.emotion.timeline import RAMP_S, EmotionTimeline, parse_emotions
from rigmind.backend.errors import UserError
from rigmind.backend.options import EMOTIONS


def test_untimed_entries_cover_the_take_and_blend():
    w = parse_emotions(["happy:0.5", "surprised"]).weights(90, 30.0)
    assert w.shape == (90, len(EMOTIONS))
    assert np.allclose(w[:, EMOTIONS.index("happy")], 0.5)
    assert np.allclose(w[:, EMOTIONS.index("surprised")], 1.0)
    assert np.allclose(np.delete(w, [0, 3], axis=1), 0.0)


def test_timed_ranges_follow_the_seconds_and_cross_fade():
    w = parse_emotions(["happy:1@0-10", "sad:0.8@10-20"]).weights(30 * 25, 30.0)
    h, s = w[:, EMOTIONS.index("happy")], w[:, EMOTIONS.index("sad")]
    assert h[0] == 1.0 and h[280] == 1.0 and h[320] == 0.0
    assert s[320] == pytest.approx(0.8) and s[280] == 0.0 and s[650] == 0.0
    assert h[300] == pytest.approx(0.5) and s[300] == pytest.approx(0.4)
    # The fade lasts RAMP_S: nothing changes by more than a ramp's slope.
    assert np.abs(np.diff(h)).max() <= 1.6 / (RAMP_S * 30) + 1e-6


def test_neutral_is_all_zero():
    assert parse_emotions(None).is_neutral
    assert parse_emotions(["neutral"]).is_neutral
    assert not parse_emotions(["angry:0.2"]).is_neutral


def test_sampled_weights_interpolate_keys():
    tl = EmotionTimeline.sampled([0.0, 1.0], [[0] * 6, [1, 0, 0, 0, 0, 0.5]])
    w = tl.weights(31, 30.0)
    assert w[15, 0] == pytest.approx(0.5) and w[30, 5] == pytest.approx(0.5)


@pytest.mark.parametrize("texts, words", [
    (["joy"], "unknown emotion 'joy'"),
    (["happy:1.5"], "between 0 and 1"),
    (["happy:-0.1"], "between 0 and 1"),
    (["happy:nan"], "finite"),
    (["happy:lots"], "not a number"),
    (["sad@-1-3"], "0 or more"),
    (["sad@5-2"], "end after it starts"),
    (["sad@3"], "START-END"),
    (["happy@0-10", "sad@5-12"], "overlap"),
    (["happy", "happy:0.5@1-2"], "twice"),
    ([""], "NAME[:WEIGHT]"),
    (["x" * 500], "NAME[:WEIGHT]"),
])
def test_bad_entries_are_one_line_user_errors(texts, words):
    with pytest.raises(UserError) as e:
        parse_emotions(texts)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_bad_sampled_weights_are_refused():
    with pytest.raises(UserError):
        EmotionTimeline.sampled([0.0, 1.0], [[0] * 6, [2] * 6])
    with pytest.raises(UserError):
        EmotionTimeline.sampled([1.0, 0.0], [[0] * 6, [0] * 6])
