"""What the user asked Track Body for: one frozen value per take.

Built by the Track Body operator from its properties (:func:`from_properties`;
the take is read from the three picked objects), by ``rigmind track`` from
its arguments and by batch from its settings; checked once
(:func:`~rigmind.backend.requests.checked`); passed whole to
``operators.track_scene``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..options import TRACK_METHODS, TRACK_PLACEMENTS, TRACKER_UP_AXES
from ..errors import UserError
from . import JobRequest, request_fields


@dataclass(frozen=True)
class TrackRequest(JobRequest):
    """Three trackers (head, left hand, right hand) → a full body on a rig.

    ``trackers``: a tracker CSV file (``backend.tracking.trackers``; None:
    another source); ``trackers_from``: a clip (.bvh .bvh.gz .fbx .glb .gltf
    .npz .txt/.json) whose head and wrists are the trackers (to test against
    the clip itself); neither: the operator's three scene objects.
    ``up``: the CSV file's up axis ("Z" Blender, or "Y").
    ``method``: ``backend.options.TRACK_METHODS`` ("model" the learned
    model, "baseline" IK). ``fps``: the body's frame rate (None: the
    model's 30). ``start_frame``: scene frame of the take's first key.
    ``set_scene_fps``: switch the scene to the take's rate. ``scene_range``:
    as ``RetargetRequest.scene_range`` (True, "grow" or False).
    ``action_name``: the new action's name (None: "RigMind Track · <source>").
    ``keyed``: False for a take that only goes into a BVH file
    (``RetargetRequest.keyed``). ``placement``: ``backend.options.TRACK_PLACEMENTS``
    ("rig": the trackers are where this rig's head and hands go;
    "performer": another body's, scaled onto the rig); None: "rig" for scene
    objects and a tracker file, "performer" for a clip."""

    RANGED = {"fps": "fps", "start_frame": "start_frame"}

    trackers: object = None
    trackers_from: object = None
    up: str = "Z"
    method: str = "model"
    fps: float | None = None
    start_frame: int = 1
    set_scene_fps: bool = True
    scene_range: object = True
    action_name: str | None = None
    keyed: bool = True
    placement: str | None = None

    def __post_init__(self):
        if self.method not in TRACK_METHODS:
            raise UserError(f"--method {self.method!r}: use one of {', '.join(TRACK_METHODS)}")
        if self.placement is not None and self.placement not in TRACK_PLACEMENTS:
            raise UserError(f"--placement {self.placement!r}: use one of {', '.join(TRACK_PLACEMENTS)}")
        if str(self.up).upper() not in TRACKER_UP_AXES:
            raise UserError(f"--trackers-up {self.up!r}: use Z (Blender) or Y")
        if self.trackers is not None and self.trackers_from is not None:
            raise UserError("give --trackers FILE.csv or --trackers-from CLIP, not both")
        object.__setattr__(self, "up", str(self.up).upper())

    def option_name(self, field: str) -> str:
        return {"up": "--trackers-up"}.get(field, super().option_name(field))


def from_properties(props: dict) -> TrackRequest:
    """A request from the Track Body operator's properties, passed whole as
    Blender's ``Operator.as_keywords()`` gives them (the take comes from the
    scene objects; other properties, like ``armature``, are left out). A
    user's scene keeps its frame rate and its range only grows."""
    given = request_fields(TrackRequest, props)
    given.pop("trackers", None)
    given.pop("trackers_from", None)
    return TrackRequest(**dict(given, set_scene_fps=False, scene_range="grow"))


__all__ = ["TrackRequest", "from_properties"]
