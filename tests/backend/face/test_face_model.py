"""The learned face model: a tiny training run end to end, the decoder, and
the committed weights on non-English speech made on the fly."""

from __future__ import annotations

import numpy as np
import pytest

from rigmind.backend.audio.loading import clip_from_array
from rigmind.backend.face.espeak import synthesize
from rigmind.backend.face.generate import generate_face
from rigmind.backend.face.model import DEFAULT_WEIGHTS, ENSEMBLE_SEEDS, default_weights, load_model, viterbi
from rigmind.backend.face.visemes import mouth_channels


@pytest.fixture(autouse=True)
def _one_thread():
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _clip(text="Buenos días, me llamo María y vivo en Madrid.", voice="es"):
    syn = synthesize(text, voice)
    pad = np.zeros(syn.sample_rate, np.float32)
    return clip_from_array(np.concatenate([pad, syn.samples, pad]), syn.sample_rate), syn


def test_viterbi_removes_flicker():
    p = np.full((10, 3), 0.05)
    p[:, 0] = 0.9
    p[4, :] = [0.3, 0.6, 0.1]          # a one-frame blip
    path = viterbi(np.log(p), switch_penalty=2.0)
    assert (path == 0).all()
    assert (viterbi(np.log(p), switch_penalty=0.0)[4] == 1)


def test_tiny_training_run_writes_loadable_weights(tmp_path, capsys):
    from rigmind.backend.face.train import main_train

    out = tmp_path / "face.pt"
    assert main_train(["--steps", "4", "--synth", "4", "--data", str(tmp_path / "none"), "--out", str(out)]) == 0
    assert "no real speech under" in capsys.readouterr().err     # said before it trains on synthesis alone
    m = load_model(out)
    clip, _ = _clip()
    anim = generate_face(clip, method="model", model=m)
    assert anim.source == "model" and anim.weights.shape[1] == 52
    assert (out.with_suffix(".log.json")).is_file()


def test_ensemble_averages_log_posteriors(tmp_path):
    """Two tiny runs with different seeds → the ensemble's posteriors are the
    members' normalised geometric mean, its jaw their mean, and it decodes."""
    from rigmind.backend.face.train import main_train

    outs = [tmp_path / f"s{k}.pt" for k in (0, 1)]
    for k, out in enumerate(outs):
        assert main_train(["--steps", "3", "--synth", "3", "--seed", str(k), "--data", str(tmp_path / "none"),
                           "--out", str(out)]) == 0
    a, b, both = load_model(outs[0]), load_model(outs[1]), load_model(*outs)
    assert len(both.nets) == 2
    x = np.random.default_rng(0).normal(0, 1, (50, 69)).astype(np.float32)
    (pa, ja), (pb, jb), (pe, je) = a.predict_stacked(x), b.predict_stacked(x), both.predict_stacked(x)
    geo = np.sqrt(pa * pb)
    np.testing.assert_allclose(pe, geo / geo.sum(-1, keepdims=True), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(je, (ja + jb) / 2, rtol=1e-5, atol=1e-6)
    clip, _ = _clip()
    assert generate_face(clip, method="model", model=both).source == "model"


def test_committed_ensemble_complete():
    """Every member of the shipped ensemble is committed, each small, each
    with the training log that names its command."""
    files = default_weights()
    if not files:
        pytest.skip("models/face.pt not trained yet (rigmind train face)")
    assert len(files) == len(ENSEMBLE_SEEDS)
    import json

    for seed, f in zip(ENSEMBLE_SEEDS, files):
        assert f.stat().st_size < 2e6
        log = json.loads(f.with_suffix(".log.json").read_text())
        assert log["seed"] == seed and "holdout" not in log
        assert log["command"].startswith("rigmind train face")


def test_committed_model_non_english_speech():
    if not DEFAULT_WEIGHTS.is_file():
        pytest.skip("models/face.pt not trained yet (rigmind train face)")
    import torch

    blob = torch.load(str(DEFAULT_WEIGHTS), weights_only=True)
    assert blob["kind"] == "face" and "weights" in blob and DEFAULT_WEIGHTS.stat().st_size < 10e6
    clip, syn = _clip()
    anim = generate_face(clip, fps=30.0, method="model")
    assert anim.source == "model"
    t = np.arange(anim.num_frames) / 30.0
    speaking = (t > 1.1 + syn.phones[0][0]) & (t < 0.9 + syn.phones[-1][1])
    quiet = (t < 0.8) | (t > 1.0 + len(syn.samples) / syn.sample_rate + 0.3)
    jaw = anim.curve("jawOpen")
    assert jaw[speaking].std() > 0.04 and jaw[speaking].max() > 0.2
    assert anim.weights[quiet][:, mouth_channels()].max() <= 0.05
    # visemes found in the speech include lip closures (m, b/β) and open vowels
    vs = {v for _, _, v in anim.visemes}
    assert "aa" in vs or "E" in vs
    b = generate_face(clip, fps=30.0, method="model")
    assert np.array_equal(anim.weights, b.weights)


def test_split_ipa_matches_cmu_phone_units():
    """eSpeak's vowel + r/l units are split like the CMU dictionary's phones
    (the VER reference); US ``ɜː`` is r-coloured; diphthongs stay whole."""
    from rigmind.backend.face.train import split_ipa
    from rigmind.backend.face.visemes import ipa_to_viseme

    ph = split_ipa([(0.0, 1.0, "ˈɑːɹ"), (1.0, 2.0, "əl"), (2.0, 3.0, "ˈɜː"), (3.0, 4.0, "ˈaɪ"), (4.0, 5.0, "ˈiə")],
                   "en-us")
    assert [ipa_to_viseme(p) for _, _, p in ph] == ["aa", "RR", "aa", "nn", "RR", "aa", "I", "aa"]
    assert ph[0][:2] == (0.0, pytest.approx(0.6)) and ph[1][:2] == (pytest.approx(0.6), 1.0)
    assert [ipa_to_viseme(p) for _, _, p in split_ipa([(0.0, 1.0, "ɜ")], "de")] == ["E"]
