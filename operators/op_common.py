"""What every RigMind operator shares: finding the character from the
selection, poll messages, filling operator properties from the scene
settings, reporting errors by kind, and the modal-job mixin for long work
(progress bar, Esc) on top of ``backend.tasks``."""

from __future__ import annotations

import bpy

# --- finding the character --------------------------------------------------------------


def settings(context):
    return getattr(context.scene, "rigmind", None) if context.scene is not None else None


def armature_of(ob):
    """The armature ``ob`` stands for: itself, its parent armature, or the
    object of its Armature modifier (a character's mesh counts as its rig)."""
    if ob is None:
        return None
    if ob.type == "ARMATURE":
        return ob
    for m in getattr(ob, "modifiers", []):
        if m.type == "ARMATURE" and m.object is not None and m.object.type == "ARMATURE":
            return m.object
    p = ob.parent
    return p if p is not None and p.type == "ARMATURE" else None


def _scene_armatures(context):
    scene = context.scene
    return [o for o in (scene.objects if scene is not None else []) if o.type == "ARMATURE"]


def resolve_armature(context, name: str = ""):
    """The armature to animate: ``name`` (an armature, or a mesh it deforms)
    when given, else RigMind ▸ Armature, else the active object's armature
    (a selected mesh counts as its rig), else the scene's only armature.
    None when none fits."""
    if name:
        return armature_of(bpy.data.objects.get(name))
    s = settings(context)
    if s is not None and s.target_armature is not None and s.target_armature.type == "ARMATURE":
        return s.target_armature
    found = armature_of(getattr(context, "active_object", None))
    if found is not None:
        return found
    arms = _scene_armatures(context)
    return arms[0] if len(arms) == 1 else None


def face_candidates(scene, arm=None) -> list:
    """Meshes with shape keys: those of ``arm``'s character when given and it has any, else all in ``scene``."""
    meshes = [o for o in (scene.objects if scene is not None else [])
              if o.type == "MESH" and o.data.shape_keys is not None and len(o.data.shape_keys.key_blocks) > 1]
    if arm is not None:
        own = [o for o in meshes if armature_of(o) is arm]
        if own:
            return own
    return meshes


def resolve_face_mesh(context, name: str, arm=None):
    """``name``: a mesh name; "auto": the character's mesh with the most ARKit
    keys (never eyes or teeth; ``face_scene.most_arkit_mesh``); "": none."""
    from .face_scene import pick_face_mesh

    if not name:
        return None
    mesh = pick_face_mesh(name, face_candidates(context.scene, arm))
    if name.lower() != "auto" and (mesh is None or mesh.type != "MESH"):
        from ..backend.errors import UserError

        raise UserError(f"no mesh named '{name}' for the face: pick a mesh with ARKit shape keys, or 'auto'")
    return mesh


ARMATURE_MISSING = ("Select the character (its armature or a mesh it deforms), or set RigMind ▸ Armature")


def poll_armature(cls, context) -> bool:
    """Poll helper: True when a target armature resolves; else sets the poll message."""
    if settings(context) is None:
        cls.poll_message_set("RigMind's scene settings are missing: enable the RigMind add-on")
        return False
    if resolve_armature(context) is None:
        cls.poll_message_set(ARMATURE_MISSING)
        return False
    return True


def fill_selection(scene) -> None:
    """RigMind ▸ Armature follows the selection: the selected active
    object's armature (a character's mesh counts as its rig); when empty
    and nothing fits, the scene's only armature. Face Mesh, when empty and
    Auto Face is off: the character's mesh with the most ARKit keys. Called
    after depsgraph updates (selection changes, imports); writes only on a
    change."""
    s = getattr(scene, "rigmind", None)
    if s is None:
        return
    active = getattr(bpy.context, "active_object", None)
    arm = armature_of(active) if active is not None and active.select_get() else None
    if arm is None and s.target_armature is None:
        arms = [o for o in scene.objects if o.type == "ARMATURE"]
        arm = arms[0] if len(arms) == 1 else None
    if arm is not None and s.target_armature != arm:
        s.target_armature = arm
    if s.face_mesh is None and not s.face_auto:
        from .face_scene import most_arkit_mesh

        mesh = most_arkit_mesh(face_candidates(scene, s.target_armature))
        if mesh is not None:
            s.face_mesh = mesh


# --- operator properties from the scene settings -------------------------------------------


def scene_args(mapping: dict, context) -> dict:
    """Operator property -> value from ``scene.rigmind`` for each entry of
    ``mapping`` (operator property -> scene setting name, or a function of
    the settings); object pointers become names (None: "")."""
    s = settings(context)
    if s is None:
        return {}
    out = {}
    for prop, scene_prop in mapping.items():
        value = scene_prop(s) if callable(scene_prop) else getattr(s, scene_prop)
        if isinstance(value, bpy.types.ID):
            value = value.name
        elif value is None:
            value = ""
        out[prop] = value
    return out


def fill_from_scene(op, context, mapping: dict) -> None:
    """Set each operator property of ``mapping`` that the caller did not set
    from ``scene.rigmind`` (:func:`scene_args`). A button thus runs with the
    panel's values, a script's explicit arguments win, and the redo panel
    keeps them (the properties are SKIP_SAVE: no stale last-used values)."""
    for prop, value in scene_args(mapping, context).items():
        if not op.properties.is_property_set(prop):
            setattr(op, prop, value)


def operator_class(idname: str):
    """The registered class of ``rigmind.x`` (``bpy.types.RIGMIND_OT_x``), or None."""
    module, _, name = idname.partition(".")
    return getattr(bpy.types, f"{module.upper()}_OT_{name}", None)


def call_as_panel(idname: str, **overrides):
    """Run ``idname`` as its panel button does: the properties the panel
    fills from the scene settings, then ``overrides``. (Headless, Blender
    runs ``execute`` even for "INVOKE_DEFAULT": there is no window event.)"""
    cls = operator_class(idname)
    kwargs = scene_args(getattr(cls, "scene_props", {}), bpy.context)
    kwargs.update(overrides)
    module, _, name = idname.partition(".")
    return getattr(getattr(bpy.ops, module), name)(**kwargs)


def scene_face_choice(s) -> str:
    """RigMind ▸ Face Mesh as an operator's ``face_mesh``: "auto" or the mesh's name ("" none)."""
    if s.face_auto:
        return "auto"
    return s.face_mesh.name if s.face_mesh is not None else ""


# --- reporting errors by kind ----------------------------------------------------------------


def report_failure(op, exc: BaseException) -> set:
    """Report ``exc`` on ``op`` by kind and return ``{"CANCELLED"}``: a cancel
    as INFO, a user error as one ERROR line, anything else as an internal
    error (traceback logged, ``backend.error_log``). Every RigMind error a
    user can fix derives from ``UserError`` (the gesture model's missing
    weights among them)."""
    from ..backend.errors import Cancelled, UserError

    if isinstance(exc, Cancelled):
        op.report({"INFO"}, "Cancelled; the scene is as it was")
    elif isinstance(exc, UserError):
        op.report({"ERROR"}, (str(exc).strip().splitlines() or [type(exc).__name__])[0])
    else:
        from ..backend.error_log import internal_error_line

        # At run time bl_idname reads RIGMIND_OT_name; the log is named rigmind-name.
        idname = op.bl_idname
        where = "rigmind-" + idname.split("_OT_")[-1] if "_OT_" in idname else idname.replace(".", "-")
        op.report({"ERROR"}, internal_error_line(exc, where))
    return {"CANCELLED"}


def run_reported(op, fn):
    """``fn()`` (returning the operator's result set), its failures reported by kind."""
    try:
        return fn()
    except Exception as exc:  # reported by kind (user error / cancel / internal error), never swallowed silently
        return report_failure(op, exc)


# --- long work: the modal-job mixin ------------------------------------------------------------


class ModalJobMixin:
    """Long operators: ``make_job(context)`` returns a job (``backend.tasks``:
    checks at the call, a generator of progress fractions that returns the
    result); ``done(context, result)`` reports it and returns ``{"FINISHED"}``.

    From a button (``invoke`` with a window) the job advances on timer
    events with a progress bar and a status line; Esc closes it, which
    cancels the worker before anything is written. ``execute`` (scripts,
    headless, ``bpy.ops.rigmind.*(...)``) runs the same job to the end.
    ``scene_props``: operator property -> scene setting, filled in ``invoke``."""

    scene_props: dict = {}
    _job = None
    _timer = None

    def make_job(self, context):
        raise NotImplementedError

    def done(self, context, result) -> set:
        raise NotImplementedError

    def execute(self, context):
        from ..backend.tasks import finish

        return run_reported(self, lambda: self.done(context, finish(self.make_job(context))))

    def invoke(self, context, event):
        fill_from_scene(self, context, self.scene_props)
        if context.window is None:
            return self.execute(context)
        try:
            self._job = self.make_job(context)
        except Exception as exc:  # checks failed before anything started: reported by kind
            return report_failure(self, exc)
        wm = context.window_manager
        self._timer = wm.event_timer_add(0.1, window=context.window)
        wm.progress_begin(0, 100)
        wm.modal_handler_add(self)
        self._status(context, 0.0)
        return {"RUNNING_MODAL"}

    def _status(self, context, fraction=None):
        ws = getattr(context, "workspace", None)
        if ws is not None:
            ws.status_text_set(None if fraction is None else
                               f"RigMind {self.bl_label}: {int(round(100 * fraction))}%  (Esc cancels)")

    def _stop(self, context):
        wm = context.window_manager
        if self._timer is not None:
            wm.event_timer_remove(self._timer)
            self._timer = None
        wm.progress_end()
        self._status(context, None)

    def modal(self, context, event):
        if event.type == "ESC" and event.value == "PRESS":
            self._job.close()  # cancels the worker; nothing has been written
            self._stop(context)
            self.report({"INFO"}, "Cancelled; the scene is as it was")
            return {"CANCELLED"}
        if event.type != "TIMER":
            return {"PASS_THROUGH"}
        try:
            fraction = next(self._job)
        except StopIteration as finished:
            result = finished.value
            self._stop(context)
            return run_reported(self, lambda: self.done(context, result))
        except Exception as exc:  # the job failed: reported by kind
            self._stop(context)
            return report_failure(self, exc)
        context.window_manager.progress_update(int(round(100 * fraction)))
        self._status(context, fraction)
        return {"RUNNING_MODAL"}

    def cancel(self, context):
        # Blender ends the modal (e.g. a file is loaded): stop the worker too.
        if self._job is not None:
            self._job.close()
        self._stop(context)


class SceneFilledMixin:
    """Non-modal operators whose ``invoke`` fills unset properties from
    ``scene_props`` (operator property -> scene setting) and then executes:
    ``run(context)`` does the work, its failures reported by kind."""

    # UNDO too: the redo panel (F9) needs it to re-run with other options.
    bl_options = {"REGISTER", "UNDO"}
    scene_props: dict = {}

    def invoke(self, context, event):
        fill_from_scene(self, context, self.scene_props)
        return self.execute(context)

    def execute(self, context):
        return run_reported(self, lambda: self.run(context))


def finished(op, message: str) -> set:
    """Report ``message`` as INFO and return the operator's ``{"FINISHED"}``."""
    op.report({"INFO"}, message)
    return {"FINISHED"}
