"""Generate Gesture in the scene: speech → gesture → the user's rig (and face).

Data flow: audio file → backend (features, model; in a worker thread for the
modal operator) → SMPL-X motion → the rig through the retargeting mapping →
a NEW action. Two bases:

- ``base="idle"``: the whole body comes from the model (its legs carry the
  speaker's weight shifts; feet are planted by the retargeter's leg IK);
- ``base="keep_legs"``: the armature's current action (e.g. a walk) keeps
  the hips and legs: the new action only holds upper-body channels and the
  old action is layered under it as an unmuted NLA strip, so Blender itself
  composes the two (channels missing from the active action come from NLA).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..backend.requests.gesture import GestureRequest
from ..backend.requests.retarget import RetargetRequest
from . import scene_audio, scene_io
from .rig_checks import check_rig

LOWER_BODY = ("root", "hips", "upperleg_l", "lowerleg_l", "foot_l", "toes_l",
              "upperleg_r", "lowerleg_r", "foot_r", "toes_r")
BASES = ("idle", "keep_legs")


@dataclass
class GestureSceneResult:
    action: object
    frames: int
    seconds: float
    face: object = None
    sound_strip: object = None

    def summary(self) -> str:
        s = f"Wrote '{self.action.name}' ({self.frames} frames, {self.seconds:.1f} s of speech)"
        if self.face is not None:
            s += f"; face: {self.face.summary()}"
        return s


def _check_armature(arm):
    if arm is None or arm.type != "ARMATURE":
        raise scene_io.SceneError("select the character's armature (Generate Gesture animates an armature)")
    # Scale, then humanoid: a wrong rig is refused before the generation runs.
    check_rig(arm)


def smplx_source_map():
    from ..backend.bone_mapping import auto_map
    from ..backend.smplx_motion import smplx_rest_skeleton

    return auto_map(smplx_rest_skeleton()).bones


def read_style_clip(path):
    """A ``--style-clip`` file (BVH, FBX, glTF, SMPL-X npz: whatever
    ``rigmind retarget`` reads) → its :class:`~..backend.gesture.style_clip.ClipStyle`.
    Not a humanoid, no animated armature, no such file: one-line errors."""
    from ..backend.bone_mapping import NotHumanoidError
    from ..backend.gesture.style_clip import clip_style
    from ..backend.gesture.style_layer import StyleError
    from .retarget_scene import load_source

    name = Path(str(path)).name
    try:
        motion, mapping = load_source(path)
    except NotHumanoidError:
        raise StyleError(f"--style-clip {name} is not a humanoid: give a clip of a person gesturing "
                         "(hips, spine, head, two arms, two legs)") from None
    return clip_style(motion, mapping.bones, label=name)


def body_style(request: GestureRequest):
    """The request's emotion, style and style clip as the backend's
    ``BodyStyle`` (None when all are neutral). Reads the clip now (main
    thread: an FBX/glTF clip goes through Blender's importer)."""
    from ..backend.gesture.style_layer import BodyStyle, check_style

    style = check_style(request.style)
    clip = read_style_clip(request.style_clip) if request.style_clip else None
    body = BodyStyle(request.emotion, style, clip)
    return None if body.is_neutral else body


def generate(clip, *, amount: float, seed: int, progress=None, cancel=None, runtime: str = None, body=None):
    """Backend half (no bpy; safe in a worker thread): an ``AudioClip`` →
    ``(clip, GestureResult)``. ``body``: :func:`body_style`'s (None: neutral)."""
    from ..backend.errors import Cancelled
    from ..backend.gesture.generate import GestureCancelled, generate_gesture

    if progress:
        progress(0.1)
    try:
        res = generate_gesture(clip, amount=amount, seed=seed,
                               progress=(lambda k, n: progress(0.1 + 0.8 * k / n)) if progress else None,
                               cancelled=cancel, runtime=runtime, body=body)
    except GestureCancelled:
        raise Cancelled() from None
    return clip, res


def apply(arm, clip, result, request: GestureRequest, *, face_mesh=None, face_animation=None):
    """Scene half: the generated motion onto ``arm`` as a new action (and the
    face, the sound strip). ``request``: the take as the job resolved it (its
    ``audio_path`` names the action and the sound strip, ``start_frame`` is a
    frame, ``add_sound`` True or False). ``face_mesh``: the mesh for
    ``face_animation`` (the face curves, generated in the job's thread).
    ``request.user_scene`` (the operator): the frame range only grows to
    cover the take (else it becomes the take's; with "keep_legs" it only
    grows at the end). Returns :class:`GestureSceneResult`."""
    import bpy

    from .retarget_scene import retarget_onto
    from .rig_mapping import target_mapping

    r = request
    if r.base not in BASES:
        raise scene_io.SceneError(f"base must be one of {BASES}, got {r.base!r}")
    scene = bpy.context.scene
    # Everything that can refuse (not a humanoid, no walk to keep) is checked
    # before the scene is touched.
    tgt_map = target_mapping(arm)
    previous = arm.animation_data.action if arm.animation_data is not None else None
    if r.base == "keep_legs" and previous is None:
        raise scene_io.SceneError(f"'{arm.name}' has no action whose legs could be kept: "
                                  "bake a walk first, or use the Idle base")
    if r.set_scene_fps:
        scene.render.fps, scene.render.fps_base = 30, 1.0
    stem = Path(str(r.audio_path)).stem if r.audio_path else "speech"
    name = f"RigMind Gesture · {stem} · seed {r.seed} · amount {r.amount:.2f}"
    onto = RetargetRequest(root_mode="hips", ik=r.base == "idle", action_name=name, start_frame=r.start_frame,
                           set_scene_fps=False, scene_range="grow" if r.user_scene else True,
                           keyed=r.keyed or r.base == "keep_legs")  # the legs are layered in the NLA
    action, tgt_map, _ = retarget_onto(arm, result.motion, smplx_source_map(), onto, tgt_map=tgt_map)
    if r.base == "keep_legs":
        _layer_over(arm, action, previous, tgt_map)
    frames = int(round(action.frame_range[1] - action.frame_range[0])) + 1
    key_eyes(arm, action, tgt_map, frames, r.seed, r.start_frame)
    if r.user_scene:
        scene_io.cover_frames(scene, r.start_frame, action.frame_range[1])
    else:
        scene.frame_start = int(r.start_frame)
        last = int(np.ceil(action.frame_range[1] - 1e-6))
        scene.frame_end = max(scene.frame_end, last) if r.base == "keep_legs" else last
    strip = None
    if r.add_sound and r.audio_path:
        strip = scene_audio.add_sound_strip(scene, r.audio_path, r.start_frame)
    face = None
    if face_mesh is not None:
        from ..backend.requests.face import FaceRequest
        from .face_scene import write_face

        face_request = FaceRequest(audio_path=r.audio_path, method=r.face_method, seed=r.seed,
                                   start_frame=r.start_frame, transcript=r.transcript, add_sound=False,
                                   runtime=r.runtime)
        face = write_face(face_mesh, face_animation, face_request, armature=arm)
    return GestureSceneResult(action, frames, clip.seconds, face, strip)


def _layer_over(arm, action, previous, tgt_map):
    """Keep ``previous`` for the lower body: drop those bones' curves from
    the new action and unmute the NLA track that holds ``previous``."""
    lower = {tgt_map.get(c) for c in LOWER_BODY if tgt_map.get(c)}
    for bag in _channelbags(action):
        for fc in list(bag.fcurves):
            if fc.data_path.startswith("pose.bones["):
                bone = fc.data_path.split('"')[1]
                if bone in lower:
                    bag.fcurves.remove(fc)
            elif fc.data_path == "location":  # object root motion stays the walk's
                bag.fcurves.remove(fc)
    gesture_end = action.frame_range[1]
    strip = _legs_strip(arm, previous)
    _layer_trunk(arm, action, previous, tgt_map)
    cyclic = any(m.type == "CYCLES" for fc in _fcurves(previous) for m in fc.modifiers)
    if strip is not None:
        if cyclic and strip.frame_end < gesture_end:
            # A baked cycle plays on for the whole take: extend the strip's
            # action range and let the curves' Cycles modifiers (with their
            # root offset) continue it, as they do on the timeline.
            strip.action_frame_end = strip.action_frame_start + (gesture_end - strip.frame_start)
            strip.frame_end = gesture_end
    # NLA strips under the active action are combined per channel ("Replace"):
    # the gesture's upper body replaces, the walk's hips/legs show through.
    arm.animation_data.action_blend_type = "REPLACE"


#: The unmuted NLA track that plays the kept walk under a "keep legs" gesture.
LEGS_TRACK = "RigMind legs"


def _legs_strip(arm, previous):
    """A strip of ``previous`` at its own frames on the unmuted "RigMind legs"
    track (made once per armature, its old strip replaced): the muted
    "RigMind history" track keeps its copy and stays muted."""
    ad = arm.animation_data
    track = next((t for t in ad.nla_tracks if t.name == LEGS_TRACK), None)
    if track is None:
        track = ad.nla_tracks.new()
        track.name = LEGS_TRACK
    for old in list(track.strips):
        track.strips.remove(old)
    track.mute = False
    # The walk's own slot (the history strip's), not the new action's.
    slot = next((st.action_slot for t in ad.nla_tracks for st in t.strips
                 if st.action == previous and getattr(st, "action_slot", None) is not None), None)
    names = [st.name for t in ad.nla_tracks for st in t.strips]
    try:
        strip = track.strips.new(scene_io.unique_name(f"{previous.name} (legs)", names),
                                 int(np.floor(previous.frame_range[0])), previous)
    except RuntimeError:
        return None
    if slot is not None and hasattr(strip, "action_slot"):
        strip.action_slot = slot
    return strip


def key_eyes(arm, action, tgt_map, n_frames: int, seed: int, start_frame: int) -> list:
    """Key the rig's eye bones (where it has them) with the gaze of
    :func:`~..backend.face.gaze.gaze_angles` (the seed's, sampled at the
    scene's frame rate: the same gaze the face's eyeLook* shapes get). The
    eye turns about the character's up axis (yaw) and its left axis (pitch),
    relative to the head. Returns the bones keyed."""
    import bpy

    from ..backend import rotations
    from ..backend.face.gaze import gaze_angles

    eyes = [tgt_map.get(c) for c in ("eye_l", "eye_r")]
    if not all(eyes) or not all(e in arm.pose.bones for e in eyes):
        return []
    fps = scene_io.scene_fps(bpy.context.scene)
    gaze = gaze_angles(n_frames, fps, seed)
    mw = np.array(arm.matrix_world)[:3, :3]
    obj_rot = mw / np.linalg.norm(mw, axis=0, keepdims=True)
    up = obj_rot.T @ np.array([0.0, 0.0, 1.0])
    heads = [np.array(arm.data.bones[e].head_local) for e in eyes]
    left = heads[0] - heads[1]
    left = left - up * (left @ up)
    left /= max(np.linalg.norm(left), 1e-9)
    q = rotations.mul(rotations.from_axis_angle_pair(np.broadcast_to(up, (n_frames, 3)), gaze[:, 0]),
              rotations.from_axis_angle_pair(np.broadcast_to(left, (n_frames, 3)), -gaze[:, 1]))
    arrays = isinstance(action, scene_io.ArrayTake)
    cb = None if arrays else action.layers[0].strips[0].channelbag(arm.animation_data.action_slot, ensure=True)
    frames = start_frame + np.arange(n_frames, dtype=np.float64)
    for bone in eyes:
        rest = rotations.from_matrix(np.array(arm.data.bones[bone].matrix_local)[:3, :3])
        basis = rotations.make_continuous(rotations.normalize(rotations.mul(rotations.inv(rest)[None], rotations.mul(q, rest[None]))))
        pb = arm.pose.bones[bone]
        path = f'pose.bones["{bpy.utils.escape_identifier(bone)}"]'
        if arrays:
            action.remove(path + ".rotation")
        for fc in [] if arrays else [fc for fc in cb.fcurves if fc.data_path.startswith(path + ".rotation")]:
            cb.fcurves.remove(fc)
        if pb.rotation_mode == "QUATERNION":
            specs = [(f"{path}.rotation_quaternion", i, bone, basis[:, i]) for i in range(4)]
        elif len(pb.rotation_mode) == 3:
            e = rotations.to_euler(basis, pb.rotation_mode, intrinsic=False)
            xyz = np.empty_like(e)
            xyz[:, ["XYZ".index(a) for a in pb.rotation_mode]] = e
            specs = [(f"{path}.rotation_euler", i, bone, xyz[:, i]) for i in range(3)]
        else:
            continue
        if arrays:
            action.add(specs, frames)
        else:
            scene_io.write_curves(cb, specs, frames, "LINEAR")
    return eyes


TRUNK = ("spine", "spine1", "spine2", "chest", "upperchest", "neck")


def _walk_strip_frame(arm, previous):
    """Scene frame → the walk action's frame, through the NLA strip that holds it."""
    tracks = sorted(arm.animation_data.nla_tracks, key=lambda t: t.mute)  # the playing (legs) track first
    for track in tracks:
        for strip in track.strips:
            if strip.action == previous:
                a0, s0, scale = strip.action_frame_start, strip.frame_start, strip.scale or 1.0
                return lambda f: a0 + (f - s0) / scale
    return lambda f: f


def _rotation_curves(action, bone):
    """``{index: fcurve}`` of a bone's rotation channels and the mode ('rotation_quaternion' / 'rotation_euler')."""
    import bpy

    base = f'pose.bones["{bpy.utils.escape_identifier(bone)}"]'
    found = {}
    for fc in _fcurves(action):
        for kind in ("rotation_quaternion", "rotation_euler"):
            if fc.data_path == f"{base}.{kind}":
                found.setdefault(kind, {})[fc.array_index] = fc
    return found


def _layer_trunk(arm, action, previous, tgt_map):
    """Keep the walk's trunk under the gesture: each spine/neck bone's
    rotation becomes the walk's at that frame times the gesture's deviation
    from its own average pose (``walk ⊗ mean(gesture)⁻¹ ⊗ gesture``). The
    gesture's trunk replaced the walk's before and carried the gesture
    model's own posture, which on a walking pelvis leaned the walker
    forward by ~20°; layered, the trunk leans as the walk's does and still
    moves with the speech. Quaternion and Euler bones; others keep the
    gesture's trunk."""
    from ..backend import rotations

    to_walk = _walk_strip_frame(arm, previous)
    for canon in TRUNK:
        bone = tgt_map.get(canon)
        if not bone or bone not in arm.pose.bones:
            continue
        mode = arm.pose.bones[bone].rotation_mode
        ours = _rotation_curves(action, bone)
        walk = _rotation_curves(previous, bone)
        kind = "rotation_quaternion" if mode == "QUATERNION" else "rotation_euler" if len(mode) == 3 else None
        n = 4 if kind == "rotation_quaternion" else 3
        if kind is None or kind not in ours or len(ours[kind]) != n:
            continue
        curves = [ours[kind][i] for i in range(n)]
        k = len(curves[0].keyframe_points)
        co = np.empty((n, 2 * k))
        for i, fc in enumerate(curves):
            fc.keyframe_points.foreach_get("co", co[i])
        frames, vals = co[0, 0::2], co[:, 1::2].T
        wframes = [to_walk(f) for f in frames]
        wc = walk.get(kind, {})
        rest = [1.0, 0.0, 0.0, 0.0] if n == 4 else [0.0, 0.0, 0.0]
        wvals = np.array([[wc[i].evaluate(f) if i in wc else rest[i] for i in range(n)] for f in wframes])
        if n == 4:
            g, w = rotations.normalize(vals), rotations.normalize(wvals)
        else:
            g, w = rotations.from_euler(vals[:, list(map("XYZ".index, mode))], mode, intrinsic=False), \
                rotations.from_euler(wvals[:, list(map("XYZ".index, mode))], mode, intrinsic=False)
        g = rotations.make_continuous(g)
        mean = rotations.normalize(g.mean(axis=0))
        new = rotations.make_continuous(rotations.normalize(rotations.mul(w, rotations.mul(rotations.inv(mean)[None], g))))
        if n == 3:
            e = rotations.to_euler(new, mode, intrinsic=False)
            new = np.empty_like(e)
            new[:, ["XYZ".index(a) for a in mode]] = e
        for i, fc in enumerate(curves):
            co[i, 1::2] = new[:, i]
            fc.keyframe_points.foreach_set("co", co[i])
            fc.update()


def _channelbags(action):
    for layer in action.layers:
        for strip in layer.strips:
            yield from strip.channelbags


def _fcurves(action):
    for bag in _channelbags(action):
        yield from bag.fcurves


def generate_gesture_on_rig(arm, request: GestureRequest = GestureRequest(), face_mesh=None):
    """Generate Gesture run to the end (scripts, CLI, headless): :func:`gesture_job`
    through ``backend.tasks.finish``. ``request.audio_path`` None → the
    scene's first sound strip (and its start frame); ``face_mesh``: the mesh
    object whose ARKit keys get the face (None: no face)."""
    from ..backend.tasks import finish

    return finish(gesture_job(arm, request, face_mesh))


def gesture_job(arm, request: GestureRequest = GestureRequest(), face_mesh=None):
    """Generate Gesture as a job (``backend.tasks``): checks now, the
    backend in a worker thread (yielding progress 0..1), the face curves too
    (word recognition takes ~15 s per minute of speech: not on Blender's
    main thread), and the scene is written only when it finished, so Esc
    leaves the scene untouched. The one path of the operator and the CLI.
    ``request``: as its front end built and checked it
    (``backend.requests.checked``); its defaults (the scene's sound strip,
    whether to add one, the transcript beside the audio) are resolved here,
    before the work starts. See :func:`apply`."""
    import bpy

    from ..backend.tasks import run_in_thread

    _check_armature(arm)
    if request.base not in BASES:
        raise scene_io.SceneError(f"base must be one of {BASES}, got {request.base!r}")
    scene = bpy.context.scene
    audio_path, start_frame = scene_audio.audio_and_start(scene, request.audio_path, request.start_frame)
    from ..backend.audio import load_audio

    clip = load_audio(audio_path)  # a bad file fails now, with its message, before the modal starts
    name, mesh_name = arm.name, face_mesh.name if face_mesh is not None else None
    add_sound = request.add_sound
    if add_sound is None:
        add_sound = scene_audio.needs_sound_strip(scene, audio_path)

    face_fps = 30.0 if request.set_scene_fps else scene_io.scene_fps(scene)
    from ..backend.face.generate import transcript_beside

    transcript = request.transcript
    if mesh_name and transcript is None:
        transcript = transcript_beside(audio_path)
    resolved = replace(request, audio_path=audio_path, start_frame=start_frame, add_sound=add_sound,
                       transcript=transcript)
    body = body_style(resolved)  # a bad style or style clip fails now, before the work starts

    def work(progress, cancel):
        r = resolved
        out = generate(clip, amount=r.amount, seed=r.seed, progress=progress, cancel=cancel, runtime=r.runtime,
                       body=body)
        if mesh_name is None:
            return out, None
        from ..backend.face.generate import generate_face

        return out, generate_face(clip, transcript=r.transcript, fps=face_fps, seed=r.seed, method=r.face_method,
                                  runtime=r.runtime, emotion=r.emotion)

    def job():
        (clip_out, res), face_anim = yield from run_in_thread(work, "rigmind-gesture")
        yield 0.95
        arm_now = bpy.data.objects.get(name)
        _check_armature(arm_now)
        mesh = bpy.data.objects.get(mesh_name) if mesh_name else None
        return apply(arm_now, clip_out, res, resolved, face_mesh=mesh, face_animation=face_anim)

    return job()


def write_npz(path, result) -> Path:
    """Our take in the EMAGE / BEAT2 schema (``poses (T,165)`` SMPL-X
    axis-angle, ``trans (T,3)``, ``expressions (T,100)`` zeros, 30 fps) so
    their tools can score it."""
    from ..backend.smplx_motion import write_smplx_npz

    return write_smplx_npz(path, result.motion)
