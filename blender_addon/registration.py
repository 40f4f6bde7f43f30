"""register()/unregister() for the whole add-on.

Only bpy and this package's UI modules are imported here, so enabling the
add-on stays fast and never loads torch; operators import the backend when
they run.
"""

import importlib
import sys

import bpy

from . import panel, preferences, properties

# The package root: `rigmind` in the venv, `bl_ext.<repo>.rigmind` in Blender.
_ROOT = __package__.rsplit(".", 1)[0]
_OPS_MODULE = "operators.blender_ops"

# Classes registered by the last register(), in order; unregister() walks it
# backwards, so a partly failed register() can still be undone.
_registered = []
_scene_attached = False


def _operator_classes():
    """``operators/blender_ops.py``'s ``CLASSES``, or () while that module does
    not exist yet. Any other import error is a bug in it and propagates."""
    name = f"{_ROOT}.{_OPS_MODULE}"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as ex:
        if ex.name in (name, f"{_ROOT}.operators"):
            return ()
        raise
    return tuple(getattr(module, "CLASSES", ()))


def _classes():
    # PropertyGroups before anything pointing at them; operators before the
    # panels that draw their buttons; panels last, parents before children.
    return (
        *properties.CLASSES,
        *preferences.CLASSES,
        *_operator_classes(),
        *panel.CLASSES,
    )


@bpy.app.handlers.persistent
def _fill_fields(scene, _depsgraph=None):
    """Fill RigMind ▸ Armature / Face Mesh from the selection or the only
    candidate when they are empty (``operators.op_common.fill_selection``)."""
    module = sys.modules.get(f"{_ROOT}.operators.op_common")
    screen = getattr(bpy.context, "screen", None)
    if screen is not None and screen.is_animation_playing:
        return  # a depsgraph update per played frame: nothing to fill there
    if module is not None and getattr(scene, "rigmind", None) is not None:
        module.fill_selection(scene)


def _handlers(add: bool) -> None:
    handlers = bpy.app.handlers.depsgraph_update_post
    present = _fill_fields in handlers
    if add and not present:
        handlers.append(_fill_fields)
    elif not add and present:
        handlers.remove(_fill_fields)


def register():
    global _scene_attached
    if _registered or _scene_attached:
        # A second register() without unregister() (script reload, a failed
        # earlier enable): start from a clean slate instead of erroring.
        unregister()
    try:
        for cls in _classes():
            bpy.utils.register_class(cls)
            _registered.append(cls)
        properties.attach()
        _scene_attached = True
        _handlers(add=True)
    except Exception:
        unregister()
        raise


def unregister():
    global _scene_attached
    _handlers(add=False)
    if _scene_attached:
        properties.detach()
        _scene_attached = False
    errors = []
    while _registered:
        cls = _registered.pop()
        try:
            bpy.utils.unregister_class(cls)
        except RuntimeError as ex:
            # Keep going: one stuck class must not leave the rest registered.
            errors.append(f"{cls.__name__}: {ex}")
    if errors:
        raise RuntimeError("RigMind could not unregister " + "; ".join(errors))


def registered_classes():
    """The classes currently registered by RigMind, in registration order."""
    return tuple(_registered)
