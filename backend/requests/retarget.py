"""What the user asked a retarget for: one frozen value per take.

Built by the Retarget Motion operator from its properties
(:func:`from_properties`), by ``rigmind retarget`` from its arguments, and by
the jobs that put generated motion on a rig (gesture, locomotion); checked
once (:func:`~rigmind.backend.requests.checked`); passed whole to
``operators.retarget_scene.retarget_onto``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..retarget import RetargetConfig
from . import JobRequest


@dataclass(frozen=True)
class RetargetRequest(JobRequest):
    """A clip onto a rig as a new action.

    ``source``: the clip file (.bvh .bvh.gz .fbx .glb .gltf, SMPL-X .npz,
    DeepMimic .txt/.json) or None; ``source_armature``: an armature whose
    action is the clip instead.
    ``bone_map``: the target's bone-map preset (None: the armature's saved
    mapping, else detection). ``root_mode`` (``backend.options.ROOT_MODES``),
    ``root_bone``, ``ik`` (leg IK on planted feet), ``root_scale`` (factor on
    the hips' travel; None: the leg-length ratio): see
    :class:`~rigmind.backend.retarget.RetargetConfig`. ``start_frame``: scene
    frame of the first key. ``set_scene_fps``: switch the scene to the
    clip's rate. ``scene_range``: True (the scene range becomes the take's),
    "grow" (it only grows to cover it, the operators' choice) or False.
    ``action_name``: the new action's name (None: "RigMind Retarget · <clip>").
    ``keyed``: False for a take that only goes into a BVH file: it is kept
    as the arrays its keys would hold (``operators.scene_io.ArrayTake``)
    where the rig allows, and the scene gets no action."""

    RANGED = {"start_frame": "start_frame"}

    source: object = None
    source_armature: str | None = None
    bone_map: str | None = None
    root_mode: str = "hips"
    root_bone: str | None = None
    ik: bool = True
    root_scale: float | None = None
    start_frame: int = 1
    set_scene_fps: bool = True
    scene_range: object = True
    action_name: str | None = None
    keyed: bool = True

    def config(self) -> RetargetConfig:
        """The backend's settings for this take (the floor is estimated from the clip)."""
        return RetargetConfig(root_mode=self.root_mode, root_bone=self.root_bone, ik=self.ik, ground_height=None,
                              root_scale=self.root_scale)


def from_properties(props: dict) -> RetargetRequest:
    """A request from the Retarget Motion operator's properties, passed whole
    as Blender's ``Operator.as_keywords()`` gives them (``filepath`` is the
    source, ``use_ik`` the leg IK; empty strings mean none). A user's scene
    keeps its frame rate and its range only grows."""
    return RetargetRequest(source=props.get("filepath") or None,
                           source_armature=props.get("source_armature") or None,
                           root_mode=props.get("root_mode", "hips"), root_bone=props.get("root_bone") or None,
                           ik=bool(props.get("use_ik", True)), start_frame=int(props.get("start_frame", 1)),
                           set_scene_fps=False, scene_range="grow")


__all__ = ["RetargetRequest", "from_properties"]
