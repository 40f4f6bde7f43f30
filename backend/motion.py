"""A clip of skeletal (and shape-key) animation as plain arrays.

``rotations[f, j]`` is joint ``j``'s full *local* rotation at frame ``f``
relative to its parent's frame (rest rotation included; a clip at rest has
``rotations == skeleton.rest_rotations``). ``root_positions[f]`` is the root
joint's translation in armature space (metres, Blender Z-up). Non-root joints
sit at their skeleton offsets unless ``translations [F, J, 3]`` is given (BVH
files that animate every joint's position channels).

Shape-key animation rides along as ``shape_weights [F, K]`` with
``shape_names`` (ARKit names for faces).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from . import rotations
from .skeleton import Skeleton


@lru_cache(maxsize=64)
def _levels(parents: tuple) -> tuple:
    depth = []
    for p in parents:  # parents come before their children (the skeleton's order)
        depth.append(0 if p < 0 else depth[p] + 1)
    depth = np.asarray(depth)
    return tuple(np.nonzero(depth == d)[0] for d in range(int(depth.max()) + 1 if len(depth) else 0))


def world_matrices(parents, local_mats: np.ndarray, local_t: np.ndarray) -> tuple:
    """Forward kinematics on rotation matrices: world rotations ``[..., J,
    3, 3]`` and positions ``[..., J, 3]`` from local rotation matrices
    ``local_mats [..., J, 3, 3]`` and local translations ``local_t [..., J,
    3]`` (metres). One 4x4 product per level of the hierarchy: the live
    paths' one-frame FK, where the quaternion products of
    :meth:`Motion.world` cost more in calls than in arithmetic."""
    levels = _level_pairs(tuple(np.asarray(parents).tolist()))
    lead = local_mats.shape[:-3]
    h = np.zeros(lead + (local_mats.shape[-3], 4, 4))
    h[..., :3, :3] = local_mats
    h[..., :3, 3] = local_t
    h[..., 3, 3] = 1.0
    # Joints on the last axis before the matrices: move them first so one
    # fancy index picks a level whatever the leading shape.
    if lead:
        h = np.moveaxis(h, -3, 0)
    out = np.empty_like(h)
    for js, ps in levels:
        out[js] = h[js] if ps is None else out[ps] @ h[js]
    if lead:
        out = np.moveaxis(out, 0, -3)
    return out[..., :3, :3], out[..., :3, 3]


def depth_levels(parents) -> tuple:
    """The joints ``parents [J]`` (parent index, -1 for a root; parents
    before children) grouped by depth: a tuple of index arrays, the roots
    first, each level's parents all in the levels before it."""
    return _levels(tuple(np.asarray(parents).tolist()))


@lru_cache(maxsize=64)
def _level_pairs(parents: tuple) -> tuple:
    """:func:`depth_levels` with each level's parents: ``((joints, parents
    or None for the roots), ...)``, index arrays."""
    p = np.asarray(parents)
    return tuple((js, None if p[js[0]] < 0 else p[js]) for js in _levels(parents))


@dataclass
class Motion:
    skeleton: Skeleton
    rotations: np.ndarray  # [F, J, 4] local rotations (w, x, y, z)
    root_positions: np.ndarray  # [F, 3] metres, armature space
    fps: float = 30.0
    translations: np.ndarray = None  # [F, J, 3] local translations (optional)
    shape_names: list = field(default_factory=list)
    shape_weights: np.ndarray = None  # [F, K] in [0, 1]
    name: str = ""

    def __post_init__(self):
        self.rotations = np.asarray(self.rotations, dtype=np.float64)
        self.root_positions = np.asarray(self.root_positions, dtype=np.float64).reshape(-1, 3)
        f, j = self.rotations.shape[:2]
        if self.rotations.shape != (f, len(self.skeleton), 4):
            raise ValueError(
                f"rotations have shape {self.rotations.shape}, expected [frames, {len(self.skeleton)}, 4]"
            )
        if len(self.root_positions) != f:
            raise ValueError("root_positions and rotations disagree on the number of frames")
        if self.translations is not None:
            self.translations = np.asarray(self.translations, dtype=np.float64)
            if self.translations.shape != (f, j, 3):
                raise ValueError("translations must be [frames, joints, 3]")
        if self.shape_weights is not None:
            self.shape_weights = np.asarray(self.shape_weights, dtype=np.float64).reshape(f, -1)
            if self.shape_weights.shape[1] != len(self.shape_names):
                raise ValueError("shape_weights columns and shape_names disagree")
        if not (self.fps > 0):
            raise ValueError(f"fps must be positive, got {self.fps}")

    @property
    def num_frames(self) -> int:
        return self.rotations.shape[0]

    @property
    def duration(self) -> float:
        """Seconds from the first to the last frame."""
        return (self.num_frames - 1) / self.fps

    def local_translations(self) -> np.ndarray:
        """``[F, J, 3]`` local translations, root included (metres)."""
        if self.translations is not None:
            t = self.translations.copy()
        else:
            t = np.broadcast_to(self.skeleton.offsets, self.rotations.shape[:2] + (3,)).copy()
        t[:, 0] = self.root_positions
        for j, p in enumerate(self.skeleton.parents):
            if p < 0 and j != 0:
                t[:, j] = self.skeleton.offsets[j] if self.translations is None else self.translations[:, j]
        return t

    def world(self):
        """Forward kinematics: world rotations ``[F, J, 4]`` and positions
        ``[F, J, 3]`` (armature space, metres)."""
        local_t = self.local_translations()
        f, n = self.rotations.shape[:2]
        rot = np.empty((f, n, 4))
        pos = np.empty((f, n, 3))
        parents = np.asarray(self.skeleton.parents)
        # One level of the hierarchy at a time (all joints of one depth
        # together): the same products as joint by joint, in a handful of
        # array operations instead of one per joint (live, one-frame FK).
        for js in depth_levels(parents):
            ps = parents[js]
            if ps[0] < 0:
                rot[:, js] = self.rotations[:, js]
                pos[:, js] = local_t[:, js]
            else:
                rot[:, js] = rotations.mul(rot[:, ps], self.rotations[:, js])
                pos[:, js] = pos[:, ps] + rotations.rotate(rot[:, ps], local_t[:, js])
        return rot, pos

    def world_positions(self) -> np.ndarray:
        return self.world()[1]

    def slice(self, start: int, stop: int) -> "Motion":
        sl = slice(start, stop)
        return Motion(
            self.skeleton,
            self.rotations[sl].copy(),
            self.root_positions[sl].copy(),
            self.fps,
            None if self.translations is None else self.translations[sl].copy(),
            list(self.shape_names),
            None if self.shape_weights is None else self.shape_weights[sl].copy(),
            self.name,
        )

    def with_rest(self, target: Skeleton) -> "Motion":
        """The same world motion expressed on ``target``: a skeleton with the
        same joints (names, parents, rest positions) but other rest
        orientations (e.g. Blender bones built from a BVH skeleton).

        Each joint keeps its world orientation *change from rest*:
        ``world_new[j] = world_old[j] * inv(rest_old_world[j]) * rest_new_world[j]``.
        """
        src = self.skeleton
        if sorted(target.names) != sorted(src.names):
            raise ValueError("with_rest needs a skeleton with the same joint names")
        if list(target.names) != list(src.names):
            target = target.reorder(src.names)
        if not np.array_equal(target.parents, src.parents):
            raise ValueError("with_rest needs a skeleton with the same hierarchy (parents differ)")
        local, trans = self.pose_on_rest(target)
        return self.with_pose(rotations.make_continuous(local), trans, skeleton=target)

    def world_rotations(self) -> np.ndarray:
        """World rotations ``[F, J, 4]``: :meth:`world`'s, without the positions."""
        f, n = self.rotations.shape[:2]
        rot = np.empty((f, n, 4))
        for j, p in enumerate(self.skeleton.parents):
            rot[:, j] = self.rotations[:, j] if p < 0 else rotations.mul(rot[:, p], self.rotations[:, j])
        return rot

    def pose_on_rest(self, target: Skeleton) -> tuple:
        """:meth:`with_rest`'s local ``rotations [F, J, 4]`` and
        ``translations [F, J, 3]`` (or None) on ``target`` (the same joints,
        in this skeleton's order), before their signs are made continuous in
        time: each frame on its own, so a long clip can be converted a block
        of frames at a time (``bvh.write_bvh``)."""
        rest_old, _ = self.skeleton.rest_world()
        rest_new, _ = target.rest_world()
        world_rot = self.world_rotations()
        new_world = rotations.mul(rotations.mul(world_rot, rotations.inv(rest_old)), rest_new)
        local = np.empty_like(new_world)
        for j, p in enumerate(target.parents):
            local[:, j] = new_world[:, j] if p < 0 else rotations.mul(rotations.inv(new_world[:, p]), new_world[:, j])
        trans = None
        if self.translations is not None:
            # Translations are expressed in the parent's frame: re-express them.
            trans = self.translations.copy()
            for j, p in enumerate(target.parents):
                if p >= 0:
                    # old parent frame -> world -> new parent frame
                    old_p = world_rot[:, p]
                    trans[:, j] = rotations.rotate(rotations.inv(new_world[:, p]),
                                                   rotations.rotate(old_p, self.translations[:, j]))
        return local, trans

    def with_pose(self, rotations, translations, skeleton: Skeleton = None) -> "Motion":
        """A copy with new local ``rotations [F, J, 4]`` and ``translations``
        (``[F, J, 3]`` metres, or None), on ``skeleton`` (default this one); the
        root path, frame rate, shape keys and name are copied."""
        return Motion(
            self.skeleton if skeleton is None else skeleton,
            rotations,
            self.root_positions.copy(),
            self.fps,
            translations,
            list(self.shape_names),
            None if self.shape_weights is None else self.shape_weights.copy(),
            self.name,
        )
