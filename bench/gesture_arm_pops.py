"""Where a gesture model's arm pops are (issue #29, the beat-loss retrains):
frames of the standing gesture on the validation voices (``standing_gesture``,
amount 0.5, seeds 0-1) whose elbow or wrist acceleration exceeds
``--threshold`` mm/frame², how many of them lie within 2 frames of one of the
model's pulses, and their phase within the decoder's window stride
(``generate.STRIDE`` frames, counted from the pre-roll's start), so a reader
can tell pops at the beats or at the window joins from a motion shaky
throughout.

    PYTHONPATH=/tmp/pkg python bench/gesture_arm_pops.py committed /tmp/gt/beat03.pt [...] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np


def pops(weights, threshold: float, seeds: int = 2) -> dict:
    from rigmind.backend import paths
    from rigmind.backend.audio.features import speech_features
    from rigmind.backend.audio.loading import load_audio
    from rigmind.backend.gesture import alignment_eval, controls, representation
    from rigmind.backend.gesture.generate import FPS, PREROLL, STRIDE, get_model, standing_gesture

    model = get_model(None if weights == "committed" else weights)
    arms = [representation.names().index(n) for n in ("left_elbow", "right_elbow", "left_wrist", "right_wrist")]
    phases, near_pulse, frames = [], 0, 0
    for v in alignment_eval.VALIDATION_VOICES:
        feats = speech_features(load_audio(paths.data_dir() / v), FPS)
        for seed in range(seeds):
            res, _ = standing_gesture(model, feats, amount=0.5, seed=seed)
            p = res.motion.world_positions()[:, arms]
            frames += len(p)
            acc = 1000.0 * np.linalg.norm(p[2:] - 2 * p[1:-1] + p[:-2], axis=-1).max(axis=1)
            # The same draw of the pulses as generate_from_features makes first from this seed.
            pulse = controls.audio_controls(feats, model.energy_map, model.beat_rate, 0.5, np.random.default_rng(seed))[0]
            at = np.flatnonzero(pulse > 0.5)
            for f in np.flatnonzero(acc > threshold) + 1:
                phases.append(int((f + PREROLL) % STRIDE))
                near_pulse += bool(len(at) and np.abs(at - f).min() <= 2)
    return {"frames": frames, "pops": len(phases), "near_pulse": near_pulse,
            "phase_histogram": np.bincount(np.array(phases, int), minlength=STRIDE).tolist()}


def main(argv=None) -> int:
    import torch

    ap = argparse.ArgumentParser()
    ap.add_argument("weights", nargs="+", help="'committed' or a gesture checkpoint (.pt)")
    ap.add_argument("--threshold", type=float, default=60.0, help="mm/frame² (the committed model's largest: ~35)")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    torch.set_num_threads(2)
    out = {}
    for w in a.weights:
        r = out[w] = pops(w, a.threshold)
        h = np.array(r["phase_histogram"])
        print(f"{w}: {r['pops']} of {r['frames']} frames over {a.threshold:g} mm/f², {r['near_pulse']} within 2 frames "
              f"of a pulse; per stride phase min {h.min()} max {h.max()}", flush=True)
    if a.json:
        a.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
