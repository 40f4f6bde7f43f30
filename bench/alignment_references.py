"""What the alignment gain gives beat trains made from each voice's own onsets.

Issue #29 holds every held-out voice's alignment gain
(:func:`rigmind.backend.gesture.alignment.alignment_gain`) to the real
capture's 1.030. This reads, for every voice the gain is scored on, what
the same statistic gives two motions that follow the speech by
construction, with no model in the way:

- **every onset**: each of the 13 upper-body joints has a beat on every onset
  of the scored span (a body that marks every syllable);
- **density peaks**: each joint has a beat on every local maximum of the
  onset density (onsets spread as Gaussians of σ 0.3 s, BC's own σ;
  ``beat_holds.density_peak_times``, the peaks of ``beat_holds.py
  --ceiling``): a body that marks only where the syllables cluster.

Both are scored by :func:`alignment.alignment_from_beats` on the span
``metrics.trimmed_onsets`` keeps (2 s trimmed at both ends, less on short
clips), exactly as a generated take is. Beside them: the voice's onset rate
and, where ``--generated`` has it, the generated takes' mean gain (the
``committed`` row of a ``bench/beat_rhythm.py`` JSON). No model runs and
nothing is chosen here; it says how far a voice's own onsets let the gain
rise above 1.

    PYTHONPATH=/tmp/pkg .venv/bin/python bench/alignment_references.py \\
        --json bench/results/alignment_references.json
    PYTHONPATH=/tmp/pkg .venv/bin/python bench/alignment_references.py \\
        --markdown bench/results/alignment_references.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from rigmind.backend import paths
from rigmind.backend.audio.loading import load_audio
from rigmind.backend.gesture import alignment, alignment_eval, dataset, metrics
from beat_holds import density_peak_times  # beside this script, on sys.path with it
from bench_report import add_output_options, finish, reprint

#: Upper-body joints BC counts beats on: each reference gives all of them the same beats.
JOINTS = len(metrics.UPPER_BODY)
GROUPS = {"held-out": alignment_eval.HELDOUT_VOICES, "validation": alignment_eval.VALIDATION_VOICES,
          "validation, short": alignment_eval.VALIDATION_SHORT}


def references(samples: np.ndarray, sr: int, seconds: float) -> dict:
    """The two reference trains' gains for one voice ``samples [N]`` at
    ``sr`` Hz, ``seconds`` long: ``{"span_s", "onsets", "onsets_per_s",
    "peaks", "every_onset", "density_peaks"}``."""
    onsets, (f0, f1) = metrics.trimmed_onsets(samples, sr, int(round(seconds * dataset.FPS)), dataset.FPS)
    span = (f1 - f0) / dataset.FPS
    peaks = density_peak_times(onsets, span)
    every = alignment.alignment_from_beats(onsets, [onsets] * JOINTS, span).gain
    at_peaks = alignment.alignment_from_beats(onsets, [peaks] * JOINTS, span).gain
    return {"span_s": span, "onsets": int(len(onsets)), "onsets_per_s": len(onsets) / max(span, 1e-9),
            "peaks": int(len(peaks)), "every_onset": float(every), "density_peaks": float(at_peaks)}


def generated_gains(path: Path) -> dict:
    """``{voice: mean gain}`` of the ``committed`` row of a ``beat_rhythm.py``
    JSON (held-out, validation and short clips alike)."""
    if path is None or not Path(path).is_file():
        return {}
    res = json.loads(Path(path).read_text())
    out = {}
    for part in res.values():
        gains = part.get("committed", {}).get("gains", {}) if isinstance(part, dict) else {}
        for v, g in gains.items():
            g = np.asarray(g, np.float64)
            if np.isfinite(g).any():
                out[v] = float(g[np.isfinite(g)].mean())
    return out


def run(data: Path, generated: Path) -> dict:
    gen = generated_gains(generated)
    _, whole, _ = alignment_eval.real_reference(data)
    real = load_audio(data / (alignment_eval.REAL_TAKE + ".wav"))
    rows = {"real capture": {"group": "real", **references(real.samples, real.sample_rate, real.seconds),
                             "generated": whole.gain}}
    for group, voices in GROUPS.items():
        for v in voices:
            if not (data / v).is_file():
                continue
            clip = load_audio(data / v)
            rows[v] = {"group": group, **references(clip.samples, clip.sample_rate, clip.seconds)}
            if v in gen:
                rows[v]["generated"] = gen[v]
            print(Path(v).stem, f"{rows[v]['every_onset']:.3f} {rows[v]['density_peaks']:.3f}", flush=True)
    return {"real_gain": whole.gain, "rows": rows, "generated_from": str(generated)}


def _cell(x, fmt="{:.3f}") -> str:
    return fmt.format(x) if x is not None and np.isfinite(x) else "—"


def markdown(res: dict) -> str:
    real = res["real_gain"]
    lines = [f"Machine: {res['machine']}; date {res['date']}; {res['seconds']:.0f} s. The real capture's whole take "
             f"on its own audio: **{real:.3f}** (the row \"real capture\" gives its own motion under "
             "\"generated or real\").", "",
             "| voice | group | scored span (s) | onsets (per s) | density peaks | gain, a beat on every onset | "
             "gain, a beat on every density peak | generated or real (mean) |",
             "|---|---|---|---|---|---|---|---|"]
    for v, r in res["rows"].items():
        lines.append(f"| {Path(v).stem} | {r['group']} | {r['span_s']:.1f} | {r['onsets']} ({r['onsets_per_s']:.1f}) | "
                     f"{r['peaks']} | {_cell(r['every_onset'])} | {_cell(r['density_peaks'])} | "
                     f"{_cell(r.get('generated'))} |")
    rows = [r for r in res["rows"].values() if r["group"] != "real" and np.isfinite(r["every_onset"])]
    under = [r for r in rows if r["every_onset"] < real]
    lines += ["", f"A beat on every onset reads under {real:.3f} on {len(under)} of {len(rows)} scored voices."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=paths.data_dir())
    ap.add_argument("--generated", type=Path, default=Path(__file__).parent / "results" / "gesture_beat_search.json",
                    help="beat_rhythm.py JSON whose 'committed' row is shown beside each voice")
    add_output_options(ap)
    a = ap.parse_args(argv)
    if reprint(a, markdown):
        return 0
    t0 = time.time()
    res = run(a.data, a.generated)
    return finish(res, a, t0, markdown)


if __name__ == "__main__":
    raise SystemExit(main())
