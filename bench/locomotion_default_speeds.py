"""Each style's and gait's default speed, from its own training clips:
the median horizontal speed (m/s) of the hips over the frames of the style's
straight walk (content "walk") or run ("run") training clips of the Bandai
Namco d2 set, the first and last second (start-up, stop) left out.

    .venv/bin/python bench/locomotion_default_speeds.py [--data ../shared/data]

Writes presets/locomotion_speeds.json, which Walk Along Path / Bake Walk
Cycle read when no speed is given, and the range each gait covers (5th-95th
percentile over those frames), which asked speeds are clamped to.
"""

import argparse
import json
from pathlib import Path

import numpy as np

from rigmind.backend.locomotion import dataset as D
from rigmind.backend.locomotion import features as FT

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "presets" / "locomotion_speeds.json"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    args = ap.parse_args()
    split = D.split_of(D.load_split())
    speeds = {}
    for c in D.list_clips(args.data, datasets=("d2",)):
        if split.get(c.file) != "train" or c.content not in ("walk", "run"):
            continue
        m = FT.load_clip(c)
        h = m.world_positions()[:, m.skeleton.names.index("Hips"), :2]
        v = np.linalg.norm(np.diff(h, axis=0), axis=1) * m.fps
        cut = int(m.fps)
        speeds.setdefault((c.style_key, c.content), []).append(v[cut:-cut] if len(v) > 3 * cut else v)
    out = {"source": "median hips speed of each style's straight walk/run training clips (Bandai Namco d2), "
                     "first and last second left out; range: 2nd-98th percentile",
           "command": "python bench/locomotion_default_speeds.py", "styles": {}}
    for (style, gait), vs in sorted(speeds.items()):
        v = np.concatenate(vs)
        out["styles"].setdefault(style, {})[gait] = {
            "default": round(float(np.median(v)), 3),
            "range": [round(float(np.percentile(v, 2)), 3), round(float(np.percentile(v, 98)), 3)],
            "clips": len(vs),
        }
    OUT.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    for style, g in out["styles"].items():
        print(style, {k: (d["default"], d["range"]) for k, d in g.items()})
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
