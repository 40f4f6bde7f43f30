"""Training of the gesture model (:mod:`.model`).

``rigmind train gesture --data DIR`` reads every BEAT2-format paired take
under DIR (the last 20% of each is held out) and the Bandai gesture mocap,
builds per-frame poses (:mod:`.representation`), controls (:mod:`.controls`)
and audio features (three augmented renditions of each paired recording:
clean, noisy at 12 dB SNR, band-limited telephone-like), mirrors every clip
left/right, and trains the window CVAE with Adam:

- each batch holds 64-frame windows, ``PAIRED_SHARE`` of them from paired
  takes (scarce but the target speaker), the rest from unpaired mocap;
- the first 16 frames are given as context (with noise, so the model learns
  to continue its own imperfect output), sometimes a frozen single pose (how
  generation starts), sometimes none;
- the audio channel is dropped on 30% of paired windows so the model also
  works from rhythm and energy alone;
- loss: L1 on normalised poses + L1 on their frame differences (keeps the
  dynamics that beat alignment needs) + β·KL (β ramps to ``BETA``);
  finger dimensions count only where the data has fingers.

Runs on CPU (``--threads``) or under ``torchrun`` with DDP on several GPUs
(``torchrun --nproc_per_node=N -m rigmind train gesture --data BEAT2``): each
rank draws its own windows, gradients are averaged, rank 0 writes the file.
Deterministic for a seed, thread count and step count on one process.
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from .. import rotations
from ..filters import gaussian_filter1d
from . import controls
from . import dataset
from . import model as cvae
from . import representation
from .. import limits, paths

REPO_ROOT = paths.PACKAGE_ROOT
DEFAULT_OUT = paths.model_path("gesture.pt")
DEFAULT_STEPS = 2500
FORMAT = "rigmind-gesture-cvae"
PAIRED_SHARE = 0.4
BETA = 0.05
PRIOR_SHARE = 0.0
AUDIO_RENDITIONS = ("clean", "noisy", "telephone")
BATCH = 32


def _augment(samples: np.ndarray, kind: str, rng) -> np.ndarray:
    from scipy.signal import butter, sosfilt

    if kind == "noisy":
        noise = rng.standard_normal(len(samples)).astype(np.float32)
        noise = sosfilt(butter(2, 4000, "low", fs=16000, output="sos"), noise)
        p = np.mean(samples**2) / (np.mean(noise**2) + 1e-12) / 10 ** (12 / 10)
        return (samples + np.sqrt(p) * noise).astype(np.float32)
    if kind == "telephone":
        return sosfilt(butter(4, [300, 3400], "band", fs=16000, output="sos"), samples).astype(np.float32) * 1.5
    return samples


def _audio_variants(wav, n_frames, rng, kinds=AUDIO_RENDITIONS):
    from ..audio.features import speech_features
    from ..audio.loading import clip_from_array, load_audio

    clip = load_audio(wav)
    out = []
    for kind in kinds:
        f = speech_features(clip_from_array(_augment(clip.samples, kind, rng), 16000), dataset.FPS,
                            with_onsets=False)
        a = f.stacked()
        a = np.pad(a, ((0, max(n_frames - len(a), 0)), (0, 0)), mode="edge")[:n_frames]
        out.append((a, f))
    return out


def clip_entry(take, rot, root, finger_basis, audio=None) -> dict:
    """One clip as training arrays: ``poses [T, POSE_DIM]``, motion ``beats``
    (frames) with their ``pulse [T]`` and ``timing [T, 2]``, ``energy [T]``,
    ``audio`` (a list of ``[T, 69]`` renditions, or None), domain, fingers."""
    pos = dataset.positions(rot, root)
    beats = controls.motion_beat_frames(pos, dataset.FPS)
    return {
        "poses": representation.encode(rot, root, dataset.FPS, finger_basis, take.has_fingers),
        "beats": beats,
        "pulse": controls.pulses(beats, len(rot)),
        "timing": controls.beat_timing(beats, len(rot), dataset.FPS),
        "energy": controls.motion_energy(pos, dataset.FPS),
        "audio": audio,
        "domain": dataset.DOMAINS.index(take.domain),
        "fingers": take.has_fingers,
        "name": take.name,
    }


def build_arrays(corpus: dataset.Corpus, seed: int = 0, log=print) -> dict:
    """Everything training needs as arrays (and what inference needs: the
    finger basis, normalisation, energy map, start poses)."""
    rng = np.random.default_rng(seed)
    paired = corpus.train_paired
    aa = np.concatenate([rotations.to_axis_angle(t.rot[:, representation.finger_index()]).reshape(t.num_frames, -1) for t in paired])
    mir = [representation.mirror_motion(t.rot, t.root)[0] for t in paired]
    aa_m = np.concatenate([rotations.to_axis_angle(m[:, representation.finger_index()]).reshape(len(m), -1) for m in mir])
    fb = representation.fit_finger_basis(np.concatenate([aa, aa_m]))
    log(f"[gesture] finger PCA: {representation.N_FINGER_PCA} components explain {fb['explained']:.1%}")

    clips = []  # clip_entry dicts

    def add(take, rot, root, audio=None):
        clips.append(clip_entry(take, rot, root, fb, audio))
        return clips[-1]

    env_feats, energies, beat_counts, speech_seconds = [], [], 0, 0.0
    for t in paired:
        variants = _audio_variants(t.audio, t.num_frames, rng)
        original = add(t, t.rot, t.root, [v[0] for v in variants])
        add(t, *representation.mirror_motion(t.rot, t.root), [v[0] for v in variants])
        f = variants[0][1]
        n = min(t.num_frames, f.num_frames)
        env_feats.append(controls.audio_envelope_features(f)[:n])
        energies.append(original["energy"][:n])
        speech = f.speech[:n]
        beats = original["beats"]
        beat_counts += int(np.sum(speech[np.clip(beats, 0, n - 1)]))
        speech_seconds += speech.sum() / dataset.FPS
    for t in corpus.unpaired:
        for rot, root in ((t.rot, t.root), representation.mirror_motion(t.rot, t.root)):
            add(t, rot, root)
    energy_map = controls.fit_energy_map(env_feats, energies)
    beat_rate = beat_counts / max(speech_seconds, 1e-6)
    log(f"[gesture] {len(clips)} clips (mirrored), {sum(len(c['poses']) for c in clips) / dataset.FPS / 60:.1f} min; "
        f"energy map r={energy_map['r']:.2f}; motion beats {beat_rate:.2f}/s of speech")

    allp = np.concatenate([c["poses"] for c in clips])
    mean, std = allp.mean(0), allp.std(0)
    fp = np.concatenate([c["poses"] for c in clips if c["fingers"]])
    mean[representation.FINGER_SLICE], std[representation.FINGER_SLICE] = fp[:, representation.FINGER_SLICE].mean(0), fp[:, representation.FINGER_SLICE].std(0)
    std = np.maximum(std, 1e-2)
    starts = np.concatenate([c["poses"] for c in clips if c["domain"] == 0])
    pick = rng.choice(len(starts), 8, replace=False)
    return {"clips": clips, "finger_basis": fb, "mean": mean.astype(np.float32), "std": std.astype(np.float32),
            "energy_map": energy_map, "beat_rate": float(beat_rate), "start_poses": starts[pick].astype(np.float32)}


def _cond(clip, a, b, rng, drop_audio):
    W = b - a
    cond = np.zeros((cvae.COND_DIM, W), np.float32)
    cond[0] = clip["pulse"][a:b]
    cond[1] = clip["energy"][a:b]
    if clip["audio"] is not None and not drop_audio:
        feats = clip["audio"][rng.integers(len(clip["audio"]))][a:b]
        cond[2] = 1.0
        cond[3] = feats[:, -1]
        cond[4: 4 + cvae.AUDIO_DIM] = feats.T
    cond[4 + cvae.AUDIO_DIM + clip["domain"]] = 1.0
    cond[-2:] = clip["timing"][a:b].T
    return cond


def sample_batch(arrays, rng, batch=BATCH):
    clips = arrays["clips"]
    paired = [i for i, c in enumerate(clips) if c["audio"] is not None]
    unpaired = [i for i, c in enumerate(clips) if c["audio"] is None and len(c["poses"]) > cvae.WINDOW]
    W, Cx = cvae.WINDOW, cvae.CONTEXT
    P = np.zeros((batch, representation.POSE_DIM, W), np.float32)
    ctx = np.zeros_like(P)
    mask = np.zeros((batch, 1, W), np.float32)
    fflag = np.zeros((batch, 1, W), np.float32)
    cond = np.zeros((batch, cvae.COND_DIM, W), np.float32)
    for k in range(batch):
        pool = paired if (rng.random() < PAIRED_SHARE or not unpaired) else unpaired
        c = clips[pool[rng.integers(len(pool))]]
        a = rng.integers(0, len(c["poses"]) - W)
        x = (c["poses"][a:a + W] - arrays["mean"]) / arrays["std"]
        P[k] = x.T
        fflag[k] = float(c["fingers"])
        u = rng.random()
        if u < 0.8:
            mask[k, :, :Cx] = 1
            ctx[k, :, :Cx] = x[:Cx].T + rng.normal(0, 0.05, (representation.POSE_DIM, Cx))
        elif u < 0.9:
            mask[k, :, :Cx] = 1
            ctx[k, :, :Cx] = x[:1].T
        cond[k] = _cond(c, a, a + W, rng, drop_audio=rng.random() < 0.3)
    if not fflag.all():
        ctx[:, representation.FINGER_SLICE] *= fflag
    return [torch.from_numpy(v) for v in (P, ctx, mask, fflag, cond)]


def _upper_speed(y, std):
    """``[B, W - 1]``: frame-to-frame change of the upper-body joints' 6D
    rotations (unnormalised by ``std [POSE_DIM]``), the speed the beat loss reads."""
    dims = _UPPER_DIMS.to(y.device)
    d = (y[:, dims, 1:] - y[:, dims, :-1]) * std[dims][None, :, None]
    return (d.pow(2).sum(1) + 1e-8).sqrt()


_UPPER_DIMS = torch.tensor([representation.BODY.index(j) * 6 + k for j in representation.UPPER for k in range(6)])


def _peak_accel(y, std, k: int = 3):
    """``[B]``: mean of the ``k`` largest frame-to-frame changes of
    :func:`_upper_speed`'s rotation velocity (its second difference) per window."""
    dims = _UPPER_DIMS.to(y.device)
    d = y[:, dims] * std[dims][None, :, None]
    a = ((d[..., 2:] - 2 * d[..., 1:-1] + d[..., :-2]).pow(2).sum(1) + 1e-8).sqrt()
    return a.topk(min(k, a.shape[1]), dim=1).values.mean(1)


def beat_loss(model, batch, std, share: float, accel_weight: float = 0.0):
    """Beat following (``GestureTrainConfig.beat_weight``): the first ``share``
    of the windows decoded from *prior* codes, as at inference, scored by
    (a) their upper-body speed on the pulse frames ÷ the target's mean speed
    (below 1: the motion slows into the beats it is given), (b) the squared log
    ratio of their mean speed to the target's (so slowing everywhere does
    not pay) and (c), times ``accel_weight``, the squared log ratio of their
    peak acceleration to the target's where it is larger (stopping into a
    beat by a jolt does not pay either). Returns ``(loss, parts)``."""
    P, ctx, mask, fflag, cond = batch
    k = max(1, int(round(share * P.shape[0])))
    P, ctx, mask, fflag, cond = P[:k], ctx[:k], mask[:k], fflag[:k], cond[:k]
    mu, _ = model.encode(P, cond)
    y = model.decode(torch.randn_like(mu), ctx, mask, fflag, cond)
    gen = (1 - mask[:, 0, 1:])                           # generated frames
    v, v_ref = _upper_speed(y, std), _upper_speed(P, std)
    pulse = cond[:, 0, 1:] * gen
    mean_v = (v * gen).sum(1) / gen.sum(1).clamp(min=1)
    at_pulse = (v * pulse).sum(1) / pulse.sum(1).clamp(min=1e-6)
    has = (pulse.sum(1) > 0.5).to(v.dtype)
    ref = (v_ref * gen).sum(1) / gen.sum(1).clamp(min=1)
    # Over the target's mean speed, not the window's own: a window's own mean
    # can be raised by jitter between the pulses, which lowers the ratio too.
    dip = (has * at_pulse / (ref + 1e-6)).sum() / has.sum().clamp(min=1)
    energy = (torch.log(mean_v + 1e-6) - torch.log(ref + 1e-6)).pow(2).mean()
    jolt = torch.relu(torch.log(_peak_accel(y, std) + 1e-6) - torch.log(_peak_accel(P, std) + 1e-6)).pow(2).mean()
    parts = {"beat_dip": float(dip.detach()), "beat_energy": float(energy.detach()), "beat_jolt": float(jolt.detach())}
    return dip + energy + accel_weight * jolt, parts


def time_jittered(P: np.ndarray, frames: float, rng) -> np.ndarray:
    """Windows ``P [B, D, W]`` each read at times ``t + d(t)``: ``d`` a smooth
    random offset (Gaussian noise smoothed over σ 6 frames, scaled to an SD
    of ``frames``), linear between frames, clamped to the window."""
    B, _, W = P.shape
    d = gaussian_filter1d(rng.standard_normal((B, W)), 6.0, axis=1)
    d *= frames / np.maximum(d.std(axis=1, keepdims=True), 1e-9)
    src = np.clip(np.arange(W)[None] + d, 0, W - 1)
    i0 = np.floor(src).astype(int)
    i1 = np.minimum(i0 + 1, W - 1)
    u = (src - i0)[:, None, :].astype(np.float32)
    take = lambda i: np.take_along_axis(P, np.broadcast_to(i[:, None, :], P.shape), axis=2)  # noqa: E731
    return (1 - u) * take(i0) + u * take(i1)


def loss_fn(model, batch, beta, prior_share: float = 0.0, encoder_view=None):
    P, ctx, mask, fflag, cond = batch
    # Context frames are targets too (the pass-through makes them exact), so
    # the loss is taken on the generated frames only.
    y, mu, logvar = model(P, ctx, mask, fflag, cond, prior_share, encoder_view)
    w = (1 - mask).expand_as(P).clone()
    w[:, representation.FINGER_SLICE] *= fflag
    rec = (w * (y - P).abs()).sum() / w.sum().clamp(min=1)
    dv = (y[..., 1:] - y[..., :-1]) - (P[..., 1:] - P[..., :-1])
    vel = (w[..., 1:] * dv.abs()).sum() / w[..., 1:].sum().clamp(min=1) * 4.0
    kl = (-0.5 * (1 + logvar - mu.pow(2) - logvar.exp())).mean()
    return rec + vel + beta * kl, {"rec": float(rec.detach()), "vel": float(vel.detach()), "kl": float(kl.detach())}


def _ddp():
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return None
    import torch.distributed as dist

    backend = "nccl" if torch.cuda.is_available() else "gloo"
    dist.init_process_group(backend)
    return dist


@dataclass(frozen=True)
class GestureTrainConfig:
    """The gesture model's training run (``rigmind train gesture``)."""

    #: Optimiser steps (batches of :data:`BATCH` windows).
    steps: int = DEFAULT_STEPS
    #: Seed of the model's initial weights, the batch sampler and the audio renditions.
    seed: int = 0
    #: Torch CPU threads (the weights are bit-identical for one seed and thread count).
    threads: int = 2
    #: Also train on the unpaired Bandai gesture mocap (motion prior, no speech).
    with_unpaired: bool = True
    #: Width and depth of the convolutional CVAE.
    channels: int = 160
    blocks: int = 8
    #: AdamW peak learning rate (100-step warm-up, cosine decay).
    lr: float = 1e-3
    #: KL weight, reached over the first 30 % of the steps.
    beta: float = BETA
    #: Share of windows decoded from a prior code (latent dropout).
    prior_share: float = PRIOR_SHARE
    #: Weight of :func:`beat_loss` (0: off, the committed model's training).
    beat_weight: float = 0.0
    #: Share of each batch :func:`beat_loss` decodes from prior codes.
    beat_share: float = 0.25
    #: Weight, inside :func:`beat_loss`, of its peak-acceleration term.
    beat_accel_weight: float = 0.0
    #: SD (frames) of the random time warp of what the posterior reads
    #: (:func:`time_jittered`; 0: it reads the target as it is). The codes then
    #: cannot carry where the speed minima fall, so the decoder must take
    #: their timing from the beat pulses, which are exact.
    encoder_jitter: float = 0.0


def train_gesture(data_dir, out=DEFAULT_OUT, config: GestureTrainConfig = GestureTrainConfig(), *, log=print) -> dict:
    """Train and write ``out`` (a ``weights_only``-loadable dict). Returns the log dict."""
    cfg = config
    steps, seed, threads, beta, prior_share = cfg.steps, cfg.seed, cfg.threads, cfg.beta, cfg.prior_share
    dist = _ddp()
    rank = dist.get_rank() if dist else 0
    world = dist.get_world_size() if dist else 1
    device = torch.device(f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}" if dist and torch.cuda.is_available() else "cpu")
    torch.set_num_threads(max(int(threads), 1))
    torch.use_deterministic_algorithms(True, warn_only=True)
    t0 = time.time()
    corpus = dataset.load_corpus(data_dir, with_unpaired=cfg.with_unpaired)
    arrays = build_arrays(corpus, seed, log=log if rank == 0 else (lambda *a: None))
    t_data = time.time() - t0
    model = cvae.build_model(seed, channels=cfg.channels, blocks=cfg.blocks).to(device)
    net = model
    if dist:
        from torch.nn.parallel import DistributedDataParallel

        net = DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
    opt = torch.optim.AdamW(net.parameters(), lr=cfg.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 100) * 0.5 * (1 + math.cos(math.pi * s / steps)))
    rng = np.random.default_rng(seed + 1000 * rank)
    torch.manual_seed(seed + 1000 * rank)
    val_rng = np.random.default_rng(12345)
    val_arrays = dict(arrays)
    val_arrays["clips"] = _heldout_clips(corpus, arrays)
    val_batch = sample_batch(val_arrays, val_rng, 64) if val_arrays["clips"] else None
    std_t = torch.from_numpy(arrays["std"]).to(device)
    curve, t_train = [], time.time()
    jitter_rng = np.random.default_rng([seed, rank, 17])
    for step in range(steps):
        beta_now = beta * min(1.0, step / (0.3 * steps))
        batch = [b.to(device) for b in sample_batch(arrays, rng)]
        view = None
        if cfg.encoder_jitter > 0:
            view = torch.from_numpy(time_jittered(batch[0].cpu().numpy(), cfg.encoder_jitter, jitter_rng)).to(device)
        loss, parts = loss_fn(net, batch, beta_now, prior_share, view)
        if cfg.beat_weight > 0:
            bl, bparts = beat_loss(model, batch, std_t, cfg.beat_share, cfg.beat_accel_weight)
            loss = loss + cfg.beat_weight * bl
            parts.update(bparts)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
        sched.step()
        if rank == 0 and (step % 100 == 0 or step == steps - 1):
            entry = {"step": step, "loss": float(loss.detach()), **parts, "seconds": round(time.time() - t_train, 1)}
            if val_batch is not None:
                model.eval()
                with torch.no_grad():
                    vl, vp = loss_fn(model, [b.to(device) for b in val_batch], beta)
                model.train()
                entry["val_rec"] = vp["rec"]
                entry["val_vel"] = vp["vel"]
                if cfg.beat_weight > 0:
                    with torch.no_grad():
                        vb = beat_loss(model, [b.to(device) for b in val_batch], std_t, 1.0)[1]
                    entry["val_beat_dip"], entry["val_beat_jolt"] = vb["beat_dip"], vb["beat_jolt"]
            curve.append(entry)
            log(f"[gesture] step {step:5d}  loss {entry['loss']:.4f}  rec {parts['rec']:.4f}  vel {parts['vel']:.4f}  "
                f"kl {parts['kl']:.3f}  val_rec {entry.get('val_rec', float('nan')):.4f}  "
                f"beat_dip {parts.get('beat_dip', float('nan')):.3f}/{entry.get('val_beat_dip', float('nan')):.3f}  "
                f"jolt {parts.get('beat_jolt', float('nan')):.3f}/{entry.get('val_beat_jolt', float('nan')):.3f}  "
                f"{entry['seconds']:.0f}s")
    train_log = {
        "format": FORMAT, "seed": seed, "steps": steps, "beta": beta, "prior_share": prior_share, "threads": threads, "world_size": world,
        "device": str(device), "data_seconds": round(t_data, 1), "train_seconds": round(time.time() - t_train, 1),
        "paired_train_minutes": round(sum(t.num_frames for t in corpus.train_paired) / dataset.FPS / 60, 2),
        "unpaired_minutes": round(sum(t.num_frames for t in corpus.unpaired) / dataset.FPS / 60, 2),
        "energy_map_r": arrays["energy_map"]["r"], "beat_rate": arrays["beat_rate"],
        "finger_pca_explained": arrays["finger_basis"]["explained"], "curve": curve,
        "parameters": int(sum(p.numel() for p in model.parameters())),
        "train_config": asdict(cfg),
    }
    if rank == 0:
        save(out, model.cpu(), arrays, train_log, trained_on=str(data_dir))
        Path(out).with_suffix(".log.json").write_text(json.dumps(train_log, indent=1))
        log(f"[gesture] wrote {out} ({Path(out).stat().st_size / 1e6:.1f} MB) in {time.time() - t0:.0f} s")
        from .export_onnx import export_onnx

        # The inference engine's copy, so generation runs the new weights with
        # ONNX Runtime (an export of other weights would be ignored).
        log(f"[gesture] wrote {export_onnx(out)}")
    if dist:
        dist.destroy_process_group()
    return train_log


def _heldout_clips(corpus, arrays):
    """Held-out paired windows for the validation loss (same encoding)."""
    out = []
    rng = np.random.default_rng(0)
    fb = arrays["finger_basis"]
    for t in corpus.heldout_paired:
        if t.num_frames <= cvae.WINDOW:
            continue
        clean = _audio_variants(t.audio, t.start + t.num_frames, rng, kinds=("clean",))[0][0]
        out.append(clip_entry(t, t.rot, t.root, fb, [clean[t.start:]]))
    return out


def save(path, model, arrays, train_log, trained_on=None) -> None:
    """Write a "gesture" checkpoint (:mod:`..checkpoint`): the VAE's config
    and weights; normalisation, finger basis, energy map, beat rate and
    start poses as arrays (float64 scalars for the two numbers)."""
    from ..model_files import checkpoint

    em = arrays["energy_map"]
    fb = arrays["finger_basis"]
    extra = {
        "mean": torch.from_numpy(arrays["mean"]), "std": torch.from_numpy(arrays["std"]),
        "finger_mean": torch.from_numpy(fb["mean"]), "finger_components": torch.from_numpy(fb["components"]),
        "energy_weights": torch.from_numpy(np.asarray(em["weights"])),
        "rest_energy": torch.tensor(float(em["rest_energy"]), dtype=torch.float64),
        "beat_rate": torch.tensor(float(arrays["beat_rate"]), dtype=torch.float64),
        "start_poses": torch.from_numpy(arrays["start_poses"]),
    }
    train = {k: train_log[k] for k in ("seed", "steps", "train_seconds", "paired_train_minutes", "unpaired_minutes",
                                       "train_config") if k in train_log}
    checkpoint.save(path, "gesture", config=dict(model.config), weights=model.state_dict(), arrays=extra,
            metadata={"trained_on": trained_on, "training": train})


def main_train(argv=None) -> int:
    """``rigmind train gesture`` arguments."""
    import argparse

    ap = argparse.ArgumentParser(prog="rigmind train gesture", description="Train the speech-to-gesture model.")
    ap.add_argument("--data", type=Path, default=paths.data_dir(),
                    help="data folder: BEAT2-format takes (smplxflame_30/*.npz + wave16k/*.wav, or npz+wav side "
                         "by side) and optionally the Bandai gesture folders (default ../shared/data)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="checkpoint (default models/gesture.pt)")
    ap.add_argument("--steps", type=int, default=DEFAULT_STEPS)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--beta", type=float, default=BETA, help=f"KL weight (default {BETA})")
    ap.add_argument("--prior-share", type=float, default=PRIOR_SHARE,
                    help=f"share of windows decoded from a prior code (latent dropout; default {PRIOR_SHARE})")
    ap.add_argument("--beat-weight", type=float, default=0.0,
                    help="weight of the beat-following loss on prior-decoded windows (default 0: off)")
    ap.add_argument("--beat-accel-weight", type=float, default=0.0,
                    help="weight, inside the beat loss, of its peak-acceleration term (default 0)")
    ap.add_argument("--encoder-jitter", type=float, default=0.0,
                    help="SD in frames of the random time warp of what the posterior reads (default 0: off)")
    ap.add_argument("--no-unpaired", action="store_true", help="train on the paired takes only")
    args = ap.parse_args(argv)
    limits.check_model_tool_options(args)
    limits.check_output_paths(args.out)
    train_gesture(args.data, args.out, GestureTrainConfig(steps=args.steps, seed=args.seed, threads=args.threads,
                                                          with_unpaired=not args.no_unpaired, beta=args.beta,
                                                          prior_share=args.prior_share, beat_weight=args.beat_weight,
                                                          beat_accel_weight=args.beat_accel_weight,
                                                          encoder_jitter=args.encoder_jitter))
    return 0
