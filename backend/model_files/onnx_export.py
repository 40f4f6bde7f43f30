"""The last step of every ONNX export (locomotion, gesture, face): stamp the
graph's metadata and put it in place, recorded in its folder's manifest.

The metadata ties an export to the ``.pt`` weights it came from (their
SHA-256, :func:`.manifest.file_sha256`): a re-saved or retrained checkpoint
is a new file, so its old export is stale; ``tools/convert_checkpoints.py``
re-stamps an export only when its stamp matched the file it converted.
Imports neither torch nor bpy (onnx only when called).
"""

from __future__ import annotations

from pathlib import Path

from .manifest import record


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
    record(onnx_path)
    return Path(onnx_path)
