"""The walk jobs' requests: Bake Walk Cycle and Walk Along Path, as one
frozen value each.

Built once per front end -- the operators from their properties
(``operators/blender_ops.py``), ``rigmind walk`` from its arguments
(``cli.py``), a batch walk manifest's entry (``operators/batch_worker.py``)
-- and passed down whole to ``operators/locomotion_scene.walk_cycle_job`` /
``walk_path_job``, which check it once (:func:`~rigmind.backend.requests.checked`)
before anything runs.

Units: metres, seconds, m/s; path points are world X, Y on the ground plane.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..locomotion.actions.action_plan import ActionPlan
from . import JobRequest

#: Seconds of steady walking a cycle is cut from (after the warm-up).
CYCLE_SECONDS = 6.0


@dataclass(frozen=True)
class ControllerChoice:
    """Which locomotion controller a walk runs on, and where its files are
    (``backend.locomotion.controllers.load_controller``).

    - ``kind``: "auto" (the neural model when its weights exist, else motion
      matching), "neural" or "motion_matching".
    - ``engine``: "onnxruntime" or "torch" for the neural model; None: from
      the weights file found.
    - ``models_dir``: a folder with the user's own locomotion.onnx / .pt;
      None: the models RigMind ships.
    - ``data_dir``: the folder holding bandai_namco_d2_locomotion (motion
      matching); None: ``$RIGMIND_DATA`` or ``../shared/data``.
    """

    kind: str = "auto"
    engine: str | None = None
    models_dir: str | None = None
    data_dir: str | None = None


@dataclass(frozen=True)
class WalkRequest(JobRequest):
    """What both walk jobs take.

    - ``style``: a Bandai Namco style (``options.STYLES``); ``gait``: "walk",
      "run" (the style's own speed, and the action's name) or "crouch" (the
      style's walk, slowed and crouched: ``locomotion/actions/crouch.py``).
    - ``speed``: m/s; None: the style's own for the gait (its clips' median,
      scaled to the rig's legs on a path), clamped to what the clips cover.
    - ``in_place``: no horizontal root motion.
    - ``controller``: :class:`ControllerChoice`.
    - ``start_frame``: the scene frame the take begins at.
    - ``user_scene``: the operators' case: the scene keeps its fps and its
      frame range only grows.
    """

    RANGED: ClassVar[dict] = {"speed": "speed", "start_frame": "start_frame"}

    style: str = "normal"
    gait: str = "walk"
    speed: float | None = None
    in_place: bool = False
    controller: ControllerChoice = ControllerChoice()
    start_frame: int = 1
    user_scene: bool = False


@dataclass(frozen=True)
class WalkCycleRequest(WalkRequest):
    """Bake Walk Cycle: a seamless loop cut from ``seconds`` of steady walking."""

    RANGED: ClassVar[dict] = dict(WalkRequest.RANGED, seconds="cycle_seconds")

    seconds: float = CYCLE_SECONDS

    def option_name(self, field: str) -> str:
        return "--seconds" if field == "seconds" else super().option_name(field)


@dataclass(frozen=True)
class WalkPathRequest(WalkRequest):
    """Walk Along Path.

    - ``points``: the path, rows ``(x, y)`` or ``(x, y, speed)`` (m, m/s; a
      NaN speed: the walk's ``speed``), stored as a tuple of rows (a
      frozen value); :meth:`points_array` gives ``[N, 2]`` / ``[N, 3]``.
    - ``pauses``: ``((arc length m, seconds), ...)``: stop that far along the
      path and stand that long.
    - ``max_seconds``: a cap on the take's length; None: what the path needs.
    - ``actions``: :class:`~rigmind.backend.locomotion.actions.action_plan.ActionPlan`:
      jumps and crouched stretches along the path (world metres of arc
      length) and the start pose (standing, or lying and getting up).
    """

    RANGED: ClassVar[dict] = dict(WalkRequest.RANGED, max_seconds="path_seconds")

    points: tuple = ()
    pauses: tuple = ()
    max_seconds: float | None = None
    actions: ActionPlan = ActionPlan()

    def __post_init__(self):
        p = np.asarray(self.points, dtype=np.float64)
        rows = p.tolist()
        object.__setattr__(self, "points", tuple(tuple(r) for r in rows) if p.ndim == 2 else tuple(rows))
        if isinstance(self.pauses, list):
            object.__setattr__(self, "pauses", tuple(self.pauses))

    def points_array(self) -> np.ndarray:
        """The path points as an array ``[N, 2]`` or ``[N, 3]`` (float64)."""
        return np.asarray(self.points, dtype=np.float64)

    def option_name(self, field: str) -> str:
        return "--seconds" if field == "max_seconds" else super().option_name(field)


__all__ = ["CYCLE_SECONDS", "ControllerChoice", "WalkRequest", "WalkCycleRequest", "WalkPathRequest"]
