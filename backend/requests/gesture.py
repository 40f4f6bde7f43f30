"""What the user asked Generate Gesture for: one frozen value per take.

Built by the Generate Gesture operator from its properties
(:func:`from_properties`), by ``rigmind gesture`` from its arguments and by
batch from its settings; checked once (:func:`~rigmind.backend.requests.checked`);
passed whole to ``operators.gesture_scene``.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import JobRequest, request_fields


@dataclass(frozen=True)
class GestureRequest(JobRequest):
    """Speech → body (and face) on a rig.

    ``audio_path``: the speech file; None: the scene's first sound strip,
    the take then starts with it. ``amount`` 0..1 (0 calm, 0.5 like the
    training speaker, 1 very animated). ``start_frame``: scene frame of the
    take's first key (None: 1, or the sound strip's start). ``base``:
    "idle" (the whole body from the model) or "keep_legs" (the rig's current
    action keeps hips and legs). ``face_mesh``: the face mesh as the user named it
    ("" none, "auto", a mesh name; the front end resolves it to an object).
    ``face_method``: lip sync without a transcript (``backend.options.FACE_METHODS``).
    ``transcript``: the spoken text (None: a ``.txt`` beside the audio).
    ``set_scene_fps``: switch the scene to the model's 30 fps.
    ``add_sound``: add the speech as a sound strip (None: unless it already
    is the scene's). ``runtime``: the models' inference engine (None: ONNX
    Runtime when the exports match the weights). ``user_scene`` (the
    operator): the scene's frame range only grows to cover the take.
    ``emotion``: a ``backend.emotion.timeline.EmotionTimeline`` (None:
    neutral), which the body and the face follow over the take.
    ``style``: one of ``backend.options.GESTURE_STYLES`` ("" the model's
    own). ``style_clip``: a clip (BVH/FBX/glTF/npz) of the speaker whose
    pose distribution the take takes on (None: none).
    ``keyed``: False for a take that only goes into a BVH file (the CLI's
    ``--out X.bvh``): the body is kept as arrays where the rig allows
    (``RetargetRequest.keyed``), the face mesh's keys are written as ever."""

    RANGED = {"amount": "amount", "seed": "seed", "start_frame": "start_frame"}

    audio_path: object = None
    amount: float = 0.5
    seed: int = 0
    start_frame: int | None = None
    base: str = "idle"
    face_mesh: str = ""
    face_method: str = "model"
    transcript: str | None = None
    set_scene_fps: bool = True
    add_sound: bool | None = None
    runtime: str | None = None
    user_scene: bool = False
    keyed: bool = True
    emotion: object = None
    style: str = ""
    style_clip: object = None


def from_properties(props: dict, *, runtime: str | None = None, user_scene: bool = True) -> GestureRequest:
    """A request from the operator's properties, passed whole as Blender's
    ``Operator.as_keywords()`` gives them (property name -> value; names
    that are not request fields, like ``armature``, are left out; an empty
    ``audio_path`` means the scene's sound strip), with what the operator
    adds: ``runtime`` from the preferences and ``user_scene``. The
    operator's style "none" is the model's own (""); an empty style clip
    is none."""
    given = request_fields(GestureRequest, props)
    given["audio_path"] = given.get("audio_path") or None
    if given.get("style") == "none":
        given["style"] = ""
    given["style_clip"] = given.get("style_clip") or None
    return GestureRequest(**given, runtime=runtime, user_scene=user_scene)


__all__ = ["GestureRequest", "from_properties"]
