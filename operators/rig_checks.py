"""Checks on the rig that must pass before any generation starts.

RigMind reads the skeleton in armature space and places the motion with the
object's transform, assuming that transform is a rotation, a translation and
one positive scale (a Mixamo FBX's 0.01 is fine). A negative scale mirrors
the motion (a scale of -1 on one axis turns the character inside out, on two
or three axes upside down: head below the hips, feet under the floor), and a
non-uniform one shears it. Both are refused with the fix: apply the scale.
"""

from __future__ import annotations

import numpy as np

from .rig_mapping import target_mapping
from .scene_io import SceneError

#: Relative difference between the largest and smallest axis scale that is
#: still "uniform" (float noise in imported files).
UNIFORM_TOLERANCE = 1e-4


def _chain(arm_obj) -> list:
    chain, ob = [], arm_obj
    while ob is not None:
        chain.append(ob)
        ob = ob.parent
    return chain


def world_scale(arm_obj) -> tuple:
    """``(scale [3], determinant)`` of the object's world 3x3 (its own scale
    and its parents'); the axis scales are the column lengths. Built from
    the live loc/rot/scale (``matrix_basis``), since ``matrix_world`` is
    stale until the depsgraph updates."""
    m = np.eye(3)
    for ob in _chain(arm_obj):
        basis = np.array([list(r) for r in ob.matrix_basis], dtype=float)[:3, :3]
        if ob.parent is not None:
            basis = np.array([list(r) for r in ob.matrix_parent_inverse], dtype=float)[:3, :3] @ basis
        m = basis @ m
    return np.linalg.norm(m, axis=0), float(np.linalg.det(m))


def check_object_scale(arm_obj) -> None:
    """Raise :class:`SceneError` (one line, with the fix) if ``arm_obj`` has a
    negative or non-uniform world scale (its own or a parent's)."""
    scale, det = world_scale(arm_obj)
    scaled = next((ob for ob in _chain(arm_obj) if not np.allclose(tuple(ob.scale), 1.0)), arm_obj)
    shown = ", ".join(f"{v:g}" for v in scaled.scale)
    where = f"scale ({shown})" if scaled is arm_obj else f"its parent '{scaled.name}' has scale ({shown})"
    fix = ("select it (and any scaled parent) and apply the scale: Object ▸ Apply ▸ Scale (Ctrl A), "
           "then run RigMind again")
    negative = det < 0 or any(v < 0 for ob in _chain(arm_obj) for v in ob.scale)
    if negative:
        raise SceneError(f"armature '{arm_obj.name}' has a negative scale ({where}), which would animate it "
                         f"mirrored or upside down; {fix}")
    if scale.min() <= 0 or scale.max() / scale.min() - 1.0 > UNIFORM_TOLERANCE:
        raise SceneError(f"armature '{arm_obj.name}' has a non-uniform scale ({where}), which would distort "
                         f"the motion; {fix}")


def check_humanoid(arm_obj, preset=None):
    """Raise NotHumanoidError (one line, with the fix) unless ``arm_obj`` maps
    to a humanoid; run before any generation, so a wrong rig costs no time."""
    return target_mapping(arm_obj, preset=preset)


def check_rig(arm_obj, preset=None):
    """All the checks a rig passes before any generation: its object scale,
    then that it maps to a humanoid. Returns the humanoid mapping."""
    check_object_scale(arm_obj)
    return check_humanoid(arm_obj, preset=preset)
