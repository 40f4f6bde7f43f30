"""Headless renders of a character: a still PNG or an MP4 (H.264 + AAC when
the scene has a sound strip). The stage (camera that frames and follows the
character, three-point light, ground with a shadow catcher) comes from
render_stage when the scene has none; the user's own camera is used otherwise."""

from __future__ import annotations

from pathlib import Path

import numpy as np

ENGINES = {"CYCLES": "CYCLES", "EEVEE": "BLENDER_EEVEE", "WORKBENCH": "BLENDER_WORKBENCH"}
#: Custom property marking cameras RigMind created (and may re-aim).
AUTO_CAMERA_TAG = "rigmind_auto_camera"


class RenderError(ValueError):
    pass


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
    from . import render_stage

    render_stage.set_stage(targets, framed, resolution)
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
