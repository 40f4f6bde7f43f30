"""Issue #16: every trainer writes the one checkpoint format and it loads back.

    .venv/bin/python bench/checkpoint_trainers.py

Tiny trainings (a few steps each, in a temporary folder, on the real data
folder) of the five trainers -- face (``rigmind train face``), gesture
(``rigmind train gesture``), the gesture motion encoder, locomotion
(``train_locomotion``) and the style classifier -- then each file is read
raw (format, version, kind, stored vs recomputed weights hash) and loaded by
its model's own loader. Prints a Markdown table."""

from __future__ import annotations

import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from rigmind.backend.model_files import checkpoint
from rigmind.backend.paths import data_dir

D2 = "bandai_namco_d2_locomotion/bvh/"
LOCO_CLIPS = ["dataset-2_walk_normal_001.bvh.gz", "dataset-2_walk_elderly_001.bvh.gz",
              "dataset-2_walk_normal_004.bvh.gz", "dataset-2_run_normal_003.bvh.gz"]


def face(tmp):
    from rigmind.backend.face import model as FM, train as FT

    out = tmp / "face.pt"
    FT.main_train(["--steps", "4", "--synth", "4", "--data", str(tmp / "none"), "--out", str(out)])
    FM.load_model(out)
    return out, "face"


def gesture(tmp):
    from rigmind.backend.gesture.generate import GestureModel
    from rigmind.backend.gesture.train import GestureTrainConfig, train_gesture

    src = data_dir() / "beat2_speech_gesture_sample"
    one = tmp / "beat"
    one.mkdir()
    for suffix in (".npz", ".wav"):
        (one / f"2_scott_0_1_1{suffix}").symlink_to(src / f"2_scott_0_1_1{suffix}")
    out = tmp / "gesture.pt"
    train_gesture(one, out, GestureTrainConfig(steps=3, seed=0, threads=1, with_unpaired=False), log=lambda *a: None)
    GestureModel.load(out, runtime="torch")
    return out, "gesture"


def motion_encoder(tmp):
    from rigmind.backend.gesture import motion_encoder as ME

    clips = [np.random.default_rng(k).normal(scale=0.3, size=(120, ME.N_JOINTS, 3)) for k in range(3)]
    enc, stats = ME.train_encoder(clips, ME.EncoderTrainConfig(steps=20, seed=0))
    out = tmp / "gesture_motion_encoder.pt"
    ME.save_encoder(out, enc, stats)
    ME.load_encoder(out)
    return out, "gesture-motion-encoder"


def locomotion(tmp):
    from rigmind.backend.locomotion import features as FT, train

    cache = tmp / "cache"
    FT.build_cache(data_dir(), cache, clips=LOCO_CLIPS)
    out = tmp / "locomotion.pt"
    cfg = train.TrainConfig(seed=0, steps=4, batch=16, window=6, threads=1, minutes=1.0,
                         model={"hidden": 32, "experts": 2, "gating_hidden": 8})
    train.train_locomotion(data_dir(), out, cfg, cache_dir=cache, clips=LOCO_CLIPS, verbose=False)
    train.load_checkpoint(out)
    from rigmind.backend.locomotion import style_classifier

    model = style_classifier.train_style_classifier(cache, style_classifier.StyleTrainConfig(seed=0, epochs=1, styles=("normal", "elderly")))
    sc = tmp / "style_classifier_seed0.pt"
    model.save(sc)
    style_classifier.StyleClassifier.load(sc)
    return out, "locomotion", sc, "style-classifier"


def row(path, kind, seconds) -> str:
    blob = torch.load(str(path), map_location="cpu", weights_only=True)
    ok = blob["weights_sha256"] == checkpoint.weights_sha256(blob["weights"], blob["arrays"])
    head = f"{blob['format']} v{blob['version']}, kind {blob['kind']}"
    meta = ", ".join(sorted(blob["metadata"]))
    return (f"| {kind} | {path.name} | {path.stat().st_size / 1e6:.2f} MB | {head} | "
            f"{'matches' if ok else 'MISMATCH'} | {meta} | {seconds:.0f} s |")


def main() -> int:
    print("| trainer | file | size | layout read back | weights SHA-256 | metadata keys | wall |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        for fn in (face, gesture, motion_encoder, locomotion):
            t0 = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):
                got = fn(tmp)
            for path, kind in zip(got[::2], got[1::2]):
                assert checkpoint.load(path, kind).weights
                print(row(path, kind, time.perf_counter() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
