"""The face on a real split-mesh character: the Ready Player Me avatar keeps
head, teeth and eyes as separate meshes, each with the ARKit keys; all of
them must move together (teeth that stay shut while the jaw opens look
broken)."""

from __future__ import annotations

import numpy as np

from support import rig_factory
from conftest import data_file
from rigmind.backend.requests.face import FaceRequest


def test_rpm_head_teeth_and_eyes_move_together(bpy_clean):
    import bpy

    from rigmind.operators import face_scene

    rig_factory.rpm_avatar()
    head = bpy.data.objects["Wolf3D_Head"]
    wav = data_file("speech_english_ljspeech/wavs/LJ001-0002.wav")
    res = face_scene.generate_face_on_mesh(head, FaceRequest(audio_path=wav, add_sound=False))
    assert len(res.written) == 52 and not res.missing
    assert set(res.companions) >= {"Wolf3D_Teeth", "EyeLeft", "EyeRight"}
    teeth = bpy.data.objects["Wolf3D_Teeth"]
    scene = bpy.context.scene
    opened = []
    for f in range(1, int(res.action.frame_range[1]), 3):
        scene.frame_set(f)
        opened.append((head.data.shape_keys.key_blocks["jawOpen"].value,
                       teeth.data.shape_keys.key_blocks["jawOpen"].value))
    opened = np.array(opened)
    assert opened[:, 0].max() > 0.1
    assert np.allclose(opened[:, 0], opened[:, 1], atol=1e-6)


def test_companions_with_the_heads_keys_share_its_action(bpy_clean):
    """The teeth and eyes with the head's shape keys play the head's action
    (one slot, one set of keys: Blender holds ~72 bytes a key, four copies
    of a 30-minute take were 0.65 GB) and evaluate to the same value on
    every key and frame; a companion whose keys differ gets its own action."""
    import bpy

    from rigmind.operators import face_scene

    rig_factory.rpm_avatar()
    head, eye = bpy.data.objects["Wolf3D_Head"], bpy.data.objects["EyeLeft"]
    eye.shape_key_remove(eye.data.shape_keys.key_blocks["mouthSmileLeft"])
    wav = data_file("speech_english_ljspeech/wavs/LJ001-0002.wav")
    res = face_scene.generate_face_on_mesh(head, FaceRequest(audio_path=wav, add_sound=False))
    assert set(res.companions) >= {"Wolf3D_Teeth", "EyeLeft", "EyeRight"}
    shared = [bpy.data.objects[n] for n in ("Wolf3D_Teeth", "EyeRight")]
    for ob in shared:
        ad = ob.data.shape_keys.animation_data
        assert ad.action == res.action and ad.action_slot == head.data.shape_keys.animation_data.action_slot
    assert eye.data.shape_keys.animation_data.action not in (None, res.action)
    names = [k.name for k in head.data.shape_keys.key_blocks]
    scene = bpy.context.scene
    for f in range(1, int(res.action.frame_range[1]), 7):
        scene.frame_set(f)
        want = [head.data.shape_keys.key_blocks[n].value for n in names]
        for ob in shared:
            assert [ob.data.shape_keys.key_blocks[n].value for n in names] == want
        kb = eye.data.shape_keys.key_blocks
        assert [kb[n].value for n in names if n in kb] == [v for n, v in zip(names, want) if n in kb]
