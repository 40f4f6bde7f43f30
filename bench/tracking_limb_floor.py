"""What the limb-direction score of three-point tracking cannot go under on
CMU 131 (issue #30): the clip itself put on the canonical skeleton
(``to_canonical``: every limb's world direction kept), scaled by the head's
height, its head on the clip's head and its wrists moved onto the clip's
wrists by two-bone arm IK (as the tracker's hands are), scored like the
tracked body (upper arm, forearm, thigh, shin in each skeleton's body frame,
``tracking.evaluate.limb_angles``). Also: the limbs and the pelvis facing of
``to_canonical`` alone.

    .venv/bin/python bench/tracking_limb_floor.py [--clips 131_01,131_02,131_03]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from rigmind.backend import ik, rotations  # noqa: E402
from rigmind.backend.paths import data_dir  # noqa: E402
from rigmind.backend.resample import resample  # noqa: E402
from rigmind.backend.tracking.canonical import CANONICAL_MAP  # noqa: E402
from rigmind.backend.tracking.evaluate import LIMB_NAMES, body_frames, limb_angles  # noqa: E402
from rigmind.backend.tracking.mocap_trackers import load_mocap, to_canonical  # noqa: E402

def floor_of(path: Path) -> dict:
    src, smap = load_mocap(path)
    src = resample(src, 30.0)
    can = to_canonical(src, smap, 30.0)
    si = {k: src.skeleton.index(smap[k]) for k in CANONICAL_MAP if k in smap}
    ci = {k: can.skeleton.index(v) for k, v in CANONICAL_MAP.items()}
    ps, pc = src.world_positions(), can.world_positions()
    plain = limb_angles(ps, si, pc, ci)
    fs, fc = body_frames(ps, si)[:, 1], body_frames(pc, ci)[:, 1]
    facing = np.degrees(np.arccos(np.clip(np.sum(fs * fc, -1), -1.0, 1.0)))
    pc = pc * (np.percentile(ps[:, si["head"], 2], 90) / np.percentile(pc[:, ci["head"], 2], 90))
    pc = pc + (ps[:, si["head"]] - pc[:, ci["head"]])[:, None]
    for s in "lr":
        a, b, c = (pc[:, ci[f"{n}_{s}"]] for n in ("upperarm", "lowerarm", "hand"))
        q_up, q_low, _ = ik.two_bone_ik(a, b, c, ps[:, si[f"hand_{s}"]], b + (b - 0.5 * (a + c)))
        b_new = a + rotations.rotate(q_up, b - a)
        pc[:, ci[f"lowerarm_{s}"]], pc[:, ci[f"hand_{s}"]] = b_new, b_new + rotations.rotate(q_low, c - b)
    pinned = limb_angles(ps, si, pc, ci).mean(axis=0)
    return {"canonical_limbs": float(plain.mean()), "canonical_facing_deg": float(facing.mean()),
            "hands_on_targets_limbs": float(pinned.mean()), "per_limb": dict(zip(LIMB_NAMES, pinned.round(1).tolist())),
            "shoulder_half_width_m": float(np.linalg.norm(ps[:, si["upperarm_l"]] - ps[:, si["upperarm_r"]], axis=-1).mean() / 2)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clips", default="131_01,131_02,131_03")
    a = ap.parse_args(argv)
    for clip in a.clips.split(","):
        r = floor_of(data_dir() / "cmu_131_start_walk_stop" / f"{clip}.bvh")
        print(f"{clip}: on the canonical skeleton limbs {r['canonical_limbs']:.1f} deg, pelvis facing "
              f"{r['canonical_facing_deg']:.1f} deg; hands moved onto the clip's wrists: limbs "
              f"{r['hands_on_targets_limbs']:.1f} deg {r['per_limb']}; clip shoulder half-width "
              f"{r['shoulder_half_width_m']:.3f} m")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
