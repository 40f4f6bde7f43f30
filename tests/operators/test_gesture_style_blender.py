"""The gesture's style and style clip in the panel (#29), in real Blender:
RigMind ▸ Speech ▸ Style reaches the take (a sad take's hands move slower
than the model's own), and a style clip that is not a humanoid is one
ERROR line, not a traceback."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import call_as_panel, data_file

WAV = "speech_english_ljspeech/wavs/LJ001-0001.wav"


def _wrist_speed(bpy, arm, frames) -> float:
    """Mean speed (scene units per frame) of the right hand bone's head, from the evaluated pose."""
    bone = next(b for b in arm.pose.bones if "hand" in b.name.lower() and ("r" in b.name.lower().split(".")[-1]
                                                                           or "right" in b.name.lower()))
    pts = []
    for f in frames:
        bpy.context.scene.frame_set(f)
        pts.append(np.array(arm.matrix_world @ bone.head))
    return float(np.linalg.norm(np.diff(np.array(pts), axis=0), axis=1).mean())


def _take(bpy, style: str) -> float:
    from rigmind.operators import mannequin

    bpy.ops.wm.read_factory_settings(use_empty=True)
    parts = mannequin.build_mannequin()
    s = bpy.context.scene.rigmind
    s.target_armature, s.face_auto, s.face_mesh = parts["armature"], False, None
    s.audio_path = str(data_file(WAV))
    s.gesture_style = style
    assert call_as_panel("rigmind.generate_gesture") == {"FINISHED"}
    return _wrist_speed(bpy, parts["armature"], range(30, 240))


def test_the_panel_style_reaches_the_take(registered):
    bpy = registered
    own = _take(bpy, "none")
    sad = _take(bpy, "sad")
    assert own > 0 and sad < 0.9 * own, (own, sad)


def test_a_style_clip_that_is_not_a_humanoid_is_one_error_line(registered, tmp_path):
    bpy = registered
    from rigmind.operators import mannequin

    clip = tmp_path / "stick.bvh"
    clip.write_text("HIERARCHY\nROOT Stick\n{\n OFFSET 0 0 0\n CHANNELS 6 Xposition Yposition Zposition "
                    "Zrotation Xrotation Yrotation\n End Site\n {\n  OFFSET 0 1 0\n }\n}\nMOTION\nFrames: 2\n"
                    "Frame Time: 0.033333\n0 0 0 0 0 0\n0 0 0 0 0 10\n")
    parts = mannequin.build_mannequin()
    s = bpy.context.scene.rigmind
    s.target_armature, s.face_auto, s.face_mesh = parts["armature"], False, None
    s.audio_path = str(data_file(WAV))
    s.gesture_style_clip = str(clip)
    with pytest.raises(RuntimeError) as err:
        call_as_panel("rigmind.generate_gesture")
    text = str(err.value)
    assert "Traceback" not in text and "not a humanoid" in text
    assert parts["armature"].animation_data is None or parts["armature"].animation_data.action is None
