"""Which bone of the user's rig is which joint of the canonical humanoid.

The one place a target rig's mapping comes from, for every job that puts
motion on a rig (retargeting, gesture, face's jaw bone, locomotion) and for
the checks that refuse a rig before any generation.
"""

from __future__ import annotations

from ..backend.bone_mapping import BoneMapping, auto_map, match_preset
from . import scene_io


def target_mapping(arm_obj, preset=None) -> BoneMapping:
    """The target rig's mapping: a saved user mapping on the armature
    (custom property ``rigmind_bone_map``), a named preset, or auto-detection."""
    skel = scene_io.read_skeleton(arm_obj)
    stored = arm_obj.get("rigmind_bone_map") if preset is None else None
    if stored:
        return BoneMapping.from_json(stored)
    if preset:
        return match_preset(skel, preset)
    return auto_map(skel)


__all__ = ["target_mapping"]
