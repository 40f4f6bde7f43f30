"""The gesture trainer's beat-following loss (``rigmind train gesture --beat-weight``)."""

from __future__ import annotations

import torch

from rigmind.backend.gesture import representation
from rigmind.backend.gesture.dims import COND_DIM, LATENT, LATENT_STRIDE, WINDOW
from rigmind.backend.gesture.model import build_model
from rigmind.backend.gesture.train import beat_loss

PULSES = (20, 36, 52)


class _Decoder:
    """Decodes to a fixed motion whatever the code: upper-body 6D rotations
    swinging with ``phase`` (speed minima at the swing's turning points)."""

    def __init__(self, turn_at_pulses: bool):
        t = torch.arange(WINDOW, dtype=torch.float32)
        # cos has its turning points (speed 0) at multiples of 16 frames from 4.
        swing = torch.cos((t - 4.0) * torch.pi / 16.0)
        if not turn_at_pulses:
            swing = torch.sin((t - 4.0) * torch.pi / 16.0)  # fastest where the pulses are
        self.y = torch.zeros(1, representation.POSE_DIM, WINDOW)
        self.y[:, :representation.ROT_DIM] = swing

    def encode(self, poses, cond):
        mu = torch.zeros(poses.shape[0], LATENT, WINDOW // LATENT_STRIDE)
        return mu, mu

    def decode(self, z, context, mask, finger_flag, cond):
        return self.y.expand(z.shape[0], -1, -1)


def _batch(n=4):
    poses = torch.zeros(n, representation.POSE_DIM, WINDOW)
    t = torch.arange(WINDOW, dtype=torch.float32)
    # The target swings as fast as the decoders (so their mean speeds match), at another phase.
    poses[:, :representation.ROT_DIM] = torch.cos(t * torch.pi / 16.0 + 1.0)
    mask = torch.zeros(n, 1, WINDOW)
    mask[..., :16] = 1.0
    cond = torch.zeros(n, COND_DIM, WINDOW)
    for p in PULSES:
        cond[:, 0, p] = 1.0
    return [poses, torch.zeros_like(poses), mask, torch.ones(n, 1, WINDOW), cond]


def test_the_dip_is_low_when_the_motion_turns_on_its_pulses_and_high_when_it_rushes_through():
    std = torch.ones(representation.POSE_DIM)
    _, on = beat_loss(_Decoder(turn_at_pulses=True), _batch(), std, 1.0)
    _, off = beat_loss(_Decoder(turn_at_pulses=False), _batch(), std, 1.0)
    assert on["beat_dip"] < 0.2 < 1.2 < off["beat_dip"]


def test_the_loss_is_finite_and_reaches_the_decoder_on_a_real_model():
    torch.manual_seed(0)
    model = build_model(0, channels=16, blocks=4)
    loss, parts = beat_loss(model, _batch(), torch.ones(representation.POSE_DIM), 0.5)
    loss.backward()
    assert torch.isfinite(loss) and set(parts) == {"beat_dip", "beat_energy", "beat_jolt"}
    assert model.dec_out.weight.grad is not None and model.dec_out.weight.grad.abs().sum() > 0


def test_jitter_between_the_pulses_does_not_lower_the_dip_and_raises_the_jolt():
    std = torch.ones(representation.POSE_DIM)
    clean = _Decoder(turn_at_pulses=True)
    shaky = _Decoder(turn_at_pulses=True)
    t = torch.arange(WINDOW)
    far = torch.stack([(t - p).abs() > 3 for p in PULSES]).all(0) & (t >= 16)
    shaky.y = shaky.y.clone()
    shaky.y[:, :representation.ROT_DIM, far] += 0.3 * (-1.0) ** t[far]
    _, a = beat_loss(clean, _batch(), std, 1.0)
    _, b = beat_loss(shaky, _batch(), std, 1.0)
    assert b["beat_dip"] >= a["beat_dip"] - 1e-6 and b["beat_jolt"] > a["beat_jolt"]
