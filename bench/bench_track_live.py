"""Track Live (issue #30): the per-tick cost of posing a rig from three
tracker objects, and Track Body's bake of the same take.

    .venv/bin/python bench/bench_track_live.py [--data ../shared/data] [--seconds 8] [--out bench/results/track_live.md]

The trackers are the head and wrists of CMU 131_01 (walk, stop;
``backend.tracking.mocap_trackers.trackers_from_motion``) keyed on three
empties at 30 fps in a scene with the mannequin (and, when present, X Bot,
``characters/Xbot.glb``). Each frame of playback: ``scene.frame_set`` (Blender
evaluates the empties; listed apart, it is the timeline's own cost), then
one :meth:`~rigmind.operators.track_live.TrackLiveSession.tick`: read the
three objects, the causal tracker's step (one network evaluation, foot
locks, arm IK), the live mapping onto the rig, the pose write. Median and
95th percentile over the take (the first tick, which calibrates, left out).
Then Track Body (``track_scene.track_onto``) bakes the same take as a new
action, model and baseline, wall seconds.
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="rigmind-bench-"))

import bpy  # noqa: E402
import numpy as np  # noqa: E402

from rigmind.backend.requests.track import TrackRequest  # noqa: E402
from rigmind.backend.resample import resample  # noqa: E402
from rigmind.backend.tracking.mocap_trackers import load_mocap, trackers_from_motion  # noqa: E402
from rigmind.operators import mannequin, rig_files, track_scene  # noqa: E402
from rigmind.operators.track_live import TrackLiveSession  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CLIP = "cmu_131_start_walk_stop/131_01.bvh"


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores"


def key_empties(take, fps: float) -> list:
    """Three empties following ``take`` (already at ``fps``), keyed on frames 1..F."""
    objs = []
    n = take.num_samples
    frames = np.arange(1, n + 1, dtype=np.float32)
    for k, name in enumerate(("Head", "HandL", "HandR")):
        ob = bpy.data.objects.new(f"Track {name}", None)
        bpy.context.scene.collection.objects.link(ob)
        ob.rotation_mode = "QUATERNION"
        ob.keyframe_insert("location", frame=1)
        ob.keyframe_insert("rotation_quaternion", frame=1)
        cb = ob.animation_data.action.layers[0].strips[0].channelbag(ob.animation_data.action_slot)
        for fc in cb.fcurves:
            vals = (take.positions[:, k, fc.array_index] if fc.data_path == "location"
                    else take.rotations[:, k, fc.array_index])
            fc.keyframe_points.clear()
            fc.keyframe_points.add(n)
            fc.keyframe_points.foreach_set("co", np.stack([frames, vals.astype(np.float32)], -1).ravel())
            fc.update()
        objs.append(ob)
    sc = bpy.context.scene
    sc.render.fps, sc.frame_start, sc.frame_end = int(fps), 1, n
    return objs


def stats(xs) -> str:
    a = 1000 * np.asarray(xs)
    return f"{np.median(a):.2f} / {np.percentile(a, 95):.2f}"


def run_rig(name: str, arm, objs, take) -> dict:
    sc = bpy.context.scene
    sc.frame_set(1)
    session = TrackLiveSession(arm, objs)
    frame_set = []
    for f in range(2, take.num_samples + 1):
        t0 = time.perf_counter()
        sc.frame_set(f)
        frame_set.append(time.perf_counter() - t0)
        session.tick(1.0 / 30.0)
    session.close()
    t = session.timings
    row = {"rig": name, "bones": len(arm.pose.bones), "ticks": session.ticks - 1,
           **{k: stats(v[1:]) for k, v in t.items()}, "frame_set": stats(frame_set),
           "calibration_s": t["total"][0]}
    for method in ("model", "baseline"):
        t0 = time.perf_counter()
        action, _, _ = track_scene.track_onto(arm, take, TrackRequest(method=method, set_scene_fps=False,
                                                                      scene_range="grow"), "131_01")
        row[f"bake_{method}_s"] = time.perf_counter() - t0
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    ap.add_argument("--seconds", type=float, default=8.0, help="seconds of the clip played (default 8)")
    ap.add_argument("--out", help="write the results page here (markdown)")
    args = ap.parse_args(argv)
    try:  # the Blender 5.2 runtime has no torch; Track Live itself runs on ONNX Runtime
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass
    data = Path(args.data)
    motion, mapping = load_mocap(data / CLIP)
    motion = resample(motion, 30.0)
    motion = motion.slice(0, min(motion.num_frames, int(round(args.seconds * 30)) + 1))
    take = trackers_from_motion(motion, mapping)
    rows = []
    rigs = [("mannequin", None)]
    if (data / "characters" / "Xbot.glb").is_file():
        rigs.append(("X Bot", data / "characters" / "Xbot.glb"))
    for name, path in rigs:
        bpy.ops.wm.read_factory_settings(use_empty=True)
        arm = mannequin.build_mannequin()["armature"] if path is None else None
        if path is not None:
            rig_files.load_rig_file(path)
            arm = rig_files.find_armature(None)
        objs = key_empties(take, 30.0)
        rows.append(run_rig(name, arm, objs, take))
    cols = ("rig", "bones", "ticks", "read", "track", "map", "write", "total", "frame_set")
    lines = [
        "# Track Live: per-tick cost (issue #30)", "",
        f"Command: `.venv/bin/python bench/bench_track_live.py --seconds {args.seconds:g}`  ",
        f"Machine: {machine()}; torch and ONNX Runtime 1 thread where set; date {time.strftime('%Y-%m-%d')}; "
        f"load average {os.getloadavg()[0]:.1f} at the end (other jobs share the cores: timings scale with it).", "",
        f"The head and wrists of CMU 131_01 ({take.num_samples} frames at 30 fps) keyed on three empties; one "
        "tick per frame of playback. Milliseconds, median / 95th percentile; `total` = read + track + map + "
        "write (the tick itself); `frame_set` is Blender evaluating the frame (the timeline's cost, apart).", "",
        "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(str(r[c]) for c in cols) + " |")
    lines += ["", "Calibration (first tick) and Track Body's bake of the same take (wall seconds):", "",
              "| rig | calibration s | bake model s | bake baseline s |", "|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['rig']} | {r['calibration_s']:.3f} | {r['bake_model_s']:.2f} | {r['bake_baseline_s']:.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
