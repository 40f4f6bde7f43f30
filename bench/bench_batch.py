"""Batch throughput: 20 speech files → body + face → FBX on the mannequin.

    .venv/bin/python bench/bench_batch.py [--data ../shared/data] [--seconds 30] [--files 20]
                                          [--engines local1,local2,ray2] [--format fbx]

The speech is cut from ``../shared/data`` (BEAT2's five English takes and the
multilingual Silero readings, round-robin, ``--seconds`` each). Each engine
setting runs the whole ``rigmind batch gesture`` command in a fresh process
(fresh output folder, so nothing is skipped) and reads its
``batch_report.json``:

- *whole command*: takes and minutes of speech per minute of wall time,
  process start to the last file written;
- *warm workers*: the same over the span from the first take starting in a
  worker to the last output written (what a long batch tends to);
- the cost per take split into worker start-up (imports), model load (rig +
  models, once per worker) and work (per take).

Prints a Markdown table for bench/results/batch.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
RIGMIND = Path(sys.executable).with_name("rigmind")


def speech_cuts(data: Path, out: Path, n: int, seconds: float) -> float:
    """``n`` cuts of ``seconds`` into ``out``; returns the total speech seconds."""
    import soundfile as sf

    sources = sorted((data / "beat2_speech_gesture_sample").glob("*.wav"))
    sources += sorted((data / "speech_multilingual").glob("silero_*.wav"))
    if not sources:
        sys.exit(f"bench_batch: no speech under {data} (BEAT2 / speech_multilingual)")
    clips = [sf.read(str(p), dtype="float32") for p in sources]
    offsets = [0] * len(clips)
    out.mkdir(parents=True, exist_ok=True)
    total = 0.0
    for k in range(n):
        j = k % len(clips)
        x, sr = clips[j]
        step = int(seconds * sr)
        if offsets[j] + step > len(x):
            offsets[j] = 0
        cut = x[offsets[j]:offsets[j] + step]
        offsets[j] += step
        sf.write(str(out / f"take{k:02d}_{sources[j].stem}.wav"), cut, sr)
        total += len(cut) / sr
    return total


def run(engine: str, workers: int, audio: Path, rig: Path, out: Path, fmt: str) -> dict:
    cmd = [str(RIGMIND), "batch", "gesture", "--audio-dir", str(audio), "--rig", str(rig), "--face", "auto",
           "--format", fmt, "--engine", engine, "--workers", str(workers), "--out-dir", str(out)]
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.time() - t0
    if r.returncode != 0:
        sys.exit(f"bench_batch: {' '.join(cmd)} failed ({r.returncode}):\n{r.stderr[-3000:]}")
    report = json.loads((out / "batch_report.json").read_text())
    items = [i for i in report["items"] if i["status"] == "done"]
    span = max(i["finished_at"] for i in items) - min(i["started_at"] for i in items)
    stats = report["worker_stats"]
    return {
        "wall": wall, "warm_span": span, "takes": len(items),
        "work": float(np.mean([i["seconds"] for i in items])),
        "startup": float(np.mean([s["startup_s"] for s in stats])) if stats else float("nan"),
        "load": float(np.mean([s["load_s"] for s in stats])) if stats else float("nan"),
        "workers": len(stats),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=os.environ.get("RIGMIND_DATA", str(REPO.parent / "shared" / "data")))
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--engines", default="local1,local2,ray2",
                    help="comma list of ENGINE+WORKERS: local1, local2, ray2 …")
    ap.add_argument("--format", default="fbx")
    args = ap.parse_args(argv)

    tmp = Path(tempfile.mkdtemp(prefix="rigmind-bench-batch-"))
    speech = speech_cuts(Path(args.data), tmp / "speech", args.files, args.seconds)
    rig = tmp / "mannequin.blend"
    subprocess.run([str(RIGMIND), "mannequin", "--out", str(rig)], check=True, capture_output=True)
    print(f"{args.files} files, {speech / 60:.1f} min of speech, body + face → {args.format}, mannequin; "
          f"{os.cpu_count()} cores, {platform.processor() or platform.machine()}, "
          f"{time.strftime('%Y-%m-%d')}\n")
    print("| engine | workers | whole command: takes/min | speech min/min | warm workers: speech min/min "
          "| per worker: start-up s | model+rig load s | per take: work s |")
    print("|---|---|---|---|---|---|---|---|")
    for spec in args.engines.split(","):
        engine, workers = spec.rstrip("0123456789"), int(spec[len(spec.rstrip("0123456789")):] or 1)
        if engine == "ray":
            try:
                import ray  # noqa: F401
            except ImportError:
                print(f"| ray | {workers} | not installed (python3 install.py setup --with ray) | | | | | |")
                continue
        r = run(engine, workers, tmp / "speech", rig, tmp / f"out_{spec}", args.format)
        print(f"| {engine} | {workers} | {r['takes'] / r['wall'] * 60:.1f} | {speech / r['wall']:.1f} "
              f"| {speech / r['warm_span']:.1f} | {r['startup']:.1f} | {r['load']:.1f} | {r['work']:.2f} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
