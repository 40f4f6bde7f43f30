"""The installed ``rigmind`` command, run as a user runs it (a subprocess)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO, data_file

RIGMIND = Path(sys.executable).parent / "rigmind"


def run(*args, timeout=180):
    env = dict(os.environ)
    return subprocess.run([str(RIGMIND), *map(str, args)], capture_output=True, text=True, timeout=timeout, env=env, cwd=REPO)


def test_help_lists_subcommands():
    r = run("--help")
    assert r.returncode == 0
    for cmd in ("walk", "gesture", "face", "retarget", "export", "render", "train", "eval", "mannequin", "info"):
        assert cmd in r.stdout


def test_face_methods_match_the_backend():
    from rigmind.backend.face.generate import METHODS
    from rigmind.cli import FACE_METHODS

    assert FACE_METHODS == METHODS


def test_python_dash_m_works():
    r = subprocess.run([sys.executable, "-m", "rigmind", "--version"], capture_output=True, text=True, cwd="/")
    assert r.returncode == 0 and "rigmind" in r.stdout


def test_info_robot_expressive():
    r = run("info", data_file("characters/RobotExpressive.glb"))
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "armatures: 1" in out
    for bone in ("Head", "Torso", "Shoulder.L", "LowerLeg.R", "UpperArm.L"):
        assert bone in out, f"bone {bone} missing from info output"
    for key in ("Angry", "Surprised", "Sad"):
        assert key in out


@pytest.mark.bpy  # a `rigmind` command that loads Blender, in a subprocess
@pytest.mark.parametrize(
    "make, expect",
    [
        (lambda d: d / "nope.glb", "no such file"),
        (lambda d: (d / "rig.txt").write_text("x") and d / "rig.txt", "unsupported file type"),
        (lambda d: (d / "broken.glb").write_bytes(b"glTF\x02\x00\x00\x00garbage") and d / "broken.glb", "could not be read"),
        (lambda d: (d / "broken.bvh").write_text("HIERARCHY\nROOT Hips\n{\n") and d / "broken.bvh", "could not be read"),
    ],
)
def test_info_bad_files_one_clear_line(tmp_path, make, expect):
    path = make(tmp_path)
    r = run("info", path)
    assert r.returncode == 2
    lines = [ln for ln in r.stderr.strip().splitlines() if ln.startswith("rigmind info:")]
    assert len(lines) == 1 and expect in lines[0], r.stderr
    assert "Traceback" not in r.stderr


def test_gesture_user_errors_say_so():
    r = run("gesture", "--audio", "x.wav", "--out", "x.glb")
    assert r.returncode == 2 and "needs --rig" in r.stderr
    r = run("gesture", "--audio", "x.wav", "--amount", "3", "--out", "x.npz")
    assert r.returncode == 2 and "--amount must be between 0 and 1" in r.stderr


@pytest.mark.bpy  # a `rigmind` command that loads Blender, in a subprocess
def test_mannequin_then_info_then_export(tmp_path):
    blend = tmp_path / "m.blend"
    r = run("mannequin", "--out", blend)
    assert r.returncode == 0, r.stderr
    assert blend.exists()
    r = run("info", blend)
    assert r.returncode == 0, r.stderr
    assert "jawOpen" in r.stdout and "LeftHandIndex1" in r.stdout
    for suffix in (".bvh", ".fbx", ".glb"):
        out = tmp_path / f"m{suffix}"
        r = run("export", "--rig", blend, "--out", out)
        assert r.returncode == 0, r.stderr
        assert out.stat().st_size > 1000


def test_retarget_cli_bvh_and_npz_onto_mannequin(tmp_path):
    blend = tmp_path / "m.blend"
    assert run("mannequin", "--out", blend).returncode == 0
    for src, out in (
        (data_file("bandai_namco_d2_locomotion/bvh/dataset-2_walk_normal_001.bvh.gz"), tmp_path / "walk.glb"),
        (data_file("beat2_speech_gesture_sample/2_scott_0_1_1.npz"), tmp_path / "talk.bvh"),
    ):
        r = run("retarget", "--src", src, "--rig", blend, "--out", out)
        assert r.returncode == 0, r.stderr
        assert "mapping 'rigmind_mannequin'" in r.stdout
        assert out.stat().st_size > 10_000


def test_retarget_cli_bad_preset_is_one_line(tmp_path):
    blend = tmp_path / "m.blend"
    assert run("mannequin", "--out", blend).returncode == 0
    src = data_file("bandai_namco_d2_locomotion/bvh/dataset-2_walk_normal_001.bvh.gz")
    r = run("retarget", "--src", src, "--rig", blend, "--map", "unreal_mannequin", "--out", tmp_path / "x.glb")
    assert r.returncode == 2
    assert "does not fit" in r.stderr and "Traceback" not in r.stderr


def test_info_prints_mapping():
    r = run("info", data_file("character_rpm_arkit/brunette-t.glb"))
    assert r.returncode == 0, r.stderr
    assert "humanoid mapping: preset 'ready_player_me'" in r.stdout
    assert "upperarm_l   -> LeftArm" in r.stdout


@pytest.mark.bpy  # a `rigmind` command that loads Blender, in a subprocess
def test_render_relative_output_path(tmp_path):
    """Blender resolves relative paths against the .blend: the CLI must not."""
    blend = tmp_path / "m.blend"
    assert run("mannequin", "--out", blend).returncode == 0
    work = tmp_path / "work"
    work.mkdir()
    r = subprocess.run([str(RIGMIND), "render", "--scene", str(blend), "--out", "still.png",
                        "--resolution", "64x48", "--samples", "1"], capture_output=True, text=True, cwd=work, timeout=180)
    assert r.returncode == 0, r.stderr
    assert (work / "still.png").stat().st_size > 100


@pytest.mark.parametrize("args,expect", [
    (["--path", "0,0;4,0", "--pause", "2"], "--pause '2' is not ARC,SECONDS"),
    (["--path", "0,0;4,0", "--pause", "2,-1"], "-1 s is negative"),
    (["--path", "0,0;4,0", "--pause", "5,1"], "pause at 5 m is not on the path, which is 4.00 m long"),
    (["--cycle", "--pause", "2,1"], "--pause needs --path"),
])
def test_walk_bad_pause_is_one_line(tmp_path, args, expect):
    """Refused before the rig is even loaded (the rig file does not exist)."""
    r = run("walk", "--rig", tmp_path / "missing.blend", "--out", tmp_path / "w.bvh", *args)
    assert r.returncode == 2 and expect in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.bpy  # a `rigmind` command that loads Blender, in a subprocess
def test_walk_path_from_a_file(tmp_path):
    """``rigmind walk --path @FILE``: a path from a text file (one point per
    line, a speed on one) is walked like the same text on the command line."""
    from rigmind.backend.bvh import read_bvh
    from rigmind.backend.locomotion import controllers

    if controllers.neural_weights() is None:
        pytest.skip("no committed locomotion weights in models/")
    blend = tmp_path / "m.blend"
    assert run("mannequin", "--out", blend).returncode == 0
    points = tmp_path / "path.txt"
    points.write_text("# an L\n0,0\n3,0,0.9\n3,2\n")
    outs = []
    for arg, name in ((f"@{points}", "file.bvh"), ("0,0;3,0,0.9;3,2", "text.bvh")):
        outs.append(tmp_path / name)
        r = run("walk", "--rig", blend, "--path", arg, "--controller", "neural", "--out", outs[-1])
        assert r.returncode == 0, r.stderr
    a, b = read_bvh(outs[0]), read_bvh(outs[1])
    assert a.num_frames == b.num_frames and np.allclose(a.root_positions, b.root_positions)
    assert np.allclose(a.world_positions()[-1, 0, :2], (3.0, 2.0), atol=0.1)


@pytest.mark.bpy  # a `rigmind` command that loads Blender, in a subprocess
def test_walk_path_with_a_pause(tmp_path):
    """``rigmind walk --path ... --pause 2,1``: the exported take stands
    about a second 2 m along the path, then walks on to the end."""
    from rigmind.backend.bvh import read_bvh
    from rigmind.backend.locomotion import controllers

    if controllers.neural_weights() is None:
        pytest.skip("no committed locomotion weights in models/")
    blend = tmp_path / "m.blend"
    assert run("mannequin", "--out", blend).returncode == 0
    out = tmp_path / "w.bvh"
    r = run("walk", "--rig", blend, "--path", "0,0;4,0", "--pause", "2,1", "--controller", "neural", "--out", out)
    assert r.returncode == 0, r.stderr
    m = read_bvh(out)
    hips = m.world_positions()[:, 0, :2]  # Blender X, Y (metres): the path runs along +X
    speed = np.linalg.norm(np.diff(hips, axis=0), axis=1) * m.fps
    still = (speed < 0.1) & (np.abs(hips[1:, 0] - 2.0) < 0.05)
    run_len = best = 0
    for v in still:
        run_len = run_len + 1 if v else 0
        best = max(best, run_len)
    assert best >= int(0.8 * m.fps), best / m.fps
    assert abs(hips[-1, 0] - 4.0) < 0.1
