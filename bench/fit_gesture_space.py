"""Gesture space (issue #13): the real speaker's wrist distributions, and the
lift's settings chosen on validation speech.

1. The target (``presets/gesture_space.json``): wrist height relative to the
   shoulders and forward distance from the pelvis (quantiles; and the median
   where the speaker is silent: the hands' resting place) over the
   *training* part of every paired take (the first 80 %; the held-out tail
   is never read here), on the canonical SMPL-X skeleton.
2. A grid over :class:`GestureSpaceConfig` on validation speech only — the
   paired take's training-part speech (its own motion as reference) and the
   two ``speech_multilingual`` files the viewer eval does not use (Russian
   Silero TTS, English LibriSpeech; the training part's motion as
   reference), each whole (up to 30 s) and cut into 4.3-s parts (as short as
   the shortest evaluation take) — scored as the viewer eval scores a take: the summed 1-D
   Wasserstein distance (cm) of wrist height above the floor and forward
   distance from the pelvis, seeds 0-2, plus the largest acceleration of an
   elbow or wrist (pops) against the unlifted motion's.
   The evaluation takes (German, English, Spanish Silero, Mandarin AISHELL)
   are not read.

    .venv/bin/python bench/fit_gesture_space.py [--data ../shared/data] [--write-target] [--grid]
"""

import argparse
import dataclasses
import itertools
import json
from pathlib import Path

import numpy as np

from rigmind.backend.audio.features import speech_features
from rigmind.backend.audio.loading import load_audio
from rigmind.backend.gesture import dataset
from rigmind.backend.gesture import viewer_metrics
from rigmind.backend.gesture.generate import FPS, get_model, standing_gesture
from rigmind.backend.gesture.gesture_space import GestureSpaceConfig, GestureSpaceTarget, lift_hands
from rigmind.backend.smplx_motion import smplx_joint_names

REPO = Path(__file__).resolve().parents[1]
NAMES = list(smplx_joint_names())
SHORT = 4.3  # seconds
VALIDATION_SPEECH = ("speech_multilingual/silero_ru.wav", "speech_multilingual/en_librispeech-1995-1837-0001.wav")


def metric_space(p):
    """As the viewer eval measures a take: ``[F*2, 2]`` (height above the floor, forward from the pelvis)."""
    ix = NAMES.index
    fwd = viewer_metrics.facing(p[:, ix("left_hip")], p[:, ix("right_hip")])
    floor = float(np.percentile(p[:, [ix("left_ankle"), ix("right_ankle")], 2], 1))
    return viewer_metrics.hand_space(p[:, [ix("left_wrist"), ix("right_wrist")]], p[:, 0], fwd, floor)


def arm_pops(p):
    """Largest acceleration of an elbow or a wrist over the take (mm/frame²):
    a pop (an elbow flipping, an arm snapping straight) shows here."""
    w = p[:, [NAMES.index(n) for n in ("left_elbow", "right_elbow", "left_wrist", "right_wrist")]]
    return float(1000 * np.linalg.norm(w[2:] - 2 * w[1:-1] + w[:-2], axis=-1).max())


def unlifted(model, clip, seed):
    """The generator's motion before the lift, and its stress envelope."""
    res, stress = standing_gesture(model, speech_features(clip, FPS), amount=0.5, seed=seed)
    return res.motion, stress, res.speech


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("--write-target", action="store_true", help="write presets/gesture_space.json")
    ap.add_argument("--grid", action="store_true", help="score a grid of settings (else the defaults only)")
    ap.add_argument("--seconds", type=float, default=30.0, help="length of each validation speech file used")
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args(argv)

    corpus = dataset.load_corpus(args.data, with_unpaired=False)
    train_pos = [dataset.positions(t.rot, t.root) for t in corpus.train_paired]
    talking = []
    for t in corpus.train_paired:  # the speaker's voice activity over the same frames
        sp = speech_features(load_audio(t.audio), FPS).speech[: t.num_frames]
        talking.append(np.pad(sp, (0, t.num_frames - len(sp)), mode="edge"))
    target = GestureSpaceTarget.from_positions(
        train_pos, NAMES, talking, "training part (first 80 %) of " + ", ".join(t.name for t in corpus.train_paired))
    if args.write_target:
        target.save()
        print("wrote", "presets/gesture_space.json")
    ref_train = np.concatenate([metric_space(p) for p in train_pos])

    model = get_model()
    cases = []
    for t in corpus.train_paired:  # its own speech, the training part only
        clip = load_audio(t.audio)
        clip = dataclasses.replace(clip, samples=clip.samples[: int(t.num_frames / FPS * clip.sample_rate)])
        cases.append((t.name + " (train part)", clip))
    for rel in VALIDATION_SPEECH:
        if (args.data / rel).exists():
            clip = load_audio(args.data / rel)
            cases.append((Path(rel).stem, dataclasses.replace(clip, samples=clip.samples[: int(args.seconds * clip.sample_rate)])))
            # Short takes (a 4-5 s utterance): their distributions are matched per take too.
            sr = clip.sample_rate
            for a in np.arange(0.0, min(args.seconds, len(clip.samples) / sr) - SHORT + 1e-6, SHORT):
                cases.append((f"{SHORT:g}-s parts", dataclasses.replace(clip, samples=clip.samples[int(a * sr): int((a + SHORT) * sr)])))
    base = [(name, seed, *unlifted(model, clip, seed)) for name, clip in cases for seed in range(args.seeds)]

    def score(cfg, amount=0.5):
        rows = {}
        for name, _seed, motion, stress, speech in base:
            p = lift_hands(motion, stress, amount, cfg, target, speech).world_positions()
            d = viewer_metrics.hand_space_distance(metric_space(p), ref_train)
            rows.setdefault(name, []).append((d["height_cm"], d["forward_cm"], arm_pops(p)))
        return {n: np.mean(v, axis=0).round(2).tolist() for n, v in rows.items()}

    print("per validation take: [W1 height cm, W1 forward cm, largest elbow/wrist acceleration mm/frame²]")
    print("no lift:", json.dumps(score(GestureSpaceConfig(), 0.0)))
    print("defaults:", json.dumps(score(GestureSpaceConfig())))
    print("defaults, amount 1:", json.dumps(score(GestureSpaceConfig(), 1.0)))
    if args.grid:
        results = []
        for sw, hw, sm, tail, passes in itertools.product((0.5, 0.7, 0.9), (0.6, 0.8), (0.1, 0.2, 0.3), (0.01,),
                                                          (1, 2, 3)):
            cfg = GestureSpaceConfig(stress_weight=sw, height_weight=hw, smooth_seconds=sm, tail=tail, passes=passes)
            s = score(cfg)
            total = float(np.mean([v[0] + v[1] for v in s.values()]))
            jolt = float(np.mean([v[2] for v in s.values()]))
            results.append((total, jolt, sw, hw, sm, tail, passes, s))
            print(f"stress_weight {sw} height_weight {hw} smooth {sm} tail {tail} passes {passes}: W1 h+f {total:.2f} cm, "
                  f"pops {jolt:.1f}",
                  json.dumps(s), flush=True)
        best = min(results, key=lambda r: r[0])
        print("best:", best[:7])


if __name__ == "__main__":
    main()
