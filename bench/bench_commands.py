"""Time whole ``rigmind`` commands the way a user waits for them: from process
start to the output file written (issue #14).

Each command runs in a fresh process (``RIGMIND`` executable, default this
checkout's ``.venv/bin/rigmind``), ``--repeat`` times with a warm file cache
(the median is reported) and once with a cold one. "Cold" evicts the pages of
the virtual environment, the checkout and the inputs from the page cache with
``posix_fadvise(DONTNEED)`` before the run (no root needed; pages other
processes hold mapped may stay), so it is the nearest thing to a first run
after a reboot that a shared machine allows.

Several trees can be timed in one run, interleaved, so a before/after ratio
is measured under the same machine load:

    .venv/bin/python bench/bench_commands.py \\
        --tree before=/work/main --tree after=. [--repeat 3] [--cold] [--json out.json]

With ``RIGMIND_TIMINGS=1`` (set here) a tree that knows it prints the phases
of each command to stderr (``rigmind-timing: PHASE SECONDS``); they are
collected into the breakdown. Inputs: 60 s of speech (the BEAT2 sample,
cut to 60 s, else espeak-ng speech), the mannequin built by the tree itself,
and the Ready Player Me head for the face command when present.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PATH_22M = "0,0;10,0;10,6;16,6"  # 10 + 6 + 6 = 22 m on the ground plane


def evict(paths) -> int:
    """Drop the page-cache pages of every file under ``paths``; returns the
    number of files touched."""
    n = 0
    for root in paths:
        root = Path(root)
        files = [root] if root.is_file() else (p for p in root.rglob("*") if p.is_file() and not p.is_symlink())
        for p in files:
            try:
                fd = os.open(p, os.O_RDONLY)
            except OSError:
                continue
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                n += 1
            finally:
                os.close(fd)
    return n


def speech_60s(data: Path, out: Path) -> Path:
    import numpy as np
    import soundfile as sf

    wav = data / "beat2_speech_gesture_sample" / "2_scott_0_2_2.wav"
    if wav.exists():
        x, sr = sf.read(wav, dtype="float32")
        x = x[: 60 * sr]
    else:
        sys.path.insert(0, str(REPO.parent))
        from rigmind.backend.face.espeak import synthesize  # noqa: E402

        s = synthesize("We keep going, every day, and we make it better. " * 12, "en-us")
        x, sr = np.resize(s.samples, 60 * s.sample_rate), s.sample_rate
    sf.write(out, x, sr)
    return out


def run_once(exe: Path, argv, cwd: Path, out: Path | None, env) -> dict:
    if out is not None and out.exists():
        out.unlink()
    t0 = time.perf_counter()
    p = subprocess.run([str(exe), *argv], cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode not in (0,) or (out is not None and not out.exists()):
        raise RuntimeError(f"{exe} {' '.join(argv)} failed ({p.returncode}):\n{p.stderr[-3000:]}")
    phases = {}
    for line in p.stderr.splitlines():
        if line.startswith("rigmind-timing: "):
            _, name, sec = line.split()
            phases[name] = phases.get(name, 0.0) + float(sec)
    return {"wall": wall, "phases": phases}


def _parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", action="append", default=[],
                    help="NAME=PATH of a checkout with .venv/bin/rigmind (repeatable; default after=this checkout)")
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("--repeat", type=int, default=3, help="warm runs per command (median reported)")
    ap.add_argument("--cold", action="store_true", help="also one cold-cache run per command")
    ap.add_argument("--only", help="comma-separated command labels to run")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--blender", action="store_true",
                    help="also time Generate Gesture/Face/Walk Along Path inside Blender (bench_blender_clicks.py)")
    return ap.parse_args()


def _tree_commands(exe: Path, root: Path, d: Path, wav: Path, rpm: Path, env: dict) -> dict:
    """Make the inputs in ``d`` (the mannequin, a 60 s gesture take) with the
    tree's own rigmind; return its commands ``{label: (argv, output)}``."""
    d.mkdir()
    mannequin = d / "mannequin.blend"
    run_once(exe, ["mannequin", "--out", str(mannequin)], root, mannequin, env)
    take = d / "take.blend"  # a 60 s gesture take with face, for `export`
    run_once(exe, ["gesture", "--audio", str(wav), "--rig", str(mannequin), "--face", "auto", "--out", str(take)],
             root, take, env)
    cmds = {
        "help": (["--help"], None),
        "gesture_face_bvh": (["gesture", "--audio", str(wav), "--rig", str(mannequin), "--face", "auto",
                              "--out", str(d / "g.bvh")], d / "g.bvh"),
        "gesture_face_fbx": (["gesture", "--audio", str(wav), "--rig", str(mannequin), "--face", "auto",
                              "--out", str(d / "g.fbx")], d / "g.fbx"),
        "walk_path_22m_bvh": (["walk", "--rig", str(mannequin), f"--path={PATH_22M}", "--out", str(d / "w.bvh")],
                              d / "w.bvh"),
        "export_take_bvh": (["export", "--rig", str(take), "--out", str(d / "e.bvh")], d / "e.bvh"),
        "export_take_fbx": (["export", "--rig", str(take), "--out", str(d / "e.fbx")], d / "e.fbx"),
        "open_take_only": (["info", str(take)], None),
    }
    if rpm.exists():
        cmds["face_rpm_csv"] = (["face", "--audio", str(wav), "--mesh", str(rpm), "--out", str(d / "f.csv")],
                                d / "f.csv")
    return cmds


def _time_label(label: str, trees, results: dict, args, env: dict, evict_paths) -> None:
    """Time one command on every tree: an optional cold run, a warm-up, then
    ``args.repeat`` warm runs. Trees alternate run by run, so a change in the
    machine's load (other jobs on the same cores) falls on both sides of a
    ratio alike."""
    todo = [(name, root) for name, root in trees if label in results[name]["cmds"]]
    for name, root in todo:
        r = results[name]
        argv, out = r["cmds"][label]
        exe = root / ".venv" / "bin" / "rigmind"
        rec = r["runs"].setdefault(label, {"warm": []})
        if args.cold:
            evict([root / ".venv", root, *evict_paths])
            rec["cold"] = run_once(exe, argv, root, out, env)
        run_once(exe, argv, root, out, env)  # warm the cache
    for _ in range(args.repeat):
        for name, root in todo:
            argv, out = results[name]["cmds"][label]
            rec = results[name]["runs"][label]
            rec["warm"].append(run_once(root / ".venv" / "bin" / "rigmind", argv, root, out, env))
    for name, _ in todo:
        rec = results[name]["runs"][label]
        w = statistics.median(x["wall"] for x in rec["warm"])
        cold = f", cold {rec['cold']['wall']:.2f} s" if "cold" in rec else ""
        print(f"{label:<20} {name:<8} warm median {w:.2f} s{cold}  phases {rec['warm'][-1]['phases']}", flush=True)


def _run_result_script(script: str, key: str, trees, results: dict, wav: Path, env: dict) -> None:
    """Run a bench script that prints ``RESULT {json}`` under each tree's python."""
    path = Path(__file__).with_name(script)
    for name, root in trees:
        py = root / ".venv" / "bin" / "python"
        p = subprocess.run([str(py), str(path), str(wav)], cwd=root, env=env, capture_output=True, text=True)
        line = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
        results[name][key] = json.loads(line[-1][7:]) if line else {"error": p.stderr[-2000:]}
        print(f"{key} {name}: {results[name][key]}", flush=True)


def _summary(results: dict, trees) -> dict:
    """Medians, minima and phases per tree and command; speed-ups against the first tree."""
    summary = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cpus": os.cpu_count(),
               "load_avg_end": os.getloadavg(), "trees": {}}
    for name, r in results.items():
        summary["trees"][name] = {"root": r["root"], "commands": {}, "blender": r.get("blender"),
                                  "audio_features": r.get("audio_features")}
        for label, rec in r["runs"].items():
            walls = [x["wall"] for x in rec["warm"]]
            summary["trees"][name]["commands"][label] = {
                "warm_median_s": statistics.median(walls), "warm_min_s": min(walls), "warm_runs": walls,
                "cold_s": rec.get("cold", {}).get("wall"), "phases_last_warm": rec["warm"][-1]["phases"],
                "argv": r["cmds"][label][0]}
    base = trees[0][0]
    for name, _ in trees[1:]:
        for label, v in summary["trees"][name]["commands"].items():
            b = summary["trees"][base]["commands"].get(label)
            if b:
                v[f"speedup_vs_{base}"] = b["warm_median_s"] / v["warm_median_s"]
    return summary


def main():
    args = _parse_args()
    trees = [t.split("=", 1) for t in (args.tree or [f"after={REPO}"])]
    trees = [(name, Path(path).resolve()) for name, path in trees]
    tmp = Path(tempfile.mkdtemp(prefix="rigmind-bench-cmd-"))
    env = dict(os.environ, RIGMIND_TIMINGS="1", BLENDER_USER_RESOURCES=str(tmp / "blender_user"),
               OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "2"))
    wav = speech_60s(args.data, tmp / "speech_60s.wav")
    rpm = args.data / "character_rpm_arkit" / "brunette-t.glb"
    results = {}
    for name, root in trees:
        cmds = _tree_commands(root / ".venv" / "bin" / "rigmind", root, tmp / name, wav, rpm, env)
        results[name] = {"root": str(root), "cmds": cmds, "runs": {}}
    labels = list(results[trees[0][0]]["cmds"])
    if args.only:
        labels = [x for x in labels if x in args.only.split(",")]
    for label in labels:
        _time_label(label, trees, results, args, env, [wav, rpm])
    _run_result_script("bench_audio_features.py", "audio_features", trees, results, wav, env)
    if args.blender:
        _run_result_script("bench_blender_clicks.py", "blender", trees, results, wav, env)
    text = json.dumps(_summary(results, trees), indent=1)
    if args.json:
        args.json.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
