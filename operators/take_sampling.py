"""An armature's take as arrays without stepping the scene frame by frame.

Blender evaluates a pose bone as ``parent pose @ rest (relative to parent) @
basis``, with ``basis = T(location) R(rotation) S(scale)`` from the action's
curves. When nothing else moves the bones (no constraints, drivers, NLA
layers, object animation, parent object or bone scale), the evaluated pose is
exactly that product, so the take can be sampled by reading the curves:
keys on every frame are read in one ``foreach_get`` per curve, other curves
through ``FCurve.evaluate`` (interpolation and modifiers included). This is
~20x faster than ``scene.frame_set`` per frame (which also re-evaluates the
depsgraph), and :func:`fast_path_blocker` says when it does not apply, so the
caller can fall back to stepping the scene.
"""

from __future__ import annotations

import numpy as np

from ..backend import rotations
from ..backend.motion import Motion

_ROT_CHANNELS = {"QUATERNION": ("rotation_quaternion", 4), "AXIS_ANGLE": ("rotation_axis_angle", 4)}


def _channelbag(arm_obj):
    from bpy_extras import anim_utils

    ad = arm_obj.animation_data
    if ad is None or ad.action is None or ad.action_slot is None:
        return None
    return anim_utils.action_get_channelbag_for_slot(ad.action, ad.action_slot)


def fast_path_blocker(arm_obj) -> str | None:
    """Why the take cannot be read from curves alone (None when it can)."""
    from .scene_io import pose_blocker

    ad = arm_obj.animation_data
    if ad is None or ad.action is None:
        return "no action"
    bag = _channelbag(arm_obj)
    return pose_blocker(arm_obj, None if bag is None else [fc.data_path for fc in bag.fcurves])


def _curve_values(fc, frames: np.ndarray) -> np.ndarray:
    if isinstance(fc, np.ndarray):
        return fc  # an ArrayTake's curve: its values on every frame of the take
    kp = fc.keyframe_points
    n = len(kp)
    if n == len(frames) and not len(fc.modifiers) and not fc.mute:
        co = np.empty(2 * n)
        kp.foreach_get("co", co)
        if np.array_equal(co[0::2], frames):
            return co[1::2]  # a key on every frame: the curve passes through its keys
    return np.fromiter((fc.evaluate(float(f)) for f in frames), float, len(frames))


def sample_take(arm_obj, skel, frame_range, fps: float, take=None) -> Motion:
    """The take on ``arm_obj`` over inclusive ``frame_range`` as a Motion in
    WORLD space (object transform applied; metres, Blender Z-up), the same
    result as stepping the scene (``retarget_scene.motion_from_action``) when
    :func:`fast_path_blocker` returns None. ``skel``: ``scene_io.read_skeleton(arm_obj)``.
    ``take``: a ``scene_io.ArrayTake`` to sample instead of the active
    action (``frame_range`` its own; ``scene_io.array_take_blocker`` said
    it can be): its values are the keys' own, so the result is the one
    keying it and sampling the action gives."""
    from .retarget_scene import object_transform, skeleton_to_world

    frames = np.arange(frame_range[0], frame_range[1] + 1, dtype=np.float64)
    F, J = len(frames), len(skel)
    index = {n: j for j, n in enumerate(skel.names)}
    if take is None:
        pairs = ((fc.data_path, fc.array_index, fc) for fc in _channelbag(arm_obj).fcurves)
    else:
        pairs = ((data_path, i, values) for (data_path, i), values in take.curves.items())
    curves = {}
    for data_path, array_index, fc in pairs:
        bone = data_path.split('"')[1]
        if bone in index:
            curves[(bone, data_path.rsplit(".", 1)[1], array_index)] = fc

    # One bone at a time into the two results: a long take's [frames,
    # bones] temporaries would be several times the take itself.
    local = np.empty((F, J, 4))
    trans = np.empty((F, J, 3))
    for j, name in enumerate(skel.names):
        loc, quat = _bone_basis(arm_obj, name, curves, frames)
        local[:, j] = rotations.mul(skel.rest_rotations[j], quat)
        trans[:, j] = skel.offsets[j] + rotations.rotate(skel.rest_rotations[j], loc)
    rot0, s0, t0 = object_transform(arm_obj)
    world_skel = skeleton_to_world(skel, rot0, s0, t0)
    roots = skel.parents < 0
    trans *= s0
    trans[:, roots] = rotations.rotate(rot0, trans[:, roots]) + t0
    local[:, roots] = rotations.mul(rot0, local[:, roots])
    name = arm_obj.animation_data.action.name if take is None else take.name
    return Motion(world_skel, rotations.make_continuous_in_place(local), trans[:, np.nonzero(roots)[0][0]], fps,
                  trans, name=name)


def _bone_basis(arm_obj, name: str, curves: dict, frames: np.ndarray) -> tuple:
    """Pose bone ``name``'s basis over ``frames``: ``(location [F, 3] m,
    unit quaternion [F, 4])`` from its curves (``{(bone, property, index):
    fcurve}``), its static values where a channel has none; a connected
    bone's location is zero (its head sits on its parent's tail)."""
    pb = arm_obj.pose.bones[name]
    F = len(frames)

    def channel(prop, size, static):
        out = np.empty((F, size))
        for i in range(size):
            fc = curves.get((name, prop, i))
            out[:, i] = _curve_values(fc, frames) if fc is not None else static[i]
        return out

    loc = np.zeros((F, 3)) if arm_obj.data.bones[name].use_connect else channel("location", 3, pb.location)
    mode = pb.rotation_mode
    if mode == "QUATERNION":
        q = channel("rotation_quaternion", 4, pb.rotation_quaternion)
        return loc, q / np.linalg.norm(q, axis=-1, keepdims=True)
    if mode == "AXIS_ANGLE":
        aa = channel("rotation_axis_angle", 4, pb.rotation_axis_angle)
        axis = aa[:, 1:] / np.maximum(np.linalg.norm(aa[:, 1:], axis=-1, keepdims=True), 1e-12)
        return loc, rotations.from_axis_angle_pair(axis, aa[:, 0])
    e = channel("rotation_euler", 3, pb.rotation_euler)
    return loc, rotations.from_euler(e, mode, intrinsic=False)  # Blender's modes: first axis first
