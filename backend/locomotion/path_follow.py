"""Drive a locomotion controller along a path, or in a straight line.

Works with any controller that has the ``reset`` / ``step`` API of
:class:`~.motion_matching.MotionMatchingController` (and of the neural
``LocomotionController``): ``reset(position=, yaw=, style=)`` puts the
character at a world XY position with a yaw, ``step(Control)`` advances one
frame and returns a one-frame :class:`Motion` in world space whose joint 0 is
the character root (``root_positions = (x, y, 0)``).

:func:`follow_path` is a closed loop: every frame it projects the character
root on the path, picks the speed the path allows there and asks for a
velocity toward a look-ahead point (pure pursuit) with the facing of the path
tangent. The speed profile is planned once over arc length:

- a cap from the requested speed and from the curvature (lateral
  acceleration ``v^2 kappa <= lateral_accel``), curvature measured on the
  heading angle smoothed over ~0.3 m so a polyline's sharp corner reads as a
  tight bend rather than an infinite spike;
- a backward pass so the speed can fall to each cap (and to zero at the end)
  within ``decel``;
- the acceleration limit is applied in time on the command (the character
  starts standing, and lags behind any plan in arc length).

Near the end the command becomes a proportional approach to the end point;
once the root is within ``stop_radius`` the command is a slow drift onto the
end point for at least ``hold_seconds``, until the character is slow and
within ``arrive_radius`` of it; then an inertialised blend
(:func:`blend_to_pose`, ~0.5 s) takes the pose into the controller's
standing pose on the end point, which is held: the clip ends standing.

``pauses`` (arc length, seconds) stop on the way the same way: the command
brakes onto the pause point as onto the end, the stop phase and the blend
into the standing pose run as at the end (on the pause point, facing along
the path there), the controller then idles for the seconds, and the walk
starts again from standing (the acceleration limit from zero).

Units: metres, seconds, radians; Blender Z-up; yaw 0 faces -Y.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from ..filters import gaussian_filter1d
from ..foot_contacts import runs

from .. import rotations
from ..errors import UserError
from ..limits import RANGES
from ..motion import Motion
from ..resample import resample
from . import features
from .gaits import speeds_table
from .inertialize import blend_to_pose
from .stance import settle_frames, settle_steps
from .motion_matching import Control

#: Spacing (m) of the dense resampling of the path.
PATH_STEP = 0.02
_EPS = 1e-9


# --- the path ---------------------------------------------------------------------


class Path2D:
    """A polyline on the ground plane, resampled every ``step`` metres and
    parametrised by arc length ``s``.

    ``xy [M, 2]`` (dense points), ``s [M]``, ``length``, ``tangent [M, 2]``
    (unit, from the heading smoothed over ``smooth`` metres), ``curvature
    [M]`` (1/m, signed, positive = turning left / counter clockwise).
    """

    def __init__(self, points_xy, step: float = PATH_STEP, smooth: float = 0.3):
        p = np.asarray(points_xy, dtype=np.float64).reshape(-1, 2)
        if not np.all(np.isfinite(p)):
            raise ValueError("path points must be finite")
        # Drop repeated points: they have no direction.
        keep = np.ones(len(p), dtype=bool)
        keep[1:] = np.linalg.norm(np.diff(p, axis=0), axis=1) > 1e-6
        p = p[keep]
        if len(p) < 2:
            raise ValueError("a path needs at least two distinct points")
        seg = np.linalg.norm(np.diff(p, axis=0), axis=1)
        knots = np.concatenate([[0.0], np.cumsum(seg)])
        self.length = float(knots[-1])
        n = max(int(np.ceil(self.length / step)), 1) + 1
        self.s = np.linspace(0.0, self.length, n)
        self.ds = self.length / (n - 1)
        self.xy = np.stack([np.interp(self.s, knots, p[:, 0]), np.interp(self.s, knots, p[:, 1])], axis=1)
        # Contiguous copies for at(): np.interp copies a strided column on
        # every call, which made each frame's lookup cost the whole path.
        self._x, self._y = np.ascontiguousarray(self.xy[:, 0]), np.ascontiguousarray(self.xy[:, 1])
        self.points = p
        # Heading of each dense segment, unwrapped, smoothed over arc length.
        d = np.diff(self.xy, axis=0)
        heading = np.unwrap(np.arctan2(d[:, 1], d[:, 0]))
        heading = np.concatenate([heading, heading[-1:]])
        sigma = max(smooth / self.ds, 1e-3)
        smooth_heading = gaussian_filter1d(heading, sigma, mode="nearest")
        self.heading = smooth_heading
        self.tangent = np.stack([np.cos(smooth_heading), np.sin(smooth_heading)], axis=1)
        self.curvature = np.gradient(smooth_heading, self.ds) if n > 2 else np.zeros(n)
        # Exact (unsmoothed) start/end directions: the character starts facing
        # the first segment even when the path turns right after it.
        self.start_dir = (p[1] - p[0]) / np.linalg.norm(p[1] - p[0])
        self.end_dir = (p[-1] - p[-2]) / np.linalg.norm(p[-1] - p[-2])

    def at(self, s) -> np.ndarray:
        s = np.clip(np.asarray(s, dtype=np.float64), 0.0, self.length)
        return np.stack([np.interp(s, self.s, self._x), np.interp(s, self.s, self._y)], axis=-1)

    def tangent_at(self, s) -> np.ndarray:
        s = np.clip(np.asarray(s, dtype=np.float64), 0.0, self.length)
        h = np.interp(s, self.s, self.heading)
        return np.stack([np.cos(h), np.sin(h)], axis=-1)

    def project(self, xy, s_prev: float = None, back: float = 0.5, ahead: float = 2.0) -> float:
        """Arc length of the path point nearest to ``xy``. With ``s_prev``
        the search is limited to ``[s_prev - back, s_prev + ahead]`` so a path
        that crosses itself (a loop) is followed in order."""
        lo, hi = 0, len(self.s)
        if s_prev is not None:
            lo = max(int(np.floor((s_prev - back) / self.ds)), 0)
            hi = min(int(np.ceil((s_prev + ahead) / self.ds)) + 2, len(self.s))
        seg_a = self.xy[lo : max(hi - 1, lo + 1)]
        seg_b = self.xy[lo + 1 : max(hi, lo + 2)]
        m = min(len(seg_a), len(seg_b))
        seg_a, seg_b = seg_a[:m], seg_b[:m]
        d = seg_b - seg_a
        t = np.clip(np.sum((np.asarray(xy) - seg_a) * d, axis=1) / np.maximum(np.sum(d * d, axis=1), _EPS), 0.0, 1.0)
        q = seg_a + t[:, None] * d
        i = int(np.argmin(np.sum((q - xy) ** 2, axis=1)))
        return float(self.s[lo + i] + t[i] * self.ds)

    def distance(self, xy) -> np.ndarray:
        """Distance (m) from each point ``xy [..., 2]`` to the polyline (the
        nearest point anywhere on it).

        The drawn segments, not the dense resampling (the same polyline),
        measured :data:`DISTANCE_BLOCK` points at a time against only the
        segments near each block (:func:`segment_distances`): a full
        ``[points, segments]`` table grows with the walk's frames times the
        path's points (gigabytes for a long 10 000-point path)."""
        xy = np.asarray(xy, dtype=np.float64)
        flat = xy.reshape(-1, 2)
        out = np.empty(len(flat))
        segs = _Segments(self.points)
        for i in range(0, len(flat), DISTANCE_BLOCK):
            out[i:i + DISTANCE_BLOCK] = segs.nearest(flat[i:i + DISTANCE_BLOCK])
        return out.reshape(xy.shape[:-1])


#: Points measured at once by :meth:`Path2D.distance`: its temporaries are
#: ``[DISTANCE_BLOCK, nearby segments]``.
DISTANCE_BLOCK = 256
#: First search margin (m) around a block of points (:meth:`_Segments.nearest`);
#: a block farther from the path widens it once, to what it found.
DISTANCE_MARGIN = 1.0


def segment_distances(q, a, d) -> np.ndarray:
    """Distance (m) from each point ``q [B, 2]`` to the nearest of the
    segments ``a [S, 2] -> a + d`` (``d [S, 2]``): ``[B]``."""
    flat = q[:, None, :]
    t = np.clip(np.sum((flat - a) * d, axis=-1) / np.maximum(np.sum(d * d, axis=-1), _EPS), 0.0, 1.0)
    p = a + t[..., None] * d
    return np.sqrt(np.min(np.sum((p - flat) ** 2, axis=-1), axis=1))


class _Segments:
    """A polyline's segments (``points [N, 2]``, m) with their bounding
    boxes, for the nearest-segment distance of blocks of points."""

    def __init__(self, points):
        self.a = points[:-1]
        self.d = points[1:] - points[:-1]
        self.lo = np.minimum(points[:-1], points[1:])
        self.hi = np.maximum(points[:-1], points[1:])

    def _near(self, q, margin: float) -> np.ndarray:
        """Indices of the segments whose box comes within ``margin`` (m) of
        the box around the points ``q [B, 2]``."""
        qlo, qhi = q.min(axis=0) - margin, q.max(axis=0) + margin
        return np.nonzero(np.all((self.lo <= qhi) & (self.hi >= qlo), axis=1))[0]

    def nearest(self, q) -> np.ndarray:
        """Distance (m) from each point ``q [B, 2]`` to the polyline, the
        same numbers as measuring every segment: a segment left out is
        farther than ``margin`` from every point of the block (its box is),
        and ``margin`` is at least the largest distance found."""
        margin = DISTANCE_MARGIN
        while True:
            idx = self._near(q, margin)
            dist = segment_distances(q, self.a[idx], self.d[idx]) if len(idx) else np.full(len(q), np.inf)
            worst = float(dist.max())
            if worst <= margin:
                return dist
            margin = worst if np.isfinite(worst) else 2.0 * margin


#: Slowest speed (m/s) asked for at a corner: a U-turn is walked as a
#: near-stop and a pivot, but still stepping (below ~0.05 m/s the controller stands).
MIN_CORNER_SPEED = 0.3


def corner_caps(points_xy):
    """``(arc [K], cos_half [K])`` of each interior corner of a polyline:
    its arc length (m) and the cosine of half its turn angle (1 = straight
    on, 0 = a U-turn)."""
    p = np.asarray(points_xy, dtype=np.float64)
    if len(p) < 3:
        return np.zeros(0), np.zeros(0)
    d = np.diff(p, axis=0)
    n = np.linalg.norm(d, axis=1)
    u = d / np.maximum(n[:, None], _EPS)
    cos_turn = np.clip(np.sum(u[:-1] * u[1:], axis=1), -1.0, 1.0)
    return np.cumsum(n)[:-1], np.sqrt(0.5 * (1.0 + cos_turn))


def speed_profile(path: Path2D, speed, *, lateral_accel: float, decel: float) -> np.ndarray:
    """Allowed speed ``[M]`` (m/s) at each dense path sample: the requested
    speed capped by the lateral acceleration on the curvature and, at each
    corner of the drawn polyline, by ``cos(turn / 2)`` times the requested
    speed (at least :data:`MIN_CORNER_SPEED`): people slow into a sharp
    corner, a 90° turn by ~30 %, a U-turn almost to a stop (the curvature of
    the smoothed heading alone lets a U-turn be walked at 0.6 m/s, a wide
    swing). Then a backward pass so the character can brake to every cap and
    to zero at the end with ``decel`` (m/s^2)."""
    if callable(speed):
        v = np.asarray([float(speed(s)) for s in path.s])
    else:
        sp = np.asarray(speed, dtype=np.float64)
        if sp.ndim == 0:
            v = np.full(len(path.s), float(sp))
        else:
            # One speed per input point: interpolate along the arc length of the input points.
            if len(sp) != len(path.points):
                raise ValueError(f"speed has {len(sp)} values for {len(path.points)} distinct path points")
            knots = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(path.points, axis=0), axis=1))])
            v = np.interp(path.s, knots, sp)
    if np.any(v < 0) or not np.all(np.isfinite(v)):
        raise ValueError("speeds must be finite and non-negative")
    v = np.minimum(v, np.sqrt(lateral_accel / np.maximum(np.abs(path.curvature), 1e-6)))
    arc, cos_half = corner_caps(path.points)
    for s_c, ch in zip(arc, cos_half):
        i = int(round(s_c / path.ds))
        v[i] = min(v[i], max(MIN_CORNER_SPEED, v[i] * float(ch)))
    v[-1] = 0.0
    # Backward pass: v[i] <= sqrt(v[i+1]^2 + 2 a ds).
    for i in range(len(v) - 2, -1, -1):
        v[i] = min(v[i], np.sqrt(v[i + 1] ** 2 + 2.0 * decel * path.ds))
    # Forward pass out of each corner cap (the command's own acceleration
    # limit acts in time; this keeps the plan honest in arc length too).
    for i in range(1, len(v) - 1):
        v[i] = min(v[i], np.sqrt(v[i - 1] ** 2 + 2.0 * decel * path.ds)) if i > 0 and v[i - 1] < v[i] else v[i]
    return v


#: Corners turning at least this much (deg) must be reached before the
#: progress along the path may pass them (see :class:`Progress`).
GATED_TURN_DEG = 100.0


class Progress:
    """Progress (arc length, m) of a moving point along a path, found by
    in-order projection, that cannot skip a sharp corner.

    Where a path turns back on itself (a U-turn's legs overlap, a hairpin's
    nearly do) the nearest path point jumps between the legs: a follower
    that aims ahead of it turns back before the corner (and can oscillate
    there for ever), and a body placed on it would jump. So each corner of
    :data:`GATED_TURN_DEG` or more is a gate: until the point is within
    ``reach`` (m) of the corner, or past the plane through it across the
    incoming leg, or (``reverse``) moving back against the incoming leg
    within 1 m of it, the projection is not searched beyond the corner;
    once it is, the progress never goes back before the corner."""

    def __init__(self, path: Path2D, reach: float = 0.2, reverse: bool = False):
        self.path = path
        self.reach = float(reach)
        self.reverse = reverse
        arc, cos_half = corner_caps(path.points)
        sharp = cos_half <= np.cos(np.radians(GATED_TURN_DEG) / 2.0)
        idx = np.nonzero(sharp)[0]
        d = np.diff(path.points, axis=0)
        self.gates = [(float(arc[i]), path.points[i + 1], d[i] / np.linalg.norm(d[i])) for i in idx]
        self.s = 0.0
        self.floor = 0.0  # the last gate passed: the projection never goes back before it

    def gate(self):
        """``(arc, corner xy, incoming unit direction)`` of the next closed gate, or None."""
        return self.gates[0] if self.gates else None

    def update(self, xy, vel=None, back: float = 0.5, ahead: float = 2.0) -> float:
        g = self.gate()
        if g is not None:
            ahead = min(ahead, max(g[0] - self.s, 0.0) + 0.02)
        back = min(back, max(self.s - self.floor, 0.0))
        self.s = max(self.path.project(xy, self.s, back=back, ahead=ahead), self.floor)
        if g is not None:
            rel = np.asarray(xy, dtype=np.float64) - g[1]
            past = float(rel @ g[2]) > 0.0
            near = float(np.linalg.norm(rel)) < self.reach
            back_turn = (self.reverse and vel is not None and float(np.asarray(vel) @ g[2]) < 0.0
                         and float(np.linalg.norm(rel)) < 1.0)
            if past or near or back_turn:
                self.gates.pop(0)
                self.floor = max(self.s, g[0] + 1e-6)
                self.s = self.floor
        return self.s


# --- controller driving -------------------------------------------------------------


@dataclass
class PathResult:
    """What :func:`follow_path` produced.

    ``motion``: the clip (world space). Per frame ``[F]``: ``target_xy [F,
    2]`` (the path point nearest the root, found in path order), ``arc [F]``
    (its arc length, m), ``root_xy [F, 2]`` (the character root),
    ``error [F]`` (distance from the root to the path, m), ``command [F, 2]``
    (the velocity asked for, m/s), ``stopping [F]`` (True once the stop
    phase began), ``contacts [F, 4]`` (the controller's predicted foot
    contact probabilities, ``Foot_L, Toes_L, Foot_R, Toes_R``, when it has a
    ``contacts`` attribute, else None; the standing end counts as both feet
    down), ``feet [F, 4, 3]`` (where the controller predicts those joints,
    world metres, when it has a ``feet`` attribute, else None; see
    :func:`.cleanup.pin_feet`). ``path_xy [M, 2]`` is the dense path, ``profile [M]`` the
    planned speed along it, ``stopped_at`` the first frame of the stop phase
    (None when ``max_seconds`` ran out first), ``length`` the path length.
    ``paused [F]`` (bool): True from the frame a pause's stop began until
    the walk starts again (all False without ``pauses``).
    """

    motion: Motion
    target_xy: np.ndarray
    arc: np.ndarray
    root_xy: np.ndarray
    error: np.ndarray
    command: np.ndarray
    stopping: np.ndarray
    path_xy: np.ndarray
    profile: np.ndarray
    stopped_at: int
    length: float
    contacts: np.ndarray = None
    feet: np.ndarray = None
    paused: np.ndarray = None

    @property
    def mean_error(self) -> float:
        return float(np.mean(self.error))

    @property
    def end_distance(self) -> float:
        """Distance (m) from the last frame's root to the path's end point."""
        return float(np.linalg.norm(self.root_xy[-1] - self.path_xy[-1]))


def concat_poses(poses, fps: float) -> Motion:
    """One :class:`Motion` at ``fps`` from the one-frame poses returned by a
    controller's ``step`` (rotations made continuous across frames)."""
    first = poses[0]
    trans = None
    if all(p.translations is not None for p in poses):
        trans = np.concatenate([p.translations for p in poses])
    return Motion(
        first.skeleton,
        rotations.make_continuous(np.concatenate([p.rotations for p in poses]), axis=0),
        np.concatenate([p.root_positions for p in poses]),
        fps,
        trans,
        name=first.name,
    )


def stack_rows(rows, dtype=np.float64):
    """Per-frame readings ``rows`` (e.g. a controller's ``contacts`` after
    each step) as one array ``[F, ...]``, or None when any is None (the
    controller does not predict them)."""
    return None if any(r is None for r in rows) else np.array(rows, dtype=dtype)


def _interp_rows(a, t_src, t) -> np.ndarray:
    """Rows ``a [F, ...]`` sampled at times ``t_src [F]`` (s), linearly
    interpolated at times ``t [N]``: ``[N, ...]``."""
    a = np.asarray(a, dtype=np.float64)
    flat = a.reshape(len(a), -1)
    out = np.stack([np.interp(t, t_src, flat[:, k]) for k in range(flat.shape[1])], axis=1)
    return out.reshape((len(t),) + a.shape[1:])


#: Each style's lateral acceleration in its turn clips (``turn_lateral_accel``
#: of ``presets/locomotion_speeds.json``, written by
#: ``bench/locomotion_default_speeds.py``; read by :func:`.gaits.speeds_table`).
_TURN_ACCEL = None


def turn_lateral_scale(style) -> float:
    """How hard ``style`` (a name, a ``{name: weight}`` blend or None)
    corners: its walk-turn clips' lateral acceleration over the normal
    style's (1.0 for normal or unknown styles; active 1.6, elderly 0.6)."""
    global _TURN_ACCEL
    if _TURN_ACCEL is None:
        styles = speeds_table()
        _TURN_ACCEL = {k: v["turn_lateral_accel"]["median"] for k, v in styles.items() if "turn_lateral_accel" in v}
    base = _TURN_ACCEL.get("normal")
    if not base or style is None:
        return 1.0
    weights = {style: 1.0} if isinstance(style, str) else dict(style)
    total = sum(float(w) for w in weights.values())
    if total <= 0:
        return 1.0
    return float(sum(float(w) * _TURN_ACCEL.get(k, base) for k, w in weights.items()) / (total * base))


def _gait_limits(top_speed: float, lateral_scale: float = 1.0):
    """Default (accel, decel, lateral accel), m/s^2: ~1.5 for walking (people
    take 1-2 steps to reach walking speed), more for runs. The walking
    lateral acceleration (1.0: the normal style's turn clips reach 1.05) is
    times ``lateral_scale`` (:func:`turn_lateral_scale`); a run's is not (the
    data has no running turns)."""
    run = min(max((top_speed - 1.8) / 1.5, 0.0), 1.0)  # 0 = walk, 1 = run (>= 3.3 m/s)
    accel = 1.5 + 2.0 * run
    return accel, accel, float(lateral_scale) * (1.0 - run) + 3.0 * run


def standing_pose(controller, position, yaw: float, style) -> Motion:
    """The controller's standing pose (one frame, world space) at
    ``position`` (m, XY) facing ``yaw`` (rad): what ``reset`` starts from
    (the neural controller: the style's idle stance, :mod:`.stance`). The
    controller is reset there."""
    controller.reset(position=tuple(position), yaw=float(yaw), style=style)
    return controller.pose()


#: How far ahead (s at the speed command) along the path the facing asked
#: of the controller is taken. People face a little ahead of where they
#: travel in a turn (in the walk clips the facing leads the travel by
#: 0.12-0.25 s); the controller and the spring lag the command, so the ask
#: is further ahead than the lead it gives (``bench/bench_turn_facing.py``
#: measures it).
FACING_LEAD_SECONDS = 0.45


@dataclass(frozen=True)
class FollowConfig:
    """How :func:`follow_path` drives the controller. Metres, seconds, m/s,
    m/s^2.

    - ``max_seconds``: hard limit on the clip duration (None: the planned
      time times 1.5 plus 5 s plus ``hold_seconds``).
    - ``accel``, ``decel``, ``lateral_accel`` (m/s^2): None = from the top
      speed (walk ~1.5 / 1.5 / 1.0, run up to 3.5 / 3.5 / 3.0).
    - ``lateral_scale``: the walking lateral acceleration's factor; None =
      the style's own (:func:`turn_lateral_scale`: its turn clips').
    - ``lookahead_seconds``, ``min_lookahead`` (m): pure-pursuit look-ahead
      distance = max(min_lookahead, lookahead_seconds * current speed command).
    - ``facing_lead_seconds``: the facing is the path tangent this far ahead
      (at the speed command) of the root's projection, so the body turns
      into a bend before its path does; None = :data:`FACING_LEAD_SECONDS`.
    - ``stop_radius`` (m), ``stop_lag_seconds``: the stop phase starts when
      the root, extrapolated ``stop_lag_seconds`` ahead at its current speed
      toward the end point (the controller keeps moving for a while after a
      stop command), is within ``stop_radius`` of it, or has passed it.
    - ``hold_seconds``, ``rest_speed`` (m/s), ``max_extra_hold_seconds``: the
      stop phase lasts at least ``hold_seconds`` (>= 0.5 s so the standing
      pose settles), then until the root's smoothed speed is below
      ``rest_speed``, at most ``max_extra_hold_seconds`` longer.
    - ``hold_speed`` (m/s): during the stop phase the command is a slow drift
      back toward the end point, at most this fast (0 = a pure zero velocity
      command): it cancels the creep of a controller whose "standing" still
      moves a little, and is too slow to start a step.
    - ``settle_seconds``: zero-velocity frames run after ``reset`` and thrown
      away, so the clip starts from the controller's standing pose.
    - ``approach_seconds``: near the end the speed is at most
      ``distance_to_end / approach_seconds`` (a proportional approach that
      absorbs the controller's lag instead of overshooting).
    - ``arrive_radius`` (m): the stop phase also goes on (within the extra
      hold time) until the root is this close to the end point.
    - ``stop_decel`` (m/s^2): the braking asked for on the way to the end
      (gentler than ``decel``: the controller lags the command by ~0.5 s, so
      a late hard brake arrives fast).
    - ``stand_blend_seconds``, ``stand_hold_seconds``: then the clip blends
      (:func:`blend_to_pose`) into the controller's standing pose
      (:func:`standing_pose`) with its root on the end point, facing along
      the last segment, and holds it: a learned controller trained on clips
      with few idle frames never quite stops by itself (it creeps at ~0.3
      m/s), and the end must stand. With a controller that predicts its
      feet, the feet step into the stance one at a time meanwhile
      (:func:`.stance.settle_steps`; the blend lasts as long as the steps
      when that is longer). 0 blend = no standing end.
    """

    max_seconds: float = None
    accel: float = None
    decel: float = None
    lateral_accel: float = None
    lateral_scale: float = None
    lookahead_seconds: float = 0.7
    min_lookahead: float = 0.35
    facing_lead_seconds: float = None
    stop_radius: float = 0.08
    stop_lag_seconds: float = 0.6
    hold_seconds: float = 0.6
    hold_speed: float = 0.25
    rest_speed: float = 0.25
    max_extra_hold_seconds: float = 1.5
    settle_seconds: float = 0.3
    approach_seconds: float = 0.6
    arrive_radius: float = 0.1
    stop_decel: float = 0.75
    stand_blend_seconds: float = 0.5
    stand_hold_seconds: float = 0.4


@dataclass
class _Follow:
    """:func:`follow_path`'s running state and per-frame record: the plan
    (``path``, ``profile``, ``accel``), the character (``root`` XY, its
    smoothed velocity ``root_vel``, progress ``s_proj``), the speed command
    ``v_cmd``, the first frame of the stop phase, the pauses still to come
    (``(arc m, seconds)``, sorted; for the first one, the frame its stop
    began and the frame the character stood on it), and one row per frame."""

    path: Path2D
    profile: np.ndarray
    cfg: FollowConfig
    style: object
    accel: float
    ctl_fps: float
    root: np.ndarray
    progress: Progress
    s_proj: float = 0.0
    v_cmd: float = 0.0
    stop_frame: int = None
    root_vel: np.ndarray = field(default_factory=lambda: np.zeros(2))
    pauses: list = field(default_factory=list)
    pause_frame: int = None
    stand_frame: int = None
    poses: list = field(default_factory=list)
    arcs: list = field(default_factory=list)
    targets: list = field(default_factory=list)
    roots: list = field(default_factory=list)
    commands: list = field(default_factory=list)
    stopping: list = field(default_factory=list)
    contacts: list = field(default_factory=list)  # the controller's predicted contacts after each step
    feet: list = field(default_factory=list)  # and its predicted foot positions
    paused: list = field(default_factory=list)

    def record(self, pose, contacts, feet, command, stopping: bool) -> None:
        self.poses.append(pose)
        self.contacts.append(contacts)
        self.feet.append(feet)
        self.arcs.append(self.s_proj)
        self.targets.append(self.path.at(self.s_proj))
        self.roots.append(self.root)
        self.commands.append(command)
        self.stopping.append(stopping)
        self.paused.append(self.pause_frame is not None)


def _gait_config(path: Path2D, speed, style, cfg: FollowConfig):
    """``(accel, decel, lateral_accel)`` (m/s^2): the config's, or the
    defaults for the top requested speed and the style's cornering."""
    if callable(speed):
        top = max(float(speed(s)) for s in path.s[:: max(len(path.s) // 50, 1)])
    else:
        top = float(np.max(speed))
    lateral_scale = turn_lateral_scale(style) if cfg.lateral_scale is None else cfg.lateral_scale
    d_acc, d_dec, d_lat = _gait_limits(top, lateral_scale)
    accel = d_acc if cfg.accel is None else float(cfg.accel)
    decel = d_dec if cfg.decel is None else float(cfg.decel)
    lateral_accel = d_lat if cfg.lateral_accel is None else float(cfg.lateral_accel)
    return accel, decel, lateral_accel


def _settle(controller, path: Path2D, style, cfg: FollowConfig):
    """Reset the controller on the path's start, facing its first segment,
    and run ``settle_seconds`` of standing still (thrown away). Returns the
    last pose and the controller's frame rate."""
    start_yaw = float(features.yaw_from_facing(path.start_dir))
    controller.reset(position=tuple(path.xy[0]), yaw=start_yaw, style=style)
    stand = Control(velocity=(0.0, 0.0), facing=tuple(path.start_dir), style=style)
    first = controller.step(stand)
    ctl_fps = float(first.fps)
    for _ in range(int(round(cfg.settle_seconds * ctl_fps)) - 1):
        first = controller.step(stand)
    return first, ctl_fps


def _max_frames(path: Path2D, profile: np.ndarray, cfg: FollowConfig, ctl_fps: float, pauses=()) -> int:
    max_seconds = cfg.max_seconds
    if max_seconds is None:
        # Planned time: integrate ds / v over the profile (with a floor so the zero at the end stays finite).
        planned = float(np.sum(path.ds / np.maximum(profile, 0.2)))
        max_seconds = 1.5 * planned + 5.0 + cfg.hold_seconds
        if pauses:
            max_seconds += sum(t + cfg.max_extra_hold_seconds for _, t in pauses)
    return max(int(round(max_seconds * ctl_fps)), 1)


def _stop_command(st: _Follow, f: int, to_end, dist_end: float, closing: float, start: int = None, facing=None):
    """The stop phase's command ``(velocity, facing)``: a slow drift onto the
    end point; None once the character has stood long enough. ``start``,
    ``facing``: the phase's first frame and the facing (default: the end's
    stop phase; a pause gives its own, ``to_end`` then being its point)."""
    cfg, fps = st.cfg, st.ctl_fps
    held = f - (st.stop_frame if start is None else start)
    hold_frames = max(int(np.ceil(cfg.hold_seconds * fps)), 1)
    extra_frames = int(round(cfg.max_extra_hold_seconds * fps))
    # On the end point and slow, or as close as it gets (no longer closing in).
    settled = dist_end < cfg.arrive_radius and (np.linalg.norm(st.root_vel) < cfg.rest_speed or closing <= 0.0)
    if held >= hold_frames and (settled or held >= hold_frames + extra_frames):
        return None
    vel = to_end / cfg.approach_seconds
    n = np.linalg.norm(vel)
    if n > cfg.hold_speed:
        vel *= cfg.hold_speed / n
    return vel, st.path.end_dir if facing is None else facing


def _walk_command(st: _Follow, to_end, dist_end: float):
    """The walking command ``(velocity, facing)``: the planned speed (limited
    by the braking to the end, the approach and the acceleration in time)
    toward the pure-pursuit look-ahead point, facing the path a little ahead."""
    cfg, path = st.cfg, st.path
    v_allowed = min(float(np.interp(st.s_proj, path.s, st.profile)), _brake_speed(st, path.length, dist_end))
    if st.pauses:  # brake to the next pause the way it brakes to the end
        s_stop = st.pauses[0][0]
        v_allowed = min(v_allowed, float(_brake_speed(st, s_stop, float(np.linalg.norm(path.at(s_stop) - st.root)))))
    # Acceleration limit in time (the plan in arc length cannot see that
    # the character starts standing); braking follows the plan at once.
    st.v_cmd = min(v_allowed, st.v_cmd + st.accel * (1.0 / st.ctl_fps))
    look = max(cfg.min_lookahead, cfg.lookahead_seconds * st.v_cmd)
    s_look = st.s_proj + look
    gate = st.progress.gate()
    if gate is not None:
        s_look = min(s_look, gate[0])  # walk up to a sharp corner before aiming past it
    if st.pauses:
        s_look = min(s_look, st.pauses[0][0])  # and up to the next pause
    if s_look >= path.length:
        # Past the end of the path: aim at the end point itself.
        aim = to_end
    else:
        aim = path.at(s_look) - st.root
    n = np.linalg.norm(aim)
    vel = st.v_cmd * aim / n if n > 1e-6 else np.zeros(2)
    lead = FACING_LEAD_SECONDS if cfg.facing_lead_seconds is None else cfg.facing_lead_seconds
    facing = path.tangent_at(min(st.s_proj + lead * st.v_cmd, path.length))
    if st.s_proj >= path.length - 0.5 * cfg.min_lookahead:
        facing = path.end_dir
    return vel, facing


def parse_pauses(text: str, what: str = "Pauses") -> list:
    """Pauses written as text, ``"ARC,SECONDS; ARC,SECONDS"`` (metres along
    the path, seconds; ``;`` between pauses; empty: none) → ``[(arc m,
    seconds)]`` in the order given (:func:`check_pauses` checks and sorts
    them against a path). :class:`UserError` naming ``what`` for text that
    is not pairs of numbers."""
    out = []
    for part in str(text or "").split(";"):
        if not part.strip():
            continue
        try:
            a, t = (float(v) for v in part.split(","))
        except ValueError:
            raise UserError(f"{what} {part.strip()!r} is not ARC,SECONDS (metres along the path, seconds), "
                            "e.g. 4,1.5; separate pauses with ';'") from None
        out.append((a, t))
    return out


def check_pauses(path: Path2D, pauses) -> list:
    """``pauses`` (``(arc length m, seconds)`` pairs) sorted along the path;
    :class:`UserError` for a pair that is not two finite numbers, negative
    seconds, an arc length not strictly inside the path (0, length), or
    more standing in all than a take may last (``limits``' path_seconds)."""
    out = []
    for p in pauses:
        try:
            a, t = (float(x) for x in p)
        except (TypeError, ValueError):
            raise UserError(f"a pause is (arc length in m, seconds), got {p!r}") from None
        if not (np.isfinite(a) and np.isfinite(t)):
            raise UserError(f"pause {p!r}: the arc length and the seconds must be finite numbers")
        if t < 0.0:
            raise UserError(f"pause at {a:g} m: {t:g} s is negative; give the seconds to stand there (0 or more)")
        if not 0.0 < a < path.length:
            raise UserError(f"pause at {a:g} m is not on the path, which is {path.length:.2f} m long; "
                            "give an arc length between 0 and that")
        out.append((a, t))
    hi = RANGES["path_seconds"][1]
    if sum(t for _, t in out) > hi:
        raise UserError(f"the pauses add up to {sum(t for _, t in out):g} s; a take lasts at most {hi:g} s")
    return sorted(out)


def _brake_speed(st: _Follow, s_point: float, dist: float):
    """The speed (m/s) that brakes onto the point ``s_point`` m along the
    path (the end or a pause), ``dist`` m from the character: ``stop_decel``
    over the arc left, and on the last 1.5 m the proportional approach."""
    cfg = st.cfg
    v = np.sqrt(2.0 * cfg.stop_decel * max(s_point - st.s_proj, 0.0))
    if st.s_proj > s_point - 1.5:
        v = min(v, dist / cfg.approach_seconds)
    return v


def _arriving(st: _Follow, s_point: float, dist: float, closing: float, passed_by: float) -> bool:
    """Whether the stop phase onto the point ``s_point`` m along the path
    (``dist`` m away, approached at ``closing`` m/s) begins: only on the
    last 1.5 m, when within ``stop_radius``, when past it (progress beyond
    ``s_point - passed_by`` and within 0.5 m), or when the controller's lag
    (``stop_lag_seconds`` of the closing speed) would carry it within."""
    cfg = st.cfg
    predicted = dist - cfg.stop_lag_seconds * max(closing, 0.0)
    passed = st.s_proj >= s_point - passed_by and dist < 0.5
    return st.s_proj > s_point - 1.5 and (dist < cfg.stop_radius or passed or predicted < cfg.stop_radius)


def _closing(st: _Follow, to_point) -> tuple:
    """Distance (m) to a point ``to_point`` away and the speed (m/s) at which
    the character approaches it: only the part of its velocity toward the
    point counts (a cross-track error would otherwise keep an extrapolated
    point outside ``stop_radius``)."""
    dist = float(np.linalg.norm(to_point))
    return dist, float(np.dot(st.root_vel, to_point)) / max(dist, 1e-6)


#: What :func:`_command` returns when a pause's stop phase is over: blend
#: into the standing pose (:func:`_stand_at_pause`).
_STAND = "stand"


def _pause_command(st: _Follow, f: int):
    """The next pause's command: None while walking on toward it. Its stop
    phase begins and runs as the end's does (:func:`_command`,
    :func:`_stop_command`: a slow drift onto the pause point); then
    :data:`_STAND` (the body blends into the standing pose on the point,
    :func:`_stand_at_pause`); then, standing, the controller's own idle
    for the pause's seconds (the same slow drift onto the point, zero
    there); then the pause is done
    (None) and the walk starts again from standing (``v_cmd`` 0)."""
    s_stop, seconds = st.pauses[0]
    facing = st.path.tangent_at(s_stop)
    to_stop = st.path.at(s_stop) - st.root
    if st.stand_frame is not None:
        if f - st.stand_frame < int(round(seconds * st.ctl_fps)):
            # The stop phase's drift (too slow to start a step: zero on the
            # point) holds a controller whose idle creeps (motion matching's).
            vel = to_stop / st.cfg.approach_seconds
            n = np.linalg.norm(vel)
            return (vel * st.cfg.hold_speed / n if n > st.cfg.hold_speed else vel), facing
        st.pauses.pop(0)
        st.pause_frame = st.stand_frame = None
        st.v_cmd = 0.0
        return None
    dist, closing = _closing(st, to_stop)
    if st.pause_frame is None:
        if not _arriving(st, s_stop, dist, closing, passed_by=0.0):
            return None
        st.pause_frame = f
    command = _stop_command(st, f, to_stop, dist, closing, start=st.pause_frame, facing=facing)
    return _STAND if command is None else command


def _command(st: _Follow, f: int):
    """Frame ``f``'s command ``(velocity, facing)``, starting the stop phase
    when the end is (about to be) reached (or standing at a pause: see
    :func:`_pause_command`); None when the walk is over."""
    path = st.path
    if st.pauses:
        command = _pause_command(st, f)
        if command is not None:
            return command
    to_end = path.xy[-1] - st.root
    dist_end, closing = _closing(st, to_end)
    # Only on the last stretch (_arriving): a closed path (a circle drawn
    # back to its start) begins on its own end point.
    if st.stop_frame is None and not st.pauses and _arriving(st, path.length, dist_end, closing, passed_by=1e-6):
        st.stop_frame = f
    if st.stop_frame is not None:
        return _stop_command(st, f, to_end, dist_end, closing)
    return _walk_command(st, to_end, dist_end)


def _drive(controller, st: _Follow, max_frames: int) -> None:
    """The closed loop: command, step, measure, until the character has
    stood on the end point or ``max_frames`` ran out."""
    dt = 1.0 / st.ctl_fps
    vel_alpha = 1.0 - np.exp(-dt / 0.15)  # ~0.15 s smoothing: the hips sway within a step
    while len(st.poses) < max_frames:
        f = len(st.poses)
        command = _command(st, f)
        if command is None:
            break
        if command is _STAND:
            _stand_at_pause(controller, st)
            continue
        vel, facing = command
        pose = controller.step(Control(velocity=tuple(vel), facing=tuple(facing), style=st.style))
        new_root = pose.root_positions[0, :2].copy()
        st.root_vel += vel_alpha * ((new_root - st.root) / dt - st.root_vel)
        st.root = new_root
        st.s_proj = st.progress.update(st.root)
        st.record(pose, getattr(controller, "contacts", None), getattr(controller, "feet", None), vel,
                  st.stop_frame is not None)


def _stand_at_end(controller, st: _Follow) -> None:
    """End standing: an inertialised blend into the standing pose on the end
    point, then ``stand_hold_seconds`` of it."""
    path = st.path
    n_hold = int(round(st.cfg.stand_hold_seconds * st.ctl_fps))
    _blend_to_stand(controller, st, path.xy[-1], path.end_dir, n_hold, lambda xy: path.project(xy, st.s_proj), True)


def _stand_at_pause(controller, st: _Follow) -> None:
    """At a pause: the same blend into the standing pose, on the pause point
    facing along the path there (the controller is reset on it, so its idle
    and the walk on start from that stance); none when ``stand_blend_seconds``
    is 0. Marks the frame the character stands from."""
    s_stop = st.pauses[0][0]
    if len(st.poses) >= 2 and st.cfg.stand_blend_seconds > 0:
        _blend_to_stand(controller, st, st.path.at(s_stop), st.path.tangent_at(s_stop), 0, st.progress.update, False)
    st.stand_frame = len(st.poses)
    st.root_vel = np.zeros(2)


def _blend_to_stand(controller, st: _Follow, xy, direction, n_hold: int, project, stopping: bool) -> None:
    """Record an inertialised blend (``stand_blend_seconds``) into the
    controller's standing pose at ``xy`` (m) facing ``direction`` (unit XY),
    then ``n_hold`` frames of it. ``project(root_xy)`` gives each frame's
    progress (arc length, m); ``stopping`` is recorded per frame."""
    cfg, ctl_fps = st.cfg, st.ctl_fps
    stand = standing_pose(controller, xy, features.yaw_from_facing(direction), st.style)
    n_blend = max(int(round(cfg.stand_blend_seconds * ctl_fps)), 1)
    tail_feet = tail_contacts = None
    if st.feet and st.feet[-1] is not None:
        # The feet step into the stance one at a time (the other planted)
        # while the body blends into it: blending the feet too would
        # slide them, and the cleanup would pin them where they were
        # and bend the knees to reach.
        stance_feet = stand.world_positions()[0][list(features.CONTACT_INDEX)]
        n_blend = max(n_blend, settle_frames(st.feet[-1], stance_feet, ctl_fps))
        last_c = st.contacts[-1]
        lifted = None if last_c is None else np.asarray(last_c)[[0, 2]] < 0.5
        steps, step_contacts = settle_steps(st.feet[-1], stance_feet, n_blend, ctl_fps, lifted)
        tail_feet = np.concatenate([steps, np.repeat(stance_feet[None], n_hold, 0)])
        tail_contacts = np.concatenate([step_contacts, np.ones((n_hold, 4))])
    tail = blend_to_pose(st.poses[-2], st.poses[-1], stand, n_blend)
    tail = concat_poses([tail] + [stand] * n_hold, ctl_fps)
    for k in range(tail.num_frames):
        if tail_contacts is not None:
            contacts = tail_contacts[k]
        else:
            # Blending: no prediction (detection decides); standing: both feet down.
            contacts = np.full(4, 0.0 if k < n_blend else 1.0)
        st.root = tail.root_positions[k, :2].copy()
        st.s_proj = project(st.root)
        st.record(tail.slice(k, k + 1), contacts, tail_feet[k] if tail_feet is not None else None, np.zeros(2),
                  stopping)


def _result(st: _Follow) -> PathResult:
    motion = concat_poses(st.poses, st.ctl_fps)
    motion.name = "follow_path"
    root_xy = np.array(st.roots)
    return PathResult(
        motion=motion,
        target_xy=np.array(st.targets),
        arc=np.array(st.arcs),
        root_xy=root_xy,
        error=st.path.distance(root_xy),
        command=np.array(st.commands),
        stopping=np.array(st.stopping),
        path_xy=st.path.xy,
        profile=st.profile,
        stopped_at=st.stop_frame,
        length=st.path.length,
        contacts=stack_rows(st.contacts),
        feet=stack_rows(st.feet),
        paused=np.array(st.paused, dtype=bool),
    )


def follow_path(controller, points_xy, *, speed=1.3, style: str = "normal", fps: float = 30.0,
                config: FollowConfig = FollowConfig(), pauses=()) -> PathResult:
    """Walk ``controller`` along the polyline ``points_xy [N, 2]`` (world XY,
    metres; a dense polyline sampled from a curve works too) and return the
    clip in world space with per-frame tracking data (:class:`PathResult`).

    Args:
        speed: m/s; a number, one value per (distinct) input point
            (interpolated along the path) or a function of arc length (m).
        style: the style key asked of the controller (None = any).
        fps: frame rate of the returned clip (the controller runs at its own
            rate; the result is resampled when they differ).
        config: the follower's limits and timings (:class:`FollowConfig`).
        pauses: ``((arc length m, seconds), ...)``: stop at that distance
            along the path (braking into it as into the end), stand there for
            the seconds (the controller's idle), then walk on from standing.
            :class:`UserError` for negative seconds or an arc length not
            strictly inside the path (:func:`check_pauses`).
    """
    path = Path2D(points_xy)
    pauses = check_pauses(path, pauses)
    accel, decel, lateral_accel = _gait_config(path, speed, style, config)
    profile = speed_profile(path, speed, lateral_accel=lateral_accel, decel=decel)
    first, ctl_fps = _settle(controller, path, style, config)
    st = _Follow(path=path, profile=profile, cfg=config, style=style, accel=accel, ctl_fps=ctl_fps,
                 root=first.root_positions[0, :2].copy(), progress=Progress(path), pauses=list(pauses))
    st.s_proj = st.progress.update(st.root)
    _drive(controller, st, _max_frames(path, profile, config, ctl_fps, pauses))
    if len(st.poses) >= 2 and st.stop_frame is not None and config.stand_blend_seconds > 0:
        _stand_at_end(controller, st)
    result = _result(st)
    if abs(ctl_fps - fps) > 1e-6:
        result = _resample_result(result, fps)
    return result


#: Share of the hips' along-track surge (within a step) kept by
#: :func:`snap_to_path`, chosen on the validation paths: the network's hips
#: speed varies within a stride by 0.26-0.35 (std / mean; the validation
#: mocap's normal walks 0.20-0.21), 0.14-0.20 with half of it kept.
SURGE_KEEP = 0.5


#: Soft limit (m, Bandai skeleton) on how far the hips stray from their
#: smoothed track: linear up to the knee, then easing toward the cap. The
#: validation mocap's walks (turns included) stray 2.5 cm (median), 8.2 cm
#: (99th percentile), 12 cm at most; the network, pivoting through a
#: U-turn, throws the hips 30 cm out.
HIPS_STRAY_KNEE = 0.05
HIPS_STRAY_CAP = 0.10


def _soft_cap(r: np.ndarray, knee: float, cap: float) -> np.ndarray:
    """Vectors ``r [F, 2]`` with their length kept below ``knee`` and eased
    (tanh, continuous slope) toward ``cap`` above it."""
    n = np.linalg.norm(r, axis=1, keepdims=True)
    over = np.maximum(n - knee, 0.0)
    n_new = np.where(n > knee, knee + (cap - knee) * np.tanh(over / (cap - knee)), n)
    return r * n_new / np.maximum(n, 1e-12)


def _despike(x: np.ndarray, width: int = 5) -> np.ndarray:
    """``x [F, ...]`` with one- and two-frame spikes removed: a running
    median over ``width`` frames, then a one-frame Gaussian."""
    # scipy.ndimage.median_filter(x, (width, 1, ...), mode="nearest") in
    # NumPy: the walk command does not import scipy.ndimage (issue #14).
    h = width // 2
    padded = np.pad(x, [(h, width - 1 - h)] + [(0, 0)] * (x.ndim - 1), mode="edge")
    med = np.median(np.lib.stride_tricks.sliding_window_view(padded, width, axis=0), axis=-1)
    return gaussian_filter1d(med, 1.0, axis=0, mode="nearest")


@dataclass(frozen=True)
class SnapConfig:
    """How :func:`snap_to_path` moves the body onto the path. The three
    durations are Gaussian sigmas in seconds.

    - ``sway_seconds``: the hips' ground track is smoothed over this (the
      side-to-side sway of each step is motion, not error, and is kept).
    - ``progress_seconds``: the tracked point's progress along the path is
      smoothed over this (the projection jumps across a corner's inside).
    - ``offset_seconds``: the body's offset onto the path is smoothed over
      this (a polyline corner becomes a bend ~``speed x offset_seconds``
      wide instead of a kink in the hips' velocity).
    - ``surge_keep``: share (0-1) of the hips' along-track surge within a
      step that is kept (:data:`SURGE_KEEP`).
    """

    sway_seconds: float = 0.3
    progress_seconds: float = 0.25
    offset_seconds: float = 0.15
    surge_keep: float = SURGE_KEEP


def _monotone_between_pauses(arc: np.ndarray, paused: np.ndarray) -> np.ndarray:
    """``arc [F]`` made monotone within each stretch of walking frames and
    left as projected where ``paused [F]``: the stop before a pause
    overshoots its point and the blend into the stance steps back onto it
    (a running maximum would hold the body at the overshoot)."""
    out = arc.copy()
    for a, b in zip(*runs(~paused)):
        out[a:b] = np.maximum.accumulate(arc[a:b])
    return out


def _snap_progress(path: Path2D, tracked: np.ndarray, fps: float, cfg: SnapConfig, stands: bool,
                   paused: np.ndarray = None) -> np.ndarray:
    """Arc length ``[F]`` (m) of the tracked point ``[F, 2]`` along the path:
    in order, monotone (but while ``paused``: :func:`_monotone_between_pauses`),
    smoothed; the path's end on the last frame when the clip ends standing."""
    arc = np.empty(len(tracked))
    # A narrow window (0.3 m a frame: 9 m/s) keeps the progress continuous
    # where the path doubles back on itself (a U-turn's legs overlap: a wide
    # window lets the projection jump to the way back).
    progress = Progress(path, reach=0.35, reverse=True)
    vel = np.gradient(tracked, axis=0)
    for f, xy in enumerate(tracked):
        arc[f] = progress.update(xy, vel[f], back=0.1, ahead=0.3)
    arc = _monotone_between_pauses(arc, np.zeros(len(arc), bool) if paused is None else np.asarray(paused, bool))
    arc = np.clip(gaussian_filter1d(arc, max(cfg.progress_seconds * fps, 1e-3), mode="nearest"), 0.0, path.length)
    if stands:
        arc[-1] = path.length
    return arc


def _snap_offset(path: Path2D, tracked: np.ndarray, arc: np.ndarray, fps: float, cfg: SnapConfig,
                 stands: bool) -> np.ndarray:
    """Smooth offset ``[F, 2]`` (m) that puts the tracked point on the path
    at its progress ``arc``; on the end point exactly when the clip ends
    standing."""
    offset = path.at(arc) - tracked
    if stands:
        # Standing frames at the end: the same offset as the last frame (the end point, exactly).
        still = np.linalg.norm(np.diff(tracked, axis=0), axis=1) * fps < 1e-3
        k = len(tracked) - 1
        while k > 0 and still[k - 1]:
            k -= 1
        offset[k:] = offset[-1]
    offset = gaussian_filter1d(offset, max(cfg.offset_seconds * fps, 1e-3), axis=0, mode="nearest")
    if stands:
        offset[-1] = path.xy[-1] - tracked[-1]
    return offset


def _clean_hips(m: Motion, trans: np.ndarray, hips: int, tracked: np.ndarray, surge_keep: float) -> None:
    """Move the hips (in ``trans``, in place) about the tracked point:
    despiked, softly capped and with only ``surge_keep`` of their
    along-track surge."""
    fps = float(m.fps)
    hips_xy = m.world_positions()[:, hips, :2]
    residual = hips_xy - tracked
    vel = np.gradient(tracked, axis=0)
    speed = np.linalg.norm(vel, axis=1, keepdims=True)
    along = vel / np.maximum(speed, 1e-9)
    clean = _soft_cap(_despike(residual), HIPS_STRAY_KNEE, HIPS_STRAY_CAP)
    a = np.sum(clean * along, axis=1, keepdims=True)
    # Fade the surge cut in with the speed (standing: nothing to cut).
    w = np.clip(speed * fps / 0.3, 0.0, 1.0)
    clean = clean - (1.0 - surge_keep) * w * a * along
    extra = clean - residual
    # Into the root's frame (joint 0 turns by its yaw about +Z).
    q = m.rotations[:, 0]
    yaw = 2.0 * np.arctan2(q[:, 3], q[:, 0])
    c, s_ = np.cos(yaw), np.sin(yaw)
    trans[:, hips, 0] += c * extra[:, 0] + s_ * extra[:, 1]
    trans[:, hips, 1] += -s_ * extra[:, 0] + c * extra[:, 1]


def snap_to_path(res: PathResult, points_xy, *, config: SnapConfig = SnapConfig()) -> PathResult:
    """The result with the whole body moved onto the drawn path.

    The controller follows the path closed-loop but lags it: its root cuts
    corners by 20-40 cm, the hips swing further out of a sharp turn, and
    both wander a few cm on straights. What the user sees travel is the
    hips, so the tracked point is the hips' ground position smoothed over
    ``sway_seconds`` (the side-to-side sway of each step is motion, not
    error, and is kept). Each frame's body is translated (never turned) by a
    smooth offset that puts the tracked point on the path at its own
    progress: the progress is its in-order projection on the path, made
    monotone and smoothed over ``progress_seconds`` (the projection jumps
    across the inside of a corner); the offset (path point at that progress
    minus the tracked point) is smoothed over ``offset_seconds`` (a polyline
    corner becomes a bend ~``speed x offset_seconds`` wide instead of a kink
    in the hips' velocity). When the clip ends standing (``stopped_at``),
    its last frame's tracked point is on the end point exactly. The offset
    moves planted feet a little; :func:`.cleanup.pin_feet`, which runs after,
    locks them (the predicted ``feet`` move with the body).

    The hips' own motion about the tracked point (the sway and the surge of
    each step) is kept, but cleaned: spikes of one or two frames (a network
    glitch the whole body jumps with) are removed (:func:`_despike`), its
    distance is softly capped like the mocap's (:data:`HIPS_STRAY_CAP`), and
    only ``surge_keep`` of its component along the direction of travel is
    kept (:data:`SURGE_KEEP`). That moves the hips alone, relative to the
    feet, which the foot clean-up then re-solves the legs for.

    ``points_xy [N, 2]``: the path the result followed (m); ``config``: the
    smoothing (:class:`SnapConfig`). Returns a new :class:`PathResult`
    (``root_xy`` and ``error`` of the moved root; ``target_xy``/``arc`` the
    progress used)."""
    path = Path2D(points_xy)
    m = res.motion
    fps = float(m.fps)
    hips = int(np.nonzero(m.skeleton.parents == 0)[0][0]) if np.any(m.skeleton.parents == 0) else 0
    tracked = gaussian_filter1d(m.world_positions()[:, hips, :2], max(config.sway_seconds * fps, 1e-3), axis=0,
                                mode="nearest")
    stands = res.stopped_at is not None
    arc = _snap_progress(path, tracked, fps, config, stands, res.paused)
    offset = _snap_offset(path, tracked, arc, fps, config, stands)
    d3 = np.concatenate([offset, np.zeros((len(offset), 1))], axis=1)
    trans = None
    if m.translations is not None:
        trans = m.translations.copy()
        trans[:, m.skeleton.parents < 0] += d3[:, None]
        if np.any(m.skeleton.parents == 0) and m.skeleton.parents[hips] == 0:
            _clean_hips(m, trans, hips, tracked, config.surge_keep)
    motion = Motion(m.skeleton, m.rotations, m.root_positions + d3, m.fps, trans, name=m.name)
    root_xy = res.root_xy + offset
    feet = None if res.feet is None else res.feet + d3[:, None]
    return PathResult(
        motion=motion, target_xy=path.at(arc), arc=arc, root_xy=root_xy, error=path.distance(root_xy),
        command=res.command, stopping=res.stopping, path_xy=res.path_xy, profile=res.profile,
        stopped_at=res.stopped_at, length=res.length, contacts=res.contacts, feet=feet, paused=res.paused,
    )


def _resample_result(res: PathResult, fps: float) -> PathResult:
    """The result at another frame rate: the motion is resampled, the per
    frame arrays are interpolated (booleans: nearest earlier frame)."""
    src_fps = res.motion.fps
    motion = resample(res.motion, fps)
    n = motion.num_frames
    t_src = np.arange(res.motion.num_frames) / src_fps
    t = np.arange(n) / fps

    def lerp(a):
        return _interp_rows(a, t_src, t)

    idx = np.clip(np.floor(t * src_fps + 1e-6).astype(int), 0, len(t_src) - 1)
    stopped_at = None if res.stopped_at is None else int(np.ceil(res.stopped_at * fps / src_fps - 1e-6))
    return PathResult(
        motion=motion,
        target_xy=lerp(res.target_xy),
        arc=lerp(res.arc),
        root_xy=lerp(res.root_xy),
        error=lerp(res.error),
        command=lerp(res.command),
        stopping=res.stopping[idx],
        path_xy=res.path_xy,
        profile=res.profile,
        stopped_at=stopped_at,
        length=res.length,
        contacts=None if res.contacts is None else lerp(res.contacts),
        feet=None if res.feet is None else lerp(res.feet),
        paused=None if res.paused is None else res.paused[idx],
    )


def walk_cycle(
    controller,
    *,
    speed: float,
    style: str = "normal",
    direction=(0.0, -1.0),
    seconds: float = 6.0,
    warmup_seconds: float = 2.5,
    fps: float = 30.0,
    record: dict = None,
) -> Motion:
    """Steady locomotion at ``speed`` (m/s) along ``direction`` (world XY,
    facing it): the controller walks for ``warmup_seconds`` (discarded, so
    the start-up and its transitions settle), then ``seconds`` are recorded
    and returned (world space, at ``fps``). Input for
    :func:`~.cycle.extract_cycle`. ``record`` (a dict), when given, receives
    the controller's per-frame ``contacts [F, 4]`` and ``feet [F, 4, 3]``
    for the returned frames (None where it has no such attribute), for
    :func:`~.cleanup.pin_feet`."""
    d = np.asarray(direction, dtype=np.float64).reshape(2)
    n = np.linalg.norm(d)
    if n < 1e-9:
        raise ValueError("direction must be a non-zero 2D vector")
    d = d / n
    controller.reset(position=(0.0, 0.0), yaw=float(features.yaw_from_facing(d)), style=style)
    control = Control(velocity=tuple(speed * d), facing=tuple(d), style=style)
    poses, contacts, feet = [], [], []
    ctl_fps = None
    warm = None
    total = None
    f = 0
    while total is None or f < total:
        pose = controller.step(control)
        if ctl_fps is None:
            ctl_fps = float(pose.fps)
            warm = int(round(warmup_seconds * ctl_fps))
            total = warm + int(round(seconds * ctl_fps))
        if f >= warm:
            poses.append(pose)
            contacts.append(getattr(controller, "contacts", None))
            feet.append(getattr(controller, "feet", None))
        f += 1
    motion = concat_poses(poses, ctl_fps)
    motion.name = f"walk_cycle_{style}_{speed:g}"
    resampled = abs(ctl_fps - fps) > 1e-6
    if resampled:
        motion = resample(motion, fps)
    if record is not None:
        t_src = np.arange(len(poses)) / ctl_fps
        t = np.arange(motion.num_frames) / motion.fps
        for key, rows in (("contacts", contacts), ("feet", feet)):
            a = stack_rows(rows)
            record[key] = _interp_rows(a, t_src, t) if a is not None and resampled else a
    return motion


__all__ = ["Path2D", "PathResult", "FollowConfig", "follow_path", "check_pauses", "SnapConfig", "snap_to_path", "walk_cycle", "speed_profile", "blend_to_pose", "standing_pose",
           "stack_rows", "concat_poses"]
