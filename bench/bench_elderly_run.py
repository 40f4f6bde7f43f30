"""Does the data's elderly "run" have a flight phase? (issue #12: "Run at
its default speed has a flight phase in every stride").

For every Bandai d2 "run" clip of every style (training and validation
files), from the clip's own foot joints (ankles and toes, Bandai skeleton):

- strides with flight: the share of strides (left touch-down to the next)
  with a frame where no foot joint is within 2 cm of its planted height
  (:func:`bench_gait_defaults.gait_figures`, the same test as the
  controller's runs);
- highest lowest foot: per stride, the highest the *lower* of the two feet
  gets above its planted level (the largest, over the stride's frames, of
  the smallest foot-joint height): a few mm means a foot is always on the
  floor, a flight phase lifts it several cm;
- cadence (steps/min) and the hips' speed (m/s).

    .venv/bin/python bench/bench_elderly_run.py [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_gait_defaults import OFF, gait_figures  # noqa: E402

from rigmind.backend.locomotion import dataset  # noqa: E402
from rigmind.backend.locomotion import features  # noqa: E402
from rigmind.backend.locomotion.metrics import BANDAI_PLANTED_HEIGHT, FOOT_JOINTS  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def lowest_foot_peaks(motion) -> np.ndarray:
    """Per stride (left touch-down to the next), the highest (m) the lower
    foot gets above its planted level."""
    P = motion.world_positions()
    n = motion.skeleton.names
    lift = np.stack([P[:, n.index(j), 2] - BANDAI_PLANTED_HEIGHT[j] for j in FOOT_JOINTS], 1)
    lift = lift - np.percentile(lift, 2, axis=0)
    down = lift < OFF
    left = down[:, 0] | down[:, 1]
    td = np.nonzero(left[1:] & ~left[:-1])[0] + 1
    low = lift.min(axis=1)
    return np.array([low[a:b].max() for a, b in zip(td[:-1], td[1:]) if b - a > 5])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    a = ap.parse_args(argv)
    rows = {}
    for c in dataset.list_clips(a.data, datasets=("d2",)):
        if c.content != "run":
            continue
        m = features.load_clip(c)
        v, share, steps = gait_figures(m)
        rows.setdefault(c.style_key, []).append((v, share, steps, lowest_foot_peaks(m)))
    print("| style | run clips | hips speed (m/s, median) | strides with flight (mean over clips) | clips with any flight stride | "
          "highest lowest foot per stride (cm, median / 90th pct) | steps/min (median) |")
    print("|---|---|---|---|---|---|---|")
    for style, r in sorted(rows.items()):
        peaks = np.concatenate([x[3] for x in r]) * 100
        shares = np.array([x[1] for x in r], dtype=float)
        print(f"| {style} | {len(r)} | {np.median([x[0] for x in r]):.2f} | {np.nanmean(shares):.0%} | "
              f"{int(np.sum(shares > 0))} of {len(r)} | {np.median(peaks):.1f} / {np.percentile(peaks, 90):.1f} | "
              f"{np.median([x[2] for x in r]):.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
