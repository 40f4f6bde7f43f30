"""The learned audio → viseme model: a small dilated 1-D conv network over
the shared 100 fps speech features (``SpeechFeatures.stacked()``, 69 dims)
with ±310 ms of context, giving per-frame viseme posteriors (15 classes)
and a jaw-opening regression (0..1). Language-independent input (log-mel,
pitch, energy, voicing), so it runs on any language.

The shipped model is an ensemble of the same network trained with
``ENSEMBLE_SEEDS`` (different synthesised data and initialisation); their
log-posteriors are averaged before decoding. On the validation split an
ensemble made fewer viseme errors than any of its members (see
bench/results/face.md).

Weights: ``models/face.pt`` (seed 0) and ``models/face_seed{N}.pt``
(``torch.load(weights_only=True)``), each written by
``rigmind train face --seed N``."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np
from .. import options, paths

from ..model_files import loading
MODELS_DIR = paths.MODELS_DIR
DEFAULT_WEIGHTS = MODELS_DIR / "face.pt"
IN_DIM = 69
HIDDEN = 128
DILATIONS = (1, 2, 4, 8, 16)
KERNEL = 3
# Viterbi cost of a viseme change (decoding), chosen on the validation split
# (LJ001-0025..0032 held out of a training run; never the evaluation clips).
SWITCH_PENALTY = 4.0
ENSEMBLE_SEEDS = (0, 1, 2)
#: The committed ensemble exported for ONNX Runtime (``python -m rigmind.backend.face.export_onnx``).
DEFAULT_ONNX = MODELS_DIR / "face.onnx"
ONNX_FORMAT = "rigmind-face-ensemble"
#: Inference engines; ONNX Runtime is the default when its export matches
#: the weights (a process that only generates then does not import torch).
RUNTIMES = options.RUNTIMES


def weights_path(seed: int = 0) -> Path:
    """Where ``rigmind train face --seed N`` writes its weights by default."""
    return DEFAULT_WEIGHTS if seed == 0 else MODELS_DIR / f"face_seed{seed}.pt"


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


class OrtEnsemble:
    """The exported ensemble (``models/face.onnx``: every member and the
    averaging in one graph) in ONNX Runtime: ``x [1, T, 69]`` →
    (posteriors ``[1, T, V]``, jaw ``[1, T]``)."""

    name = "onnxruntime"

    def __init__(self, path, threads: int = 2):
        from ..model_files.loading import cpu_session

        self.session = cpu_session(path, threads)
        md = dict(self.session.get_modelmeta().custom_metadata_map)
        if md.get("rigmind_format") != ONNX_FORMAT:
            raise loading.ModelFileError(f"{path} is not a RigMind face model")
        self.meta = json.loads(md["rigmind_meta"])
        self.members_sha256 = json.loads(md.get("rigmind_members_sha256", "[]"))

    def __call__(self, x: np.ndarray):
        post, jaw = self.session.run(None, {"x": np.ascontiguousarray(x, np.float32)[None]})
        return post[0], jaw[0]


class FaceModel:
    """Loaded network(s) + decoding settings. With several networks (an
    ensemble) the posteriors are their normalised geometric mean (average of
    log-probabilities) and the jaw their mean. ``net`` may also be an
    :class:`OrtEnsemble`, which computes the same in ONNX Runtime."""

    def __init__(self, net, meta: dict):
        self.ort = net if isinstance(net, OrtEnsemble) else None
        nets = [] if self.ort is not None else (list(net) if isinstance(net, (list, tuple)) else [net])
        self.nets = [n.eval() for n in nets]
        self.meta = meta
        self.switch_penalty = float(meta.get("switch_penalty", SWITCH_PENALTY))
        self.runtime = "onnxruntime" if self.ort is not None else "torch"

    def ensemble_forward(self, xt):
        """Torch: ``x [1, T, 69]`` → (posteriors ``[1, T, V]``, jaw ``[1, T]``),
        the graph :mod:`.export_onnx` writes."""
        import torch

        logp, jaw = 0.0, 0.0
        for net in self.nets:
            logits, j = net(xt)
            logp = logp + torch.log_softmax(logits, -1)
            jaw = jaw + j
        return torch.softmax(logp / len(self.nets), -1), jaw / len(self.nets)

    def predict_stacked(self, x: np.ndarray):
        """``[T, 69]`` features → (posteriors ``[T, V]``, jaw ``[T]``)."""
        if self.ort is not None:
            return self.ort(x)
        import torch

        xt = torch.from_numpy(np.ascontiguousarray(x, np.float32))[None]
        with torch.inference_mode():
            post, jaw = self.ensemble_forward(xt)
        return post[0].numpy(), jaw[0].numpy()

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


#: The keys of a face model's ``meta`` that build its network; the rest is
#: its training summary (the checkpoint's ``metadata["training"]``).
CONFIG_KEYS = ("n_classes", "hidden")


def save_model(net, meta: dict, path=DEFAULT_WEIGHTS, trained_on: str = None) -> Path:
    """Write ``net`` (float16 weights) and ``meta`` as a "face" checkpoint
    (:mod:`..checkpoint`); ``trained_on``: the data folder."""
    import torch

    from ..model_files import checkpoint

    state = {k: v.detach().to(torch.float16) if v.is_floating_point() else v for k, v in net.state_dict().items()}
    config = {k: meta[k] for k in CONFIG_KEYS if k in meta}
    training = {k: v for k, v in meta.items() if k not in CONFIG_KEYS}
    return checkpoint.save(path, "face", config=config, weights=state, metadata={"trained_on": trained_on, "training": training})


def _load_network(path):
    from ..model_files import checkpoint

    ck = checkpoint.load(path, "face")
    with loading.fitting(path, "face model"):
        meta = {**ck.config, **ck.metadata.get("training", {})}
        net = build_network(int(meta.get("n_classes", 15)), int(meta.get("hidden", HIDDEN)))
        net.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in ck.weights.items()})
    return net, meta


def load_model(*paths) -> FaceModel:
    """One weights file, or several (an ensemble; decoding settings from the
    first). Default: ``models/face.pt``."""
    loaded = [_load_network(p) for p in (paths or (DEFAULT_WEIGHTS,))]
    return FaceModel([n for n, _ in loaded], loaded[0][1])


def default_weights() -> list:
    """The committed ensemble's weights files that are present."""
    return [p for p in (weights_path(s) for s in ENSEMBLE_SEEDS) if p.is_file()]


@lru_cache(maxsize=3)
def _default(runtime):
    files = default_weights()
    if runtime in ("onnxruntime", None) and DEFAULT_ONNX.is_file():
        ens = OrtEnsemble(DEFAULT_ONNX)
        if runtime == "onnxruntime" or not files or _members_match(ens, files):
            return FaceModel(ens, ens.meta)
    return load_model(*files) if files else None


def _members_match(ens, files) -> bool:
    from ..model_files.manifest import file_sha256

    return ens.members_sha256 == [file_sha256(f) for f in files]


def load_default_model(runtime: str = None):
    """The committed model (every member of ``ENSEMBLE_SEEDS`` present under
    models/), or None when none is trained. ``runtime``: "onnxruntime"
    (``models/face.onnx``), "torch" (the ``.pt`` members) or None: ONNX
    Runtime when ``face.onnx`` was exported from the present members (its
    metadata holds their SHA-256), else torch, so retrained members are never
    shadowed by a stale export."""
    if runtime not in RUNTIMES + (None,):
        raise ValueError(f"runtime must be one of {', '.join(RUNTIMES)}, got {runtime!r}")
    return _default(runtime)
