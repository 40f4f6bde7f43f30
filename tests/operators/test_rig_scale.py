"""Rigs with a negative or non-uniform object scale are refused before any
work, with the fix (Object ▸ Apply ▸ Scale), in the CLI and the operators
(issue #17: a (-1,1,1) or (-1,-1,-1) armature was animated upside down)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import soundfile as sf

from conftest import REPO

RIGMIND = Path(sys.executable).parent / "rigmind"
BAD_SCALES = [(-1, 1, 1), (-1, -1, -1), (1, 2, 1)]


@pytest.fixture(scope="module")
def speech_wav(tmp_path_factory):
    from rigmind.backend.face.espeak import synthesize

    s = synthesize("Hello there, this is a test of the rig check.", "en-us", rate=150)
    path = tmp_path_factory.mktemp("speech") / "talk.wav"
    sf.write(path, s.samples, s.sample_rate, subtype="PCM_16")
    return path


@pytest.fixture(scope="module")
def scaled_rigs(tmp_path_factory):
    """The mannequin saved once per bad scale (and once at a uniform 0.5)."""
    import bpy

    from rigmind.operators import mannequin

    folder = tmp_path_factory.mktemp("rigs")
    out = {}
    for scale in [*BAD_SCALES, (0.5, 0.5, 0.5)]:
        bpy.ops.wm.read_factory_settings(use_empty=True)
        arm = mannequin.build_mannequin()["armature"]
        arm.scale = scale
        path = folder / f"scale_{'_'.join(str(v) for v in scale)}.blend"
        bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
        out[scale] = path
    bpy.ops.wm.read_factory_settings(use_empty=True)
    return out


def run(*args, timeout=300):
    return subprocess.run([str(RIGMIND), *map(str, args)], capture_output=True, text=True, timeout=timeout, cwd=REPO)


@pytest.mark.parametrize("scale", BAD_SCALES)
@pytest.mark.parametrize("command", ["gesture", "walk", "retarget"])
def test_cli_refuses_before_generating(scaled_rigs, speech_wav, tmp_path, scale, command):
    out = tmp_path / "take.bvh"
    out.write_text("previous take")
    args = {
        "gesture": ["gesture", "--audio", speech_wav, "--rig", scaled_rigs[scale], "--out", out],
        "walk": ["walk", "--cycle", "--rig", scaled_rigs[scale], "--out", out],
        "retarget": ["retarget", "--src", scaled_rigs[(0.5, 0.5, 0.5)], "--rig", scaled_rigs[scale], "--out", out],
    }[command]
    r = run(*args)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    kind = "negative" if scale[0] < 0 else "non-uniform"
    assert len(lines) == 1 and f"has a {kind} scale" in lines[0] and "Object ▸ Apply ▸ Scale" in lines[0], r.stderr
    assert r.stdout.strip() == "", "nothing may be generated before the refusal"
    assert out.read_text() == "previous take"


def test_uniform_scale_is_accepted(scaled_rigs, tmp_path):
    out = tmp_path / "walk.bvh"
    r = run("walk", "--cycle", "--seconds", "2", "--rig", scaled_rigs[(0.5, 0.5, 0.5)], "--out", out)
    assert r.returncode == 0, r.stderr
    assert out.stat().st_size > 1000


@pytest.mark.parametrize("scale", BAD_SCALES)
@pytest.mark.parametrize("op", ["generate_gesture", "bake_walk_cycle"])
def test_operators_report_the_fix_and_leave_the_rig(registered, speech_wav, scale, op):
    from rigmind.operators import mannequin

    bpy = registered
    arm = mannequin.build_mannequin()["armature"]
    arm.scale = scale
    s = bpy.context.scene.rigmind
    s.target_armature = arm
    s.audio_path = str(speech_wav)
    actions = len(bpy.data.actions)
    with pytest.raises(RuntimeError, match=r"Object ▸ Apply ▸ Scale"):
        getattr(bpy.ops.rigmind, op)()
    assert len(bpy.data.actions) == actions
    assert arm.animation_data is None or arm.animation_data.action is None


def test_applying_the_scale_as_told_fixes_it(registered):
    """The message's fix works: after Apply ▸ Scale the check passes (the
    scale is in the bones' rest, which RigMind reads)."""
    from rigmind.operators import mannequin, scene_io
    from rigmind.operators.rig_checks import check_object_scale

    bpy = registered
    arm = mannequin.build_mannequin()["armature"]
    arm.scale = (-1, -1, -1)
    with pytest.raises(scene_io.SceneError):
        check_object_scale(arm)
    for ob in bpy.context.view_layer.objects:
        ob.select_set(ob == arm)
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.transform_apply(location=False, rotation=False, scale=True)
    check_object_scale(arm)
    assert tuple(arm.scale) == (1, 1, 1)
