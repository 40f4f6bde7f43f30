"""A beat-loss gesture model's output, smoothed (issue #29 item 5): does a
light low-pass remove its shake and keep what it gained on the beats?

The beat-loss retrains (``rigmind train gesture --beat-weight``) stop on
their pulses but shake between them (``gesture_arm_pops.py``). Here the
generated take (after ``lift_hands``, as ``rigmind gesture`` plays it) has
its local rotations and root path smoothed by a Gaussian of σ frames
(quaternions kept on one hemisphere, renormalised), and is scored as
``beat_holds.py`` scores it: the time-shift alignment gain per validation
voice (seeds 0-1; ``--heldout``: the held-out voices, seeds 0-2), the largest elbow/wrist acceleration and the frames with
one over 60 mm/frame². A probe, not in ``rigmind gesture``; settings are
chosen on the validation voices and the held-out ones scored once for them.

    PYTHONPATH=/tmp/pkg python bench/gesture_smoothed_beats.py X.pt --sigmas 0,1,1.5,2.5 [--pulses-at-peaks] \\
        [--json OUT]

Units: frames at 30 fps; σ in frames; accelerations mm/frame².
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rigmind.backend import paths  # noqa: E402
from rigmind.backend.filters import gaussian_filter1d  # noqa: E402

POP_MM = 60.0


def smoothed(motion, sigma: float):
    """``motion`` with its rotations ``[F, J, 4]`` and root ``[F, 3]`` low-passed (σ frames; 0: as is)."""
    if sigma <= 0:
        return motion
    q = motion.rotations.copy()
    # q and -q are one rotation: flip each frame onto the previous one's side before averaging.
    sign = np.cumprod(np.where((q[1:] * q[:-1]).sum(-1) < 0, -1.0, 1.0), axis=0)
    q[1:] *= sign[..., None]
    q = gaussian_filter1d(q, sigma, axis=0, mode="nearest")
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    return replace(motion, rotations=q, root_positions=gaussian_filter1d(motion.root_positions, sigma, axis=0,
                                                                        mode="nearest"))


def score(weights, sigmas, seeds: int = 2, heldout: bool = False) -> dict:
    from rigmind.backend.audio.features import speech_features
    from rigmind.backend.audio.loading import load_audio
    from rigmind.backend.gesture import alignment, alignment_eval, representation
    from rigmind.backend.gesture.generate import FPS, get_model, standing_gesture
    from rigmind.backend.gesture.gesture_space import lift_hands

    model = get_model(None if weights == "committed" else weights)
    mean_speed, whole, _ = alignment_eval.real_reference(paths.data_dir())
    arms = [representation.names().index(n) for n in ("left_elbow", "right_elbow", "left_wrist", "right_wrist")]
    out = {str(s): {"gains": {}, "arm_accel_max_mm": 0.0, "pops": 0, "frames": 0} for s in sigmas}
    voices = alignment_eval.HELDOUT_VOICES if heldout else alignment_eval.VALIDATION_VOICES
    for v in voices:
        clip = load_audio(paths.data_dir() / v)
        feats = speech_features(clip, FPS)
        for seed in range(seeds):
            res, stress = standing_gesture(model, feats, amount=0.5, seed=seed)
            lifted = lift_hands(res.motion, stress, 0.5, talking=res.speech)
            for s in sigmas:
                p = smoothed(lifted, s).world_positions()
                r = out[str(s)]
                r["gains"].setdefault(v, []).append(alignment.alignment_gain(
                    clip.samples, clip.sample_rate, p, FPS, mean_speed=mean_speed).gain)
                a = 1000.0 * np.linalg.norm(p[2:, arms] - 2 * p[1:-1, arms] + p[:-2, arms], axis=-1).max(axis=1)
                r["arm_accel_max_mm"] = max(r["arm_accel_max_mm"], float(a.max()))
                r["pops"] += int((a > POP_MM).sum())
                r["frames"] += len(p)
        print(Path(v).stem, {k: round(float(np.mean(r["gains"][v])), 3) for k, r in out.items()}, flush=True)
    for r in out.values():
        g = [float(np.mean(x)) for x in r["gains"].values()]
        r.update(mean=float(np.mean(g)), min=min(g), voices_at_real=sum(x >= whole.gain for x in g))
    return {"real_gain": whole.gain, "weights": str(weights), "seeds": seeds, "voices": "heldout" if heldout else "validation",
            "by_sigma": out}


def main(argv=None) -> int:
    import torch

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("weights", help="'committed' or a gesture checkpoint (.pt)")
    ap.add_argument("--sigmas", default="0,1,1.5,2.5", help="comma-separated σ in frames (0: not smoothed)")
    ap.add_argument("--pulses-at-peaks", action="store_true", help="as beat_holds.py --pulses-at-peaks")
    ap.add_argument("--heldout", action="store_true",
                    help="score the held-out voices once (3 seeds) instead, for a setting chosen on validation")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    if a.pulses_at_peaks:
        from beat_holds import pulses_at_density_peaks

        pulses_at_density_peaks()
    res = score(a.weights, [float(s) for s in a.sigmas.split(",")], 3 if a.heldout else 2, a.heldout)
    res["pulses_at_peaks"] = a.pulses_at_peaks
    for s, r in res["by_sigma"].items():
        print(f"sigma {s}: mean {r['mean']:.3f}  voices >= {res['real_gain']:.3f}: {r['voices_at_real']}/{len(r['gains'])}  "
              f"min {r['min']:.3f}  arm accel max {r['arm_accel_max_mm']:.1f}  "
              f"frames over {POP_MM:.0f}: {r['pops']}/{r['frames']}")
    if a.json:
        a.json.write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
