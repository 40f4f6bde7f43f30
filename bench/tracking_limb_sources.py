"""What the limb-direction misses of three-point tracking on CMU 131 are made
of (issue #30): the tracked body (``track_body`` on the clip's own head and
wrists) scored as ``rigmind track --trackers-from`` is (upper arm, forearm,
thigh, shin in each skeleton's body frame, ``tracking.evaluate.limb_angles``;
arms and legs apart), beside what each of these does to the score:

- the arms on the clip's own proportions: the tracked skeleton's shoulder
  joints moved out to the clip's shoulder width and its upper arms and
  forearms given the clip's lengths before the arm IK (what a performer's
  calibration would give);
- the body's size from the clip's leg length instead of the head's height
  (a performer who walks with bent knees holds the head lower than the
  network's usual head height for a body of its size);
- the body shifted in time against the clip by up to ±0.4 s (a lag; the
  shift that suits the legs best);
- each limb's mean direction over the clip (in its body frame) turned onto
  the clip's: what is left is the limbs' motion, not a held style.

    .venv/bin/python bench/tracking_limb_sources.py [--clips 131_01,131_02,131_03]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from rigmind.backend.paths import data_dir  # noqa: E402
from rigmind.backend.resample import resample  # noqa: E402
from rigmind.backend.tracking import body_from_trackers as bft  # noqa: E402
from rigmind.backend.tracking.canonical import CANONICAL_MAP, canonical_skeleton  # noqa: E402
from rigmind.backend.tracking.evaluate import LIMBS, body_frames, limb_angles  # noqa: E402
from rigmind.backend.tracking.mocap_trackers import load_mocap, trackers_from_motion  # noqa: E402

SHIFTS = tuple(range(-12, 13, 4))  # frames at 30 fps
KEYS = list(dict.fromkeys([k for pair in LIMBS for k in pair]))


def _median_length(pos, idx, a, b) -> float:
    return float(np.median(np.linalg.norm(pos[:, idx[a]] - pos[:, idx[b]], axis=-1)))


def clip_arms(src, smap) -> dict:
    """The clip's shoulder half-width and upper arm / forearm lengths (m, medians over frames)."""
    p = src.world_positions()
    i = {k: src.skeleton.index(smap[k]) for k in KEYS}
    return {"half_width": 0.5 * _median_length(p, i, "upperarm_l", "upperarm_r"),
            "upper": _median_length(p, i, "upperarm_l", "lowerarm_l"),
            "fore": _median_length(p, i, "lowerarm_l", "hand_l")}


def with_arms(sk, arms: dict):
    """``sk`` (the scaled canonical skeleton) with the clip's shoulder width and arm lengths."""
    out = sk.copy()
    rest = canonical_skeleton()
    width = np.linalg.norm(rest.offsets[rest.index("Shoulder_L")][1:2]) + np.linalg.norm(rest.offsets[rest.index("UpperArm_L")])
    scale = np.linalg.norm(sk.offsets[sk.index("LowerArm_L")]) / np.linalg.norm(rest.offsets[rest.index("LowerArm_L")])
    for s in "LR":
        for name, length in ((f"UpperArm_{s}", None), (f"LowerArm_{s}", arms["upper"]), (f"Hand_{s}", arms["fore"])):
            o = out.offsets[out.index(name)]
            if length is None:  # the clavicle's reach outwards: its share of the half-width
                length = np.linalg.norm(o) + arms["half_width"] - width * scale
            out.offsets[out.index(name)] = o / np.linalg.norm(o) * length
    return out


def leg_length(sk, names) -> float:
    return float(sum(np.linalg.norm(sk.offsets[sk.index(n)]) for n in names))


def score(src, smap, out, shift: int = 0) -> np.ndarray:
    """Limb angles ``[F, 8]`` of ``out`` against the clip, ``out`` taken ``shift`` frames later."""
    src = resample(src, out.fps)
    n = min(src.num_frames, out.num_frames)
    ps, po = src.world_positions()[:n], out.world_positions()[:n]
    si = {k: src.skeleton.index(smap[k]) for k in KEYS}
    oi = {k: out.skeleton.index(CANONICAL_MAP[k]) for k in KEYS}
    m = max(SHIFTS)
    a, b = ps[m:n - m], po[m + shift:n - m + shift]
    return limb_angles(a, si, b, oi)


def without_held_style(src, smap, out) -> np.ndarray:
    """Limb angles ``[F, 8]`` with each output limb turned by the rotation
    that takes its mean body-frame direction onto the clip's."""
    src = resample(src, out.fps)
    n = min(src.num_frames, out.num_frames)
    ps, po = src.world_positions()[:n], out.world_positions()[:n]
    si = {k: src.skeleton.index(smap[k]) for k in KEYS}
    oi = {k: out.skeleton.index(CANONICAL_MAP[k]) for k in KEYS}
    fs, fo = body_frames(ps, si), body_frames(po, oi)
    cols = []
    for a, b in LIMBS:
        u = np.einsum("fij,fj->fi", fs, ps[:, si[b]] - ps[:, si[a]])
        v = np.einsum("fij,fj->fi", fo, po[:, oi[b]] - po[:, oi[a]])
        u /= np.linalg.norm(u, axis=-1, keepdims=True)
        v /= np.linalg.norm(v, axis=-1, keepdims=True)
        mu, mv = u.mean(0) / np.linalg.norm(u.mean(0)), v.mean(0) / np.linalg.norm(v.mean(0))
        axis, c = np.cross(mv, mu), float(mv @ mu)
        k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
        turn = np.eye(3) + k + k @ k / (1.0 + c)
        cols.append(np.degrees(np.arccos(np.clip(np.sum(u * (v @ turn.T), -1), -1.0, 1.0))))
    return np.stack(cols, axis=1)


def run_clip(path: Path) -> dict:
    src, smap = load_mocap(path)
    take = trackers_from_motion(src, smap)
    plain = bft.track_body(take).motion
    rows = {"as tracked": score(src, smap, plain)}
    arms = clip_arms(src, smap)
    original = bft.scaled_skeleton
    bft.scaled_skeleton = lambda sk, scale: with_arms(original(sk, scale), arms)
    try:
        rows["arms on the clip's proportions"] = score(src, smap, bft.track_body(take).motion)
    finally:
        bft.scaled_skeleton = original
    legs = ("LowerLeg_L", "Foot_L")
    clip_leg = sum(np.linalg.norm(src.skeleton.offsets[src.skeleton.index(smap[k])]) for k in ("lowerleg_l", "foot_l"))
    size = clip_leg / leg_length(canonical_skeleton(), legs)
    rows["size from the clip's leg length"] = score(src, smap, bft.track_body(take, bft.TrackConfig(scale=size)).motion)
    shifted = {s: score(src, smap, plain, s) for s in SHIFTS}
    best = min(shifted, key=lambda s: shifted[s][:, 4:].mean())
    rows["the legs' best time shift (±0.4 s)"] = shifted[best]
    rows["each limb's held direction matched"] = without_held_style(src, smap, plain)
    return {"rows": {k: (float(v[:, :4].mean()), float(v[:, 4:].mean()), float(v.mean())) for k, v in rows.items()},
            "arms": arms, "size": (float(size), float(bft.track_body(take).scale)), "shift_s": best / 30.0}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clips", default="131_01,131_02,131_03")
    a = ap.parse_args(argv)
    t0 = time.time()
    results = {c: run_clip(data_dir() / "cmu_131_start_walk_stop" / f"{c}.bvh") for c in a.clips.split(",")}
    print(f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
          f"{time.strftime('%Y-%m-%d')}; {time.time() - t0:.0f} s.\n")
    clips = list(results)
    print("| | " + " | ".join(f"{c}: arms / legs / all °" for c in clips) + " |")
    print("|---" * (1 + len(clips)) + "|")
    for name in results[clips[0]]["rows"]:
        print(f"| {name} | " + " | ".join("{:.1f} / {:.1f} / {:.1f}".format(*results[c]["rows"][name]) for c in clips) + " |")
    for c in clips:
        r = results[c]
        print(f"\n{c}: clip shoulder half-width {r['arms']['half_width']:.3f} m, upper arm {r['arms']['upper']:.3f} m, "
              f"forearm {r['arms']['fore']:.3f} m; size from the leg length {r['size'][0]:.3f} against "
              f"{r['size'][1]:.3f} from the head's height; the legs' best shift {r['shift_s']:+.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
