"""Live tracking: the target armature follows three scene objects (head,
left hand, right hand) while they move, like Drive follows the keyboard.

:class:`TrackLiveSession` is what the ``rigmind.track_live`` modal operator
does, without the modal plumbing, so a script or a test can tick it:

- on start the armature's action and NLA evaluation are switched off (they
  would overwrite the pose written each tick) and every pose bone is put in
  quaternion mode (``drive_scene.snapshot`` saves all of it);
- :meth:`TrackLiveSession.tick` reads the three objects' world matrices as
  they are now, steps the causal tracker
  (``backend.tracking.live.LiveTracker``: only the past, one network
  evaluation, foot locks and arm IK) by ``dt`` seconds and writes its pose
  to the pose bones through :class:`~rigmind.backend.live_retarget.LiveRetarget`
  (no keyframes), calibrated on the tracker's first pose; with the trackers
  placed for the rig (the default) the hips on their path 1:1 and the rig's
  hands put on them, as Track Body bakes them;
- :meth:`TrackLiveSession.close` puts the scene back exactly as it was
  (``drive_scene.restore``): live mode is a preview; Track Body bakes.

Units: metres, seconds; Blender Z up.
"""

from __future__ import annotations

import time

import numpy as np

from ..backend.motion import Motion
from ..backend.options import TRACK_PLACEMENTS
from . import drive_scene, scene_io
from .track_scene import check_tracker_objects, objects_now

#: Length (frames at 30 fps) of the still pose the live mapping is calibrated on.
CALIBRATION_FRAMES = 30
#: A longer gap between ticks (s) is a jump in time (the timeline scrubbed
#: or looped): the tracker starts again rather than interpolate across it.
MAX_TICK_SECONDS = 0.5


def _held(pose: Motion, frames: int) -> Motion:
    """``pose``'s first frame held for ``frames`` frames (the calibration clip)."""
    rep = lambda a: None if a is None else np.repeat(a[:1], frames, axis=0)  # noqa: E731
    return Motion(pose.skeleton, rep(pose.rotations), rep(pose.root_positions), pose.fps, rep(pose.translations),
                  name="calibration")


class TrackLiveSession:
    """The armature ``arm`` following ``objects`` (head, left hand, right
    hand; ``bones``: a bone of each, or "" for the object itself).
    ``tracker``: a ``LiveTracker`` (None: the shipped model). ``placement``
    (``backend.options.TRACK_PLACEMENTS``): "rig", the objects are where this
    rig's head and hands go (the hips on their path 1:1, the hands put on
    them); "performer", another body's, scaled onto the rig."""

    def __init__(self, arm, objects, *, bones=None, tracker=None, placement: str = "rig"):
        import bpy

        from . import rigify

        if arm is None or arm.type != "ARMATURE":
            raise scene_io.SceneError("no armature to pose: pick the character's armature (RigMind ▸ Armature)")
        if rigify.is_rigify(arm):
            raise scene_io.SceneError(f"'{arm.name}' is a generated Rigify rig: live tracking writes the deform "
                                      "bones and Rigify's constraints override them; bake Track Body on it instead")
        self.trackers = check_tracker_objects(objects, bones)
        if any(ob == arm for ob, _ in self.trackers):
            raise scene_io.SceneError(f"'{arm.name}' is both a tracker and the armature to pose: key the trackers "
                                      "on other objects (empties) or another armature")
        if placement not in TRACK_PLACEMENTS:
            raise ValueError(f"placement must be one of {', '.join(TRACK_PLACEMENTS)}, got {placement!r}")
        self.placement = placement
        self.arm = arm
        self.scene = bpy.context.scene
        if tracker is None:
            from ..backend.tracking.live import LiveTracker

            tracker = LiveTracker()
        self.tracker = tracker
        self.live = None
        self.ticks = 0
        self.timings = {"read": [], "track": [], "map": [], "write": [], "total": []}
        self.closed = False
        self._saved = drive_scene.snapshot(arm, self.scene)
        try:
            self._prepare_rig()
            self.tick(0.0)
        except BaseException:
            self.close()
            raise

    def _prepare_rig(self) -> None:
        ad = self.arm.animation_data
        if ad is not None:
            ad.action = None
            ad.use_nla = False
        for pb in self.arm.pose.bones:
            if pb.rotation_mode != "QUATERNION":
                pb.rotation_mode = "QUATERNION"

    def _calibrate(self, pose: Motion) -> None:
        """The live mapping onto the rig, calibrated on ``pose`` held still
        (the tracker's skeleton is scaled to the subject on its first sample)."""
        from ..backend.bone_mapping import auto_map
        from ..backend.live_retarget import LiveRetarget
        from ..backend.tracking.canonical import CANONICAL_MAP
        from . import retarget_scene

        arm = self.arm
        skel = scene_io.read_skeleton(arm)
        rot, scale, trans = retarget_scene.object_transform(arm)
        world = retarget_scene.skeleton_to_world(skel, rot, scale, trans)
        tgt_map = retarget_scene.target_mapping(arm)
        src_map = dict(CANONICAL_MAP) if set(CANONICAL_MAP.values()) <= set(pose.skeleton.names) else \
            dict(auto_map(pose.skeleton).bones)
        calib = _held(pose, CALIBRATION_FRAMES)
        self.live = LiveRetarget.calibrate(calib, src_map, world, dict(tgt_map.bones), object_rotation=rot,
                                           object_scale=scale, object_translation=trans, reference=calib.slice(0, 1))
        # Trackers placed for the rig (as Track Body bakes them): the hips
        # travel their path 1:1, the rig moves so its head sits on its
        # tracker with the feet held where they were, the hands go on theirs.
        placed = self.placement == "rig"
        bones = dict(tgt_map.bones)
        self.live.path_scale = 1.0 if placed else None
        self._arms = self.live.arm_chains(bones) if placed else []
        self._legs = self.live.leg_chains(bones) if placed else []
        self._head = self.live.head_path(bones) if placed else None
        pb_names = [pb.name for pb in arm.pose.bones]
        self._order = np.array([skel.names.index(n) for n in pb_names])  # pose-bone order -> skeleton index
        self._hips_pb = arm.pose.bones[skel.names[self.live.hips_t]]

    def tick(self, dt: float) -> dict:
        """Read the trackers now, step the tracker ``dt`` seconds and pose
        the rig. Returns the seconds spent ``{"read", "track", "map",
        "write", "total"}``. A negative or long ``dt`` (a scrub, a loop)
        restarts the tracker's history here."""
        if self.closed:
            return {}
        t0 = time.perf_counter()
        pos, rot = objects_now(self.trackers)
        t1 = time.perf_counter()
        if dt < 0 or dt > MAX_TICK_SECONDS:
            self.tracker.reset()
            dt = 0.0
        if self.live is None:
            pose = self.tracker.step(pos, rot, float(dt))
            self._calibrate(pose)
            t2 = time.perf_counter()
            basis, loc = self.live.apply(pose)
        else:
            world, hips = self.tracker.step_world(pos, rot, float(dt))
            t2 = time.perf_counter()
            basis, loc = self.live.apply_world(world, hips)
        if self._head is not None:
            # The head on its tracker with the feet held where they were, and
            # the hands on theirs: one solve for all four limbs.
            loc, feet = self.live.reach_head(pos[0], self._head, legs=self._legs, arms=self._arms, hands=pos[1:])
            goals = np.concatenate([feet, pos[1:][[ch[0] for ch in self._arms]]])
            basis = self.live.reach_limbs(basis, goals, self._legs + self._arms)
        else:
            basis = self.live.reach_hands(basis, pos[1:], self._arms)
        quats = np.ascontiguousarray(basis[self._order], dtype=np.float32).ravel()
        t3 = time.perf_counter()
        self.arm.pose.bones.foreach_set("rotation_quaternion", quats)
        self._hips_pb.location = loc
        self.arm.update_tag()
        t4 = time.perf_counter()
        self.ticks += 1
        out = {"read": t1 - t0, "track": t2 - t1, "map": t3 - t2, "write": t4 - t3, "total": t4 - t0}
        for k in self.timings:
            self.timings[k].append(out[k])
        return out

    def close(self) -> None:
        """Put the scene back as it was before live tracking started."""
        if self.closed:
            return
        self.closed = True
        drive_scene.restore(self.arm, self.scene, self._saved)


__all__ = ["TrackLiveSession", "CALIBRATION_FRAMES"]
