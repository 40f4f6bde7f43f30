"""The demo (what `install.py demo` runs) end to end, as a user runs it: its
outputs, a short terminal (Blender's per-frame lines in a log, the list of
outputs last), each scene with only its own sound."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO


def _mp4_tracks(path) -> list:
    """The MP4's track kinds (b"vide", b"soun") from its handler boxes."""
    return [m.group(1) for m in re.finditer(rb"hdlr.{8}(vide|soun)", Path(path).read_bytes(), re.S)]


@pytest.mark.slow  # 97 s in the full suite (--durations=0, 2 shared cores)
def test_demo_writes_and_prints_its_outputs(tmp_path, bpy_clean):
    out = tmp_path / "demo"
    r = subprocess.run(
        [str(Path(sys.executable).parent / "rigmind"), "demo", "--out", str(out)],
        capture_output=True, text=True, timeout=600,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    # What the terminal shows (stdout and stderr): at most 60 lines with the
    # one `install.py demo` adds ("environment ready"), none of Blender's
    # per-frame render lines, and the list of outputs last.
    lines = (r.stdout + r.stderr).splitlines()
    assert len(lines) + 1 <= 60, f"{len(lines)} lines:\n" + "\n".join(lines)
    assert not [ln for ln in lines if "Saved:" in ln or "append frame" in ln or "Fra:" in ln]
    log = (out / "demo_blender.log").read_text(errors="replace")
    assert "Saved:" in log                              # Blender's lines went to the log instead
    outputs = ["mannequin.blend", "mannequin.glb", "mannequin.fbx", "mannequin.bvh", "mannequin.png",
               "speech.wav", "gesture.blend", "gesture.glb", "gesture_emage.npz", "gesture.mp4"]
    if (REPO / "models" / "locomotion.onnx").exists():
        outputs += ["walk_cycle.glb", "walk_along_path.blend", "walk_along_path.fbx", "walk_along_path.bvh",
                    "walk_along_path.mp4"]
    for name in outputs:
        path = out / name
        assert path.exists() and path.stat().st_size > 1000, name
        assert str(path.resolve()) in r.stdout, f"the demo must print where {name} is"
    stdout = r.stdout.splitlines()
    listed = stdout[stdout.index("RigMind demo wrote:") + 1:]      # the last lines: one per output, the log last
    assert len(listed) == len(outputs) + 1 and all(ln.startswith("  ") for ln in listed), listed
    assert listed[-1].split()[-1] == str((out / "demo_blender.log").resolve())

    # The mannequin opens with armature, body and a head with the 52 ARKit keys.
    from rigmind.presets import arkit52_names

    bpy = bpy_clean
    bpy.ops.wm.open_mainfile(filepath=str(out / "mannequin.blend"))
    kinds = sorted(o.type for o in bpy.data.objects if o.type in ("ARMATURE", "MESH"))
    assert kinds.count("ARMATURE") == 1 and kinds.count("MESH") >= 2
    heads = [o for o in bpy.data.objects if o.type == "MESH" and o.data.shape_keys]
    assert len(heads) == 1
    names = [k.name for k in heads[0].data.shape_keys.key_blocks][1:]
    assert names == arkit52_names()

    # The main job: gesture + face on the mannequin, in sync with its sound strip.
    bpy.ops.wm.open_mainfile(filepath=str(out / "gesture.blend"))
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    assert arm.animation_data.action.name.startswith("RigMind Gesture")
    head = next(o for o in bpy.data.objects if o.type == "MESH" and o.data.shape_keys)
    assert head.data.shape_keys.animation_data.action.name.startswith("RigMind Face")
    sound = [st for st in bpy.context.scene.sequence_editor.strips_all if st.type == "SOUND"]
    assert len(sound) == 1 and sound[0].frame_start == arm.animation_data.action.frame_range[0]

    if "walk_along_path.blend" in outputs:
        bpy.ops.wm.open_mainfile(filepath=str(out / "walk_along_path.blend"))
        arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
        assert arm.animation_data.action.name.startswith("RigMind Walk Along Path")
        # The walk cycle was kept when the path walk was made.
        assert any(a.name.startswith("RigMind Walk · normal") for a in bpy.data.actions)
        # The walk has no sound of its own: the gesture's speech strip must not play under it.
        se = bpy.context.scene.sequence_editor
        assert se is None or not [st for st in se.strips_all if st.type == "SOUND"]
        head = next(o for o in bpy.data.objects if o.type == "MESH" and o.data.shape_keys)
        assert head.data.shape_keys.animation_data is None      # nor its lip-sync
        assert _mp4_tracks(out / "walk_along_path.mp4") == [b"vide"]
    assert _mp4_tracks(out / "gesture.mp4") == [b"vide", b"soun"]
