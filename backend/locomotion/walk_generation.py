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
from dataclasses import dataclass

import numpy as np

from ..errors import Cancelled
from ..limits import check_all, check_path
from ..motion import Motion
from ..requests.walk import CYCLE_SECONDS
from .actions.action_plan import ActionPlan, Crouch, Jump
from .actions.crouch import CrouchConfig, apply_crouch, crouch_cycle, crouch_layer, crouch_speeds, crouch_weights, smootherstep
from .actions.getup import prepend_getup
from .actions.jump import GRAVITY, JumpConfig, splice_jumps
from .cleanup import pin_feet
from .controllers import GENERATE_LOCK, controller_fps, controller_skeleton
from .cycle import extract_cycle
from .path_follow import FollowConfig, Path2D, check_pauses, follow_path, snap_to_path, standing_pose, walk_cycle
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
    gait: str = "walk",
    seconds: float = CYCLE_SECONDS,
    warmup_seconds: float = CYCLE_WARMUP_SECONDS,
    progress=None,
    cancel=None,
) -> Motion:
    """A seamless loop (Bandai skeleton, world space) of steady locomotion
    at ``speed`` (m/s) facing -Y: record ``seconds`` after a warm-up, pin
    the planted feet, cut the best loop (``cycle.extract_cycle``; its root
    still, ``in_place``, or moving on). ``gait`` "crouch": the loop
    crouched (``actions.crouch.crouch_cycle``; ``speed`` the crouch's)."""
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
    if gait == "crouch":  # the slow walk's loop, crouched frame by frame: still seamless
        with GENERATE_LOCK:
            stand = standing_pose(controller, (0.0, 0.0), 0.0, style)
        loop = crouch_cycle(loop, crouch_layer(controller_skeleton(controller), stand))
    report_progress(progress, CLEAN_END)
    check_cancel(cancel)
    return loop


@dataclass(frozen=True)
class PathOptions:
    """What a path walk does besides walking its path, in the world's units.

    - ``pauses``: ``((arc length m, seconds), ...)``: where the character
      stops and stands (``path_follow.follow_path``).
    - ``actions``: :class:`~.actions.action_plan.ActionPlan`: jumps,
      crouched ranges and the start pose (metres along the path), already
      checked against it (``action_plan.check_plan``); :func:`add_actions`.
    - ``crouched``: the whole path crouched (the crouched gait; the speed
      asked is then the crouch's).
    - ``max_seconds``: a cap on the take's length; None: what the path needs.
    """

    pauses: tuple = ()
    actions: ActionPlan = ActionPlan()
    crouched: bool = False
    max_seconds: float | None = None


def generate_path(
    controller,
    points_xy,
    *,
    style: str = "normal",
    speed=1.3,
    scale: float = 1.0,
    options: PathOptions = PathOptions(),
    progress=None,
    cancel=None,
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
    controller's (scaled) frame. ``options``: :class:`PathOptions` (the
    pauses, actions, crouched gait and time cap)."""
    check_all("speed", speed, option="speed")
    max_seconds, pauses = options.max_seconds, options.pauses
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
    plan = scaled_plan(options.actions, scale)
    crouches = (Crouch(0.0, path.length),) if options.crouched else plan.crouches
    layer = None
    if crouches:
        with GENERATE_LOCK:  # standing_pose resets the controller
            layer = crouch_layer(controller_skeleton(controller), standing_pose(controller, (0.0, 0.0), 0.0, style))
    points = path.points
    if plan.crouches:  # slow to the crouch's speed through each range (the crouched gait walks at it throughout)
        points, sp = crouch_speeds(path.points, sp, plan.crouches, layer)
    check_cancel(cancel)
    # Expected duration: the path at the requested speed, plus start-up and the stop (and the pauses).
    total = (path.length / float(np.mean(sp)) + 2.5 + sum(t + 2.0 for _, t in stops)) * controller_fps(controller)
    with GENERATE_LOCK:
        result = follow_path(
            ChunkedController(controller, total, progress, cancel, (0.0, GENERATE_END)),
            points, speed=float(sp) if sp.ndim == 0 else sp, style=style,
            config=FollowConfig(max_seconds=max_seconds), pauses=stops,
        )
    check_cancel(cancel)
    result = snap_to_path(result, path.points)
    result, standing = add_actions(result, plan, scale)
    check_cancel(cancel)
    # The controller's predicted contacts say when a foot is planted (detection
    # fills in); its predicted foot positions say where the feet are.
    motion = pin_feet(result.motion, predicted=result.contacts, feet=result.feet, config=path_pin_config(style))
    if crouches:
        weights = crouch_weights(result.arc, crouches, motion.fps) * upright_mask(standing, motion.num_frames, motion.fps)
        if result.stopped_at is not None:
            # Arrived, the character stands up: the crouch's hips sit behind
            # the feet, and the take ends with the hips on the end point.
            weights *= upright_mask([(motion.num_frames, motion.num_frames + 1)], motion.num_frames, motion.fps)
        motion = apply_crouch(motion, weights, layer)
    report_progress(progress, CLEAN_END)
    check_cancel(cancel)
    return motion, result


def scaled_plan(plan: ActionPlan, scale: float) -> ActionPlan:
    """``plan`` (world metres) in the controller's frame: every arc, range,
    height and length divided by ``scale`` (the rig's legs over the
    controller's), as the path is."""
    def div(v):
        return None if v is None else float(v) / scale

    return ActionPlan(tuple(Jump(j.arc / scale, div(j.height), div(j.length)) for j in plan.jumps),
                      tuple(Crouch(c.start / scale, c.end / scale) for c in plan.crouches), plan.start)


def add_actions(result, plan: ActionPlan, scale: float = 1.0) -> tuple:
    """``(result, upright)``: the walked path ``result`` (after
    ``snap_to_path``) with ``plan``'s jumps spliced in
    (``actions.jump.splice_jumps``) and its get-up put before it
    (``actions.getup.prepend_getup``); ``upright``: the output frame ranges
    ``[(first, end), ...]`` that are clips played whole (the jumps, the
    get-up), which a crouch must leave as they are. ``scale``: the rig's
    legs over the controller's. The retarget scales every length by it and
    keeps time, so the flight is made under gravity / ``scale`` here: on the
    rig it falls at 9.81 m/s² (a rig twice as tall flies sqrt(2) x longer)."""
    info = []
    result = splice_jumps(result, plan.jumps, JumpConfig(gravity=GRAVITY / float(scale)), info=info)
    upright = [one["frames"] for one in info]
    before = result.motion.num_frames
    result = prepend_getup(result, plan.start)
    k = result.motion.num_frames - before
    if k:
        upright = [(0, k)] + [(a + k, b + k) for a, b in upright]
    return result, upright


def upright_mask(frames, num_frames: int, fps: float, ramp_seconds: float = CrouchConfig.ramp_seconds) -> np.ndarray:
    """``[F]`` in 0..1: 0 on each ``(first, end)`` frame range of ``frames``
    and 1 away from them, with :func:`~.actions.crouch.smootherstep` ramps
    of ``ramp_seconds`` on both sides: a crouch rises out of the way of a
    jump or a get-up and goes down again after it."""
    t = np.arange(num_frames, dtype=np.float64)
    n = max(ramp_seconds * fps, 1e-6)
    mask = np.ones(num_frames)
    for a, b in frames:
        dist = np.maximum(np.maximum(a - t, t - (b - 1)), 0.0)
        mask = np.minimum(mask, smootherstep(dist / n))
    return mask


def scaled_pauses(points_xy, pauses, scale: float) -> list:
    """World pauses ``(arc length m, seconds)`` along ``points_xy`` (checked:
    ``path_follow.check_pauses``) on the controller's path, whose metres are
    the world's divided by ``scale``."""
    if not len(pauses):
        return []
    return [(a / scale, t) for a, t in check_pauses(Path2D(points_xy), pauses)]


__all__ = [
    "CHUNK_FRAMES", "CYCLE_SECONDS", "CYCLE_WARMUP_SECONDS", "GENERATE_END", "CLEAN_END", "check_cancel",
    "report_progress", "ChunkedController", "generate_walk_cycle", "generate_path", "scaled_pauses", "PathOptions", "scaled_plan",
    "add_actions", "upright_mask",
]
