"""The tracking operators: ``rigmind.track_body`` bakes a full body from
three animated objects (head, left hand, right hand) onto the target
armature as a new action (modal: progress, Esc cancels); ``rigmind.track_live``
poses the armature live from the same objects at every frame change
(playback or scrubbing the timeline), like Drive."""

from __future__ import annotations

import bpy
from bpy.props import EnumProperty, StringProperty

from ..blender_addon import properties
from .op_common import ModalJobMixin, fill_from_scene, poll_armature, report_failure, resolve_armature

_TRACKER_PROPS = {"head": "track_head", "hand_l": "track_hand_l", "hand_r": "track_hand_r"}
_BONE_PROPS = {"head_bone": "track_head_bone", "hand_l_bone": "track_hand_l_bone",
               "hand_r_bone": "track_hand_r_bone"}


def _object_prop(what: str):
    return StringProperty(options={"SKIP_SAVE"}, name=what, default="",
                          description=f"Name of the object that follows the {what.lower()} tracker; empty: "
                                      f"RigMind ▸ Track Body ▸ {what}")


def _bone_prop(what: str):
    return StringProperty(options={"SKIP_SAVE"}, name=f"{what} Bone", default="",
                          description=f"Bone of the {what.lower()} tracker's armature that follows the tracker; "
                                      "empty: the object itself")


def _tracker_objects(op) -> list:
    """The three objects the operator names (None where a name is empty or unknown)."""
    return [bpy.data.objects.get(getattr(op, p)) if getattr(op, p) else None for p in _TRACKER_PROPS]


def _tracker_bones(op) -> list:
    return [getattr(op, p) for p in _BONE_PROPS]


def _user_error(msg: str):
    from ..backend.errors import UserError

    return UserError(msg)


def _armature(context, name: str):
    arm = resolve_armature(context, name)
    if arm is None:
        raise _user_error(f"no armature named '{name}'" if name else
                          "no armature to put the body on: select the character, or set RigMind ▸ Armature")
    return arm


class _TrackerObjects:
    armature: StringProperty(options={"SKIP_SAVE"}, name="Armature", default="",
                             description="Name of the armature to animate (or of a mesh it deforms); empty: the "
                                         "selected character, then RigMind ▸ Armature")
    head: _object_prop("Head")
    hand_l: _object_prop("Left Hand")
    hand_r: _object_prop("Right Hand")
    head_bone: _bone_prop("Head")
    hand_l_bone: _bone_prop("Left Hand")
    hand_r_bone: _bone_prop("Right Hand")
    placement: EnumProperty(options={"SKIP_SAVE"}, name="Placement",
                            description="Whose the tracker positions are: this rig's (its hands are put on them) or "
                                        "a performer's of another size (scaled onto the rig)",
                            items=properties.TRACK_PLACEMENT_ITEMS, default="rig")
    scene_props = dict({"armature": "target_armature", "placement": "track_placement"}, **_TRACKER_PROPS,
                       **_BONE_PROPS)

    @classmethod
    def poll(cls, context):
        return poll_armature(cls, context)


class RIGMIND_OT_track_body(_TrackerObjects, ModalJobMixin, bpy.types.Operator):
    """Make a full body from three animated objects (head, left hand, right hand trackers) over the scene's frame range and bake it onto the target armature as a new action (progress shown, Esc cancels)"""

    bl_idname = "rigmind.track_body"
    bl_label = "Track Body"
    bl_options = {"REGISTER", "UNDO"}

    method: EnumProperty(options={"SKIP_SAVE"}, name="Method", description="How the body is made from the trackers",
                         items=properties.TRACK_METHOD_ITEMS, default="model")
    scene_props = dict(_TrackerObjects.scene_props, method="track_method")

    def make_job(self, context):
        from ..backend.requests import checked
        from ..backend.requests.track import from_properties
        from . import track_scene

        arm = _armature(context, self.armature)
        scene = context.scene
        take = track_scene.read_object_take(_tracker_objects(self), (scene.frame_start, scene.frame_end),
                                            _tracker_bones(self))
        request = track_scene.scene_request(checked(from_properties(self.as_keywords())), scene.frame_start)
        return track_scene.track_job(arm, take, request, label=self.head or "trackers")

    def done(self, context, result):
        action, tmap, _ = result
        first, last = action.frame_range
        self.report({"INFO"}, f"Wrote '{action.name}' ({int(round(last - first)) + 1} frames, mapping {tmap.preset})")
        return {"FINISHED"}


class RIGMIND_OT_track_live(_TrackerObjects, bpy.types.Operator):
    """Pose the target armature live from the three tracker objects at every frame of playback (or a scrub); Esc or right-click stops and leaves the scene as it was"""

    bl_idname = "rigmind.track_live"
    bl_label = "Track Live"
    bl_options = {"REGISTER"}

    _session = None
    _handler = None
    _last = None

    def execute(self, context):
        self.report({"ERROR"}, "Track Live is interactive: start it from a 3D View (RigMind ▸ Track Body ▸ Live)")
        return {"CANCELLED"}

    def invoke(self, context, event):
        from . import track_live

        fill_from_scene(self, context, self.scene_props)
        if context.window is None or context.area is None or context.area.type != "VIEW_3D":
            return self.execute(context)
        try:
            self._session = track_live.TrackLiveSession(_armature(context, self.armature), _tracker_objects(self),
                                                         bones=_tracker_bones(self), placement=self.placement)
        except Exception as e:  # reported by kind: a user error as one line, anything else as an internal error
            return report_failure(self, e)
        self._last = context.scene.frame_current + context.scene.frame_subframe
        self._handler = self._on_frame
        bpy.app.handlers.frame_change_post.append(self._handler)
        context.window_manager.modal_handler_add(self)
        self._status(context)
        return {"RUNNING_MODAL"}

    def _on_frame(self, scene, depsgraph=None):
        # The trackers' time is the timeline's: the frames advanced since the
        # last tick (a scrub back or a loop restarts the tracker's history).
        now = scene.frame_current + scene.frame_subframe
        from .scene_io import scene_fps  # on the first tick, not when the add-on registers

        dt, self._last = (now - self._last) / scene_fps(scene), now
        session = self._session
        if session is not None and not session.closed:
            session.tick(dt)
            if session.ticks % 15 == 0:
                self._status(bpy.context)

    def _status(self, context, clear: bool = False):
        ws = getattr(context, "workspace", None)
        if ws is not None:
            s = self._session
            text = None
            if not clear and s is not None and s.timings["total"]:
                text = (f"Track Live · {1000 * float(sum(s.timings['total'][-30:])) / len(s.timings['total'][-30:]):.1f}"
                        " ms a tick · play the timeline · Esc stops")
            elif not clear:
                text = "Track Live · play the timeline · Esc stops"
            ws.status_text_set(text)

    def _end(self, context):
        if self._handler is not None and self._handler in bpy.app.handlers.frame_change_post:
            bpy.app.handlers.frame_change_post.remove(self._handler)
        self._handler = None
        if self._session is not None:
            self._session.close()
        self._status(context, clear=True)

    def modal(self, context, event):
        if event.type in {"ESC", "RIGHTMOUSE"} and event.value == "PRESS":
            self._end(context)
            self.report({"INFO"}, "Track Live stopped; the scene is as it was")
            return {"CANCELLED"}
        if event.type == "TIMER":
            self._status(context)
        return {"PASS_THROUGH"}

    def cancel(self, context):
        # Blender ends the modal (a file is loaded, the window closes).
        self._end(context)


CLASSES = (RIGMIND_OT_track_body, RIGMIND_OT_track_live)
