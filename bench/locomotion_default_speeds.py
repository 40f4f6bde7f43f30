"""Each style's and gait's default speed, from its own training clips:
the median horizontal speed (m/s) of the hips over the frames of the style's
straight walk (content "walk") or run ("run") training clips of the Bandai
Namco d2 set, the first and last second (start-up, stop) left out.

    .venv/bin/python bench/locomotion_default_speeds.py [--data ../shared/data]

Writes presets/locomotion_speeds.json, which Walk Along Path / Bake Walk
Cycle read when no speed is given, and the range each gait covers (5th-95th
percentile over those frames), which asked speeds are clamped to.

Also each style's lateral acceleration in turns (``turn_lateral_accel``,
m/s^2): the hips' horizontal speed times the turn rate of their direction of
travel, both smoothed over 1 s (a stride), its 95th percentile over the
frames faster than 0.3 m/s of each "walk-turn-left/right" training clip,
the median over the style's clips. Walk Along Path slows into a corner until
that acceleration is reached; a style's is scaled from the normal style's by
these figures (an active walker takes a corner at 1.6x the normal style's
lateral acceleration, an elderly one at 0.6x).

And each gait's ``flight_share``: the mean over its training clips of the
share of strides with a flight phase (``bench_gait_defaults.gait_figures``:
a frame where no foot joint is within 2 cm of its planted height). A "run"
whose clips have none (the elderly style's: 0 of its clips) is named and
reported as a grounded run (``backend/locomotion/gaits.py``).
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from rigmind.backend.locomotion import dataset
from rigmind.backend.locomotion import features

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from bench_gait_defaults import gait_figures  # noqa: E402

OUT = REPO / "presets" / "locomotion_speeds.json"


def turn_lateral_accel(hips_xy, fps: float) -> float:
    """95th percentile (m/s^2) of the lateral acceleration of hips
    positions ``[F, 2]`` (m) over the frames faster than 0.3 m/s (see the
    module docstring)."""
    n = max(int(round(fps)), 1)
    k = np.ones(n) / n
    smooth = np.stack([np.convolve(hips_xy[:, i], k, "valid") for i in range(2)], 1)
    vel = np.diff(smooth, axis=0) * fps
    speed = np.linalg.norm(vel, axis=1)
    heading = np.unwrap(np.arctan2(vel[:, 1], vel[:, 0]))
    lateral = np.abs(speed * np.gradient(heading) * fps)
    return float(np.percentile(lateral[speed > 0.3], 95))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    args = ap.parse_args()
    split = dataset.split_of(dataset.load_split())
    speeds, turns, flights = {}, {}, {}
    for c in dataset.list_clips(args.data, datasets=("d2",)):
        if split.get(c.file) != "train" or c.content not in ("walk", "run", "walk-turn-left", "walk-turn-right"):
            continue
        m = features.load_clip(c)
        h = m.world_positions()[:, m.skeleton.names.index("Hips"), :2]
        if c.content.startswith("walk-turn"):
            turns.setdefault(c.style_key, []).append(turn_lateral_accel(h, m.fps))
            continue
        v = np.linalg.norm(np.diff(h, axis=0), axis=1) * m.fps
        cut = int(m.fps)
        speeds.setdefault((c.style_key, c.content), []).append(v[cut:-cut] if len(v) > 3 * cut else v)
        flights.setdefault((c.style_key, c.content), []).append(gait_figures(m)[1])
    out = {"source": "median hips speed of each style's straight walk/run training clips (Bandai Namco d2), "
                     "first and last second left out; range: 2nd-98th percentile",
           "command": "python bench/locomotion_default_speeds.py", "styles": {}}
    for (style, gait), vs in sorted(speeds.items()):
        v = np.concatenate(vs)
        out["styles"].setdefault(style, {})[gait] = {
            "default": round(float(np.median(v)), 3),
            "range": [round(float(np.percentile(v, 2)), 3), round(float(np.percentile(v, 98)), 3)],
            "clips": len(vs),
            "flight_share": round(float(np.nanmean(flights[(style, gait)])), 3),
        }
    for style, a in sorted(turns.items()):
        out["styles"].setdefault(style, {})["turn_lateral_accel"] = {"median": round(float(np.median(a)), 3), "clips": len(a)}
    out["turn_source"] = ("95th percentile of the hips' lateral acceleration (speed x turn rate of the direction of "
                          "travel, smoothed over 1 s) in each style's walk-turn training clips, median over clips")
    OUT.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    for style, g in out["styles"].items():
        print(style, {k: (d["default"], d["range"]) if "default" in d else d["median"] for k, d in g.items()})
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
