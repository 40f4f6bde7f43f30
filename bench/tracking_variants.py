"""Post-processing variants of three-point tracking compared on the
VALIDATION clips (every ``--every``-th of ``presets/tracking_split.json``) and
on CMU 131: what the defaults of ``PoseConfig`` were chosen on (the test
split is read only by ``bench_tracking.py``).

    PYTHONPATH=... .venv/bin/python bench/tracking_variants.py [--every 3] [--variants JSON] [--out PATH]

``--variants``: ``{"name": {PoseConfig field: value, ..., "model_path": ...}}``;
default: the committed defaults and each clean-up step switched off.
Writes ``bench/results/tracking_variants.md``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_tracking as B  # noqa: E402

from rigmind.backend.tracking import dataset  # noqa: E402
from rigmind.backend.tracking.body_from_trackers import TrackConfig  # noqa: E402
from rigmind.backend.tracking.posing import PoseConfig  # noqa: E402

DEFAULT_VARIANTS = {
    "defaults": {},
    "no floor": {"ankle_height": None},
    "one lock per run (legs=locks)": {"legs": "locks"},
    "locks, no floor": {"legs": "locks", "ankle_height": None},
    "head not moved onto its tracker": {"head_on_target": False},
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--every", type=int, default=3)
    ap.add_argument("--variants", default=None)
    ap.add_argument("--out", default=str(B.REPO / "bench" / "results" / "tracking_variants.md"))
    a = ap.parse_args(argv)
    variants = json.loads(a.variants) if a.variants else DEFAULT_VARIANTS
    t0 = time.time()
    clips = [dataset.load_entry(e) for e in dataset.load_split()["validation"][::a.every]]
    clips = [c for c in clips if c.num_frames >= 8]
    cmu = [(n, *B.load_mocap(B.paths.data_dir() / "cmu_131_start_walk_stop" / f"{n}.bvh")) for n in B.CMU]
    lines = ["| variant | val MPJPE cm | val skate cm (mocap) | val jitter (mocap) | val limb deg | val head cm (95th) | "
             + " | ".join(f"{n} MPJPE / limb deg / skate (clip) / head cm" for n, *_ in cmu) + " |",
             "|---" * (6 + len(cmu)) + "|"]
    for name, v in variants.items():
        v = dict(v)
        cfg = TrackConfig(smooth=v.pop("smooth", 1.5), model_path=v.pop("model_path", None), pose=PoseConfig(**v))
        rows = [B.run_clip(c, dict(B.CANONICAL_MAP), "model", cfg)[0] for c in clips]
        cells = [f"{B.mean_of(rows, 'mpjpe_cm'):.2f}", f"{B.mean_of(rows, 'skate_cm'):.2f} ({B.mean_of(rows, 'skate_ref_cm'):.2f})",
                 f"{B.mean_of(rows, 'jitter'):.0f} ({B.mean_of(rows, 'jitter_ref'):.0f})", f"{B.mean_of(rows, 'limb_angle_deg'):.1f}",
                 f"{B.mean_of(rows, 'head_err_cm'):.2f} ({B.mean_of(rows, 'head_err_p95_cm'):.2f})"]
        for _, src, mp in cmu:
            s = B.run_clip(src, mp, "model", cfg)[0]
            cells.append(f"{s['mpjpe_cm']:.1f} / {s['limb_angle_deg']:.1f} / {s['skate_cm']:.2f} ({s['skate_ref_cm']:.2f})"
                         f" / {s['head_err_cm']:.2f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    md = ["# Three-point tracking: post-processing variants (validation + CMU 131)", "",
          f"Command: `python bench/tracking_variants.py --every {a.every}`  ",
          f"Machine: AMD EPYC, 2 cores (shared). Date: {datetime.date.today().isoformat()}. "
          f"{len(clips)} validation clips. Wall time {time.time() - t0:.0f} s.", "",
          "Variants are `PoseConfig` settings (backend/tracking/posing.py); the metrics are those of "
          "bench/results/tracking.md (head cm: the head joint's mean distance from its tracker, the 95th "
          "percentile per clip averaged).", ""] + lines
    Path(a.out).write_text("\n".join(md) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
