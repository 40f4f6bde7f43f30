"""Export the trained gesture decoder to ONNX (``models/gesture.onnx``).

Only the decoder runs at generation time; the encoder (training only) is
left out. Inputs (float32, batch 1, one window): ``z [1, LATENT,
WINDOW / LATENT_STRIDE]``, ``context [1, POSE_DIM, WINDOW]``, ``mask [1, 1,
WINDOW]``, ``finger_flag [1, 1, WINDOW]``, ``cond [1, COND_DIM, WINDOW]``;
output ``poses [1, POSE_DIM, WINDOW]`` (normalised). The normalisation,
finger basis, energy map, beat rate and start poses ride along as JSON in
the model's ``metadata_props``, so ONNX Runtime generation needs no torch.

    python -m rigmind.backend.gesture.export_onnx [models/gesture.pt [out.onnx]]
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np


def export_onnx(pt_path=None, onnx_path=None) -> Path:
    import torch

    from . import dims
    from ..model_files.manifest import file_sha256
    from ..model_files.onnx_export import stamp_and_install
    from .generate import DEFAULT_WEIGHTS, FORMAT, GestureModel
    from .representation import POSE_DIM

    pt_path = Path(pt_path or DEFAULT_WEIGHTS)
    onnx_path = Path(onnx_path) if onnx_path else pt_path.with_suffix(".onnx")
    gm = GestureModel.load(pt_path, runtime="torch")
    net = gm.net.net

    class Decoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.net = net

        def forward(self, z, context, mask, finger_flag, cond):
            return self.net.decode(z, context, mask, finger_flag, cond)

    W = dims.WINDOW
    args = (torch.zeros(1, dims.LATENT, W // dims.LATENT_STRIDE), torch.zeros(1, POSE_DIM, W), torch.zeros(1, 1, W),
            torch.ones(1, 1, W), torch.zeros(1, dims.COND_DIM, W))
    tmp = onnx_path.with_name(onnx_path.name + ".tmp")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation notice
        torch.onnx.export(Decoder().eval(), args, str(tmp), opset_version=17, dynamo=False,
                          input_names=["z", "context", "mask", "finger_flag", "cond"], output_names=["poses"],
                          do_constant_folding=True)
    arrays = {"mean": gm.mean, "std": gm.std, "finger_mean": gm.finger_basis["mean"],
              "finger_components": gm.finger_basis["components"], "energy_weights": gm.energy_map["weights"],
              "start_poses": gm.start_poses}
    meta = {
        "rigmind_format": FORMAT,
        "rigmind_arrays": json.dumps({k: np.asarray(v, np.float32).tolist() for k, v in arrays.items()}),
        "rigmind_scalars": json.dumps({"rest_energy": float(gm.energy_map["rest_energy"]), "beat_rate": float(gm.beat_rate)}),
        "rigmind_train": json.dumps(gm.info),
        "rigmind_source": pt_path.name,
        "rigmind_source_sha256": file_sha256(pt_path),
    }
    return stamp_and_install(tmp, onnx_path, meta)


if __name__ == "__main__":
    print(export_onnx(*sys.argv[1:3]))
