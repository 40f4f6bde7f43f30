"""The one way RigMind reads a model file (``.pt`` weights, ``.onnx`` graphs).

- ``torch.load`` always with ``weights_only=True``: a ``.pt`` is a pickle,
  and only the restricted unpickler cannot run code. Torch's own message for
  a file that needs more suggests ``weights_only=False`` -- the unsafe fix --
  so it is never passed on: the user sees one line naming the file.
- The committed models are checked against ``models/MANIFEST.sha256``
  (``sha256sum`` format: ``HEX  NAME``) before they are read; a mismatch is a
  :class:`ModelFileError` naming the file. A user's weights folder (the
  add-on's Locomotion Weights Folder, ``rigmind walk --weights``) is checked
  against its own ``MANIFEST.sha256`` when it has one.
- A file that cannot be read (truncated, not a model, a pickle with code,
  a damaged ``.onnx``) or whose weights do not fit the network (wrong shapes,
  missing layers) is a :class:`ModelFileError` (a UserError: one line, the
  file and the fix), never a traceback.

Training that writes into ``models/`` records the new file's hash with
:func:`record` so the manifest stays true. What a ``.pt`` holds (the one
checkpoint layout, its weights hash) is :mod:`.checkpoint`'s. Imports neither torch nor
onnxruntime until a file is read.
"""

from __future__ import annotations

import contextlib
import hashlib
from pathlib import Path

from .atomic_write import replaced
from .errors import UserError
from . import paths

#: The package's committed models.
MODELS_DIR = paths.MODELS_DIR
MANIFEST_NAME = "MANIFEST.sha256"
#: The suffixes of model files the manifest covers.
MODEL_SUFFIXES = (".pt", ".onnx")


class ModelFileError(UserError):
    """A model file that is damaged, replaced, not a RigMind model, or does
    not fit the network. The message is one line naming the file and the fix."""


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


def _why_unreadable(e: BaseException) -> str:
    """Why torch could not read a file, in RigMind's words (never Torch's
    message: it recommends ``weights_only=False``)."""
    import pickle

    text = str(e)
    if isinstance(e, pickle.UnpicklingError) or "weights_only" in text or "Unsupported global" in text:
        return "it holds Python objects or code, not plain weights, and RigMind never runs code from a weights file"
    if "zip" in text.lower() or isinstance(e, EOFError):
        return "it is truncated or not a PyTorch weights file"
    return "it is not a PyTorch weights file RigMind can read"


def load_torch(path, what: str = "model") -> dict:
    """``torch.load(path, weights_only=True)`` on the CPU after
    :func:`verify`; a dict, or :class:`ModelFileError` with one line."""
    import torch

    import warnings

    path = verify(path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Torch's notes on odd pickles: the error below says it all
            blob = torch.load(str(path), map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise
    except Exception as e:  # noqa: BLE001 - any failure to unpickle is the file's, and Torch's text must not show
        raise ModelFileError(f"{path}: cannot be read as {what} weights: {_why_unreadable(e)}; "
                             "replace it with a file RigMind wrote") from None
    if not isinstance(blob, dict):
        raise ModelFileError(f"{path}: not a RigMind {what} file (it holds a {type(blob).__name__}, not a checkpoint)")
    return blob


@contextlib.contextmanager
def fitting(path, what: str = "model"):
    """Around building a network from a file's contents: a missing key, a
    wrong shape or type (``load_state_dict``'s RuntimeError) becomes one
    line naming the file. Not for committed models: their hash matched, so
    such a failure is a bug in the code and shows as one."""
    if is_committed(path):
        yield
        return
    try:
        yield
    except (KeyError, TypeError, ValueError, RuntimeError, AttributeError, IndexError) as e:
        if isinstance(e, UserError):
            raise
        kind = "wrong shapes or layer names" if isinstance(e, RuntimeError) else f"{type(e).__name__}: {str(e)[:80]}"
        raise ModelFileError(f"{path}: its contents do not fit RigMind's {what} ({kind}); "
                             f"use {what} weights written by this version of RigMind") from None


def onnx_session(path, what: str = "model", options=None, threads: int = 2):
    """An ONNX Runtime CPU session for ``path`` after :func:`verify`;
    ``options`` (an ``ort.SessionOptions``) or, by default, ``threads``
    intra-op threads whose idle workers sleep instead of spinning (the
    process goes on with other work on the same cores)."""
    import onnxruntime as ort

    path = verify(path)
    if options is None:
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        return ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
    except FileNotFoundError:
        raise
    except Exception:  # noqa: BLE001 - ONNX Runtime raises its own classes for a bad graph
        if not Path(path).is_file():
            raise FileNotFoundError(f"no {what} file at {path}") from None
        raise ModelFileError(f"{path}: not a valid ONNX {what} graph (damaged or another file); "
                             "replace it with a file RigMind exported") from None
