"""What the user asked Generate Face for: one frozen value per take.

Built by the Generate Face operator from its properties
(:func:`from_properties`), by ``rigmind face`` from its arguments and by
batch from its settings; checked once (:func:`~rigmind.backend.requests.checked`);
passed whole to ``operators.face_scene``.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import JobRequest, request_fields


@dataclass(frozen=True)
class FaceRequest(JobRequest):
    """Speech → ARKit-52 shape-key animation on a face mesh.

    ``audio_path``: the speech file; None: the scene's first sound strip
    (the take then starts with it) or the clip the caller already loaded.
    ``method``: lip sync without a transcript (``backend.options.FACE_METHODS``).
    ``smile`` 0..1. ``seed``: blinks and gaze. ``start_frame``: scene frame
    of the first key (None: 1, or the sound strip's start). ``fps``: frame
    rate of the curves (frames per second; None: the scene's). ``face_mesh``:
    the mesh as the user named it ("auto" or a name; the front end resolves
    it). ``transcript``: the spoken text (None: a ``.txt`` beside the audio).
    ``jaw``: also rotate the rig's jaw bone (None: only when the mesh has no
    jawOpen key). ``add_sound``: add the speech as a sound strip (None:
    unless it already is the scene's). ``action_name``: the new action's
    name (None: "RigMind Face · <audio stem>"). ``companions``: drive the
    character's other ARKit meshes (teeth, eyes …) alike. ``runtime``: the
    face model's inference engine (None: ONNX Runtime when it matches).
    ``emotion``: a ``backend.emotion.timeline.EmotionTimeline`` (None:
    neutral) blended with the lip sync over the take."""

    RANGED = {"smile": "smile", "seed": "seed", "start_frame": "start_frame", "fps": "fps"}

    audio_path: object = None
    method: str = "model"
    smile: float = 0.0
    seed: int = 0
    start_frame: int | None = None
    fps: float | None = None
    face_mesh: str = "auto"
    transcript: str | None = None
    jaw: bool | None = None
    add_sound: bool | None = None
    action_name: str | None = None
    companions: bool = True
    runtime: str | None = None
    emotion: object = None


def from_properties(props: dict, *, runtime: str | None = None) -> FaceRequest:
    """A request from the operator's properties, passed whole as Blender's
    ``Operator.as_keywords()`` gives them (names that are not request
    fields are left out; an empty ``audio_path`` means the scene's sound
    strip, an empty ``face_mesh`` "auto"), with ``runtime`` from the
    preferences."""
    given = request_fields(FaceRequest, props)
    given["audio_path"] = given.get("audio_path") or None
    given["face_mesh"] = given.get("face_mesh") or "auto"
    return FaceRequest(**given, runtime=runtime)


__all__ = ["FaceRequest", "from_properties"]
