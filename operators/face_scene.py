"""Put generated face animation on Blender objects: ARKit shape keys on a
mesh (any naming style), optionally a jaw bone, and the speech as a sound
strip. :func:`face_job` is what the Generate Face operator and the CLI run
(:func:`generate_face_on_mesh` runs it to the end); :func:`write_face` is
the scene half, which Generate Gesture and batch call with curves they made."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ..backend.face.arkit_names import resolve_arkit_names
from ..backend.requests.face import FaceRequest
from . import scene_audio, scene_io


@dataclass
class FaceResult:
    """What was written: the shape-key ``action``, the ARKit names the mesh has
    (``written``) and lacks (``missing``), the optional ``jaw_action`` and the
    ``animation`` itself."""

    action: object
    written: list
    missing: list
    animation: object
    jaw_action: object = None
    jaw_bone: str = ""
    notes: list = field(default_factory=list)
    companions: list = field(default_factory=list)  # other meshes driven alike (teeth, eyes …)

    def summary(self) -> str:
        msg = f"'{self.action.name}': {len(self.written)}/52 ARKit shapes"
        if self.missing:
            shown = ", ".join(self.missing[:8]) + (" …" if len(self.missing) > 8 else "")
            msg += f"; missing (skipped): {shown}"
        if self.jaw_bone:
            msg += f"; jaw bone '{self.jaw_bone}'"
        if self.companions:
            msg += f"; also on {', '.join(self.companions)}"
        return msg


def arkit_key_count(mesh_obj) -> int:
    """How many ARKit-52 shapes ``mesh_obj``'s shape keys provide."""
    from ..backend.face.arkit_names import resolve_arkit_names

    return len(resolve_arkit_names([k.name for k in mesh_obj.data.shape_keys.key_blocks]))


#: Name parts of a character's split-off meshes that carry ARKit keys too
#: (Ready Player Me's EyeLeft, Wolf3D_Teeth …) but are never its face.
COMPANION_WORDS = ("eye", "teeth", "tooth", "tongue", "lash", "brow", "beard", "hair")


def is_companion_name(name: str) -> bool:
    low = name.lower()
    return any(w in low for w in COMPANION_WORDS)


def most_arkit_mesh(meshes):
    """The mesh (with shape keys) with the most ARKit shapes: a character's
    head, never its eyes or teeth. Ready Player Me gives its eyes and teeth
    all 52 keys too, so ties go to a mesh not named like a companion part
    (eye, teeth, tongue …), then to the most vertices (the head is the big
    one). Eyes or teeth only when nothing else has ARKit keys. None for no
    meshes with ARKit keys."""
    scored = [(m, arkit_key_count(m)) for m in meshes if m.data.shape_keys is not None]
    scored = [(m, n) for m, n in scored if n > 0]
    if not scored:
        return None
    return max(scored, key=lambda mn: (not is_companion_name(mn[0].name), mn[1], len(mn[0].data.vertices)))[0]


def has_arkit_mesh(meshes) -> bool:
    """Whether :func:`most_arkit_mesh` would find one: some mesh has ARKit
    shape keys (stops at the first; for polls, which run on every redraw)."""
    return any(m.data.shape_keys is not None and arkit_key_count(m) > 0 for m in meshes)


def pick_face_mesh(choice: str, candidates):
    """The face mesh the user chose: ``choice`` "auto" → the mesh of
    ``candidates`` with the most ARKit keys (:func:`most_arkit_mesh`; None
    when none has any), "" → None, else the object of that name (None when
    there is none). Each front end says in its own words what to fix when
    this is None."""
    if not choice:
        return None
    if choice.lower() == "auto":
        return most_arkit_mesh(candidates)
    import bpy

    return bpy.data.objects.get(choice)


def companion_meshes(mesh_obj, arm=None) -> list:
    """Other meshes of the same character with ARKit shape keys — split
    teeth, eyes, tongue, beard (Ready Player Me, VRoid and CC exports keep
    them apart) — that must move with the face: the meshes deformed by or
    parented to the same armature, or sharing the face's parent."""
    import bpy

    from ..backend.face.arkit_names import resolve_arkit_names

    owner = arm or find_armature_for(mesh_obj) or mesh_obj.parent
    if owner is None:
        return []
    out = []
    for ob in bpy.data.objects:
        if ob is mesh_obj or ob.type != "MESH" or ob.data.shape_keys is None:
            continue
        if (find_armature_for(ob) or ob.parent) is not owner:
            continue
        if resolve_arkit_names([k.name for k in ob.data.shape_keys.key_blocks]):
            out.append(ob)
    return out


def _write_on_mesh(mesh_obj, anim, action_name: str, start_frame: int, shared=None):
    """The 52 curves onto one mesh's keys (resolved names) → (action, written, missing).
    ``shared``: ``(action, key names)`` of the face already written; a mesh
    whose resolved shape keys are those same names gets that action's slot
    (the same curves, evaluated the same), not a copy of every key."""
    from ..backend.face.arkit_names import resolve_arkit_names

    mapping = resolve_arkit_names([kb.name for kb in mesh_obj.data.shape_keys.key_blocks])
    names = [mapping.get(n) for n in anim.names]
    cols = [i for i, n in enumerate(names) if n is not None]
    keyed = [names[i] for i in cols]
    if shared is not None and shared[1] == keyed:
        action = scene_io.share_action(mesh_obj.data.shape_keys, shared[0])
    else:
        action, _, _ = scene_io.write_shape_keys(mesh_obj, keyed, anim.weights[:, cols], anim.fps, action_name,
                                                 frame_start=start_frame)
    return action, [anim.names[i] for i in cols], [n for n in anim.names if n not in mapping]


def find_armature_for(mesh_obj):
    """The armature that deforms ``mesh_obj`` (modifier or parent), if any."""
    for m in getattr(mesh_obj, "modifiers", []):
        if m.type == "ARMATURE" and m.object is not None:
            return m.object
    p = mesh_obj.parent
    return p if p is not None and p.type == "ARMATURE" else None


def write_jaw(arm_obj, jaw_bone: str, angles: np.ndarray, fps: float, action_name: str, frame_start: int = 1):
    """Jaw opening ``angles [F]`` (radians) as rotation about the bone's local
    X axis, in a new action on the armature (its previous one is kept)."""
    import bpy

    pb = arm_obj.pose.bones[jaw_bone]
    scene = bpy.context.scene
    frames = frame_start + np.arange(len(angles)) * (scene_io.scene_fps(scene) / fps)
    action, cb = scene_io.new_action(arm_obj, action_name, "OBJECT", True)
    path = f'pose.bones["{bpy.utils.escape_identifier(jaw_bone)}"]'
    a = np.asarray(angles, np.float64)
    if pb.rotation_mode == "QUATERNION":
        q = [np.cos(a / 2), np.sin(a / 2), np.zeros_like(a), np.zeros_like(a)]
        specs = [(f"{path}.rotation_quaternion", i, jaw_bone, q[i]) for i in range(4)]
    elif pb.rotation_mode == "AXIS_ANGLE":
        specs = [(f"{path}.rotation_axis_angle", 0, jaw_bone, a), (f"{path}.rotation_axis_angle", 1, jaw_bone, np.ones_like(a))]
    else:
        specs = [(f"{path}.rotation_euler", 0, jaw_bone, a)]
    scene_io.write_curves(cb, specs, frames, "LINEAR")
    return action


def generate_face_on_mesh(mesh_obj, request: FaceRequest = FaceRequest(), *, clip=None, armature=None) -> FaceResult:
    """Generate lip-sync and facial animation from speech onto ``mesh_obj``'s
    ARKit shape keys as a new action, run to the end (:func:`face_job`
    through ``backend.tasks.finish``). Raises ``AudioError`` /
    ``SceneError`` (ValueErrors) with a message for the user."""
    from ..backend.tasks import finish

    return finish(face_job(mesh_obj, request, clip=clip, armature=armature))


def write_face(mesh_obj, animation, request: FaceRequest, *, armature=None) -> FaceResult:
    """Scene half: ``animation`` (a ``FaceAnimation``, its own fps) onto
    ``mesh_obj``'s ARKit shape keys as a new action from
    ``request.start_frame`` (a frame), named after ``request.audio_path``.

    ``request.jaw``: also rotate the rig's mapped jaw bone (None: only when
    the mesh has no jawOpen key, so the jaw never opens twice). Shapes the
    mesh lacks are listed in ``missing`` and skipped. ``request.companions``:
    drive the character's other ARKit meshes (teeth, eyes …;
    :func:`companion_meshes`) with the same curves: a mesh with the face's
    shape keys shares the face's action and slot (Ready Player Me's teeth
    and eyes; one set of keys, 4x fewer for its four meshes: Blender holds
    ~72 bytes a key, and a second copy while it evaluates), any other gets
    its own new action. ``request.add_sound``: add the speech as a sound strip."""
    import bpy

    r = request
    start_frame = r.start_frame
    mapping = _face_mapping(mesh_obj)
    scene = bpy.context.scene
    fps = scene_io.scene_fps(scene)
    audio_path = r.audio_path or ""
    anim = animation
    names = [mapping.get(n) for n in anim.names]
    cols = [i for i, n in enumerate(names) if n is not None]
    stem = Path(audio_path).stem if audio_path else "speech"
    keyed = [names[i] for i in cols]
    action, written, _ = scene_io.write_shape_keys(mesh_obj, keyed, anim.weights[:, cols], anim.fps,
                                                   r.action_name or f"RigMind Face · {stem}", frame_start=start_frame)
    missing = [n for n in anim.names if n not in mapping]
    result = FaceResult(action, [anim.names[i] for i in cols], missing, anim, notes=list(anim.notes))
    arm = armature or find_armature_for(mesh_obj)
    jaw = r.jaw
    if jaw is None:
        jaw = "jawOpen" not in mapping
    if jaw and arm is not None:
        from .rig_mapping import target_mapping

        try:
            bone = target_mapping(arm).get("jaw")
        except ValueError:
            bone = None
        if bone and bone in arm.pose.bones:
            result.jaw_action = write_jaw(arm, bone, anim.jaw_rotation, anim.fps, f"RigMind Jaw · {stem}", start_frame)
            result.jaw_bone = bone
    if r.companions:
        for ob in companion_meshes(mesh_obj, arm):
            _write_on_mesh(ob, anim, f"{action.name} · {ob.name}", start_frame, shared=(action, keyed))
            result.companions.append(ob.name)
    last = start_frame + int(np.ceil((anim.num_frames - 1) * (fps / anim.fps)))
    scene_io.cover_frames(scene, start_frame, last)
    if r.add_sound and audio_path:
        scene_audio.add_sound_strip(scene, audio_path, start_frame)
    return result


def _face_mapping(mesh_obj) -> dict:
    """ARKit name -> the mesh's shape key, or a SceneError naming what the mesh lacks."""
    if mesh_obj is None or mesh_obj.type != "MESH":
        raise scene_io.SceneError("pick a face mesh (a mesh object with ARKit shape keys)")
    key = mesh_obj.data.shape_keys
    if key is None or len(key.key_blocks) < 2:
        raise scene_io.SceneError(f"mesh '{mesh_obj.name}' has no shape keys to animate: pick a mesh with ARKit shape keys")
    mapping = resolve_arkit_names([kb.name for kb in key.key_blocks])
    if not mapping:
        raise scene_io.SceneError(f"mesh '{mesh_obj.name}' has none of the 52 ARKit shape keys (jawOpen, eyeBlinkLeft, …)")
    return mapping


def face_job(mesh_obj, request: FaceRequest = FaceRequest(), *, clip=None, armature=None):
    """Generate Face as a job (``backend.tasks``; the one path of the
    operator, the CLI and :func:`generate_face_on_mesh`): checks now, the
    face model / word recognition in a worker thread, the shape-key actions
    written on the main thread at the end (Esc before that leaves the scene
    as it was). ``clip``: the speech already loaded (an ``AudioClip``; its
    take starts at ``request.start_frame`` or 1); None: ``request.audio_path``,
    else the scene's first sound strip, starting with it (no second strip is
    added). ``request.add_sound`` None: add the speech as a strip unless it
    already is one; ``request.fps`` None: the scene's rate. ``request``: as
    its front end built and checked it (``backend.requests.checked``)."""
    import bpy

    from ..backend.audio import load_audio
    from ..backend.face.generate import METHODS, generate_face_for, transcript_beside
    from ..backend.tasks import run_in_thread

    _face_mapping(mesh_obj)
    if request.method not in METHODS:
        raise scene_io.SceneError(f"unknown face method {request.method!r}; use one of {', '.join(METHODS)}")
    scene = bpy.context.scene
    if clip is None:
        audio_path, start_frame = scene_audio.audio_and_start(scene, request.audio_path, request.start_frame)
        clip = load_audio(audio_path)  # a bad file fails now, before the worker starts
        clip.path = str(audio_path)
    else:
        start_frame = int(request.start_frame or 1)
        audio_path = request.audio_path or getattr(clip, "path", "") or ""
    add_sound = request.add_sound
    if add_sound is None:
        add_sound = bool(audio_path) and scene_audio.needs_sound_strip(scene, audio_path)
    transcript = request.transcript
    if transcript is None and audio_path:
        transcript = transcript_beside(audio_path)
    fps = request.fps if request.fps is not None else scene_io.scene_fps(scene)
    resolved = replace(request, audio_path=audio_path, start_frame=start_frame, add_sound=add_sound,
                       transcript=transcript, fps=fps)
    name, arm_name = mesh_obj.name, armature.name if armature is not None else None

    def work(progress, cancel):
        progress(0.05)
        return generate_face_for(clip, resolved)

    def job():
        anim = yield from run_in_thread(work, "rigmind-face")
        yield 0.95
        mesh = bpy.data.objects.get(name)
        arm = bpy.data.objects.get(arm_name) if arm_name else None
        return write_face(mesh, anim, resolved, armature=arm)

    return job()
