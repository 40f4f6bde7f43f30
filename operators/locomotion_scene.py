"""Locomotion in the scene: generate walking with a locomotion controller,
clean the feet, retarget onto the user's rig as a new action.

Two phases, so that the slow one can run off Blender's main thread:

- *generate* (:func:`generate_walk_cycle`, :func:`generate_path`): pure
  backend, no bpy. The controller is stepped frame by frame; every
  :data:`CHUNK_FRAMES` frames ``progress(fraction)`` is called and
  ``cancel()`` is asked, and a cancelled run raises :class:`Cancelled`;
- *apply* (:func:`apply_cycle`, :func:`apply_path`): retarget the Bandai
  skeleton's motion onto the rig (``retarget_scene.retarget_onto``) as a new
  action. Nothing touches the scene before this phase, so a cancelled run
  leaves the scene as it was.

:func:`bake_walk_cycle` and :func:`walk_along_path` run both phases
synchronously (scripts, the CLI, operators' ``execute``);
:func:`walk_cycle_job` / :func:`walk_path_job` are generators for modal
operators: they run the generate phase in a worker thread, yield progress
fractions while it runs, and return the action (``StopIteration.value``);
closing the generator cancels the work and writes nothing.

Blender units are taken as metres (as everywhere in RigMind); the ground is
the world XY plane.
"""

from __future__ import annotations

import math
import threading
from pathlib import Path

import numpy as np

from ..backend.errors import Cancelled, UserError
from ..backend.limits import check_all, check_path
from ..backend.tasks import finish, run_in_thread
from ..backend.locomotion.gaits import gait_title, gait_warning
from ..backend.motion import Motion
from ..backend import options, paths

#: Where the trained neural controller's weights are looked for by default.
MODELS_DIR = paths.MODELS_DIR
NEURAL_FILES = ("locomotion.onnx", "locomotion.pt")
#: Frames between progress reports / cancel checks (1 s at 30 fps).
CHUNK_FRAMES = 30
KINDS = options.CONTROLLER_KINDS
#: Least height (m, controller skeleton) the swinging foot is lifted to
#: between footholds on a path (``cleanup.PinConfig.swing_clearance``): the
#: validation mocap's normal walks peak their toes at 10.1 cm (median swing),
#: the controller's at 7.3 cm with 0.08, 9.5 with 0.11 and 10.0 with 0.115
#: and the landing slope below (``bench/bench_swing_lift.py``). On the
#: validation paths baked on X Bot, RPM and Rigify that is 0.97-0.99x their
#: retargeted mocap's (0.92-0.94x with 0.11); bench/results/walk_along_path.md, "Swing lift and knee steps".
SWING_CLEARANCE = 0.115
#: The lift's slope toward the next foothold (``PinConfig.swing_landing_slope``;
#: 0.5 from the last one): with 0.5 the higher lift held the foot up until the
#: last frames before a foothold at the edge of reach, then the leg snapped
#: straight and the knee moved more than 0.08 leg lengths in a frame while
#: straightening (the validation mocap's largest knee move: 0.067) in 60 of
#: 64 validation takes (56 with the old 0.08 lift); 7 of 64 with 0.25.
#: 0.15 since the swing pitch (below): the foot comes down sooner, as the
#: mocap's does, so the toe clearance on the four rigs is 0.96-1.12x their
#: retargeted mocap's (0.97-1.25x with 0.25), and the knee moves over 0.08
#: leg in a frame as often as before the pitch (376 leg-frames on 64
#: validation takes; 504 with 0.25); bench/results/walk_along_path.md,
#: "Swing lift and knee steps".
SWING_LANDING_SLOPE = 0.15
#: Fastest the cleaned knee may flex or straighten on a path (rad/s,
#: ``PinConfig.knee_speed``; 13.3 degrees a frame at 30 fps, the default 18):
#: knee frames moving more than 0.08 leg lengths on the validation takes
#: 918 -> 374 (with the lift above).
KNEE_SPEED = float(np.radians(400.0))
#: Whether Walk Along Path sets the swinging foot's pitch from each style's
#: training mocap (``swing_pitch.style_profiles``: toe-off, heel strike and the
#: roll to flat, ``PinConfig.swing_pitch``) instead of the network's flat
#: landing (False). See bench/results/walk_along_path.md, "Swing pitch and heel strike".
SWING_PITCH = True


def path_pin_config(style: str = "normal"):
    """The foot clean-up's settings on a path (``cleanup.PinConfig``): the
    swing lift, landing slope, knee speed and swing pitch above."""
    from ..backend.locomotion.cleanup import PinConfig
    from ..backend.locomotion.swing_pitch import style_profiles

    return PinConfig(swing_clearance=SWING_CLEARANCE, swing_landing_slope=SWING_LANDING_SLOPE, knee_speed=KNEE_SPEED,
                     swing_pitch=style_profiles(style) if SWING_PITCH else None)


#: Seconds of steady locomotion recorded to cut a cycle from (after the warm-up).
CYCLE_SECONDS = 6.0
CYCLE_WARMUP_SECONDS = 2.5

# Progress fractions at the end of each phase (generation dominates the time).
_GEN_END = 0.75
_CLEAN_END = 0.85


class ControllerError(UserError):
    """No locomotion controller can be made; the message names the fix."""


# --- controllers ---------------------------------------------------------------------

# Built controllers, keyed on what they were built from: building the
# motion-matching database reads ~100 BVH files, loading the neural model
# imports torch/onnxruntime; both are done once per session.
_CONTROLLERS: dict = {}
_CONTROLLERS_LOCK = threading.Lock()
# Controllers are stateful (reset/step): one generation at a time.
_GENERATE_LOCK = threading.Lock()


def neural_weights(models_dir=None):
    """The neural controller's weights file (``.onnx`` before ``.pt``) in
    ``models_dir`` (default: the package's ``models/``), or None."""
    folder = Path(models_dir) if models_dir else MODELS_DIR
    for name in NEURAL_FILES:
        p = folder / name
        if p.is_file():
            return p
    return None


def default_data_dir() -> Path:
    """``$RIGMIND_DATA``, else ``../shared/data`` next to the package."""
    return paths.data_dir()


def _no_model_fix(models_dir) -> str:
    folder = Path(models_dir) if models_dir else MODELS_DIR
    return (
        f"no trained locomotion model in {folder} (locomotion.onnx or locomotion.pt): train one with "
        "`rigmind train locomotion` (or set Locomotion Weights Folder in the add-on preferences)"
    )


def load_controller(kind: str = "auto", data_dir=None, *, engine: str = None, models_dir=None, styles=None, gait=None):
    """A locomotion controller with the ``reset`` / ``step`` API, cached per session.

    ``kind``:
      - ``"neural"``: the trained ``LocomotionController`` (weights
        ``locomotion.onnx`` / ``.pt`` in ``models_dir``, default the
        package's ``models/``; ``engine`` "onnxruntime" or "torch", default
        from the file found);
      - ``"motion_matching"``: the motion-matching baseline built from the
        Bandai Namco locomotion clips in ``data_dir`` (default
        ``$RIGMIND_DATA`` or ``../shared/data``), only the ``styles`` and
        ``gait`` ("walk"/"run") asked for when given (smaller database,
        built in ~1 s; the gait can only be chosen this way: the neural
        model picks it from the speed);
      - ``"auto"``: the neural controller when its weights exist, else the
        motion-matching fallback when the data exists, else a
        :class:`ControllerError` naming both fixes.
    """
    if kind not in KINDS:
        raise ControllerError(f"controller must be one of {', '.join(KINDS)}, got {kind!r}")
    if kind in ("auto", "neural"):
        weights = neural_weights(models_dir)
        if weights is not None:
            return _neural(weights, engine)
        if kind == "neural":
            raise ControllerError(_no_model_fix(models_dir) + ", or use the motion-matching controller")
    data = Path(data_dir) if data_dir else default_data_dir()
    folder = data / "bandai_namco_d2_locomotion" / "bvh"
    if not folder.is_dir():
        if kind == "auto":
            raise ControllerError(
                _no_model_fix(models_dir) + f"; the motion-matching fallback needs the Bandai Namco locomotion data "
                f"at {folder} (set RIGMIND_DATA or --data to the folder that holds bandai_namco_d2_locomotion)"
            )
        raise ControllerError(
            f"the motion-matching controller needs the Bandai Namco locomotion data at {folder}: "
            "set RIGMIND_DATA or --data to the folder that holds bandai_namco_d2_locomotion"
        )
    return _motion_matching(data, styles, gait)


def _neural(weights: Path, engine):
    eng = engine or ("onnxruntime" if weights.suffix == ".onnx" else "torch")
    if eng == "onnxruntime" and weights.suffix == ".pt" and not weights.with_suffix(".onnx").is_file():
        eng = "torch"  # only the checkpoint exists: ONNX Runtime has nothing to run
    if eng == "torch" and weights.suffix == ".onnx" and not weights.with_suffix(".pt").is_file():
        eng = "onnxruntime"
    key = ("neural", str(weights.resolve()), eng)
    with _CONTROLLERS_LOCK:
        if key not in _CONTROLLERS:
            # Imported here: the module pulls in the model I/O (and torch / onnxruntime on load).
            from ..backend.locomotion.controller import LocomotionController

            _CONTROLLERS[key] = LocomotionController.load(weights, engine=eng)
        return _CONTROLLERS[key]


def _motion_matching(data: Path, styles, gait):
    from ..backend.locomotion import dataset as D
    from ..backend.locomotion import features as FT
    from ..backend.locomotion.motion_matching import MotionMatchingController

    styles = tuple(sorted(set(styles))) if styles else None
    key = ("motion_matching", str(data.resolve()), styles, gait)
    with _CONTROLLERS_LOCK:
        if key not in _CONTROLLERS:
            clips = [
                c for c in D.list_clips(data, datasets=("d2",))
                if (styles is None or c.style_key in styles) and (gait is None or c.gait == gait)
            ]
            if not clips:
                raise ControllerError(f"no Bandai Namco locomotion clips for style {styles} / gait {gait} under {data}")
            # d2 has turns both ways, so no mirrored copies are needed.
            feats = [FT.compute_features(FT.load_clip(c), c.labels()) for c in clips]
            _CONTROLLERS[key] = MotionMatchingController.build(feats)
        return _CONTROLLERS[key]


def clear_controller_cache() -> None:
    with _CONTROLLERS_LOCK:
        _CONTROLLERS.clear()


# --- chunked generation ------------------------------------------------------------------


def _check(cancel) -> None:
    if cancel is not None and cancel():
        raise Cancelled("Cancelled")


def _report(progress, fraction: float) -> None:
    if progress is not None:
        progress(float(min(max(fraction, 0.0), 1.0)))


def _controller_fps(controller) -> float:
    fps = getattr(controller, "fps", None)
    if fps is None and hasattr(controller, "db"):
        fps = controller.db.fps
    return float(fps or 30.0)


class _Chunked:
    """The controller, with a progress report and a cancel check every
    ``chunk`` frames: the backend's path follower and cycle recorder drive
    the controller in one loop, so this is where a long run can stop."""

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
            _check(self._cancel)
            a, b = self._span
            _report(self._progress, a + (b - a) * min(self.frames / self._total, 0.99))
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
    the planted feet, cut the best loop (``cycle.extract_cycle``)."""
    from ..backend.locomotion.cleanup import pin_feet
    from ..backend.locomotion.cycle import extract_cycle
    from ..backend.locomotion.path_follow import walk_cycle

    check_all("speed", speed, option="speed")
    _check(cancel)
    total = (seconds + warmup_seconds) * _controller_fps(controller)
    record = {}
    with _GENERATE_LOCK:
        clip = walk_cycle(
            _Chunked(controller, total, progress, cancel, (0.0, _GEN_END)),
            speed=float(speed), style=style, seconds=seconds, warmup_seconds=warmup_seconds, record=record,
        )
    _check(cancel)
    # Pin before cutting: a contact that spans the loop's seam is then
    # locked once, and extract_cycle spreads the residual over the loop. The
    # controller's predicted contacts and feet are used where it gives them.
    clip = pin_feet(clip, predicted=record.get("contacts"), feet=record.get("feet"))
    _check(cancel)
    loop = extract_cycle(clip, root="in_place" if in_place else "root_motion")
    _report(progress, _CLEAN_END)
    _check(cancel)
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
    feet pinned (where the controller predicts contacts). ``path_result``
    keeps the tracking data (its ``motion`` is the un-pinned clip).

    ``speed``: m/s in the world, a number or one per point ``[N]``.
    ``scale``: the target rig's leg length over the controller skeleton's
    (:func:`path_scale`): the controller walks the path and speeds divided
    by it, so once the retarget scales the hips' travel back by it
    (``root_scale``) the rig's hips are on the drawn path in scene metres,
    with strides and cadence that fit the rig's legs. The returned motion
    and result are in the controller's (scaled) frame. ``pauses``: ``((arc
    length m, seconds), ...)`` in the world, where the character stops and
    stands (``path_follow.follow_path``)."""
    from ..backend.locomotion.cleanup import pin_feet
    from ..backend.locomotion.path_follow import FollowConfig, Path2D, follow_path, snap_to_path

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
    stops = _scaled_pauses(points_xy, pauses, scale)
    _check(cancel)
    # Expected duration: the path at the requested speed, plus start-up and the stop (and the pauses).
    total = (path.length / float(np.mean(sp)) + 2.5 + sum(t + 2.0 for _, t in stops)) * _controller_fps(controller)
    with _GENERATE_LOCK:
        result = follow_path(
            _Chunked(controller, total, progress, cancel, (0.0, _GEN_END)),
            path.points, speed=float(sp) if sp.ndim == 0 else sp, style=style,
            config=FollowConfig(max_seconds=max_seconds), pauses=stops,
        )
    _check(cancel)
    result = snap_to_path(result, path.points)
    # The controller's predicted contacts say when a foot is planted (detection
    # fills in); its predicted foot positions say where the feet are.
    motion = pin_feet(result.motion, predicted=result.contacts, feet=result.feet, config=path_pin_config(style))
    _report(progress, _CLEAN_END)
    _check(cancel)
    return motion, result


def _scaled_pauses(points_xy, pauses, scale: float) -> list:
    """World pauses ``(arc length m, seconds)`` along ``points_xy`` (checked:
    ``path_follow.check_pauses``) on the controller's path, whose metres are
    the world's divided by ``scale``."""
    from ..backend.locomotion.path_follow import Path2D, check_pauses

    if not len(pauses):
        return []
    return [(a / scale, t) for a, t in check_pauses(Path2D(points_xy), pauses)]


def rig_leg_length(arm) -> float:
    """The rig's mean hip-to-ankle leg length in world metres (object scale
    included): hip joint to knee plus knee to ankle at rest, from the mapped
    bones' heads, as ``backend.retarget.leg_length`` measures a plain FK
    leg. Read from the bones themselves, not the hierarchy, so a generated
    Rigify rig (DEF- bones parented to ORG- bones) measures like any other.
    Reads the rig (bpy): call it on the main thread."""
    from . import retarget_scene

    tmap = retarget_scene.target_mapping(arm)
    mw = _matrix(arm.matrix_world)

    def head(c):
        b = tmap.bones.get(c)
        if not b or b not in arm.data.bones:
            from . import scene_io

            raise scene_io.SceneError(f"armature '{arm.name}' has no '{c}' bone mapped: a walk needs both legs "
                                      "(upper leg, lower leg, foot); fix the bone mapping")
        return mw[:3, :3] @ np.array(arm.data.bones[b].head_local) + mw[:3, 3]

    legs = [np.linalg.norm(head(f"lowerleg_{s}") - head(f"upperleg_{s}")) + np.linalg.norm(head(f"foot_{s}") - head(f"lowerleg_{s}"))
            for s in ("l", "r")]
    return float(np.mean(legs))


def controller_leg_length(controller) -> float:
    """The controller skeleton's (Bandai's) mean hip-to-ankle leg length (m)."""
    from ..backend.bone_mapping import match_preset
    from ..backend.retarget import _resolve, leg_length

    src = getattr(controller, "skeleton", None)
    if src is None and hasattr(controller, "db"):
        src = controller.db.skeleton
    if src is None:
        raise ValueError("the controller exposes no skeleton to measure its legs on")
    return float(leg_length(src, _resolve(dict(match_preset(src, "bandai_namco").bones), src, "source")))


def path_scale(arm, controller) -> float:
    """The rig's leg length over the controller skeleton's: the factor
    between the controller's metres and the rig's strides (see
    :func:`generate_path`)."""
    return rig_leg_length(arm) / controller_leg_length(controller)


# --- default speeds ---------------------------------------------------------------------------

#: Each style's and gait's speed from its own training clips (written by
#: bench/locomotion_default_speeds.py): ``default`` (median, m/s) and
#: ``range`` (2nd-98th percentile) in the controller's (Bandai actor's) metres.


def style_speeds(style: str, gait: str = "walk") -> tuple:
    """``(default, (low, high))`` m/s of ``style`` walking or running, from
    its training clips, for a character with the controller skeleton's legs."""
    from ..backend.locomotion.gaits import speeds_table

    styles = speeds_table()
    entry = styles.get(style, styles["normal"]).get("run" if gait == "run" else "walk")
    return float(entry["default"]), (float(entry["range"][0]), float(entry["range"][1]))


def resolve_speed(speed, style: str, gait: str = "walk", scale: float = 1.0):
    """``(speed, warning)``: ``speed`` (m/s, a number or one per point; None
    = the style's default for the gait) in the world of a rig whose legs
    are ``scale`` x the controller skeleton's (speeds scale with the legs:
    the same cadence, longer strides), clamped to what the style's clips
    cover; ``warning`` says what was clamped and the range (and when a
    "run" of the style is a grounded run, :func:`gait_warning`), else None."""
    default, (lo, hi) = style_speeds(style, gait)
    lo, hi = lo * scale, hi * scale
    if speed is None:
        return round(default * scale, 3), gait_warning(style, gait)
    sp = np.asarray(speed, dtype=np.float64)
    clamped = np.clip(sp, lo, hi)
    warning = None
    if np.any(np.abs(clamped - sp) > 1e-9):
        asked = np.unique(np.round(sp[np.abs(clamped - sp) > 1e-9], 2))
        warning = (f"speed {', '.join(f'{a:g}' for a in asked)} m/s is outside what the {style} "
                   f"{'run' if gait == 'run' else 'walk'} clips cover on this rig ({lo:.2f}-{hi:.2f} m/s): clamped")
    warning = "; ".join(w for w in (warning, gait_warning(style, gait)) if w) or None
    return (float(clamped) if clamped.ndim == 0 else clamped), warning


# --- naming ---------------------------------------------------------------------------------


def _speed_text(speed) -> str:
    sp = np.asarray(speed, dtype=np.float64)
    if sp.ndim and sp.size > 1 and np.ptp(sp) > 1e-6:
        return f"{round(float(sp.min()), 2):g}-{round(float(sp.max()), 2):g} m/s"
    return f"{round(float(sp.ravel()[0] if sp.ndim else sp), 2):g} m/s"


def cycle_action_name(style: str, speed: float, gait: str = "walk") -> str:
    return f"RigMind {gait_title(style, gait)} · {style} · {_speed_text(speed)}"


def path_action_name(style: str, speed: float, gait: str = "walk", in_place: bool = False) -> str:
    where = " in place" if in_place else ""
    return f"RigMind {gait_title(style, gait)} Along Path{where} · {style} · {_speed_text(speed)}"


# --- applying to the scene (bpy) ----------------------------------------------------------


def _source_map(motion: Motion):
    from ..backend.bone_mapping import match_preset

    return match_preset(motion.skeleton, "bandai_namco")


def _shift_xy(motion: Motion, d) -> Motion:
    """``motion`` moved by ``d`` (m) on the ground plane."""
    d3 = np.array([float(d[0]), float(d[1]), 0.0])
    trans = None
    if motion.translations is not None:
        trans = motion.translations.copy()
        trans[:, motion.skeleton.parents < 0] += d3
    return Motion(motion.skeleton, motion.rotations, motion.root_positions + d3, motion.fps, trans, name=motion.name)


def _close_loop(loop: Motion) -> Motion:
    """The loop plus the frame that follows it (frame 0 again, moved on by
    one cycle's displacement): keyed as the last key, it makes the f-curve
    period exactly the loop's length, so the Cycles modifier plays frame
    L-1 -> frame 0 like any two consecutive frames."""
    n = loop.num_frames
    step = loop.root_positions[1] - loop.root_positions[0] if n > 1 else np.zeros(3)
    disp = step * n  # extract_cycle's root moves linearly
    rot = np.concatenate([loop.rotations, loop.rotations[:1]])
    root = np.concatenate([loop.root_positions, loop.root_positions[:1] + disp])
    trans = None
    if loop.translations is not None:
        last = loop.translations[:1].copy()
        roots = loop.skeleton.parents < 0
        last[:, roots] = last[:, roots] + disp
        trans = np.concatenate([loop.translations, last])
    return Motion(loop.skeleton, rot, root, loop.fps, trans, name=loop.name)


def _channelbag(action, arm):
    from bpy_extras.anim_utils import action_get_channelbag_for_slot

    return action_get_channelbag_for_slot(action, arm.animation_data.action_slot)


def make_cyclic(action, arm, *, offset_paths=()) -> int:
    """Add a Cycles modifier to every f-curve of ``action`` (the rig's slot)
    so the animation loops when played past its end.

    The last key must repeat the first: each curve's last key is set to its
    first key's value (quaternions: the same rotation with the sign of the
    last key, so no curve flips across the final frame; Euler angles: up to
    whole turns). Curves in ``offset_paths`` (root motion) keep their last
    key and repeat with an offset, so the character keeps moving forward.
    Returns the number of curves."""
    cb = _channelbag(action, arm)
    curves = list(cb.fcurves)
    quats = {}
    for fc in curves:
        if fc.data_path.endswith("rotation_quaternion"):
            quats.setdefault(fc.data_path, {})[fc.array_index] = fc
    for fc in curves:
        n = len(fc.keyframe_points)
        if n < 2:
            continue
        first, last = fc.keyframe_points[0], fc.keyframe_points[n - 1]
        if fc.data_path in offset_paths:
            mode = "REPEAT_OFFSET"
        else:
            mode = "REPEAT"
            v0 = first.co[1]
            if fc.data_path.endswith("rotation_quaternion") and len(quats.get(fc.data_path, {})) == 4:
                group = quats[fc.data_path]
                dot = sum(group[i].keyframe_points[0].co[1] * group[i].keyframe_points[-1].co[1] for i in range(4))
                v0 = v0 if dot >= 0 else -v0
            elif fc.data_path.endswith("rotation_euler"):
                v0 = v0 + 2 * math.pi * round((last.co[1] - v0) / (2 * math.pi))
            last.co[1] = v0
            last.handle_left[1] = last.handle_right[1] = v0
        mod = fc.modifiers.new("CYCLES")
        mod.mode_before = mode
        mod.mode_after = mode
        fc.update()
    return len(curves)


def _set_frame_range(start: int, end: int, user_scene: bool = False) -> None:
    """The scene's frame range: the take's, or on a user's scene
    (``user_scene``) grown to cover the take, never shrunk; then go to its first frame."""
    import bpy

    from .scene_io import cover_frames

    scene = bpy.context.scene
    cover_frames(scene, start, end, grow=user_scene)
    scene.frame_set(int(start))


def apply_cycle(arm, loop: Motion, *, name: str, in_place: bool, frame_start: int = 1, user_scene: bool = False):
    """Retarget the loop onto ``arm`` as a new cyclic action named ``name``
    (starting at the armature object's location, walking toward -Y) and set
    the scene frame range to one cycle. ``user_scene`` (the operators): the
    scene keeps its fps (keys at the right times) and its range only grows.
    Returns the action."""
    from . import retarget_scene

    # The recorded loop sits wherever the controller had walked to: start it
    # at the armature object's location instead.
    origin = _matrix(arm.matrix_world)[:2, 3]
    closed = _close_loop(_shift_xy(loop, origin - loop.root_positions[0, :2]))
    from ..backend.requests.retarget import RetargetRequest

    onto = RetargetRequest(root_mode="hips", action_name=name, start_frame=frame_start,
                           set_scene_fps=not user_scene, scene_range="grow" if user_scene else True)
    action, tgt_map, _ = retarget_scene.retarget_onto(arm, closed, _source_map(closed), onto)
    offset = ()
    hips = tgt_map.bones.get("hips")
    if not in_place and hips:
        import bpy

        offset = (f'pose.bones["{bpy.utils.escape_identifier(hips)}"].location',)
    make_cyclic(action, arm, offset_paths=offset)
    # One cycle spans n motion frames, n * scene_fps / motion_fps scene frames
    # (the keys land at the right times at any scene fps).
    period = float(action.frame_range[1] - action.frame_range[0])
    # Blender's own flags for a looping action (used by the NLA and exporters).
    action.use_frame_range = True
    action.frame_start, action.frame_end = frame_start, frame_start + period
    action.use_cyclic = True
    # Frames start .. start + period - 1 are one cycle; frame start + period is the first again.
    _set_frame_range(frame_start, int(round(frame_start + period)) - 1, user_scene)
    return action


def apply_path(arm, motion: Motion, *, name: str, frame_start: int = 1, scale: float = None, in_place: bool = False,
               reference: Motion = None, user_scene: bool = False, ends_standing: bool = False):
    """Retarget a path walk onto ``arm`` as a new action; the scene frame
    range becomes the clip's. ``motion`` is the controller's walk of the
    path divided by ``scale`` (:func:`generate_path`): the hips' horizontal
    travel is multiplied back by ``scale``, so they are on the drawn path
    in world metres whatever the rig's size and object transform (None: the
    retarget's leg-length ratio, for a walk that was not planned on a drawn
    path, e.g. Drive's). ``in_place``: the horizontal travel is removed (the
    body still turns and walks as it does along the path; e.g. for a game
    engine that moves the character itself). ``reference``: the source's
    reference pose for the retarget (Drive's standing pose), default the
    clip's most upright frame. ``ends_standing``: the clip ends in the
    controller's idle stance (Walk Along Path), whose flat feet are then the
    retarget's flat-foot level and orientation (``flat_pose``)."""
    from . import retarget_scene

    from ..backend.requests.retarget import RetargetRequest

    onto = RetargetRequest(root_mode="in_place" if in_place else "hips", action_name=name, start_frame=frame_start,
                           root_scale=None if scale is None else float(scale), set_scene_fps=not user_scene,
                           scene_range="grow" if user_scene else True)
    action, _, _ = retarget_scene.retarget_onto(
        arm, motion, _source_map(motion), onto, reference=reference,
        flat_pose=motion.slice(motion.num_frames - 1, motion.num_frames) if ends_standing else None,
    )
    _set_frame_range(frame_start, int(np.ceil(action.frame_range[1] - 1e-6)), user_scene)
    return action


def _check_armature(arm) -> None:
    from . import scene_io

    if arm is None or getattr(arm, "type", None) != "ARMATURE":
        raise scene_io.SceneError("pick an armature to animate (RigMind ▸ Armature, or make one active)")
    from .rig_checks import check_rig

    # Scale, then humanoid: a wrong rig is refused before the controller runs.
    check_rig(arm)


# --- one call: generate + apply ----------------------------------------------------------


def bake_walk_cycle(
    arm,
    *,
    style: str = "normal",
    gait: str = "walk",
    speed: float = None,
    in_place: bool = False,
    controller=None,
    progress=None,
    cancel=None,
    seconds: float = CYCLE_SECONDS,
    frame_start: int = 1,
    controller_options=None,
):
    """Bake a looping walk (or run) cycle onto ``arm`` as a new action with
    Cycles modifiers, and set the scene frame range to the cycle.
    ``speed`` (m/s of the controller's actor; None = the style's own for
    the gait, from its clips) is clamped to what the clips cover
    (:func:`resolve_speed`, the warning kept as ``rigmind_warning``).
    ``controller``: a controller object, or a kind for :func:`load_controller`
    (None = "auto"; ``controller_options`` go to it). ``progress(fraction)``
    is called and ``cancel()`` asked every :data:`CHUNK_FRAMES` generated
    frames; a cancelled run raises :class:`Cancelled` before anything is
    written (the scene is unchanged)."""
    action = finish(walk_cycle_job(arm, style=style, gait=gait, speed=speed, in_place=in_place, controller=controller,
                                   controller_options=controller_options, frame_start=frame_start, seconds=seconds,
                                   progress=progress, cancel=cancel))
    _report(progress, 1.0)
    return action


def path_points_and_speeds(points, speed):
    """``(xy [N, 2], speeds)`` from path points ``[N, 2]`` or ``[N, 3]``
    (``x, y, speed``; a NaN speed means ``speed``), repeated points dropped:
    ``speeds`` is ``speed`` itself when no point carries one, else one per
    point (m/s)."""
    p = np.asarray(points, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] not in (2, 3):
        raise UserError(f"path points must be [N, 2] (x, y) or [N, 3] (x, y, speed), got shape {p.shape}")
    keep = np.ones(len(p), dtype=bool)
    keep[1:] = np.linalg.norm(np.diff(p[:, :2], axis=0), axis=1) > 1e-6
    p = p[keep]
    if p.shape[1] == 2 or np.all(np.isnan(p[:, 2])):
        return p[:, :2], speed
    sp = np.where(np.isnan(p[:, 2]), float(speed), p[:, 2])
    return p[:, :2], sp


def walk_along_path(
    arm,
    points_xy,
    *,
    style: str = "normal",
    speed=None,
    controller=None,
    progress=None,
    cancel=None,
    gait: str = "walk",
    max_seconds: float = None,
    frame_start: int = 1,
    controller_options=None,
    in_place: bool = False,
    pauses=(),
):
    """Walk ``arm`` along the polyline ``points_xy [N, 2]`` (world XY, m;
    ``[N, 3]`` rows ``x, y, speed`` give a speed per point, m/s, NaN = the
    ``speed``) as a new action: the hips follow the path in scene metres
    and the character stands on its end point facing along the last
    segment. ``speed`` (m/s; None = the style's own for the gait, from its
    clips, scaled to the rig's legs) is clamped to what the clips cover
    (:func:`resolve_speed`; the warning is printed and kept on the action
    as ``rigmind_warning``). See :func:`bake_walk_cycle` for
    ``controller``, ``progress`` and ``cancel``; ``gait`` picks the default
    speed and names the action; ``in_place`` see :func:`apply_path`;
    ``pauses``: ``((arc length m, seconds), ...)``: stop that far along the
    path and stand for the seconds (a UserError names a bad one)."""
    action = finish(walk_path_job(arm, points_xy, style=style, speed=speed, gait=gait, controller=controller,
                                  controller_options=controller_options, frame_start=frame_start, in_place=in_place,
                                  max_seconds=max_seconds, progress=progress, cancel=cancel, pauses=pauses))
    _report(progress, 1.0)
    return action


def _path_speeds(points_xy, speed, style, gait, scale):
    """``(xy, speeds, warning)``: the path's points, its speeds in world m/s
    (defaults filled in, clamped: :func:`resolve_speed`) and the warning."""
    base, warning = resolve_speed(speed, style, gait, scale)
    xy, sp = path_points_and_speeds(points_xy, base)
    if not np.isscalar(sp):
        sp, w2 = resolve_speed(sp, style, gait, scale)
        warning = warning or w2
    check_all("speed", sp, option="speed")
    return xy, sp, warning


def _warn(action, warning) -> None:
    if warning:
        import sys

        action["rigmind_warning"] = warning
        print(f"RigMind: WARNING: {warning}", file=sys.stderr)


def _resolve(controller, style, gait, **kwargs):
    if controller is None or isinstance(controller, str):
        return load_controller(controller or "auto", styles=(style,), gait=gait, **kwargs)
    return controller


# --- modal jobs -----------------------------------------------------------------------------


def _armature_by_name(name: str):
    import bpy

    arm = bpy.data.objects.get(name)
    if arm is None or arm.type != "ARMATURE":
        from . import scene_io

        raise scene_io.SceneError(f"armature '{name}' is gone: it was removed while the walk was being generated")
    return arm


def _with_caller(work, progress, cancel):
    """``work(progress, cancel)`` that also reports to the caller's
    ``progress`` and stops when the caller's ``cancel()`` says so (the
    synchronous API's callbacks, on top of the task runner's own)."""
    if progress is None and cancel is None:
        return work

    def wrapped(report, stop):
        def both(f):
            report(f)
            _report(progress, f)

        return work(both, lambda: stop() or bool(cancel is not None and cancel()))

    return wrapped


def walk_cycle_job(arm, *, style, gait="walk", speed=None, in_place=False, controller=None, controller_options=None,
                   frame_start: int = 1, seconds: float = CYCLE_SECONDS, progress=None, cancel=None,
                   user_scene: bool = False):
    """:func:`bake_walk_cycle` as a job (``backend.tasks``: a generator of
    progress fractions for a modal operator, or run by ``tasks.finish``):
    checks now, generation (and the controller's loading) in a worker
    thread, the action written on the main thread at the end. ``user_scene``:
    see :func:`apply_cycle`."""
    _check_armature(arm)
    if speed is not None:
        check_all("speed", speed, option="speed")
    speed, warning = resolve_speed(speed, style, gait)
    name = arm.name
    opts = dict(controller_options or {})

    def work(report, stop):
        ctl = _resolve(controller, style, gait, **opts)
        return generate_walk_cycle(ctl, style=style, speed=speed, in_place=in_place, seconds=seconds,
                                   progress=report, cancel=stop)

    # Checked above, on the call; the generator below runs on the first next().
    return _cycle_job(_with_caller(work, progress, cancel), name, style, speed, gait, in_place, frame_start, warning,
                      user_scene)


def _cycle_job(work, name, style, speed, gait, in_place, frame_start, warning=None, user_scene=False):
    loop = yield from run_in_thread(work, "rigmind-walk-cycle")
    yield _CLEAN_END
    action = apply_cycle(_armature_by_name(name), loop, name=cycle_action_name(style, speed, gait),
                         in_place=in_place, frame_start=frame_start, user_scene=user_scene)
    _warn(action, warning)
    return action


def walk_path_job(arm, points_xy, *, style, speed=None, gait="walk", controller=None, controller_options=None,
                  frame_start: int = 1, in_place: bool = False, max_seconds: float = None, progress=None, cancel=None,
                  user_scene: bool = False, pauses=()):
    """:func:`walk_along_path` as a job (see :func:`walk_cycle_job`; the
    rig's leg length is read here, on the main thread)."""
    from ..backend.locomotion.path_follow import Path2D, check_pauses

    _check_armature(arm)
    # Bounded time and memory (backend.limits) before anything is built from the path.
    xy_path = path_points_and_speeds(points_xy, 1.0)[0]
    check_path(xy_path, float(speed) if speed is not None else resolve_speed(None, style, gait)[0], max_seconds)
    check_pauses(Path2D(xy_path), pauses)  # a bad path fails now, before the modal starts
    if speed is not None:
        check_all("speed", speed, option="speed")
    name = arm.name
    opts = dict(controller_options or {})
    leg = rig_leg_length(arm)

    def work(report, stop):
        ctl = _resolve(controller, style, gait, **opts)
        scale = leg / controller_leg_length(ctl)
        xy, sp, warning = _path_speeds(points_xy, speed, style, gait, scale)
        motion, _ = generate_path(ctl, xy, style=style, speed=sp, scale=scale, max_seconds=max_seconds,
                                  progress=report, cancel=stop, pauses=pauses)
        return motion, scale, sp, warning

    return _path_job(_with_caller(work, progress, cancel), name, style, gait, frame_start, in_place, user_scene)


def _path_job(work, name, style, gait, frame_start, in_place, user_scene=False):
    motion, scale, sp, warning = yield from run_in_thread(work, "rigmind-walk-along-path")
    yield _CLEAN_END
    action = apply_path(_armature_by_name(name), motion, name=path_action_name(style, sp, gait, in_place),
                        frame_start=frame_start, scale=scale, in_place=in_place, user_scene=user_scene,
                        ends_standing=True)
    _warn(action, warning)
    return action


# --- paths from the scene -------------------------------------------------------------------


def _matrix(m) -> np.ndarray:
    return np.array([list(r) for r in m], dtype=np.float64)


def _dedupe(xy: np.ndarray) -> np.ndarray:
    keep = np.ones(len(xy), dtype=bool)
    keep[1:] = np.linalg.norm(np.diff(xy, axis=0), axis=1) > 1e-6
    return xy[keep]


def _ordered_chains(n_verts: int, edges: np.ndarray) -> list:
    """Vertex index chains of a mesh made of edges only (one per connected
    piece), each walked from its lowest-index end, which for an evaluated
    curve is the spline's start."""
    adj = [[] for _ in range(n_verts)]
    for a, b in edges:
        adj[a].append(b)
        adj[b].append(a)
    seen = np.zeros(n_verts, dtype=bool)
    chains = []
    for start in range(n_verts):
        if seen[start] or not adj[start]:
            continue
        # Find this piece's lowest-index end (degree 1), else (a closed loop) its lowest index.
        piece, stack = [], [start]
        seen[start] = True
        while stack:
            v = stack.pop()
            piece.append(v)
            for w in adj[v]:
                if not seen[w]:
                    seen[w] = True
                    stack.append(w)
        ends = sorted(v for v in piece if len(adj[v]) == 1)
        first = ends[0] if ends else min(piece)
        chain, prev, cur = [first], -1, first
        while True:
            nxt = [w for w in adj[cur] if w != prev]
            if not nxt or nxt[0] == first:
                if nxt and nxt[0] == first:
                    chain.append(first)  # closed: end where it began
                break
            prev, cur = cur, min(nxt)
            chain.append(cur)
            if len(chain) > n_verts + 1:
                break
        chains.append(chain)
    return chains


def _curve_points_world(obj) -> np.ndarray:
    """World positions ``[N, 3]`` along the evaluated curve (modifiers and
    NURBS/Bezier resolution included), the longest spline, in spline order."""
    import bpy

    data = obj.data
    # A bevelled or extruded curve evaluates to a surface; its centre line is
    # wanted, so the shape options are switched off while it is evaluated.
    saved = {k: getattr(data, k) for k in ("bevel_depth", "extrude", "bevel_object") if hasattr(data, k)}
    shaped = bool(saved.get("bevel_depth") or saved.get("extrude") or saved.get("bevel_object"))
    try:
        if shaped:
            data.bevel_depth, data.extrude, data.bevel_object = 0.0, 0.0, None
        dg = bpy.context.evaluated_depsgraph_get()
        dg.update()
        ev = obj.evaluated_get(dg)
        mesh = ev.to_mesh()
        try:
            n = len(mesh.vertices)
            co = np.empty(n * 3)
            mesh.vertices.foreach_get("co", co)
            co = co.reshape(n, 3)
            e = np.empty(len(mesh.edges) * 2, dtype=np.int64)
            mesh.edges.foreach_get("vertices", e)
            edges = e.reshape(-1, 2)
            mw = _matrix(ev.matrix_world)
        finally:
            ev.to_mesh_clear()
    finally:
        if shaped:
            for k, v in saved.items():
                setattr(data, k, v)
            bpy.context.evaluated_depsgraph_get().update()
    if n < 2 or len(edges) == 0:
        raise UserError(f"curve '{obj.name}' has no length: draw a path with at least two points")
    chains = _ordered_chains(n, edges)

    def length(c):
        return float(np.sum(np.linalg.norm(np.diff(co[c], axis=0), axis=1)))

    chain = max(chains, key=length)
    pts = co[chain]
    return pts @ mw[:3, :3].T + mw[:3, 3]


def _empty_points(obj, selected) -> np.ndarray:
    """World positions of a path made of empties: the selected empties
    ordered by name, or (one empty) its keyed locations over its action."""
    import bpy

    empties = sorted({o for o in (selected or []) if o.type == "EMPTY"} | ({obj} if obj is not None else set()),
                     key=lambda o: o.name)
    if len(empties) >= 2:
        return np.array([_matrix(o.matrix_world)[:3, 3] for o in empties])
    ad = obj.animation_data if obj is not None else None
    if ad is not None and ad.action is not None:
        scene = bpy.context.scene
        a, b = (int(round(v)) for v in ad.action.frame_range)
        saved = scene.frame_current
        pts = []
        try:
            for f in range(a, b + 1):
                scene.frame_set(f)
                pts.append(_matrix(obj.matrix_world)[:3, 3])
        finally:
            scene.frame_set(saved)
        return np.array(pts)
    raise UserError(
        "a path of empties needs two or more selected empties (walked in name order), "
        "or one empty whose location is keyed along the path"
    )


def curve_to_polyline(obj, selected=None) -> np.ndarray:
    """The ground-plane polyline ``[N, 2]`` (world X, Y in metres) of a path
    object: a Bezier, NURBS or poly curve (evaluated, longest spline, in
    spline direction; a cyclic spline ends where it began), or empties (the
    ``selected`` empties, default the scene selection, ordered by name; a
    lone keyed empty gives its keyed track). Raises ValueError with the fix
    when the object cannot be a path."""
    import bpy

    if obj is None or obj.type not in {"CURVE", "EMPTY"}:
        what = "nothing" if obj is None else f"'{obj.name}' ({obj.type.lower()})"
        raise UserError(f"the path must be a curve or empties, got {what}: pick a curve in RigMind ▸ Path or select one")
    if obj.type == "CURVE":
        pts = _curve_points_world(obj)
    else:
        if selected is None:
            selected = list(getattr(bpy.context, "selected_objects", []) or [])
        pts = _empty_points(obj, selected)
    xy = _dedupe(np.asarray(pts)[:, :2])
    if len(xy) < 2 or float(np.sum(np.linalg.norm(np.diff(xy, axis=0), axis=1))) < 0.05:
        raise UserError(f"path '{obj.name}' is shorter than 5 cm on the ground plane (X, Y): nothing to walk along")
    return xy


def parse_path(text: str) -> np.ndarray:
    """``"x,y;x,y[,speed];…"`` (metres, m/s) -> ``[N, 2]``, or ``[N, 3]``
    (``x, y, speed``; NaN where a point gives no speed) when any point
    carries a speed. ValueError with the expected form."""
    pts = []
    form = 'x,y or x,y,speed (metres, m/s), e.g. --path "0,0;3,0,0.8;3,3"'
    for k, part in enumerate(p for p in (text or "").split(";") if p.strip()):
        xs = part.split(",")
        try:
            if len(xs) not in (2, 3):
                raise ValueError
            vals = [float(v) for v in xs]
        except ValueError:
            raise UserError(f"--path point {k + 1} {part.strip()!r} is not {form}") from None
        if not all(math.isfinite(v) for v in vals):
            raise UserError(f"--path point {k + 1} {part.strip()!r} is not finite")
        if len(vals) == 3:
            check_all("speed", vals[2], option=f"--path point {k + 1} {part.strip()!r}: speed")
        pts.append(vals + [math.nan] * (3 - len(vals)))
    p = np.array(pts, dtype=np.float64).reshape(-1, 3)
    keep = np.ones(len(p), dtype=bool)
    keep[1:] = np.linalg.norm(np.diff(p[:, :2], axis=0), axis=1) > 1e-6
    p = p[keep]
    if len(p) < 2:
        raise UserError('--path needs at least two distinct points "x,y;x,y", e.g. --path "0,0;3,0;3,3"')
    return p if np.any(np.isfinite(p[:, 2])) else p[:, :2].copy()


__all__ = [
    "Cancelled", "ControllerError", "load_controller", "clear_controller_cache", "neural_weights",
    "curve_to_polyline", "parse_path", "bake_walk_cycle", "walk_along_path", "generate_walk_cycle",
    "generate_path", "apply_cycle", "apply_path", "make_cyclic", "walk_cycle_job", "walk_path_job",
    "cycle_action_name", "path_action_name", "CHUNK_FRAMES", "path_scale", "rig_leg_length",
    "path_points_and_speeds", "style_speeds", "resolve_speed",
]
