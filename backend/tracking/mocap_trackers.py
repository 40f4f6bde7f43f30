"""Mocap files -> motions on the canonical skeleton and tracker takes.

:func:`trackers_from_motion` turns any humanoid :class:`Motion` into the
three trackers a headset and two controllers would report: positions are the
source's own head and wrist joints (world, metres, Z up), rotations the world
rotations of the canonical skeleton's ``Head`` / ``Hand_L`` / ``Hand_R`` after
retargeting the clip onto it (so every source speaks the same rotation
convention, whatever its bone axes and rest pose).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..bone_mapping import auto_map, match_preset
from ..errors import UserError
from ..motion import Motion
from ..resample import resample
from ..retarget import RetargetConfig, retarget
from .canonical import CANONICAL_MAP, TRACKED, canonical_skeleton, is_canonical, standing_skeleton
from .trackers import TrackerTake

#: Frame rate the model works at (frames per second).
FPS = 30.0
_TRACKED_CANONICAL = ("head", "hand_l", "hand_r")


class MocapFileError(UserError):
    """A mocap file tracking cannot read."""


def load_mocap(path) -> tuple:
    """``(motion, mapping)`` of a BVH (``.bvh``/``.bvh.gz``), SMPL-X ``.npz``
    or DeepMimic ``.txt``/``.json`` file; ``mapping`` is ``canonical name ->
    bone name``."""
    p = Path(path)
    name = p.name.lower()
    if not p.is_file():
        raise MocapFileError(f"{p}: no such file; give a .bvh, .bvh.gz, .npz (SMPL-X) or DeepMimic .txt clip")
    if name.endswith((".bvh", ".bvh.gz")):
        from ..bvh import read_bvh

        m = read_bvh(p)
        return m, dict(auto_map(m.skeleton).bones)
    if name.endswith(".npz"):
        from ..smplx_motion import read_smplx_npz

        m = read_smplx_npz(p)
        return m, dict(match_preset(m.skeleton, "smplx").bones)
    if name.endswith((".txt", ".json")):
        from ..deepmimic_motion import read_deepmimic

        m = read_deepmimic(p)
        return m, dict(match_preset(m.skeleton, "deepmimic").bones)
    raise MocapFileError(f"{p}: unsupported mocap file; use .bvh, .bvh.gz, .npz (SMPL-X) or DeepMimic .txt")


def to_canonical(motion: Motion, mapping: dict = None, fps: float = FPS) -> Motion:
    """``motion`` at ``fps`` on the canonical skeleton (retargeted unless it
    already is on it; proportions become the canonical ones)."""
    if abs(motion.fps - fps) > 1e-6:
        motion = resample(motion, fps)
    if is_canonical(motion):
        return motion
    mapping = dict(auto_map(motion.skeleton).bones) if mapping is None else dict(mapping)
    # No leg or hand IK: the rotations themselves are what is transferred.
    # Onto the standing rest: the canonical rest gives no body frame to
    # align the trunk's, head's and hands' rolls with (they came out turned
    # by constant angles, the pelvis by 33 degrees on CMU 131).
    r = retarget(motion, mapping, standing_skeleton(), CANONICAL_MAP, RetargetConfig(ik=False, hand_ik=False))
    return r.motion.with_pose(r.motion.rotations, r.motion.translations, skeleton=canonical_skeleton())


def trackers_from_motion(motion: Motion, mapping: dict = None) -> TrackerTake:
    """Head and wrist trackers ``[F, 3, ...]`` of ``motion`` (any humanoid;
    ``mapping`` canonical name -> bone, default the automatic bone mapping),
    one sample per frame at the motion's own frame rate."""
    if is_canonical(motion):
        src_idx = [motion.skeleton.index(n) for n in TRACKED]
        rot_src = motion
    else:
        mapping = dict(auto_map(motion.skeleton).bones) if mapping is None else dict(mapping)
        missing = [c for c in _TRACKED_CANONICAL if c not in mapping]
        if missing:
            raise MocapFileError(f"the clip has no {', '.join(missing)} bone; map them (bone mapping) and retry")
        src_idx = [motion.skeleton.index(mapping[c]) for c in _TRACKED_CANONICAL]
        rot_src = to_canonical(motion, mapping, motion.fps)
    pos = motion.world_positions()[:, src_idx]
    rot = rot_src.world_rotations()[:, [rot_src.skeleton.index(n) for n in TRACKED]]
    times = np.arange(motion.num_frames) / motion.fps
    return TrackerTake(times, pos, rot)
