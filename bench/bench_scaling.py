"""Cost against length (issue #27 item 5): whole ``rigmind`` commands on
inputs at 1/16, 1/4 and the full size of the documented limits, each run as a
fresh process, its wall time and peak resident memory measured.

Workloads (the full, 16x, size named; 1x and 4x are 1/16 and 1/4 of it):

- ``walk_km``: ``rigmind walk --path @FILE`` on a 1 km winding road of 41
  points (straights and bends; 1x is the same road scaled to 62.5 m);
- ``walk_points``: ``rigmind walk --path @FILE`` on a 10 000-point path, a
  heading random walk with 0.09 m steps (900 m); 1x is its first 625 points;
- ``retarget``: ``rigmind retarget`` of a 100 000-frame BVH (CMU 131_01
  tiled end to end, each copy's root moved on to where the last one ended)
  onto the mannequin;
- ``gesture``: ``rigmind gesture --audio`` on 30 minutes of speech (the
  LJSpeech clips joined, over again as needed), onto the mannequin;
- ``face``: ``rigmind face --audio`` on the same speech, keyed on the Ready
  Player Me head (``--mesh``, a .blend out);
- ``gesture_npz``, ``face_json``: the same two without a scene (the EMAGE
  ``.npz``, the face's JSON curves): the backend's own cost, no Blender keys.

Each measurement is one child process waited for with ``os.wait4``, whose
``ru_maxrss`` is that child's own peak (and its children's, when it has
any), not the maximum over every child this script ran.

    .venv/bin/python bench/bench_scaling.py --json bench/results/scaling.json
    .venv/bin/python bench/bench_scaling.py --workloads walk_points --scales 1,4
    .venv/bin/python bench/bench_scaling.py --key-cost     # Blender's MB per key

Inputs are built in --work (default a temporary folder) from
``$RIGMIND_DATA`` (default ../shared/data); nothing is copied into the
project. Prints a table; --json writes every number with the machine and the
command lines.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
RIGMIND = Path(sys.executable).parent / "rigmind"
SCALES = (1, 4, 16)
WORKLOADS = ("walk_km", "walk_points", "retarget", "gesture", "face", "gesture_npz", "face_json")
#: The full (16x) sizes: metres, points, frames, seconds of speech.
FULL_KM_M = 1000.0
FULL_POINTS = 10_000
POINT_STEP_M = 0.09
FULL_FRAMES = 100_000
FULL_SPEECH_S = 1800.0
BOUND_MB = 1536.0


def data_dir() -> Path:
    return Path(os.environ.get("RIGMIND_DATA", REPO.parent / "shared" / "data"))


def machine() -> dict:
    """nproc, the CPU model, the RAM (GiB), Python and the date."""
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {"nproc": os.cpu_count(), "cpu": model or platform.processor(), "ram_gib": round(ram, 1),
            "python": platform.python_version(), "date": datetime.date.today().isoformat()}


# --- inputs -------------------------------------------------------------------------------------

def winding_road(length_m: float) -> np.ndarray:
    """A road of ``length_m`` metres: 20 straights joined by bends of 10
    points each alternating left and right, ``[41, 2]`` points (m). The same
    shape at every length (scaled), so only the length changes."""
    heading, pts = 0.0, [np.zeros(2)]
    turns = [math.radians(a) for a in (60, -90, 45, -75, 90, -60, 30, -45, 75, -90)] * 2
    for turn in turns:
        pts.append(pts[-1] + np.array([math.cos(heading), math.sin(heading)]))
        pts.append(pts[-1] + np.array([math.cos(heading + turn / 2), math.sin(heading + turn / 2)]) * 0.25)
        heading += turn
    p = np.array(pts)
    seg = np.linalg.norm(np.diff(p, axis=0), axis=1).sum()
    return p * (length_m / seg)


def heading_random_walk(n: int, step_m: float = POINT_STEP_M, seed: int = 27) -> np.ndarray:
    """``[n, 2]`` points (m), ``step_m`` apart, the heading a random walk
    (0.06 rad a step, so bends of a few metres' radius, never a U-turn on
    the spot). The first ``n`` points of one fixed walk, so 1x is a prefix
    of 16x."""
    rng = np.random.default_rng(seed)
    dh = rng.normal(0.0, 0.06, FULL_POINTS)
    heading = np.cumsum(dh)[:n]
    steps = step_m * np.stack([np.cos(heading), np.sin(heading)], axis=1)
    return np.vstack([np.zeros((1, 2)), np.cumsum(steps, axis=0)])[:n]


def write_points(points: np.ndarray, out: Path) -> Path:
    out.write_text("".join(f"{x:.4f},{y:.4f}\n" for x, y in points))
    return out


def tiled_bvh(src: Path, frames: int, out: Path) -> Path:
    """``src`` tiled to ``frames`` frames; each copy's root X/Z (the BVH's
    ground plane, Y up) starts where the previous copy ended."""
    text = src.read_text()
    head, motion = text.split("MOTION", 1)
    lines = motion.strip().splitlines()
    rows = np.array([[float(v) for v in ln.split()] for ln in lines[2:]])
    step = rows[-1, [0, 2]] - rows[0, [0, 2]]
    reps = -(-frames // len(rows))
    tiles = np.tile(rows, (reps, 1))[:frames]
    k = np.repeat(np.arange(reps), len(rows))[:frames]
    tiles[:, 0] += k * step[0]
    tiles[:, 2] += k * step[1]
    with out.open("w") as f:
        f.write(head + f"MOTION\nFrames: {frames}\n{lines[1]}\n")
        np.savetxt(f, tiles, fmt="%.4f")
    return out


def joined_speech(seconds: float, out: Path) -> Path:
    """The LJSpeech clips joined, over again when they run out, to
    ``seconds`` of mono speech at their own rate (22.05 kHz)."""
    import soundfile as sf

    wavs = sorted((data_dir() / "speech_english_ljspeech" / "wavs").glob("*.wav"))
    if not wavs:
        raise FileNotFoundError(f"no LJSpeech wavs under {data_dir()}")
    clips = [sf.read(w, dtype="float32") for w in wavs]
    sr = clips[0][1]
    one = np.concatenate([a for a, _ in clips])
    n = int(seconds * sr)
    sf.write(out, np.resize(one, n), sr)
    return out


def commands(work: Path, workload: str, scale: int) -> tuple:
    """``(argv, output path)`` of one workload at ``scale`` (1, 4 or 16),
    its inputs written into ``work``."""
    frac = scale / 16
    rig = work / "mannequin.blend"
    tag = f"{workload}_{scale}x"
    if workload == "walk_km":
        path = write_points(winding_road(FULL_KM_M * frac), work / f"{tag}.txt")
        out = work / f"{tag}.bvh"
        return [str(RIGMIND), "walk", "--rig", str(rig), "--path", f"@{path}", "--out", str(out)], out
    if workload == "walk_points":
        path = write_points(heading_random_walk(int(FULL_POINTS * frac)), work / f"{tag}.txt")
        out = work / f"{tag}.bvh"
        return [str(RIGMIND), "walk", "--rig", str(rig), "--path", f"@{path}", "--out", str(out)], out
    if workload == "retarget":
        src = data_dir() / "cmu_131_start_walk_stop" / "131_01.bvh"
        bvh = tiled_bvh(src, int(FULL_FRAMES * frac), work / f"{tag}_src.bvh")
        out = work / f"{tag}.bvh"
        return [str(RIGMIND), "retarget", "--src", str(bvh), "--rig", str(rig), "--out", str(out)], out
    speech = work / f"speech_{scale}x.wav"
    if not speech.exists():
        joined_speech(FULL_SPEECH_S * frac, speech)
    if workload == "gesture":
        out = work / f"{tag}.bvh"
        return [str(RIGMIND), "gesture", "--audio", str(speech), "--rig", str(rig), "--out", str(out)], out
    if workload == "face":
        head = data_dir() / "character_rpm_arkit" / "brunette-t.glb"
        out = work / f"{tag}.blend"
        return [str(RIGMIND), "face", "--audio", str(speech), "--mesh", str(head), "--out", str(out)], out
    if workload == "gesture_npz":
        out = work / f"{tag}.npz"
        return [str(RIGMIND), "gesture", "--audio", str(speech), "--out", str(out)], out
    if workload == "face_json":
        out = work / f"{tag}.json"
        return [str(RIGMIND), "face", "--audio", str(speech), "--out", str(out)], out
    raise ValueError(workload)


# --- Blender's own cost of a key -------------------------------------------------------------

KEY_COST = r"""
import sys, numpy as np, bpy
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * 4096 / 2**20
bpy.ops.wm.open_mainfile(filepath=sys.argv[-3])
frames, curves = int(sys.argv[-2]), int(sys.argv[-1])
arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
act = bpy.data.actions.new("cost")
slot = act.slots.new("OBJECT", "cost")
bag = act.layers.new("L").strips.new(type="KEYFRAME").channelbag(slot, ensure=True)
arm.animation_data_create()
arm.animation_data.action, arm.animation_data.action_slot = act, slot
co = np.empty(2 * frames, np.float32)
co[0::2] = np.arange(frames) + 1
bones = [b.name for b in arm.pose.bones]
r0 = rss()
for c in range(curves):
    fc = bag.fcurves.new(f'pose.bones["{bones[c % len(bones)]}"].rotation_quaternion', index=(c // len(bones)) % 4)
    co[1::2] = np.random.rand(frames)
    fc.keyframe_points.add(frames)
    fc.keyframe_points.foreach_set("co", co)
r1 = rss()
bpy.context.scene.frame_set(1)
print("KEYCOST", r1 - r0, rss() - r1)
"""


def key_cost(rig: Path, frames: int = 26_000, curves: int = 100) -> dict:
    """Resident MB of ``curves`` f-curves keyed on ``frames`` frames (one
    ``foreach_set`` each) in a fresh Blender, bytes per key, and what the
    first depsgraph evaluation (``frame_set``) adds."""
    r = subprocess.run([sys.executable, "-c", KEY_COST, str(rig), str(frames), str(curves)], capture_output=True,
                       text=True, check=True)
    keys_mb, eval_mb = (float(x) for x in next(ln for ln in r.stdout.splitlines() if ln.startswith("KEYCOST")).split()[1:])
    return {"frames": frames, "curves": curves, "keys_mb": round(keys_mb, 1),
            "bytes_per_key": round(keys_mb * 2**20 / (frames * curves), 1), "frame_set_mb": round(eval_mb, 1)}


# --- measuring ----------------------------------------------------------------------------------

def measure(argv, out: Path) -> dict:
    """Run ``argv`` once; wall seconds, CPU seconds (user + system, all its
    threads: less sensitive than wall time to other jobs on a shared
    machine), its own peak RSS (MB), the exit code, the ``rigmind-timing``
    phases and the output's size."""
    if out.exists():
        out.unlink()
    env = dict(os.environ, RIGMIND_TIMINGS="1")
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as so, tempfile.TemporaryFile() as se:
        proc = subprocess.Popen(argv, stdout=so, stderr=se, env=env, cwd=out.parent)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        so.seek(0)
        se.seek(0)
        stdout, stderr = so.read().decode(errors="replace"), se.read().decode(errors="replace")
    phases = {}
    for ln in stderr.splitlines():
        if ln.startswith("rigmind-timing: "):
            _, name, sec = ln.split()
            phases[name] = round(float(sec), 2)
    rec = {"seconds": round(wall, 2), "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
           "peak_rss_mb": round(usage.ru_maxrss / 1024, 1), "rc": proc.returncode,
           "phases": phases, "out_bytes": out.stat().st_size if out.exists() else 0,
           "stdout_tail": stdout.strip().splitlines()[-3:]}
    if proc.returncode != 0:
        rec["stderr_tail"] = stderr.strip().splitlines()[-5:]
    return rec


def growth(rows: dict, key: str = "seconds") -> dict:
    """Ratios of one workload's runs (``key``: "seconds" or "cpu_s"):
    t16/t1, t4/t1, and the marginal exponent log4((t16 - t4) / (t4 - t1)),
    1 for linear cost after a fixed start-up, 2 for quadratic (None where a
    run is missing)."""
    t = {s: rows[s][key] for s in rows if rows[s]["rc"] == 0 and key in rows[s]}
    res = {"t4_over_t1": None, "t16_over_t1": None, "exponent": None}
    if 1 in t and 4 in t:
        res["t4_over_t1"] = round(t[4] / t[1], 2)
    if 1 in t and 16 in t:
        res["t16_over_t1"] = round(t[16] / t[1], 2)
    if all(s in t for s in SCALES) and t[16] > t[4] > t[1]:
        res["exponent"] = round(math.log((t[16] - t[4]) / (t[4] - t[1]), 4), 2)
    return res


def _cell(rows: dict, scale: int, key: str) -> str:
    r = rows.get(scale)
    if r is None or key not in r:
        return "–"
    return f"{r[key]:g}" if r["rc"] == 0 else f"rc {r['rc']}"


def table(results: dict, key: str = "seconds") -> str:
    """The Markdown table: seconds (``key``: wall "seconds" or "cpu_s") and
    peak RSS (MB) at each scale, the 16x/1x time ratio, the marginal
    exponent and the 1.5 GB bound."""
    unit = "s" if key == "seconds" else "CPU s"
    lines = [f"| workload | 1x {unit} | 4x {unit} | 16x {unit} | 1x MB | 4x MB | 16x MB | 16x/1x | exponent | ≤ 1.5 GB |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for wl, rows in results.items():
        g = growth(rows, key)
        peak = max((r["peak_rss_mb"] for r in rows.values()), default=0.0)
        lines.append(f"| {wl} | " + " | ".join(_cell(rows, s, key) for s in SCALES) + " | "
                     + " | ".join(_cell(rows, s, "peak_rss_mb") for s in SCALES)
                     + f" | {g['t16_over_t1'] or '–'} | {g['exponent'] if g['exponent'] is not None else '–'}"
                     + f" | {'yes' if peak <= BOUND_MB else 'NO'} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--scales", default=",".join(map(str, SCALES)))
    ap.add_argument("--work", type=Path, help="folder for the inputs and outputs (default: a temporary one)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--key-cost", action="store_true", help="only measure what Blender holds per key")
    args = ap.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="rigmind-scaling-"))
    work.mkdir(parents=True, exist_ok=True)
    rig = work / "mannequin.blend"
    if not rig.exists():
        subprocess.run([str(RIGMIND), "mannequin", "--out", str(rig)], check=True, capture_output=True)
    if args.key_cost:
        print(json.dumps(key_cost(rig)))
        return 0
    results, cmds = {}, {}
    for wl in args.workloads.split(","):
        results[wl] = {}
        for s in (int(x) for x in args.scales.split(",")):
            argv_, out = commands(work, wl, s)
            cmds[f"{wl} {s}x"] = " ".join(Path(a).name if a.startswith(str(work)) else a for a in argv_)
            rec = measure(argv_, out)
            results[wl][s] = rec
            print(f"{wl} {s}x: {rec['seconds']} s, {rec['peak_rss_mb']} MB, rc {rec['rc']} {rec['phases']}",
                  flush=True)
            if rec["rc"] != 0:
                print("  " + "\n  ".join(rec.get("stderr_tail", [])), flush=True)
    print(table(results))
    print(table(results, "cpu_s"))
    if args.json:
        doc = {"machine": machine(), "command": "bench/bench_scaling.py " + " ".join(argv or sys.argv[1:]),
               "bound_mb": BOUND_MB, "commands": cmds,
               "results": {wl: {f"{s}x": r for s, r in rows.items()} for wl, rows in results.items()},
               "growth": {wl: growth(rows) for wl, rows in results.items()},
               "growth_cpu": {wl: growth(rows, "cpu_s") for wl, rows in results.items()}}
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(doc, indent=1) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
