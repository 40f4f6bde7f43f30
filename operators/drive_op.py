"""The ``rigmind.drive`` modal operator: thin plumbing around
:class:`~.drive_scene.DriveSession` (Blender events in, a timer at the
scene's frame rate, viewport redraws and the status bar)."""

from __future__ import annotations

import time

import bpy
from bpy.props import BoolProperty, EnumProperty, StringProperty

from ..blender_addon import properties
from ..blender_addon.preferences import controller_options
from .op_common import fill_from_scene, poll_armature, report_failure, resolve_armature

# The backend (locomotion, SciPy) is imported when Drive starts, never at
# registration: enabling the add-on stays fast.


def _di():
    from ..backend.locomotion import drive_input

    return drive_input


def input_event(event):
    """A Blender event as a :class:`~rigmind.backend.locomotion.drive_input.InputEvent`."""
    DI = _di()
    ndof = None
    if event.type == DI.NDOF_MOTION:
        ndof = tuple(event.ndof_motion.translation)
    return DI.InputEvent(event.type, event.value, ndof)


def _view_forward(context):
    rv3d = getattr(context, "region_data", None) or getattr(context.space_data, "region_3d", None)
    if rv3d is None:
        return (0.0, 1.0)
    return tuple(_di().view_forward(tuple(rv3d.view_rotation)))


class RIGMIND_OT_drive(bpy.types.Operator):
    """Steer the target armature live with the keyboard (WASD / arrows relative to the view, Shift run, Ctrl slow, C crouch, Space jump, 1-7 style) or a SpaceMouse; R records, Enter or right-click keeps the take as a new action, Esc leaves the scene as it was"""

    bl_idname = "rigmind.drive"
    bl_label = "Drive"
    bl_options = {"REGISTER", "UNDO"}

    save_path: BoolProperty(name="Save Path", description="Also save the path walked as a curve (for Walk Along Path)",
                            default=False)
    armature: StringProperty(options={"SKIP_SAVE"}, name="Armature", default="",
                             description="Name of the armature to steer (or of a mesh it deforms); empty: the "
                                         "selected character, then RigMind ▸ Armature")
    style: EnumProperty(options={"SKIP_SAVE"}, name="Style", description="Movement style to start with (keys 1-7 change it while driving)",
                        items=properties.STYLE_ITEMS, default="normal")
    scene_props = {"armature": "target_armature", "style": "style"}

    _session = None
    _timer = None
    _rate = None
    _last = 0.0

    @classmethod
    def poll(cls, context):
        return poll_armature(cls, context)

    def execute(self, context):
        self.report({"ERROR"}, "Drive is interactive: start it from a 3D View (RigMind ▸ Locomotion ▸ Drive)")
        return {"CANCELLED"}

    def invoke(self, context, event):
        from ..backend.requests.walk import ControllerChoice
        from . import drive_scene

        fill_from_scene(self, context, self.scene_props)
        if context.window is None or context.area is None or context.area.type != "VIEW_3D":
            return self.execute(context)
        choice = ControllerChoice(kind="neural", **controller_options(context))
        try:
            self._session = drive_scene.DriveSession(resolve_armature(context, self.armature), style=self.style,
                                                     controller=choice)
        except Exception as e:  # reported by kind: a user error as one line, anything else as an internal error
            return report_failure(self, e)
        self._rate = _di().TickRate(self._session.scene_fps)
        self._start_timer(context)
        self._last = time.perf_counter()
        context.window_manager.modal_handler_add(self)
        self._status(context)
        return {"RUNNING_MODAL"}

    def _start_timer(self, context):
        wm = context.window_manager
        if self._timer is not None:
            wm.event_timer_remove(self._timer)
        self._timer = wm.event_timer_add(self._rate.interval, window=context.window)

    def _status(self, context, clear: bool = False):
        ws = getattr(context, "workspace", None)
        if ws is not None:
            ws.status_text_set(None if clear else self._session.status_text(self._rate.rate))
        if context.area is not None:
            context.area.tag_redraw()

    def _end(self, context):
        if self._timer is not None:
            context.window_manager.event_timer_remove(self._timer)
            self._timer = None
        self._status(context, clear=True)

    def modal(self, context, event):
        DI = _di()
        session = self._session
        if event.type == "TIMER":
            # (Any window timer: game time follows the wall clock, so another
            # operator's timer only adds a redraw, never speed.)
            now = time.perf_counter()
            dt, self._last = now - self._last, now
            t0 = time.perf_counter()
            session.tick(dt, _view_forward(context))
            if self._rate.update(time.perf_counter() - t0):
                self._start_timer(context)  # a slow machine: fewer, on-time ticks
            self._status(context)
            return {"RUNNING_MODAL"}
        cmd = session.handle(input_event(event))
        if cmd == DI.FINISH:
            try:
                action, curve = session.finish(save_path=self.save_path)
            except Exception as e:  # reported by kind
                self._end(context)
                return report_failure(self, e)
            self._end(context)
            if action is None:
                self.report({"INFO"}, "Drive ended; nothing was recorded (press R to record a take)")
                return {"CANCELLED"}
            first, last = action.frame_range
            extra = f" and path '{curve.name}'" if curve is not None else ""
            self.report({"INFO"}, f"Wrote '{action.name}' ({int(round(last - first)) + 1} frames){extra}")
            return {"FINISHED"}
        if cmd == DI.CANCEL:
            session.cancel()
            self._end(context)
            self.report({"INFO"}, "Drive cancelled; the scene is as it was")
            return {"CANCELLED"}
        if cmd is not None:
            self._status(context)
        if session.consumed or not DI.passes_to_view(event.type):
            return {"RUNNING_MODAL"}
        return {"PASS_THROUGH"}

    def cancel(self, context):
        # Blender ends the modal (a file is loaded, the window closes).
        if self._session is not None:
            self._session.cancel()
        self._end(context)


CLASSES = (RIGMIND_OT_drive,)
