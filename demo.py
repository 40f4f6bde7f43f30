"""The end-to-end demo on the procedural mannequin; needs no external asset.

1. build the mannequin (armature, skinned body, head with the 52 ARKit shape
   keys) and key every ARKit shape in turn on its face;
2. the main job: synthesise a few sentences of speech with eSpeak NG, then
   Generate Gesture with the face on the mannequin (body, hands, fingers,
   lip-sync, blinks) with the audio as a sound strip; export glTF and the
   EMAGE-schema .npz; render an MP4 with sound;
3. bake a seamless walk cycle with the neural locomotion controller;
4. walk the mannequin along a path, starting and ending standing;
5. export with Blender's own glTF/FBX/BVH exporters, and render a still and
   a short MP4 with Cycles on the CPU.
Everything uses the committed weights; no data folder is needed.

The terminal shows one or two lines per step; what Blender itself prints
(a line per rendered frame, the exporters' progress) goes to
``demo_blender.log`` in the output folder.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np


LOG_NAME = "demo_blender.log"


class _Say:
    """The demo's own lines, on the terminal while Blender's go to the log."""

    def __init__(self, stream):
        self.stream = stream

    def __call__(self, text: str) -> None:
        print(f"[demo] {text}", file=self.stream, flush=True)

    def step(self, label: str) -> float:
        self(f"{label} ...")
        return time.perf_counter()

    def progress(self, fraction: float) -> None:
        """One line rewritten in place on a terminal (a log gets none)."""
        if self.stream.isatty():
            self.stream.write(f"\r[demo]   {100 * fraction:3.0f} %")
            self.stream.flush()

    def render(self, out, **kwargs):
        """``render.render`` with a progress line; returns the output path."""
        from .backend.tasks import finish
        from .operators import render

        try:
            return finish(render.render_job(out, **kwargs), on_progress=self.progress)
        finally:
            if self.stream.isatty():
                self.stream.write("\r\033[K")   # the progress line gives way to the next one


def run(out_dir: Path) -> list:
    """Make every demo output in ``out_dir``; returns ``[(label, path)]``,
    Blender's log last."""
    from .backend.quiet_terminal import to_log

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    log = out_dir / LOG_NAME
    with to_log(log) as terminal:
        written = _run(out_dir, _Say(terminal))
    return written + [("Blender's messages (log)", log)]


def _run(out_dir: Path, say: _Say) -> list:
    import bpy

    from .operators import export, mannequin, scene_io
    from .presets import arkit52_names

    written = []

    t = say.step("building the procedural mannequin")
    bpy.ops.wm.read_factory_settings(use_empty=True)
    parts = mannequin.build_mannequin()
    arm, head = parts["armature"], parts["head"]
    say(f"  {len(arm.data.bones)} bones, {len(head.data.shape_keys.key_blocks) - 1} ARKit shape keys "
        f"({time.perf_counter() - t:.2f} s)")

    t = say.step("keying an expression test on the face (every ARKit shape in turn)")
    names = arkit52_names()
    fps = 30.0
    frames_per = 6
    weights = np.zeros((len(names) * frames_per + 1, len(names)))
    ramp = np.sin(np.linspace(0.0, np.pi, frames_per + 1))[:-1]
    for k in range(len(names)):
        weights[k * frames_per:(k + 1) * frames_per, k] = ramp
    bpy.context.scene.render.fps = int(fps)
    action, wrote, skipped = scene_io.write_shape_keys(head, names, weights, fps, "RigMind Face · ARKit test")
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, len(weights)
    say(f"  {len(wrote)} curves x {len(weights)} frames ({time.perf_counter() - t:.2f} s)")

    blend = out_dir / "mannequin.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    written.append(("mannequin scene (.blend)", blend))

    for suffix, label in ((".glb", "glTF binary"), (".fbx", "FBX"), (".bvh", "BVH skeleton")):
        t = say.step(f"exporting {label}")
        path = export.export_character(arm, out_dir / f"mannequin{suffix}", frame_range=(1, len(weights)))
        written.append((f"mannequin ({label})", path))

    t = say.step("rendering a still with Cycles (CPU)")
    bpy.context.scene.frame_set(1 + names.index("jawOpen") * frames_per + frames_per // 2)
    png = say.render(out_dir / "mannequin.png", engine="CYCLES", resolution=(480, 640), samples=8)
    written.append(("render (Cycles, PNG)", png))
    say(f"  rendered in {time.perf_counter() - t:.1f} s")

    written += _speech(out_dir, arm, head, say)
    written += _walks(out_dir, arm, head, say)
    return written


DEMO_TEXT = ("Hello! I am the RigMind mannequin. You give me a voice, and I move my hands, "
             "my head and my face along with it. Pretty neat, right?")


def _speech(out_dir: Path, arm, head, say: _Say) -> list:
    """Speech → gesture + face on the mannequin, from synthesised speech."""
    import bpy
    import soundfile as sf

    from .backend.face.espeak import synthesize
    from .backend.requests.gesture import GestureRequest
    from .operators import export, gesture_scene, render_stage

    t = say.step("synthesising speech with eSpeak NG")
    speech = synthesize(DEMO_TEXT, "en-us", rate=150)
    wav = out_dir / "speech.wav"
    sf.write(wav, speech.samples, speech.sample_rate, subtype="PCM_16")
    say(f"  {len(speech.samples) / speech.sample_rate:.1f} s of speech ({time.perf_counter() - t:.2f} s)")

    t = say.step("Generate Gesture with the face (speech → body, hands, fingers, lip-sync, blinks)")
    request = GestureRequest(audio_path=wav, amount=0.6, seed=0, face_mesh=head.name, transcript=DEMO_TEXT)
    res = gesture_scene.generate_gesture_on_rig(arm, request, head)
    say(f"  {res.summary()} ({time.perf_counter() - t:.1f} s)")
    written = [("speech (WAV)", wav)]
    blend = out_dir / "gesture.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend), copy=True)
    written.append(("gesture + face scene with sound (.blend)", blend))
    scene = bpy.context.scene
    a, b = scene.frame_start, scene.frame_end
    written.append(("gesture (glTF)", export.export_character(arm, out_dir / "gesture.glb", frame_range=(a, b))))
    from .backend.audio import load_audio
    from .backend.gesture.generate import generate_gesture

    npz = gesture_scene.write_npz(out_dir / "gesture_emage.npz", generate_gesture(load_audio(wav), amount=0.6, seed=0))
    written.append(("gesture in the EMAGE/BEAT2 schema (.npz)", npz))

    t = say.step(f"rendering the gesture take to MP4 with sound ({b - a + 1} frames, Cycles, CPU, 320x240)")
    # The still shows the full stage; the MP4s leave out the shadow-catcher
    # ground, which doubles a Cycles frame's cost (bench/results/commands_and_performance.md).
    render_stage.show_ground(False)
    mp4 = say.render(out_dir / "gesture.mp4", engine="CYCLES", resolution=(320, 240), samples=4, frames=(a, b))
    written.append(("gesture render with sound (MP4)", mp4))
    say(f"  rendered in {time.perf_counter() - t:.1f} s")
    return written


def _drop_the_speech(scene, head) -> None:
    """The walks are their own scenes, made in the session the gesture was:
    its speech strip and lip-sync must not play under them (the saved walk
    and its MP4 would carry the speech)."""
    from .operators.scene_audio import sound_strips

    for strip in sound_strips(scene):
        scene.sequence_editor.strips.remove(strip)
    keys = head.data.shape_keys
    keys.animation_data_clear()
    for kb in keys.key_blocks:
        kb.value = 0.0          # the last evaluated expression would stay frozen on the face


def _walks(out_dir: Path, arm, head, say: _Say) -> list:
    """Walk cycle and path walk with the neural controller, when its
    committed weights are present."""
    import bpy

    from .backend.locomotion.controllers import load_controller
    from .backend.requests.walk import WalkCycleRequest, WalkPathRequest
    from .operators import export, locomotion_scene, render_stage

    try:
        controller = load_controller("neural")
    except ValueError as e:
        say(f"skipping the walks: {e}")
        return []
    _drop_the_speech(bpy.context.scene, head)
    written = []
    t = say.step("baking a walk cycle (neural controller, normal style, 1.3 m/s)")
    cycle = locomotion_scene.bake_walk_cycle(arm, WalkCycleRequest(style="normal", speed=1.3, in_place=False),
                                             controller=controller)
    a, b = (int(round(x)) for x in cycle.frame_range)
    say(f"  '{cycle.name}': {b - a} frames per loop ({time.perf_counter() - t:.1f} s)")
    path = export.export_character(arm, out_dir / "walk_cycle.glb", frame_range=(a, b))
    written.append(("walk cycle (glTF)", path))

    t = say.step("walking along a path (an S through four points, ends standing)")
    points = [(0.0, 0.0), (0.0, -3.0), (2.5, -5.0), (2.5, -8.0)]
    walk = locomotion_scene.walk_along_path(arm, WalkPathRequest(points=points, style="normal", speed=1.3),
                                            controller=controller)
    a, b = (int(round(x)) for x in walk.frame_range)
    say(f"  '{walk.name}': {(b - a) / 30:.1f} s ({time.perf_counter() - t:.1f} s)")
    blend = out_dir / "walk_along_path.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend), copy=True)
    written.append(("path walk scene (.blend)", blend))
    for suffix, label in ((".fbx", "FBX"), (".bvh", "BVH")):
        written.append((f"path walk ({label})", export.export_character(arm, out_dir / f"walk_along_path{suffix}")))

    t = say.step(f"rendering the path walk to MP4 ({b - a + 1} frames, Cycles, CPU, 320x240)")
    render_stage.show_ground(False)
    mp4 = say.render(out_dir / "walk_along_path.mp4", engine="CYCLES", resolution=(320, 240), samples=4,
                        frames=(a, b))
    written.append(("path walk render (MP4)", mp4))
    say(f"  rendered in {time.perf_counter() - t:.1f} s")
    return written
