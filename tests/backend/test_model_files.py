"""One loader for every model file (backend/model_files/, issue #17 item 4):
the committed models match models/MANIFEST.sha256, a changed one is refused
naming the file, a bad user file is one line that never suggests
``weights_only=False``, and every load site goes through the loader."""

from __future__ import annotations

import os
import pickle
import re
import shutil
import subprocess

import pytest
import torch

from conftest import REPO, CodePayload
from rigmind.backend.model_files import ModelFileError
from rigmind.backend.model_files.loading import load_torch, onnx_session
from rigmind.backend.model_files.manifest import MANIFEST_NAME, MODELS_DIR, MODEL_SUFFIXES, file_sha256, read_manifest, record, verify, write_manifest


def _committed_models() -> set:
    r = subprocess.run(["git", "ls-files", "models"], capture_output=True, text=True, cwd=REPO)
    if r.returncode != 0 or not r.stdout.strip():
        pytest.skip("not a git checkout: the committed model list is unknown")
    return {os.path.basename(p) for p in r.stdout.split() if p.endswith(MODEL_SUFFIXES)}


def test_manifest_lists_exactly_the_committed_models_with_their_hashes():
    manifest = read_manifest(MODELS_DIR)
    assert set(manifest) == _committed_models()
    for name, digest in manifest.items():
        assert file_sha256(MODELS_DIR / name) == digest, f"models/{name} does not match MANIFEST.sha256"


def test_committed_models_verify():
    for name in read_manifest(MODELS_DIR):
        assert verify(MODELS_DIR / name) == MODELS_DIR / name


@pytest.fixture
def package_models(tmp_path, monkeypatch):
    """A copy of models/ standing in for the package's, so a file can be changed."""
    folder = tmp_path / "models"
    folder.mkdir()
    for name in ("locomotion.pt", "locomotion.onnx", MANIFEST_NAME):
        shutil.copy(MODELS_DIR / name, folder / name)
    monkeypatch.setattr("rigmind.backend.model_files.manifest.MODELS_DIR", folder)
    return folder


def test_a_changed_committed_model_is_refused_naming_it(package_models):
    from rigmind.backend.locomotion.controller import LocomotionController

    LocomotionController.load(package_models / "locomotion.pt", engine="torch")  # unchanged: loads
    with open(package_models / "locomotion.pt", "r+b") as f:
        f.seek(-10, os.SEEK_END)
        f.write(b"0123456789")
    with pytest.raises(ModelFileError) as e:
        LocomotionController.load(package_models / "locomotion.pt", engine="torch")
    msg = str(e.value)
    assert "locomotion.pt" in msg and "does not match" in msg and "MANIFEST.sha256" in msg and "\n" not in msg


def test_an_unlisted_file_in_models_is_refused(package_models):
    shutil.copy(package_models / "locomotion.onnx", package_models / "stray.onnx")
    with pytest.raises(ModelFileError, match="stray.onnx: not listed in"):
        onnx_session(package_models / "stray.onnx")


def test_training_into_models_records_the_new_hash(package_models):
    path = package_models / "new.pt"
    torch.save({"format": "x", "w": torch.zeros(2)}, path)
    record(path)
    assert read_manifest(package_models)["new.pt"] == file_sha256(path)
    assert load_torch(path)["format"] == "x"
    # Elsewhere (a folder without a manifest) nothing is written.
    other = package_models.parent / "elsewhere"
    other.mkdir()
    torch.save({"w": torch.zeros(1)}, other / "a.pt")
    record(other / "a.pt")
    assert not (other / MANIFEST_NAME).exists()


@pytest.mark.parametrize("kind", ["pickle-with-code", "zip-garbage", "empty", "plain-pickle", "text", "list"])
def test_bad_pt_is_one_safe_line(tmp_path, kind):
    path = tmp_path / "w.pt"
    marker = tmp_path / "code_ran"
    if kind == "pickle-with-code":
        torch.save({"state": CodePayload(marker)}, path, pickle_module=pickle)
    elif kind == "zip-garbage":
        path.write_bytes(b"PK\x03\x04" + b"\x00" * 300)
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "plain-pickle":
        path.write_bytes(pickle.dumps(CodePayload(marker)))
    elif kind == "text":
        path.write_text("weights, honest\n")
    else:
        torch.save([1, 2], path)
    with pytest.raises(ModelFileError) as e:
        load_torch(path, "test")
    msg = str(e.value)
    assert str(path) in msg and "\n" not in msg
    assert "weights_only" not in msg and "False" not in msg
    assert not marker.exists(), "loading a weight file must never run code"


@pytest.mark.parametrize("kind", ["garbage", "empty", "truncated"])
def test_bad_onnx_is_one_line(tmp_path, kind):
    path = tmp_path / "m.onnx"
    good = (MODELS_DIR / "locomotion.onnx").read_bytes()
    path.write_bytes({"garbage": b"\x08\x07not a graph" * 50, "empty": b"", "truncated": good[: len(good) // 3]}[kind])
    with pytest.raises(ModelFileError) as e:
        onnx_session(path, "locomotion model")
    assert str(path) in str(e.value) and "\n" not in str(e.value)


def test_wrong_shapes_in_a_user_file_are_one_line(tmp_path):
    from rigmind.backend.locomotion.controller import LocomotionController

    from rigmind.backend.model_files import checkpoint

    # A well-formed checkpoint (its hash matches) of another network size.
    ck = checkpoint.load(MODELS_DIR / "locomotion.pt", "locomotion")
    key = next(k for k, v in ck.weights.items() if v.ndim == 2)
    ck.weights[key] = torch.zeros(2, 2)
    checkpoint.save(tmp_path / "locomotion.pt", "locomotion", config=ck.config, weights=ck.weights, arrays=ck.arrays,
            metadata=ck.metadata)
    with pytest.raises(ModelFileError, match="wrong shapes or layer names"):
        LocomotionController.load(tmp_path / "locomotion.pt", engine="torch")


def test_a_user_folder_with_a_manifest_is_checked(tmp_path):
    shutil.copy(MODELS_DIR / "locomotion.onnx", tmp_path / "locomotion.onnx")
    write_manifest(tmp_path, {"locomotion.onnx": file_sha256(tmp_path / "locomotion.onnx")})
    onnx_session(tmp_path / "locomotion.onnx")
    write_manifest(tmp_path, {"locomotion.onnx": "0" * 64})
    with pytest.raises(ModelFileError, match="does not match"):
        onnx_session(tmp_path / "locomotion.onnx")


def test_every_model_load_goes_through_the_loader():
    """No torch.load / InferenceSession outside backend/model_files/loading.py in the
    shipped tree (tests, bench and training-time readers of data aside)."""
    pattern = re.compile(r"(?<!`)(torch\.load\(|InferenceSession\()")
    offenders = []
    for folder in ("backend", "operators", "blender_addon"):
        for path in (REPO / folder).rglob("*.py"):
            if path == REPO / "backend" / "model_files" / "loading.py":
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                code = line.split("#")[0]
                if pattern.search(code) and not code.strip().startswith(("\"", "'", "(``")):
                    offenders.append(f"{path.relative_to(REPO)}:{n}: {line.strip()}")
    for path in (REPO / "cli.py", REPO / "batch.py", REPO / "demo.py"):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line.split("#")[0]):
                offenders.append(f"{path.name}:{n}: {line.strip()}")
    assert not offenders, "\n".join(offenders)
