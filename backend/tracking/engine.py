"""The tracking network at inference: ONNX Runtime on the committed
``models/track.onnx`` (torch on the ``.pt`` as the fallback/engine choice),
plus what the network needs besides its weights (head height, lags)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from .. import paths
from ..model_files import ModelFileError

ONNX_PATH = paths.model_path("track.onnx")
PT_PATH = paths.model_path("track.pt")


class TrackEngine:
    """``engine(x [N, I] float32) -> y [N, O]``; ``head_height`` (m): the
    canonical skeleton's usual head height the inputs are scaled to;
    ``lags``: the frames of its input window (30 fps; negative: the future,
    a model trained with ``rigmind train track --future``)."""

    def __init__(self, path=None, engine: str = "onnxruntime"):
        if engine == "onnxruntime":
            from ..model_files.loading import onnx_session

            path = Path(path or ONNX_PATH)
            if not path.is_file():
                raise ModelFileError(f"no tracking model at {path}: train one with `rigmind train track`")
            self.session = onnx_session(path, "tracking model", threads=1)
            md = self.session.get_modelmeta().custom_metadata_map
            self.config = json.loads(md["rigmind_config"])
            self.head_height = float(json.loads(md["rigmind_head_height"]))
            self._torch = None
        elif engine == "torch":
            from .train import load_model

            self._torch, ck = load_model(path or PT_PATH)
            self.config = ck.config
            self.head_height = float(ck.metadata["training"]["head_height"])
            self.session = None
        else:
            raise ValueError(f"engine must be 'onnxruntime' or 'torch', got {engine!r}")
        self.lags = tuple(int(k) for k in self.config["lags"])

    def __call__(self, x: np.ndarray, batch: int = 4096) -> np.ndarray:
        x = np.ascontiguousarray(x, dtype=np.float32)
        if self.session is not None:
            if len(x) <= batch:  # the live tracker's one row a tick
                return self.session.run(None, {"x": x})[0]
            return np.concatenate([self.session.run(None, {"x": x[i:i + batch]})[0]
                                   for i in range(0, max(len(x), 1), batch)])
        import torch

        with torch.no_grad():
            return self._torch(torch.from_numpy(x)).numpy()


@lru_cache(maxsize=4)
def load_engine(path=None, engine: str = "onnxruntime") -> TrackEngine:
    """A cached :class:`TrackEngine`."""
    return TrackEngine(path, engine)
