"""Put back what an exporter has to change in the user's scene.

Blender's FBX and glTF exporters bake over the scene's frame range and
export the selection, so an export sets both for the take; the user's frame
range, current frame, selection and active object are restored afterwards,
whether the export finished, failed or raised.
"""

from __future__ import annotations

from contextlib import contextmanager


def _alive(ob) -> bool:
    # An object removed meanwhile leaves a dead reference (ReferenceError on use).
    try:
        return ob is not None and ob.name is not None
    except ReferenceError:
        return False


@contextmanager
def kept_frames_and_selection(context=None):
    """Inside the block change anything of: ``frame_start``, ``frame_end``,
    ``frame_current`` (scene frames), the view layer's selection and active
    object; on leaving it they are as they were."""
    import bpy

    context = context or bpy.context
    scene, layer = context.scene, context.view_layer
    frames = (scene.frame_start, scene.frame_end, scene.frame_current, scene.frame_subframe)
    selected = [ob for ob in layer.objects if ob.select_get()]
    active = layer.objects.active
    try:
        yield
    finally:
        # frame_end first could be refused below frame_start: set the range in
        # an order that is always valid, then evaluate the current frame.
        start, end, current, sub = frames
        scene.frame_start = min(start, scene.frame_end)
        scene.frame_end = end
        scene.frame_start = start
        if (scene.frame_current, scene.frame_subframe) != (current, sub):
            scene.frame_set(current, subframe=sub)
        keep = {ob.name for ob in selected if _alive(ob)}
        for ob in layer.objects:
            want = ob.name in keep
            if ob.select_get() != want:
                ob.select_set(want)
        layer.objects.active = active if _alive(active) and active.name in layer.objects else None
