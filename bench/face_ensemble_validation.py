"""Validation of the face model ensemble: each member, each pair and the
whole set, scored on material that is never the evaluation set.

    H=LJ001-0025,LJ001-0026,LJ001-0027,LJ001-0028,LJ001-0029,LJ001-0030,LJ001-0031,LJ001-0032
    for s in 0 1 2; do
        rigmind train face --data ../shared/data --seed $s --holdout $H --out /tmp/val/s$s.pt
    done
    .venv/bin/python bench/face_ensemble_validation.py /tmp/val/s0.pt /tmp/val/s1.pt /tmp/val/s2.pt

Scores, as viseme error rate (%) by Viterbi switch penalty:
- LJ001-0025..0032 (held out of those runs) against their pocketsphinx
  pseudo-labels (word recognition → forced alignment, from the training
  label cache; recognition errors are in the reference, so the figures are
  relative);
- 40 augmented eSpeak US English utterances (seed 777, not a training seed).
"""

import argparse
import itertools
import json
from pathlib import Path

import numpy as np

HOLDOUT = [f"LJ001-{k:04d}" for k in range(25, 33)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("weights", nargs="+", type=Path)
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    ap.add_argument("--labels", type=Path, default=Path.home() / ".cache" / "rigmind" / "face_pseudo_labels.json")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    from rigmind.backend.audio import load_audio
    from rigmind.backend.audio.features import speech_features
    from rigmind.backend.face import metrics
    from rigmind.backend.face import train
    from rigmind.backend.face.model import load_model, viterbi
    from rigmind.backend.face.visemes import arpabet_to_viseme, viseme_names

    names = viseme_names()
    labels = json.loads(args.labels.read_text())
    real = []
    for stem in HOLDOUT:
        clip = load_audio(args.data / "speech_english_ljspeech" / "wavs" / f"{stem}.wav")
        real.append((speech_features(clip, 100.0), [arpabet_to_viseme(p) for _, _, p in labels[f"{stem}.wav"]]))
    words = train.synthesis_words()
    rng = np.random.default_rng(777)
    synth = []
    for _ in range(40):
        _x, lab, _j, _p, clip = train.synth_item(rng, words, lang="en-us")
        synth.append((speech_features(clip, 100.0), [names[i] for i in lab]))

    def score(model, items, penalties):
        logps = [(np.log(model.predict_features(f)[0] + 1e-6), ref) for f, ref in items]
        out = {}
        for pen in penalties:
            err = n = 0
            for lp, ref in logps:
                e, k = metrics.viseme_error_rate([names[i] for i in viterbi(lp, pen)], ref)
                err, n = err + e, n + k
            out[pen] = round(100 * err / n, 1)
        return out

    print("| members | LJ held-out vs pseudo-labels, penalty 2 / 3 / 4 / 5 / 6 / 8 | eSpeak en-us, 3 / 4 / 5 |")
    print("|---|---|---|")
    for r in range(1, len(args.weights) + 1):
        for idx in itertools.combinations(range(len(args.weights)), r):
            model = load_model(*[args.weights[i] for i in idx])
            a = score(model, real, (2, 3, 4, 5, 6, 8))
            b = score(model, synth, (3, 4, 5))
            print(f"| {' + '.join(args.weights[i].stem for i in idx)} | {' / '.join(map(str, a.values()))} "
                  f"| {' / '.join(map(str, b.values()))} |", flush=True)


if __name__ == "__main__":
    main()
