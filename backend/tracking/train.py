"""Train the tracking model (``rigmind train track``): build the per-split
arrays (cached under ``.cache/tracking``), fit :class:`.model.TrackNet` on
the train split for a fixed CPU time, keep the weights with the lowest
validation joint position error (or loss: ``TrainConfig.select``), write ``models/track.pt`` (checkpoint kind ``"tracking"``)
and its ONNX export ``models/track.onnx``. The test split is never read here.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import limits, paths
from ..locomotion.features import mirror_motion
from .canonical import canonical_skeleton, skeleton_to_dict
from . import dataset, features

CACHE_DIR = paths.cache_dir("tracking")
PT_PATH = paths.model_path("track.pt")
ONNX_PATH = paths.model_path("track.onnx")
CACHE_VERSION = "3"  # 3: foreign clips retargeted onto the standing canonical rest


def split_arrays(part: str, data_dir=None, cache_dir=CACHE_DIR, every: int = 1, verbose: bool = False,
                 mirror: bool = False, lags=features.LAGS) -> tuple:
    """``(X [N, I], Y [N, O])`` float32 of every frame (every ``every``-th) of
    a split part (and, with ``mirror``, of its left-right mirror images),
    inputs over ``lags``, cached as ``.npz``."""
    tag = "" if tuple(lags) == features.LAGS else "_lags" + "_".join(str(k) for k in lags)
    cache = Path(cache_dir) / f"{part}_v{CACHE_VERSION}_every{every}{'_mirror' if mirror else ''}{tag}.npz"
    if cache.is_file():
        z = np.load(cache)
        return z["x"], z["y"]
    xs, ys = [], []
    entries = dataset.load_split()[part]
    for i, e in enumerate(entries):
        m = dataset.load_entry(e, data_dir)
        if m.num_frames < 2:
            continue
        for mm in (m, mirror_motion(m)) if mirror else (m,):
            p, r = features.tracker_arrays(mm)
            frames = np.arange(0, mm.num_frames, every)
            xs.append(features.window_inputs(p, r, mm.fps, frames, lags))
            ys.append(features.targets(mm)[frames])
        if verbose and i % 200 == 0:
            print(f"{part}: {i}/{len(entries)} clips", flush=True)
    x, y = np.concatenate(xs), np.concatenate(ys)
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez(cache, x=x, y=y)
    return x, y


def _stats(a: np.ndarray, floor: float = 0.05):
    # A floor well above zero: near-constant dims (a spine bend, a toe) must
    # not dominate the normalised loss on clips where they do move.
    return a.mean(0), np.maximum(a.std(0), floor)


def _loss(model, x, y, w):
    import torch

    yn = model.normalised(x)
    target = (y - model.y_mean) / model.y_std
    reg = ((yn[:, :-2] - target[:, :-2]) ** 2 * w[:-2]).mean()
    bce = torch.nn.functional.binary_cross_entropy_with_logits(yn[:, -2:], y[:, -2:])
    return reg + 0.2 * bce


@dataclass(frozen=True)
class TrainConfig:
    """Settings of one training run: ``seconds`` of wall time, the MLP's
    ``hidden`` width and ``layers``, ``batch`` frames per step, peak ``lr``
    (cosine decay to 0), ``seed``, torch ``threads``, ``mirror`` (add the
    train clips' left-right mirror images), ``lags`` (input frames, 30 fps;
    negative = the future: a model only offline tracking can run),
    ``dropout`` (the MLP's, during training), AdamW's ``weight_decay``,
    ``input_noise`` (Gaussian noise on the inputs, in units of each input's
    standard deviation), ``select`` (see the field), ``verbose`` (print the log)."""

    seconds: float = 900.0
    hidden: int = 512
    layers: int = 3
    batch: int = 512
    lr: float = 1e-3
    seed: int = 0
    threads: int = 1
    mirror: bool = False
    lags: tuple = features.LAGS
    dropout: float = 0.1
    weight_decay: float = 1e-4
    input_noise: float = 0.02
    #: Which step's weights are kept: "loss" (the lowest validation loss) or
    #: "joints" (the lowest validation joint position error of the decoded
    #: poses, :func:`joint_error`: what the tracker is judged on).
    select: str = "joints"
    verbose: bool = True


def joint_error(y_pred: np.ndarray, y_true: np.ndarray, sk=None) -> float:
    """Mean joint position error (m) between the poses of network rows
    ``y_pred`` and target rows ``y_true`` ``[N, O]``, both decoded on the
    canonical skeleton ``sk`` in their heading frame (no post-processing:
    the network's own error)."""
    from .posing import decode

    sk = sk or canonical_skeleton()
    origin, hinv = np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0])
    pos = [decode(np.asarray(y, dtype=np.float64), origin, hinv, 1.0, sk).world_positions() for y in (y_pred, y_true)]
    return float(np.linalg.norm(pos[0] - pos[1], axis=-1).mean())


def train(config: TrainConfig | None = None, *, data_dir=None, out=PT_PATH) -> Path:
    """Fit for ``config.seconds`` of wall time on the train split of
    ``data_dir`` (default ../shared/data), keeping the step with the best
    validation score (``config.select``); writes the checkpoint ``out`` and its ONNX export,
    returns the checkpoint path."""
    c = config or TrainConfig()
    if c.select not in ("loss", "joints"):
        raise ValueError(f"select must be 'loss' or 'joints', got {c.select!r}")
    seconds, hidden, layers, batch, lr = c.seconds, c.hidden, c.layers, c.batch, c.lr
    seed, threads, verbose, mirror = c.seed, c.threads, c.verbose, c.mirror
    import torch

    from ..model_files import checkpoint
    from .model import TrackNet

    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    t0 = time.time()
    xt, yt = split_arrays("train", data_dir, every=1, verbose=verbose, mirror=mirror, lags=c.lags)
    xv, yv = split_arrays("validation", data_dir, every=2, verbose=verbose, lags=c.lags)
    if verbose:
        print(f"data: train {len(xt)} frames, validation {len(xv)} ({time.time() - t0:.0f} s)", flush=True)
    model = TrackNet(xt.shape[1], yt.shape[1], hidden, layers, dropout=c.dropout)
    xm, xs = _stats(xt)
    ym, ys = _stats(yt)
    ym[-2:], ys[-2:] = 0.0, 1.0
    for name, v in (("x_mean", xm), ("x_std", xs), ("y_mean", ym), ("y_std", ys)):
        getattr(model, name).copy_(torch.from_numpy(v.astype(np.float32)))
    w = torch.ones(yt.shape[1])
    w[:3] = 4.0  # the hips' position moves every joint
    w[3:9] = 2.0
    Xt, Yt = torch.from_numpy(xt), torch.from_numpy(yt)
    Xv, Yv = torch.from_numpy(xv), torch.from_numpy(yv)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=c.weight_decay)
    rng = np.random.default_rng(seed)
    step, best, best_state, log = 0, float("inf"), None, []
    t_train = time.time()
    while True:
        frac = (time.time() - t_train) / seconds
        if frac >= 1.0:
            break
        for g in opt.param_groups:
            g["lr"] = lr * 0.5 * (1.0 + np.cos(np.pi * min(frac, 1.0)))
        idx = torch.from_numpy(rng.integers(0, len(Xt), batch))
        x = Xt[idx] + torch.randn(batch, Xt.shape[1]) * model.x_std * c.input_noise
        model.train()
        loss = _loss(model, x, Yt[idx], w)
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if step % 500 == 0:
            model.eval()
            with torch.no_grad():
                vl = float(np.mean([float(_loss(model, Xv[i:i + 4096], Yv[i:i + 4096], w))
                                    for i in range(0, len(Xv), 4096)]))
                vj = joint_error(model(Xv).numpy(), yv) if c.select == "joints" else None
            log.append({"step": step, "seconds": round(time.time() - t_train, 1), "train": float(loss.detach()),
                        "validation": vl, "validation_joints_m": vj})
            if verbose:
                print(json.dumps(log[-1]), flush=True)
            score = vj if c.select == "joints" else vl
            if score < best:
                best, best_state = score, {k: v.clone() for k, v in model.state_dict().items()}
    if best_state is not None:
        model.load_state_dict(best_state)
    config = {"input_size": int(xt.shape[1]), "output_size": int(yt.shape[1]), "hidden": hidden, "layers": layers,
              "lags": [int(k) for k in c.lags], "fps": 30.0}
    metadata = {"skeleton": skeleton_to_dict(canonical_skeleton()), "training": {
        "steps": step, "seconds": seconds, "mirror": mirror, "batch": batch, "lr": lr, "seed": seed, "best_validation": best,
        "dropout": c.dropout, "weight_decay": c.weight_decay, "input_noise": c.input_noise, "select": c.select,
        "train_frames": int(len(xt)), "validation_frames": int(len(xv)), "log": log,
        "head_height": float(np.percentile(xt[:, features.PER_FRAME * list(c.lags).index(0) + 2], 90))}}
    path = checkpoint.save(out, "tracking", config=config, weights=model.state_dict(), metadata=metadata)
    export_onnx(path)
    return path


def load_model(path=PT_PATH):
    """``(TrackNet in eval mode, checkpoint)`` of a tracking checkpoint."""
    from ..model_files import checkpoint
    from .model import TrackNet

    ck = checkpoint.load(path, "tracking")
    c = ck.config
    model = TrackNet(c["input_size"], c["output_size"], c["hidden"], c["layers"])
    model.load_state_dict(ck.weights)
    return model.eval(), ck


def onnx_metadata(ck) -> dict:
    from ..model_files.manifest import file_sha256

    return {"rigmind_config": json.dumps(ck.config), "rigmind_skeleton": json.dumps(ck.metadata["skeleton"]),
            "rigmind_head_height": json.dumps(ck.metadata["training"]["head_height"]),
            "rigmind_weights_sha256": file_sha256(ck.path)}


def export_onnx(pt_path=PT_PATH, onnx_path=None) -> Path:
    """Export a tracking checkpoint to ONNX (opset 17; input ``"x" [N, I]``,
    output ``"y" [N, O]``, both raw, dynamic batch)."""
    import warnings

    import torch

    from ..model_files.onnx_export import stamp_and_install

    model, ck = load_model(pt_path)
    onnx_path = Path(onnx_path) if onnx_path is not None else Path(pt_path).with_suffix(".onnx")
    tmp = onnx_path.with_name(onnx_path.name + ".tmp")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (torch.zeros(1, ck.config["input_size"]),), str(tmp), opset_version=17,
                          dynamo=False, input_names=["x"], output_names=["y"], do_constant_folding=True,
                          dynamic_axes={"x": {0: "n"}, "y": {0: "n"}})
    return stamp_and_install(tmp, onnx_path, onnx_metadata(ck))


def main_train(argv=None) -> int:
    p = argparse.ArgumentParser(prog="rigmind train track", description="train the three-point tracking model")
    p.add_argument("--data", default=None, help="data folder (default ../shared/data)")
    p.add_argument("--seconds", type=float, default=900.0, help="training wall time (s)")
    p.add_argument("--out", default=str(PT_PATH), help="checkpoint path (ONNX written next to it)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--mirror", action="store_true", help="add left-right mirror images of the train clips")
    p.add_argument("--future", action="store_true",
                   help="inputs from 0.67 s of the future too (features.FUTURE_LAGS; an offline-only model "
                        "the live tracker refuses); give --out")
    p.add_argument("--select", choices=("loss", "joints"), default="joints",
                   help="keep the step with the lowest validation loss, or joint position error")
    a = p.parse_args(argv)
    limits.check_model_tool_options(a)
    limits.check_output_paths(a.out)
    lags = features.FUTURE_LAGS if a.future else features.LAGS
    path = train(TrainConfig(seconds=a.seconds, threads=a.threads, mirror=a.mirror, lags=lags, select=a.select),
                 data_dir=a.data, out=a.out)
    print(f"wrote {path} and {Path(path).with_suffix('.onnx')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main_train())
