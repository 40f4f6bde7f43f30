"""Where in a CMU 131 clip the tracked body's limbs leave the clip's
(issue #30): the model's body (``track_body`` on the clip's own head and
wrists, as ``rigmind track --trackers-from`` runs it) scored per half second
of the clip, arms (upper arm, forearm) and legs (thigh, shin) apart, each
limb in its body frame (``tracking.evaluate.limb_angles``), beside the
head's ground speed and height and the distance between the feet (the
clip's and the body's), so a reader can tell the walk from the poses three
points do not show.

    .venv/bin/python bench/tracking_limb_timeline.py [--clips 131_01,131_03] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from rigmind.backend.paths import data_dir  # noqa: E402
from rigmind.backend.resample import resample  # noqa: E402
from rigmind.backend.tracking.body_from_trackers import TrackConfig, track_body  # noqa: E402
from rigmind.backend.tracking.canonical import CANONICAL_MAP  # noqa: E402
from rigmind.backend.tracking.evaluate import LIMBS, limb_angles  # noqa: E402
from rigmind.backend.tracking.mocap_trackers import load_mocap, trackers_from_motion  # noqa: E402

BIN_S = 0.5


def timeline(path: Path) -> dict:
    """Per-bin rows and whole-clip means of one clip (degrees, m/s, metres)."""
    src, smap = load_mocap(path)
    out = track_body(trackers_from_motion(src, smap), TrackConfig()).motion
    src = resample(src, out.fps)
    n = min(src.num_frames, out.num_frames)
    src, out = src.slice(0, n), out.slice(0, n)
    keys = list(dict.fromkeys([k for pair in LIMBS for k in pair] + ["head", "foot_l", "foot_r"]))
    si = {k: src.skeleton.index(smap[k]) for k in keys}
    oi = {k: out.skeleton.index(CANONICAL_MAP[k]) for k in keys}
    ps, po = src.world_positions(), out.world_positions()
    ang = limb_angles(ps, si, po, oi)  # [F, 8]: arms first, then legs
    head = ps[:, si["head"]]
    speed = np.linalg.norm(np.gradient(head[:, :2], axis=0), axis=-1) * out.fps
    feet_src = np.linalg.norm(ps[:, si["foot_l"]] - ps[:, si["foot_r"]], axis=-1)
    feet_out = np.linalg.norm(po[:, oi["foot_l"]] - po[:, oi["foot_r"]], axis=-1)
    step = int(round(BIN_S * out.fps))
    rows = []
    for f0 in range(0, n, step):
        s = slice(f0, f0 + step)
        rows.append({"t_s": f0 / out.fps, "head_speed": float(speed[s].mean()), "head_z": float(head[s, 2].mean()),
                     "arms_deg": float(ang[s, :4].mean()), "legs_deg": float(ang[s, 4:].mean()),
                     "feet_apart_clip_m": float(feet_src[s].mean()), "feet_apart_body_m": float(feet_out[s].mean())})
    still = speed < 0.2
    return {"limbs_deg": float(ang.mean()), "arms_deg": float(ang[:, :4].mean()), "legs_deg": float(ang[:, 4:].mean()),
            "legs_head_still_deg": float(ang[still, 4:].mean()) if still.any() else None,
            "legs_head_moving_deg": float(ang[~still, 4:].mean()) if (~still).any() else None, "bins": rows}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clips", default="131_01,131_03")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    result = {}
    for clip in a.clips.split(","):
        r = result[clip] = timeline(data_dir() / "cmu_131_start_walk_stop" / f"{clip}.bvh")
        print(f"{clip}: limbs {r['limbs_deg']:.1f} deg (arms {r['arms_deg']:.1f}, legs {r['legs_deg']:.1f}; legs while "
              f"the head is still {r['legs_head_still_deg']:.1f}, moving {r['legs_head_moving_deg']:.1f})")
        print("| t s | head m/s | head z m | arms deg | legs deg | feet apart: clip / body m |\n|---|---|---|---|---|---|")
        for b in r["bins"]:
            print(f"| {b['t_s']:.1f} | {b['head_speed']:.2f} | {b['head_z']:.2f} | {b['arms_deg']:.0f} | {b['legs_deg']:.0f} "
                  f"| {b['feet_apart_clip_m']:.2f} / {b['feet_apart_body_m']:.2f} |")
    if a.json:
        a.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
