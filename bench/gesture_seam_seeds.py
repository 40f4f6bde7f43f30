"""The viewer's seam and skate readings over many seeds, three versions of the pipeline.

``viewer_metrics.seam_periodicity`` on one take moves with the seed alone
(by ±0.3 on a 4.3-s clip, where a 48-frame period fits twice), the standing
skate by about ±0.008 cm/frame. This reads them over ``--seeds`` seeds per
voice for the pipeline before the settling step (fixed 32-frame stride, no
``speech_rhythm``: main 8d598ee), with the step and the windows off the
latent code grid but no beat search (main cb8752b) and today's (each
window's draw picked for its beats, :mod:`.beat_search`): the pipeline of
``gesture_from_features`` (neutral, amount 0.5), its first 30 s, the
backend's SMPL-X positions (no rig). Per voice and version: the standing skate of the ankles (cm/frame), seam 48 and 32 of the upper body
with their off-stride floors (mean ± standard error over seeds), the largest
seam 48, how many seeds read above 2.0 at 48 frames, and the skate's and the
seams' differences from the first version seed by seed (mean ± standard
error of the paired differences: the versions share their seeds).

    PYTHONPATH=/tmp/pkg .venv/bin/python bench/gesture_seam_seeds.py --seeds 30 [--voices silero_es,...]
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
from rigmind.backend.gesture.beat_search import BeatSearchConfig
from rigmind.backend.gesture.generate import FPS, STRIDES, GeneratorConfig, generate_from_features, get_model
from rigmind.backend.gesture.gesture_space import lift_hands, stress_envelope
from rigmind.backend.gesture.speech_rhythm import settle_with_speech
from rigmind.backend.gesture.standing import plant_feet
from rigmind.backend.gesture.viewer_metrics import off_stride_periodicity, seam_periodicity, standing_foot_skate

VOICES = tuple(f"speech_multilingual/{v}" for v in ("silero_de.wav", "silero_en.wav", "silero_es.wav",
                                                    "zh_aishell-BAC009S0724W0121.wav"))
#: name → (settling step on, generator config)
_NO_SEARCH = BeatSearchConfig(candidates=1)
VERSIONS = {"before the step (8d598ee)": (False, GeneratorConfig((STRIDES[1],), _NO_SEARCH)),
            "off the grid, no beat search (cb8752b)": (True, GeneratorConfig(search=_NO_SEARCH)),
            "beat search (today)": (True, GeneratorConfig())}
ANKLES = [representation.names().index(n) for n in ("left_ankle", "right_ankle")]


def positions(model, feats, seed: int, version: tuple) -> np.ndarray:
    """The neutral pipeline's world positions ``[F ≤ 900, 55, 3]``."""
    settle, config = version
    poses, pulse, energy, speech = generate_from_features(model, feats, seed=seed, config=config)
    decoded = representation.decode(poses, FPS, model.finger_basis)
    m = settle_with_speech(decoded, feats.onset_times, talking=speech) if settle else decoded
    m = plant_feet(m, steps_from=decoded)
    m = lift_hands(m, stress_envelope(energy, pulse, speech, model.energy_map["rest_energy"], FPS), 0.5,
                   talking=speech)
    return m.world_positions()[:int(30 * FPS)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=paths.data_dir())
    ap.add_argument("--seeds", type=int, default=30)
    ap.add_argument("--voices", help="comma-separated file stems of VOICES to read (default: all)")
    a = ap.parse_args(argv)
    voices = [v for v in VOICES if not a.voices or Path(v).stem in a.voices.split(",")]
    t0 = time.time()
    model = get_model()
    rows = []
    for v in voices:
        feats = speech_features(load_audio(a.data / v), FPS)
        first = None
        for name, version in VERSIONS.items():
            r = []
            for seed in range(a.seeds):
                p = positions(model, feats, seed, version)
                up = p[:, list(metrics.UPPER_BODY)]
                r.append([standing_foot_skate(p[:, ANKLES]), seam_periodicity(up, 48), off_stride_periodicity(up, 48),
                          seam_periodicity(up, 32), off_stride_periodicity(up, 32)])
            r = np.array(r)
            se = r.std(axis=0, ddof=1) / np.sqrt(len(r))
            first = r if first is None else first
            d = r[:, [0, 1, 3]] - first[:, [0, 1, 3]]
            dse = d.std(axis=0, ddof=1) / np.sqrt(len(d))
            rows.append(f"| {Path(v).stem} | {name} | {r[:, 0].mean():.4f} ± {se[0]:.4f} | "
                        f"{r[:, 1].mean():.3f} ± {se[1]:.3f} | {r[:, 2].mean():.3f} | "
                        f"{r[:, 3].mean():.3f} ± {se[3]:.3f} | {r[:, 4].mean():.3f} | {r[:, 1].max():.2f} | "
                        f"{int((r[:, 1] > 2.0).sum())}/{len(r)} | "
                        + " | ".join(f"{m:+.{k}f} ± {e:.{k}f}" for m, e, k in zip(d.mean(axis=0), dse, (4, 3, 3)))
                        + " |")
            print(rows[-1], flush=True)
    print(f"\nMachine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
          f"{time.strftime('%Y-%m-%d')}; {a.seeds} seeds; {time.time() - t0:.0f} s.\n")
    first = next(iter(VERSIONS))
    print("| voice | version | standing skate cm/frame | seam 48 | its floor | seam 32 | its floor | largest seam 48 | "
          f"seeds > 2.0 at 48 | skate − {first}'s, paired | seam 48 − its | seam 32 − its |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
