"""The real BEAT2 capture's alignment gain and seam reading on stretches as long as each held-out clip.

Issue #29 holds every held-out voice's alignment gain to the real capture's
(1.030, its whole 63.5-s take on its own audio). One held-out clip is scored
on its span after the 2-s trims: 4.9 s for the 8.7-s LibriSpeech clip, whose
gain then rests on 43 onsets and 6 time shifts. This reads what the same
statistic gives for *the real capture itself* cut to each held-out clip's
length: every stretch of that length starting on a whole second, the audio
cut alike, scored by :func:`rigmind.backend.gesture.alignment.alignment_gain`
with the speaker's own mean joint speeds (as the 1.030). It also reads the
viewer's seam periodicity (48 and 32 frames, upper body, with its off-stride
floor, ``viewer_metrics``) on the same stretches: on a clip a 48-frame period
fits into only twice, the statistic reads how few, large movements a take
has. Beside each length: the generated take's held-out gain, read from
``--generated`` (``bench/beat_rhythm.py --heldout`` JSON, the row "committed").

    PYTHONPATH=/tmp/pkg .venv/bin/python bench/real_capture_stretches.py \\
        --json bench/results/real_capture_stretches.json
    python bench/real_capture_stretches.py --markdown bench/results/real_capture_stretches.json
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
from rigmind.backend.gesture.viewer_metrics import off_stride_periodicity, seam_periodicity
from bench_report import add_output_options, finish, reprint  # beside this script, on sys.path with it

#: Seconds between the starts of two stretches.
HOP_S = 1.0


def real_take(data: Path) -> tuple:
    """The real capture: ``(positions [T, 55, 3] m, its AudioClip)``."""
    take = dataset.load_paired_take(data / (alignment_eval.REAL_TAKE + ".npz"),
                                    data / (alignment_eval.REAL_TAKE + ".wav"))
    return dataset.positions(take.rot, take.root), load_audio(take.audio)


def stretches(pos: np.ndarray, clip, mean_speed: np.ndarray, seconds: float) -> dict:
    """Gains and seam readings of the real take's (``pos``, ``clip``)
    stretches of ``seconds`` starting every ``HOP_S`` seconds, joint speeds
    ÷ ``mean_speed [55]``: ``{"gains": [...], "seam48": [...],
    "seam48_floor": [...], "seam32": [...], "seam32_floor": [...]}``."""
    sr, fps = clip.sample_rate, dataset.FPS
    n = int(round(seconds * fps))
    out = {k: [] for k in ("gains", "seam48", "seam48_floor", "seam32", "seam32_floor")}
    for start in range(0, len(pos) - n + 1, int(round(HOP_S * fps))):
        a = int(round(start / fps * sr))
        audio = clip.samples[a:a + int(round(n / fps * sr))]
        out["gains"].append(alignment.alignment_gain(audio, sr, pos[start:start + n], fps,
                                                     mean_speed=mean_speed).gain)
        up = pos[start:start + n][:900][:, list(metrics.UPPER_BODY)]
        for k in (48, 32):
            out[f"seam{k}"].append(seam_periodicity(up, k))
            out[f"seam{k}_floor"].append(off_stride_periodicity(up, k))
    return out


def generated_gains(path: Path) -> dict:
    """``{voice: [gain per seed]}`` of the committed row in a ``beat_rhythm.py`` JSON."""
    if path is None or not Path(path).is_file():
        return {}
    res = json.loads(Path(path).read_text())
    return res.get("heldout", {}).get("committed", {}).get("gains", {})


def _stats(x) -> dict:
    x = np.asarray([v for v in x if np.isfinite(v)], np.float64)
    if not len(x):
        return {"n": 0}
    return {"n": int(len(x)), "mean": float(x.mean()), "median": float(np.median(x)), "sd": float(x.std()),
            "min": float(x.min()), "max": float(x.max())}


def run(data: Path, generated: Path) -> dict:
    gen = generated_gains(generated)
    mean_speed, whole, _ = alignment_eval.real_reference(data)
    real = whole.gain
    pos, clip = real_take(data)
    rows = {}
    for voice in alignment_eval.HELDOUT_VOICES:
        # At most the real take's usable 60 s.
        secs = round(min(load_audio(data / voice).seconds, 60.0), 2)
        key = f"{secs:.2f}"
        if key not in rows:
            s = stretches(pos, clip, mean_speed, secs)
            g = np.asarray([v for v in s["gains"] if np.isfinite(v)])
            rows[key] = {"seconds": secs, "voices": [], "gain": _stats(g),
                         "at_or_above_real": int((g >= real).sum()),
                         **{k: _stats(v) for k, v in s.items() if k != "gains"},
                         "gains": [float(v) for v in s["gains"]]}
        rows[key]["voices"].append(voice)
        if voice in gen:
            ours = float(np.nanmean(gen[voice]))
            g = np.asarray([v for v in rows[key]["gains"] if np.isfinite(v)])
            rows[key].setdefault("generated", {})[voice] = {
                "gain": ours, "real_stretches_below": int((g < ours).sum())}
        print(Path(voice).stem, secs, "s:", round(rows[key]["gain"].get("mean", float("nan")), 3), flush=True)
    return {"real_gain": real, "rows": rows, "hop_s": HOP_S}


def markdown(res: dict) -> str:
    real = res["real_gain"]
    lines = [f"Machine: {res['machine']}; date {res['date']}; {res['seconds']:.0f} s. The real capture's whole take: "
             f"**{real:.3f}**.", "",
             "| stretch (s) | held-out clips this long | real stretches | real gain mean / median (SD) | "
             f"real stretches ≥ {real:.3f} | generated (5 seeds) and the share of real stretches below it | "
             "real seam 48 (its floor) | real seam 32 (its floor) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in sorted(res["rows"].values(), key=lambda r: r["seconds"]):
        g = r["gain"]
        names = ", ".join(Path(v).stem for v in r["voices"])
        ours = "; ".join(f"{Path(v).stem} {d['gain']:.3f} ({d['real_stretches_below']}/{g['n']})"
                         for v, d in r.get("generated", {}).items()) or "—"
        seam = [f"{r[f'seam{k}']['mean']:.2f} ({r[f'seam{k}_floor']['mean']:.2f})" if r[f"seam{k}"]["n"] else "—"
                for k in (48, 32)]
        lines.append(f"| {r['seconds']:.2f} | {names} | {g['n']} | {g['mean']:.3f} / {g['median']:.3f} "
                     f"({g['sd']:.3f}) | {r['at_or_above_real']}/{g['n']} | {ours} | {seam[0]} | {seam[1]} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=paths.data_dir())
    ap.add_argument("--generated", type=Path, default=Path(__file__).parent / "results" / "gesture_beat_search.json",
                    help="beat_rhythm.py JSON whose held-out 'committed' row is shown beside each length")
    add_output_options(ap)
    a = ap.parse_args(argv)
    if reprint(a, markdown):
        return 0
    t0 = time.time()
    res = run(a.data, a.generated)
    return finish(res, a, t0, markdown)


if __name__ == "__main__":
    raise SystemExit(main())
