"""One checkpoint format for every model (issue #16): each model kind's own
writer and reader round-trip through :mod:`rigmind.backend.model_files.checkpoint`; a
file whose weights were edited, an old layout, another kind or a newer
version is one line naming the file and the fix; the committed models are
all in the format."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from rigmind.backend.model_files import checkpoint
from rigmind.backend.model_files import ModelFileError
from rigmind.backend.model_files.manifest import MODELS_DIR
from rigmind.backend.errors import UserError


def _same_state(a: dict, b: dict):
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].dtype == b[k].dtype and torch.equal(a[k], b[k]), k


def _blob(path) -> dict:
    return torch.load(str(path), map_location="cpu", weights_only=True)


def _check_layout(path, kind):
    blob = _blob(path)
    assert (blob["format"], blob["version"], blob["kind"]) == (checkpoint.FORMAT, checkpoint.VERSION, kind)
    assert blob["weights_sha256"] == checkpoint.weights_sha256(blob["weights"], blob["arrays"])
    json.dumps(blob["config"]), json.dumps(blob["metadata"])
    assert set(blob["metadata"]["written"]) >= {"date", "git_commit"}


def test_face_round_trip(tmp_path):
    from rigmind.backend.face import model as FM

    torch.manual_seed(0)
    net = FM.build_network(15, hidden=8)
    meta = {"n_classes": 15, "hidden": 8, "seed": 4, "steps": 3}
    FM.save_model(net, meta, tmp_path / "f.pt", trained_on="somewhere")
    _check_layout(tmp_path / "f.pt", "face")
    m = FM.load_model(tmp_path / "f.pt")
    assert m.meta == meta
    half = {k: v.half().float() if v.is_floating_point() else v for k, v in net.state_dict().items()}
    _same_state(m.nets[0].state_dict(), half)


def test_gesture_round_trip(tmp_path):
    from rigmind.backend.gesture import model as TM, train as GT
    from rigmind.backend.gesture.generate import GestureModel

    torch.manual_seed(0)
    net = TM.GestureVAE(channels=16, blocks=4)
    rng = np.random.default_rng(0)
    f32 = lambda *s: rng.normal(size=s).astype(np.float32)  # noqa: E731
    arrays = {"mean": f32(7), "std": f32(7), "finger_basis": {"mean": f32(5), "components": f32(3, 5)},
              "energy_map": {"weights": f32(4), "rest_energy": 0.123456789}, "beat_rate": 2.0 / 3.0,
              "start_poses": f32(2, 7)}
    log = {"seed": 1, "steps": 2, "train_seconds": 0.5, "paired_train_minutes": 1.0, "unpaired_minutes": 0.0}
    GT.save(tmp_path / "g.pt", net, arrays, log)
    _check_layout(tmp_path / "g.pt", "gesture")
    m = GestureModel.load(tmp_path / "g.pt", runtime="torch")
    _same_state(m.net.net.state_dict(), net.state_dict())
    assert np.array_equal(m.mean, arrays["mean"]) and np.array_equal(m.start_poses, arrays["start_poses"])
    assert np.array_equal(m.finger_basis["components"], arrays["finger_basis"]["components"])
    assert m.energy_map["rest_energy"] == 0.123456789 and m.beat_rate == 2.0 / 3.0
    assert m.info == log


def test_motion_encoder_round_trip(tmp_path):
    from rigmind.backend.gesture import motion_encoder

    torch.manual_seed(0)
    enc = motion_encoder.MotionEncoder(dim=4, hidden=8)
    motion_encoder.save_encoder(tmp_path / "e.pt", enc, {"steps": np.int64(3), "feat_mean": np.zeros(2)})
    _check_layout(tmp_path / "e.pt", "gesture-motion-encoder")
    enc2, stats = motion_encoder.load_encoder(tmp_path / "e.pt")
    _same_state(enc2.state_dict(), enc.state_dict())
    assert stats == {"steps": 3, "feat_mean": [0.0, 0.0]}


def test_locomotion_round_trip(tmp_path):
    from rigmind.backend.locomotion import features, model as M, vector_layout, train as TR

    model = M.build_model(M.make_config(hidden=32))
    skeleton = {"names": list(features.BANDAI_NAMES), "parents": [-1] * 22, "offsets": [[0.0] * 3] * 22, "source": "x"}
    starts = {"normal": torch.arange(vector_layout.POSE_SIZE + vector_layout.CONTACT_SIZE, dtype=torch.float32)}
    parts = TR.make_checkpoint(model, skeleton, starts, {"seed": 0}, train_config={"seed": 0, "steps": 1})
    checkpoint.save(tmp_path / "l.pt", "locomotion", **parts)
    _check_layout(tmp_path / "l.pt", "locomotion")
    ck = TR.load_checkpoint(tmp_path / "l.pt")
    _same_state(ck["state_dict"], model.state_dict())
    assert torch.equal(ck["start_poses"]["normal"], starts["normal"])
    assert ck["skeleton"] == skeleton and ck["config"] == dict(model.config)
    assert ck["metadata"]["train_config"] == {"seed": 0, "steps": 1}


def test_style_classifier_round_trip(tmp_path):
    from rigmind.backend.locomotion import style_classifier

    torch.manual_seed(0)
    a = style_classifier.StyleClassifier(style_classifier._build_net(5, 2), ("normal", "elderly"), np.arange(5.0) / 3, np.ones(5), 30, 10,
                           {"seed": 0})
    a.save(tmp_path / "c.pt")
    _check_layout(tmp_path / "c.pt", "style-classifier")
    b = style_classifier.StyleClassifier.load(tmp_path / "c.pt")
    _same_state(b.net.state_dict(), a.net.state_dict())
    assert np.array_equal(b.mean, a.mean) and b.mean.dtype == np.float64 and b.info == {"seed": 0}


def _small(path, kind="face"):
    return checkpoint.save(path, kind, config={"n": 1}, weights={"w": torch.arange(6.0).reshape(2, 3)},
                   arrays={"mean": torch.ones(3, dtype=torch.float64)}, metadata={"note": "t"})


def test_tampered_weights_are_one_line(tmp_path):
    path = _small(tmp_path / "m.pt")
    assert checkpoint.load(path, "face").config == {"n": 1}
    for group in ("weights", "arrays"):
        blob = _blob(path)
        t = blob[group]["w" if group == "weights" else "mean"]
        t.view(-1)[0] += 1e-6
        torch.save(blob, tmp_path / "bad.pt")
        with pytest.raises(UserError) as e:
            checkpoint.load(tmp_path / "bad.pt", "face")
        msg = str(e.value)
        assert str(tmp_path / "bad.pt") in msg and "SHA-256" in msg and "retrain" in msg and "\n" not in msg


@pytest.mark.parametrize("old", [
    {"state": {"w": torch.zeros(2)}, "meta": {"n_classes": 15}},                       # face before #16
    {"format": "rigmind-locomotion-mann", "version": 1, "state_dict": {}},             # locomotion before #16
    {"format": "rigmind-motion-encoder", "version": 1, "state_dict": {}},              # motion encoder before #16
])
def test_old_layout_names_the_file_and_the_fix(tmp_path, old):
    torch.save(old, tmp_path / "old.pt")
    with pytest.raises(ModelFileError) as e:
        checkpoint.load(tmp_path / "old.pt", "locomotion")
    msg = str(e.value)
    assert str(tmp_path / "old.pt") in msg and "older layout" in msg and "\n" not in msg
    assert "rigmind train locomotion" in msg and "convert_checkpoints.py" in msg


def test_other_kind_and_newer_version(tmp_path):
    path = _small(tmp_path / "m.pt", "gesture")
    with pytest.raises(ModelFileError, match="a 'gesture' checkpoint, not a face one"):
        checkpoint.load(path, "face")
    blob = _blob(path)
    blob["version"] = checkpoint.VERSION + 1
    torch.save(blob, tmp_path / "new.pt")
    with pytest.raises(ModelFileError, match="newer than this RigMind reads"):
        checkpoint.load(tmp_path / "new.pt", "gesture")


def test_save_is_atomic_and_checks_plain_data(tmp_path):
    _small(tmp_path / "m.pt")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.pt"]
    with pytest.raises(TypeError, match="JSON-able"):
        checkpoint.save(tmp_path / "x.pt", "face", config={"bad": object()}, weights={})
    with pytest.raises(ValueError, match="unknown checkpoint kind"):
        checkpoint.save(tmp_path / "x.pt", "nope", config={}, weights={})
    assert not (tmp_path / "x.pt").exists()


def test_weights_hash_ignores_the_pickle():
    w = {"a": torch.arange(4.0), "b": torch.ones(2, 2, dtype=torch.float16)}
    assert checkpoint.weights_sha256(w, {}) == checkpoint.weights_sha256(dict(reversed(list(w.items()))), {})
    assert checkpoint.weights_sha256(w, {}) != checkpoint.weights_sha256({"a": w["a"].double(), "b": w["b"]}, {})
    assert checkpoint.weights_sha256(w, {}) != checkpoint.weights_sha256({}, w)


@pytest.mark.parametrize("name,kind", [("face.pt", "face"), ("face_seed1.pt", "face"), ("face_seed2.pt", "face"),
                                       ("gesture.pt", "gesture"), ("locomotion.pt", "locomotion"),
                                       ("gesture_motion_encoder.pt", "gesture-motion-encoder")])
def test_committed_models_are_in_the_format(name, kind):
    path = MODELS_DIR / name
    if not path.is_file():
        pytest.skip(f"models/{name} not present")
    _check_layout(path, kind)
    assert checkpoint.load(path, kind).weights
    assert path.stat().st_size < 10e6
