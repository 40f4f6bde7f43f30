"""Retargeting in the scene: load a source clip (BVH, FBX, glTF, an EMAGE /
BEAT2 SMPL-X ``.npz``, a DeepMimic ``.txt``/``.json`` clip, or another
armature's action), map both rigs onto the
canonical humanoid, transfer the pose, write a new action on the target.

World space is where source and target meet: the source clip is in world
metres (Blender Z-up) and the target skeleton is lifted from armature space
into world space with its object's transform (e.g. the 90° X rotation and
0.01 scale of FBX/glTF imports), then the result is brought back into
armature space for the pose bones. Object transforms therefore never change
what the character does in the world.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from ..backend import rotations
from ..backend.bone_mapping import auto_map, match_preset
from ..backend.motion import Motion
from ..backend.requests.retarget import RetargetRequest
from ..backend.retarget import retarget
from ..backend.skeleton import Skeleton
from . import scene_io
from .rig_checks import check_object_scale
from .rig_mapping import target_mapping

SOURCE_SUFFIXES = (".bvh", ".gz", ".npz", ".txt", ".json", ".fbx", ".glb", ".gltf")


def object_transform(arm_obj):
    """``(rotation [4] wxyz, scale, translation [3] metres)`` of the object's
    world matrix, its scale uniform. Non-uniform object scale cannot be expressed by bone
    rotations, so it is refused with a fix."""
    m = np.array([list(r) for r in arm_obj.matrix_world])
    lin = m[:3, :3]
    scales = np.linalg.norm(lin, axis=0)
    if np.ptp(scales) > 1e-4 * scales.max():
        raise scene_io.SceneError(
            f"armature '{arm_obj.name}' has non-uniform scale {np.round(scales, 4).tolist()}: "
            "apply the scale (Ctrl+A ▸ Scale) or make it uniform first"
        )
    s = float(scales.mean())
    return rotations.from_matrix(lin / s), s, m[:3, 3].copy()


def skeleton_to_world(skel: Skeleton, rot, scale, trans) -> Skeleton:
    """The armature-space skeleton placed in the world by an object transform."""
    w = skel.copy()
    w.offsets = skel.offsets * scale
    w.tails = skel.tails * scale
    roots = w.parents < 0
    w.offsets[roots] = rotations.rotate(rot, skel.offsets[roots] * scale) + trans
    w.rest_rotations[roots] = rotations.mul(rot, skel.rest_rotations[roots])
    return w


def motion_to_armature_space(motion: Motion, arm_skel: Skeleton, rot, scale, trans) -> Motion:
    """Inverse of :func:`skeleton_to_world` for a clip: roots lose the object
    rotation/translation, every translation is divided by the scale."""
    inv = rotations.inv(rot)
    rots = motion.rotations.copy()
    roots = np.nonzero(motion.skeleton.parents < 0)[0]
    rots[:, roots] = rotations.mul(inv, rots[:, roots])
    root_pos = rotations.rotate(inv, motion.root_positions - trans) / scale
    tr = None
    if motion.translations is not None:
        tr = motion.translations / scale
        tr[:, roots] = rotations.rotate(inv, motion.translations[:, roots] - trans) / scale
    sk = arm_skel.reorder(motion.skeleton.names) if arm_skel.names != motion.skeleton.names else arm_skel
    # In place: the same numbers as make_continuous without a second copy of the clip.
    return Motion(sk, rotations.make_continuous_in_place(rots), root_pos, motion.fps, tr, list(motion.shape_names),
                  motion.shape_weights, motion.name)


# --- sources ----------------------------------------------------------------------


def motion_from_action(arm_obj, frame_range=None, fps=None) -> Motion:
    """Sample an armature's current animation (action, NLA, constraints: what
    Blender evaluates) into a Motion in WORLD space, one sample per scene frame."""
    import bpy

    scene = bpy.context.scene
    if frame_range is None:
        ad = arm_obj.animation_data
        if ad is None or ad.action is None:
            raise scene_io.SceneError(f"armature '{arm_obj.name}' has no action to retarget: pick an animated armature")
        a, b = ad.action.frame_range
        frame_range = (int(round(a)), int(round(b)))
    skel = scene_io.read_skeleton(arm_obj)
    frames = range(frame_range[0], frame_range[1] + 1)
    n = len(skel)
    order = [arm_obj.pose.bones.find(name) for name in skel.names]
    mats = np.empty((len(frames), n, 4, 4))
    obj = np.empty((len(frames), 4, 4))
    buf = np.empty(len(arm_obj.pose.bones) * 16, dtype=np.float32)
    saved = scene.frame_current
    for i, f in enumerate(frames):
        scene.frame_set(f)
        arm_obj.pose.bones.foreach_get("matrix", buf)
        # foreach_get flattens each 4x4 column by column.
        mats[i] = buf.reshape(-1, 4, 4).transpose(0, 2, 1)[order]
        obj[i] = np.array([list(r) for r in arm_obj.matrix_world])
    scene.frame_set(saved)
    world = obj[:, None] @ mats
    lin = world[..., :3, :3]
    world_rot = rotations.from_matrix(lin)
    world_pos = world[..., :3, 3]
    local = np.empty_like(world_rot)
    trans = np.empty_like(world_pos)
    for j, p in enumerate(skel.parents):
        if p < 0:
            local[:, j] = world_rot[:, j]
            trans[:, j] = world_pos[:, j]
        else:
            inv_p = rotations.inv(world_rot[:, p])
            local[:, j] = rotations.mul(inv_p, world_rot[:, j])
            # Parent frames include the object's scale: measure offsets in metres.
            trans[:, j] = rotations.rotate(inv_p, world_pos[:, j] - world_pos[:, p])
    rot0, s0, t0 = object_transform(arm_obj)
    world_skel = skeleton_to_world(skel, rot0, s0, t0)
    scene_fps = scene_io.scene_fps(scene)
    ad = arm_obj.animation_data
    name = ad.action.name if ad is not None and ad.action is not None else arm_obj.name
    return Motion(world_skel, rotations.make_continuous(local), trans[:, 0], fps or scene_fps, trans, name=name)


def _has_frames(motion, path):
    """A source clip with no frames (``Frames: 0``) has nothing to retarget."""
    if motion.num_frames == 0:
        raise scene_io.SceneError(f"{path}: the clip has no frames (Frames: 0); give a clip with motion")
    return motion


def load_source(path) -> tuple:
    """``(motion, mapping)`` from a file: BVH (RigMind's reader), SMPL-X
    ``.npz`` (EMAGE / BEAT2 schema), a DeepMimic clip (``.txt`` or
    ``.json``; one that is not DeepMimic JSON is a one-line error) or
    FBX/glTF (Blender's importer; the imported objects are removed again so
    the user's scene is untouched)."""
    import bpy

    p = Path(path)
    if not p.exists():
        raise scene_io.SceneError(f"{p}: no such file")
    name = p.name.lower()
    if name.endswith(".bvh") or name.endswith(".bvh.gz"):
        from ..backend.bvh import read_bvh

        motion = _has_frames(read_bvh(p), p)
        return motion, auto_map(motion.skeleton)
    if name.endswith(".npz"):
        from ..backend.smplx_motion import read_smplx_npz

        motion = _has_frames(read_smplx_npz(p), p)
        return motion, match_preset(motion.skeleton, "smplx")
    if name.endswith((".txt", ".json")):
        from ..backend.deepmimic_motion import looks_like_deepmimic, read_deepmimic

        if p.is_file() and not looks_like_deepmimic(p):
            raise scene_io.SceneError(f"{p}: unsupported source: a .txt or .json source must be a DeepMimic clip "
                                      "(a JSON object with \"Frames\") and this one is not JSON; use a DeepMimic "
                                      "clip, .bvh, .bvh.gz, .npz (SMPL-X), .fbx, .glb or .gltf")
        motion = _has_frames(read_deepmimic(p), p)
        return motion, match_preset(motion.skeleton, "deepmimic")
    if not name.endswith((".fbx", ".glb", ".gltf")):
        raise scene_io.SceneError(f"{p}: unsupported source; use .bvh, .bvh.gz, .npz (SMPL-X), .txt/.json "
                                  "(DeepMimic), .fbx, .glb or .gltf")
    before_objs, before_actions = set(bpy.data.objects), set(bpy.data.actions)
    from .rig_files import import_foreign, quiet_stdout

    try:
        try:
            with quiet_stdout():
                import_foreign(bpy, p)
        except RuntimeError as e:  # Blender's importers report a bad file so
            from .rig_files import first_line

            if "KeyboardInterrupt" in str(e):
                raise KeyboardInterrupt from None
            raise scene_io.SceneError(f"{p}: could not be read ({first_line(e)})") from None
        new = [o for o in bpy.data.objects if o not in before_objs]
        arms = [o for o in new if o.type == "ARMATURE" and o.animation_data and o.animation_data.action]
        if not arms:
            raise scene_io.SceneError(f"{p}: no animated armature in the file")
        src = max(arms, key=lambda a: len(a.data.bones))
        motion = motion_from_action(src)
        motion.name = p.stem
        return motion, auto_map(motion.skeleton)
    finally:
        for o in [o for o in bpy.data.objects if o not in before_objs]:
            bpy.data.objects.remove(o, do_unlink=True)
        for a in [a for a in bpy.data.actions if a not in before_actions]:
            bpy.data.actions.remove(a)


# --- target ---------------------------------------------------------------------


def retarget_onto(arm_obj, motion: Motion, src_map, request: RetargetRequest = RetargetRequest(), *,
                  tgt_map=None, reference: Motion = None, flat_pose: Motion = None, adjust=None):
    """Retarget ``motion`` (world space) onto ``arm_obj`` as a new action.

    Returns ``(action, target_mapping, result)``. ``request``: the root
    mode ("hips", "in_place", "root_bone" with ``root_bone``, or "object":
    the object's location is keyed in the same action), leg IK, root scale
    (see :func:`~..backend.retarget.retarget`; None = the leg-length ratio),
    the action's name and start frame, and what happens to the scene's rate
    and range (``scene_io.write_motion``; the operators ask for False /
    "grow": a user's scene keeps its rate and range). Its source fields are
    the caller's: ``motion`` and ``src_map`` are the loaded clip.

    On a generated Rigify rig the keys go on the FK controls (IK/FK
    switches set and keyed to FK) while ``tgt_map`` (default: the rig's
    mapping, :func:`~.rig_mapping.target_mapping`) stays the DEF- bones'
    mapping, where the body is measured: see operators/rigify.py.
    ``reference``, ``flat_pose``: the source's reference pose and flat-feet
    pose (see ``backend.retarget.retarget``). ``adjust(motion, mapping)``:
    applied to the retargeted motion (world space, the rig's skeleton; the
    mapping its canonical -> bone names) before the keys are written, e.g.
    the tracker pinning its planted feet on the rig's own legs. With ``request.keyed`` False
    the returned "action" may be a ``scene_io.ArrayTake`` (for a BVH:
    ``export.export_written``).
    """
    from . import rigify

    r = request
    check_object_scale(arm_obj)
    arm_skel = scene_io.read_skeleton(arm_obj)
    rot, scale, trans = object_transform(arm_obj)
    tgt_map = tgt_map if tgt_map is not None else target_mapping(arm_obj)
    key_map, rigify_plan = tgt_map, None
    if rigify.is_rigify(arm_obj):
        rigify_plan = rigify.prepare(arm_obj, tgt_map, r.root_bone if r.root_mode == "root_bone" else None)
        arm_skel, key_map = rigify_plan.skeleton, rigify_plan.mapping
    world_skel = skeleton_to_world(arm_skel, rot, scale, trans)
    result = retarget(
        motion,
        dict(getattr(src_map, "bones", src_map)),
        world_skel,
        dict(getattr(key_map, "bones", key_map)),
        r.config(),
        reference=reference,
        flat_pose=flat_pose,
    )
    if adjust is not None:
        result = replace(result, motion=adjust(result.motion, dict(getattr(key_map, "bones", key_map))))
    on_rig = motion_to_armature_space(result.motion, arm_skel, rot, scale, trans)
    if rigify_plan is not None:
        on_rig = rigify_plan.to_bone_locals(on_rig)
    label = r.action_name or f"RigMind Retarget · {motion.name or 'clip'}"
    object_locations = None
    if r.root_mode == "object" and result.root_motion is not None:
        object_locations = trans + np.asarray(result.root_motion)
    action = None
    if not r.keyed and rigify_plan is None:  # Rigify's IK/FK switches are keys on the action
        action = scene_io.motion_array_take(arm_obj, on_rig, label, frame_start=r.start_frame,
                                            set_scene_fps=r.set_scene_fps, object_locations=object_locations,
                                            set_scene_range=r.scene_range)
    if action is None:
        action = scene_io.write_motion(
            arm_obj, on_rig, label, frame_start=r.start_frame, set_scene_fps=r.set_scene_fps,
            object_locations=object_locations, set_scene_range=r.scene_range,
        )
    if rigify_plan is not None:
        rigify.key_switches(arm_obj, action, rigify_plan.switches, r.start_frame)
    return action, tgt_map, result


# --- measuring ----------------------------------------------------------------------


def rest_positions_world(arm_obj, bones: dict) -> dict:
    """``canonical -> [3]`` world rest positions (bone heads, metres)."""
    mw = np.array([list(r) for r in arm_obj.matrix_world])
    return {c: (mw @ np.append(np.array(arm_obj.data.bones[b].head_local), 1.0))[:3] for c, b in bones.items()}


def sample_positions_world(arm_obj, bones: dict, frames) -> dict:
    """``canonical -> [F, 3]`` world positions of bone heads in Blender's
    evaluated pose (constraints, drivers and NLA included) at scene ``frames``."""
    import bpy

    scene = bpy.context.scene
    saved = scene.frame_current
    out = {c: np.empty((len(frames), 3)) for c in bones}
    for i, f in enumerate(frames):
        scene.frame_set(int(f))
        mw = np.array([list(r) for r in arm_obj.matrix_world])
        for c, b in bones.items():
            out[c][i] = mw[:3, :3] @ np.array(arm_obj.pose.bones[b].head) + mw[:3, 3]
    scene.frame_set(saved)
    return out


def action_quaternion_keys(action, arm_obj) -> dict:
    """``bone -> [K, 4]`` quaternion key values of ``action`` (for checking
    continuity: consecutive keys should have a positive dot product)."""
    cb = action.layers[0].strips[0].channelbag(arm_obj.animation_data.action_slot)
    curves = {}
    for fc in cb.fcurves:
        if fc.data_path.endswith(".rotation_quaternion"):
            vals = np.empty(2 * len(fc.keyframe_points))
            fc.keyframe_points.foreach_get("co", vals)
            curves.setdefault(fc.group.name if fc.group else fc.data_path, {})[fc.array_index] = vals[1::2]
    return {b: np.stack([c[i] for i in range(4)], axis=-1) for b, c in curves.items() if len(c) == 4}
