"""The tracker take: head, left hand and right hand poses over time.

Positions are metres in Blender world space (Z up). Rotations are unit
quaternions ``(w, x, y, z)`` in world space; the convention is the one of
:func:`.mocap_trackers.trackers_from_motion`: the world rotation the
canonical (Bandai-Namco) skeleton's ``Head`` / ``Hand_L`` / ``Hand_R`` bone
has when the body is put on that skeleton (its BVH rest: identity).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Tracker order along axis 1 of the arrays.
TRACKERS = ("head", "hand_l", "hand_r")


@dataclass(frozen=True)
class TrackerTake:
    """``times [T]`` seconds, increasing (any frame rate, may be irregular);
    ``positions [T, 3, 3]`` head, left hand, right hand (metres, world,
    Z up); ``rotations [T, 3, 4]`` unit quaternions (w, x, y, z), world."""

    times: np.ndarray
    positions: np.ndarray
    rotations: np.ndarray

    def __post_init__(self):
        t = np.asarray(self.times, dtype=np.float64).reshape(-1)
        p = np.asarray(self.positions, dtype=np.float64)
        q = np.asarray(self.rotations, dtype=np.float64)
        if p.shape != (len(t), 3, 3) or q.shape != (len(t), 3, 4):
            raise ValueError(f"tracker arrays must be [T, 3, 3] and [T, 3, 4] for {len(t)} times, "
                             f"got {p.shape} and {q.shape}")
        if len(t) > 1 and not np.all(np.diff(t) > 0):
            raise ValueError("tracker times must increase")
        q = q / np.maximum(np.linalg.norm(q, axis=-1, keepdims=True), 1e-12)
        object.__setattr__(self, "times", t)
        object.__setattr__(self, "positions", p)
        object.__setattr__(self, "rotations", q)

    @property
    def num_samples(self) -> int:
        return len(self.times)

    @property
    def duration(self) -> float:
        """Seconds from the first to the last sample."""
        return float(self.times[-1] - self.times[0]) if len(self.times) else 0.0
