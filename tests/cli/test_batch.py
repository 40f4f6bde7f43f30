"""``rigmind batch``: many takes per command, workers that load once, outputs
that are the same whatever worker made them, resumable, one bad input never
stops the rest. Real bpy, real models, real worker processes; the speech is
synthesised with eSpeak NG (no external asset)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from rigmind import batch

RIGMIND = Path(sys.executable).with_name("rigmind")

SENTENCES = [
    "Hello there.", "We ship on Monday.", "Look at this.", "Nobody expected that.",
    "It works now.", "Turn left here.", "Thank you all.", "Let me explain.",
]


def _rigmind(*args, timeout=600, **kw):
    return subprocess.run([str(RIGMIND), *map(str, args)], capture_output=True, text=True, timeout=timeout, **kw)


@pytest.fixture(scope="module")
def speech_dir(tmp_path_factory):
    """Eight short synthesised utterances, one empty file, one corrupt file."""
    import soundfile as sf

    from rigmind.backend.face.espeak import synthesize

    d = tmp_path_factory.mktemp("speech")
    for k, text in enumerate(SENTENCES):
        s = synthesize(text, "en-us", rate=170)
        sf.write(d / f"line{k:02d}.wav", s.samples, s.sample_rate)
    (d / "empty.wav").write_bytes(b"")
    (d / "corrupt.wav").write_bytes(np.random.default_rng(0).bytes(4000))
    return d


@pytest.fixture(scope="module")
def mannequin_blend(tmp_path_factory, blender_in_subprocess):
    out = tmp_path_factory.mktemp("rig") / "mannequin.blend"
    r = _rigmind("mannequin", "--out", out)
    assert r.returncode == 0, r.stderr
    return out


# --- pure parts -----------------------------------------------------------------


def test_seed_depends_on_name_only():
    assert batch.derive_seed("line01") == batch.derive_seed("line01")
    assert batch.derive_seed("line01") != batch.derive_seed("line02")
    assert batch.derive_seed("line01", 1) != batch.derive_seed("line01", 0)
    assert 0 <= batch.derive_seed("x") < 2 ** 31


def test_walk_manifest(tmp_path):
    m = tmp_path / "paths.json"
    m.write_text(json.dumps([{"name": "a", "path": "0,0;3,0"},
                             {"name": "b", "path": [[0, 0], [2, 1]], "style": "elderly", "speed": 1.0}]))
    items = batch.walk_items(m)
    assert [i.name for i in items] == ["a", "b"]
    assert items[1].params == {"path": "0,0;2,1", "style": "elderly", "speed": 1.0}


@pytest.mark.parametrize("content, words", [
    ("not json", "not a JSON file"),
    ("[]", "non-empty JSON list"),
    ('[{"path": "0,0;1,0"}]', "'name'"),
    ('[{"name": "../x", "path": "0,0;1,0"}]', "'name'"),
    ('[{"name": "a"}]', "'path' is missing"),
    ('[{"name": "a", "path": "0,0;1,0"}, {"name": "a", "path": "0,0;1,0"}]', "used twice"),
    ('[{"name": "a", "path": "0,0;1,0", "sped": 2}]', "unknown keys sped"),
    ('[{"name": "a", "path": "0,0;1,0", "speed": "fast"}]', "'speed' has the wrong type"),
    # Style, gait and path are checked as `rigmind walk` checks them, naming the entry.
    ('[{"name": "a", "path": "0,0;1,0"}, {"name": "b", "path": "0,0;1,0", "gait": "hop"}]',
     r"entry 1 \('b'\): unknown gait 'hop'; use one of walk, run"),
    ('[{"name": "a", "path": "0,0;1,0", "style": "zombie"}]', r"entry 0 \('a'\): unknown style 'zombie'; use one of active"),
    ('[{"name": "a", "path": "0,0;1,0", "style": 3}]', "'style' has the wrong type"),
    ('[{"name": "nowhere", "path": "0,0"}]', r"entry 0 \('nowhere'\): 'path' '0,0': needs at least two distinct points"),
    ('[{"name": "a", "path": "0,0;x,1"}]', r"'path' '0,0;x,1': point 2 'x,1' is not x,y or x,y,speed"),
    ('[{"name": "a", "path": "0,0;3,0,99"}]', r"point 2 '3,0,99': speed must be between 0\.1 and 8 m/s"),
    ('[{"name": "a", "path": [[0, 0], [20000, 0]]}]', "keep its points within"),
    ('[{"name": "a", "path": "0,0;900,0", "speed": 0.1}]', "takes are limited to 3600 s"),
    ('[{"name": "a", "path": "0,0;1,0", "actions": ["wave"]}]', "unknown keys actions"),
])
def test_bad_walk_manifest(tmp_path, content, words):
    m = tmp_path / "paths.json"
    m.write_text(content)
    with pytest.raises(batch.BatchError, match=words):
        batch.walk_items(m)


def test_walk_manifest_takes_names_as_the_walk_command(tmp_path):
    """``rigmind walk --style/--gait`` take any case; so does the manifest."""
    m = tmp_path / "paths.json"
    m.write_text(json.dumps([{"name": "a", "path": "0,0;3,0,1.2;3,3", "style": "Elderly", "gait": "RUN"}]))
    assert batch.walk_items(m)[0].params == {"path": "0,0;3,0,1.2;3,3", "style": "elderly", "gait": "run"}


def test_bad_walk_manifest_is_refused_before_any_take(tmp_path):
    """One line naming the entry, exit 2, and nothing made: not even the output folder."""
    m = tmp_path / "paths.json"
    m.write_text(json.dumps([{"name": "fine", "path": "0,0;3,0"}, {"name": "odd", "path": "0,0;3,0", "gait": "hop"}]))
    rig = tmp_path / "rig.blend"
    rig.write_bytes(b"not read: the manifest is refused first")
    r = _rigmind("batch", "walk", "--paths", m, "--rig", rig, "--out-dir", tmp_path / "o", timeout=120)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines() == [f"rigmind batch: --paths {m}: entry 1 ('odd'): unknown gait 'hop'; "
                                             "use one of walk, run"]
    assert not (tmp_path / "o").exists()


def test_audio_dir_errors(tmp_path):
    with pytest.raises(batch.BatchError, match="not a folder"):
        batch.audio_items(tmp_path / "nope")
    with pytest.raises(batch.BatchError, match="no speech files"):
        batch.audio_items(tmp_path)
    (tmp_path / "a.wav").write_bytes(b"x")
    (tmp_path / "a.flac").write_bytes(b"x")
    with pytest.raises(batch.BatchError, match="would both write 'a'"):
        batch.audio_items(tmp_path)


def test_write_atomic_keeps_old_file_on_failure(tmp_path):
    target = tmp_path / "take.bvh"
    target.write_bytes(b"old")
    with pytest.raises(TypeError):
        batch.write_atomic(target, object())  # the write fails half-way
    assert target.read_bytes() == b"old"
    assert not list(tmp_path.glob("*.partial"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["take.bvh"]  # no temporary file either
    batch.write_atomic(target, b"new")
    assert target.read_bytes() == b"new"


def test_progress_plain_lines(tmp_path):
    import io

    s = io.StringIO()
    p = batch.Progress(2, s, tty=False)
    p.update(batch.ItemReport("a", "a.wav", "a.fbx", status="done", seconds=1.0))
    p.update(batch.ItemReport("b", "b.wav", "b.fbx", status="failed", error="bad audio"))
    assert s.getvalue().splitlines() == ["[1/2] a: done (1.0 s)", "[2/2] b: FAILED: bad audio (0.0 s)"]
    t = io.StringIO()
    q = batch.Progress(4, t, tty=True)
    q.update(batch.ItemReport("a", "a.wav", "a.fbx", status="done"))
    assert "1/4" in t.getvalue() and "takes/min" in t.getvalue() and "ETA" in t.getvalue()


@pytest.mark.parametrize("args, words", [
    (["batch", "gesture", "--audio-dir", "/nonexistent", "--out-dir", "{tmp}/o", "--format", "npz"], "not a folder"),
    (["batch", "gesture", "--audio-dir", "{tmp}", "--out-dir", "{tmp}/o"], "needs --rig RIG"),
    (["batch", "gesture", "--audio-dir", "{tmp}", "--out-dir", "{tmp}/o", "--format", "xyz"], "--format xyz"),
    (["batch", "gesture", "--audio-dir", "{tmp}", "--out-dir", "{tmp}/o", "--format", "npz", "--amount", "3"], "--amount"),
    (["batch", "walk", "--paths", "{tmp}/none.json", "--rig", "{tmp}/none.blend", "--out-dir", "{tmp}/o"], "rig file not found"),
    (["gesture", "--audio-dir", "{tmp}", "--out", "{tmp}/x.fbx"], "--audio-dir goes with --out-dir"),
])
def test_bad_arguments_exit_2(tmp_path, args, words):
    (tmp_path / "a.wav").write_bytes(b"RIFF")
    r = _rigmind(*[a.replace("{tmp}", str(tmp_path)) for a in args], timeout=120)
    assert r.returncode == 2, r.stderr
    assert words in r.stderr
    assert "Traceback" not in r.stderr


# --- real batches ---------------------------------------------------------------


@pytest.fixture(scope="module")
def first_batch(speech_dir, mannequin_blend, tmp_path_factory):
    out = tmp_path_factory.mktemp("batch2")
    r = _rigmind("batch", "gesture", "--audio-dir", speech_dir, "--rig", mannequin_blend, "--face", "auto",
                 "--format", "bvh", "--workers", "2", "--out-dir", out)
    return out, r


def test_batch_reports_bad_inputs_and_goes_on(first_batch):
    out, r = first_batch
    assert r.returncode == 1, r.stderr
    assert sorted(p.name for p in out.glob("*.bvh")) == [f"line{k:02d}.bvh" for k in range(8)]
    report = json.loads((out / "batch_report.json").read_text())
    status = {i["name"]: i for i in report["items"]}
    assert report["counts"] == {"done": 8, "skipped": 0, "failed": 2, "cancelled": 0}
    assert "empty" in status["empty"]["error"]
    assert "corrupt or not audio" in status["corrupt"]["error"]
    assert all(status[f"line{k:02d}"]["seconds"] > 0 for k in range(8))
    # Both bad inputs appear in the summary table with their reason.
    assert "empty" in r.stdout and "corrupt" in r.stdout and "8 done" in r.stdout
    assert len(report["worker_stats"]) == 2 and all(s["load_s"] > 0 for s in report["worker_stats"])
    for p in out.glob("*.bvh"):
        text = p.read_text()
        frames = int(text.split("Frames:")[1].split()[0])
        motion = text.split("Frame Time:")[1].strip().splitlines()[1:]
        assert frames > 10 and len(motion) == frames


def test_rerun_skips_finished_and_retries_failed(first_batch, speech_dir, mannequin_blend):
    out, _ = first_batch
    before = {p.name: p.stat().st_mtime_ns for p in out.glob("*.bvh")}
    r = _rigmind("batch", "gesture", "--audio-dir", speech_dir, "--rig", mannequin_blend, "--face", "auto",
                 "--format", "bvh", "--workers", "2", "--out-dir", out)
    assert r.returncode == 1
    report = json.loads((out / "batch_report.json").read_text())
    assert report["counts"] == {"done": 0, "skipped": 8, "failed": 2, "cancelled": 0}
    assert {p.name: p.stat().st_mtime_ns for p in out.glob("*.bvh")} == before


def test_same_takes_whatever_the_worker_count(first_batch, speech_dir, mannequin_blend, tmp_path):
    """One worker makes every take; two workers split them: byte-identical files."""
    out2, _ = first_batch
    out1 = tmp_path / "one"
    r = _rigmind("batch", "gesture", "--audio-dir", speech_dir, "--rig", mannequin_blend, "--face", "auto",
                 "--format", "bvh", "--workers", "1", "--out-dir", out1)
    assert r.returncode == 1
    for k in range(8):
        name = f"line{k:02d}.bvh"
        assert (out1 / name).read_bytes() == (out2 / name).read_bytes(), name


@pytest.mark.slow  # 25 s in the full suite (--durations=0, 2 shared cores)
def test_interrupted_batch_leaves_no_partial_file(speech_dir, mannequin_blend, first_batch, tmp_path):
    reference, _ = first_batch
    out = tmp_path / "interrupted"
    proc = subprocess.Popen([str(RIGMIND), "batch", "gesture", "--audio-dir", str(speech_dir), "--rig",
                             str(mannequin_blend), "--face", "auto", "--format", "bvh", "--workers", "2",
                             "--out-dir", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not list(out.glob("line*.bvh")):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "cancelled" in err and "Traceback" not in err
    finals = list(out.glob("line*.bvh"))
    assert finals and len(finals) < 8
    for p in finals:  # whatever has a final name is the whole take
        assert p.read_bytes() == (reference / p.name).read_bytes()
    assert not list(out.glob("*.partial"))
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no hidden temporary file either
    report = json.loads((out / "batch_report.json").read_text())
    assert report["interrupted"] and report["counts"]["cancelled"] > 0
    # A rerun finishes the rest and keeps what was done.
    r = _rigmind("batch", "gesture", "--audio-dir", speech_dir, "--rig", mannequin_blend, "--face", "auto",
                 "--format", "bvh", "--workers", "2", "--out-dir", out)
    assert r.returncode == 1
    assert json.loads((out / "batch_report.json").read_text())["counts"]["skipped"] == len(finals)
    assert len(list(out.glob("line*.bvh"))) == 8


def test_gesture_shorthand_and_face_batch(speech_dir, tmp_path):
    sub = tmp_path / "two"
    sub.mkdir()
    for k in (0, 1):
        (sub / f"line{k:02d}.wav").write_bytes((speech_dir / f"line{k:02d}.wav").read_bytes())
    r = _rigmind("gesture", "--audio-dir", sub, "--out-dir", tmp_path / "npz", "--format", "NPZ", "--workers", "1")
    assert r.returncode == 0, r.stderr
    for k in (0, 1):
        z = np.load(tmp_path / "npz" / f"line{k:02d}.npz")
        assert z["poses"].shape[1] == 165 and np.isfinite(z["poses"]).all()
    r = _rigmind("batch", "face", "--audio-dir", sub, "--out-dir", tmp_path / "csv", "--workers", "1")
    assert r.returncode == 0, r.stderr
    header = (tmp_path / "csv" / "line00.csv").read_text().splitlines()[0]
    assert "JawOpen" in header or "jawOpen" in header


def test_walk_batch(mannequin_blend, tmp_path):
    """(A path that is no path, "0,0", is refused with the manifest:
    test_bad_walk_manifest.)"""
    m = tmp_path / "paths.json"
    m.write_text(json.dumps([
        {"name": "straight", "path": "0,0;3,0"},
        {"name": "corner", "path": [[0, 0], [2, 0], [2, 2]], "style": "elderly", "speed": 1.0},
    ]))
    r = _rigmind("batch", "walk", "--paths", m, "--rig", mannequin_blend, "--out-dir", tmp_path / "o",
                 "--format", "bvh", "--workers", "1")
    assert r.returncode == 0, r.stderr
    report = json.loads((tmp_path / "o" / "batch_report.json").read_text())
    status = {i["name"]: i for i in report["items"]}
    assert status["straight"]["status"] == status["corner"]["status"] == "done"
    assert (tmp_path / "o" / "straight.bvh").stat().st_size > 1000


def test_ray_engine_same_takes(first_batch, speech_dir, mannequin_blend, tmp_path):
    """The Ray engine runs the same worker code on a local Ray instance (2 CPUs)
    and gives byte-identical takes."""
    try:
        import ray  # noqa: F401
    except ImportError:
        pytest.skip("Ray is not installed (optional: python3 install.py setup --with ray)")
    reference, _ = first_batch
    out = tmp_path / "ray"
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
    r = _rigmind("batch", "gesture", "--audio-dir", speech_dir, "--rig", mannequin_blend, "--face", "auto",
                 "--format", "bvh", "--engine", "ray", "--workers", "2", "--out-dir", out, env=env, timeout=900)
    assert r.returncode == 1, r.stderr[-3000:]
    report = json.loads((out / "batch_report.json").read_text())
    assert report["counts"] == {"done": 8, "skipped": 0, "failed": 2, "cancelled": 0}
    for k in range(8):
        name = f"line{k:02d}.bvh"
        assert (out / name).read_bytes() == (reference / name).read_bytes(), name


# --- stopping: Ctrl-C twice, SIGTERM --------------------------------------------


def test_stop_signals_raise_once_and_hold_a_write():
    """The first SIGINT or SIGTERM is one KeyboardInterrupt; later ones are
    only noted; inside held() even the first waits for the body's end."""
    from rigmind.backend.stop_signals import StopSignals

    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    stop = StopSignals().install()
    try:
        with pytest.raises(KeyboardInterrupt):
            with stop.held():
                os.kill(os.getpid(), signal.SIGTERM)
                wrote = "whole file"            # reached: the write is not cut
        assert wrote == "whole file"
        os.kill(os.getpid(), signal.SIGINT)     # after the first: noted, not raised
        stop.disarm()
        os.kill(os.getpid(), signal.SIGINT)
        assert stop.received == [signal.SIGTERM, signal.SIGINT, signal.SIGINT]
    finally:
        stop.restore()
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


def test_stopped_line_says_what_is_on_disk(tmp_path):
    report = {"counts": {"done": 2, "skipped": 1, "failed": 1, "cancelled": 4}, "items": [{}] * 8}
    line = batch.stopped_line(report, tmp_path, tmp_path / batch.REPORT_NAME)
    assert line == (f"cancelled: 3 of 8 takes kept in {tmp_path.resolve()} (1 failed), "
                    f"report written to {(tmp_path / batch.REPORT_NAME).resolve()}")
    line = batch.stopped_line(report, tmp_path, None, OSError(28, "No space left on device"))
    assert line.endswith("the report could not be written (No space left on device)")


def _descendants(pid: int) -> dict:
    """{pid: start time} of every process under ``pid`` now (a /proc scan;
    the start time tells a reused pid from the same process)."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()   # after "pid (comm) "
        parents[int(entry.name)] = (int(fields[1]), fields[19])
    found, frontier = {}, [pid]
    while frontier:
        p = frontier.pop()
        for child, (ppid, start) in parents.items():
            if ppid == p and child not in found:
                found[child] = start
                frontier.append(child)
    return found


def _alive(pid: int, start: str) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    fields = stat[stat.rindex(")") + 2:].split()
    return fields[19] == start and fields[0] != "Z"


def _stop_batch_midway(speech_dir, mannequin_blend, out, signals):
    """Start a real 2-worker batch, wait (polling the folder) until a take is
    on disk and the workers are seen, send ``signals`` one right after the
    other, and return (process, stderr, the workers seen)."""
    proc = subprocess.Popen([str(RIGMIND), "batch", "gesture", "--audio-dir", str(speech_dir), "--rig",
                             str(mannequin_blend), "--face", "auto", "--format", "bvh", "--workers", "2",
                             "--out-dir", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    workers = {}
    deadline = time.monotonic() + 400
    while time.monotonic() < deadline and proc.poll() is None and not list(out.glob("line*.bvh")):
        workers.update(_descendants(proc.pid))
        time.sleep(0.05)
    workers.update(_descendants(proc.pid))
    assert proc.poll() is None, "the batch ended before it could be stopped"
    assert list(out.glob("line*.bvh")), "no take finished in time"
    for s in signals:
        proc.send_signal(s)
        time.sleep(0.02)
    _, err = proc.communicate(timeout=300)
    return proc, err, workers


def _check_stopped(proc, err, workers, out):
    import re

    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    m = re.fullmatch(r"rigmind batch: cancelled: (\d+) of 10 takes kept in (.+?)( \(\d+ failed\))?, "
                     r"report written to (.+)", last)
    assert m, last
    assert Path(m.group(2)) == out.resolve() and Path(m.group(4)) == (out / batch.REPORT_NAME).resolve()
    report = json.loads((out / batch.REPORT_NAME).read_text())
    assert report["interrupted"]
    finals = sorted(p.stem for p in out.glob("line*.bvh"))
    status = {i["name"]: i["status"] for i in report["items"]}
    assert finals and all(status[name] == "done" for name in finals), (finals, status)
    assert int(m.group(1)) == len(finals) == report["counts"]["done"]
    assert report["counts"]["cancelled"] > 0
    assert not list(out.glob("*.partial")) and not [p for p in out.iterdir() if p.name.startswith(".")]
    # The worker processes (and multiprocessing's helpers) end with the batch.
    assert len(workers) >= 2, workers
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and any(_alive(p, s) for p, s in workers.items()):
        time.sleep(0.2)
    assert not [p for p, s in workers.items() if _alive(p, s)]


def test_two_ctrl_c_keep_the_finished_takes_and_the_report(speech_dir, mannequin_blend, tmp_path):
    out = tmp_path / "twice"
    proc, err, workers = _stop_batch_midway(speech_dir, mannequin_blend, out, [signal.SIGINT, signal.SIGINT])
    _check_stopped(proc, err, workers, out)


def test_sigterm_stops_the_batch_like_ctrl_c(speech_dir, mannequin_blend, tmp_path):
    out = tmp_path / "term"
    proc, err, workers = _stop_batch_midway(speech_dir, mannequin_blend, out, [signal.SIGTERM, signal.SIGTERM])
    _check_stopped(proc, err, workers, out)
