"""The motion encoder behind our Fréchet gesture distance (FGD).

EMAGE measures FGD with features of a motion autoencoder trained on BEAT2
(``AESKConv_240_100.bin``: 32-frame windows of 55 SMPL-X rotations). We train
our own, smaller one on real motion we hold, on joint *positions*, so it works
for any source that can be posed on the SMPL-X body (BEAT2, the Bandai sets
retargeted to it, our generator's output):

Input
    Windows of ``W = 32`` frames (1.07 s at 30 fps; other rates are resampled
    to 30 fps) of the 22 SMPL-X body joints (pelvis … right_wrist; fingers,
    jaw and eyes excluded), metres, normalised per window:

    * heading: rotated about Z so that the pelvis' left-right axis
      ``left_hip − right_hip``, projected to the ground, is +X at the window's
      first frame (facing direction removed; in SMPL-X's Blender frame the rest
      pose already has left = +X, so it is left unrotated);
    * position: joints 1…21 relative to the pelvis at the same frame (root
      relative); joint 0 holds the pelvis' displacement since the window's
      first frame (weight shifts and steps stay visible, world placement does
      not).

    Features per frame: those 66 coordinates plus their velocities (central
    differences × 30, m/s), 132 channels, standardised with per-channel mean
    and std from the training windows (each std floored at 10% of the mean std
    of its group, positions or velocities, so a channel that barely moves in
    the training data cannot dominate).

Model
    1D convolutions over time: 132 → 64 (k3) → 64 (k4, stride 2) → 64 (k4,
    stride 2) → flatten (64 × 8) → linear → ``D = 32`` features, and a mirrored
    decoder. ~0.17 M parameters (~0.7 MB float32). Trained as a plain
    autoencoder (MSE of the standardised features), Adam, cosine-decayed
    learning rate, left-right mirrored copies of every window added, fixed
    seed: the same data, steps and seed give the same weights.

D = 32 (not EMAGE's 240) because held-out sets are small (a 12-s clip gives
42 windows at stride 8): the covariance needs more samples than dimensions.
Embed with a smaller stride (e.g. 2) for more, overlapping, windows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from .metrics import frechet_distance

ENCODER_FPS = 30.0
WINDOW = 32
STRIDE = 8
N_JOINTS = 22
FEAT_DIM = 32
HIDDEN = 64
IN_CHANNELS = N_JOINTS * 3 * 2

# left/right pairs among the 22 SMPL-X body joints (for mirroring)
_LR_PAIRS = ((1, 2), (4, 5), (7, 8), (10, 11), (13, 14), (16, 17), (18, 19), (20, 21))
_MIRROR = np.arange(N_JOINTS)
for _l, _r in _LR_PAIRS:
    _MIRROR[_l], _MIRROR[_r] = _r, _l


class MotionEncoder(nn.Module):
    """Autoencoder of standardised window features ``[N, W, C]`` (C = 132).

    ``encode(x) -> [N, dim]``; ``forward(x) -> [N, W, C]`` reconstruction.
    The feature mean/std live in buffers ``feat_mean``/``feat_std`` ``[C]`` so
    the state dict alone reproduces :func:`embed`.
    """

    def __init__(self, dim: int = FEAT_DIM, hidden: int = HIDDEN, window: int = WINDOW,
                 in_channels: int = IN_CHANNELS):
        super().__init__()
        if window % 4:
            raise ValueError("window must be a multiple of 4 (two stride-2 layers)")
        self.dim, self.hidden, self.window, self.in_channels = dim, hidden, window, in_channels
        t = window // 4
        act = lambda: nn.LeakyReLU(0.2)  # noqa: E731
        self.enc = nn.Sequential(
            nn.Conv1d(in_channels, hidden, 3, padding=1), act(),
            nn.Conv1d(hidden, hidden, 4, stride=2, padding=1), act(),
            nn.Conv1d(hidden, hidden, 4, stride=2, padding=1), act(),
        )
        self.to_z = nn.Linear(hidden * t, dim)
        self.from_z = nn.Linear(dim, hidden * t)
        self.dec = nn.Sequential(
            act(),
            nn.ConvTranspose1d(hidden, hidden, 4, stride=2, padding=1), act(),
            nn.ConvTranspose1d(hidden, hidden, 4, stride=2, padding=1), act(),
            nn.Conv1d(hidden, in_channels, 3, padding=1),
        )
        self.register_buffer("feat_mean", torch.zeros(in_channels))
        self.register_buffer("feat_std", torch.ones(in_channels))

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        h = self.enc(x.transpose(1, 2))                 # [N, hidden, W/4]
        return self.to_z(h.flatten(1))

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        h = self.from_z(z).view(len(z), self.hidden, self.window // 4)
        return self.dec(h).transpose(1, 2)              # [N, W, C]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.decode(self.encode(x))

    def config(self) -> dict:
        return {"dim": self.dim, "hidden": self.hidden, "window": self.window,
                "in_channels": self.in_channels}


# --- windows and features -----------------------------------------------------------


def _resample(p: np.ndarray, fps: float, target: float = ENCODER_FPS) -> np.ndarray:
    """Linear resampling in time of ``[T, ...]`` from ``fps`` to ``target``."""
    if abs(float(fps) - target) < 1e-6 or len(p) < 2:
        return p
    dur = (len(p) - 1) / float(fps)
    n = int(math.floor(dur * target + 1e-9)) + 1
    t = np.arange(n) / target * float(fps)              # in source frames
    i0 = np.clip(np.floor(t).astype(int), 0, len(p) - 2)
    w = (t - i0).reshape((-1,) + (1,) * (p.ndim - 1))
    return p[i0] * (1.0 - w) + p[i0 + 1] * w


def windows(positions: np.ndarray, fps: float = ENCODER_FPS, W: int = WINDOW,
            stride: int = STRIDE) -> np.ndarray:
    """Normalised windows ``[N, W, 22, 3]`` (metres) of one clip.

    ``positions [T, J, 3]``, J ≥ 22 in SMPL-X order (only the first 22 body
    joints are used), Blender frame (Z up), at ``fps`` (resampled to 30).
    Windows start every ``stride`` frames (at 30 fps) and lie wholly inside the
    clip: ``N = (T30 − W) // stride + 1``, 0 for a clip shorter than W.
    Per window: heading removed (left_hip − right_hip on the ground → +X at its
    first frame), joints 1…21 relative to the pelvis per frame, joint 0 the
    pelvis' displacement from its first-frame position.
    """
    p = np.asarray(positions, dtype=np.float64)
    if p.ndim != 3 or p.shape[1] < N_JOINTS or p.shape[2] != 3:
        raise ValueError(f"positions must be [T, >=22, 3] SMPL-X joints, got {p.shape}")
    p = _resample(p[:, :N_JOINTS], fps)
    T = len(p)
    if T < W:
        return np.zeros((0, W, N_JOINTS, 3))
    starts = np.arange(0, T - W + 1, stride)
    win = np.stack([p[s:s + W] for s in starts])        # [N, W, 22, 3]
    pelvis = win[:, :, :1]                              # [N, W, 1, 3]
    rel = win - pelvis                                  # root relative per frame
    rel[:, :, 0] = win[:, :, 0] - win[:, :1, 0]         # pelvis: displacement in window
    lr = win[:, 0, 1] - win[:, 0, 2]                    # [N, 3] left_hip - right_hip
    ang = np.arctan2(lr[:, 1], lr[:, 0])                # heading of the hip axis
    c, s = np.cos(-ang), np.sin(-ang)
    rot = np.zeros((len(win), 3, 3))
    rot[:, 0, 0], rot[:, 0, 1], rot[:, 1, 0], rot[:, 1, 1], rot[:, 2, 2] = c, -s, s, c, 1.0
    return np.einsum("nab,nwjb->nwja", rot, rel)


def window_features(win: np.ndarray) -> np.ndarray:
    """``[N, W, 22, 3]`` windows → ``[N, W, 132]``: positions (m) then
    velocities (m/s at 30 fps, ``np.gradient`` along time), unstandardised."""
    win = np.asarray(win, dtype=np.float64)
    n, w = win.shape[:2]
    if n == 0:
        return np.zeros((0, w, IN_CHANNELS))
    vel = np.gradient(win, 1.0 / ENCODER_FPS, axis=1)
    return np.concatenate([win.reshape(n, w, -1), vel.reshape(n, w, -1)], axis=-1)


def _mirror(win: np.ndarray) -> np.ndarray:
    """Left-right mirror of normalised windows: x → −x, left/right joints swapped."""
    m = win[:, :, _MIRROR].copy()
    m[..., 0] *= -1.0
    return m


def _feature_stats(feats: np.ndarray) -> tuple:
    flat = feats.reshape(-1, feats.shape[-1])
    mean = flat.mean(axis=0)
    std = flat.std(axis=0)
    half = feats.shape[-1] // 2
    for sl in (slice(0, half), slice(half, None)):   # positions, velocities
        floor = 0.1 * max(float(std[sl].mean()), 1e-6)
        std[sl] = np.maximum(std[sl], floor)
    return mean, std


# --- training, saving, embedding ----------------------------------------------------


@dataclass(frozen=True)
class EncoderTrainConfig:
    """The motion encoder's training run (see :func:`train_encoder`)."""

    #: Optimiser steps (Adam, cosine decay to 5 % of ``lr``).
    steps: int = 2000
    #: Seed of the weights and the batch sampler.
    seed: int = 0
    #: Frame rate of the training positions (one rate for all).
    fps: float = ENCODER_FPS
    #: Embedding size and hidden width of the autoencoder.
    dim: int = FEAT_DIM
    hidden: int = HIDDEN
    #: Frames between training windows.
    stride: int = STRIDE
    #: Windows per batch and the peak learning rate.
    batch: int = 64
    lr: float = 1e-3
    #: Add each window's left-right mirror.
    mirror: bool = True


def train_encoder(positions_list, config: EncoderTrainConfig = EncoderTrainConfig(), *, progress=None):
    """Train a :class:`MotionEncoder` on real motion; returns ``(enc, stats)``.

    ``positions_list``: ``[T, J, 3]`` arrays (metres, SMPL-X order, J ≥ 22) at
    ``config.fps`` (one rate for all; resample others first or call per rate).
    ``stats`` is a plain dict (``feat_mean``/``feat_std`` lists of 132 floats,
    window/stride/fps/dim, the number of training windows, the final loss) for
    :func:`save_encoder`. Deterministic for a given ``seed`` (torch's global RNG
    is left as it was); ``progress(step, loss)`` is called every 100 steps.
    """
    cfg = config
    steps, seed, dim, hidden, stride, lr = cfg.steps, cfg.seed, cfg.dim, cfg.hidden, cfg.stride, cfg.lr
    wins = [windows(p, cfg.fps, WINDOW, stride) for p in positions_list]
    win = np.concatenate([w for w in wins if len(w)], axis=0) if any(len(w) for w in wins) else None
    if win is None or len(win) < 2:
        raise ValueError(f"need at least two {WINDOW}-frame windows of motion to train on")
    if cfg.mirror:
        win = np.concatenate([win, _mirror(win)], axis=0)
    feats = window_features(win)
    mean, std = _feature_stats(feats)
    x_all = torch.from_numpy(((feats - mean) / std).astype(np.float32))
    rng = np.random.default_rng(seed)
    loss_v = float("nan")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        enc = MotionEncoder(dim=dim, hidden=hidden)
        enc.feat_mean.copy_(torch.from_numpy(mean.astype(np.float32)))
        enc.feat_std.copy_(torch.from_numpy(std.astype(np.float32)))
        opt = torch.optim.Adam(enc.parameters(), lr=lr)
        enc.train()
        for step in range(int(steps)):
            # cosine decay to 5% of lr: quick, stable convergence at few steps
            for g in opt.param_groups:
                g["lr"] = lr * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * step / max(steps, 1))))
            idx = torch.from_numpy(rng.integers(0, len(x_all), size=min(cfg.batch, len(x_all))))
            x = x_all[idx]
            loss = torch.mean((enc(x) - x) ** 2)
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss_v = float(loss.detach())
            if progress is not None and (step % 100 == 0 or step == steps - 1):
                progress(step, loss_v)
        enc.eval()
    stats = {
        "feat_mean": [float(v) for v in mean], "feat_std": [float(v) for v in std],
        "fps": ENCODER_FPS, "window": WINDOW, "stride": int(stride), "joints": N_JOINTS,
        "dim": int(dim), "hidden": int(hidden), "steps": int(steps), "seed": int(seed),
        "train_windows": int(len(win)), "final_loss": loss_v,
    }
    return enc, stats


def save_encoder(path, enc: MotionEncoder, stats: dict | None = None) -> None:
    """Write a "gesture-motion-encoder" checkpoint (:mod:`..checkpoint`):
    config, weights, and ``stats`` (made plain numbers, strings and lists) as
    its ``metadata["stats"]``."""
    from ..model_files import checkpoint

    plain = {}
    for k, v in (stats or {}).items():
        if isinstance(v, np.ndarray):
            v = v.tolist()
        elif isinstance(v, (np.floating, np.integer)):
            v = v.item()
        plain[str(k)] = v
    checkpoint.save(path, "gesture-motion-encoder", config=enc.config(), weights=enc.state_dict(), metadata={"stats": plain})


def load_encoder(path):
    """Read :func:`save_encoder`'s file (``weights_only=True``); returns
    ``(enc, stats)`` with ``enc`` in eval mode on the CPU."""
    from ..model_files import checkpoint
    from ..model_files.loading import fitting

    ck = checkpoint.load(path, "gesture-motion-encoder")
    with fitting(path, "motion encoder"):
        enc = MotionEncoder(**ck.config)
        enc.load_state_dict(ck.weights)
    enc.eval()
    return enc, dict(ck.metadata.get("stats", {}))


@torch.no_grad()
def embed(enc: MotionEncoder, positions, fps: float = ENCODER_FPS, stride: int = STRIDE) -> np.ndarray:
    """Features ``[N, D]`` (float64) of every window of ``positions``: one
    ``[T, J, 3]`` clip or a list of clips (metres, SMPL-X order, at ``fps``).
    ``N`` = total windows (0 rows when every clip is shorter than 32 frames)."""
    clips = [positions] if isinstance(positions, np.ndarray) and positions.ndim == 3 else list(positions)
    wins = [windows(p, fps, enc.window, stride) for p in clips]
    win = np.concatenate(wins, axis=0) if wins else np.zeros((0, enc.window, N_JOINTS, 3))
    if len(win) == 0:
        return np.zeros((0, enc.dim))
    mean = enc.feat_mean.double().numpy()
    std = enc.feat_std.double().numpy()
    x = torch.from_numpy(((window_features(win) - mean) / std).astype(np.float32))
    was_training = enc.training
    enc.eval()
    out = [enc.encode(x[i:i + 1024]).double().numpy() for i in range(0, len(x), 1024)]
    enc.train(was_training)
    return np.concatenate(out, axis=0)


def frechet_motion_distance(enc: MotionEncoder, positions_a_list, positions_b_list,
                            fps: float = ENCODER_FPS, stride: int = STRIDE) -> float:
    """Fréchet distance between the encoder features of two sets of clips
    (each a ``[T, J, 3]`` array or a list of them, metres, at ``fps``), in
    squared feature units; see :func:`.metrics.frechet_distance`."""
    fa = embed(enc, positions_a_list, fps, stride)
    fb = embed(enc, positions_b_list, fps, stride)
    return frechet_distance(fa, fb)
