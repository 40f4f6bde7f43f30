"""Generate Gesture (issue #5): audio front end, the committed model, the EMAGE
schema, training (tiny runs), and the operator/CLI on real Blender rigs.

Speech for the format tests is synthesised on the fly with eSpeak NG, so
these run without ../shared/data; tests that need the BEAT2 take skip
without it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from conftest import data_file

RIGMIND = Path(sys.executable).parent / "rigmind"
TEXT = ("Well, I think the important thing is that we keep trying. "
        "You know, every single day, we just get up and do it again.")


@pytest.fixture(scope="module")
def speech():
    """eSpeak speech: ``(samples float32, 22050)``, about 8 s."""
    from rigmind.backend.face.espeak import synthesize

    s = synthesize(TEXT, "en-us", rate=150)
    return s.samples, s.sample_rate


def _write(path, samples, src_rate, rate=None, channels=1):
    """Write ``samples`` (at ``src_rate``) as 16-bit WAV at ``rate`` (default: as is)."""
    import soxr

    rate = rate or src_rate
    x = samples if rate == src_rate else soxr.resample(samples, src_rate, rate)
    if channels == 2:
        x = np.stack([x, 0.5 * x], axis=1)
    sf.write(path, x, rate, subtype="PCM_16")
    return path


def _wrist_speed(motion):
    from rigmind.backend.gesture import representation

    n = representation.names()
    p = motion.world_positions()[:, [n.index("left_wrist"), n.index("right_wrist")]]
    return np.linalg.norm(np.diff(p, axis=0), axis=-1).mean() * motion.fps


@pytest.mark.parametrize("rate,channels", [(8000, 1), (22050, 1), (44100, 2), (48000, 1)])
def test_rates_and_stereo(tmp_path, speech, rate, channels):
    from rigmind.backend.audio import load_audio
    from rigmind.backend.gesture.generate import generate_gesture

    path = _write(tmp_path / f"s{rate}.wav", *speech, rate=rate, channels=channels)
    clip = load_audio(path)
    assert clip.sample_rate == 16000 and clip.source_rate == rate and clip.source_channels == channels
    res = generate_gesture(clip, seed=0)
    assert res.motion.num_frames == int(np.ceil(clip.seconds * 30))
    assert np.isfinite(res.motion.rotations).all()
    assert res.speech.mean() > 0.5, "voice activity should cover most of the synthesised speech"
    assert _wrist_speed(res.motion) > 0.05, "the hands should move while someone speaks"


def test_silence_gives_calm_idle(tmp_path, speech):
    from rigmind.backend.audio import load_audio
    from rigmind.backend.gesture.generate import generate_gesture

    silent = _write(tmp_path / "silence.wav", np.zeros(22050 * 6, np.float32), 22050)
    clip = load_audio(silent)
    assert clip.silent
    calm = generate_gesture(clip, seed=3)
    talk = generate_gesture(load_audio(_write(tmp_path / "s.wav", *speech)), seed=3)
    assert np.isfinite(calm.motion.rotations).all()
    assert calm.pulses.max() == 0 and not calm.speech.any()
    # A calm idle: the hands move much less than during speech, and not jitter.
    assert _wrist_speed(calm.motion) < 0.6 * _wrist_speed(talk.motion)
    jerk = np.abs(np.diff(calm.poses, n=2, axis=0)).mean()
    assert jerk < 0.02


def test_short_clip_and_corrupt_file(tmp_path, speech):
    from rigmind.backend.audio import AudioError, load_audio
    from rigmind.backend.gesture.generate import generate_gesture

    short = _write(tmp_path / "short.wav", speech[0][: int(0.2 * 22050)], 22050)
    res = generate_gesture(load_audio(short), seed=0)
    assert res.motion.num_frames == 6 and np.isfinite(res.motion.rotations).all()

    bad = tmp_path / "corrupt.wav"
    bad.write_bytes(b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(range(40)))
    with pytest.raises(AudioError, match="cannot decode"):
        load_audio(bad)
    empty = tmp_path / "empty.wav"
    empty.write_bytes(b"")
    with pytest.raises(AudioError, match="empty"):
        load_audio(empty)
    with pytest.raises(AudioError, match="not found"):
        load_audio(tmp_path / "missing.wav")


def test_seed_and_amount(tmp_path, speech):
    from rigmind.backend.audio import load_audio
    from rigmind.backend.gesture.generate import generate_gesture

    clip = load_audio(_write(tmp_path / "s.wav", *speech))
    a = generate_gesture(clip, seed=7)
    b = generate_gesture(clip, seed=7)
    c = generate_gesture(clip, seed=8)
    assert np.array_equal(a.poses, b.poses), "same seed, same motion"
    assert np.abs(a.poses - c.poses).max() > 1e-2, "another seed, another take"
    calm = generate_gesture(clip, seed=7, amount=0.0)
    lively = generate_gesture(clip, seed=7, amount=1.0)
    assert _wrist_speed(lively.motion) > _wrist_speed(calm.motion)


def test_long_generation_has_no_seams(speech):
    """Windowed generation: no jump at window boundaries over a minute."""
    from rigmind.backend.audio.loading import clip_from_array
    from rigmind.backend.gesture import model
    from rigmind.backend.gesture.generate import PREROLL, generate_gesture, window_starts

    x = np.tile(speech[0], 8)
    res = generate_gesture(clip_from_array(x, speech[1]), seed=1)
    d = np.abs(np.diff(res.poses, axis=0)).max(axis=1)
    # A window's first new frame, and its first frame past the cross-fade
    # (the previous window's end), in the take's frames; d[f - 1] is the step into f.
    starts = window_starts(PREROLL + len(res.poses), 1)
    joins = np.concatenate([starts[1:] + model.CONTEXT, starts[:-1] + model.WINDOW]) - PREROLL
    joins = joins[(joins >= 1) & (joins <= len(d))] - 1
    assert len(joins) > 20
    assert d[joins].mean() < 3 * np.median(d) + 1e-3, "window boundaries should look like any other frame"


def test_window_advances_vary_and_cover_the_take():
    """Window joins at no fixed period and off the latent code grid (its
    phase takes all 8 positions); every window overlaps the previous one;
    the windows cover the take; the same seed gives the same windows."""
    from rigmind.backend.gesture import dims
    from rigmind.backend.gesture.generate import ADVANCES, OVERLAP, STRIDE, STRIDES, window_starts

    for n in (1, 40, 64, 500, 5000):
        s = window_starts(n, 3)
        adv = np.diff(s)
        assert s[0] == 0 and set(adv.tolist()) <= set(ADVANCES)
        assert s[-1] + dims.WINDOW >= n + OVERLAP
        assert len(s) == 1 or s[-2] + dims.WINDOW < n + OVERLAP, "no window past the one that covers the take"
        assert np.all(dims.WINDOW - dims.CONTEXT - adv > 0), "each window overlaps the previous one"
        np.testing.assert_array_equal(s, window_starts(n, 3))
    long = window_starts(5000, 3)
    assert len(set(np.diff(long).tolist())) == len(ADVANCES)
    assert set((long % dims.LATENT_STRIDE).tolist()) == set(range(dims.LATENT_STRIDE)), "the code grid's phase wanders"
    assert abs(np.diff(long).mean() - STRIDE) < 1.0
    assert not np.array_equal(window_starts(5000, 3), window_starts(5000, 4))
    np.testing.assert_array_equal(np.diff(window_starts(500, 0, advances=(32,))), 32)
    assert np.all(window_starts(500, 0, advances=STRIDES) % dims.LATENT_STRIDE == 0)
    for bad in ((), (48,), (-8,), (0, 32)):
        with pytest.raises(ValueError, match="window advances"):
            window_starts(500, 0, advances=bad)


def test_latent_codes_read_off_the_grid_keep_the_prior():
    """Codes read at any phase are the drawn ones on the grid, independent
    N(0, 1) off it (what the decoder was trained on), and close to those a
    window one frame away reads."""
    from rigmind.backend.gesture.latent_track import TAPS, pad_codes, read_codes

    codes = np.random.default_rng(0).standard_normal((4, 3000)).astype(np.float32)
    padded = pad_codes(codes, seed=5)
    assert padded.shape == (4, 3000 + 2 * TAPS)
    np.testing.assert_array_equal(padded[:, TAPS:-TAPS], codes)
    np.testing.assert_array_equal(read_codes(padded, 80, 8, 8), codes[:, 10:18])
    np.testing.assert_array_equal(pad_codes(codes, seed=5), padded)
    for start in (3, 4, 13):
        z = read_codes(padded, start, 2900, 8)
        assert abs(z.std() - 1.0) < 0.03
        corr = np.mean([np.corrcoef(z[d, :-1], z[d, 1:])[0, 1] for d in range(4)])
        assert abs(corr) < 0.05, "neighbouring codes read off the grid stay independent"
    near = np.corrcoef(read_codes(padded, 3, 2900, 8).ravel(), read_codes(padded, 4, 2900, 8).ravel())[0, 1]
    assert near > 0.95
    z = read_codes(padded, 8 * 2990 + 5, 2, 8)          # the last code times, into the padding
    assert np.isfinite(z).all()
    with pytest.raises(IndexError):
        read_codes(padded, 8 * 3005 + 5, 4, 8)


def test_emage_npz_roundtrip(tmp_path, speech):
    from rigmind.backend import rotations
    from rigmind.backend.audio import load_audio
    from rigmind.backend.gesture.generate import generate_gesture
    from rigmind.backend.smplx_motion import read_smplx_npz
    from rigmind.operators.gesture_scene import write_npz

    res = generate_gesture(load_audio(_write(tmp_path / "s.wav", *speech)), seed=0)
    path = write_npz(tmp_path / "take.npz", res)
    z = np.load(path, allow_pickle=True)
    T = res.motion.num_frames
    assert z["poses"].shape == (T, 165) and z["trans"].shape == (T, 3) and z["expressions"].shape == (T, 100)
    assert int(z["mocap_frame_rate"]) == 30
    back = read_smplx_npz(path)
    ang = rotations.angle_between(back.rotations, res.motion.rotations)
    assert ang.max() < 1e-4
    assert np.abs(back.world_positions() - res.motion.world_positions()).max() < 1e-4


def test_train_beat2_layout_tiny(tmp_path):
    """`rigmind train gesture` reads the full BEAT2 layout (smplxflame_30 +
    wave16k); a few steps on the paired take only, and the result loads."""
    npz = data_file("beat2_speech_gesture_sample/2_scott_0_1_1.npz")
    wav = npz.with_suffix(".wav")
    root = tmp_path / "beat_english_v2.0.0"
    (root / "smplxflame_30").mkdir(parents=True)
    (root / "wave16k").mkdir()
    (root / "smplxflame_30" / npz.name).symlink_to(npz)
    (root / "wave16k" / wav.name).symlink_to(wav)
    out = tmp_path / "g.pt"
    from rigmind.backend.gesture.generate import GestureModel
    from rigmind.backend.gesture.train import main_train

    assert main_train(["--data", str(root), "--out", str(out), "--steps", "3", "--threads", "1",
                       "--no-unpaired"]) == 0
    m = GestureModel.load(out)
    assert m.start_poses.shape[0] == 8 and out.with_suffix(".log.json").exists()


@pytest.mark.slow  # 24 s in the full suite (--durations=0, 2 shared cores)
@pytest.mark.parametrize("extra", [[], ["--beat-weight", "0.3", "--beat-accel-weight", "1"]], ids=["default", "beat_loss"])
def test_train_ddp_two_processes(tmp_path, extra):
    """The same command under torchrun (2 CPU processes, gloo): gradients are
    averaged across ranks and rank 0 writes the checkpoint. With the beat loss
    too, whose prior-decoded windows go through the unwrapped module: DDP
    still sees every parameter's gradient once per step."""
    npz = data_file("beat2_speech_gesture_sample/2_scott_0_1_1.npz")
    root = tmp_path / "beat"
    root.mkdir()
    (root / npz.name).symlink_to(npz)
    (root / (npz.stem + ".wav")).symlink_to(npz.with_suffix(".wav"))
    out = tmp_path / "ddp.pt"
    torchrun = Path(sys.executable).parent / "torchrun"
    r = subprocess.run([str(torchrun), "--standalone", "--nproc_per_node=2", "-m", "rigmind", "train", "gesture",
                        "--data", str(root), "--out", str(out), "--steps", "2", "--threads", "1", "--no-unpaired", *extra],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    import json

    log = json.loads(out.with_suffix(".log.json").read_text())
    assert log["world_size"] == 2


def test_training_is_deterministic(tmp_path):
    """Same seed, steps and threads → bit-identical weights."""
    import torch

    from rigmind.backend.gesture.train import GestureTrainConfig, train_gesture

    npz = data_file("beat2_speech_gesture_sample/2_scott_0_1_1.npz")
    outs = []
    for k in range(2):
        out = tmp_path / f"g{k}.pt"
        train_gesture(npz.parent, out, GestureTrainConfig(steps=3, seed=11, threads=1, with_unpaired=False), log=lambda *a: None)
        outs.append(torch.load(out, weights_only=True)["weights"])
    assert all(torch.equal(outs[0][k], outs[1][k]) for k in outs[0])
