"""ONNX Runtime and torch run the gesture and face models to the same
numbers (within 1e-4), and a generation run that does not ask for torch
never imports it (issue #14)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from conftest import REPO

MODELS = REPO / "models"


@pytest.fixture(scope="module")
def speech_wav(tmp_path_factory):
    """Eight seconds of eSpeak NG speech as a 16-bit WAV."""
    import soundfile as sf

    from rigmind.backend.face.espeak import synthesize

    s = synthesize("We keep going, every day, and we make it better together. " * 2, "en-us", rate=150)
    path = tmp_path_factory.mktemp("speech") / "speech.wav"
    sf.write(path, s.samples, s.sample_rate)
    return path


def test_exported_onnx_files_are_committed_and_small():
    for name in ("gesture.onnx", "face.onnx"):
        p = MODELS / name
        assert p.is_file(), f"{p} missing: export it with python -m rigmind.backend.{name[:-5]}.export_onnx"
        assert p.stat().st_size < 8_000_000


@pytest.mark.skipif(not (MODELS / "gesture.pt").is_file(), reason="no trained gesture weights")
def test_gesture_onnx_matches_torch(speech_wav):
    from rigmind.backend.audio import load_audio
    from rigmind.backend.audio.features import speech_features
    from rigmind.backend.gesture.generate import GestureModel, generate_from_features

    feats = speech_features(load_audio(speech_wav), 30.0)
    ort, pt = GestureModel.load(runtime="onnxruntime"), GestureModel.load(runtime="torch")
    assert ort.net.name == "onnxruntime" and pt.net.name == "torch"
    for k in ("mean", "std", "start_poses"):
        assert np.array_equal(getattr(ort, k), getattr(pt, k))
    a, *_ = generate_from_features(ort, feats, seed=3)
    b, *_ = generate_from_features(pt, feats, seed=3)
    assert a.shape == b.shape
    assert np.abs(a - b).max() < 1e-4


def test_gesture_candidates_side_by_side_match_one_by_one():
    """The beat search decodes a window's candidate draws side by side on
    one-thread sessions; each comes out exactly as the main session gives it."""
    from rigmind.backend.gesture import dims
    from rigmind.backend.gesture.generate import GestureModel
    from rigmind.backend.gesture.representation import POSE_DIM

    net = GestureModel.load(runtime="onnxruntime").net
    rng = np.random.default_rng(0)
    W = dims.WINDOW
    ones = np.ones((1, 1, W), np.float32)
    inputs = [(rng.standard_normal((1, dims.LATENT, W // dims.LATENT_STRIDE)).astype(np.float32),
               rng.standard_normal((1, POSE_DIM, W)).astype(np.float32), ones, ones,
               rng.standard_normal((1, dims.COND_DIM, W)).astype(np.float32)) for _ in range(5)]
    side_by_side = net.many(inputs)
    assert len(side_by_side) == len(inputs)
    for args, y in zip(inputs, side_by_side):
        assert np.array_equal(net(*args), y)


@pytest.mark.skipif(not (MODELS / "face.pt").is_file(), reason="no trained face weights")
def test_face_onnx_matches_torch(speech_wav):
    from rigmind.backend.audio import load_audio
    from rigmind.backend.audio.features import speech_features
    from rigmind.backend.face.model import load_default_model

    feats = speech_features(load_audio(speech_wav), 100.0)
    ort, pt = load_default_model("onnxruntime"), load_default_model("torch")
    assert ort.runtime == "onnxruntime" and pt.runtime == "torch" and len(pt.nets) == 3
    assert ort.switch_penalty == pt.switch_penalty
    pa, ja = ort.predict_features(feats)
    pb, jb = pt.predict_features(feats)
    assert np.abs(pa - pb).max() < 1e-4 and np.abs(ja - jb).max() < 1e-4
    assert np.array_equal(ort.decode(pa), pt.decode(pb))


_PROBE = """
import sys
from rigmind.cli import main
rc = main(sys.argv[1:])
print("RC", rc, "TORCH" if "torch" in sys.modules else "NO-TORCH",
      "LIBROSA" if "librosa" in sys.modules else "NO-LIBROSA")
"""


def _probe(*args):
    r = subprocess.run([sys.executable, "-c", _PROBE, *map(str, args)], capture_output=True, text=True,
                       timeout=300, cwd=REPO)
    last = [ln for ln in r.stdout.splitlines() if ln.startswith("RC ")]
    assert last, r.stderr[-2000:]
    return last[-1].split()


@pytest.mark.bpy  # a `rigmind` command that loads Blender, in a subprocess
def test_generation_without_runtime_torch_never_imports_torch(tmp_path, speech_wav):
    blend = tmp_path / "m.blend"
    assert _probe("mannequin", "--out", blend)[1] == "0"
    for args in (("gesture", "--audio", speech_wav, "--rig", blend, "--face", "auto", "--out", tmp_path / "g.bvh"),
                 ("face", "--audio", speech_wav, "--out", tmp_path / "f.json"),
                 ("export", "--rig", blend, "--out", tmp_path / "e.bvh"),
                 ("walk", "--rig", blend, "--path", "0,0;4,0", "--out", tmp_path / "w.bvh")):
        rc, torch_state, librosa_state = _probe(*args)[1:]
        assert rc == "0", args
        assert torch_state == "NO-TORCH", f"{args[0]} imported torch"
        assert librosa_state == "NO-LIBROSA", f"{args[0]} imported librosa"
    rc, torch_state, _ = _probe("face", "--audio", speech_wav, "--runtime", "torch", "--out", tmp_path / "t.json")[1:]
    assert rc == "0" and torch_state == "TORCH"  # the probe can see torch when it is asked for


def test_relative_extrema_equals_scipy():
    from scipy.signal import argrelextrema

    from rigmind.backend.gesture.controls import relative_extrema

    rng = np.random.default_rng(0)
    for _ in range(50):
        x = rng.integers(0, 5, 60).astype(float)
        for order in (1, 2, 3):
            for cmp in (np.less, np.greater):
                assert np.array_equal(argrelextrema(x, cmp, order=order)[0], relative_extrema(x, cmp, order))


@pytest.mark.skipif(not (MODELS / "gesture.pt").is_file(), reason="no trained gesture weights")
def test_stale_export_is_not_used_by_default(tmp_path):
    """Retrained weights beside an old export run with torch, not the export."""
    import shutil

    import torch

    from rigmind.backend.gesture.generate import GestureModel

    shutil.copy(MODELS / "gesture.pt", tmp_path / "g.pt")
    shutil.copy(MODELS / "gesture.onnx", tmp_path / "g.onnx")
    assert GestureModel.load(tmp_path / "g.pt").net.name == "onnxruntime"
    blob = torch.load(tmp_path / "g.pt", weights_only=True)
    blob["metadata"] = dict(blob["metadata"], note="retrained")  # another file, same weights hash
    torch.save(blob, tmp_path / "g.pt")
    assert GestureModel.load(tmp_path / "g.pt").net.name == "torch"
    assert GestureModel.load(tmp_path / "g.pt", runtime="onnxruntime").net.name == "onnxruntime"
