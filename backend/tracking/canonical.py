"""The canonical skeleton the tracking model is trained on and outputs: the
Bandai-Namco BVH skeleton of the walk controller (22 joints, identity rest
rotations, ``joint_Root`` a static ground root, ``Hips`` carries the
translation). Stored as data in ``presets/tracking_skeleton.json`` so that
tracking needs no mocap on disk. Metres, Blender Z up.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from .. import paths
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
    canonical one (run once; the file is committed)."""
    from ..bvh import read_bvh

    sk = read_bvh(bvh_path).skeleton
    Path(out).write_text(json.dumps(skeleton_to_dict(sk), indent=1) + "\n", encoding="utf-8")
    _cached.cache_clear()
    return Path(out)


def tracked_indices(sk: Skeleton) -> np.ndarray:
    """Joint indices ``[3]`` of head, left hand, right hand."""
    return np.array([sk.index(n) for n in TRACKED])


def is_canonical(motion) -> bool:
    """True when ``motion`` is on the canonical skeleton (its joint names, in order)."""
    return list(motion.skeleton.names) == list(canonical_skeleton().names)
