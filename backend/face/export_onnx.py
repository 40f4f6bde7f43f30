"""Export the committed face ensemble to one ONNX graph (``models/face.onnx``).

Every member network and the averaging (mean of log-softmax, softmax; mean
jaw) are in the graph. Input ``x [1, T, 69]`` float32 (any T: the
features at 100 fps); outputs ``posteriors [1, T, V]`` and ``jaw [1, T]``.
The decoding settings (the first member's ``meta``) ride along as JSON in
``metadata_props``.

    python -m rigmind.backend.face.export_onnx [out.onnx]
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path


def export_onnx(onnx_path=None, weights=None) -> Path:
    import torch

    from ..model_files.manifest import file_sha256
    from ..model_files.onnx_export import stamp_and_install
    from .model import DEFAULT_ONNX, IN_DIM, ONNX_FORMAT, default_weights, load_model

    files = list(weights or default_weights())
    if not files:
        raise FileNotFoundError("no face weights under models/: train them with `rigmind train face`")
    fm = load_model(*files)
    onnx_path = Path(onnx_path or DEFAULT_ONNX)

    class Ensemble(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.nets = torch.nn.ModuleList(fm.nets)

        def forward(self, x):
            return fm.ensemble_forward(x)

    tmp = onnx_path.with_name(onnx_path.name + ".tmp")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(Ensemble().eval(), (torch.zeros(1, 200, IN_DIM),), str(tmp), opset_version=17, dynamo=False,
                          input_names=["x"], output_names=["posteriors", "jaw"],
                          dynamic_axes={"x": {1: "T"}, "posteriors": {1: "T"}, "jaw": {1: "T"}},
                          do_constant_folding=True)
    meta = {"rigmind_format": ONNX_FORMAT, "rigmind_meta": json.dumps(fm.meta),
            "rigmind_members": json.dumps([Path(f).name for f in files]),
            "rigmind_members_sha256": json.dumps([file_sha256(f) for f in files])}
    return stamp_and_install(tmp, onnx_path, meta)


if __name__ == "__main__":
    print(export_onnx(*sys.argv[1:2]))
