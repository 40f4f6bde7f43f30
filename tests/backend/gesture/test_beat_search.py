"""backend.gesture.beat_search: each window's latent draw picked among a few
so its beats fall where the speech's onsets come thick (issue #29 item 5) —
the upper body's positions as the decoder's poses give them, a critic that
prefers beats in dense speech, and a search that keeps a take seeded and
scores higher than the take as first drawn."""

from __future__ import annotations

import numpy as np
import pytest

from rigmind.backend.gesture import representation
from rigmind.backend.gesture.beat_search import BeatCritic, BeatSearchConfig, upper_body_positions

FPS = 30.0


def _poses(frames, seed=0, scale=0.2):
    """Model poses ``[frames, POSE_DIM]``: random slow turns about the rest pose."""
    from rigmind.backend import rotations
    from rigmind.backend.filters import gaussian_filter1d

    rng = np.random.default_rng(seed)
    aa = gaussian_filter1d(rng.standard_normal((frames, len(representation.BODY), 3)), 4, axis=0) * scale * 4
    p = np.zeros((frames, representation.POSE_DIM))
    p[:, :representation.ROT_DIM] = rotations.to_6d(rotations.from_axis_angle(aa)).reshape(frames, -1)
    p[:, representation.ROOT_SLICE] = 0.02 * rng.standard_normal((frames, 3))
    return p


def test_upper_body_positions_are_the_decoded_skeletons():
    poses = _poses(40)
    m = representation.decode(poses, FPS)
    n = representation.names()
    want = m.world_positions()[:, [n.index(j) for j in representation.UPPER]] - representation.standing_root()
    np.testing.assert_allclose(upper_body_positions(poses), want, atol=1e-9)


def _beating(frames, beats, lead=0):
    """Poses whose wrists and elbows swing with a speed minimum (not a stop) at each frame in ``beats``."""
    from rigmind.backend import rotations

    t = np.arange(frames, dtype=float)
    angle = np.zeros(frames)
    for b in beats:   # a sweep that slows down at b and speeds up again
        angle += 0.4 * np.tanh((t - b) / 10.0) + 0.004 * (t - b) * np.exp(-0.5 * ((t - b) / 12.0) ** 2)
    p = np.zeros((frames, representation.POSE_DIM))
    body = np.tile(np.array([1.0, 0, 0, 0]), (frames, len(representation.BODY), 1))
    for j in ("left_shoulder", "right_shoulder", "left_elbow", "right_elbow"):
        body[:, representation.BODY.index(j)] = rotations.from_axis_angle(
            np.c_[angle, 0 * angle, 0.5 * angle])
    p[:, :representation.ROT_DIM] = rotations.to_6d(body).reshape(frames, -1)
    return p


def test_critic_prefers_beats_where_onsets_come_thick():
    frames = 300
    onsets = np.r_[np.arange(0.2, 4.0, 0.15), [6.0, 8.0]]        # thick for 4 s, then sparse
    talking = np.ones(frames, bool)
    thick = _beating(frames, [45, 75])
    sparse = _beating(frames, [195, 225])
    drawn = np.concatenate([thick[:150], sparse[150:]])
    critic = BeatCritic(onsets, talking, drawn, lead=0, fps=FPS)
    assert critic.weight[60] > 0 > critic.weight[210]
    at = lambda p: critic.score(upper_body_positions(p), 0, 0, frames)  # noqa: E731
    assert at(thick) > 0 > at(sparse)
    assert critic.score(upper_body_positions(thick), 0, 100, frames) == 0.0   # no beat in the frames scored
    # the sum instead of the mean: more beats in the thick stretch score more
    by_sum = BeatCritic(onsets, talking, drawn, lead=0, fps=FPS, config=BeatSearchConfig(per_beat=False))
    more = _beating(frames, [30, 60, 90])
    assert (by_sum.score(upper_body_positions(more), 0, 0, frames)
            > by_sum.score(upper_body_positions(thick), 0, 0, frames))


def test_critic_without_onsets_or_speech_searches_nowhere():
    drawn = _poses(200)
    critic = BeatCritic(np.zeros(0), np.zeros(200, bool), drawn, lead=0, fps=FPS)
    assert not critic.worth_searching(0, 200) and not critic.weight.any()
    assert np.isfinite(critic.ref).all()


@pytest.fixture(scope="module")
def feats():
    from rigmind.backend.audio.features import speech_features
    from rigmind.backend.audio.loading import clip_from_array
    from rigmind.backend.face.espeak import synthesize

    s = synthesize("We keep trying, every single day, and then we stop. And then, once more, we go.", "en-us", rate=160)
    return speech_features(clip_from_array(s.samples, s.sample_rate), FPS)


def _take(feats, seed, candidates):
    from rigmind.backend.gesture.generate import GeneratorConfig, generate_from_features, get_model

    cfg = GeneratorConfig(search=BeatSearchConfig(candidates=candidates))
    return generate_from_features(get_model(), feats, seed=seed, config=cfg)


def test_search_keeps_the_take_seeded_and_places_its_beats(feats):
    a = _take(feats, 0, 4)[0]
    np.testing.assert_array_equal(a, _take(feats, 0, 4)[0])           # the same seed, the same take
    gained = []
    for seed in range(3):
        plain, _, _, speech = _take(feats, seed, 1)
        searched = _take(feats, seed, 4)[0]
        assert np.isfinite(searched).all() and searched.shape == plain.shape
        critic = BeatCritic(feats.onset_times, speech > 0.5, plain, lead=0, fps=FPS)
        gained.append(critic.score(upper_body_positions(searched), 0, 0, len(searched))
                      - critic.score(upper_body_positions(plain), 0, 0, len(plain)))
    assert np.mean(gained) > 0, gained


def test_strict_minima_are_argrelextremas():
    from scipy.signal import argrelextrema

    from rigmind.backend.gesture.beat_search import strict_minima

    x = np.random.default_rng(1).standard_normal((200, 5)).round(1)   # ties too
    m, j = strict_minima(x, 7)
    rm, rj = argrelextrema(x, np.less, axis=0, order=7)
    keep = (rm >= 7) & (rm < 200 - 7)
    assert sorted(zip(m, j)) == sorted(zip(rm[keep], rj[keep]))


def test_reference_speeds_of_a_long_take_are_read_a_block_at_a_time():
    from rigmind.backend.gesture import beat_search

    lead, n = 64, 2 * beat_search.BLOCK_FRAMES + 300
    drawn = _poses(lead + n + 40, seed=2)
    onsets = np.arange(0.5, n / FPS, 0.7)
    critic = BeatCritic(onsets, np.ones(n, bool), drawn, lead=lead, fps=FPS)
    p = upper_body_positions(drawn)
    speed = np.linalg.norm(np.diff(p, axis=0), axis=-1) * critic.settle[1:, None]    # frame k + 1's step
    np.testing.assert_allclose(critic.ref, speed[lead:lead + n - 1].mean(axis=0), rtol=1e-10)
