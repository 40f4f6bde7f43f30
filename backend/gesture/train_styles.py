"""Build ``models/gesture_styles.npz``: the style layers and the style
classifier, from the Bandai Namco styled clips' training split.

    python -m rigmind.backend.gesture.train_styles [--data ../shared/data] [--out models/gesture_styles.npz]

About a minute on one core once the clips are retargeted (the first run
retargets ~1000 clips, ~3 min, cached in ``.cache/gesture``). Prints the
classifier's accuracy on the held-out real clips (validation split).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from . import style_features as sf
from .style_classifier import fit
from .style_data import load_styled
from .style_layer import STYLE_FILE, learn


def build(clips: list):
    """``(StyleBank, StyleClassifier, validation accuracy per style)`` from styled clips."""
    bank = learn(clips)
    feats = [sf.window_features(c.rot, c.root, 30.0) for c in clips]
    train = [i for i, c in enumerate(clips) if c.split == "train"]
    clf = fit([feats[i] for i in train], [clips[i].style for i in train])
    acc = {}
    for f, c in zip(feats, clips):
        if c.split == "validation":
            acc.setdefault(c.style, []).append(clf.classify(f) == c.style)
    return bank, clf, {k: (float(np.mean(v)), len(v)) for k, v in acc.items()}


def save(path, bank, clf, val_acc: dict) -> Path:
    from ..model_files.manifest import record

    path = Path(path)
    styles = sorted(val_acc)
    np.savez(path, layer_styles=np.array(bank.styles), layer_posture=bank.posture, layer_log_amp=bank.log_amp,
             layer_log_sharp=bank.log_sharp, abs_posture=bank.abs_posture,
             abs_speed=bank.abs_speed, abs_sharp=bank.abs_sharp, abs_trunk=bank.abs_trunk, source=np.array(bank.source), val_styles=np.array(styles),
             val_accuracy=np.array([val_acc[s][0] for s in styles]), val_clips=np.array([val_acc[s][1] for s in styles]),
             **clf.arrays())
    record(path)
    return path


def main(argv=None) -> int:
    from .. import paths

    ap = argparse.ArgumentParser(prog="rigmind.backend.gesture.train_styles", description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(paths.data_dir()), help="data folder (default ../shared/data)")
    ap.add_argument("--out", default=str(STYLE_FILE))
    a = ap.parse_args(argv)
    clips = load_styled(a.data)
    if not clips:
        from .dataset import GestureDataError

        raise GestureDataError(f"no Bandai Namco styled gesture clips under {a.data}")
    bank, clf, acc = build(clips)
    out = save(a.out, bank, clf, acc)
    for s in sorted(acc):
        print(f"{s:15s} validation accuracy {acc[s][0]:.2f} ({acc[s][1]} real clips)")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
