"""Convert model files from the five layouts before issue #16 to RigMind's one
checkpoint format (:mod:`rigmind.backend.model_files.checkpoint`). A development tool:
it never ships.

    .venv/bin/python tools/convert_checkpoints.py [FILE.pt ...]   # default: models/*.pt

Each file is read with ``weights_only=True``, rewritten in place (atomically)
and read back: every tensor must be bit-identical (``torch.equal``, same
dtype) and every number and string equal, or the file is left as it was.
The package's ``models/MANIFEST.sha256`` is updated (``checkpoint.save``
records each file). An ONNX export stamped with an old file's SHA-256
(``gesture.onnx``: ``rigmind_source_sha256``; ``face.onnx``:
``rigmind_members_sha256``) is re-stamped with the new file's hash only when
the stamp matched the old file, so a stale export stays stale. A file already
in the new format is left alone."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import torch

from rigmind.backend.face import model as face_model
from rigmind.backend.model_files import checkpoint, manifest


def _written(layout: str, old_sha: str) -> dict:
    return dict(checkpoint.provenance(), converted_from={"layout": layout, "sha256": old_sha})


def _face(blob, path):
    meta = dict(blob["meta"])
    config = {k: meta[k] for k in face_model.CONFIG_KEYS if k in meta}
    training = {k: v for k, v in meta.items() if k not in face_model.CONFIG_KEYS}
    return "face", dict(config=config, weights=blob["state"], metadata={"trained_on": None, "training": training})


def _gesture(blob, path):
    arrays = {k: blob[k] for k in ("mean", "std", "finger_mean", "finger_components", "energy_weights", "start_poses")}
    for k in ("rest_energy", "beat_rate"):
        arrays[k] = torch.tensor(float(blob[k]), dtype=torch.float64)
    return "gesture", dict(config=blob["config"], weights=blob["state_dict"], arrays=arrays,
                           metadata={"trained_on": None, "training": dict(blob.get("train", {}))})


def _motion_encoder(blob, path):
    return "gesture-motion-encoder", dict(config=blob["config"], weights=blob["state_dict"],
                                          metadata={"stats": dict(blob.get("stats", {}))})


def _locomotion(blob, path):
    metadata = {"trained_on": None, "io": blob["io"], "skeleton": blob["skeleton"], "training": blob["training"]}
    log = Path(path).with_suffix(".log.json")
    if log.is_file() and "train_config" in json.loads(log.read_text()):
        metadata["train_config"] = json.loads(log.read_text())["train_config"]
    # blob["normalisation"] repeated six state_dict buffers: they stay in the weights.
    for k, v in blob["normalisation"].items():
        assert torch.equal(v, blob["state_dict"][k]), k
    return "locomotion", dict(config=blob["config"], weights=blob["state_dict"], metadata=metadata,
                              arrays={f"start_pose/{k}": v for k, v in blob["start_poses"].items()})


def _style_classifier(blob, path):
    arrays = {k: torch.tensor(blob[k], dtype=torch.float64) for k in ("mean", "std")}
    config = {"styles": list(blob["styles"]), "window": int(blob["window"]), "hop": int(blob["hop"]),
              "in_dim": len(blob["mean"])}
    return "style-classifier", dict(config=config, weights=blob["state"], arrays=arrays,
                                    metadata={"info": dict(blob.get("info") or {})})


def old_layout(blob: dict):
    """(layout name, converter) of an old file's dict, or None when unknown."""
    fmt = blob.get("format")
    if fmt == "rigmind-locomotion-mann":
        return "locomotion-mann v1", _locomotion
    if fmt == "rigmind-motion-encoder":
        return "motion-encoder v1", _motion_encoder
    if isinstance(fmt, str) and "gesture" in fmt:
        return fmt, _gesture
    if set(blob) == {"state", "meta"}:
        return "face {state, meta}", _face
    if {"state", "styles", "mean", "std", "window", "hop"} <= set(blob):
        return "style-classifier {state, styles, ...}", _style_classifier
    return None


def _tensors(x, prefix=""):
    """Every tensor in a nested dict/list, by path."""
    if isinstance(x, torch.Tensor):
        yield prefix, x
    elif isinstance(x, dict):
        for k, v in x.items():
            yield from _tensors(v, f"{prefix}/{k}")


def _check_identical(parts: dict, ck: checkpoint.Checkpoint, path) -> int:
    """Every tensor handed to the writer is bit-identical in the file read
    back; config and metadata equal. Returns the tensor count."""
    n = 0
    for group in ("weights", "arrays"):
        got = getattr(ck, group)
        want = dict(parts.get(group) or {})
        assert set(got) == set(want), (path, group, set(got) ^ set(want))
        for k, v in want.items():
            assert got[k].dtype == v.dtype and torch.equal(got[k], v), (path, group, k)
            n += 1
    assert ck.config == parts["config"], path
    for k, v in parts["metadata"].items():
        assert ck.metadata[k] == v, (path, k)
    return n


def convert(path) -> dict:
    """Convert one file in place; a summary dict."""
    path = Path(path)
    old_sha = manifest.file_sha256(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        blob = torch.load(str(path), map_location="cpu", weights_only=True)
    if blob.get("format") == checkpoint.FORMAT:
        return {"file": str(path), "skipped": "already a rigmind-checkpoint"}
    layout = old_layout(blob)
    if layout is None:
        raise SystemExit(f"{path}: not a RigMind model layout this tool knows")
    name, fn = layout
    kind, parts = fn(blob, path)
    parts["metadata"]["written"] = _written(name, old_sha)
    # Written beside, in a folder without a manifest (checkpoint.save records
    # files saved into models/ itself), checked, then moved over the old file.
    tmp = path.parent / ".converting" / path.name
    checkpoint.save(tmp, kind, **parts)
    n = _check_identical(parts, checkpoint.load(tmp, kind), path)
    tmp.replace(path)
    tmp.parent.rmdir()
    manifest.record(path)
    return {"file": str(path), "kind": kind, "from": name, "tensors_identical": n, "old_sha256": old_sha,
            "new_sha256": manifest.file_sha256(path), "bytes": path.stat().st_size}


def _restamp(onnx_path, key: str, old: dict, new_value) -> str:
    """Rewrite one metadata entry of an ONNX file when it equals ``old``; the graph is untouched."""
    import onnx

    proto = onnx.load(str(onnx_path))
    entry = next((e for e in proto.metadata_props if e.key == key), None)
    if entry is None or entry.value != old:
        return f"{onnx_path.name}: {key} did not match the old weights; left stale"
    entry.value = new_value
    tmp = onnx_path.with_name(onnx_path.name + ".tmp")
    onnx.save(proto, str(tmp))
    tmp.replace(onnx_path)
    manifest.record(onnx_path)
    return f"{onnx_path.name}: {key} re-stamped"


def restamp_exports(done: list) -> list:
    """Re-stamp the committed ONNX exports whose source files were converted."""
    by_name = {Path(d["file"]).name: d for d in done if "kind" in d}
    folder = manifest.MODELS_DIR
    out = []
    g = by_name.get("gesture.pt")
    if g and (folder / "gesture.onnx").is_file():
        out.append(_restamp(folder / "gesture.onnx", "rigmind_source_sha256", g["old_sha256"], g["new_sha256"]))
    members = [by_name.get(face_model.weights_path(s).name) for s in face_model.ENSEMBLE_SEEDS]
    if all(members) and (folder / "face.onnx").is_file():
        old = json.dumps([m["old_sha256"] for m in members])
        out.append(_restamp(folder / "face.onnx", "rigmind_members_sha256", old,
                            json.dumps([m["new_sha256"] for m in members])))
    return out


def main(argv=None) -> int:
    files = [Path(a) for a in (argv if argv is not None else sys.argv[1:])] or sorted(manifest.MODELS_DIR.glob("*.pt"))
    done = [convert(f) for f in files]
    notes = restamp_exports(done)
    print(json.dumps({"converted": done, "onnx": notes}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
