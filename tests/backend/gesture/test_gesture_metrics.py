"""backend.gesture.metrics (BC, L1Div, Fréchet distance as EMAGE defines them)
and backend.gesture.motion_encoder (the FGD feature encoder), on synthetic data.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from rigmind.backend.gesture import metrics
from rigmind.backend.gesture import motion_encoder

torch.set_num_threads(1)

FPS = 30.0
SR = 16000


def _click_train(times, seconds, sr=SR):
    """Silence with 4-ms decaying noise bursts at ``times`` (s)."""
    rng = np.random.default_rng(1)
    y = np.zeros(int(seconds * sr), np.float32)
    n = int(0.004 * sr)
    burst = (rng.standard_normal(n) * np.exp(-np.arange(n) / (n / 4))).astype(np.float32) * 0.8
    for t in times:
        i = int(round(t * sr))
        y[i:i + n] += burst[: len(y) - i]
    return y


def _pulsing_body(seconds, beat_hz=1.0, joints=22):
    """Every joint translates along X with speed 1 + 0.5 cos(2π f t) m/s: speed
    minima (0.5 m/s, half the mean speed, above the 0.3 threshold) at
    t = (k + 1/2) / f."""
    t = np.arange(int(seconds * FPS)) / FPS
    w = 2 * math.pi * beat_hz
    x = t + 0.5 / w * np.sin(w * t)
    p = np.zeros((len(t), joints, 3))
    p[..., 0] = x[:, None]
    p[..., 2] = np.linspace(0.0, 1.6, joints)[None, :]
    return p


# --- beat consistency ----------------------------------------------------------------


def test_bc_is_one_for_coinciding_beats_and_drops_with_offset():
    a = np.array([0.5, 1.3, 2.0, 3.1, 4.4])
    assert metrics.beat_consistency(a, a) == pytest.approx(1.0)
    prev = 1.0
    for off in (0.05, 0.1, 0.2, 0.3):  # < half the smallest gap
        bc = metrics.beat_consistency(a, a + off)
        assert bc == pytest.approx(math.exp(-off ** 2 / (2 * 0.3 ** 2)), abs=1e-12)
        assert bc < prev
        prev = bc
    # direction: each *audio* beat looks for its nearest motion beat, so extra
    # motion beats cost nothing while missing ones do
    assert metrics.beat_consistency(a, np.concatenate([a, a + 0.37])) == pytest.approx(1.0)
    assert metrics.beat_consistency(a, a[:1]) < 0.5
    # per-joint lists are averaged, a joint without beats scoring 0 (EMAGE)
    assert metrics.beat_consistency(a, [a, np.zeros(0)]) == pytest.approx(0.5)
    assert math.isnan(metrics.beat_consistency([], a))


def test_click_train_onsets_land_on_the_clicks():
    clicks = np.arange(0.5, 4.0, 0.5)
    y = _click_train(clicks, 4.5)
    tol = 2 * metrics.ONSET_HOP / SR  # two onset frames (64 ms), about two 30-fps frames
    for sr in (SR, 48000):
        yy = y if sr == SR else np.repeat(y, 3)  # crude 48 kHz copy: resampled inside
        on = metrics.audio_beats(yy, sr)
        # every click is found, and nothing else (librosa's default peak picking
        # with wait = 0 frames at 16 kHz may mark a click's next frame too)
        assert np.max(np.min(np.abs(on[:, None] - clicks[None]), axis=0)) <= tol, (sr, on)
        assert np.max(np.min(np.abs(on[:, None] - clicks[None]), axis=1)) <= tol, (sr, on)
    assert len(metrics.audio_beats(np.zeros(SR, np.float32))) == 0


def test_motion_beats_find_speed_minima_of_an_oscillating_wrist():
    p = _pulsing_body(6.0)
    p[:, :20] = p[:1, :20]                      # only the wrists (20, 21) move
    expected = np.arange(0.5, 6.0, 1.0)
    beats = metrics.motion_beats(p, FPS, per_joint=True)
    assert len(beats) == len(metrics.UPPER_BODY)
    wrists = beats[metrics.UPPER_BODY.index(20)], beats[metrics.UPPER_BODY.index(21)]
    for b in wrists:
        # every minimum at least `order` frames from the ends is found exactly
        inner = expected[(expected * FPS >= metrics.BC_ORDER) & (expected * FPS < len(p) - metrics.BC_ORDER)]
        assert np.allclose(b[np.isin(np.round(b * FPS), np.round(inner * FPS))], inner)
        assert np.all(np.min(np.abs(b[:, None] - expected[None]), axis=1) <= 1.5 / FPS)
    assert all(len(b) == 0 for i, b in zip(metrics.UPPER_BODY, beats) if i < 20)  # static: no minima
    union = metrics.motion_beats(p, FPS)
    assert np.allclose(union, wrists[0])
    # a wrist that stops at its minima (pure sine) has no beats above the threshold
    t = np.arange(180) / FPS
    q = np.zeros((180, 55, 3))
    q[:, 20, 0] = 0.2 * np.sin(2 * math.pi * t)
    assert len(metrics.motion_beats(q, FPS, joints=["left_wrist"])) == 0
    assert len(metrics.motion_beats(q, FPS, joints=["left_wrist"], threshold=-1.0)) > 0


def test_emage_compat_reproduces_their_threshold_index_slip():
    # still for 2 s, then pulsing (minima at 2.5, 3.5, ... s). Searching frames
    # 60..240, EMAGE gates a minimum at frame 60 + m by the speed at frame m:
    # the first two (m = 15, 45) fall on the still part and are dropped.
    p = _pulsing_body(10.0)
    p[60:] = p[60:] - p[60] + p[0]
    p[:60] = p[0]
    fixed = metrics.motion_beats(p, FPS, frames=(60, 240), per_joint=True)[-1]
    compat = metrics.motion_beats(p, FPS, frames=(60, 240), per_joint=True, emage_compat=True)[-1]
    assert np.allclose(fixed, [0.5, 1.5, 2.5, 3.5, 4.5, 5.5], atol=1.5 / FPS)
    assert np.allclose(compat, fixed[2:])


def test_bc_score_end_to_end():
    seconds = 10.0
    p = _pulsing_body(seconds)
    beats = np.arange(0.5, seconds, 1.0)
    on = metrics.bc_score(_click_train(beats, seconds), SR, p, FPS)
    off = metrics.bc_score(_click_train(beats[:-1] + 0.5, seconds), SR, p, FPS)
    assert on > 0.9
    assert off < 0.5
    ref = metrics.mean_joint_speed([p], FPS)
    assert ref.shape == (22,)
    assert metrics.bc_score(_click_train(beats, seconds), SR, p, FPS, mean_speed=ref) == pytest.approx(on)


# --- L1 diversity --------------------------------------------------------------------


def test_l1_diversity_zero_when_static_and_linear_in_amplitude():
    rng = np.random.default_rng(0)
    pose = rng.normal(size=(1, 55, 3))
    static = np.repeat(pose, 90, axis=0)
    static[:, :, 0] += np.linspace(0, 3, 90)[:, None]   # walking without moving limbs
    assert metrics.l1_diversity(static) == pytest.approx(0.0, abs=1e-12)
    t = np.arange(300) / FPS                             # 10 whole periods of 1 Hz
    amp = 0.1
    moving = np.repeat(pose, 300, axis=0)
    moving[:, 20, 0] += amp * np.sin(2 * math.pi * t)
    # one coordinate oscillating: mean |A sin| = 2A/π
    assert metrics.l1_diversity(moving) == pytest.approx(2 * amp / math.pi, rel=1e-2)  # sampled sine
    big = np.repeat(pose, 300, axis=0)
    big[:, 20, 0] += 2 * amp * np.sin(2 * math.pi * t)
    assert metrics.l1_diversity(big) == pytest.approx(2 * metrics.l1_diversity(moving), rel=1e-9)
    # several takes: frame-weighted
    assert metrics.l1_diversity([moving, static[:60]]) == pytest.approx(
        metrics.l1_diversity(moving) * 300 / 360, rel=1e-9)


# --- Fréchet distance ----------------------------------------------------------------


def test_frechet_distance_properties_and_1d_closed_form():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(500, 8))
    assert metrics.frechet_distance(a, a) == pytest.approx(0.0, abs=1e-5)
    b = rng.normal(size=(400, 8)) * 1.3 + 0.2
    assert metrics.frechet_distance(a, b) == pytest.approx(metrics.frechet_distance(b, a), rel=1e-6)
    d = [metrics.frechet_distance(a, a + s) for s in (0.0, 0.5, 1.0, 2.0)]
    assert all(x < y for x, y in zip(d, d[1:]))
    assert d[2] == pytest.approx(8 * 1.0 ** 2, rel=1e-4)   # |shift|² for a pure shift
    # 1-D Gaussians: (μa − μb)² + (σa − σb)² (sample moments, ε = 1e-6 inside)
    x = rng.normal(1.0, 2.0, size=(3000, 1))
    y = rng.normal(-0.5, 0.7, size=(2000, 1))
    va, vb = x.var(ddof=1), y.var(ddof=1)
    want = (x.mean() - y.mean()) ** 2 + va + vb - 2 * math.sqrt((va + 1e-6) * (vb + 1e-6))
    assert metrics.frechet_distance(x, y) == pytest.approx(want, rel=1e-9)
    assert want == pytest.approx((x.mean() - y.mean()) ** 2 + (math.sqrt(va) - math.sqrt(vb)) ** 2, rel=1e-5)
    with pytest.raises(ValueError):
        metrics.frechet_distance(a[:1], b)


# --- motion encoder ------------------------------------------------------------------


def _synthetic_clip(seed, frames=200, joints=22):
    rng = np.random.default_rng(seed)
    rest = rng.normal(scale=0.3, size=(joints, 3))
    rest[0] = (0.0, 0.0, 1.0)
    rest[1] = (0.1, 0.0, 0.9)
    rest[2] = (-0.1, 0.0, 0.9)
    t = np.arange(frames)[:, None, None] / FPS
    freq = rng.uniform(0.3, 2.0, size=(1, joints, 3))
    phase = rng.uniform(0, 2 * math.pi, size=(1, joints, 3))
    amp = rng.uniform(0.0, 0.1, size=(1, joints, 3))
    return rest[None] + amp * np.sin(2 * math.pi * freq * t + phase)


def test_windows_remove_heading_and_position():
    clip = _synthetic_clip(0, frames=100, joints=55)
    w = motion_encoder.windows(clip)
    assert w.shape == ((100 - 32) // 8 + 1, 32, 22, 3)
    ang = 1.1
    rz = np.array([[math.cos(ang), -math.sin(ang), 0], [math.sin(ang), math.cos(ang), 0], [0, 0, 1]])
    moved = clip @ rz.T + np.array([3.0, -2.0, 0.0])
    assert np.allclose(motion_encoder.windows(moved), w, atol=1e-9)
    lr = w[:, 0, 1] - w[:, 0, 2]
    assert np.allclose(lr[:, 1], 0, atol=1e-9) and np.all(lr[:, 0] > 0)   # hips on +X
    assert np.allclose(w[:, 0, 0], 0)                                      # pelvis starts at 0
    assert motion_encoder.windows(clip[:20]).shape[0] == 0
    assert motion_encoder.windows(clip[::2], fps=15).shape[1:] == (32, 22, 3)


def test_encoder_trains_saves_loads_and_embeds_identically(tmp_path):
    clips = [_synthetic_clip(s) for s in range(4)]
    losses = []
    enc, stats = motion_encoder.train_encoder(clips, motion_encoder.EncoderTrainConfig(steps=40, seed=3), progress=lambda s, l: losses.append(l))
    assert losses[-1] < losses[0]
    assert stats["train_windows"] == 2 * 4 * ((200 - 32) // 8 + 1)
    path = tmp_path / "enc.pt"
    motion_encoder.save_encoder(path, enc, stats)
    assert path.stat().st_size < 1_000_000
    blob = torch.load(str(path), weights_only=True)
    assert blob["format"] == "rigmind-checkpoint" and blob["kind"] == "gesture-motion-encoder"
    assert blob["metadata"]["stats"]["dim"] == motion_encoder.FEAT_DIM
    enc2, stats2 = motion_encoder.load_encoder(path)
    assert stats2["feat_mean"] == stats["feat_mean"]
    f1 = motion_encoder.embed(enc, clips[0])
    f2 = motion_encoder.embed(enc2, clips[0])
    assert f1.shape == ((200 - 32) // 8 + 1, motion_encoder.FEAT_DIM)
    assert np.array_equal(f1, f2)
    assert motion_encoder.embed(enc, [clips[0][:10]]).shape == (0, motion_encoder.FEAT_DIM)
    # same data, steps and seed: the same weights; the global RNG is left alone
    torch.manual_seed(123)
    before = torch.rand(1)
    torch.manual_seed(123)
    enc3, _ = motion_encoder.train_encoder(clips, motion_encoder.EncoderTrainConfig(steps=40, seed=3))
    assert torch.rand(1) == before
    for (k, v), v3 in zip(enc.state_dict().items(), enc3.state_dict().values()):
        assert torch.equal(v, v3), k
    # Fréchet distance of a set with itself is ~0; a different motion scores higher
    fd_same = motion_encoder.frechet_motion_distance(enc, clips, clips, stride=2)
    assert fd_same == pytest.approx(0.0, abs=1e-4)
    still = [np.repeat(c[:1], 200, axis=0) + 1e-3 * np.random.default_rng(9).normal(size=c.shape)
             for c in clips]
    assert motion_encoder.frechet_motion_distance(enc, clips, still, stride=2) > 1.0


def test_off_stride_periodicity_is_the_floor_a_seam_shows_above():
    """A jolt every 32 frames reads at the stride far above the nearby
    periods; motion with no period reads the same at both."""
    from rigmind.backend.gesture import viewer_metrics

    rng = np.random.default_rng(3)
    smooth = np.cumsum(np.cumsum(rng.normal(size=(640, 4, 3)) * 1e-4, axis=0), axis=0)
    jolted = smooth.copy()
    jolted[::32] += 0.01
    assert viewer_metrics.seam_periodicity(jolted, 32) > 2.0 * viewer_metrics.off_stride_periodicity(jolted, 32)
    plain, off = viewer_metrics.seam_periodicity(smooth, 32), viewer_metrics.off_stride_periodicity(smooth, 32)
    assert abs(plain - off) < 0.25 * off
