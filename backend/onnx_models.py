"""What the gesture and face models share in ONNX Runtime: a CPU session
that leaves the cores to the rest of the process between calls, and the
metadata stamped into an exported graph. (The SHA-256 that ties an export to
the ``.pt`` weights it came from is ``model_files.file_sha256``: a
re-saved or retrained checkpoint is a new file, so its old export is stale.)
Imports
neither torch nor bpy."""

from __future__ import annotations

from pathlib import Path


def cpu_session(path, threads: int = 2):
    """An ``onnxruntime.InferenceSession`` on the CPU with ``threads``
    intra-op threads. Idle pool threads sleep instead of spinning: the
    process goes on with other work (retargeting, the other model) on the
    same 2 cores."""
    from .model_files import onnx_session

    return onnx_session(path, threads=threads)


def stamp_and_install(tmp, onnx_path, meta: dict) -> Path:
    """Add ``meta`` (str → str) to the exported graph at ``tmp`` as metadata
    properties, then move it over ``onnx_path``."""
    import onnx

    proto = onnx.load(str(tmp))
    for k, v in meta.items():
        e = proto.metadata_props.add()
        e.key, e.value = k, v
    onnx.save(proto, str(tmp))
    Path(tmp).replace(onnx_path)
    from .model_files import record

    record(onnx_path)
    return Path(onnx_path)
