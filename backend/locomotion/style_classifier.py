"""A small style classifier for locomotion: is generated motion recognisably
"elderly", "feminine", ...?

It predicts the 7 dataset-2 styles (:data:`~.dataset.D2_STYLES`) from 2 s
windows (60 frames at 30 fps) of root-space motion and is trained on real
*training* clips only, so its accuracy on the validation mocap is the ceiling
that generated motion can be compared to.

Input per frame (129 numbers, root space of that frame, see
:class:`~.features.ClipFeatures`): the positions (m) and velocities (m/s) of
joints 1..21 (joint 0 is left out: a static ground root in the mocap, the
character root in generated motion), the root velocity (m/s, 2) and the yaw
rate (rad/s, 1). Each channel is standardised with the training mean and
standard deviation. The network is a 1D convolution over time (two layers,
kernel 5, 64 channels, the second with stride 2), average + max pooling over
time and a linear layer: a few tens of thousands of weights, CPU-trained in
well under a minute. A clip's prediction averages the softmax of its windows
(hop 15 frames); a clip shorter than a window is one window of its own length
(the pooling accepts any length).

d1 clips whose style maps to a d2 style (:data:`~.dataset.D1_TO_D2_STYLE`,
e.g. "old" -> "elderly") are included by default (``include_d1``): they are
another performer's take on the style, and with them the 7 mapped d1
validation clips go from 2/7 to 4/7 while the d2 validation clips stay at
109/109 (seed 0). That gap says what the classifier learns: how *this
dataset's* performer of a style moves (each d2 style is one session), which
is what generated motion trained on the same clips should reproduce, not an
abstract notion of "elderly".
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..motion import Motion
from . import dataset
from . import features

#: Window length (frames at 30 fps) and hop between training windows.
WINDOW = 60
HOP = 15
#: Cache arrays the classifier needs.
KEYS = ("joint_pos", "joint_vel", "root_vel", "root_ang_vel")


def frame_features(clip) -> np.ndarray:
    """Per-frame input ``[F, 129]`` (float32) of a :class:`~.features.ClipFeatures`."""
    f = clip.num_frames
    return np.concatenate(
        [
            np.asarray(clip.joint_pos[:, 1:], dtype=np.float32).reshape(f, -1),
            np.asarray(clip.joint_vel[:, 1:], dtype=np.float32).reshape(f, -1),
            np.asarray(clip.root_vel, dtype=np.float32).reshape(f, -1),
            np.asarray(clip.root_ang_vel, dtype=np.float32).reshape(f, 1),
        ],
        axis=1,
    )


def _windows(x: np.ndarray, window: int, hop: int) -> list:
    """Windows ``[window, C]`` of ``x [F, C]`` every ``hop`` frames, the last
    one flush with the end; one (shorter) window when ``F < window``."""
    f = len(x)
    if f <= window:
        return [x]
    starts = list(range(0, f - window + 1, hop))
    if starts[-1] != f - window:
        starts.append(f - window)
    return [x[s : s + window] for s in starts]


def _as_features(item):
    """A ClipFeatures from a ClipFeatures, a Motion or ``(Motion, labels)``."""
    if isinstance(item, features.ClipFeatures):
        return item
    if isinstance(item, Motion):
        if abs(item.fps - features.FPS) > 1e-6:
            from ..resample import resample

            item = resample(item, features.FPS)
        return features.compute_features(item)
    motion, labels = item
    return features.compute_features(motion, labels)


def _style_of(clip, styles) -> str | None:
    s = clip.labels.get("style_key", clip.labels.get("style"))
    return s if s in styles else None


def _build_net(in_dim: int, n_out: int, hidden: int = 64):
    import torch
    from torch import nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Sequential(
                nn.Conv1d(in_dim, hidden, 5, padding=2),
                nn.ReLU(),
                nn.Conv1d(hidden, hidden, 5, padding=2, stride=2),
                nn.ReLU(),
            )
            self.drop = nn.Dropout(0.2)
            self.head = nn.Linear(2 * hidden, n_out)

        def forward(self, x):  # x [B, T, C]
            h = self.conv(x.transpose(1, 2))
            pooled = torch.cat([h.mean(dim=2), h.amax(dim=2)], dim=1)
            return self.head(self.drop(pooled))

    return Net()


@dataclass
class StyleClassifier:
    """A trained classifier: ``net`` (torch module), ``styles`` (output
    order), ``mean``/``std`` ``[C]`` input standardisation, ``window``
    (frames), ``info`` (training summary)."""

    net: object
    styles: tuple
    mean: np.ndarray
    std: np.ndarray
    window: int = WINDOW
    hop: int = HOP
    info: dict = None

    def window_probs(self, x: np.ndarray) -> np.ndarray:
        """Softmax ``[W, S]`` of the windows of per-frame inputs ``x [F, C]``."""
        import torch

        wins = _windows(x, self.window, self.hop)
        self.net.eval()
        with torch.no_grad():
            out = []
            # Windows of one clip share a length except a short clip's single one.
            for w in wins:
                t = torch.from_numpy(((w - self.mean) / self.std).astype(np.float32))[None]
                out.append(torch.softmax(self.net(t), dim=1)[0].numpy())
        return np.stack(out).astype(np.float64)

    def save(self, path) -> None:
        """Write a "style-classifier" checkpoint (:mod:`...checkpoint`): styles,
        window and hop as config, ``mean``/``std`` as float64 arrays, ``info``
        (made plain JSON) as metadata."""
        import torch

        from ..model_files import checkpoint

        arrays = {k: torch.from_numpy(np.asarray(v, dtype=np.float64).copy()) for k, v in
                  (("mean", self.mean), ("std", self.std))}
        config = {"styles": list(self.styles), "window": int(self.window), "hop": int(self.hop),
                  "in_dim": int(len(self.mean))}
        checkpoint.save(path, "style-classifier", config=config, weights=self.net.state_dict(), arrays=arrays,
                metadata={"info": json.loads(json.dumps(self.info or {}, default=_plain))})

    @classmethod
    def load(cls, path) -> "StyleClassifier":
        from ..model_files import checkpoint
        from ..model_files import ModelFileError

        ck = checkpoint.load(path, "style-classifier")
        try:
            net = _build_net(int(ck.config["in_dim"]), len(ck.config["styles"]))
            net.load_state_dict(ck.weights)
        except Exception:
            raise ModelFileError(f"{path}: its weights do not fit RigMind's style classifier; "
                                 "delete it and it is retrained") from None
        net.eval()
        c = ck.config
        return cls(net, tuple(c["styles"]), ck.arrays["mean"].numpy(), ck.arrays["std"].numpy(), c["window"], c["hop"],
                   ck.metadata.get("info", {}))


def _plain(value):
    """JSON for NumPy scalars and arrays in ``info``."""
    return value.tolist() if hasattr(value, "tolist") else str(value)


def load_training_clips(cache_dir=None, split: str = "train", include_d1: bool = True, mirrored: bool = True) -> list:
    """Cached clips of ``split`` whose ``style_key`` is one of the 7 d2 styles
    (d1 ones only with ``include_d1``), with only the arrays the classifier
    needs."""
    clips = features.load_cache(cache_dir, split=split, mirrored=mirrored, styles=dataset.D2_STYLES, keys=KEYS)
    return [c for c in clips if include_d1 or c.labels.get("dataset") != "d1"]


def _training_windows(clips, styles: tuple) -> tuple:
    """Every 2 s window of the clips whose style is in ``styles``:
    ``(x [N, T, C] float32, y [N] style index, mean [C], std [C], window count
    per style [S])``."""
    xs, ys = [], []
    for c in clips:
        s = _style_of(c, styles)
        if s is None:
            continue
        wins = _windows(frame_features(c), WINDOW, HOP)
        # Training batches need one length: a clip shorter than a window is
        # repeated (played on from the start) up to the window length.
        for w in wins:
            if len(w) < WINDOW:
                w = np.concatenate([w] * int(np.ceil(WINDOW / len(w))))[:WINDOW]
            xs.append(w)
            ys.append(styles.index(s))
    if not xs:
        raise ValueError(f"no training clip has one of the styles {styles}")
    x = np.stack(xs).astype(np.float32)  # [N, T, C]
    y = np.asarray(ys, dtype=np.int64)
    flat = x.reshape(-1, x.shape[-1])
    mean = flat.mean(axis=0)
    std = np.maximum(flat.std(axis=0), 1e-3)
    counts = np.bincount(y, minlength=len(styles)).astype(np.float64)
    return x, y, mean, std, counts


def _fit(windows, cfg: StyleTrainConfig, verbose: bool):
    """The trained net (eval mode) on ``windows`` = ``(x, y, mean, std,
    counts)`` of :func:`_training_windows`, with ``cfg``'s seed, epochs,
    batch size, learning rate and threads; see :func:`train_style_classifier`."""
    import torch

    x, y, mean, std, counts = windows
    seed, epochs, batch_size, lr, threads = cfg.seed, cfg.epochs, cfg.batch_size, cfg.lr, cfg.threads

    xn = torch.from_numpy((x - mean) / std)
    yt = torch.from_numpy(y)
    cw = np.where(counts > 0, counts.sum() / np.maximum(counts, 1) / max((counts > 0).sum(), 1), 0.0)

    old_threads = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        torch.manual_seed(seed)
        net = _build_net(x.shape[-1], len(counts))
        opt = torch.optim.Adam(net.parameters(), lr=lr, weight_decay=1e-4)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(epochs, 1))
        loss_fn = torch.nn.CrossEntropyLoss(weight=torch.tensor(cw, dtype=torch.float32))
        rng = np.random.default_rng(seed)
        net.train()
        for ep in range(epochs):
            order = rng.permutation(len(xn))
            total = 0.0
            for s in range(0, len(order), batch_size):
                b = torch.from_numpy(order[s : s + batch_size])
                xb = xn[b]
                # Small Gaussian noise: the generated motion is not exactly mocap.
                xb = xb + 0.05 * torch.randn(xb.shape)
                loss = loss_fn(net(xb), yt[b])
                opt.zero_grad()
                loss.backward()
                opt.step()
                total += float(loss.detach()) * len(b)
            sched.step()
            if verbose:
                print(f"[style classifier] epoch {ep + 1}/{epochs} loss {total / len(xn):.3f}", flush=True)
        net.eval()
    finally:
        torch.set_num_threads(old_threads)
    return net


@dataclass(frozen=True)
class StyleTrainConfig:
    """The style classifier's training run (see :func:`train_style_classifier`)."""

    #: Seed of the weights (``torch.manual_seed``) and the batch sampler.
    seed: int = 0
    #: Passes over all 2 s windows.
    epochs: int = 5
    #: Windows per batch and Adam's learning rate.
    batch_size: int = 128
    lr: float = 2e-3
    #: Also train on the first Bandai dataset's clips.
    include_d1: bool = True
    #: The classes, in output order; clips of other styles are ignored.
    styles: tuple = dataset.D2_STYLES
    #: Torch CPU threads (None: torch's default).
    threads: int = None


def train_style_classifier(cache_or_clips=None, config: StyleTrainConfig = StyleTrainConfig(), *,
                           verbose: bool = False) -> StyleClassifier:
    """Train on ``cache_or_clips``: a cache folder (None = the default cache;
    its *training* clips with mirrored copies) or a list of ClipFeatures /
    Motions with labels ``(Motion, labels)``. Clips whose style is not in
    ``styles`` are ignored.

    Deterministic for a seed (same thread count): weights start from
    ``torch.manual_seed(seed)`` and batches are drawn with a seeded NumPy
    generator. Adam, cross entropy with the classes weighted by inverse
    window count (so rarer styles count as much), ``epochs`` passes over all
    2 s windows (hop 15 frames).
    """
    cfg = config
    seed, epochs, include_d1 = cfg.seed, cfg.epochs, cfg.include_d1
    if cache_or_clips is None or isinstance(cache_or_clips, (str, Path)):
        clips = load_training_clips(cache_or_clips, include_d1=include_d1)
    else:
        clips = [_as_features(c) for c in cache_or_clips]
        if not include_d1:
            clips = [c for c in clips if c.labels.get("dataset") != "d1"]
    styles = tuple(cfg.styles)
    x, y, mean, std, counts = _training_windows(clips, styles)
    net = _fit((x, y, mean, std, counts), cfg, verbose)
    info = {"seed": int(seed), "epochs": epochs, "windows": int(len(x)), "clips": len(clips), "window_counts": counts.tolist()}
    return StyleClassifier(net, styles, mean, std, WINDOW, HOP, info)


def predict_style(model: StyleClassifier, motion) -> np.ndarray:
    """Style probabilities ``[S]`` (order ``model.styles``) of a Motion (any
    fps; resampled to 30), a ClipFeatures or ``(Motion, labels)``: the mean
    softmax over its 2 s windows."""
    clip = _as_features(motion)
    return model.window_probs(frame_features(clip)).mean(axis=0)


def evaluate_classifier(model: StyleClassifier, clips) -> dict:
    """Accuracy on labelled ``clips`` (ClipFeatures or ``(Motion, labels)``):
    ``{"clip_accuracy", "window_accuracy", "clips", "windows", "confusion"
    [S, S] (rows: true style, columns: predicted, clip level), "per_style"
    {style: clip accuracy} (styles with clips only)}``. Clips with other styles are skipped."""
    s = len(model.styles)
    conf = np.zeros((s, s), dtype=np.int64)
    win_right = win_total = 0
    for c in clips:
        c = _as_features(c)
        st = _style_of(c, model.styles)
        if st is None:
            continue
        k = model.styles.index(st)
        p = model.window_probs(frame_features(c))
        win_right += int((p.argmax(axis=1) == k).sum())
        win_total += len(p)
        conf[k, int(p.mean(axis=0).argmax())] += 1
    n = int(conf.sum())
    return {
        "clip_accuracy": float(np.trace(conf) / max(n, 1)),
        "window_accuracy": float(win_right / max(win_total, 1)),
        "clips": n,
        "windows": int(win_total),
        "confusion": conf,
        "per_style": {st: float(conf[i, i] / conf[i].sum()) for i, st in enumerate(model.styles) if conf[i].sum()},
    }


__all__ = [
    "StyleClassifier", "train_style_classifier", "predict_style", "evaluate_classifier", "frame_features",
    "load_training_clips", "StyleTrainConfig", "WINDOW", "HOP",
]
