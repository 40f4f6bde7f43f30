"""Headless renders of a character: a still PNG or an MP4 (H.264 + AAC when
the scene has a sound strip). The stage (camera that frames and follows the
character, three-point light, ground with a shadow catcher) comes from
render_stage when the scene has none; the user's own camera is used otherwise."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..backend.errors import UserError
from .blender_compat import strip_content_start
from .scene_audio import sound_strips

ENGINES = {"CYCLES": "CYCLES", "EEVEE": "BLENDER_EEVEE", "WORKBENCH": "BLENDER_WORKBENCH"}


class RenderError(UserError):
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
    or ``.mp4`` animation over ``frames=(start, end)`` or the scene range):
    :func:`render_job` run to the end. EEVEE and Workbench need an
    OpenGL/EGL driver; without one Blender aborts, so headless machines
    should use Cycles."""
    from ..backend.tasks import finish

    return finish(render_job(out, engine=engine, resolution=resolution, samples=samples, frames=frames,
                             targets=targets))


def _prepare(out, engine, resolution, samples, frames, targets):
    """Check the request and set the scene up (camera, lights, engine,
    resolution): ``(out, frames)``, ``frames`` None for a still."""
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
    span = None
    if out.suffix.lower() == ".mp4":
        a, b = frames or (scene.frame_start, scene.frame_end)
        span = (int(a), int(b))
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
    return out, span


def render_job(out, *, engine: str = "CYCLES", resolution=(640, 360), samples: int = 16, frames=None, targets=None):
    """:func:`render` as a job (``backend.tasks``): checks and set-up at the
    call; a still renders in one step; an MP4 renders frame by frame to PNGs
    in a temporary folder (a progress fraction after each frame; closing
    the job stops between frames and writes no MP4), then encodes them with
    the scene's sound strips (H.264 + AAC) through a temporary sequencer
    scene. Returns the output path."""
    import bpy

    out, span = _prepare(out, engine, resolution, samples, frames, targets)
    return _render_steps(bpy.context.scene, out, span)


def _render_steps(scene, out, span):
    import shutil
    import tempfile

    import bpy

    img = scene.render.image_settings
    saved = (scene.render.filepath, img.file_format, scene.frame_current)
    if hasattr(img, "media_type"):
        saved += (img.media_type,)
    try:
        if hasattr(img, "media_type"):
            img.media_type = "IMAGE"
        img.file_format = "PNG"
        if span is None:
            yield 0.0
            scene.render.filepath = str(out)
            bpy.ops.render.render(write_still=True)
            return out
        a, b = span
        n = b - a + 1
        tmp = Path(tempfile.mkdtemp(prefix="rigmind-frames-"))
        try:
            for k, f in enumerate(range(a, b + 1)):
                yield 0.95 * k / n
                scene.frame_set(f)
                scene.render.filepath = str(tmp / f"{k:06d}.png")
                bpy.ops.render.render(write_still=True)
            yield 0.95
            _encode(scene, sorted(tmp.glob("*.png")), a, out)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return out
    finally:
        # The user's output settings come back (media type before the format it allows).
        if len(saved) > 3:
            img.media_type = saved[3]
        scene.render.filepath, img.file_format = saved[0], saved[1]
        scene.frame_set(saved[2])


def _encode(scene, pngs, first_frame: int, out: Path) -> None:
    """The rendered ``pngs`` (one per frame from ``first_frame``) and the
    scene's sound strips into an MP4 (H.264, AAC when there is sound) at the
    scene's frame rate, through a temporary sequencer-only scene."""
    import bpy

    enc = bpy.data.scenes.new("RigMind encode")
    try:
        r = enc.render
        r.resolution_x, r.resolution_y = scene.render.resolution_x, scene.render.resolution_y
        r.resolution_percentage = scene.render.resolution_percentage
        r.fps, r.fps_base = scene.render.fps, scene.render.fps_base
        # The PNGs are already display-referred: pass them through unchanged.
        enc.view_settings.view_transform = "Standard"
        se = enc.sequence_editor_create()
        strip = se.strips.new_image(name="frames", filepath=str(pngs[0]), channel=1, frame_start=1)
        for p in pngs[1:]:
            strip.elements.append(p.name)
        sounds = [s for s in sound_strips(scene) if s.sound is not None]
        for k, s in enumerate(sounds):
            se.strips.new_sound(name=s.name, filepath=bpy.path.abspath(s.sound.filepath), channel=2 + k,
                                frame_start=strip_content_start(s) - first_frame + 1)
        enc.frame_start, enc.frame_end = 1, len(pngs)
        img = r.image_settings
        if hasattr(img, "media_type"):
            img.media_type = "VIDEO"
        img.file_format = "FFMPEG"
        ff = r.ffmpeg
        ff.format = "MPEG4"
        ff.codec = "H264"
        ff.audio_codec = "AAC" if sounds else "NONE"
        r.filepath = str(out)
        bpy.ops.render.render(animation=True, scene=enc.name)
    finally:
        bpy.data.scenes.remove(enc)
