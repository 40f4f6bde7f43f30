"""Gesture holds in sparse speech (issue #29 item 5): an experiment, not in ``rigmind gesture``.

Why. The alignment gain (``backend/gesture/alignment.py``) divides BC by the
BC of the same motion at unrelated timing. On these voices the speech has
librosa onsets every 0.1-0.2 s, so a speed minimum anywhere is near some
onset; what can lift the gain is *where* the motion has its beats: many
where the onsets are dense, none where they are sparse. Two measurements
here:

1. **Ceiling at onset-density peaks** (``--ceiling``): the gain of a motion
   whose 13 upper-body joints have their speed minima exactly at the local
   maxima of the speech's onset density (librosa onsets, each a Gaussian of
   σ = 0.3 s, summed) and nowhere else. The ceilings of
   ``bench_beat_alignment.py --ceiling`` put the beats on the strongest
   onsets instead.
2. **Holds** (``--grid``, ``--heldout``): the generated take retimed so it
   plays slowly where the speech's onset density is in the clip's lowest
   quantiles (a gesture hold: speed under BC's 0.3 threshold, so no beats
   there) and catches up around it, with the shift bounded. The density
   comes from the product's own features (``SpeechFeatures.onset`` peaks
   above the median strength, during speech), not from the metric's librosa
   onsets. Settings are chosen on the validation voices; the held-out voices
   are scored once for the settings named on the command line.

    PYTHONPATH=/tmp/pkg nice -n 10 python bench/beat_holds.py --ceiling --grid --heldout bounded,filter_0.1 \\
        --json bench/results/gesture_holds.json
    PYTHONPATH=/tmp/pkg nice -n 10 python bench/beat_holds.py --grid --grid-only filter_0.1,bounded --pulses-at-peaks \
        --json bench/results/gesture_holds_pulses_at_peaks.json
    python bench/beat_holds.py --markdown bench/results/gesture_holds.json

Units: frames at 30 fps, seconds where named. Shapes: density ``[T]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from beat_strokes import retime  # noqa: E402
from bench_report import add_output_options, finish, reprint  # noqa: E402
from rigmind.backend import paths  # noqa: E402
from rigmind.backend.filters import gaussian_filter1d  # noqa: E402
from rigmind.backend.gesture import alignment, alignment_eval, controls, metrics  # noqa: E402
from rigmind.backend.gesture.generate import FPS  # noqa: E402


@dataclass(frozen=True)
class HoldConfig:
    """How a take is retimed into holds (see the module notes)."""

    #: "filter": the lag is pulled back to zero by a Gaussian of ``back_s``;
    #: "bounded": also the playback rate is capped at ``rmax`` and the hold
    #: depth lowered until the lag stays under ``max_shift_s``.
    mode: str = "bounded"
    #: Density quantiles: at or below ``lo`` a full hold, above ``hi`` none.
    lo: float = 0.1
    hi: float = 0.35
    #: Playback rate in a full hold (1 = as generated).
    slow: float = 0.2
    #: σ (s) of each onset's share of the density.
    density_s: float = 0.3
    #: σ (s) over which the lag is pulled back to zero (the catch-up's width).
    back_s: float = 1.5
    #: Fastest playback ("bounded").
    rmax: float = 1.4
    #: Largest time shift of the motion against the speech (s).
    max_shift_s: float = 0.35
    #: σ (s) of a last smoothing of the playback rate (0: none): a rate that
    #: changes fast is an acceleration the motion did not have.
    rate_smooth_s: float = 0.0


#: Settings tried on the validation voices (name → HoldConfig fields).
GRID = {
    "filter_0.2": {"mode": "filter", "slow": 0.2},
    "filter_0.1": {"mode": "filter", "slow": 0.1},
    "filter_0.35_1s": {"mode": "filter", "slow": 0.35, "back_s": 1.0},
    "filter_0.1_band_0.4": {"mode": "filter", "slow": 0.1, "hi": 0.4},
    "bounded": {},
    "bounded_0.1": {"slow": 0.1},
    "bounded_rmax_1.6": {"slow": 0.1, "rmax": 1.6},
    "filter_0.1_smooth_0.1": {"mode": "filter", "slow": 0.1, "rate_smooth_s": 0.1},
    "filter_0.1_smooth_0.2": {"mode": "filter", "slow": 0.1, "rate_smooth_s": 0.2},
    "bounded_smooth_0.1": {"rate_smooth_s": 0.1},
}


def onset_density(feats, sigma_s: float) -> np.ndarray:
    """``[T]``: the speech's onset peaks (``feats.onset`` local maxima above
    its median strength, during speech) each spread as a Gaussian of
    ``sigma_s`` seconds and summed (peaks per σ-window)."""
    o = np.asarray(feats.onset, np.float64) * feats.speech
    peaks = controls.relative_extrema(np.r_[0.0, o, 0.0], np.greater) - 1
    peaks = peaks[o[peaks] > 1.0]
    t = np.arange(len(o))
    return np.exp(-0.5 * ((t[:, None] - peaks[None]) / (sigma_s * feats.fps)) ** 2).sum(axis=1)


def hold_weight(density: np.ndarray, cfg: HoldConfig, fps: float) -> np.ndarray:
    """``[T]`` 0..1: 1 where the density is at or below its ``lo`` quantile
    (a full hold), smoothstep to 0 at its ``hi`` quantile, smoothed 0.1 s."""
    a, b = np.quantile(density, cfg.lo), np.quantile(density, cfg.hi)
    x = np.clip((b - density) / max(b - a, 1e-9), 0.0, 1.0)
    return gaussian_filter1d(x * x * (3.0 - 2.0 * x), 0.1 * fps)


def _source_frames(weight: np.ndarray, cfg: HoldConfig, depth: float, fps: float) -> np.ndarray:
    """Source time ``[T]`` (frames) for a hold of ``depth`` (0..1) x ``weight``."""
    back = cfg.back_s * fps
    rate = 1.0 - depth * (1.0 - cfg.slow) * weight
    rate = rate / gaussian_filter1d(rate, back, mode="nearest")
    t = np.arange(len(rate), dtype=np.float64)
    phi = np.concatenate([[0.0], np.cumsum(rate[:-1])])
    phi = phi - gaussian_filter1d(phi - t, back, mode="nearest")
    # No shift at the ends, so the take starts and stops with its speech.
    edge = np.clip(np.minimum(t, t[-1] - t) / (0.5 * fps), 0.0, 1.0)
    lag = phi - t
    if cfg.mode == "filter":
        m = cfg.max_shift_s * fps
        lag = m * np.tanh(lag / m)
    phi = t + edge * lag
    step = np.clip(np.diff(phi), 0.05, cfg.rmax if cfg.mode == "bounded" else 3.0)
    if cfg.rate_smooth_s > 0:
        step = gaussian_filter1d(step, cfg.rate_smooth_s * fps, mode="nearest")
    return np.concatenate([[phi[0]], phi[0] + np.cumsum(step)])


def hold_time(weight: np.ndarray, cfg: HoldConfig, fps: float) -> tuple:
    """``(source frames [T], depth used, largest shift s)``."""
    t = np.arange(len(weight), dtype=np.float64)
    for depth in ((1.0,) if cfg.mode == "filter" else (1.0, 0.85, 0.7, 0.55, 0.4, 0.25, 0.1, 0.0)):
        phi = _source_frames(weight, cfg, depth, fps)
        if np.abs(phi - t).max() <= cfg.max_shift_s * fps + 1e-9:
            break
    phi = np.clip(phi, 0.0, len(weight) - 1.0)
    return phi, depth, float(np.abs(phi - t).max() / fps)


def add_holds(motion, feats, cfg: HoldConfig) -> tuple:
    """``(motion retimed into holds, depth, largest shift s)``."""
    w = hold_weight(onset_density(feats, cfg.density_s)[:motion.num_frames], cfg, motion.fps)
    phi, depth, shift = hold_time(w, cfg, motion.fps)
    return retime(motion, phi), depth, shift


def pulses_at_density_peaks() -> None:
    """Condition the model on pulses at the onset-density peaks instead of the
    strongest onsets, for this process (``--pulses-at-peaks``): swaps
    :func:`controls.select_onsets`, which :func:`controls.audio_controls` calls."""
    def select(onset, speech, fps, rate, rng):
        o = np.asarray(onset, np.float64) * speech
        peaks = controls.relative_extrema(np.r_[0.0, o, 0.0], np.greater) - 1
        peaks = peaks[o[peaks] > 1.0]
        t = np.arange(len(o))
        d = np.exp(-0.5 * ((t[:, None] - peaks[None]) / (0.3 * fps)) ** 2).sum(axis=1) * speech
        top = controls.relative_extrema(np.r_[0.0, d, 0.0], np.greater) - 1
        return top[d[top] > 0.5]

    controls.select_onsets = select


def trimmed_onsets(clip, n_frames: int):
    """``(librosa onsets s, span s)`` of the span the alignment gain scores."""
    onsets, (f0, f1) = metrics.trimmed_onsets(clip.samples, clip.sample_rate, n_frames, FPS)
    return onsets, (f1 - f0) / FPS


def density_peak_times(onsets: np.ndarray, span: float) -> np.ndarray:
    """Times (s, on the frame grid of ``0 .. span``) where the onset density
    (each onset a Gaussian of σ 0.3 s) is higher than at both neighbouring
    frames; the span's first and last frames count when higher than their
    one neighbour."""
    t = np.arange(0.0, span, 1.0 / FPS)
    d = np.exp(-0.5 * ((t[:, None] - onsets[None]) / 0.3) ** 2).sum(axis=1)
    return t[controls.relative_extrema(np.r_[-1.0, d, -1.0], np.greater) - 1]


def density_ceiling(clip) -> dict:
    """Gain of every joint's beats exactly at the onset-density peaks (see notes)."""
    n = int(clip.seconds * FPS)
    onsets, span = trimmed_onsets(clip, n)
    peaks = density_peak_times(onsets, span)
    return {"gain": alignment.alignment_from_beats(onsets, [peaks] * 13, span).gain,
            "per_s": len(peaks) / max(span, 1e-9)}


def score(data: Path, voices, settings: dict, seeds: int, mean_speed, weights=None) -> dict:
    """Gain per setting and voice (a list over seeds), the largest shift, the
    mean depth and the largest elbow/wrist acceleration (mm/frame²)."""
    from rigmind.backend.audio.features import speech_features
    from rigmind.backend.audio.loading import load_audio
    from rigmind.backend.gesture import representation
    from rigmind.backend.gesture.generate import get_model, standing_gesture
    from rigmind.backend.gesture.gesture_space import lift_hands
    from rigmind.backend.gesture.viewer_metrics import largest_acceleration, longest_frozen_stretch

    model = get_model(weights)
    arms = [representation.names().index(n) for n in ("left_elbow", "right_elbow", "left_wrist", "right_wrist")]
    out = {name: {"gains": {}, "shift_s": 0.0, "depths": [], "arm_accel_max_mm": 0.0, "frozen_max": 0}
           for name in ["off", *settings]}
    for v in voices:
        clip = load_audio(data / v)
        feats = speech_features(clip, FPS)
        for seed in range(seeds):
            res, stress = standing_gesture(model, feats, amount=0.5, seed=seed)
            lifted = lift_hands(res.motion, stress, 0.5, talking=res.speech)
            for name in out:
                m, depth, shift = (lifted, 1.0, 0.0) if name == "off" else add_holds(lifted, feats,
                                                                                    settings[name])
                p = m.world_positions()
                r = out[name]
                r["gains"].setdefault(v, []).append(alignment.alignment_gain(
                    clip.samples, clip.sample_rate, p, FPS, mean_speed=mean_speed).gain)
                r["shift_s"] = max(r["shift_s"], shift)
                r["depths"].append(depth)
                r["arm_accel_max_mm"] = max(r["arm_accel_max_mm"], largest_acceleration(p[:, arms]))
                r["frozen_max"] = max(r["frozen_max"], longest_frozen_stretch(p))
        print(Path(v).stem, {k: round(float(np.mean(r["gains"][v])), 3) for k, r in out.items()}, flush=True)
    return out


def markdown(res: dict) -> str:
    real = res["real_gain"]
    lines = [f"Real BEAT2 capture on its own audio: **{real:.3f}**.", ""]
    for group in ("validation", "heldout"):
        c = res.get("ceiling", {}).get(group)
        if c:
            lines += [f"**Ceiling, beats at the onset-density peaks ({group} voices)**", "",
                      "| voice | gain | beats/s |", "|---|---|---|"]
            lines += [f"| {Path(v).stem} | {r['gain']:.3f} | {r['per_s']:.2f} |" for v, r in c.items()]
            lines.append("")
        s = res.get("scores", {}).get(group)
        if not s:
            continue
        names = list(s)
        voices = list(s["off"]["gains"])
        lines += [f"**Holds ({group} voices, {res['seeds'][group]} seeds)**", "",
                  "| setting | " + " | ".join(Path(v).stem for v in voices)
                  + " | mean | voices ≥ real | largest shift s | mean depth | arm accel max mm/f² | frozen |",
                  "|---|" + "---|" * (len(voices) + 6)]
        for k in names:
            g = [float(np.mean(s[k]["gains"][v])) for v in voices]
            lines.append(f"| {k} | " + " | ".join(f"{x:.3f}" for x in g)
                         + f" | {np.mean(g):.3f} | {sum(x >= real for x in g)}/{len(g)} | {s[k]['shift_s']:.2f} | "
                         f"{np.mean(s[k]['depths']):.2f} | {s[k]['arm_accel_max_mm']:.1f} | {s[k]['frozen_max']} |")
        lines.append("")
    if res.get("settings"):
        lines += ["Settings: " + "; ".join(f"`{k}` = {v}" for k, v in res["settings"].items()), ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=paths.data_dir())
    ap.add_argument("--ceiling", action="store_true", help="the gain of beats exactly at the onset-density peaks")
    ap.add_argument("--grid", action="store_true", help="every GRID setting on the validation voices")
    ap.add_argument("--grid-only", default="", help="comma-separated GRID names: score only these with --grid")
    ap.add_argument("--heldout", default="", help="comma-separated GRID names to score once on the held-out voices")
    ap.add_argument("--seeds", type=int, default=2, help="seeds per validation voice (held-out: one more)")
    ap.add_argument("--pulses-at-peaks", action="store_true",
                    help="condition the model on pulses at the onset-density peaks (see pulses_at_density_peaks)")
    ap.add_argument("--weights", type=Path, default=None,
                    help="gesture checkpoint to generate with (default the committed models/gesture.pt), e.g. one "
                         "from `rigmind train gesture --beat-weight 0.3 --out X.pt`")
    add_output_options(ap)
    a = ap.parse_args(argv)
    if reprint(a, markdown):
        return 0
    import torch

    from rigmind.backend.audio.loading import load_audio

    torch.set_num_threads(1)
    if a.pulses_at_peaks:
        pulses_at_density_peaks()
    t0 = time.time()
    mean_speed, whole, _ = alignment_eval.real_reference(a.data)
    groups = {"validation": alignment_eval.VALIDATION_VOICES, "heldout": alignment_eval.HELDOUT_VOICES}
    settings = {k: replace(HoldConfig(), **v) for k, v in GRID.items()}
    res = {"real_gain": whole.gain, "pulses_at_peaks": a.pulses_at_peaks, "weights": str(a.weights or "committed"),
           "seeds": {"validation": a.seeds, "heldout": a.seeds + 1},
           "settings": {k: asdict(c) for k, c in settings.items()}}
    if a.ceiling:
        res["ceiling"] = {g: {v: density_ceiling(load_audio(a.data / v)) for v in vs} for g, vs in groups.items()}
    if a.grid:
        grid = {k: settings[k] for k in a.grid_only.split(",")} if a.grid_only else settings
        res.setdefault("scores", {})["validation"] = score(a.data, groups["validation"], grid, a.seeds, mean_speed,
                                                           a.weights)
    if a.heldout:
        chosen = {k: settings[k] for k in a.heldout.split(",")}
        res.setdefault("scores", {})["heldout"] = score(a.data, groups["heldout"], chosen, a.seeds + 1, mean_speed, a.weights)
    return finish(res, a, t0, markdown)


if __name__ == "__main__":
    raise SystemExit(main())
