"""Generate a walk with a locomotion controller: a seamless cycle, or a walk
along a path; the feet cleaned, on the controller's (Bandai) skeleton.

The slow half of Bake Walk Cycle and Walk Along Path, with no bpy, so that it
can run off Blender's main thread: the controller is stepped frame by frame;
every :data:`CHUNK_FRAMES` frames ``progress(fraction)`` is called and
``cancel()`` is asked, and a cancelled run raises :class:`Cancelled`.
Retargeting the result onto a rig is the scene's half
(``operators/locomotion_scene.py``).

Units: metres, seconds; the ground is the world XY plane, Z up; characters
face -Y at the start.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import Cancelled
from ..limits import check_all, check_path
from ..motion import Motion
from ..requests.walk import CYCLE_SECONDS
from .cleanup import pin_feet
from .controllers import GENERATE_LOCK, controller_fps
from .cycle import extract_cycle
from .path_follow import FollowConfig, Path2D, check_pauses, follow_path, snap_to_path, walk_cycle
from .path_pin import path_pin_config

#: Frames between progress reports / cancel checks (1 s at 30 fps).
CHUNK_FRAMES = 30
#: Seconds walked before the cycle's recording starts (the walk settles).
CYCLE_WARMUP_SECONDS = 2.5
#: Progress fractions at the end of generation and of the foot clean-up:
#: generation dominates the time, the retarget takes the rest.
GENERATE_END = 0.75
CLEAN_END = 0.85


def check_cancel(cancel) -> None:
    """Raise :class:`Cancelled` when ``cancel()`` (None: never) says so."""
    if cancel is not None and cancel():
        raise Cancelled("Cancelled")


def report_progress(progress, fraction: float) -> None:
    """``progress(fraction)`` (None: nobody listens), clipped to 0..1."""
    if progress is not None:
        progress(float(min(max(fraction, 0.0), 1.0)))


class ChunkedController:
    """The controller, with a progress report and a cancel check every
    ``chunk`` frames: the backend's path follower and cycle recorder drive
    the controller in one loop, so this is where a long run can stop.
    ``total_frames``: the run's expected length; ``span``: the progress
    fractions it covers."""

    def __init__(self, controller, total_frames: float, progress, cancel, span=(0.0, 1.0), chunk: int = CHUNK_FRAMES):
        self._ctl = controller
        self._total = max(float(total_frames), 1.0)
        self._progress, self._cancel = progress, cancel
        self._span = span
        self._chunk = int(chunk)
        self.frames = 0

    def reset(self, *args, **kwargs):
        return self._ctl.reset(*args, **kwargs)

    def step(self, control=None):
        if self.frames % self._chunk == 0:
            check_cancel(self._cancel)
            a, b = self._span
            report_progress(self._progress, a + (b - a) * min(self.frames / self._total, 0.99))
        self.frames += 1
        return self._ctl.step(control)

    def __getattr__(self, name):
        return getattr(self._ctl, name)


def generate_walk_cycle(
    controller,
    *,
    style: str = "normal",
    speed: float = 1.3,
    in_place: bool = False,
    seconds: float = CYCLE_SECONDS,
    warmup_seconds: float = CYCLE_WARMUP_SECONDS,
    progress=None,
    cancel=None,
) -> Motion:
    """A seamless loop (Bandai skeleton, world space) of steady locomotion
    at ``speed`` (m/s) facing -Y: record ``seconds`` after a warm-up, pin
    the planted feet, cut the best loop (``cycle.extract_cycle``; its root
    still, ``in_place``, or moving on)."""
    check_all("speed", speed, option="speed")
    check_cancel(cancel)
    total = (seconds + warmup_seconds) * controller_fps(controller)
    record = {}
    with GENERATE_LOCK:
        clip = walk_cycle(
            ChunkedController(controller, total, progress, cancel, (0.0, GENERATE_END)),
            speed=float(speed), style=style, seconds=seconds, warmup_seconds=warmup_seconds, record=record,
        )
    check_cancel(cancel)
    # Pin before cutting: a contact that spans the loop's seam is then
    # locked once, and extract_cycle spreads the residual over the loop. The
    # controller's predicted contacts and feet are used where it gives them.
    clip = pin_feet(clip, predicted=record.get("contacts"), feet=record.get("feet"))
    check_cancel(cancel)
    loop = extract_cycle(clip, root="in_place" if in_place else "root_motion")
    report_progress(progress, CLEAN_END)
    check_cancel(cancel)
    return loop


def generate_path(
    controller,
    points_xy,
    *,
    style: str = "normal",
    speed=1.3,
    scale: float = 1.0,
    max_seconds: float = None,
    progress=None,
    cancel=None,
    pauses=(),
):
    """``(motion, path_result)``: the controller walked along the polyline
    ``points_xy [N, 2]`` (world XY, m) with ``path_follow.follow_path``,
    the body moved onto the path (``path_follow.snap_to_path``), planted
    feet pinned (where the controller predicts contacts) with the path's
    settings (:func:`~.path_pin.path_pin_config`). ``path_result`` keeps
    the tracking data (its ``motion`` is the un-pinned clip).

    ``speed``: m/s in the world, a number or one per point ``[N]``.
    ``scale``: the target rig's leg length over the controller skeleton's:
    the controller walks the path and speeds divided by it, so once the
    retarget scales the hips' travel back by it (``root_scale``) the rig's
    hips are on the drawn path in scene metres, with strides and cadence
    that fit the rig's legs. The returned motion and result are in the
    controller's (scaled) frame. ``pauses``: ``((arc length m, seconds),
    ...)`` in the world, where the character stops and stands
    (``path_follow.follow_path``)."""
    check_all("speed", speed, option="speed")
    # Bounded time and memory (backend.limits), at the path's mean asked speed.
    check_path(points_xy, float(np.mean(np.atleast_1d(np.asarray(speed, dtype=np.float64)))), max_seconds)
    scale = float(scale)
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be positive, got {scale!r}")
    path = Path2D(np.asarray(points_xy, dtype=np.float64) / scale)  # validates the points before anything runs
    sp = np.asarray(speed, dtype=np.float64) / scale
    if sp.ndim and len(sp) != len(path.points):
        raise ValueError(f"{len(sp)} speeds for {len(path.points)} distinct path points")
    stops = scaled_pauses(points_xy, pauses, scale)
    check_cancel(cancel)
    # Expected duration: the path at the requested speed, plus start-up and the stop (and the pauses).
    total = (path.length / float(np.mean(sp)) + 2.5 + sum(t + 2.0 for _, t in stops)) * controller_fps(controller)
    with GENERATE_LOCK:
        result = follow_path(
            ChunkedController(controller, total, progress, cancel, (0.0, GENERATE_END)),
            path.points, speed=float(sp) if sp.ndim == 0 else sp, style=style,
            config=FollowConfig(max_seconds=max_seconds), pauses=stops,
        )
    check_cancel(cancel)
    result = snap_to_path(result, path.points)
    # The controller's predicted contacts say when a foot is planted (detection
    # fills in); its predicted foot positions say where the feet are.
    motion = pin_feet(result.motion, predicted=result.contacts, feet=result.feet, config=path_pin_config(style))
    report_progress(progress, CLEAN_END)
    check_cancel(cancel)
    return motion, result


def scaled_pauses(points_xy, pauses, scale: float) -> list:
    """World pauses ``(arc length m, seconds)`` along ``points_xy`` (checked:
    ``path_follow.check_pauses``) on the controller's path, whose metres are
    the world's divided by ``scale``."""
    if not len(pauses):
        return []
    return [(a / scale, t) for a, t in check_pauses(Path2D(points_xy), pauses)]


__all__ = [
    "CHUNK_FRAMES", "CYCLE_SECONDS", "CYCLE_WARMUP_SECONDS", "GENERATE_END", "CLEAN_END", "check_cancel",
    "report_progress", "ChunkedController", "generate_walk_cycle", "generate_path", "scaled_pauses",
]
