"""The one checkpoint format every RigMind model is written and read in.

A checkpoint is one ``torch.save`` file holding plain data only, so it is
read with ``weights_only=True`` (:func:`.loading.load_torch`)::

    {"format": "rigmind-checkpoint", "version": 1,
     "kind": "locomotion" | "gesture" | "gesture-motion-encoder" | "face" | "style-classifier" | "tracking",
     "config":   {...},   # JSON-able: what builds the network (its config dataclass / constructor args)
     "metadata": {...},   # JSON-able: training summary, metrics, data, and "written": date + git commit
     "weights":  {name: tensor},   # the network's state_dict
     "arrays":   {name: tensor},   # other numbers the model needs (normalisation, start poses, ...)
     "weights_sha256": hex}        # SHA-256 over weights + arrays (see weights_sha256)

:func:`save` writes it atomically (a temporary file moved over the target)
and records it in its folder's manifest; :func:`load` checks the format,
version and kind, recomputes the weights hash, and turns anything else (an
old layout, a damaged or edited file) into one line naming the file and the
fix (:class:`~rigmind.backend.model_files.ModelFileError`, a UserError)."""

from __future__ import annotations

import datetime
import hashlib
import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from .. import paths
from ..atomic_write import replaced
from . import ModelFileError
from .loading import fitting, load_torch
from .manifest import record

FORMAT = "rigmind-checkpoint"
VERSION = 1
#: The model kinds, and the ``rigmind train`` command that writes each.
KINDS = {
    "locomotion": "rigmind train locomotion",
    "gesture": "rigmind train gesture",
    "gesture-motion-encoder": "rigmind eval gesture --retrain-encoder",
    "face": "rigmind train face",
    "style-classifier": "delete it (the evaluation retrains it)",
    "tracking": "rigmind train track",
}
#: How to convert a file in a layout from before this format: the one-time tool
#: that converted the committed models lives in the history (removed in #26).
CONVERT_HINT = "python tools/convert_checkpoints.py FILE"


@dataclass
class Checkpoint:
    """A loaded checkpoint: ``config`` and ``metadata`` (plain dicts),
    ``weights`` (a state_dict) and ``arrays`` (named tensors), all on the CPU."""

    kind: str
    config: dict
    weights: dict
    arrays: dict = field(default_factory=dict)
    metadata: dict = field(default_factory=dict)
    path: Path = None


def weights_sha256(weights: dict, arrays: dict) -> str:
    """SHA-256 (hex) over every tensor of ``weights`` then ``arrays``, each
    group in sorted name order; per tensor its group, name, dtype and shape,
    then its raw bytes (C order). Independent of pickling, so two files with
    the same numbers have the same hash."""
    h = hashlib.sha256()
    for group, tensors in (("weights", weights), ("arrays", arrays)):
        for name in sorted(tensors):
            t = tensors[name].detach().cpu().contiguous()
            h.update(f"{group}/{name}|{t.dtype}|{tuple(t.shape)}\n".encode())
            h.update(t.numpy().tobytes())
    return h.hexdigest()


def provenance() -> dict:
    """``{"date": UTC ISO time, "git_commit": the checkout's HEAD or None}``:
    when and from which code a checkpoint was written."""
    try:
        commit = subprocess.run(["git", "-C", str(paths.PACKAGE_ROOT), "rev-parse", "HEAD"], capture_output=True,
                                text=True, timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        commit = None
    date = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()
    return {"date": date, "git_commit": commit}


def _plain(value, what: str):
    """``value`` checked to be JSON-able (dicts, lists, str, numbers, bool, None)."""
    try:
        json.dumps(value)
    except (TypeError, ValueError) as e:
        raise TypeError(f"checkpoint {what} must be plain JSON-able data: {e}") from None
    return value


def save(path, kind: str, *, config: dict, weights: dict, arrays: dict = None, metadata: dict = None) -> Path:
    """Write a checkpoint of ``kind`` to ``path`` (atomically), record it in
    its folder's manifest, return the path. ``metadata`` gets a ``"written"``
    entry (:func:`provenance`) unless it has one."""
    import torch

    if kind not in KINDS:
        raise ValueError(f"unknown checkpoint kind {kind!r}; one of {', '.join(KINDS)}")
    weights = {str(k): v.detach().cpu().clone() for k, v in weights.items()}
    arrays = {str(k): v.detach().cpu().clone() for k, v in (arrays or {}).items()}
    metadata = dict(metadata or {})
    metadata.setdefault("written", provenance())
    blob = {"format": FORMAT, "version": VERSION, "kind": kind,
            "config": _plain(dict(config), "config"), "metadata": _plain(metadata, "metadata"),
            "weights": weights, "arrays": arrays, "weights_sha256": weights_sha256(weights, arrays)}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with replaced(path) as tmp:
        torch.save(blob, str(tmp))
    record(path)
    return path


def _fix(kind: str) -> str:
    return f"retrain it ({KINDS[kind]})" if kind in KINDS else "retrain it"


def load(path, kind: str) -> Checkpoint:
    """Read and check a checkpoint of ``kind``; :class:`~rigmind.backend.model_files.ModelFileError`
    (one line: the file, the problem, the fix) for an old layout, another
    kind, a newer version, or weights whose hash does not match."""
    what = kind.replace("-", " ") + " model"
    blob = load_torch(path, what)
    if blob.get("format") != FORMAT:
        raise ModelFileError(f"{path}: not in RigMind's checkpoint format (an older layout, or not a RigMind "
                             f"model); {_fix(kind)}, or convert it with `{CONVERT_HINT}` from a RigMind "
                             f"checkout of commit ea74cdd")
    if not isinstance(blob.get("version"), int) or blob["version"] > VERSION:
        raise ModelFileError(f"{path}: checkpoint version {blob.get('version')!r} is newer than this RigMind "
                                f"reads ({VERSION}); update RigMind or {_fix(kind)}")
    if blob.get("kind") != kind:
        raise ModelFileError(f"{path}: a {blob.get('kind')!r} checkpoint, not a {kind} one; "
                                f"pick the {kind} file or {_fix(kind)}")
    with fitting(path, what):
        weights, arrays = dict(blob["weights"]), dict(blob.get("arrays", {}))
        digest = weights_sha256(weights, arrays)
    if digest != blob.get("weights_sha256"):
        raise ModelFileError(f"{path}: its weights do not match their SHA-256 (the file is damaged or was "
                                f"edited); reinstall RigMind or {_fix(kind)}")
    return Checkpoint(kind, dict(blob["config"]), weights, arrays, dict(blob.get("metadata", {})), Path(path))
