"""The trainer's time-jittered view for the posterior (``rigmind train gesture --encoder-jitter``)."""

from __future__ import annotations

import numpy as np
import torch

from rigmind.backend.gesture import representation
from rigmind.backend.gesture.dims import COND_DIM, WINDOW
from rigmind.backend.gesture.model import build_model
from rigmind.backend.gesture.train import time_jittered


def _ramps(n=3, dims=4):
    """Windows ``[n, dims, WINDOW]`` whose value is the frame number: a read at time t + d returns t + d."""
    return np.broadcast_to(np.arange(WINDOW, dtype=np.float32), (n, dims, WINDOW)).copy()


def test_no_jitter_is_the_window_itself():
    P = np.random.default_rng(0).standard_normal((3, 5, WINDOW)).astype(np.float32)
    assert np.allclose(time_jittered(P, 0.0, np.random.default_rng(1)), P, atol=1e-6)


def test_jitter_moves_time_by_about_its_sd_alike_on_every_channel():
    P = _ramps()
    Q = time_jittered(P, 4.0, np.random.default_rng(2))
    offset = Q - P
    assert Q.shape == P.shape and Q.dtype == np.float32
    assert np.allclose(offset, offset[:, :1])          # one warp per window, shared by its channels
    inner = offset[:, 0, 12:-12]                       # away from the clamped ends
    assert 2.0 < inner.std() < 6.0
    assert Q.min() >= 0 and Q.max() <= WINDOW - 1       # reads stay inside the window


def test_the_posterior_reads_the_view_and_the_loss_the_target():
    torch.manual_seed(0)
    model = build_model(0, channels=16, blocks=1)
    P = torch.randn(2, representation.POSE_DIM, WINDOW)
    other = torch.randn_like(P)
    args = (torch.zeros_like(P), torch.zeros(2, 1, WINDOW), torch.ones(2, 1, WINDOW), torch.zeros(2, COND_DIM, WINDOW))
    _, mu_same, _ = model(P, *args)
    _, mu_view, _ = model(P, *args, encoder_view=other)
    _, mu_other, _ = model(other, *args)
    assert torch.allclose(mu_view, mu_other) and not torch.allclose(mu_view, mu_same)
