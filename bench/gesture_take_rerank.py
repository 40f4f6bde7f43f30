"""Would choosing among whole takes raise the alignment gain? (validation voices only)

Each validation clip (the 4 LJSpeech validation voices and the 24 short
ones) is generated with today's pipeline at ``--seeds`` seeds; each take is
scored three ways:

- the gain as the acceptance reads it (:func:`alignment.alignment_gain`: the
  2-s trim at both ends, joint speeds ÷ the real speaker's);
- the gain over the whole take with its own speeds (no trim): what a
  product could compute from the speech and the take it drew;
- the same with the trim: a chooser that knows how the measure is cut.

Groups of ``--group`` takes (every combination drawn at random, 200 per
clip) then stand for a product that draws that many takes and keeps the
best by one score; the table says how much each choice raises the gain as
the acceptance reads it, against the mean of the group. An oracle keeps the
best by the measure itself.

    PYTHONPATH=/tmp/pkg .venv/bin/python bench/gesture_take_rerank.py --seeds 12 \
        --json bench/results/gesture_take_rerank.json
    PYTHONPATH=/tmp/pkg .venv/bin/python bench/gesture_take_rerank.py --markdown bench/results/gesture_take_rerank.json
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from beat_rhythm import setting, take  # noqa: E402

from rigmind.backend import paths  # noqa: E402
from rigmind.backend.audio.features import speech_features  # noqa: E402
from rigmind.backend.audio.loading import load_audio  # noqa: E402
from rigmind.backend.gesture import alignment, alignment_eval  # noqa: E402
from rigmind.backend.gesture.generate import FPS, get_model  # noqa: E402
from bench_report import add_output_options, finish, reprint  # beside this script, on sys.path with it

#: Scores per take: the acceptance's gain, the whole take's (own speeds), the trimmed span's (own speeds).
COLUMNS = ("measure", "whole take", "trimmed span")
GROUPS = (2, 3, 4, 6, 8)


def _gain(clip, positions, **kw) -> float:
    return alignment.alignment_gain(clip.samples, clip.sample_rate, positions, FPS, **kw).gain


def score(data: Path, seeds: int) -> dict:
    """``{voice: [[measure, whole, trimmed] per seed]}``."""
    mean_speed = alignment_eval.real_reference(data)[0]
    model, cfg = get_model(), setting({})
    voices = list(alignment_eval.VALIDATION_SHORT) + [v for v in alignment_eval.VALIDATION_VOICES if "LJ" in v]
    out = {}
    for v in voices:
        clip = load_audio(data / v)
        feats = speech_features(clip, FPS)
        rows = []
        for seed in range(seeds):
            p = take(model, feats, seed, cfg)
            rows.append([_gain(clip, p, mean_speed=mean_speed), _gain(clip, p, trim_s=0.0), _gain(clip, p)])
        out[v] = rows
        print(Path(v).stem, np.round(np.nanmean(np.array(rows, float), axis=0), 3), flush=True)
    return out


def choices(gains: dict, group: int, draws: int = 200) -> dict:
    """Mean rise of the acceptance's gain over each group's mean when the best
    of ``group`` takes is kept by each score (and by the measure: the oracle),
    and how many groups' kept take reaches the real capture's 1.030."""
    rng = np.random.default_rng(0)
    rise = {c: [] for c in COLUMNS}
    over = {c: [] for c in ("group mean",) + COLUMNS}
    for rows in gains.values():
        a = np.array(rows, float)
        if np.isnan(a[:, 0]).all() or len(a) < group:
            continue
        for _ in range(draws):
            blk = a[rng.choice(len(a), group, replace=False)]
            over["group mean"].append(float(np.mean(blk[:, 0] >= 1.030)))
            for k, c in enumerate(COLUMNS):
                kept = blk[int(np.argmax(np.nan_to_num(blk[:, k], nan=-1.0))), 0]
                rise[c].append(kept - blk[:, 0].mean())
                over[c].append(float(kept >= 1.030))
    return {"rise": {c: float(np.mean(x)) for c, x in rise.items()},
            "share_over": {c: float(np.mean(x)) for c, x in over.items()}}


def markdown(res: dict) -> str:
    lines = [f"Machine: {res['machine']}; date {res['date']}; {res['seconds']:.0f} s; {res['seeds']} seeds per clip.", "",
             "| takes drawn | kept by the whole take's gain (a product's choice) | by the trimmed span's (knows "
             "the measure's cut) | by the measure (oracle) | share ≥ 1.030: one take / the one kept by the whole take's gain |",
             "|---|---|---|---|---|"]
    for g in GROUPS:
        c = choices(res["gains"], g)
        r, o = c["rise"], c["share_over"]
        lines.append(f"| {g} | {r['whole take']:+.3f} | {r['trimmed span']:+.3f} | {r['measure']:+.3f} | "
                     f"{o['group mean']:.2f} / {o['whole take']:.2f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=paths.data_dir())
    ap.add_argument("--seeds", type=int, default=12)
    add_output_options(ap)
    a = ap.parse_args(argv)
    if reprint(a, markdown):
        return 0
    t0 = time.time()
    res = {"gains": score(a.data, a.seeds), "seeds": a.seeds}
    return finish(res, a, t0, markdown)


if __name__ == "__main__":
    raise SystemExit(main())
