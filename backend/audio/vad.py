"""Voice activity with Silero VAD (MIT), run directly through onnxruntime:
the ``silero-vad`` wheel ships the ONNX model, nothing is downloaded.

The model reads 512-sample windows (32 ms at 16 kHz) with 64 samples of
context from the previous window and a recurrent state."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

WINDOW = 512
CONTEXT = 64
HOP_SECONDS = WINDOW / 16000.0


@lru_cache(maxsize=1)
def _session():
    import os

    import importlib.util

    import onnxruntime as ort

    # Find the wheel's model file without importing the package, whose
    # __init__ imports torch (~2 s) for its own torch-based helpers.
    spec = importlib.util.find_spec("silero_vad")
    path = os.path.join(os.path.dirname(spec.origin), "data", "silero_vad.onnx")
    opts = ort.SessionOptions()
    opts.inter_op_num_threads = 1
    opts.intra_op_num_threads = 1
    from ..model_files.loading import onnx_session

    return onnx_session(path, "voice-activity model", options=opts)


def speech_probability(samples: np.ndarray) -> np.ndarray:
    """``samples [N]`` mono 16 kHz → speech probability per 32 ms window ``[ceil(N/512)]``."""
    x = np.asarray(samples, dtype=np.float32)
    n = int(np.ceil(len(x) / WINDOW))
    if n == 0:
        return np.zeros(0, np.float32)
    x = np.pad(x, (CONTEXT, n * WINDOW - len(x)))
    sess = _session()
    state = np.zeros((2, 1, 128), np.float32)
    sr = np.array(16000, dtype=np.int64)
    out = np.empty(n, np.float32)
    for i in range(n):
        chunk = x[i * WINDOW: i * WINDOW + WINDOW + CONTEXT][None]
        p, state = sess.run(None, {"input": chunk, "state": state, "sr": sr})
        out[i] = p[0, 0]
    return out


def speech_mask(samples: np.ndarray, fps: float, n_frames: int, *, threshold: float = 0.5,
                hangover: float = 0.15, probability: np.ndarray = None) -> np.ndarray:
    """Boolean voice activity at ``fps`` for ``n_frames`` frames; short gaps
    (< ``hangover`` s) inside speech are bridged so word pauses don't flicker.
    ``probability``: :func:`speech_probability` of ``samples``, when known."""
    p = speech_probability(samples) if probability is None else probability
    t = (np.arange(n_frames) + 0.5) / fps
    idx = np.clip((t / HOP_SECONDS).astype(int), 0, max(len(p) - 1, 0))
    on = p[idx] > threshold if len(p) else np.zeros(n_frames, bool)
    gap = int(round(hangover * fps))
    if gap > 0 and on.any():
        from ..filters import binary_closing_1d

        on = binary_closing_1d(np.pad(on, gap), 2 * gap + 1)[gap:-gap] | on
    return on
