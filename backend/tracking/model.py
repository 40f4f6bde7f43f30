"""The tracking network: an MLP from a one-second causal window of the three
trackers to the body pose of the current frame (see :mod:`.features`).
Normalisation lives inside the network, so the ONNX graph maps raw inputs to
raw outputs (contacts already through a sigmoid)."""

from __future__ import annotations

import torch
from torch import nn


class TrackNet(nn.Module):
    def __init__(self, input_size: int, output_size: int, hidden: int = 512, layers: int = 3, dropout: float = 0.1):
        super().__init__()
        dims = [input_size] + [hidden] * layers
        body = []
        for a, b in zip(dims[:-1], dims[1:]):
            body += [nn.Linear(a, b), nn.ELU(), nn.Dropout(dropout)]
        self.body = nn.Sequential(*body, nn.Linear(hidden, output_size))
        self.register_buffer("x_mean", torch.zeros(input_size))
        self.register_buffer("x_std", torch.ones(input_size))
        self.register_buffer("y_mean", torch.zeros(output_size))
        self.register_buffer("y_std", torch.ones(output_size))

    def normalised(self, x: torch.Tensor) -> torch.Tensor:
        """Normalised outputs (contacts as logits) of raw inputs ``x [N, I]``."""
        return self.body((x - self.x_mean) / self.x_std)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Raw outputs ``[N, O]``: the last two (foot contacts) as probabilities."""
        yn = self.normalised(x)
        y = yn * self.y_std + self.y_mean
        return torch.cat([y[:, :-2], torch.sigmoid(yn[:, -2:])], dim=1)
