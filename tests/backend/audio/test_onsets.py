"""backend.audio.onsets: the speech onsets the gesture settles with are
librosa's ``onset_detect`` at 16 kHz (the onsets beat consistency is scored
against), found without librosa, in bounded memory."""

from __future__ import annotations

import numpy as np
import pytest

from rigmind.backend.audio import onsets

SR = 16000


def _bursts(seconds=6.0, seed=0):
    """Noise bursts and tone blips at irregular times over a quiet floor."""
    rng = np.random.default_rng(seed)
    y = (rng.standard_normal(int(seconds * SR)) * 1e-3).astype(np.float32)
    t = 0.2
    while t < seconds - 0.3:
        i = int(t * SR)
        n = int(rng.uniform(0.03, 0.15) * SR)
        env = np.exp(-np.arange(n) / (n / 3)).astype(np.float32)
        if rng.random() < 0.5:
            y[i:i + n] += 0.5 * env * rng.standard_normal(n).astype(np.float32)
        else:
            y[i:i + n] += 0.5 * env * np.sin(2 * np.pi * rng.uniform(150, 900) * np.arange(n) / SR).astype(np.float32)
        t += rng.uniform(0.08, 0.6)
    return y


def test_onset_times_are_librosas():
    librosa = pytest.importorskip("librosa")
    for seed in (0, 1, 2):
        y = _bursts(seed=seed)
        ref = librosa.onset.onset_detect(y=y, sr=SR, hop_length=512, units="time")
        got = onsets.onset_times(y, SR)
        assert len(ref) > 10
        np.testing.assert_allclose(got, ref, atol=1e-9)


def test_a_real_voice_has_librosas_onsets():
    librosa = pytest.importorskip("librosa")
    from conftest import data_file
    from rigmind.backend.audio.loading import load_audio

    clip = load_audio(data_file("speech_english_ljspeech/wavs/LJ001-0010.wav"))
    ref = librosa.onset.onset_detect(y=clip.samples, sr=SR, hop_length=512, units="time")
    np.testing.assert_allclose(onsets.onset_times(clip.samples, SR), ref, atol=1e-9)


def test_chunks_give_the_whole_clips_envelope(monkeypatch):
    y = _bursts(seconds=9.0, seed=3)
    whole = onsets.onset_envelope(y)
    monkeypatch.setattr(onsets, "CHUNK_FRAMES", 37)
    np.testing.assert_allclose(onsets.onset_envelope(y), whole, atol=1e-5)
    assert len(whole) == 1 + len(y) // onsets.HOP


def test_silence_and_other_rates():
    assert len(onsets.onset_times(np.zeros(SR * 2, np.float32), SR)) == 0
    assert len(onsets.onset_times(np.zeros(0, np.float32), SR)) == 0
    with pytest.raises(ValueError, match="16000 Hz"):
        onsets.onset_times(np.zeros(100, np.float32), 44100)


def test_damaged_samples_give_no_onsets_and_no_error():
    y = _bursts(seed=4)
    y[1000:1100] = np.nan
    assert len(onsets.onset_times(y, SR)) == 0
