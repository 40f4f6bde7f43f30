"""The demo (what `install.py demo` runs) end to end, as a user runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_demo_writes_and_prints_its_outputs(tmp_path, bpy_clean):
    out = tmp_path / "demo"
    r = subprocess.run(
        [str(Path(sys.executable).parent / "rigmind"), "demo", "--out", str(out)],
        capture_output=True, text=True, timeout=600,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    outputs = ["mannequin.blend", "mannequin.glb", "mannequin.fbx", "mannequin.bvh", "mannequin.png",
               "speech.wav", "gesture.blend", "gesture.glb", "gesture_emage.npz", "gesture.mp4"]
    if (Path(__file__).resolve().parents[1] / "models" / "locomotion.onnx").exists():
        outputs += ["walk_cycle.glb", "walk_along_path.blend", "walk_along_path.fbx", "walk_along_path.bvh",
                    "walk_along_path.mp4"]
    for name in outputs:
        path = out / name
        assert path.exists() and path.stat().st_size > 1000, name
        assert str(path.resolve()) in r.stdout, f"the demo must print where {name} is"

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
