"""The scene's emotion weights (``scene.rigmind.emotion_<name>``, six
animatable 0..1 properties) → an ``EmotionTimeline`` for the take.

Keyed weights are read from the scene's action (its slot's channelbag, the
Blender 5 layered-action API) and sampled at every scene frame of the take;
an unkeyed weight is its value, constant. Times are seconds from the take's
first frame, so the face and the body follow the keys where they lie on the
timeline.
"""

from __future__ import annotations

import numpy as np

from ..backend.emotion.timeline import EmotionTimeline
from ..backend.options import EMOTIONS

#: The scene property (under ``scene.rigmind``) of each emotion's weight.
PROPERTY = {name: f"emotion_{name}" for name in EMOTIONS}


def _data_path(name: str) -> str:
    return f"rigmind.{PROPERTY[name]}"


def emotion_fcurves(scene) -> dict:
    """``{emotion: FCurve}`` for the weights keyed in the scene's active
    action (its assigned slot); empty when nothing is keyed."""
    ad = scene.animation_data
    if ad is None or ad.action is None or ad.action_slot is None:
        return {}
    from bpy_extras.anim_utils import action_get_channelbag_for_slot

    bag = action_get_channelbag_for_slot(ad.action, ad.action_slot)
    if bag is None:
        return {}
    wanted = {_data_path(n): n for n in EMOTIONS}
    return {wanted[fc.data_path]: fc for fc in bag.fcurves if fc.data_path in wanted and not fc.mute}


def scene_emotion(scene, start_frame: int, fps: float) -> EmotionTimeline | None:
    """The take's emotion from the scene's weights: ``start_frame`` is the
    take's first scene frame, ``fps`` the scene's rate (frames/s). Keys are
    sampled at every frame from ``start_frame`` to the later of the scene's
    end and the last key (held after it, as Blender holds a curve); None
    when every weight is 0 and none is keyed (neutral)."""
    props = scene.rigmind
    curves = emotion_fcurves(scene)
    constant = np.array([float(getattr(props, PROPERTY[n])) for n in EMOTIONS])
    if not curves:
        if not np.any(constant > 0):
            return None
        return EmotionTimeline.sampled([0.0], constant[None, :])
    last = max((k.co[0] for fc in curves.values() for k in fc.keyframe_points), default=start_frame)
    end = max(int(np.ceil(last)), int(scene.frame_end), int(start_frame))
    frames = np.arange(int(start_frame), end + 1, dtype=np.float64)
    values = np.repeat(constant[None, :], len(frames), axis=0)
    for name, fc in curves.items():
        j = EMOTIONS.index(name)
        # Blender clamps an animated property to its 0..1 range; a curve's
        # handles may overshoot between keys, so clamp the same way.
        values[:, j] = np.clip([fc.evaluate(f) for f in frames], 0.0, 1.0)
    return EmotionTimeline.sampled((frames - start_frame) / float(fps), values)


def take_emotion(scene, audio_path, start_frame, fps: float | None = None) -> EmotionTimeline | None:
    """:func:`scene_emotion` for the take Generate Face / Gesture will make:
    its first frame as the job resolves it (``start_frame`` with an audio
    file, else the sound strip's start) and ``fps`` (None: the scene's)."""
    from . import scene_audio, scene_io

    if getattr(scene, "rigmind", None) is None:
        return None
    from ..backend.errors import UserError

    try:
        _path, start = scene_audio.audio_and_start(scene, audio_path, start_frame)
    except UserError:
        # No speech yet: the job refuses that itself, after the rig's checks.
        start = start_frame or scene.frame_start
    return scene_emotion(scene, start, fps if fps is not None else scene_io.scene_fps(scene))


__all__ = ["PROPERTY", "emotion_fcurves", "scene_emotion", "take_emotion"]
