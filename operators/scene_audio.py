"""The scene's speech: its sound strips, read and added.

Shared by Generate Gesture and Generate Face: with no audio file given, both
take the scene's first sound strip and start the take with it; both add the
speech as a strip unless it already is one, so playback and MP4 renders
carry it in sync.
"""

from __future__ import annotations

from pathlib import Path

from . import scene_io


def sound_strips(scene) -> list:
    """The scene's sound strips (meta strips' included), in the sequencer's order."""
    se = scene.sequence_editor
    return [] if se is None else [s for s in se.strips_all if s.type == "SOUND"]


def scene_sound(scene):
    """``(path, frame_start)`` of the scene's first sound strip, or None."""
    for s in sound_strips(scene):
        if s.sound is not None:
            import bpy

            from .blender_compat import strip_content_start

            return Path(bpy.path.abspath(s.sound.filepath)), strip_content_start(s)
    return None


def needs_sound_strip(scene, audio_path) -> bool:
    """False when the speech already is the scene's sound strip."""
    existing = scene_sound(scene)
    return existing is None or Path(existing[0]) != Path(audio_path)


def audio_and_start(scene, audio_path, start_frame) -> tuple:
    """``(audio path, start frame)`` of a take: ``audio_path`` from
    ``start_frame`` (None or 0: frame 1), else the scene's first sound strip
    from its own start; a SceneError when there is neither."""
    if audio_path:
        return Path(audio_path), int(start_frame or 1)
    found = scene_sound(scene)
    if found is None:
        raise scene_io.SceneError("no speech: set RigMind ▸ Speech ▸ Audio to a recording, or add a sound strip "
                                  "in the Video Sequencer")
    # The strip already sits on the timeline: the motion starts with it, so
    # it plays in sync whatever the Start Frame setting says.
    return found[0], found[1]


def add_sound_strip(scene, audio_path, frame_start: int):
    """The speech as a sound strip at ``frame_start`` (channel 1), so playback
    and MP4 renders carry it."""
    se = scene.sequence_editor or scene.sequence_editor_create()
    name = f"RigMind · {Path(audio_path).stem}"
    strips = se.strips
    return strips.new_sound(name=name, filepath=str(audio_path), channel=1, frame_start=int(frame_start))


__all__ = ["sound_strips", "scene_sound", "needs_sound_strip", "audio_and_start", "add_sound_strip"]
