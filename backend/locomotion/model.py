"""Mode-adaptive neural network (MANN) for locomotion, in PyTorch.

Zhang, Starke, Komura, Saito, "Mode-Adaptive Neural Networks for Quadruped
Motion Control" (SIGGRAPH 2018): a small *gating network* looks at a few
phase-revealing inputs (foot contacts, foot/hip velocities, root velocity)
and outputs softmax weights over ``K`` experts; the *motion prediction
network* is a 3-layer MLP whose weights are the gating-weighted blend of the
``K`` experts' weights. Layer ``l`` computes
``h = ELU((sum_k a_k W_k) x + sum_k a_k b_k)``.

Two exact rewrites of the same layer are implemented
(:class:`ExpertLinear`): ``"blend"`` forms the blended weight matrix
``einsum("bk,kio->bio", alpha, W)`` over the expert weight tensor (the MANN
formulation; this is what the ONNX graph contains) and ``"mix"`` runs every expert and mixes their
outputs (``sum_k a_k (W_k x + b_k)``, linear in the weights so equal up to
rounding; cheaper for training batches because it never materialises a
weight matrix per sample).

The model works on raw (unnormalised) vectors laid out by :mod:`.vector_layout`:
:meth:`MANN.forward` normalises the input with the stored mean/std, runs the
network and denormalises the output, applying a sigmoid to the contacts.
:meth:`MANN.forward_normalized` is the raw network (contacts as logits) for
the training loss.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from . import vector_layout

#: The real configuration (about 0.85 M parameters, 3.4 MB float32).
DEFAULT_CONFIG = {
    "input_size": vector_layout.INPUT_SIZE,
    "output_size": vector_layout.OUTPUT_SIZE,
    "hidden": 256,
    "experts": 4,
    "gating_hidden": 32,
    "dropout": 0.1,
}


def make_config(**overrides) -> dict:
    """:data:`DEFAULT_CONFIG` with ``overrides`` (unknown keys are an error)."""
    bad = set(overrides) - set(DEFAULT_CONFIG)
    if bad:
        raise KeyError(f"unknown model config keys {sorted(bad)}")
    cfg = dict(DEFAULT_CONFIG, **{k: v for k, v in overrides.items() if v is not None})
    cfg["gating_index"] = list(vector_layout.GATING_INDEX)
    cfg["contacts"] = [vector_layout.OUT["contacts"].start, vector_layout.OUT["contacts"].stop]
    return cfg


def parameter_count(config: dict) -> int:
    """Number of float parameters of a :class:`MANN` with ``config`` (the
    normalisation buffers, 4 x input + 2 x output floats, are added too)."""
    k, h, gh = config["experts"], config["hidden"], config["gating_hidden"]
    i, o, g = config["input_size"], config["output_size"], len(config.get("gating_index", vector_layout.GATING_INDEX))
    experts = k * ((i + 1) * h + (h + 1) * h + (h + 1) * o)
    gating = (g + 1) * gh + (gh + 1) * gh + (gh + 1) * k
    return experts + gating + 4 * i + 2 * o


class ExpertLinear(nn.Module):
    """``K`` linear layers ``in -> out`` blended by per-sample weights.

    ``weight [K, in, out]``, ``bias [K, out]``; ``forward(x [B, in], alpha
    [B, K]) -> [B, out]``. ``mode`` ("mix" or "blend", see the module
    docstring) only changes the order of operations.
    """

    def __init__(self, experts: int, n_in: int, n_out: int):
        super().__init__()
        # MANN's initialisation: uniform in +-sqrt(6 / (in + out)) per expert, zero bias.
        bound = math.sqrt(6.0 / (n_in + n_out))
        self.weight = nn.Parameter(torch.empty(experts, n_in, n_out).uniform_(-bound, bound))
        self.bias = nn.Parameter(torch.zeros(experts, n_out))
        self.mode = "mix"

    def forward(self, x: torch.Tensor, alpha: torch.Tensor) -> torch.Tensor:
        k, n_in, n_out = self.weight.shape
        if self.mode == "blend":
            # einsum("bk,kio->bio", alpha, weight) written as one matmul over the
            # flattened expert weights: the same numbers, but ONNX Runtime runs
            # MatMul + bmm 2.3x faster than its Einsum at batch 1 (0.09 vs 0.21 ms).
            w = (alpha @ self.weight.reshape(k, n_in * n_out)).reshape(-1, n_in, n_out)
            return torch.bmm(x.unsqueeze(1), w).squeeze(1) + alpha @ self.bias
        # All experts in one matmul ([B, in] @ [in, K * out]), then the gated sum.
        y = (x @ self.weight.permute(1, 0, 2).reshape(n_in, k * n_out)).reshape(-1, k, n_out)
        return torch.einsum("bk,bko->bo", alpha, y) + alpha @ self.bias


class MANN(nn.Module):
    """Gating network + expert-blended motion prediction network.

    ``config``: see :func:`make_config` (``input_size``, ``output_size``,
    ``hidden``, ``experts``, ``gating_hidden``, ``dropout``, ``gating_index``,
    ``contacts`` = output slice ``[start, stop]`` of the contact logits).
    Buffers ``x_mean, x_std [input_size]`` and ``y_mean, y_std
    [output_size]`` hold the normalisation (identity until set), ``x_lo,
    x_hi [input_size]`` the normalised input bounds.
    """

    def __init__(self, config: dict):
        super().__init__()
        self.config = dict(config)
        i, o = config["input_size"], config["output_size"]
        h, k, gh = config["hidden"], config["experts"], config["gating_hidden"]
        gidx = config["gating_index"]
        self.register_buffer("gating_index", torch.tensor(gidx, dtype=torch.long))
        self.register_buffer("x_mean", torch.zeros(i))
        self.register_buffer("x_std", torch.ones(i))
        self.register_buffer("y_mean", torch.zeros(o))
        self.register_buffer("y_std", torch.ones(o))
        # Normalised input bounds (the training data's range plus a margin):
        # inputs are clamped to them so a rollout that wanders off cannot
        # feed ever larger values back into itself. Open until set.
        self.register_buffer("x_lo", torch.full((i,), -1e6))
        self.register_buffer("x_hi", torch.full((i,), 1e6))
        self.gating = nn.Sequential(
            nn.Linear(len(gidx), gh), nn.ELU(), nn.Linear(gh, gh), nn.ELU(), nn.Linear(gh, k)
        )
        self.layers = nn.ModuleList([ExpertLinear(k, i, h), ExpertLinear(k, h, h), ExpertLinear(k, h, o)])
        self.drop = nn.Dropout(config.get("dropout", 0.0))
        c0, c1 = config["contacts"]
        mask = torch.zeros(o, dtype=torch.bool)
        mask[c0:c1] = True
        self.register_buffer("contact_mask", mask)

    def set_mode(self, mode: str) -> "MANN":
        """"mix" (training, batches) or "blend" (MANN's weight blending; ONNX)."""
        if mode not in ("mix", "blend"):
            raise ValueError(mode)
        for layer in self.layers:
            layer.mode = mode
        return self

    def set_normalisation(self, x_mean, x_std, y_mean, y_std, x_lo=None, x_hi=None) -> None:
        """Raw = normalised * std + mean; ``x_lo / x_hi``: normalised input bounds."""
        pairs = [("x_mean", x_mean), ("x_std", x_std), ("y_mean", y_mean), ("y_std", y_std), ("x_lo", x_lo), ("x_hi", x_hi)]
        for name, v in pairs:
            if v is not None:
                getattr(self, name).copy_(torch.as_tensor(v, dtype=torch.float32))

    def gate(self, xn: torch.Tensor) -> torch.Tensor:
        """Expert weights ``[B, K]`` (softmax) for normalised inputs ``[B, in]``."""
        return torch.softmax(self.gating(xn.index_select(1, self.gating_index)), dim=-1)

    def forward_normalized(self, xn: torch.Tensor) -> torch.Tensor:
        """Normalised input ``[B, in]`` -> normalised output ``[B, out]``
        (contacts are logits). The input is clamped to ``[x_lo, x_hi]``;
        dropout (training only) precedes every layer."""
        xn = torch.minimum(torch.maximum(xn, self.x_lo), self.x_hi)
        alpha = self.gate(xn)
        h = xn
        for n, layer in enumerate(self.layers):
            h = layer(self.drop(h), alpha)
            if n < len(self.layers) - 1:
                h = nn.functional.elu(h)
        return h

    def normalize_input(self, x: torch.Tensor) -> torch.Tensor:
        return (x - self.x_mean) / self.x_std

    def denormalize_output(self, yn: torch.Tensor) -> torch.Tensor:
        """Raw output from the network's: denormalised, contacts through a sigmoid."""
        return torch.where(self.contact_mask, torch.sigmoid(yn), yn * self.y_std + self.y_mean)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Raw input ``[B, in]`` -> raw output ``[B, out]`` (see :mod:`.vector_layout`)."""
        return self.denormalize_output(self.forward_normalized(self.normalize_input(x)))


def build_model(config: dict = None, seed: int = 0) -> MANN:
    """A freshly initialised model (deterministic for ``seed``; the global
    torch RNG is left as it was)."""
    config = config or make_config()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return MANN(config)


__all__ = ["DEFAULT_CONFIG", "make_config", "parameter_count", "ExpertLinear", "MANN", "build_model"]
