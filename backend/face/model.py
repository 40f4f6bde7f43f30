"""The learned audio → viseme model: a small dilated 1-D conv network over
the shared 100 fps speech features (``SpeechFeatures.stacked()``, 69 dims)
with ±310 ms of context, giving per-frame viseme posteriors (15 classes)
and a jaw-opening regression (0..1). Language-independent input (log-mel,
pitch, energy, voicing), so it runs on any language.

Weights: ``models/face.pt`` (``torch.load(weights_only=True)``), written by
``rigmind train face``."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

MODELS_DIR = Path(__file__).resolve().parents[2] / "models"
DEFAULT_WEIGHTS = MODELS_DIR / "face.pt"
IN_DIM = 69
HIDDEN = 128
DILATIONS = (1, 2, 4, 8, 16)
KERNEL = 3
# Viterbi cost of a viseme change (decoding), chosen on the validation split
# (LJ001-0025..0032 held out of a training run; never the evaluation clips).
SWITCH_PENALTY = 4.0


def build_network(n_classes: int = 15, hidden: int = HIDDEN):
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.conv = nn.Conv1d(hidden, hidden, KERNEL, padding=d * (KERNEL - 1) // 2, dilation=d)
            self.norm = nn.GroupNorm(1, hidden)
            self.mix = nn.Conv1d(hidden, hidden, 1)

        def forward(self, x):
            return x + self.mix(torch.relu(self.norm(self.conv(x))))

    class FaceNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = nn.Conv1d(IN_DIM, hidden, 5, padding=2)
            self.blocks = nn.Sequential(*[Block(d) for d in DILATIONS])
            self.head = nn.Conv1d(hidden, n_classes + 1, 1)

        def forward(self, x):
            """``x [B, T, 69]`` → (viseme logits ``[B, T, V]``, jaw ``[B, T]`` 0..1)."""
            h = self.blocks(torch.relu(self.inp(x.transpose(1, 2))))
            y = self.head(h).transpose(1, 2)
            return y[..., :-1], torch.sigmoid(y[..., -1])

    return FaceNet()


def viterbi(logp: np.ndarray, switch_penalty: float) -> np.ndarray:
    """Best label path through ``logp [T, V]`` with a cost for every change of
    label (suppresses one-frame flickers that would each count as a viseme)."""
    T, V = logp.shape
    score = logp[0].copy()
    back = np.zeros((T, V), np.int16)
    for t in range(1, T):
        best = int(score.argmax())
        stay = score
        jump = score[best] - switch_penalty
        take_jump = jump > stay
        back[t] = np.where(take_jump, best, np.arange(V))
        score = np.where(take_jump, jump, stay) + logp[t]
    path = np.empty(T, np.int64)
    path[-1] = int(score.argmax())
    for t in range(T - 1, 0, -1):
        path[t - 1] = back[t, path[t]]
    return path


class FaceModel:
    """Loaded network + its decoding settings."""

    def __init__(self, net, meta: dict):
        self.net = net.eval()
        self.meta = meta
        self.switch_penalty = float(meta.get("switch_penalty", SWITCH_PENALTY))

    def predict_stacked(self, x: np.ndarray):
        """``[T, 69]`` features → (posteriors ``[T, V]``, jaw ``[T]``)."""
        import torch

        with torch.inference_mode():
            logits, jaw = self.net(torch.from_numpy(np.ascontiguousarray(x, np.float32))[None])
            post = torch.softmax(logits[0], -1).numpy()
        return post, jaw[0].numpy()

    def predict_features(self, feats):
        """``SpeechFeatures`` at 100 fps → (posteriors ``[T, V]``, jaw ``[T]``);
        frames outside voice activity are forced to ``sil``."""
        post, jaw = self.predict_stacked(feats.stacked())
        sp = np.asarray(feats.speech, bool)
        post = post.copy()
        post[~sp] = 0.0
        post[~sp, 0] = 1.0
        return post, jaw * sp

    def decode(self, post: np.ndarray) -> np.ndarray:
        return viterbi(np.log(post + 1e-6), self.switch_penalty)


def save_model(net, meta: dict, path=DEFAULT_WEIGHTS) -> Path:
    import torch

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().to(torch.float16) if v.is_floating_point() else v for k, v in net.state_dict().items()}
    torch.save({"state": state, "meta": meta}, path)
    return path


def load_model(path=DEFAULT_WEIGHTS) -> FaceModel:
    import torch

    blob = torch.load(str(path), map_location="cpu", weights_only=True)
    meta = dict(blob["meta"])
    net = build_network(int(meta.get("n_classes", 15)), int(meta.get("hidden", HIDDEN)))
    net.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in blob["state"].items()})
    return FaceModel(net, meta)


@lru_cache(maxsize=1)
def _default():
    return load_model(DEFAULT_WEIGHTS) if DEFAULT_WEIGHTS.is_file() else None


def load_default_model():
    """The committed model, or None when ``models/face.pt`` is absent."""
    return _default()
