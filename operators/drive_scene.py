"""Drive: steer the locomotion controller live on an armature and record a take.

:class:`DriveSession` is everything the ``rigmind.drive`` modal operator does,
without the modal plumbing, so a script or a test can feed it a recorded
event sequence:

- :meth:`DriveSession.handle` takes one input event
  (:class:`~rigmind.backend.locomotion.drive_input.InputEvent`, Blender's
  event names) and returns a command ("record", "finish", "cancel" or None);
- :meth:`DriveSession.tick` advances game time by ``dt`` seconds: the
  controller steps at its own rate (30 fps) for every frame that falls in
  the interval, each recorded while recording is on, and the latest pose is
  written straight to the pose bones (no keyframes) through
  :class:`~rigmind.backend.live_retarget.LiveRetarget`; a crouch (C) is
  the crouch layer on the shown pose, ramped per frame, and a jump (Space)
  plays the prepared jump clip from the current pose, the controller reset
  where it lands (see docs/drive.md, "Crouch and jump");
- :meth:`DriveSession.finish` restores the scene as it was and, when a take
  was recorded, bakes it exactly like Walk Along Path: the controller's
  predicted contacts and feet go to the foot cleanup
  (:func:`~rigmind.backend.locomotion.cleanup.pin_feet`), the clip is
  resampled to the scene's frame rate and retargeted as a new action (the
  previous action kept on a muted NLA track), the scene frame range grows to
  cover the take (never shrinks), and the take is named after the styles it
  used (:func:`drive_action_name`); optionally the path walked is saved as a
  curve;
- :meth:`DriveSession.cancel` restores the scene exactly (actions, pose,
  rotation modes, frame range).

While driving, the armature's action and NLA evaluation are switched off
(they would overwrite the pose written each tick) and every pose bone is in
quaternion mode; all of it is put back by ``finish`` and ``cancel``.

Units: metres, seconds; Blender Z-up; ground = world XY.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from ..backend.locomotion import drive_input
from ..backend.locomotion.actions import crouch
from ..backend.locomotion.actions.live_crouch import LiveCrouch
from ..backend.locomotion.actions.live_jump import LiveJump, prepare_jump
from ..backend.locomotion.features import CONTACT_INDEX as FEET_INDEX
from ..backend.locomotion.controllers import (GENERATE_LOCK, ControllerError, bandai_bone_map, controller_leg_length,
                                              load_controller)
from ..backend.motion import Motion
from ..backend.requests.walk import ControllerChoice
from . import locomotion_scene
from . import scene_io

#: Length (s) of the standing clip that calibrates the live mapping.
CALIBRATION_SECONDS = 1.0
#: Largest game-time step of one tick (s): after a longer stall (a file
#: dialog, a breakpoint) the game slows down rather than jumping ahead.
MAX_TICK_SECONDS = 0.25
#: Spacing (m) of the points of a saved path curve.
PATH_POINT_SPACING = 0.25


#: Blender's longest ID name is 63 bytes; 4 are left for the " #k" that a
#: repeated take name gets (scene_io.unique_name).
_NAME_BYTES = 63 - 4


def drive_action_name(styles, seconds: float) -> str:
    """The take's name after what it did: the styles used while recording,
    in the order first used, joined by '+' ("RigMind Drive · normal+elderly ·
    4.4 s"), or "mixed (N styles)" when they would not fit in a Blender name.
    ``styles``: a style name or a sequence of them; ``seconds``: the take's
    length (s)."""
    used = [styles] if isinstance(styles, str) else list(dict.fromkeys(styles))
    name = f"RigMind Drive · {'+'.join(used)} · {seconds:.1f} s"
    if len(name.encode("utf-8")) > _NAME_BYTES:
        name = f"RigMind Drive · mixed ({len(used)} styles) · {seconds:.1f} s"
    return name


# --- scene snapshot -------------------------------------------------------------------


def snapshot(arm, scene) -> dict:
    """Everything Drive changes before its take is baked: the pose bones'
    rotation modes and transforms, the action, its slot and NLA flag, the
    frame range and current frame."""
    pbs = arm.pose.bones
    n = len(pbs)
    vals = {}
    for prop, size in (("rotation_quaternion", 4), ("rotation_euler", 3), ("rotation_axis_angle", 4),
                       ("location", 3), ("scale", 3)):
        buf = np.empty(n * size, dtype=np.float32)
        pbs.foreach_get(prop, buf)
        vals[prop] = buf
    ad = arm.animation_data
    return {
        "modes": [pb.rotation_mode for pb in pbs],
        "values": vals,
        "has_anim": ad is not None,
        "action": ad.action if ad is not None else None,
        "slot": ad.action_slot if ad is not None else None,
        "use_nla": ad.use_nla if ad is not None else None,
        "frames": (scene.frame_start, scene.frame_end, scene.frame_current),
    }


def restore(arm, scene, snap: dict) -> None:
    """Put back what :func:`snapshot` saved (values, then the action, so
    nothing is evaluated on top of the restored pose)."""
    pbs = arm.pose.bones
    ad = arm.animation_data
    if ad is not None:
        if snap["has_anim"]:
            ad.action = snap["action"]
            if snap["action"] is not None and snap["slot"] is not None:
                ad.action_slot = snap["slot"]
            ad.use_nla = snap["use_nla"]
    for pb, mode in zip(pbs, snap["modes"]):
        if pb.rotation_mode != mode:
            pb.rotation_mode = mode
    for prop, buf in snap["values"].items():
        pbs.foreach_set(prop, buf)
    scene.frame_start, scene.frame_end = snap["frames"][0], snap["frames"][1]
    if scene.frame_current != snap["frames"][2]:
        scene.frame_current = snap["frames"][2]
    arm.update_tag()


# --- the session ----------------------------------------------------------------------


class DriveSession:
    """A live drive of ``arm`` (see the module docstring).

    Args:
        arm: the armature object.
        controller: a neural ``LocomotionController``, or a
            :class:`~rigmind.backend.requests.walk.ControllerChoice` to load
            (:func:`~rigmind.backend.locomotion.controllers.load_controller`;
            None: the neural one from the shipped models).
        style: the starting style.
        config: :class:`~rigmind.backend.locomotion.drive_input.DriveConfig`.
    """

    def __init__(self, arm, *, controller=None, style: str = "normal", config: drive_input.DriveConfig = None):
        import bpy

        from . import retarget_scene
        from . import rigify

        locomotion_scene.check_armature(arm)
        if rigify.is_rigify(arm):
            raise scene_io.SceneError(
                f"'{arm.name}' is a generated Rigify rig: Drive writes the deform bones directly and Rigify's "
                "constraints override them; bake Walk Along Path on it instead, or drive another rig"
            )
        self.arm = arm
        self.arm_name = arm.name
        self.scene = bpy.context.scene
        if controller is None or isinstance(controller, ControllerChoice):
            choice = controller or ControllerChoice(kind="neural")
            controller = load_controller(choice.kind, choice.data_dir, engine=choice.engine,
                                         models_dir=choice.models_dir)
        if not hasattr(controller, "feet"):
            raise ControllerError("Drive needs the neural locomotion controller (models/locomotion.onnx)")
        if not GENERATE_LOCK.acquire(blocking=False):
            raise ControllerError("a walk is being generated with the locomotion controller: wait for it to finish")
        self._locked = True
        try:
            self.ctl = controller
            self.input = drive_input.DriveInput(config or drive_input.DriveConfig(), style=style)
            self.fps = float(controller.fps)
            self.scene_fps = scene_io.scene_fps(self.scene)
            self._saved = snapshot(arm, self.scene)
            # The live mapping, calibrated on the standing pose of the starting style.
            skel = scene_io.read_skeleton(arm)
            rot, scale, trans = retarget_scene.object_transform(arm)
            world = retarget_scene.skeleton_to_world(skel, rot, scale, trans)
            calib = self._calibration_clip(style)
            src_map = bandai_bone_map(calib.skeleton)
            tgt_map = retarget_scene.target_mapping(arm)
            from ..backend.live_retarget import LiveRetarget

            # The standing pose is the retarget's reference for the preview and the take alike.
            self.reference = calib.slice(0, 1)
            self._setup_crouch(calib)
            self.live = LiveRetarget.calibrate(calib, dict(src_map.bones), world, dict(tgt_map.bones),
                                               object_rotation=rot, object_scale=scale, object_translation=trans,
                                               reference=self.reference)
            self._skel_names = skel.names
            pb_names = [pb.name for pb in arm.pose.bones]
            self._order = np.array([skel.names.index(n) for n in pb_names])  # pose-bone order -> skeleton index
            self._hips_pb = arm.pose.bones[skel.names[self.live.hips_t]]
            # Start where the character stands, facing the rig's front (-Y).
            hips = self._hips_pb
            hw = np.array(arm.matrix_world @ hips.head)[:2] if hasattr(hips, "head") else np.zeros(2)
            self.ctl.reset(position=tuple(hw / self.live.leg_scale), yaw=0.0, style=style)
            self.game_time = 0.0
            self.steps = 0
            self.take = None  # {"poses", "contacts", "feet", "styles" (in the order used)} while / after recording
            self.recording = False
            self.last_pose = self.prev_pose = self.ctl.pose()
            self.jump = None  # the LiveJump playing, if any
            self._blend_out = None  # the hand-back after a jump, while it decays
            self.jumps = 0
            self.timings = {"step": [], "crouch": [], "map": [], "write": []}
            self.closed = False
            self.consumed = False
            self._prepare_rig()
            self._write(self.last_pose)
        except BaseException:
            if hasattr(self, "_saved"):
                restore(arm, self.scene, self._saved)
            self._release()
            raise

    # -- setup ---------------------------------------------------------------------
    def _calibration_clip(self, style) -> Motion:
        """The controller's standing pose, held for :data:`CALIBRATION_SECONDS`:
        the live mapping is calibrated on it, and it is the retarget's
        reference pose for the preview and the baked take alike (by default
        the retarget would take the most upright frame of each clip, which
        for a varied take can turn the head or hands 10-25° away from what
        the preview showed)."""
        from ..backend.locomotion.path_follow import concat_poses

        self.ctl.reset(style=style)
        pose = self.ctl.pose()
        return concat_poses([pose] * int(round(CALIBRATION_SECONDS * self.fps)), self.fps)

    def _setup_crouch(self, calib: Motion) -> None:
        """The crouch layer on the controller's standing pose (cached per
        skeleton and pose by :func:`~...actions.crouch.crouch_layer`) and the
        input's speed cap set to the sneak's on the controller's legs."""
        from ..backend.locomotion.actions.clip_bank import default_crouch_speed

        self.crouch_config = crouch.CrouchConfig()
        self.crouch_layer = crouch.crouch_layer(calib.skeleton, self.reference)
        self.live_crouch = LiveCrouch(calib.skeleton, self.crouch_layer, self.crouch_config)
        # The jump clip, placed on the controller's standing feet once (~0.3 s).
        self.prepared_jump = prepare_jump(calib.skeleton, self.reference)
        speed = default_crouch_speed(controller_leg_length(self.ctl))
        self.input.config = dataclasses.replace(self.input.config, crouch_speed=float(speed))
        self._crouch_u = 0.0  # the crouch ramp's linear phase, 0 standing .. 1 down

    @property
    def crouch_weight(self) -> float:
        """How crouched the character is now (0..1): the smootherstep of the
        ramp's phase, as :func:`~...actions.crouch.crouch_weights` ramps an
        offline crouch."""
        return float(crouch.smootherstep(self._crouch_u))

    def _advance_crouch(self, dt: float) -> None:
        """Move the crouch ramp ``dt`` seconds toward down (toggled on) or
        up, a whole ramp taking ``CrouchConfig.ramp_seconds``."""
        step = dt / max(self.crouch_config.ramp_seconds, 1e-6)
        self._crouch_u = min(self._crouch_u + step, 1.0) if self.input.crouched else max(self._crouch_u - step, 0.0)

    def _prepare_rig(self) -> None:
        arm = self.arm
        ad = arm.animation_data
        if ad is not None:
            ad.action = None
            ad.use_nla = False
        for pb in arm.pose.bones:
            if pb.rotation_mode != "QUATERNION":
                pb.rotation_mode = "QUATERNION"

    def _release(self) -> None:
        if getattr(self, "_locked", False):
            GENERATE_LOCK.release()
            self._locked = False

    # -- input -----------------------------------------------------------------------
    def handle(self, event: drive_input.InputEvent):
        """One input event; returns "record", "finish", "cancel" or None
        (``consumed`` says whether Drive used it). R toggles recording: on
        starts a new take (replacing an earlier one), off ends it."""
        cmd = self.input.handle(event)
        self.consumed = self.input.consumed
        if cmd == drive_input.CROUCH and self.jump is not None:
            self.input.crouched = not self.input.crouched  # no crouching in the air: the toggle is ignored
        if cmd == drive_input.JUMP and (self.jump is not None or self.input.crouched or self.crouch_weight > 0.0):
            # A jump during a jump, or from a crouch (the clip starts standing tall), is ignored.
            self.input.take_jump()
        if cmd == drive_input.RECORD:
            if self.input.recording:
                self._start_take()
            self.recording = self.input.recording
        return cmd

    def _start_take(self) -> None:
        ctl = self.ctl
        self.take = {"poses": [self.last_pose], "contacts": [np.array(ctl.contacts, dtype=np.float64)],
                     "feet": [np.array(ctl.feet, dtype=np.float64)], "styles": [self.input.style],
                     "crouch": [self.crouch_weight], "jumping": [self.jump is not None]}

    # -- the loop --------------------------------------------------------------------
    def tick(self, dt: float, view_forward=(0.0, 1.0)) -> dict:
        """Advance game time by ``dt`` seconds (capped at
        :data:`MAX_TICK_SECONDS`): step the controller for every controller
        frame due, record them, write the last pose to the rig. Returns
        ``{"steps", "step_s", "crouch_s", "map_s", "write_s"}`` (seconds
        spent; ``crouch_s`` the crouch layer on the shown pose, 0 standing).
        While crouched (C), the pose shown has the crouch layer applied at
        :attr:`crouch_weight`, ramped per controller frame."""
        self.game_time += min(max(float(dt), 0.0), MAX_TICK_SECONDS)
        due = int(np.floor(self.game_time * self.fps + 1e-6)) - self.steps
        t0 = time.perf_counter()
        for _ in range(max(due, 0)):
            pose, contacts, feet = self._next_frame(view_forward)
            self._advance_crouch(1.0 / self.fps)
            self.steps += 1
            self.prev_pose, self.last_pose = self.last_pose, pose
            if self.recording and self.take is not None:
                self.take["crouch"].append(self.crouch_weight)
                self.take["poses"].append(pose)
                self.take["contacts"].append(contacts)
                self.take["feet"].append(feet)
                self.take["jumping"].append(self.jump is not None)
                # Keys 1-7 change the style mid-take: the take is named after every style it used.
                if self.input.style != self.take["styles"][-1]:
                    self.take["styles"].append(self.input.style)
        t1 = time.perf_counter()
        if due <= 0:
            return {"steps": 0, "step_s": 0.0, "crouch_s": 0.0, "map_s": 0.0, "write_s": 0.0}
        pose = self.last_pose
        w = self.crouch_weight
        if w > 0.0:
            # Only the pose shown is crouched live: the controller keeps
            # stepping its own upright walk (it has no crouched data), and
            # the take re-applies the layer after the foot cleanup.
            pose = self.live_crouch.apply(pose, w)
        t2 = time.perf_counter()
        t_map, t_write = self._write(pose)
        out = {"steps": due, "step_s": (t1 - t0) / due, "crouch_s": t2 - t1, "map_s": t_map, "write_s": t_write}
        self.timings["step"].append(out["step_s"])
        self.timings["crouch"].append(out["crouch_s"])
        self.timings["map"].append(t_map)
        self.timings["write"].append(t_write)
        return out

    def _next_frame(self, view_forward) -> tuple:
        """The next controller frame: ``(pose, contacts [4], feet [4, 3])``.
        A jump asked for (Space) starts here; while it plays its frames come
        from the clip and the controller waits; when it ends the controller
        is reset where it landed and the clip's last pose decays onto its
        frames (:mod:`~rigmind.backend.locomotion.actions.live_jump`)."""
        dt = 1.0 / self.fps
        if self.jump is None and self.input.take_jump():
            self.jump = LiveJump(self.prepared_jump, self.prev_pose, self.last_pose, self.speed)
            self.jumps += 1
        if self.jump is not None:
            self.input.advance(dt)  # the style blend goes on in the air
            pose, contacts, feet = self.jump.next_frame()
            if self.jump.done:
                xy, yaw = self.jump.landing()
                self.ctl.reset(position=tuple(xy), yaw=yaw, style=self.input.style_weights.copy())
                self._blend_out = self.jump.blend_out(self.ctl.pose())
                self.jump = None
            return pose, contacts, feet
        pose = self.ctl.step(self.input.control(view_forward, dt))
        contacts, feet = np.array(self.ctl.contacts, dtype=np.float64), np.array(self.ctl.feet, dtype=np.float64)
        if self._blend_out is not None:
            # The landing's pose decaying onto the controller's: the feet
            # recorded are the shown pose's (the controller's own are
            # those of its stance, not yet where the blend has them).
            pose = self._blend_out.apply(pose)
            feet = pose.world_positions()[0, list(FEET_INDEX)]
            if self._blend_out.done:
                self._blend_out = None
        return pose, contacts, feet

    def _write(self, pose: Motion):
        """Map ``pose`` onto the rig and write it to the pose bones;
        returns (mapping seconds, writing seconds)."""
        t0 = time.perf_counter()
        basis, loc = self.live.apply(pose)
        quats = np.ascontiguousarray(basis[self._order], dtype=np.float32).ravel()
        t1 = time.perf_counter()
        self.arm.pose.bones.foreach_set("rotation_quaternion", quats)
        self._hips_pb.location = loc
        self.arm.update_tag()
        t2 = time.perf_counter()
        return t1 - t0, t2 - t1

    # -- status ------------------------------------------------------------------------
    @property
    def speed(self) -> float:
        """The character's current ground speed (m/s), from the controller's root velocity."""
        return float(np.hypot(*np.asarray(self.ctl.root_vel, dtype=np.float64)[:2]))

    def take_seconds(self) -> float:
        return 0.0 if self.take is None else (len(self.take["poses"]) - 1) / self.fps

    def status_text(self, tick_rate: float = None) -> str:
        rec = f"● REC {self.take_seconds():.1f} s" if self.recording else (
            f"take {self.take_seconds():.1f} s (R: new take)" if self.take is not None else "R: record")
        hz = f" · {tick_rate:.0f} Hz" if tick_rate else ""
        return (f"Drive · {self.input.style_label()} · {self.speed:.1f} m/s ({self.input.gait}) · {rec}{hz} · "
                "WASD/arrows move · Shift run · Ctrl slow · C crouch · Space jump · 1-7 style · Enter keep · Esc cancel")

    # -- the end -------------------------------------------------------------------------
    def cancel(self) -> None:
        """Leave the scene exactly as it was before Drive started."""
        if self.closed:
            return
        self.closed = True
        try:
            restore(self.arm, self.scene, self._saved)
        finally:
            self._release()

    def take_motion(self):
        """The recorded take before baking: ``(motion, contacts [F, 4],
        feet [F, 4, 3])`` at the controller's rate, or None."""
        if self.take is None or len(self.take["poses"]) < 2:
            return None
        from ..backend.locomotion.path_follow import concat_poses

        t = self.take
        return concat_poses(t["poses"], self.fps), np.array(t["contacts"]), np.array(t["feet"])

    def cleaned_take(self):
        """The take with the feet pinned (as a baked walk: the controller's
        predicted contacts and feet), crouched where it was recorded
        crouched (the per-frame crouch weights), resampled to the scene's frame rate
        (Bandai skeleton, world space), or None."""
        from ..backend.locomotion.cleanup import pin_feet
        from ..backend.resample import resample

        got = self.take_motion()
        if got is None:
            return None
        motion, contacts, feet = got
        clean = pin_feet(motion, predicted=contacts, feet=feet)
        weights = np.asarray(self.take["crouch"], dtype=np.float64)
        if np.any(weights > 0.0):
            # The crouch recorded per frame, on the cleaned feet (the layer's
            # leg IK keeps every ankle where the cleanup pinned it).
            clean = crouch.apply_crouch(clean, weights, self.crouch_layer, self.crouch_config)
        if abs(self.scene_fps - self.fps) > 1e-6:
            clean = resample(clean, self.scene_fps)
        clean.name = "drive"
        return clean

    def finish(self, *, save_path: bool = False, frame_start: int = 1):
        """Restore the scene, then bake the take (if any) as a new action.
        Returns ``(action or None, path curve object or None)``."""
        if self.closed:
            return None, None
        clean = self.cleaned_take()
        self.cancel()
        if clean is None:
            return None, None
        arm = _armature(self.arm_name)
        # user_scene: the scene keeps its fps (the take is already at it) and
        # its frame range only grows to cover the take, never shrinks.
        action = locomotion_scene.apply_path(arm, clean, name=drive_action_name(self.take["styles"], (clean.num_frames - 1) / clean.fps),
                               frame_start=frame_start, reference=self.reference, user_scene=True)
        curve = None
        if save_path:
            curve = path_curve(np.concatenate([p.root_positions[:, :2] for p in self.take["poses"]]),
                               name=f"{arm.name} Drive Path")
        return action, curve


def _armature(name: str):
    import bpy

    arm = bpy.data.objects.get(name)
    if arm is None or arm.type != "ARMATURE":
        raise scene_io.SceneError(f"armature '{name}' is gone: it was removed while driving")
    return arm


def path_curve(root_xy, name: str = "Drive Path"):
    """A poly curve object (linked to the scene) through ``root_xy [F, 2]``
    (world XY, m), one point every :data:`PATH_POINT_SPACING` m of the
    walk plus its end: the path Walk Along Path can re-bake."""
    import bpy

    xy = np.asarray(root_xy, dtype=np.float64)
    keep = [0]
    for i in range(1, len(xy)):
        if np.hypot(*(xy[i] - xy[keep[-1]])) >= PATH_POINT_SPACING:
            keep.append(i)
    if keep[-1] != len(xy) - 1 and np.hypot(*(xy[-1] - xy[keep[-1]])) > 1e-3:
        keep.append(len(xy) - 1)
    pts = xy[keep]
    if len(pts) < 2:
        raise scene_io.SceneError("the character did not move: no path to save")
    data = bpy.data.curves.new(name, "CURVE")
    data.dimensions = "3D"
    spline = data.splines.new("POLY")
    spline.points.add(len(pts) - 1)
    co = np.zeros((len(pts), 4), dtype=np.float32)
    co[:, :2] = pts
    co[:, 3] = 1.0
    spline.points.foreach_set("co", co.ravel())
    obj = bpy.data.objects.new(name, data)
    bpy.context.scene.collection.objects.link(obj)
    return obj


__all__ = ["DriveSession", "snapshot", "restore", "path_curve", "drive_action_name"]
