"""How well a retargeted clip follows its source, on plain arrays.

Inputs are world-space joint positions (metres, Z-up) per canonical joint:
``dict canonical -> [F, 3]`` for the sampled frames, and rest positions
``dict canonical -> [3]``. Used by tests and ``bench/eval_retarget.py`` alike.

Two end-effector measures:

- ``literal`` (issue #3's wording): hands, feet, head relative to the hips,
  divided by the hip-to-ankle leg length, compared with the source. It also
  counts the rigs' *proportion* differences (a longer torso puts the head
  higher in leg lengths), so it is only zero for proportional rigs.
- ``per_chain``: each effector relative to the root of its own chain,
  divided by that chain's length. Hands are measured from the upper-arm joint
  by arm length, feet from the hip by leg length, the head from the hips by
  the hips-head distance. This measures the pose, not the proportions.
"""

from __future__ import annotations

import numpy as np

EFFECTORS = ("hand_l", "hand_r", "foot_l", "foot_r", "head")
CHAINS = {
    "hand_l": ("upperarm_l", "lowerarm_l"),
    "hand_r": ("upperarm_r", "lowerarm_r"),
    "foot_l": ("upperleg_l", "lowerleg_l"),
    "foot_r": ("upperleg_r", "lowerleg_r"),
}
#: A wrist closer than this to the torso axis (fraction of leg length) counts
#: as inside the torso: about the half-depth of an adult chest.
TORSO_RADIUS = 0.12


def leg_length(rest: dict) -> float:
    """Mean hip-to-knee-to-ankle length of both legs (metres)."""
    return float(np.mean([
        np.linalg.norm(rest[f"upperleg_{s}"] - rest[f"lowerleg_{s}"])
        + np.linalg.norm(rest[f"lowerleg_{s}"] - rest[f"foot_{s}"])
        for s in "lr"
    ]))


def _chain_length(rest: dict, effector: str) -> float:
    if effector == "head":
        return float(np.linalg.norm(rest["head"] - rest["hips"]))
    root, mid = CHAINS[effector]
    return float(np.linalg.norm(rest[root] - rest[mid]) + np.linalg.norm(rest[mid] - rest[effector]))


def end_effector_errors(src: dict, src_rest: dict, tgt: dict, tgt_rest: dict) -> dict:
    """``{"literal": [5, F], "per_chain": [5, F]}`` errors in units of the
    normalising length (0.05 = 5%), rows in :data:`EFFECTORS` order."""
    leg_s, leg_t = leg_length(src_rest), leg_length(tgt_rest)
    literal, chain = [], []
    for c in EFFECTORS:
        s_rel = (src[c] - src["hips"]) / leg_s
        t_rel = (tgt[c] - tgt["hips"]) / leg_t
        literal.append(np.linalg.norm(t_rel - s_rel, axis=-1))
        root = "hips" if c == "head" else CHAINS[c][0]
        s_rel = (src[c] - src[root]) / _chain_length(src_rest, c)
        t_rel = (tgt[c] - tgt[root]) / _chain_length(tgt_rest, c)
        chain.append(np.linalg.norm(t_rel - s_rel, axis=-1))
    return {"literal": np.array(literal), "per_chain": np.array(chain)}


def planted_foot_heights(tgt: dict, tgt_rest: dict, contacts: np.ndarray, floor: float = 0.0) -> np.ndarray:
    """Height (metres) above ``floor`` of the lowest part of each planted
    foot, ``[F, 2]`` (NaN where the source foot is not in contact). The
    lowest part is the ankle or the toe joint, each measured against its own
    rest height (so a flat foot on the floor reads 0)."""
    out = np.full(contacts.shape, np.nan)
    for k, s in enumerate("lr"):
        ankle = tgt[f"foot_{s}"][:, 2] - (tgt_rest[f"foot_{s}"][2] - floor)
        parts = [ankle]
        if f"toes_{s}" in tgt and f"toes_{s}" in tgt_rest:
            parts.append(tgt[f"toes_{s}"][:, 2] - (tgt_rest[f"toes_{s}"][2] - floor))
        lowest = np.min(parts, axis=0) - floor
        out[contacts[:, k], k] = lowest[contacts[:, k]]
    return out


def hand_torso_clearance(pos: dict, rest: dict) -> np.ndarray:
    """Per frame, the smallest distance from either wrist to the torso axis
    (the segment hips -> neck, or head if no neck), divided by leg length.
    Values under :data:`TORSO_RADIUS` mean a hand inside the torso."""
    a = pos["hips"]
    b = pos["neck"] if "neck" in pos else pos["head"]
    ab = b - a
    best = np.full(len(a), np.inf)
    for c in ("hand_l", "hand_r"):
        t = np.clip(np.sum((pos[c] - a) * ab, -1) / np.maximum(np.sum(ab * ab, -1), 1e-12), 0.0, 1.0)
        d = np.linalg.norm(pos[c] - (a + t[:, None] * ab), axis=-1)
        best = np.minimum(best, d)
    return best / leg_length(rest)
