"""The knees of people standing still in the mocap (issue #12's "the
standing pose is the mocap's idle stance ... knees nearly straight").

The Bandai locomotion clips have almost no idle frames, so the standing
reference is the Bandai gesture set (dataset 1: bow, bye, byebye, guide;
the same actors and skeleton, standing in place while they gesture). A
frame counts as standing still when both ankles are within 2 cm of their
clip's lowest height and move less than 2 cm/s horizontally, and the hips
move less than 5 cm/s. The knee flexion is the angle between thigh and
shin (hip joint -> knee -> ankle; 0 = straight), the larger of the two
legs, as :func:`rigmind.evaluation.locomotion_rigs.end_stance` measures
the baked take's last frame; the smaller of the two is reported too (many
actors stand with their weight on one straight leg and the other knee
relaxed).

Usage: .venv/bin/python bench/bench_mocap_idle_knees.py [--data ../shared/data]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from rigmind.backend.bvh import read_bvh

CONTENTS = ("bow", "bye", "byebye", "guide")


def knee_flex(pos: np.ndarray, names) -> np.ndarray:
    """``[F, 2]`` knee flexion (deg) of the left and right legs from joint
    positions ``[F, J, 3]`` of the Bandai skeleton."""
    ix = {n: i for i, n in enumerate(names)}
    out = []
    for s in "LR":
        u = pos[:, ix[f"LowerLeg_{s}"]] - pos[:, ix[f"UpperLeg_{s}"]]
        v = pos[:, ix[f"Foot_{s}"]] - pos[:, ix[f"LowerLeg_{s}"]]
        c = np.sum(u * v, -1) / (np.linalg.norm(u, axis=-1) * np.linalg.norm(v, axis=-1))
        out.append(np.degrees(np.arccos(np.clip(c, -1.0, 1.0))))
    return np.stack(out, -1)


def still_frames(pos: np.ndarray, names, fps: float) -> np.ndarray:
    """``[F]`` bool: both feet planted and still, hips still (see the module docstring)."""
    ix = {n: i for i, n in enumerate(names)}
    ok = np.ones(len(pos), dtype=bool)
    for s in "LR":
        a = pos[:, ix[f"Foot_{s}"]]
        v = np.zeros(len(a))
        v[1:] = np.linalg.norm(np.diff(a[:, :2], axis=0), axis=1) * fps
        ok &= (a[:, 2] < a[:, 2].min() + 0.02) & (v < 0.02)
    h = pos[:, ix["Hips"]]
    vh = np.zeros(len(h))
    vh[1:] = np.linalg.norm(np.diff(h, axis=0), axis=1) * fps
    return ok & (vh < 0.05)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[1] / ".." / "shared" / "data"))
    a = ap.parse_args(argv)
    files = sorted(f for c in CONTENTS for f in (Path(a.data) / "bandai_namco_d1_gestures" / "bvh").glob(f"dataset-1_{c}_*.bvh.gz"))
    if not files:
        raise SystemExit(f"no Bandai gesture clips under {a.data}")
    by_style = {}
    for f in files:
        m = read_bvh(f)
        _, pos = m.world()
        still = still_frames(pos, m.skeleton.names, m.fps)
        if still.sum() < 10:
            continue
        k = knee_flex(pos[still], m.skeleton.names)
        style = m.name.split("_")[2]
        by_style.setdefault(style, []).append(k)
    print("| actor style | clips | still frames | knee flexion, larger leg: median (10th-90th pct) | smaller leg (the weight-bearing one): median |")
    print("|---|---|---|---|---|")
    rows = [("all", [k for ks in by_style.values() for k in ks])] + sorted(by_style.items())
    for style, ks in rows:
        k = np.concatenate(ks)
        hi, lo = k.max(axis=1), k.min(axis=1)
        print(f"| {style} | {len(ks)} | {len(k)} | {np.median(hi):.1f} ({np.percentile(hi, 10):.1f}-{np.percentile(hi, 90):.1f}) | {np.median(lo):.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
