"""The canonical skeleton the tracking model is trained on and outputs: the
Bandai-Namco BVH skeleton of the walk controller (22 joints, identity rest
rotations, ``joint_Root`` a static ground root, ``Hips`` carries the
translation). Stored as data in ``presets/tracking_skeleton.json`` so that
tracking needs no mocap on disk. Metres, Blender Z up.

That rest pose lies along X with the shoulders' left-right axis square to
the hips', so it gives a retarget no body frame to align bone rolls with;
:func:`standing_skeleton` is the same skeleton with a standing pose (a
Bandai clip's, stored beside it) as its rest, the reference every clip is
retargeted onto.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from .. import paths, rotations
from ..skeleton import Skeleton

SKELETON_PATH = paths.PRESETS_DIR / "tracking_skeleton.json"
#: Canonical joint name -> Bandai bone (the ``bandai_namco`` bone-map preset's answer).
CANONICAL_MAP = {
    "hips": "Hips", "spine": "Spine", "spine2": "Chest", "neck": "Neck", "head": "Head",
    "clavicle_l": "Shoulder_L", "upperarm_l": "UpperArm_L", "lowerarm_l": "LowerArm_L", "hand_l": "Hand_L",
    "clavicle_r": "Shoulder_R", "upperarm_r": "UpperArm_R", "lowerarm_r": "LowerArm_R", "hand_r": "Hand_R",
    "upperleg_l": "UpperLeg_L", "lowerleg_l": "LowerLeg_L", "foot_l": "Foot_L", "toes_l": "Toes_L",
    "upperleg_r": "UpperLeg_R", "lowerleg_r": "LowerLeg_R", "foot_r": "Foot_R", "toes_r": "Toes_R",
}
#: The tracked bones, in :data:`.trackers.TRACKERS` order.
TRACKED = ("Head", "Hand_L", "Hand_R")


def skeleton_to_dict(sk: Skeleton) -> dict:
    return {"names": list(sk.names), "parents": [int(p) for p in sk.parents],
            "offsets": np.round(sk.offsets, 6).tolist(), "tails": np.round(sk.tails, 6).tolist()}


def skeleton_from_dict(d: dict) -> Skeleton:
    return Skeleton(list(d["names"]), np.asarray(d["parents"]), np.asarray(d["offsets"], dtype=np.float64),
                    None, np.asarray(d["tails"], dtype=np.float64))


@lru_cache(maxsize=1)
def _cached() -> str:
    return SKELETON_PATH.read_text(encoding="utf-8")


def canonical_skeleton() -> Skeleton:
    """A fresh copy of the canonical (Bandai) skeleton."""
    return skeleton_from_dict(json.loads(_cached()))


def write_canonical_skeleton(bvh_path, out=SKELETON_PATH) -> Path:
    """Write the skeleton of a Bandai BVH (e.g. the first d2 walk) as the
    canonical one (run once; the file is committed; then
    :func:`write_standing_pose`)."""
    from ..bvh import read_bvh

    sk = read_bvh(bvh_path).skeleton
    Path(out).write_text(json.dumps(skeleton_to_dict(sk), indent=1) + "\n", encoding="utf-8")
    _cached.cache_clear()
    return Path(out)


def standing_skeleton() -> Skeleton:
    """The canonical skeleton with its standing pose (the file's
    ``standing`` entry) as the rest (:func:`~..retarget.standing_rest`)."""
    from ..motion import Motion
    from ..retarget import standing_rest

    d = json.loads(_cached())
    sk = skeleton_from_dict(d)
    return standing_rest(sk, Motion(sk, np.asarray(d["standing"], dtype=np.float64)[None], np.zeros((1, 3)), 30.0))


def standing_pose(motion) -> np.ndarray:
    """Local rotations ``[J, 4]`` of the most upright frame of a canonical
    ``motion`` (a Bandai clip), its pelvis turned about the vertical so the
    hips' left-right axis is the shoulders' (the spine keeps the upper body
    where it was): a symmetric reference, so that a source's facing comes
    over without a twist."""
    from ..retarget import upright_score

    idx = {k: motion.skeleton.index(v) for k, v in CANONICAL_MAP.items()}
    _, pos = motion.world()
    f = int(np.argmax(upright_score(pos, idx)))
    rot, pos = motion.rotations[f].copy(), pos[f]
    world = motion.slice(f, f + 1).world_rotations()[0]
    hips_lat = pos[idx["upperleg_l"]] - pos[idx["upperleg_r"]]
    arms_lat = pos[idx["upperarm_l"]] - pos[idx["upperarm_r"]]
    d = np.arctan2(arms_lat[1], arms_lat[0]) - np.arctan2(hips_lat[1], hips_lat[0])
    turn = np.array([np.cos(0.5 * d), 0.0, 0.0, np.sin(0.5 * d)])
    h, s = idx["hips"], idx["spine"]
    parent = world[motion.skeleton.parents[h]]
    new_hips = rotations.mul(turn, world[h])
    rot[h] = rotations.mul(rotations.inv(parent), new_hips)
    rot[s] = rotations.mul(rotations.inv(new_hips), world[s])
    return rot


def write_standing_pose(bvh_path, out=SKELETON_PATH) -> Path:
    """Store :func:`standing_pose` of a Bandai BVH (``dataset-2_walk_normal_001``,
    which starts standing still) as the skeleton file's ``standing`` entry
    (run once; the file is committed)."""
    from ..bvh import read_bvh

    m = read_bvh(bvh_path)
    if not is_canonical(m):
        raise ValueError(f"{bvh_path}: not on the canonical (Bandai) skeleton")
    d = json.loads(Path(out).read_text(encoding="utf-8"))
    d["standing"] = np.round(standing_pose(m), 7).tolist()
    Path(out).write_text(json.dumps(d, indent=1) + "\n", encoding="utf-8")
    _cached.cache_clear()
    return Path(out)


def tracked_indices(sk: Skeleton) -> np.ndarray:
    """Joint indices ``[3]`` of head, left hand, right hand."""
    return np.array([sk.index(n) for n in TRACKED])


def is_canonical(motion) -> bool:
    """True when ``motion`` is on the canonical skeleton (its joint names, in order)."""
    return list(motion.skeleton.names) == list(canonical_skeleton().names)
