"""Headless renders of a character: a still PNG or an MP4 (H.264 + AAC when
the scene has a sound strip). Adds a camera and lights framed on the
character when the scene has none; the user's own camera is used otherwise."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from ..backend.errors import UserError

ENGINES = {"CYCLES": "CYCLES", "EEVEE": "BLENDER_EEVEE", "WORKBENCH": "BLENDER_WORKBENCH"}
#: Custom property marking cameras RigMind created (and may re-aim).
AUTO_CAMERA_TAG = "rigmind_auto_camera"


class RenderError(UserError):
    pass


def _bounds(objects, frames=None) -> tuple:
    """World-space axis-aligned bounds (min, max) of what will be on screen:
    posed bones of armatures at ``frames`` (so an animated character that
    walks away stays in view), bounding boxes of other meshes."""
    import bpy

    scene = bpy.context.scene
    arms = [o for o in objects if o.type == "ARMATURE" and len(o.data.bones)]
    pts = []
    if arms:
        saved = scene.frame_current
        for f in frames or [saved]:
            scene.frame_set(int(f))
            for ob in arms:
                mw = np.array([list(r) for r in ob.matrix_world])
                for pb in ob.pose.bones:
                    for p in (pb.head, pb.tail):
                        pts.append(mw[:3, :3] @ np.array(p) + mw[:3, 3])
        scene.frame_set(saved)
    deformed = {o for o in objects if o.type == "MESH" and (o.parent in arms or any(
        m.type == "ARMATURE" and m.object in arms for m in o.modifiers))}
    for ob in objects:
        if ob.type == "MESH" and ob not in deformed:
            mw = np.array([list(r) for r in ob.matrix_world])
            corners = np.array([list(c) for c in ob.bound_box])
            pts.extend(corners @ mw[:3, :3].T + mw[:3, 3])
    if not pts:
        return np.zeros(3), np.ones(3)
    a = np.array(pts)
    lo, hi = a.min(axis=0), a.max(axis=0)
    # Bones end inside the body: pad by a little for the skin around them.
    pad = 0.06 * max(hi[2] - lo[2], 0.5)
    return lo - pad, hi + pad


def ensure_camera_and_lights(targets, *, margin: float = 1.25, frames=None) -> None:
    """A camera looking at the character from the front (-Y, slightly above)
    and a sun + fill light, if the scene has none."""
    import bpy

    scene = bpy.context.scene
    lo, hi = _bounds(targets, frames)
    centre = (lo + hi) / 2
    height = max(hi[2] - lo[2], 0.5)
    auto = scene.camera is not None and scene.camera.get(AUTO_CAMERA_TAG)
    if scene.camera is None or auto:
        # A camera RigMind placed earlier is re-aimed at what is rendered now
        # (the character may have walked away); a user's camera is never moved.
        if auto:
            cam = scene.camera
            cam_data = cam.data
        else:
            cam_data = bpy.data.cameras.new("RigMind Camera")
            cam_data.lens = 50
            cam = bpy.data.objects.new("RigMind Camera", cam_data)
            cam[AUTO_CAMERA_TAG] = True
            scene.collection.objects.link(cam)
        fov = 2 * math.atan(cam_data.sensor_width / (2 * cam_data.lens))
        dist = margin * max(height, hi[0] - lo[0]) / (2 * math.tan(fov / 2)) + (hi[1] - lo[1])
        cam.location = (centre[0] + 0.35 * dist, centre[1] - dist, centre[2] + 0.15 * height)
        direction = centre - np.array(cam.location)
        # Camera looks down its -Z with +Y up.
        from mathutils import Vector

        cam.rotation_euler = Vector(direction.tolist()).to_track_quat("-Z", "Y").to_euler()
        scene.camera = cam
    if not any(o.type == "LIGHT" for o in scene.objects):
        sun = bpy.data.objects.new("RigMind Sun", bpy.data.lights.new("RigMind Sun", "SUN"))
        sun.data.energy = 3.0
        sun.rotation_euler = (math.radians(50), math.radians(10), math.radians(30))
        scene.collection.objects.link(sun)
        fill = bpy.data.objects.new("RigMind Fill", bpy.data.lights.new("RigMind Fill", "SUN"))
        fill.data.energy = 1.0
        fill.rotation_euler = (math.radians(60), 0.0, math.radians(-140))
        scene.collection.objects.link(fill)
    if scene.world is None:
        scene.world = bpy.data.worlds.new("RigMind World")
    scene.world.color = (0.18, 0.19, 0.21)


def render(
    out,
    *,
    engine: str = "CYCLES",
    resolution=(640, 360),
    samples: int = 16,
    frames=None,
    targets=None,
) -> Path:
    """Render the current scene to ``out`` (``.png`` still of the current frame,
    or ``.mp4`` animation over ``frames=(start, end)`` or the scene range).
    EEVEE and Workbench need an OpenGL/EGL driver; without one Blender aborts,
    so headless machines should use Cycles."""
    import bpy

    # Blender resolves relative paths against the .blend's folder, not the
    # caller's working directory: always hand it an absolute path.
    out = Path(out).resolve()
    engine = engine.upper()
    if engine not in ENGINES:
        raise RenderError(f"unknown render engine {engine!r}: use CYCLES, EEVEE or WORKBENCH")
    if out.suffix.lower() not in (".png", ".mp4"):
        raise RenderError(f"{out}: render to a .png (still) or .mp4 (animation)")
    out.parent.mkdir(parents=True, exist_ok=True)
    scene = bpy.context.scene
    # Frame what will be seen: hidden helpers (glTF imports bring some) would
    # pull the camera away.
    targets = targets or [
        o for o in scene.objects
        if o.type in ("ARMATURE", "MESH") and not o.hide_render and (o.type == "ARMATURE" or o.visible_get())
    ]
    if out.suffix.lower() == ".mp4":
        a, b = frames or (scene.frame_start, scene.frame_end)
        framed = np.unique(np.linspace(a, b, 12).round().astype(int)).tolist()
    else:
        framed = [scene.frame_current]
    ensure_camera_and_lights(targets, frames=framed)
    scene.render.engine = ENGINES[engine]
    if engine == "CYCLES":
        scene.cycles.device = "CPU"
        scene.cycles.samples = samples
        scene.cycles.use_denoising = False
    elif engine == "EEVEE":
        scene.eevee.taa_render_samples = samples
    scene.render.resolution_x, scene.render.resolution_y = resolution
    scene.render.resolution_percentage = 100
    if out.suffix.lower() == ".png":
        scene.render.image_settings.file_format = "PNG"
        scene.render.filepath = str(out)
        bpy.ops.render.render(write_still=True)
        return out
    if frames:
        scene.frame_start, scene.frame_end = frames
    img = scene.render.image_settings
    img.media_type = "VIDEO" if hasattr(img, "media_type") else img.media_type
    img.file_format = "FFMPEG"
    ff = scene.render.ffmpeg
    ff.format = "MPEG4"
    ff.codec = "H264"
    has_sound = scene.sequence_editor is not None and any(
        s.type == "SOUND" for s in scene.sequence_editor.strips_all
    )
    ff.audio_codec = "AAC" if has_sound else "NONE"
    scene.render.filepath = str(out)
    bpy.ops.render.render(animation=True)
    return out
