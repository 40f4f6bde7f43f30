"""Numeric options outside their documented range, and walks too big to
bound, are refused up front with one line naming the limit (issue #17)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO

from rigmind.backend import limits
from rigmind.backend.requests.walk import ControllerChoice, WalkPathRequest

RIGMIND = Path(sys.executable).parent / "rigmind"


def run(*args, timeout=120):
    return subprocess.run([str(RIGMIND), *map(str, args)], capture_output=True, text=True, timeout=timeout, cwd=REPO)


@pytest.mark.parametrize("name", sorted(limits.RANGES))
def test_every_range_accepts_its_ends_and_refuses_beyond(name):
    lo, hi, _ = limits.RANGES[name]
    assert limits.check(name, lo) == lo and limits.check(name, hi) == hi
    step = 1 if isinstance(lo, int) else 1e-6 * max(1.0, abs(hi))
    for bad in (lo - step, hi + step, float("nan"), float("inf")):
        with pytest.raises(limits.OutOfRange, match="must be between"):
            limits.check(name, bad)


def test_an_integer_past_a_float_is_out_of_range_not_an_overflow():
    # The fuzz run's (bench/fuzz_inputs.py, batch manifest): "speed": 1e400 written as 400 digits
    # raised OverflowError out of math.isfinite.
    for name in ("speed", "seed"):
        for big in (10**400, -(10**400)):
            with pytest.raises(limits.OutOfRange, match="got a 401-digit number"):
                limits.check(name, big)
    assert limits.check("seed", 2**32 - 1) == 2**32 - 1


def test_path_limits():
    assert limits.check_path([[0, 0], [3, 0], [3, 3]], 1.3) == pytest.approx(6.0)
    with pytest.raises(limits.OutOfRange, match="up to 1000 m"):
        limits.check_path([[0, 0], [600, 0], [0, 0]], 1.3)
    with pytest.raises(limits.OutOfRange, match="from the origin"):
        limits.check_path([[1e9, 0], [1e9, 1]], 1.3)
    with pytest.raises(limits.OutOfRange, match="points"):
        limits.check_path(np.zeros((limits.PATH_MAX_POINTS + 1, 2)), 1.3)
    with pytest.raises(limits.OutOfRange, match="limited to 3600 s"):
        limits.check_path([[0, 0], [900, 0]], 0.2)
    # a cap on the take makes a slow long walk bounded
    assert limits.check_path([[0, 0], [900, 0]], 0.2, max_seconds=60) == pytest.approx(900)


# The cases issue #17 found, each with the exact line the user now gets.
CLI_CASES = [
    (["walk", "--cycle", "--seconds", "1e9"], "--seconds must be between 1 and 60 s, got 1e+09"),
    (["walk", "--path", "0,0;1e9,0"], "the path reaches 1e+09 m from the origin"),
    (["walk", "--path", "0,0;1e6,0", "--seconds", "5"], "the path reaches 1e+06 m from the origin"),
    (["walk", "--path", "0,0;600,0;0,0"], "the path is 1200 m long; RigMind walks paths up to 1000 m (1 km)"),
    (["walk", "--cycle", "--speed", "100"], "--speed must be between 0.1 and 8 m/s, got 100"),
    (["walk", "--cycle", "--speed", "nan"], "--speed must be between 0.1 and 8 m/s, got nan"),
    (["face", "--fps", "0"], "--fps must be between 1 and 240 frames per second, got 0"),
    (["face", "--fps", "-30"], "--fps must be between 1 and 240 frames per second, got -30"),
    (["face", "--smile", "2"], "--smile must be between 0 and 1, got 2"),
    (["gesture", "--amount", "-0.5"], "--amount must be between 0 and 1, got -0.5"),
    (["gesture", "--start-frame", "-5"], "--start-frame must be between 0 and 1048574, got -5"),
    (["gesture", "--seed", "-1"], "--seed must be between 0 and 4294967295, got -1"),
    (["walk", "--cycle", "--seed", "9" * 400], "--seed must be between 0 and 4294967295, got a 400-digit number"),
    (["render", "--resolution", "0x0"], "--resolution width must be between 16 and 8192 pixels a side, got 0"),
    (["render", "--resolution", "640x99999"], "--resolution height must be between 16 and 8192 pixels a side, got 99999"),
    (["render", "--frames", "10:1"], "--frames 10:1 ends before it starts"),
    (["render", "--frames=-3:10"], "--frames start must be between 0 and 1048574, got -3"),
    (["render", "--samples", "0"], "--samples must be between 1 and 4096 samples, got 0"),
    (["render", "--frame", "-1"], "--frame must be between 0 and 1048574, got -1"),
]


@pytest.mark.parametrize("args,expect", CLI_CASES, ids=[" ".join(a) for a, _ in CLI_CASES])
def test_cli_refuses_out_of_range_in_one_line(tmp_path, args, expect):
    cmd = args[0]
    rest = {
        "walk": ["--rig", tmp_path / "missing.blend", "--out", tmp_path / "w.bvh"],
        "face": ["--audio", tmp_path / "missing.wav", "--out", tmp_path / "f.json"],
        "gesture": ["--audio", tmp_path / "missing.wav", "--out", tmp_path / "g.npz"],
        "render": ["--scene", tmp_path / "missing.blend", "--out", tmp_path / ("r.mp4" if "--frames" in args else "r.png")],
    }[cmd]
    r = run(*args, *rest)  # its timeout is the hang guard; no timing is asserted
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"rigmind {cmd}: ") and expect in lines[0], r.stderr
    # refused before the (missing) input is even opened, and nothing written
    assert "missing" not in lines[0] and list(tmp_path.iterdir()) == []


def test_walk_path_operator_refuses_a_huge_curve(bpy_clean):
    """The add-on's Walk Along Path goes through the same limit (scene level)."""
    import rigmind
    from rigmind.operators import locomotion_scene
    from rigmind.operators import mannequin

    rigmind.register()
    try:
        arm = mannequin.build_mannequin()["armature"]
        with pytest.raises(limits.OutOfRange, match="from the origin"):
            locomotion_scene.walk_along_path(arm, WalkPathRequest(points=np.array([[0.0, 0.0], [1e9, 0.0]]), controller=ControllerChoice(kind="auto")))
        assert arm.animation_data is None or arm.animation_data.action is None
    finally:
        rigmind.unregister()
