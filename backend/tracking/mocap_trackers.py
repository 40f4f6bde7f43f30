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
from .canonical import CANONICAL_MAP, TRACKED, canonical_skeleton, is_canonical
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
    r = retarget(motion, mapping, canonical_skeleton(), CANONICAL_MAP, RetargetConfig(ik=False, hand_ik=False))
    return _fix_head_yaw(r.motion, motion, mapping)


def _yaw(v):
    return np.arctan2(v[..., 0], -v[..., 1])


def _fix_head_yaw(canon: Motion, source: Motion, mapping: dict) -> Motion:
    """``canon`` with its Head's twist corrected so that the head faces where
    the source's head faces. Why: the canonical Head is a leaf bone whose
    rest (the Bandai BVH rest lies along X) gives the retarget no geometry for
    its roll, and the transferred head came out turned by a constant angle
    (~55 degrees on CMU 131); every heading-frame input follows the head's yaw.
    The source's head forward is its rest facing (the rest hips' and
    shoulders' left-right axis x up) carried by the head's rotation from rest;
    it needs a standing rest (T or A pose), which every non-Bandai source has."""
    from .. import rotations
    from .evaluate import body_frames
    from .features import HEAD_FORWARD

    sk = source.skeleton
    need = ("head", "upperleg_l", "upperleg_r")
    if any(k not in mapping for k in need):
        return canon
    si = {k: sk.index(mapping[k]) for k in need}
    rest_rot, rest_pos = sk.rest_world()
    rest_fwd = -body_frames(rest_pos[None], si)[0, 1]
    W_src = source.world_rotations()[:, si["head"]]
    f_src = rotations.rotate(rotations.mul(W_src, rotations.inv(rest_rot[si["head"]])),
                             np.broadcast_to(rest_fwd, W_src.shape[:-1] + (3,)))
    h = canon.skeleton.index("Head")
    W_c = canon.world_rotations()[:, h]
    f_c = rotations.rotate(W_c, np.broadcast_to(HEAD_FORWARD, W_c.shape[:-1] + (3,)))
    ok = (np.linalg.norm(f_src[:, :2], axis=-1) > 0.3) & (np.linalg.norm(f_c[:, :2], axis=-1) > 0.3)
    if not ok.any():
        return canon
    d = np.angle(np.exp(1j * (_yaw(f_src) - _yaw(f_c))))[ok]
    phi = float(np.angle(np.mean(np.exp(1j * d))))
    if abs(phi) < np.radians(2.0):
        return canon
    z = np.array([np.cos(0.5 * phi), 0.0, 0.0, np.sin(0.5 * phi)])
    # The same correction in the bone's own frame (a constant roll), averaged over the clip.
    e = rotations.mul(rotations.mul(rotations.inv(W_c), z[None]), W_c)
    e = np.where((e[:, :1] < 0), -e, e).mean(axis=0)
    e = e / np.linalg.norm(e)
    rot = canon.rotations.copy()
    rot[:, h] = rotations.mul(rot[:, h], e[None])
    return Motion(canon.skeleton, rot, canon.root_positions, canon.fps, canon.translations, list(canon.shape_names),
                  canon.shape_weights, canon.name)


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
