"""Model files: every ``.pt`` and ``.onnx`` RigMind reads or writes goes
through this package.

- :mod:`.manifest`: SHA-256 of a file, ``models/MANIFEST.sha256`` (and a
  user weights folder's own), :func:`~.manifest.verify` before any read and
  :func:`~.manifest.record` after training writes a file.
- :mod:`.loading`: the one loader: ``torch.load(weights_only=True)`` and
  ONNX Runtime CPU sessions, each after ``verify``, failures as one line.
- :mod:`.checkpoint`: the one checkpoint format (config, metadata, weights,
  arrays, weights SHA-256), its atomic writer and checking reader.
- :mod:`.onnx_export`: the metadata stamp on an exported ONNX graph.

:class:`ModelFileError` is here, beside the map, because all four raise it.
Nothing in the package imports torch or onnxruntime until a file is read.
"""

from __future__ import annotations

from ..errors import UserError


class ModelFileError(UserError):
    """A model file that is damaged, replaced, not a RigMind model, or does
    not fit the network. The message is one line naming the file and the fix."""
