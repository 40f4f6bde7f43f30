"""Where the seam measure's excess comes from: the worst-phase ÷ mean ratio of
the upper body's acceleration at several periods, stage by stage.

``viewer_metrics.seam_periodicity`` reads high at a window stride when the
joins leave a trace. This prints it at periods 7-9, 12, 16, 24, 31-33 and 47-49
(frames) for the generated take after each step of ``gesture_from_features``
(decoded, settled with the speech, feet planted, hands lifted), mean over the
validation voices' takes and seeds, so a reading at a multiple of 8 can be
told from its neighbours.

    PYTHONPATH=/tmp/pkg .venv/bin/python bench/gesture_seam_periods.py --seeds 3
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np

from rigmind.backend import paths
from rigmind.backend.audio.features import speech_features
from rigmind.backend.audio.loading import load_audio
from rigmind.backend.gesture import metrics, representation
from rigmind.backend.gesture.generate import FPS, generate_from_features, get_model
from rigmind.backend.gesture.gesture_space import lift_hands, stress_envelope
from rigmind.backend.gesture.speech_rhythm import settle_with_speech
from rigmind.backend.gesture.standing import plant_feet
from rigmind.backend.gesture.viewer_metrics import seam_periodicity

PERIODS = (7, 8, 9, 12, 16, 24, 31, 32, 33, 47, 48, 49)
TAKES = tuple(f"beat2_speech_gesture_sample/2_scott_0_{k}_{k}.wav" for k in (2, 3, 4, 5))


def stages(model, feats, seed: int) -> dict:
    """Upper-body world positions ``[T, 13, 3]`` after each step."""
    poses, pulse, energy, speech = generate_from_features(model, feats, seed=seed)
    decoded = representation.decode(poses, FPS, model.finger_basis)
    settled = settle_with_speech(decoded, feats.onset_times, talking=speech)
    planted = plant_feet(settled, steps_from=decoded)
    lifted = lift_hands(planted, stress_envelope(energy, pulse, speech, model.energy_map["rest_energy"], FPS), 0.5,
                        talking=speech)
    up = list(metrics.UPPER_BODY)
    return {k: m.world_positions()[:, up] for k, m in
            (("decoded", decoded), ("settled", settled), ("planted", planted), ("lifted", lifted))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=paths.data_dir())
    ap.add_argument("--seeds", type=int, default=3)
    a = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    t0 = time.time()
    model = get_model()
    acc = {}
    for v in TAKES:
        feats = speech_features(load_audio(a.data / v), FPS)
        for seed in range(a.seeds):
            for name, up in stages(model, feats, seed).items():
                acc.setdefault(name, []).append([seam_periodicity(up, k) for k in PERIODS])
    print(f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; {time.strftime('%Y-%m-%d')}; "
          f"{len(TAKES)} takes x {a.seeds} seeds; {time.time() - t0:.0f} s.\n")
    print("| stage | " + " | ".join(str(k) for k in PERIODS) + " |")
    print("|---|" + "---|" * len(PERIODS))
    for name, rows in acc.items():
        print(f"| {name} | " + " | ".join(f"{x:.3f}" for x in np.mean(rows, axis=0)) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
