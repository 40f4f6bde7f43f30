"""The NumPy audio front end (backend/audio/spectral.py) computes what
librosa computes for the same arguments, so the trained models see the
features they were trained on (issue #14 replaced librosa at run time)."""

from __future__ import annotations

import numpy as np
import pytest

librosa = pytest.importorskip("librosa")

SR = 16000


def _speechlike(seconds=4.0, seed=0):
    """Voiced stretches (a 90-250 Hz glide with harmonics), noise bursts and silence."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * SR)) / SR
    f0 = 90 + 160 * (0.5 + 0.5 * np.sin(2 * np.pi * 0.4 * t))
    phase = 2 * np.pi * np.cumsum(f0) / SR
    x = sum(np.sin(k * phase) / k for k in range(1, 6)) * (np.sin(2 * np.pi * 1.3 * t) > -0.2)
    x = x + 0.3 * rng.standard_normal(len(t)) * (np.sin(2 * np.pi * 0.7 * t) > 0.8)
    x[int(1.5 * SR): int(1.9 * SR)] = 0.0
    return (0.3 * x).astype(np.float32)


def test_stft_mel_db_onset_match_librosa():
    from rigmind.backend.audio import spectral

    x = _speechlike()
    p = spectral.stft_power(x, 512, 160)
    ref = np.abs(librosa.stft(x, n_fft=512, hop_length=160, window="hann", center=True)) ** 2
    assert p.shape == ref.T.shape
    assert np.abs(p - ref.T).max() < 1e-5 * ref.max()
    mb = spectral.mel_filterbank(SR, 512, 64, 60.0, 7600.0)
    lb = librosa.filters.mel(sr=SR, n_fft=512, n_mels=64, fmin=60, fmax=7600)
    assert np.abs(mb - lb).max() < 1e-6 * lb.max()
    mel = (lb @ ref).T
    on_ref = librosa.onset.onset_strength(S=librosa.power_to_db(mel.T, ref=np.max), sr=SR, hop_length=160)
    on = spectral.onset_strength(spectral.power_to_db(mel, ref=float(mel.max()), top_db=80.0), centre_pad=2048 // 320)
    assert on.shape == on_ref.shape and np.abs(on - on_ref).max() < 1e-3
    db = spectral.power_to_db(mel, ref=1.0, amin=1e-10)
    assert np.abs(db - librosa.power_to_db(mel, ref=1.0, amin=1e-10, top_db=None)).max() < 1e-3


def test_yin_matches_librosa():
    from rigmind.backend.audio import spectral

    x = _speechlike(seed=1)
    f = spectral.yin(x, fmin=65, fmax=400, sr=SR, frame_length=1024, hop=160)
    ref = librosa.yin(x, fmin=65, fmax=400, sr=SR, frame_length=1024, hop_length=160, center=True)
    assert f.shape == ref.shape
    # float32 transforms instead of float64: the same trough on every frame,
    # refined to within a hundredth of a hertz.
    assert np.abs(f - ref).max() < 0.01


def test_features_cached_per_clip_and_unchanged_by_cache():
    from rigmind.backend.audio import features as F
    from rigmind.backend.audio.loading import AudioClip

    x = _speechlike(seed=2)
    clip = AudioClip(x, SR, SR, 1, 0.0, False)
    F._CACHE.clear()
    a = F.speech_features(clip, 30.0)
    assert len(F._CACHE) == 1
    b = F.speech_features(clip, 30.0)  # from the cache
    for k in ("logmel", "onset", "energy", "pitch", "voiced", "speech"):
        assert np.array_equal(getattr(a, k), getattr(b, k)), k
    c = F.speech_features(clip, 100.0)
    assert c.num_frames == int(np.ceil(len(x) / SR * 100))
