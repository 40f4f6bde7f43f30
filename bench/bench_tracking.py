"""Three-point tracking (issue #30): the tracking model against the baseline
(walk controller driven by the head + arm IK) on the held-out test clips of
``presets/tracking_split.json`` and on CMU 131 (a skeleton the model never
saw), and a side-view contact sheet of CMU 131_01.

    PYTHONPATH=... .venv/bin/python bench/bench_tracking.py [--part test|validation] [--limit N] [--sheet]

Writes ``bench/results/tracking.md`` (and ``tracking.json``); ``--sheet``
also ``bench/img/tracking_131_01.png``. The trackers are read from each clip
(:func:`~rigmind.backend.tracking.mocap_trackers.trackers_from_motion`), the
body is tracked from them alone, and scored against the clip
(:mod:`rigmind.backend.tracking.evaluate`).
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from rigmind.backend import paths  # noqa: E402
from rigmind.backend.tracking import dataset  # noqa: E402
from rigmind.backend.tracking.body_from_trackers import TrackConfig, track_body  # noqa: E402
from rigmind.backend.tracking.canonical import CANONICAL_MAP  # noqa: E402
from rigmind.backend.tracking.evaluate import score  # noqa: E402
from rigmind.backend.tracking.mocap_trackers import FPS, load_mocap, to_canonical, trackers_from_motion  # noqa: E402

CMU = ("131_01", "131_02", "131_03")
KEYS = ("mpjpe_cm", "skate_cm", "skate_ref_cm", "jitter", "jitter_ref", "hand_err_cm", "hand_err_max_cm",
        "head_err_cm", "head_err_p95_cm", "limb_angle_deg", "steps_moving", "moving_s", "planted_still", "ref_planted_still")


def run_clip(motion, mapping, method, config: TrackConfig = None):
    take = trackers_from_motion(motion, mapping)
    t0 = time.time()
    res = track_body(take, config or TrackConfig(method=method))
    s = score(res, motion, mapping)
    s["seconds"] = time.time() - t0
    s["scale"] = res.scale
    s["arm_stretch_cm"] = float(res.arm_stretch_m.mean() * 100.0)
    return s, res


def held_out(part: str, limit: int = None) -> dict:
    entries = dataset.load_split()[part][:limit]
    rows = {"model": [], "baseline": []}
    for e in entries:
        m = dataset.load_entry(e)
        if m.num_frames < 8:
            continue
        for method in rows:
            s, _ = run_clip(m, dict(CANONICAL_MAP), method)
            s["clip"], s["source"] = e, dataset.source_of(e)
            rows[method].append(s)
    return rows


def cmu(data_dir: Path) -> dict:
    rows = {"model": [], "baseline": []}
    results = {}
    for name in CMU:
        path = data_dir / "cmu_131_start_walk_stop" / f"{name}.bvh"
        if not path.is_file():
            continue
        src, mapping = load_mocap(path)
        for method in rows:
            s, res = run_clip(src, mapping, method)
            s["clip"] = name
            rows[method].append(s)
            results[(name, method)] = res
    return rows, results


def live_timing(data_dir: Path) -> dict:
    """LiveTracker on CMU 131_01's trackers at the clip's own 120 Hz, one tick
    per sample: ms per tick (median, 95th percentile) and the hands' error."""
    from rigmind.backend.tracking.live import LiveTracker

    path = data_dir / "cmu_131_start_walk_stop" / "131_01.bvh"
    if not path.is_file():
        return {}
    src, mapping = load_mocap(path)
    take = trackers_from_motion(src, mapping)
    live = LiveTracker()
    ms, err, head = [], [], []
    for i in range(take.num_samples):
        t = time.perf_counter()
        pose = live.step(take.positions[i], take.rotations[i], 1.0 / src.fps)
        ms.append((time.perf_counter() - t) * 1000.0)
        p = pose.world_positions()[0]
        sk = pose.skeleton
        err.append(np.linalg.norm(p[[sk.index("Hand_L"), sk.index("Hand_R")]] - take.positions[i, 1:], axis=-1).max())
        head.append(np.linalg.norm(p[sk.index("Head")] - take.positions[i, 0]))
    ms = np.array(ms[10:])
    return {"ticks": int(len(ms)), "ms_median": float(np.median(ms)), "ms_p95": float(np.percentile(ms, 95)),
            "hand_err_max_cm": float(np.max(err) * 100.0), "head_err_median_cm": float(np.median(head) * 100.0),
            "head_err_max_cm": float(np.max(head) * 100.0)}


def mean_of(rows, key, weight="frames"):
    v = np.array([r[key] for r in rows], float)
    w = np.array([r[weight] for r in rows], float)
    ok = np.isfinite(v)
    return float(np.sum(v[ok] * w[ok]) / max(np.sum(w[ok]), 1e-9)) if ok.any() else float("nan")


def table(rows_by_method, keys=("mpjpe_cm", "skate_cm", "skate_ref_cm", "jitter", "jitter_ref", "hand_err_cm",
                                 "hand_err_max_cm", "head_err_cm", "head_err_p95_cm", "limb_angle_deg",
                                 "planted_still")) -> str:
    out = ["| method | clips | frames | " + " | ".join(keys) + " |", "|---" * (3 + len(keys)) + "|"]
    for method, rows in rows_by_method.items():
        if not rows:
            continue
        vals = []
        for k in keys:
            vals.append(f"{max(r[k] for r in rows):.2f}" if k.endswith("max_cm") else f"{mean_of(rows, k):.2f}")
        out.append(f"| {method} | {len(rows)} | {sum(r['frames'] for r in rows)} | " + " | ".join(vals) + " |")
    return "\n".join(out)


def per_source(rows_by_method) -> str:
    out = ["| source | model MPJPE cm | baseline MPJPE cm | model skate / mocap cm | model jitter / mocap |",
           "|---|---|---|---|---|"]
    srcs = sorted({r["source"] for r in rows_by_method["model"]})
    for s in srcs:
        m = [r for r in rows_by_method["model"] if r["source"] == s]
        b = [r for r in rows_by_method["baseline"] if r["source"] == s]
        out.append(f"| {s} ({len(m)}) | {mean_of(m, 'mpjpe_cm'):.2f} | {mean_of(b, 'mpjpe_cm'):.2f} | "
                   f"{mean_of(m, 'skate_cm'):.2f} / {mean_of(m, 'skate_ref_cm'):.2f} | "
                   f"{mean_of(m, 'jitter'):.0f} / {mean_of(m, 'jitter_ref'):.0f} |")
    return "\n".join(out)


def cmu_table(rows_by_method) -> str:
    out = ["| clip | method | MPJPE cm | limb angle deg | skate cm (clip) | jitter (clip) | hand err cm (max) | "
           "touch-downs while the head moves (moving s) | both feet planted while still |", "|---" * 9 + "|"]
    for method, rows in rows_by_method.items():
        for r in rows:
            out.append(f"| {r['clip']} | {method} | {r['mpjpe_cm']:.2f} | {r['limb_angle_deg']:.1f} | "
                       f"{r['skate_cm']:.2f} ({r['skate_ref_cm']:.2f}) | {r['jitter']:.0f} ({r['jitter_ref']:.0f}) | "
                       f"{r['hand_err_cm']:.2f} ({r['hand_err_max_cm']:.2f}) | {r['steps_moving']} vs clip {r['steps_moving_ref']} ({r['moving_s']:.1f} s) | "
                       f"{r['planted_still']:.2f} |")
    return "\n".join(out)


def from_file_section() -> list:
    """The acceptance command read from the exported file: the tables of
    ``bench/bench_track_from_file.py --json`` runs (model and baseline)
    saved under bench/results, when they are there."""
    from bench_track_from_file import markdown

    files = [REPO / "bench" / "results" / f"track_from_file_{m}.json" for m in ("model", "baseline", "model_blender52")]
    rows = [r for p in files if p.is_file() for r in json.loads(p.read_text())]
    if not rows:
        return []
    return [
        "## The acceptance command, read from the exported file",
        "",
        "`python bench/bench_track_from_file.py --method model --json bench/results/track_from_file_model.json` "
        "(and `--method baseline`; the Blender 5.2 rows: `--python .venv-bpy52/bin/python --path DIR --json "
        "bench/results/track_from_file_model_blender52.json`, DIR holding the extension's cp313 onnxruntime and scipy "
        "wheels unpacked; this table: `--markdown` of them): whole `rigmind track --trackers-from "
        "../shared/data/cmu_131_start_walk_stop/131_0N.bvh --rig RIG --out t.bvh` processes (the mannequin from "
        "`rigmind mannequin`, X Bot, the Ready Player Me avatar, a generated Rigify rig), the BVH read back and scored against the clip. Limb directions: upper arm, "
        "forearm, thigh, shin (left and right), each in its body frame (the hips' left-right axis, world up), "
        "mean over frames; skate: cm per 30 fps contact frame, each file's own floor; touch-downs while the "
        "clip's head moves (> 0.3 m/s); wall: process start to file written.",
        "",
        markdown(rows),
        "",
        "Track Body pins the planted feet again on the rig's own legs after the retarget "
        "(`tracking.posing.pin_feet_on`, with the network's contacts): the rotation transfer alone keeps the "
        "tracked legs' angles, and on legs of other proportions the planted feet slid (131_01: 0.54 cm/frame "
        "on the mannequin, 0.43 on X Bot, over the clip's 0.39). Contact sheet read from the files: "
        "`bench/img/track_file_131_01.png` (`python bench/track_file_sheet.py`; rows: the clip, the model's "
        "BVH on the mannequin, the baseline's; red = a foot low and slow). Looked at (2026-12-03, trackers "
        "read through the standing canonical rest): the model's feet stay where they land through each "
        "stance, on the floor; the limb misses are the clip's bent-knee dance style (its thighs forward, knees "
        "bent through the walk, a knee lift at 1.5 s, kicks) where the model walks straighter-legged, and its "
        "3-s crouch as a wide-kneed squat.",
        "",
        "The clip itself put on the canonical skeleton (every limb's world direction exact) with its wrists "
        "moved onto the clip's wrists by the same arm IK scores 7.4 / 8.5 / 7.2 degrees (arms 5-28, legs 0.5; "
        "on the canonical skeleton alone 0.6): CMU's shoulder joints are 0.166 m either side of the body's "
        "middle, the canonical skeleton's 0.100 m, so hands on the same targets angle the arms out "
        "(`python bench/tracking_limb_floor.py`). That floor is not what the tracked arms miss, though: given "
        "the clip's shoulder width and arm lengths the tracked arms score -0.4 / -1.8 / +0.3 degrees from what they score without them "
        "(`python bench/tracking_limb_sources.py`, below).",
        "",
    ]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--part", default="test", choices=("test", "validation"))
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--sheet", action="store_true")
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "tracking.md"))
    a = ap.parse_args(argv)
    t0 = time.time()
    ho = held_out(a.part, a.limit)
    c_rows, c_res = cmu(paths.data_dir())
    live = live_timing(paths.data_dir())
    md = [
        "# Three-point tracking (issue #30)",
        "",
        f"Command: `python bench/bench_tracking.py --part {a.part}" + (f" --limit {a.limit}" if a.limit else "") +
        (" --sheet" if a.sheet else "") + "`  ",
        f"Machine: AMD EPYC, 2 cores (shared). Date: {datetime.date.today().isoformat()}. "
        f"Wall time {time.time() - t0:.0f} s.",
        "",
        "Trackers (head, both wrists: world position and rotation) are read from each clip; the body is made "
        "from them alone (`track_body`, ONNX Runtime) and scored against the clip. MPJPE over the mapped body "
        "joints with the output put on the source's proportions; skate = foot skate (cm per 30 fps contact "
        "frame) of the output, with the mocap's own beside it; jitter = mean joint jerk (m/s^3) at 30 fps; "
        "hand error = wrist to its target; limb angle = upper arm, forearm, thigh, shin directions in a body "
        "frame vs the clip's; planted_still = fraction of frames with both feet planted while the head is "
        "still (< 0.1 m/s). Baseline = the walk controller driven by the head's velocity and facing, kept "
        "under the head, with the same arm IK and foot locks.",
        "",
        f"## Held-out {a.part} clips (whole clips never used in training or tuning)",
        "",
        table(ho),
        "",
        per_source(ho),
        "",
        "## CMU 131 (a skeleton the model never saw; start - walk - stop)",
        "",
        table(c_rows, ("mpjpe_cm", "skate_cm", "skate_ref_cm", "jitter", "jitter_ref", "hand_err_cm",
                       "hand_err_max_cm", "head_err_cm", "head_err_p95_cm", "limb_angle_deg")),
        "",
        cmu_table(c_rows),
        "",
        "## Contact sheet",
        "",
        "`bench/img/tracking_131_01.png` (`--sheet`): every 0.5 s of CMU 131_01 seen from the side along its "
        "direction of travel; rows: the mocap (grey), the model (blue), the baseline (orange); green dots = the "
        "three trackers, red = planted feet, grey line = the floor. Looked at (2026-12-07, the body moved onto "
        "the head tracker; 2026-12-02 before it): the model stands and walks on the floor with its head and "
        "hands on the trackers and its feet planted while it stands; the clip is Michael-Jackson-styled, and the "
        "model misses what three points cannot show: the knee lift at 1.5 s and the kicks at 5-6 s (it stays on "
        "both feet), and its crouch at 3 s is a wide, low lunge where the mocap squats with knees together "
        "(now as low as the head tracker; before, its head stayed up to 14 cm above it). The baseline keeps "
        "the controller's upright walk under the head; in the crouch it now sinks into a deep squat under the "
        "head tracker (before, its trunk folded and the tracker left its head).",
        "",
        "## How the choices were made",
        "",
        "Training kept the checkpoint with the lowest validation loss; the post-processing defaults were compared "
        "on the validation clips and CMU 131 (`bench/tracking_variants.py`, bench/results/tracking_variants.md). "
        "This page (the test split) was also regenerated after each of those changes, so the test numbers were "
        "seen during development, though no choice was made on them. The last of them (2026-12-07): the body "
        "moved onto the head tracker, hands first (`PoseConfig.head_on_target`); on the validation clips the "
        "head 1.22 -> 0.16 cm from its tracker (mean), MPJPE 4.01 -> 3.89 cm, jitter 131 -> 134 (the mocap's "
        "119), skate 0.22 -> 0.21 cm.",
        "",
        "## Live (LiveTracker, one tick per 120 Hz sample of CMU 131_01)",
        "",
        f"{live.get('ticks', 0)} ticks: median {live.get('ms_median', float('nan')):.2f} ms, 95th percentile "
        f"{live.get('ms_p95', float('nan')):.2f} ms per tick (shared 2-core machine, other jobs running); "
        f"hands at most {live.get('hand_err_max_cm', float('nan')):.2f} cm from their targets, the head "
        f"{live.get('head_err_median_cm', float('nan')):.2f} cm (median; at most "
        f"{live.get('head_err_max_cm', float('nan')):.2f}, where the arms would not reach). Track Live in "
        "Blender, with the frame's evaluation around each tick: [track_live.md](track_live.md).",
        "",
    ] + from_file_section()
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(md) + "\n", encoding="utf-8")
    out.with_suffix(".json").write_text(json.dumps({"held_out": ho, "cmu": c_rows, "live": live}, indent=1, default=float))
    print("\n".join(md))
    if a.sheet and ("131_01", "model") in c_res:
        from tracking_sheet import sheet

        src, mapping = load_mocap(paths.data_dir() / "cmu_131_start_walk_stop" / "131_01.bvh")
        sheet(to_canonical(src, mapping, FPS), src, mapping, c_res[("131_01", "model")], c_res[("131_01", "baseline")],
              REPO / "bench" / "img" / "tracking_131_01.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
