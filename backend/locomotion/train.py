"""Training of the neural locomotion model (:mod:`.model`) on the Bandai clips.

``train_locomotion`` builds (or reuses) the feature cache, turns the train
split (with its mirrored copies) into short windows of consecutive frames and
trains with Adam and a cosine learning-rate decay:

- every window of ``window`` frames is rolled out autoregressively: the
  first input comes from the data, each later one either from the data
  (teacher forcing) or, per sample with probability ``p``, from the model's
  own previous prediction (:func:`.vector_layout.feedback_input`: pose, contacts,
  root velocity). ``p`` (scheduled sampling) rises from 0 to
  ``feedback_max`` between 10 % and 70 % of the planned steps, so the model
  learns to recover from its own errors and long rollouts stay stable;
  gradients flow through the whole rollout;
- Gaussian noise (``noise``, in normalised units) is added to every input
  except the style weights;
- the loss is the mean squared error of the normalised output groups
  (pose, root delta, future trajectory) plus binary cross-entropy on the
  contact logits, weighted by :data:`LOSS_WEIGHTS`, averaged over the window;
- after every epoch the model is rolled out fully autoregressively (``p =
  1``, no noise, no dropout) on windows of the validation split; the weights
  with the best validation loss are kept.

Determinism: the seed fixes the initial weights (:func:`.model.build_model`),
the data order (NumPy generator) and the noise/dropout/sampling draws (torch's
global generator), and ``torch.use_deterministic_algorithms(True)`` is on,
so two runs with the same seed, thread count and number of steps give
bit-identical weights (denormals are flushed to zero while training: they
made steps up to 80x slower). With only a time budget, the number of steps
(which sets the learning-rate and feedback schedules) is planned from the
measured pace, first after 10 steps, then again after every epoch, so such a
run depends on the machine's speed; pass ``steps=`` for a run that is
bit-reproducible (it still stops at the budget).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Mapping, Optional

import numpy as np
import torch

from ..atomic_write import replaced
from ..model_files import checkpoint
from ..model_files import ModelFileError
from ..model_files.loading import fitting
from . import dataset
from . import features
from . import model as mann
from . import vector_layout
from .. import limits, paths

#: Weights of the loss groups (each group's loss is a mean over its entries,
#: so the 3-number root delta counts as much as the 252-number pose: the root
#: motion decides foot sliding and how well the character follows control).
LOSS_WEIGHTS = {"pose": 1.0, "root_delta": 1.0, "future": 0.5, "contacts": 0.25}
#: Arrays read from the feature cache.
CACHE_KEYS = ("root_pos", "yaw", "joint_pos", "joint_vel", "rot6d", "traj_pos", "traj_dir", "contacts")
#: Default output (repository ``models/`` folder).
DEFAULT_OUT = paths.model_path("locomotion.pt")
DEFAULT_STEPS = 8000
FORMAT = "rigmind-locomotion-mann"


# --- data ------------------------------------------------------------------------------


class WindowData:
    """Frames of a set of clips as flat tensors: ``x [N, INPUT_SIZE]`` and
    ``y [N, OUTPUT_SIZE]`` (raw, float32, see :func:`.vector_layout.clip_arrays`),
    ``start [C]`` / ``length [C]`` per clip, ``names [C]``, ``styles [C]``."""

    def __init__(self, clips):
        xs, ys, start, length, n = [], [], [], [], 0
        self.names, self.styles = [], []
        for cf in clips:
            if cf.num_frames < 2:
                continue
            x, y = vector_layout.clip_arrays(cf)
            xs.append(x)
            ys.append(y)
            start.append(n)
            length.append(len(x))
            n += len(x)
            self.names.append(cf.name + ("_mirror" if cf.mirrored and not cf.name.endswith("_mirror") else ""))
            self.styles.append(cf.labels.get("style_key", "normal"))
        if not xs:
            self.x = torch.zeros(0, vector_layout.INPUT_SIZE)
            self.y = torch.zeros(0, vector_layout.OUTPUT_SIZE)
        else:
            self.x = torch.from_numpy(np.concatenate(xs))
            self.y = torch.from_numpy(np.concatenate(ys))
        self.start = np.asarray(start, dtype=np.int64)
        self.length = np.asarray(length, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.x)

    def windows(self, window: int, rng: np.random.Generator = None) -> np.ndarray:
        """Global start frames of non-overlapping windows of ``window`` steps
        (each needs ``window + 1`` frames: the targets of step ``k`` are frame
        ``t0 + k + 1``). With ``rng``, each clip starts at a random offset in
        ``[0, window)`` and the windows are shuffled; without, offset 0 and
        clip order."""
        out = []
        for s, f in zip(self.start, self.length):
            last = f - 1 - window  # last valid local start
            if last < 0:
                continue
            off = int(rng.integers(window)) if rng is not None else 0
            off = min(off, last)
            out.append(s + np.arange(off, last + 1, window))
        w = np.concatenate(out) if out else np.zeros(0, dtype=np.int64)
        return rng.permutation(w) if rng is not None else w


def normalisation(data: WindowData):
    """``x_mean, x_std, y_mean, y_std, x_lo, x_hi`` (float32 tensors) over
    the training frames (``x_lo / x_hi``: normalised input bounds). Style weights and contact logits stay unnormalised (mean 0, std
    1): the style is a blend of one-hots and the contacts go through a
    sigmoid. Constant entries (the current trajectory sample) get std 1;
    others are floored at 0.01 so near-constant ones do not blow up noise."""

    def stats(a):
        a = a.double()
        mean = a.mean(0)
        std = a.std(0, unbiased=False)
        std = torch.where(std < 1e-6, torch.ones_like(std), std.clamp_min(1e-2))
        return mean, std

    x_mean, x_std = stats(data.x)
    y_mean, y_std = stats(data.y)
    x_mean[vector_layout.IN["style"]], x_std[vector_layout.IN["style"]] = 0.0, 1.0
    y_mean[vector_layout.OUT["contacts"]], y_std[vector_layout.OUT["contacts"]] = 0.0, 1.0
    # Input bounds: the data's range plus one std either side (the training
    # noise stays well inside).
    x_lo = (data.x.double().min(0).values - x_mean) / x_std - 1.0
    x_hi = (data.x.double().max(0).values - x_mean) / x_std + 1.0
    return x_mean.float(), x_std.float(), y_mean.float(), y_std.float(), x_lo.float(), x_hi.float()


def start_poses(data: WindowData) -> dict:
    """Per style, the stillest frame with both feet down: ``{style: tensor
    [POSE_SIZE + CONTACT_SIZE]}`` (the raw pose block then the contacts),
    the idle pose the controller starts from. Stillness = root speed plus
    mean joint speed (m/s); clips start standing more often than not."""
    x = data.x.numpy()
    out = {}
    pose, con, rv = vector_layout.IN["pose"], vector_layout.IN["contacts"], vector_layout.IN["root_vel"]
    vel = slice(pose.start + vector_layout.POSE["vel"].start, pose.start + vector_layout.POSE["vel"].stop)
    for style in vector_layout.STYLES:
        rows = [np.arange(s, s + f) for s, f, st, nm in zip(data.start, data.length, data.styles, data.names)
                if st == style and not nm.endswith("_mirror")]
        if not rows:
            continue
        rows = np.concatenate(rows)
        xs = x[rows]
        speed = np.linalg.norm(xs[:, rv][:, :2], axis=1) + np.linalg.norm(xs[:, vel].reshape(len(xs), -1, 3), axis=2).mean(1)
        speed = np.where(xs[:, con].min(axis=1) > 0.5, speed, np.inf)
        i = rows[int(np.argmin(speed))]
        out[style] = torch.from_numpy(np.concatenate([x[i, pose], x[i, con]]).astype(np.float32))
    return out


def load_split_data(cache_dir, split: str, mirrored: bool, clips=None) -> WindowData:
    """Cached clips of ``split`` whose style maps to one of :data:`.vector_layout.STYLES`
    (``clips``: restrict to these file names or stems)."""
    feats = features.load_cache(cache_dir, split=split, mirrored=mirrored, styles=vector_layout.STYLES, keys=CACHE_KEYS)
    if clips is not None:
        wanted = {str(c).split(".bvh")[0] for c in clips}
        feats = [c for c in feats if c.labels.get("file", c.name).split(".bvh")[0] in wanted]
    return WindowData(feats)


# --- loss ----------------------------------------------------------------------------------


def group_losses(yn: torch.Tensor, target_n: torch.Tensor) -> dict:
    """Per-group losses of normalised predictions ``yn [B, out]`` against
    normalised targets (contacts: logits against 0/1)."""
    out = {}
    for g in ("pose", "root_delta", "future"):
        sl = vector_layout.OUT[g]
        out[g] = torch.mean((yn[:, sl] - target_n[:, sl]) ** 2)
    sl = vector_layout.OUT["contacts"]
    out["contacts"] = torch.nn.functional.binary_cross_entropy_with_logits(yn[:, sl], target_n[:, sl])
    return out


def rollout_loss(model: mann.MANN, data: WindowData, starts, window: int, p: float, noise: float, fps: float):
    """Loss of ``model`` rolled out over windows starting at global frames
    ``starts [B]``: returns ``(total, {group: value})`` averaged over the
    window's steps. ``p``: probability (per sample and step) of feeding the
    model's own prediction back instead of the data; ``noise``: std of the
    Gaussian noise added to the normalised inputs (not the style)."""
    t = torch.as_tensor(starts, dtype=torch.long)[:, None] + torch.arange(window)[None]
    xw, yw = data.x[t], data.y[t]  # [B, L, in], [B, L, out]
    yw_n = (yw - model.y_mean) / model.y_std
    yw_n[..., vector_layout.OUT["contacts"]] = yw[..., vector_layout.OUT["contacts"]]
    noise_mask = torch.ones(vector_layout.INPUT_SIZE)
    noise_mask[vector_layout.IN["style"]] = 0.0
    total = 0.0
    groups = {g: 0.0 for g in LOSS_WEIGHTS}
    x = xw[:, 0]
    for k in range(window):
        xn = model.normalize_input(x)
        if noise > 0:
            xn = xn + noise * torch.randn_like(xn) * noise_mask
        yn = model.forward_normalized(xn)
        gl = group_losses(yn, yw_n[:, k])
        for g, v in gl.items():
            groups[g] = groups[g] + v
            total = total + LOSS_WEIGHTS[g] * v
        if k + 1 < window:
            x = xw[:, k + 1]
            if p > 0:
                fb = vector_layout.feedback_input(x, model.denormalize_output(yn), fps)
                use = torch.rand(len(x), 1) < p
                x = torch.where(use, fb, x)
    return total / window, {g: v / window for g, v in groups.items()}


@torch.no_grad()
def evaluate(model: mann.MANN, data: WindowData, starts, window: int, fps: float, batch: int = 512) -> dict:
    """Fully autoregressive rollout loss (p = 1, no noise, eval mode) over
    ``starts``: ``{"loss", group: value}`` (means over windows)."""
    was = model.training
    model.eval()
    sums, n = {}, 0
    for i in range(0, len(starts), batch):
        b = starts[i : i + batch]
        total, groups = rollout_loss(model, data, b, window, 1.0, 0.0, fps)
        for k, v in dict(groups, loss=total).items():
            sums[k] = sums.get(k, 0.0) + float(v) * len(b)
        n += len(b)
    model.train(was)
    return {k: v / max(n, 1) for k, v in sums.items()}


# --- checkpoint ----------------------------------------------------------------------------


def _skeleton_of(cache_dir, clips=None) -> dict:
    """Skeleton (names, parents, offsets) of the first cached d2 "normal" train clip."""
    feats = features.load_cache(cache_dir, split="train", mirrored=False, styles=("normal",), keys=("yaw",))
    if clips is not None:
        wanted = {str(c).split(".bvh")[0] for c in clips}
        feats = [c for c in feats if c.labels.get("file", c.name).split(".bvh")[0] in wanted] or feats
    if not feats:
        feats = features.load_cache(cache_dir, split="train", mirrored=False, keys=("yaw",))
    cf = feats[0]
    return {
        "names": list(cf.joint_names),
        "parents": [int(p) for p in cf.parents],
        "offsets": [[float(v) for v in row] for row in np.asarray(cf.offsets)],
        "source": cf.name,
    }


def io_description(fps: float = features.FPS) -> dict:
    """The layout constants a checkpoint is tied to (checked on load)."""
    return {
        "input_size": vector_layout.INPUT_SIZE,
        "output_size": vector_layout.OUTPUT_SIZE,
        "fps": float(fps),
        "traj_times": [float(t) for t in vector_layout.TRAJ_TIMES],
        "styles": list(vector_layout.STYLES),
        "contact_joints": list(features.CONTACT_JOINTS),
        "pose_joints": [features.BANDAI_NAMES[j] for j in vector_layout.POSE_JOINTS],
        "gating_joints": list(vector_layout.GATING_JOINTS),
    }


def make_checkpoint(model: mann.MANN, skeleton: dict, starts: dict, training: dict, fps: float = features.FPS,
                    train_config: dict = None) -> dict:
    """The keyword arguments of :func:`..checkpoint.save` for a "locomotion"
    checkpoint: the MANN config and weights (normalisation included, as
    buffers), one ``start_pose/<style>`` array per style, and as metadata
    the layout (``io``), skeleton, training summary and ``train_config``."""
    metadata = {"io": io_description(fps), "skeleton": skeleton, "training": training}
    if train_config is not None:
        metadata["train_config"] = train_config
    return {
        "config": dict(model.config),
        "weights": {k: v.detach().clone().contiguous() for k, v in model.state_dict().items()},
        "arrays": {f"start_pose/{k}": v for k, v in starts.items()},
        "metadata": metadata,
    }


def load_checkpoint(path) -> dict:
    """Read a "locomotion" checkpoint (:func:`..checkpoint.load`, ``weights_only``)
    and check its layout against this code; a dict with ``config``,
    ``state_dict``, ``start_poses`` (style -> tensor), ``io``, ``skeleton``,
    ``training`` and the whole ``metadata``."""
    c = checkpoint.load(path, "locomotion")
    with fitting(path, "locomotion model"):
        md = c.metadata
        ck = {"config": c.config, "state_dict": c.weights, "io": md["io"], "skeleton": md["skeleton"],
              "training": md.get("training", {}), "metadata": md,
              "start_poses": {k.split("/", 1)[1]: v for k, v in c.arrays.items() if k.startswith("start_pose/")}}
        io = io_description(ck["io"]["fps"])
        for k in ("input_size", "output_size", "traj_times", "styles", "contact_joints", "pose_joints"):
            if ck["io"][k] != io[k]:
                raise ModelFileError(f"{path} was trained with another {k}: {ck['io'][k]} (this code: {io[k]})")
    return ck


def model_from_checkpoint(ck: dict) -> mann.MANN:
    model = mann.MANN(ck["config"])
    model.load_state_dict(ck["state_dict"])
    return model.eval()


# --- training --------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrainConfig:
    """What a locomotion training run does; saved in the checkpoint and its log.

    Attributes:
        seed: initial weights, data order and random draws.
        minutes: wall-clock budget of the whole call (cache, loading,
            training); training stops cleanly at it, keeping the weights of the
            best validation loss.
        threads: ``torch.set_num_threads`` while training (restored after).
        batch: windows per optimiser step.
        window: autoregressive rollout length (frames) per training sample.
        lr, lr_min: Adam learning rate, cosine-decayed to ``lr_min``.
        weight_decay: Adam weight decay.
        noise: input noise std (normalised units).
        feedback_max: final scheduled-sampling probability.
        steps: number of optimiser steps (None: planned from the budget).
        max_val_windows: cap on validation windows (spread over the split).
        model: overrides of :data:`.model.DEFAULT_CONFIG` (``hidden``,
            ``experts``, ``gating_hidden``, ``dropout``).
    """

    seed: int = 0
    minutes: float = 55.0
    threads: int = 2
    batch: int = 256
    window: int = 16
    lr: float = 1e-3
    lr_min: float = 1e-5
    weight_decay: float = 0.0
    noise: float = 0.05
    feedback_max: float = 1.0
    steps: Optional[int] = None
    max_val_windows: int = 4096
    model: Mapping = field(default_factory=dict)


#: Steps timed before the first plan of the step count from the budget.
_PROBE_STEPS = 10


@dataclass
class _Run:
    """The state of one training run, shared by its phases."""

    cfg: TrainConfig
    t0: float
    deadline: float
    model: mann.MANN
    opt: torch.optim.Optimizer
    rng: np.random.Generator
    train: WindowData
    val: WindowData
    val_starts: np.ndarray
    log: dict
    planned: Optional[int]
    progress: float = 0.0  # fraction of the plan done; never decreases
    step: int = 0
    epoch: int = 0
    stop: Optional[str] = None
    probe_t: Optional[float] = None
    best: dict = field(default_factory=lambda: {"val": math.inf, "epoch": -1, "state": None, "step": 0})

    def schedule(self) -> tuple:
        """(learning rate, feedback probability) at the current step."""
        cfg = self.cfg
        total = self.planned or 10**9
        self.progress = max(self.progress, min(self.step / max(total, 1), 1.0))
        rate = cfg.lr_min + 0.5 * (cfg.lr - cfg.lr_min) * (1.0 + math.cos(math.pi * self.progress))
        p = cfg.feedback_max * min(max((self.progress - 0.1) / 0.6, 0.0), 1.0)
        return rate, p

    def plan(self, fraction: float, steps_timed: int) -> None:
        """Plan the step count from the pace so far, ``fraction`` of the time left."""
        per = (time.perf_counter() - self.probe_t) / steps_timed
        self.planned = max(self.step, self.step + int(fraction * (self.deadline - time.perf_counter()) / per))
        self.log["planned_steps"] = self.planned
        self.log["seconds_per_step"] = per

    def out_of_steps(self) -> Optional[str]:
        if self.planned is not None and self.step >= self.planned:
            return "steps"
        if time.perf_counter() >= self.deadline:
            return "budget"
        return None


def train_locomotion(data_dir=None, out_path=DEFAULT_OUT, config: TrainConfig = TrainConfig(), *,
                     cache_dir=None, clips=None, log_path=None, verbose: bool = True) -> dict:
    """Train the locomotion MANN and write ``out_path`` (``.pt``) and its log.

    Args:
        data_dir: Bandai data folder (default ``../shared/data``).
        out_path: checkpoint path (see :func:`make_checkpoint`).
        config: the run's :class:`TrainConfig`.
        cache_dir: feature cache (default ``<repo>/.cache/locomotion``).
        clips: restrict to these clip file names (tests).
        log_path: JSON log (default ``out_path`` with ``.log.json``): config,
            per-epoch train/validation losses, learning rate, feedback
            probability and wall time.

    Returns a summary dict (``steps``, ``epochs``, ``best_epoch``,
    ``best_val``, ``out_path``, ``log_path``, ``seconds``).
    """
    t0 = time.perf_counter()
    out_path = Path(out_path)
    log_path = Path(log_path) if log_path is not None else out_path.with_suffix(".log.json")
    cache_dir = Path(cache_dir) if cache_dir is not None else features.DEFAULT_CACHE_DIR
    with _torch_training_settings(config.threads):
        run, skeleton, starts = _start_run(config, t0, data_dir, cache_dir, clips, verbose)
        while run.stop is None:
            if not _train_epoch(run, verbose):
                break
            _write_json(log_path, run.log)
        training = _finish_run(run)
        parts = make_checkpoint(run.model, skeleton, starts, training, features.FPS, run.log["train_config"])
        parts["metadata"]["trained_on"] = str(data_dir) if data_dir is not None else str(dataset.DEFAULT_DATA_DIR)
        checkpoint.save(out_path, "locomotion", **parts)
        run.log.update(stopped=run.stop, steps=run.step, best_epoch=run.best["epoch"], best_val=run.best["val"],
                       seconds=training["seconds"])
        _write_json(log_path, run.log)
        return dict(training, out_path=str(out_path), log_path=str(log_path))


@contextlib.contextmanager
def _torch_training_settings(threads: int):
    """Deterministic, denormal-free torch with ``threads`` threads; restored after."""
    prev_threads = torch.get_num_threads()
    prev_det = torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(int(threads))
    torch.use_deterministic_algorithms(True)
    # Denormal floats (Adam's second moments of rarely-used weights, ELU tails)
    # made some steps 10-80x slower on this CPU (14 s instead of 0.18 s); flushing
    # them to zero removes that and stays deterministic.
    torch.set_flush_denormal(True)
    try:
        yield
    finally:
        torch.set_flush_denormal(False)  # torch's default
        torch.set_num_threads(prev_threads)
        torch.use_deterministic_algorithms(prev_det)


def _start_run(cfg: TrainConfig, t0: float, data_dir, cache_dir: Path, clips, verbose: bool):
    """Load the data, build the model and optimiser: the run's starting state,
    plus the skeleton and start poses the checkpoint carries."""
    build = features.build_cache(data_dir, cache_dir, seed=0, clips=clips, verbose=verbose)
    train = load_split_data(cache_dir, "train", True, clips)
    val = load_split_data(cache_dir, "validation", False, clips)
    if len(train.windows(cfg.window)) == 0:
        raise ValueError("no training windows: too few or too short clips")
    model_cfg = mann.make_config(**dict(cfg.model))
    model = mann.build_model(model_cfg, seed=cfg.seed)
    model.set_normalisation(*normalisation(train))
    model.set_mode("mix").train()
    starts = start_poses(train)
    skeleton = _skeleton_of(cache_dir, clips)
    val_starts = val.windows(cfg.window)
    if len(val_starts) > cfg.max_val_windows:
        val_starts = val_starts[np.linspace(0, len(val_starts) - 1, cfg.max_val_windows).round().astype(np.int64)]
    load_s = time.perf_counter() - t0
    if verbose:
        print(
            f"[locomotion train] {len(train.start)} train clips ({len(train)} frames, mirrored incl.), "
            f"{len(val.start)} validation clips ({len(val_starts)} windows), "
            f"{mann.parameter_count(model_cfg)} parameters, loaded in {load_s:.1f} s",
            flush=True,
        )
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    planned = int(cfg.steps) if cfg.steps is not None else None
    log = {
        "format": FORMAT,
        "seed": cfg.seed, "minutes": cfg.minutes, "threads": cfg.threads, "batch": cfg.batch, "window": cfg.window,
        "lr": cfg.lr, "lr_min": cfg.lr_min, "noise": cfg.noise, "feedback_max": cfg.feedback_max,
        "loss_weights": LOSS_WEIGHTS, "config": model_cfg, "parameters": mann.parameter_count(model_cfg),
        "train_clips": len(train.start), "train_frames": len(train), "validation_clips": len(val.start),
        "validation_windows": int(len(val_starts)), "cache": {k: build[k] for k in ("built", "skipped", "seconds")},
        "load_seconds": load_s, "planned_steps": planned, "epochs": [],
        "torch": str(torch.__version__), "train_config": _config_record(cfg),
    }
    run = _Run(cfg=cfg, t0=t0, deadline=t0 + 60.0 * float(cfg.minutes), model=model, opt=opt, rng=rng,
               train=train, val=val, val_starts=val_starts, log=log, planned=planned)
    return run, skeleton, starts


def _train_epoch(run: _Run, verbose: bool) -> bool:
    """One pass over the shuffled training windows, then a validation.
    False when the plan or the budget ran out before a single step."""
    cfg = run.cfg
    run.epoch += 1
    order = run.train.windows(cfg.window, run.rng)
    tr_sum, tr_n = 0.0, 0
    for i in range(0, len(order), cfg.batch):
        if run.step == 1:
            run.probe_t = time.perf_counter()  # the first step pays one-off costs (~7 s)
        if cfg.steps is None and run.step == _PROBE_STEPS + 1:
            # 8 % of the remaining time is kept for validation and saving.
            run.plan(0.92, _PROBE_STEPS)
        run.stop = run.out_of_steps()
        if run.stop is not None:
            break
        rate, p = run.schedule()
        for g in run.opt.param_groups:
            g["lr"] = rate
        batch = order[i : i + cfg.batch]
        loss, _ = rollout_loss(run.model, run.train, batch, cfg.window, p, cfg.noise, features.FPS)
        run.opt.zero_grad(set_to_none=True)
        loss.backward()
        run.opt.step()
        run.step += 1
        tr_sum += float(loss.detach()) * len(batch)
        tr_n += len(batch)
    if tr_n == 0:
        run.epoch -= 1
        return False
    _validate_epoch(run, tr_sum / tr_n, verbose)
    if cfg.steps is None and run.planned is not None and run.step > _PROBE_STEPS + 1:
        # Re-plan from the average pace so far, validations included: the pace
        # drifts (other work on the machine, the rising feedback probability),
        # and the cosine should end at the budget.
        run.plan(0.98, run.step - 1)
    run.stop = run.out_of_steps()
    return True


def _validate_epoch(run: _Run, train_loss: float, verbose: bool) -> None:
    """Score the epoch on the validation windows, log it, keep the best weights."""
    cfg = run.cfg
    if len(run.val_starts):
        v = evaluate(run.model, run.val, run.val_starts, cfg.window, features.FPS)
    else:
        v = {"loss": train_loss}
    rate, p = run.schedule()
    rec = {
        "epoch": run.epoch, "steps": run.step, "train_loss": train_loss, "val_loss": v["loss"],
        "val_groups": {k: v[k] for k in LOSS_WEIGHTS if k in v}, "lr": rate, "feedback_p": p,
        "wall_s": time.perf_counter() - run.t0,
    }
    run.log["epochs"].append(rec)
    if v["loss"] < run.best["val"]:
        run.best = {"val": v["loss"], "epoch": run.epoch, "step": run.step,
                    "state": copy.deepcopy(run.model.state_dict())}
    if verbose:
        print(
            f"[locomotion train] epoch {run.epoch} step {run.step}/{run.planned} train {train_loss:.4f} "
            f"val {v['loss']:.4f} lr {rate:.2e} p {p:.2f} {rec['wall_s']:.0f} s",
            flush=True,
        )


def _finish_run(run: _Run) -> dict:
    """Load the best weights into the model; the checkpoint's training record."""
    if run.best["state"] is not None:
        run.model.load_state_dict(run.best["state"])
    run.model.eval()
    cfg = run.cfg
    return {
        "seed": int(cfg.seed), "steps": int(run.step), "epochs": int(run.epoch),
        "best_epoch": int(run.best["epoch"]), "best_step": int(run.best["step"]),
        "best_val": float(run.best["val"]), "stopped": str(run.stop),
        "minutes": float(cfg.minutes), "threads": int(cfg.threads), "batch": int(cfg.batch),
        "window": int(cfg.window), "train_clips": int(len(run.train.start)), "train_frames": int(len(run.train)),
        "seconds": float(time.perf_counter() - run.t0), "torch": str(torch.__version__),
        "config": _config_record(cfg),
    }


def _config_record(cfg: TrainConfig) -> dict:
    """``cfg`` as plain JSON/weights_only-safe values."""
    rec = asdict(cfg)
    rec["model"] = dict(cfg.model)
    return rec


def _write_json(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with replaced(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=1, default=float))


# --- ONNX ------------------------------------------------------------------------------------


class _Exported(torch.nn.Module):
    """Raw input ``x [1, INPUT_SIZE]`` -> raw output ``y [1, OUTPUT_SIZE]``."""

    def __init__(self, model: mann.MANN):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)


def onnx_metadata(ck: dict) -> dict:
    """What the controller needs besides the weights, as JSON strings (the
    ONNX model's ``metadata_props``, readable from onnxruntime)."""
    return {
        "rigmind_format": FORMAT,
        "rigmind_config": json.dumps(ck["config"]),
        "rigmind_io": json.dumps(ck["io"]),
        "rigmind_skeleton": json.dumps(ck["skeleton"]),
        "rigmind_start_poses": json.dumps({k: [float(v) for v in t.tolist()] for k, t in ck["start_poses"].items()}),
        "rigmind_training": json.dumps(ck["training"]),
    }


def export_onnx(pt_path, onnx_path=None) -> Path:
    """Export a checkpoint to ONNX (opset 17, TorchScript exporter:
    ``dynamo=False``; batch 1; the normalisation, gating network, expert
    weight blending and contact sigmoid are inside the graph). Input ``"x"
    [1, INPUT_SIZE]`` float32, output ``"y" [1, OUTPUT_SIZE]``, both raw (see
    :mod:`.vector_layout`). The checkpoint's config, layout, skeleton and start
    poses ride along as metadata. Returns the ONNX path (default: next to
    ``pt_path``)."""
    import warnings

    from ..model_files.onnx_export import stamp_and_install

    ck = load_checkpoint(pt_path)
    onnx_path = Path(onnx_path) if onnx_path is not None else Path(pt_path).with_suffix(".onnx")
    model = model_from_checkpoint(ck).set_mode("blend")
    x = torch.zeros(1, vector_layout.INPUT_SIZE)
    onnx_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = onnx_path.with_name(onnx_path.name + ".tmp")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation notice
        torch.onnx.export(
            _Exported(model), (x,), str(tmp), opset_version=17, dynamo=False,
            input_names=["x"], output_names=["y"], do_constant_folding=True,
        )
    # Stamped and recorded in the folder's manifest, as the gesture and face exports are: a retrained
    # models/locomotion.onnx must not fail its own manifest check.
    return stamp_and_install(tmp, onnx_path, onnx_metadata(ck))


# --- command line ----------------------------------------------------------------------------


def main_train(argv=None) -> int:
    """``rigmind train locomotion`` arguments: train, then export ONNX next
    to the checkpoint."""
    ap = argparse.ArgumentParser(prog="rigmind train locomotion", description="Train the neural locomotion model (MANN).")
    ap.add_argument("--data", type=Path, default=dataset.DEFAULT_DATA_DIR, help="data folder (default ../shared/data)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="checkpoint .pt (default models/locomotion.pt)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--minutes", type=float, default=55.0, help="wall-clock budget of the training call")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=256)
    # A fixed step count keeps the committed weights bit-reproducible from
    # this exact command; 8000 steps take ~40-45 min on 2 cores. --minutes
    # is only a safety cap (the log says whether it was hit).
    ap.add_argument("--steps", type=int, default=DEFAULT_STEPS,
                    help=f"number of training steps (default {DEFAULT_STEPS}; 0 = as many as fit in --minutes)")
    ap.add_argument("--log", type=Path, default=None, help="JSON log (default next to --out)")
    ap.add_argument("--cache", type=Path, default=None, help="feature cache (default .cache/locomotion)")
    args = ap.parse_args(argv)
    limits.check_model_tool_options(args, steps="budget_steps")
    limits.check_output_paths(args.out, args.log)
    config = TrainConfig(seed=args.seed, minutes=args.minutes, threads=args.threads, batch=args.batch,
                         steps=args.steps or None)
    summary = train_locomotion(args.data, args.out, config, log_path=args.log, cache_dir=args.cache)
    onnx_path = export_onnx(args.out)
    print(json.dumps(dict(summary, onnx_path=str(onnx_path)), indent=1))
    return 0


__all__ = [
    "train_locomotion", "TrainConfig", "export_onnx", "main_train", "load_checkpoint", "model_from_checkpoint",
    "make_checkpoint", "WindowData", "normalisation", "start_poses", "rollout_loss", "evaluate",
    "LOSS_WEIGHTS", "DEFAULT_OUT", "FORMAT",
]


if __name__ == "__main__":  # python -m rigmind.backend.locomotion.train --minutes 55 ...
    raise SystemExit(main_train())
