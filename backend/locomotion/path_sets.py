"""Seeded random path sets for evaluating Walk Along Path.

Two disjoint sets are drawn from the same distribution with different seeds:

- :data:`VALIDATION_SEED`: the paths anything may be tuned on;
- :data:`HELD_OUT_SEED`: the held-out paths, scored and never tuned on.

Each path starts at the origin heading +X and has ``legs`` straight legs
(2.5-6 m each) joined by turns of 45-180 degrees (either side); every
corner point carries its own speed (``[N, 3]`` rows ``x, y, speed``), drawn
as a fraction of the style's default speed so the set mixes slow and fast
walking. Units: metres, m/s; Blender Z-up (X, Y on the ground).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

VALIDATION_SEED = 1012
HELD_OUT_SEED = 7012
TURN_RANGE_DEG = (45.0, 180.0)
LEG_RANGE_M = (2.5, 6.0)
#: Per-point speed as a fraction of the style's default speed.
SPEED_FRACTION = (0.8, 1.25)


@dataclass(frozen=True)
class RandomPath:
    """``points [N, 2]`` (m), ``speed_fraction [N]`` (x the style's default
    speed), ``turns_deg [N-2]`` (signed, + = left)."""

    name: str
    points: np.ndarray
    speed_fraction: np.ndarray
    turns_deg: np.ndarray

    @property
    def length(self) -> float:
        return float(np.sum(np.linalg.norm(np.diff(self.points, axis=0), axis=1)))

    def speeds(self, default_speed: float) -> np.ndarray:
        return self.speed_fraction * float(default_speed)


def random_paths(seed: int, count: int = 8, legs=(2, 4)) -> list:
    """``count`` random polylines (see the module docstring), reproducible
    from ``seed``. ``legs``: inclusive range of the number of legs."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(count):
        n_legs = int(rng.integers(legs[0], legs[1] + 1))
        heading = 0.0
        pts = [np.zeros(2)]
        turns = []
        for i in range(n_legs):
            if i > 0:
                t = rng.uniform(*TURN_RANGE_DEG) * rng.choice((-1.0, 1.0))
                turns.append(t)
                heading += np.radians(t)
            length = rng.uniform(*LEG_RANGE_M)
            pts.append(pts[-1] + length * np.array([np.cos(heading), np.sin(heading)]))
        frac = rng.uniform(*SPEED_FRACTION, size=len(pts))
        out.append(RandomPath(f"s{seed}-{k:02d}", np.array(pts), frac, np.array(turns)))
    return out


def validation_paths(count: int = 8) -> list:
    return random_paths(VALIDATION_SEED, count)


def held_out_paths(count: int = 8) -> list:
    return random_paths(HELD_OUT_SEED, count)


__all__ = ["RandomPath", "random_paths", "validation_paths", "held_out_paths", "VALIDATION_SEED", "HELD_OUT_SEED"]
