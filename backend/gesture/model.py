"""The gesture model: a windowed conditional VAE of 1-D convolutions.

Why this architecture. Paired speech+motion is scarce (one minute here),
real motion is plentiful (an hour of unpaired mocap). A window decoder that
is conditioned on *measurable controls* (beat pulses and energy, which exist
for every clip) learns the motion prior and rhythm alignment from all of it;
the audio-feature channel, present only on paired frames (and dropped at
random), learns what the paired data can add and scales with a full BEAT2.
The latent code (16 dims per 8 frames) makes the output stochastic — the
seed picks the take — and keeps the decoder from averaging gestures away
into a mean pose, which a deterministic regressor does. Convolutions over a
window run in parallel (fast to train on CPUs, ~40 windows for a minute at
inference); overlapping windows conditioned on the previous window's last
frames give minutes of motion without seams.

Measured while choosing the KL weight (``train.BETA``): with β = 0.003 the
posterior carried everything (KL ≈ 3.7 nats per latent entry), the decoder
ignored the controls, and prior samples at inference fell outside what it
had seen (FD 1649 on the speech-only takes); β = 0.05 brought the prior and
the codes together (FD 1044 after 600 steps). Decoding a share of windows
from prior codes ("latent dropout") collapsed the latent and gave near-still
motion (BC 0.04), so it is off by default.

Shapes: tensors are ``[B, C, W]`` (channels first, W frames at 30 fps).
"""

from __future__ import annotations

import torch
from torch import nn

from .dims import AUDIO_DIM, COND_DIM, CONTEXT, LATENT, LATENT_STRIDE, N_DOMAINS, WINDOW  # noqa: F401
from .representation import POSE_DIM


class ResBlock(nn.Module):
    def __init__(self, ch: int, dilation: int):
        super().__init__()
        self.conv1 = nn.Conv1d(ch, ch, 5, padding=2 * dilation, dilation=dilation)
        self.conv2 = nn.Conv1d(ch, ch, 1)
        self.act = nn.GELU()

    def forward(self, x):
        return x + self.conv2(self.act(self.conv1(self.act(x))))


class GestureVAE(nn.Module):
    def __init__(self, channels: int = 160, blocks: int = 8):
        super().__init__()
        self.config = {"channels": channels, "blocks": blocks}
        dil = [1, 2, 4, 8] * (blocks // 4)
        self.audio_proj = nn.Conv1d(AUDIO_DIM, 32, 3, padding=1)
        cond_out = COND_DIM - AUDIO_DIM + 32
        self.enc_in = nn.Conv1d(POSE_DIM + cond_out, channels, 3, padding=1)
        self.enc = nn.Sequential(*[ResBlock(channels, d) for d in dil[:4]])
        self.enc_out = nn.Conv1d(channels, 2 * LATENT, LATENT_STRIDE, stride=LATENT_STRIDE)
        self.dec_in = nn.Conv1d(POSE_DIM + 2 + cond_out + LATENT, channels, 3, padding=1)
        self.dec = nn.Sequential(*[ResBlock(channels, d) for d in dil])
        self.dec_out = nn.Conv1d(channels, POSE_DIM, 3, padding=1)

    def _cond(self, cond):
        audio = cond[:, 4: 4 + AUDIO_DIM]
        return torch.cat([cond[:, :4], self.audio_proj(audio) * cond[:, 2:3], cond[:, 4 + AUDIO_DIM:]], dim=1)

    def encode(self, poses, cond):
        h = self.enc(self.enc_in(torch.cat([poses, self._cond(cond)], dim=1)))
        mu, logvar = self.enc_out(h).chunk(2, dim=1)
        return mu, logvar.clamp(-8, 4)

    def decode(self, z, context, mask, finger_flag, cond):
        """``z [B, LATENT, W/8]``, ``context [B, POSE_DIM, W]`` (known frames, 0
        elsewhere), ``mask [B, 1, W]`` (1 on known frames), ``finger_flag [B, 1, W]``,
        ``cond [B, COND_DIM, W]`` → normalised poses ``[B, POSE_DIM, W]``."""
        zu = torch.repeat_interleave(z, LATENT_STRIDE, dim=2)
        x = torch.cat([context * mask, mask, finger_flag, self._cond(cond), zu], dim=1)
        out = self.dec_out(self.dec(self.dec_in(x)))
        # Known frames pass through: the window continues its context exactly.
        return out * (1 - mask) + context * mask

    def forward(self, poses, context, mask, finger_flag, cond, prior_share: float = 0.0, encoder_view=None):
        """``encoder_view``: what the posterior reads instead of ``poses`` (same
        shape; training's time-jittered copy, :func:`.train.time_jittered`)."""
        mu, logvar = self.encode(poses if encoder_view is None else encoder_view, cond)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        if prior_share > 0:
            # Latent dropout: some windows get a code from the prior, so the
            # decoder must read rhythm and energy from the controls instead
            # of from a posterior that already knows the answer.
            use_prior = (torch.rand(z.shape[0], 1, 1, device=z.device) < prior_share).to(z.dtype)
            z = use_prior * torch.randn_like(z) + (1 - use_prior) * z
        return self.decode(z, context, mask, finger_flag, cond), mu, logvar


def build_model(seed: int = 0, **config) -> GestureVAE:
    torch.manual_seed(seed)
    return GestureVAE(**config)
