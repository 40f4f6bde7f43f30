"""The SHA-256 manifest of model files: what ``models/`` (and a user's
weights folder) must hold before any of it is read.

- The committed models are checked against ``models/MANIFEST.sha256``
  (``sha256sum`` format: ``HEX  NAME``) before they are read; a mismatch is a
  :class:`~rigmind.backend.model_files.ModelFileError` naming the file. A
  user's weights folder (the add-on's Locomotion Weights Folder, ``rigmind
  walk --weights``) is checked against its own ``MANIFEST.sha256`` when it
  has one.
- Training that writes into ``models/`` records the new file's hash with
  :func:`record` so the manifest stays true.

Reading the files themselves is :mod:`.loading`'s job. Imports neither torch
nor onnxruntime.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from .. import paths
from ..atomic_write import replaced
from . import ModelFileError

#: The package's committed models.
MODELS_DIR = paths.MODELS_DIR
MANIFEST_NAME = "MANIFEST.sha256"
#: The suffixes of model files the manifest covers.
MODEL_SUFFIXES = (".pt", ".onnx", ".npz")


def file_sha256(path) -> str:
    """The file's SHA-256 (hex), read once per process for a given path,
    size and modification time: a model loaded again (a batch worker, the
    add-on's next generation, an export's staleness check) is not hashed again
    unless the file changed."""
    path = Path(path)
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _HASHES:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        _HASHES[key] = h.hexdigest()
    return _HASHES[key]


#: (path, size, mtime) -> SHA-256, for :func:`file_sha256`.
_HASHES: dict = {}


def read_manifest(folder) -> dict:
    """``{file name: sha256}`` from ``folder/MANIFEST.sha256`` ({} if absent)."""
    path = Path(folder) / MANIFEST_NAME
    if not path.is_file():
        return {}
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        digest, _, name = line.partition(" ")
        out[name.strip().lstrip("*")] = digest.lower()
    return out


def write_manifest(folder, hashes: dict) -> Path:
    """Write ``{name: sha256}`` as ``folder/MANIFEST.sha256`` (sorted by name)."""
    path = Path(folder) / MANIFEST_NAME
    body = "".join(f"{digest}  {name}\n" for name, digest in sorted(hashes.items()))
    with replaced(path) as tmp:
        tmp.write_text(body, encoding="utf-8")
    return path


def record(path) -> None:
    """After training wrote ``path``: put its hash in its folder's manifest
    (only for the package's ``models/``, or a folder that has a manifest)."""
    path = Path(path)
    folder = path.parent
    if not (_is_package_models(folder) or (folder / MANIFEST_NAME).is_file()):
        return
    hashes = read_manifest(folder)
    hashes[path.name] = file_sha256(path)
    write_manifest(folder, hashes)


def _is_package_models(folder) -> bool:
    try:
        return Path(folder).resolve() == MODELS_DIR.resolve()
    except OSError:
        return False


def is_committed(path) -> bool:
    """Is ``path`` one of the package's committed models (listed in its manifest)?"""
    path = Path(path)
    return _is_package_models(path.parent) and path.name in read_manifest(MODELS_DIR)


def verify(path) -> Path:
    """Check ``path`` against its folder's manifest; return it.

    A model file in the package's ``models/`` must be listed; one in a
    folder with a manifest must match it; elsewhere there is nothing to
    compare with (the file is still read safely)."""
    path = Path(path)
    folder = path.parent
    hashes = read_manifest(folder)
    packaged = _is_package_models(folder)
    if not hashes and not packaged:
        return path
    manifest = folder / MANIFEST_NAME
    want = hashes.get(path.name)
    if want is None:
        if packaged and path.suffix in MODEL_SUFFIXES:
            raise ModelFileError(f"{path}: not listed in {manifest}; a model file RigMind did not ship or train "
                                 "-- remove it, or retrain with `rigmind train` (which records it)")
        return path
    if file_sha256(path) != want:
        raise ModelFileError(f"{path}: its SHA-256 does not match {manifest} (the file is damaged or was replaced); "
                             "reinstall RigMind, or retrain it with `rigmind train`")
    return path
