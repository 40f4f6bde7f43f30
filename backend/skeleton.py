"""A rest skeleton as plain arrays.

A :class:`Skeleton` is a tree of joints in topological order (every parent
comes before its children). Each joint has a rest *local* transform relative to
its parent: a translation ``offsets[j]`` (metres, in the parent's frame) and a
rotation ``rest_rotations[j]`` (unit quaternion ``w, x, y, z``). The root's
parent frame is the armature (object) space: Blender's Z-up, metres.

For a BVH skeleton every rest rotation is identity (BVH joints are aligned with
the world at rest). For a Blender armature the rest rotation of a joint is its
bone's rest orientation relative to its parent bone, so a pose bone's
``rotation_quaternion`` is ``inv(rest_rotations[j]) * local_rotation[j]``.

``tails[j]`` is where the joint's bone ends, in the joint's own rest frame
(BVH end sites, Blender bone tails); it matters for leaf joints.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import rotations


@dataclass
class Skeleton:
    names: list
    parents: np.ndarray  # [J] int, -1 for a root
    offsets: np.ndarray  # [J, 3] metres, in the parent's rest frame
    rest_rotations: np.ndarray = None  # [J, 4] local rest rotations (w, x, y, z)
    tails: np.ndarray = None  # [J, 3] bone end in the joint's own frame, metres
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        self.names = [str(n) for n in self.names]
        self.parents = np.asarray(self.parents, dtype=np.int64).reshape(-1)
        self.offsets = np.asarray(self.offsets, dtype=np.float64).reshape(-1, 3)
        n = len(self.names)
        if self.rest_rotations is None:
            self.rest_rotations = rotations.identity((n,))
        self.rest_rotations = rotations.normalize(np.asarray(self.rest_rotations, dtype=np.float64).reshape(-1, 4))
        if self.tails is None:
            self.tails = np.zeros((n, 3))
        self.tails = np.asarray(self.tails, dtype=np.float64).reshape(-1, 3)
        if not (len(self.parents) == len(self.offsets) == len(self.rest_rotations) == len(self.tails) == n):
            raise ValueError("skeleton arrays disagree on the number of joints")
        if len(set(self.names)) != n:
            dup = sorted({x for x in self.names if self.names.count(x) > 1})
            raise ValueError(f"duplicate joint names: {dup}")
        for j, p in enumerate(self.parents):
            if p >= j:
                raise ValueError(
                    f"joint {self.names[j]!r} comes before its parent; joints must be in topological order"
                )

    # -- lookups -------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.names)

    @property
    def num_joints(self) -> int:
        return len(self.names)

    def index(self, name: str) -> int:
        try:
            return self.names.index(name)
        except ValueError:
            raise KeyError(f"no joint named {name!r} in the skeleton") from None

    def children(self, j: int) -> list:
        return [int(c) for c in np.nonzero(self.parents == j)[0]]

    def depth(self) -> np.ndarray:
        d = np.zeros(len(self), dtype=np.int64)
        for j, p in enumerate(self.parents):
            if p >= 0:
                d[j] = d[p] + 1
        return d

    # -- rest pose -----------------------------------------------------------
    def rest_world(self):
        """World (armature-space) rest rotations ``[J, 4]`` and positions ``[J, 3]``."""
        rot = np.empty((len(self), 4))
        pos = np.empty((len(self), 3))
        for j, p in enumerate(self.parents):
            if p < 0:
                rot[j] = self.rest_rotations[j]
                pos[j] = self.offsets[j]
            else:
                rot[j] = rotations.mul(rot[p], self.rest_rotations[j])
                pos[j] = pos[p] + rotations.rotate(rot[p], self.offsets[j])
        return rot, pos

    def rest_positions(self) -> np.ndarray:
        return self.rest_world()[1]

    def copy(self) -> "Skeleton":
        return Skeleton(
            list(self.names),
            self.parents.copy(),
            self.offsets.copy(),
            self.rest_rotations.copy(),
            self.tails.copy(),
            dict(self.meta),
        )

    def reorder(self, names: list) -> "Skeleton":
        """The same skeleton with joints in the order ``names`` (a permutation
        of this skeleton's names that keeps parents before children)."""
        if sorted(names) != sorted(self.names):
            raise ValueError("reorder needs exactly this skeleton's joint names")
        idx = [self.index(n) for n in names]
        remap = {old: new for new, old in enumerate(idx)}
        parents = [remap[int(self.parents[i])] if self.parents[i] >= 0 else -1 for i in idx]
        return Skeleton(list(names), parents, self.offsets[idx], self.rest_rotations[idx], self.tails[idx], dict(self.meta))

    def subset(self, keep: list) -> "Skeleton":
        """Skeleton of the joints named in ``keep`` (order of this skeleton kept);
        a dropped joint's offset/rotation is folded into its kept descendants.
        Rest world transforms of kept joints are unchanged."""
        keep_idx = sorted(self.index(n) for n in keep)
        rot_w, pos_w = self.rest_world()
        new_index = {old: i for i, old in enumerate(keep_idx)}
        parents, offsets, rests = [], [], []
        for old in keep_idx:
            p = self.parents[old]
            while p >= 0 and p not in new_index:
                p = self.parents[p]
            if p < 0:
                parents.append(-1)
                offsets.append(pos_w[old])
                rests.append(rot_w[old])
            else:
                parents.append(new_index[p])
                inv_p = rotations.inv(rot_w[p])
                offsets.append(rotations.rotate(inv_p, pos_w[old] - pos_w[p]))
                rests.append(rotations.mul(inv_p, rot_w[old]))
        return Skeleton(
            [self.names[i] for i in keep_idx],
            parents,
            np.array(offsets),
            np.array(rests),
            self.tails[keep_idx].copy(),
            dict(self.meta),
        )
