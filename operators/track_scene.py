"""Track Body in the scene: three trackers (head, left hand, right hand) →
a full body on the target armature as a new action.

Where the trackers come from (:func:`load_take`): a tracker CSV file, the
head and wrists of a clip (BVH, FBX, glTF, SMPL-X .npz, DeepMimic; FBX and
glTF through Blender's importers, the imported objects removed again), or
three animated objects in the scene (:func:`read_object_take`: their world
matrices as Blender evaluates them, parents and constraints included, one
sample per scene frame). The body is made by
``backend.tracking.body_from_trackers.track_body`` on the canonical (Bandai)
skeleton and retargeted onto the armature as a NEW action: the rig's
previous action is kept (``retarget_scene.retarget_onto``).

An object's rotation is the tracker's: an empty with no rotation is a head
upright and looking along -Y (the canonical skeleton's rest), a hand in the
canonical rest pose's hand orientation (docs/tracking.md).

Units: metres, seconds; Blender Z up.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from ..backend import rotations
from ..backend.requests.retarget import RetargetRequest
from ..backend.requests.track import TrackRequest
from ..backend.tracking.trackers import TRACKER_WORDS, TrackerFileError, TrackerTake, check_take, read_tracker_csv
from . import scene_io

#: The clip types ``--trackers-from`` reads (what ``rigmind retarget --src`` reads).
CLIP_SUFFIXES = (".bvh", ".bvh.gz", ".fbx", ".glb", ".gltf", ".npz", ".txt", ".json")


# --- the take ---------------------------------------------------------------------------


def take_from_clip(path) -> TrackerTake:
    """The head and wrist trackers of a clip (``retarget_scene.load_source``
    reads it; its automatic bone mapping finds the head and hands)."""
    from ..backend.tracking.mocap_trackers import trackers_from_motion
    from . import retarget_scene

    motion, src_map = retarget_scene.load_source(path)
    return trackers_from_motion(motion, dict(getattr(src_map, "bones", src_map)))


def load_take(request: TrackRequest) -> tuple:
    """``(take, label)``: the request's tracker file or clip, checked
    (``trackers.check_take``); ``label`` names it in the action."""
    if request.trackers is not None:
        p = Path(request.trackers)
        return read_tracker_csv(p, up=request.up), p.stem
    if request.trackers_from is not None:
        p = Path(request.trackers_from)
        if not p.name.lower().endswith(CLIP_SUFFIXES):
            raise TrackerFileError(f"{p}: --trackers-from reads a clip ({' '.join(CLIP_SUFFIXES)}); "
                                   "for a tracker CSV file use --trackers")
        return check_take(take_from_clip(p), name=str(p)), p.name.split(".")[0]
    raise TrackerFileError("no trackers: give --trackers FILE.csv or --trackers-from CLIP")


def object_rotations(mats) -> np.ndarray:
    """Unit quaternions ``[..., 4]`` (w, x, y, z) of world matrices
    ``[..., 4, 4]``, their scale divided out (an empty drawn large is the
    same tracker)."""
    lin = np.asarray(mats, dtype=np.float64)[..., :3, :3]
    scale = np.linalg.norm(lin, axis=-2, keepdims=True)
    return rotations.from_matrix(lin / np.maximum(scale, 1e-12))


def check_tracker_objects(objects, bones=None) -> list:
    """The three trackers (head, left hand, right hand) as ``(object, bone
    name or "")``, or one line saying which is missing, doubled or names a
    bone its armature lacks. ``bones``: a bone per tracker ("" or None: the
    object itself; only an armature's bone can be named)."""
    objs = list(objects)
    bones = [b or "" for b in (bones if bones is not None else ("",) * len(objs))]
    missing = [w for w, o in zip(TRACKER_WORDS, objs) if o is None]
    if len(objs) != 3 or len(bones) != 3 or missing:
        raise TrackerFileError(f"pick the {' and '.join(missing) or 'three'} tracker object"
                               f"{'s' if len(missing) != 1 else ''} (RigMind ▸ Track Body: Head, Left Hand, Right Hand)")
    for word, ob, bone in zip(TRACKER_WORDS, objs, bones):
        if bone and (ob.type != "ARMATURE" or ob.pose is None or ob.pose.bones.get(bone) is None):
            raise TrackerFileError(f"the {word} tracker names bone '{bone}', which '{ob.name}' does not have; "
                                   "pick one of its bones, or clear the bone to use the object")
    if len({(o.name, b) for o, b in zip(objs, bones)}) < 3:
        raise TrackerFileError("the head, left hand and right hand trackers must be three different objects or bones")
    return list(zip(objs, bones))


def _world_matrix(ob, bone: str):
    """The tracker's evaluated world matrix (an object's, or a pose bone's in
    its armature's world)."""
    return ob.matrix_world @ ob.pose.bones[bone].matrix if bone else ob.matrix_world


def read_object_take(objects, frame_range=None, bones=None) -> TrackerTake:
    """The take of three scene objects (head, left hand, right hand; or
    bones of them, ``bones``, see :func:`check_tracker_objects`) over
    ``frame_range`` (first, last scene frames; None: the scene range): their
    evaluated world matrices at each frame (``scene.frame_set``: parents,
    constraints and drivers as Blender shows them), times in seconds from
    the first frame at the scene's frame rate. The current frame is put back."""
    import bpy

    trackers = check_tracker_objects(objects, bones)
    scene = bpy.context.scene
    first, last = frame_range if frame_range is not None else (scene.frame_start, scene.frame_end)
    if last <= first:
        raise TrackerFileError(f"frames {first}-{last}: track at least two frames (set the scene's frame range)")
    frames = np.arange(int(first), int(last) + 1)
    mats = np.empty((len(frames), 3, 4, 4))
    saved = scene.frame_current, scene.frame_subframe
    try:
        for i, f in enumerate(frames):
            scene.frame_set(int(f))
            for k, (ob, bone) in enumerate(trackers):
                mats[i, k] = np.array(_world_matrix(ob, bone))
    finally:
        scene.frame_set(saved[0], subframe=saved[1])
    times = (frames - frames[0]) / scene_io.scene_fps(scene)
    return TrackerTake(times, mats[..., :3, 3], object_rotations(mats))


def objects_now(trackers) -> tuple:
    """``(positions [3, 3], rotations [3, 4])`` of the three trackers
    (``(object, bone)`` from :func:`check_tracker_objects`) at the current
    frame (world, metres; the live tick)."""
    # mathutils' own conversion (its scale divided out): a NumPy one costs
    # ~0.3 ms for three matrices, a sixth of the live tick's budget.
    mats = [_world_matrix(ob, bone) for ob, bone in trackers]
    pos = np.array([tuple(m.translation) for m in mats])
    return pos, np.array([tuple(m.to_quaternion()) for m in mats])


# --- the body on the rig ------------------------------------------------------------------


def track_config(request: TrackRequest, fps: float):
    """The backend's settings for ``request`` at ``fps`` frames per second."""
    from ..backend.tracking.body_from_trackers import TrackConfig

    return TrackConfig(method=request.method, fps=float(fps))


def trackers_are_the_rigs(request: TrackRequest) -> bool:
    """True when the trackers say where this rig's head and hands go
    (``request.placement`` "rig"; by default three scene objects and a
    tracker file, whose positions are in the scene's metres), False for
    another body's ("performer"; by default a clip's head and wrists,
    ``--trackers-from``: its size and proportions carried over as a retarget
    carries them)."""
    if request.placement is not None:
        return request.placement == "rig"
    return request.trackers_from is None


def _retarget_request(request: TrackRequest, label: str) -> RetargetRequest:
    # The body's rotations are transferred as they are (the retarget's own
    # foot IK would decide contacts anew); apply_body then pins the planted
    # feet on the rig's legs with the tracker's contacts. Trackers placed for
    # the rig keep their path: the hips travel it 1:1, not scaled by the
    # leg-length ratio, so the hands can be put on the trackers after.
    return RetargetRequest(root_mode="hips", ik=False, start_frame=request.start_frame,
                           set_scene_fps=request.set_scene_fps, scene_range=request.scene_range,
                           action_name=request.action_name or f"RigMind Track · {label}", keyed=request.keyed,
                           root_scale=1.0 if trackers_are_the_rigs(request) else None)


def apply_body(arm, result, request: TrackRequest, label: str):
    """Retarget the tracked body (``result.motion``, the canonical skeleton,
    world space) onto ``arm`` as a new action; returns ``(action, mapping,
    retarget result)``. The planted feet are pinned on the rig's own legs;
    with trackers placed for the rig (:func:`trackers_are_the_rigs`) its
    hands are put on them too (the retarget places hands relative to the
    rig's own shoulders, which miss them on a rig of other proportions)."""
    from ..backend.tracking.canonical import CANONICAL_MAP
    from . import retarget_scene

    from ..backend.tracking.posing import pin_feet_on, reach_hands_on, reach_head_on

    def adjust(m, mapping):
        placed = trackers_are_the_rigs(request)
        if placed:
            m = reach_head_on(m, mapping, result.targets[:m.num_frames])
        m = pin_feet_on(m, mapping, result.contact_prob)
        if placed:
            m = reach_hands_on(m, mapping, result.targets[:m.num_frames, 1:])
        return m

    return retarget_scene.retarget_onto(arm, result.motion, dict(CANONICAL_MAP), _retarget_request(request, label),
                                        adjust=adjust)


def track_job(arm, take: TrackerTake, request: TrackRequest, label: str = "trackers"):
    """Track Body as a job (``backend.tasks``): the checks now, the body
    made in a worker thread (progress 0..0.9, the cancel flag asked between
    chunks), then the retarget onto the armature on the main thread; Esc
    before that leaves the scene untouched. The one path of the operator,
    the CLI and batch. ``request.fps`` None: the scene's frame rate when
    the scene keeps its rate, else the model's 30."""
    import bpy

    from ..backend.tasks import run_in_thread
    from ..backend.tracking.body_from_trackers import track_body

    if arm is None or arm.type != "ARMATURE":
        raise scene_io.SceneError("no armature to put the body on: pick the character's armature")
    check_take(take)
    fps = request.fps or (30.0 if request.set_scene_fps else scene_io.scene_fps(bpy.context.scene))
    config = track_config(request, fps)
    name = arm.name

    def work(progress, cancel):
        from ..backend.errors import Cancelled

        try:
            return track_body(take, config, progress=lambda f: progress(0.9 * f), cancelled=cancel)
        except InterruptedError:  # the baseline's frame loop saw the cancel flag
            raise Cancelled("Cancelled") from None

    def job():
        result = yield from run_in_thread(work, "rigmind-track")
        yield 0.95
        arm_now = bpy.data.objects.get(name)
        if arm_now is None or arm_now.type != "ARMATURE":
            raise scene_io.SceneError(f"the armature '{name}' went away while tracking; pick it again")
        return apply_body(arm_now, result, request, label)

    return job()


def track_onto(arm, take: TrackerTake, request: TrackRequest, label: str = "trackers"):
    """:func:`track_job` run to the end (scripts, the CLI, batch)."""
    from ..backend.tasks import finish

    return finish(track_job(arm, take, request, label), poll_seconds=0.005)


def scene_request(request: TrackRequest, first_frame: int) -> TrackRequest:
    """The operator's request for a take read from scene objects: its keys
    start at the take's first frame."""
    return replace(request, start_frame=int(first_frame))


__all__ = ["load_take", "read_object_take", "objects_now", "track_job", "track_onto", "apply_body", "trackers_are_the_rigs",
           "check_tracker_objects", "take_from_clip", "CLIP_SUFFIXES"]
