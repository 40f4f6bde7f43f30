"""The one way RigMind reads a model file (``.pt`` weights, ``.onnx`` graphs).

- ``torch.load`` always with ``weights_only=True``: a ``.pt`` is a pickle,
  and only the restricted unpickler cannot run code. Torch's own message for
  a file that needs more suggests ``weights_only=False`` -- the unsafe fix --
  so it is never passed on: the user sees one line naming the file.
- Every file is checked against its folder's manifest first
  (:func:`.manifest.verify`).
- A file that cannot be read (truncated, not a model, a pickle with code,
  a damaged ``.onnx``) or whose weights do not fit the network (wrong shapes,
  missing layers) is a :class:`~rigmind.backend.model_files.ModelFileError`
  (a UserError: one line, the file and the fix), never a traceback.

What a ``.pt`` holds (the one checkpoint layout, its weights hash) is
:mod:`.checkpoint`'s. Imports neither torch nor onnxruntime until a file is
read.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from ..errors import UserError
from . import ModelFileError
from .manifest import is_committed, verify


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


def onnx_session(path, what: str = "model", options=None, threads: int = 2, *, spin_within_runs: bool = False):
    """An ONNX Runtime CPU session for ``path`` after :func:`verify`;
    ``options`` (an ``ort.SessionOptions``) or, by default, ``threads``
    intra-op threads whose idle workers sleep instead of spinning (the
    process goes on with other work on the same cores). With
    ``spin_within_runs`` the workers spin between the operators of one run
    and stop when it ends: for a model run many times in a row on small
    inputs, where waking the workers for each operator is a fair share of
    a run, with nothing else of the process running beside it."""
    import onnxruntime as ort

    path = verify(path)
    if options is None:
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spin_within_runs else "0")
        if spin_within_runs:
            options.add_session_config_entry("session.force_spinning_stop", "1")
    try:
        return ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
    except FileNotFoundError:
        raise
    except Exception:  # noqa: BLE001 - ONNX Runtime raises its own classes for a bad graph
        if not Path(path).is_file():
            raise FileNotFoundError(f"no {what} file at {path}") from None
        raise ModelFileError(f"{path}: not a valid ONNX {what} graph (damaged or another file); "
                             "replace it with a file RigMind exported") from None


def cpu_session(path, threads: int = 2):
    """:func:`onnx_session` for the gesture and face models: an ONNX Runtime
    CPU session with ``threads`` intra-op threads whose idle workers sleep
    instead of spinning (the process goes on with other work, retargeting or
    the other model, on the same cores)."""
    return onnx_session(path, threads=threads)
