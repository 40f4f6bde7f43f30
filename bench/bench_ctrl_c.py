"""Ctrl-C and concurrent writers against real ``rigmind`` processes (issue #17).

Ctrl-C trials: ``rigmind gesture --audio SPEECH --rig mannequin.blend --out
take.{bvh,fbx,blend}`` over an existing take, SIGINT at a uniformly random
moment within the command's measured run time. A trial passes when the
command either finished (exit 0, the file a complete take) or cancelled
(exit 130, one line "cancelled, nothing written", the previous file byte for
byte intact), with no temporary file left and no traceback printed.

``--commands gesture,export,render`` runs the trials over three commands in
turn: ``gesture`` as above; ``export --rig take.blend --out
exported.{fbx,glb,bvh}``; ``render --scene take.blend --out still.png`` (a
Cycles still) or ``--out clip.mp4`` (12 frames). An exported file is checked
like a take; a render by its container (PNG IEND, MP4 ``moov``).

Concurrent trials: two ``rigmind export --rig take.blend --out same.{blend,fbx}``
started together (over an existing file and over none); both must exit 0
and the path must hold one complete take.

    .venv/bin/python bench/bench_ctrl_c.py --trials 24 --seconds 60 --concurrent 8
    .venv/bin/python bench/bench_ctrl_c.py --trials 20 --seconds 6 --concurrent 0 --between 0.05:1.5
    .venv/bin/python bench/bench_ctrl_c.py --commands gesture,export,render --trials 60 --seconds 20 --concurrent 0

Speech: the first LJSpeech clips (../shared/data/speech_english_ljspeech or
$RIGMIND_DATA) joined to SECONDS. Prints a summary and writes --json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RIGMIND = Path(sys.executable).parent / "rigmind"
TEMP_PREFIX = ".rigmind-"


def data_dir() -> Path:
    return Path(os.environ.get("RIGMIND_DATA", REPO.parent / "shared" / "data"))


def make_speech(out: Path, seconds: float) -> Path:
    """Join LJSpeech clips into one ``seconds``-long mono wav at their rate."""
    import numpy as np
    import soundfile as sf

    wavs = sorted((data_dir() / "speech_english_ljspeech" / "wavs").glob("*.wav"))
    if not wavs:
        raise FileNotFoundError(f"no LJSpeech wavs under {data_dir()}")
    parts, total, sr = [], 0, None
    for w in wavs:
        a, sr = sf.read(w, dtype="float32")
        parts.append(a)
        total += len(a)
        if total >= seconds * sr:
            break
    sf.write(out, np.concatenate(parts)[: int(seconds * sr)], sr)
    return out


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def check_take(path: Path) -> dict:
    """bench/check_take.py in a fresh process (it loads the file with bpy)."""
    r = subprocess.run([sys.executable, str(REPO / "bench" / "check_take.py"), str(path)],
                       capture_output=True, text=True, timeout=300)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    return json.loads(lines[-1]) if lines else {"ok": False, "frames": 0, "error": r.stderr[-300:]}


def leftovers(folder: Path) -> list:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(TEMP_PREFIX))


def gesture_cmd(speech: Path, rig: Path, out: Path) -> list:
    return [str(RIGMIND), "gesture", "--audio", str(speech), "--rig", str(rig), "--out", str(out)]


def render_ok(path: Path) -> dict:
    """A whole PNG (its IEND chunk at the end) or MP4 (a ``moov`` box)."""
    data = path.read_bytes()
    if path.suffix == ".png":
        ok = data.startswith(b"\x89PNG") and data[-12:-4] == b"\x00\x00\x00\x00IEND"
    else:
        ok = data[4:8] == b"ftyp" and b"moov" in data
    return {"ok": bool(ok), "frames": 0, "error": "" if ok else "incomplete container"}


def jobs(work: Path, rig: Path, speech: Path, commands, formats) -> list:
    """Each job: ``(label, argv, output, checker)``; ``checker(path) -> dict`` like check_take."""
    out = []
    if "gesture" in commands:
        for fmt in formats:
            path = work / f"take.{fmt}"
            out.append((f"gesture {fmt}", gesture_cmd(speech, rig, path), path, check_take))
    src = work / "source_take.blend"
    if "export" in commands:
        for fmt in ("fbx", "glb", "bvh"):
            path = work / f"exported.{fmt}"
            out.append((f"export {fmt}", [str(RIGMIND), "export", "--rig", str(src), "--out", str(path)], path,
                        check_take))
    if "render" in commands:
        base = [str(RIGMIND), "render", "--scene", str(src), "--engine", "CYCLES", "--samples", "4",
                "--resolution", "320x180"]
        out.append(("render png", base + ["--out", str(work / "still.png"), "--frame", "10"], work / "still.png",
                    render_ok))
        out.append(("render mp4", base + ["--out", str(work / "clip.mp4"), "--frames", "1:12"], work / "clip.mp4",
                    render_ok))
    return out


def prepare(work: Path, seconds: float, formats, commands=("gesture",), only=None) -> dict:
    """Mannequin rig, speech, and one full run per job (those labelled in
    ``only``, when given): the previous output each trial must keep, its hash
    and frame count, and the run time."""
    work.mkdir(parents=True, exist_ok=True)
    rig = work / "mannequin.blend"
    subprocess.run([str(RIGMIND), "mannequin", "--out", str(rig)], check=True, capture_output=True)
    speech = make_speech(work / "speech.wav", seconds)
    if "export" in commands or "render" in commands:
        subprocess.run(gesture_cmd(speech, rig, work / "source_take.blend"), check=True, capture_output=True)
    setup = {"rig": rig, "speech": speech, "formats": {}}
    for label, argv, out, checker in jobs(work, rig, speech, commands, formats):
        if only is not None and label not in only:
            continue
        t = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        took = time.perf_counter() - t
        ref = checker(out)
        assert ref["ok"], (label, ref)
        setup["formats"][label] = {"argv": argv, "out": out, "checker": checker, "seconds": took,
                                   "sha": sha256(out), "frames": ref["frames"]}
    return setup


def ctrl_c_trial(setup: dict, label: str, delay: float) -> dict:
    """One SIGINT at ``delay`` seconds into a run of job ``label`` over its previous output."""
    info = setup["formats"][label]
    out: Path = info["out"]
    command = info["argv"][1]
    p = subprocess.Popen(info["argv"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(delay)
    p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=600)
    rec = {"format": label, "delay_s": round(delay, 2), "rc": p.returncode, "leftovers": leftovers(out.parent),
           "traceback": "Traceback" in stderr, "stderr_tail": stderr.strip().splitlines()[-1:] if stderr.strip() else []}
    if not out.exists():
        rec.update(outcome="missing", ok=False)
    elif p.returncode == 130:
        intact = sha256(out) == info["sha"]
        one_line = stderr.strip().endswith(f"rigmind {command}: cancelled, nothing written")
        rec.update(outcome="cancelled", ok=intact and one_line, previous_intact=intact, one_line=one_line)
    elif p.returncode == 0:
        chk = info["checker"](out)
        rec.update(outcome="finished", ok=chk["ok"] and chk["frames"] == info["frames"], check=chk)
    else:
        rec.update(outcome=f"exit {p.returncode}", ok=False, check=info["checker"](out))
    if out.exists():  # what the next trial must keep
        info["sha"] = sha256(out)
    if rec["traceback"]:
        rec["stderr"] = stderr[-4000:]  # to see where it came from
    rec["ok"] = rec["ok"] and not rec["leftovers"] and not rec["traceback"]
    return rec


def concurrent_trial(src_blend: Path, out: Path, expected_frames: int, *, existing: bool) -> dict:
    """Two ``rigmind export`` processes writing ``out`` at the same time."""
    if not existing and out.exists():
        out.unlink()
    cmd = [str(RIGMIND), "export", "--rig", str(src_blend), "--out", str(out)]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    rcs = [p.wait(timeout=600) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    chk = check_take(out) if out.exists() else {"ok": False, "frames": 0, "error": "missing"}
    left = leftovers(out.parent)
    ok = rcs == [0, 0] and chk["ok"] and chk["frames"] == expected_frames and not left
    return {"format": out.suffix[1:], "existing": existing, "rcs": rcs, "check": chk, "leftovers": left, "ok": ok}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=24, help="Ctrl-C trials (formats in turn)")
    ap.add_argument("--seconds", type=float, default=60.0, help="speech length")
    ap.add_argument("--formats", default="bvh,fbx,blend", help="gesture's output formats")
    ap.add_argument("--commands", default="gesture", help="gesture,export,render: the commands interrupted, in turn")
    ap.add_argument("--concurrent", type=int, default=8, help="concurrent-writer trials")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--work", default="/tmp/rigmind_bench_ctrl_c")
    ap.add_argument("--json", default="/tmp/rigmind_bench_ctrl_c.json")
    ap.add_argument("--between", help="LO:HI seconds: SIGINTs evenly spaced over this span instead of at random "
                                      "within the run (the start-up: process start, imports, bpy loading)")
    args = ap.parse_args(argv)
    rnd = random.Random(args.seed)
    formats = args.formats.split(",")
    t0 = time.perf_counter()
    setup = prepare(Path(args.work), args.seconds, formats, args.commands.split(","))
    labels = list(setup["formats"])
    for fmt, info in setup["formats"].items():
        print(f"full run {fmt}: {info['seconds']:.1f} s, {info['frames']} frames", flush=True)
    trials = []
    for i in range(args.trials):
        fmt = labels[i % len(labels)]
        if args.between:
            lo, hi = (float(v) for v in args.between.split(":"))
            delay = lo + (hi - lo) * i / max(args.trials - 1, 1)
        else:
            delay = rnd.uniform(0.5, setup["formats"][fmt]["seconds"])
        rec = ctrl_c_trial(setup, fmt, delay)
        trials.append(rec)
        Path(args.json).write_text(json.dumps({"partial": True, "trials": trials}, indent=1, default=str))
        print(f"ctrl-c {i + 1:2d} {fmt:10s} at {delay:5.2f} s: {rec['outcome']:9s} ok={rec['ok']}"
              + (" (traceback)" if rec["traceback"] else ""), flush=True)
    conc = []
    blend = setup["formats"].get("gesture blend", {}).get("out")
    if blend is not None:
        for i in range(args.concurrent):
            out = Path(args.work) / ("concurrent.blend" if i % 2 == 0 else "concurrent.fbx")
            rec = concurrent_trial(blend, out, setup["formats"]["gesture blend"]["frames"], existing=(i // 2) % 2 == 1)
            conc.append(rec)
            print(f"concurrent {i + 1} {rec['format']:5s} existing={rec['existing']}: rcs={rec['rcs']} ok={rec['ok']}", flush=True)
    summary = {
        "ctrl_c_trials": len(trials), "ctrl_c_ok": sum(r["ok"] for r in trials),
        "cancelled": sum(r["outcome"] == "cancelled" for r in trials),
        "finished": sum(r["outcome"] == "finished" for r in trials),
        "not_ok": sum(not r["ok"] for r in trials),
        "exit_codes": sorted({r["rc"] for r in trials}),
        "concurrent_trials": len(conc), "concurrent_ok": sum(r["ok"] for r in conc),
        "wall_s": round(time.perf_counter() - t0, 1),
    }
    print(json.dumps(summary))
    Path(args.json).write_text(json.dumps({"summary": summary, "trials": trials, "concurrent": conc}, indent=1, default=str))
    return 0 if summary["ctrl_c_ok"] == len(trials) and summary["concurrent_ok"] == len(conc) else 1


if __name__ == "__main__":
    sys.exit(main())
