"""Per-frame retargeting for live display (the Drive operator), no bpy.

:func:`~.retarget.retarget` works on whole clips (foot contacts, IK, floor
estimates: ~100 ms for one frame on a 65-bone rig), too slow for a live
viewport. :class:`LiveRetarget` is its rotation transfer only, as a handful
of array operations per frame:

- it is *calibrated* once by running the full retarget (without foot or hand
  IK) on a short calibration clip: for every target bone that is mapped to a
  source joint, the constant rotation ``K`` with ``target_world =
  source_world * K`` (the retarget's ``inv(reference) * align * target_rest``,
  read back from its output and averaged over the clip), the leg-length
  scale and the hips' height offset;
- each frame, :meth:`LiveRetarget.apply` does forward kinematics of the
  source pose, ``source_world * K`` for the mapped bones, rest-relative
  rotations for the others, and returns pose-bone basis rotations and the
  hips' basis location for the armature.

What it leaves out (and the take, which is baked with the full retarget,
keeps): foot and hand IK, the trunk-direction correction and the arm twist
and in-between spine shares (those bones keep their rest rotation relative
to their parent). The difference to the full retarget is measured in
``tests/operators/test_drive_blender.py`` and ``bench/bench_drive.py``.

Spaces: the target skeleton given is in *world* space (the armature's rest
skeleton placed by its object transform, ``rotation``, uniform ``scale``,
``translation``); outputs are in the armature's pose-bone spaces.
Quaternions (w, x, y, z); metres.
"""

from __future__ import annotations

import numpy as np

from . import rotations
from .ik import MAX_REACH, within_reach
from .motion import Motion
from .retarget import RetargetConfig, retarget
from .skeleton import Skeleton
from .locomotion.controller import quats_from_matrices


def _levels(parents) -> list:
    """``[(joints, their parents)]`` grouped by depth (roots first, parent -1)."""
    parents = np.asarray(parents)
    depth = np.zeros(len(parents), dtype=np.int64)
    for j, p in enumerate(parents):
        depth[j] = 0 if p < 0 else depth[p] + 1
    return [(np.nonzero(depth == d)[0], parents[depth == d]) for d in range(int(depth.max()) + 1)]


def fk_levels(levels, local_rot):
    """World rotation matrices ``[J, 3, 3]`` of one pose from local
    quaternions ``[J, 4]``, one matrix product per depth level (``levels``
    from :func:`_levels`): matrices, because a per-level quaternion product
    costs several times more NumPy calls."""
    lm = rotations.to_matrix(local_rot)
    rot = np.empty_like(lm)
    for joints, parents in levels:
        rot[joints] = lm[joints] if parents[0] < 0 else rot[parents] @ lm[joints]
    return rot


def _mean_quat(q: np.ndarray) -> np.ndarray:
    """Average ``[F, 4]`` unit quaternions (signs aligned to the first)."""
    q = q * np.sign(np.sum(q * q[:1], axis=-1, keepdims=True) + 1e-12)
    return rotations.normalize(q.mean(axis=0))


class LiveRetarget:
    """See the module docstring. Build with :meth:`calibrate`."""

    def __init__(self, source: Skeleton, target_world: Skeleton, pairs, K, hips, leg_scale: float,
                 hips_z_offset: float, object_transform):
        """``pairs [P, 2]`` (target, source) joints and ``K [P, 4]`` their
        calibrated offsets; ``hips``: (target, source) hips joints;
        ``object_transform``: the armature object's (rotation [4] wxyz,
        uniform scale, translation [3] metres)."""
        object_rotation, object_scale, object_translation = object_transform
        self.source = source
        self.target = target_world
        self.pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)  # (target, source)
        self.K = np.asarray(K, dtype=np.float64).reshape(-1, 4)
        self.hips_t, self.hips_s = hips
        self.leg_scale = float(leg_scale)
        #: Factor on the hips' horizontal travel; None = ``leg_scale`` (a
        #: source whose path is already the rig's, such as trackers placed
        #: for it, passes 1).
        self.path_scale = None
        self._hips_world = np.zeros(3)
        self.hips_z_offset = float(hips_z_offset)
        self._obj_rot_inv = rotations.inv(np.asarray(object_rotation, dtype=np.float64))
        self._obj_scale = float(object_scale)
        self._obj_trans = np.asarray(object_translation, dtype=np.float64)
        self._src_levels = _levels(source.parents)
        chain, j = [], self.hips_s
        while j >= 0:
            chain.append(j)
            j = int(source.parents[j])
        self._src_hips_chain = chain[::-1]  # root ... hips
        self._tgt_levels = _levels(target_world.parents)
        self._rest_inv = rotations.inv(target_world.rest_rotations)
        mapped = np.zeros(len(target_world), dtype=bool)
        mapped[self.pairs[:, 0]] = True
        self.mapped = mapped
        tgt = target_world
        self._K_mat = rotations.to_matrix(self.K)
        self._rest_mat = rotations.to_matrix(tgt.rest_rotations)
        self._rest_mat_T = np.swapaxes(self._rest_mat, -1, -2)
        self._has_parent = tgt.parents >= 0
        # Per mapped bone, gathered once: its rest matrix transposed, its
        # parent (the bone itself for a root: replaced by the identity).
        t_idx = self.pairs[:, 0]
        self._pair_rest_T = self._rest_mat_T[t_idx]
        self._pair_parent = np.where(self._has_parent[t_idx], tgt.parents[t_idx], t_idx)
        self._pair_root = ~self._has_parent[t_idx]
        self._W = np.tile(np.eye(3), (len(tgt), 1, 1))
        self._basis = np.tile((1.0, 0.0, 0.0, 0.0), (len(tgt), 1))
        # Unmapped bones whose world rotation is needed: the ancestors of mapped bones.
        need = np.zeros(len(tgt), dtype=bool)
        for t in self.pairs[:, 0]:
            p = int(tgt.parents[t])
            while p >= 0:
                need[p] = True
                p = int(tgt.parents[p])
        need &= ~mapped
        self._free_levels = []
        for joints, parents in _levels(tgt.parents):
            sel = need[joints]
            if sel.any():
                j = joints[sel]
                if parents[0] < 0:  # roots: their world rest rotation, constant
                    self._W[j] = self._rest_mat[j]
                else:
                    self._free_levels.append((j, parents[sel]))
        # The hips' basis location is affine in its world position: the
        # hips' parent chain is never driven (checked in calibrate), so its
        # world pose is the rest pose.
        obj_inv = rotations.to_matrix(self._obj_rot_inv)
        h = self.hips_t
        p = int(tgt.parents[h])
        if p < 0:
            # arm_t = obj_inv (x - trans) / scale; basis = arm_rest^T (arm_t - rest_off)
            arm_rest = rotations.to_matrix(rotations.mul(self._obj_rot_inv, tgt.rest_rotations[h]))
            rest_off = obj_inv @ (tgt.offsets[h] - self._obj_trans) / self._obj_scale
            A = arm_rest.T @ obj_inv / self._obj_scale
            self._hips_A, self._hips_b = A, -A @ self._obj_trans - arm_rest.T @ rest_off
        else:
            rest_rot, rest_pos = tgt.rest_world()
            inv_p = rotations.to_matrix(rest_rot[p]).T
            A = self._rest_mat[h].T @ inv_p / self._obj_scale
            self._hips_A = A
            self._hips_b = -A @ rest_pos[p] - self._rest_mat[h].T @ tgt.offsets[h] / self._obj_scale

    @classmethod
    def calibrate(cls, calibration: Motion, src_map: dict, target_world: Skeleton, tgt_map: dict, *,
                  object_rotation=(1.0, 0.0, 0.0, 0.0), object_scale: float = 1.0,
                  object_translation=(0.0, 0.0, 0.0), reference: Motion = None) -> "LiveRetarget":
        """Calibrate against :func:`~.retarget.retarget` (hips root mode,
        no foot or hand IK) on ``calibration`` (a few seconds of the source's
        own motion, world space). ``src_map`` / ``tgt_map``: canonical ->
        bone name. ``target_world`` and the object transform: see the module
        docstring. ``reference``: the source's reference pose for the
        retarget (the clip's most upright frame when None); bake the take
        with the same one and preview and take agree."""
        res = retarget(calibration, src_map, target_world, tgt_map,
                       RetargetConfig(root_mode="hips", ik=False, hand_ik=False, ground_height=None), reference=reference)
        s_rot, s_pos = calibration.world()
        t_rot, t_pos = res.motion.world()
        src, tgt = calibration.skeleton, target_world
        pairs, K = [], []
        for canon, bone in tgt_map.items():
            if canon not in src_map or bone not in tgt.names or src_map[canon] not in src.names:
                continue
            t, s = tgt.names.index(bone), src.names.index(src_map[canon])
            if t in (p[0] for p in pairs):
                continue
            pairs.append((t, s))
            K.append(_mean_quat(rotations.mul(rotations.inv(s_rot[:, s]), t_rot[:, t])))
        if "hips" not in tgt_map or "hips" not in src_map:
            raise ValueError("live retargeting needs the hips mapped on both rigs")
        ht, hs = tgt.names.index(tgt_map["hips"]), src.names.index(src_map["hips"])
        p, chain = int(tgt.parents[ht]), set()
        while p >= 0:
            chain.add(p)
            p = int(tgt.parents[p])
        if chain & {t for t, _ in pairs}:
            raise ValueError("live retargeting needs the hips' parent bones unmapped (a plain root above the hips)")
        k = float(res.leg_scale)
        z_off = float(np.mean(t_pos[:, ht, 2] - k * s_pos[:, hs, 2]))
        return cls(src, tgt, pairs, K, (ht, hs), k, z_off, (object_rotation, object_scale, object_translation))

    def apply(self, pose: Motion, frame: int = 0):
        """Pose-bone basis rotations ``[J, 4]`` (target skeleton order; the
        identity for bones the mapping does not drive) and the hips' basis
        location ``[3]`` (its bone's rest frame, armature units) for
        ``pose``'s ``frame`` (a world-space Motion on the calibration
        clip's skeleton)."""
        if pose.translations is not None:
            local_t = pose.translations[frame]
        else:
            local_t = self.source.offsets.copy()
            local_t[0] = pose.root_positions[frame]
        s_rot = fk_levels(self._src_levels, pose.rotations[frame])
        # The source hips' world position, down its own chain only.
        chain = self._src_hips_chain
        hp = local_t[chain[0]].copy()
        for a, b in zip(chain[:-1], chain[1:]):
            hp = hp + s_rot[a] @ local_t[b]
        return self.apply_world(s_rot, hp)

    def apply_world(self, s_rot: np.ndarray, hips_position: np.ndarray):
        """:meth:`apply` of a source pose given as its world rotation
        matrices ``s_rot [J, 3, 3]`` and the source hips' world position
        ``[3]`` (metres): for a source that has them already (the live
        tracker), no forward kinematics here."""
        hp = np.asarray(hips_position, dtype=np.float64)
        W = self._W  # world rotation matrices; only mapped bones and their ancestors are filled
        t_idx, s_idx = self.pairs[:, 0], self.pairs[:, 1]
        W[t_idx] = s_rot[s_idx] @ self._K_mat
        for joints, parents in self._free_levels:  # unmapped ancestors: rest relative to their parent
            W[joints] = W[parents] @ self._rest_mat[joints]
        # basis = inv(rest_local) * inv(W_parent) * W (roots: the world skeleton's rest holds the object rotation)
        parent_T = np.swapaxes(W[self._pair_parent], -1, -2)
        parent_T[self._pair_root] = np.eye(3)
        b = self._pair_rest_T @ parent_T @ W[t_idx]
        basis = self._basis
        basis[t_idx] = quats_from_matrices(b)
        # Hips: the source's, scaled by the leg ratio, at the calibrated height.
        hp = hp * self.leg_scale
        if self.path_scale is not None:
            hp[:2] = np.asarray(hips_position[:2], dtype=np.float64) * self.path_scale
        hp[2] += self.hips_z_offset
        self._hips_world = hp
        loc = self._hips_A @ hp + self._hips_b
        return basis.copy(), loc

    def _path_from_hips(self, j: int) -> list:
        """The joints from below the hips down to ``j`` (hips first), or
        None when ``j`` does not hang under the hips."""
        path = []
        while j >= 0 and j != self.hips_t:
            path.append(j)
            j = int(self.target.parents[j])
        return path[::-1] if j == self.hips_t else None

    def arm_chains(self, tgt_map: dict) -> list:
        """Per side the mapping (canonical -> bone name) has as one chain
        upper arm -> forearm -> hand: ``(side, upper arm, forearm, hand, the
        joints from below the hips down to the hand)``, side 0 left, 1
        right, target indices, for :meth:`reach_hands`; sides without one
        are left out."""
        return self._limb_chains(tgt_map, ("upperarm", "lowerarm", "hand"))

    def leg_chains(self, tgt_map: dict) -> list:
        """:meth:`arm_chains` for the legs (thigh -> shin -> ankle)."""
        return self._limb_chains(tgt_map, ("upperleg", "lowerleg", "foot"))

    def _limb_chains(self, tgt_map: dict, kinds: tuple) -> list:
        tgt, out = self.target, []
        for side, s in enumerate("lr"):
            names = [tgt_map.get(f"{k}_{s}") for k in kinds]
            if not all(n in tgt.names for n in names):
                continue
            u, low, h = (tgt.names.index(n) for n in names)
            path = self._path_from_hips(h)
            if path is None or u not in path or low not in path or path.index(low) < path.index(u):
                continue
            out.append((side, u, low, h, path))
        return out

    def head_path(self, tgt_map: dict):
        """The joints from below the hips down to the mapped head, for
        :meth:`reach_head` (None: no head under the hips)."""
        head = tgt_map.get("head")
        return self._path_from_hips(self.target.names.index(head)) if head in self.target.names else None

    def _along(self, path) -> np.ndarray:
        """World positions ``[len(path), 3]`` of this tick's pose down ``path``
        (joints from below the hips, each the parent of the next)."""
        W, off = self._W, self.target.offsets
        out = np.empty((len(path), 3))
        pos, prev = self._hips_world, self.hips_t
        for k, j in enumerate(path):
            pos = pos + W[prev] @ off[j]
            out[k] = pos
            prev = j
        return out

    def _chain_points(self, chains: list) -> np.ndarray:
        """Per chain (upper, lower, end) world positions ``[C, 3, 3]`` of this tick's pose."""
        return np.stack([self._along(path)[[path.index(u), path.index(low), -1]]
                         for _side, u, low, _h, path in chains])

    def reach_head(self, target: np.ndarray, path, *, legs=(), arms=(), hands=None) -> tuple:
        """``(the hips' basis location [3], the ankles before [L, 3])``: the
        location that puts the head (end of ``path``, :meth:`head_path`) of
        this tick's pose on ``target [3]`` (world metres): the whole rig
        moves, as far as ``legs`` can still reach where their ankles are
        (their length, or their extension now if more) and
        ``arms`` their ``hands [2, 3]`` targets (their length) (what
        ``tracking.posing.reach_head_on`` does to a baked take); hold the
        feet there with :meth:`reach_limbs` after (one row per leg chain)."""
        miss = np.asarray(target, dtype=np.float64) - self._along(path)[-1]
        chains = list(legs) + list(arms)
        feet = np.zeros((0, 3))
        if chains:
            pts = self._chain_points(chains)
            feet = pts[:len(legs), 2].copy()
            length = np.linalg.norm(pts[:, 1] - pts[:, 0], axis=-1) + np.linalg.norm(pts[:, 2] - pts[:, 1], axis=-1)
            goal = pts[:, 2].copy()
            reach = length * MAX_REACH
            if arms:
                goal[len(legs):] = np.asarray(hands, dtype=np.float64)[[ch[0] for ch in arms]]
                reach[len(legs):] = length[len(legs):]
            miss = within_reach(miss, goal - pts[:, 0], reach)
        self._hips_world = self._hips_world + miss
        return self._hips_A @ self._hips_world + self._hips_b, feet

    def reach_hands(self, basis: np.ndarray, targets: np.ndarray, chains: list, max_reach: float = 1.0):
        """``basis [J, 4]`` from this tick's :meth:`apply_world` with each
        chain's hand (:meth:`arm_chains`; ``targets [2, 3]`` left, right,
        world metres) moved onto its target by two-bone arm IK: the elbow
        bends on the side it bent, the hand keeps its world rotation (what
        ``tracking.posing.reach_hands_on`` does to a baked take)."""
        if not chains:
            return basis
        return self.reach_limbs(basis, np.asarray(targets, dtype=np.float64)[[ch[0] for ch in chains]], chains,
                                max_reach)

    def reach_limbs(self, basis: np.ndarray, goals: np.ndarray, chains: list, max_reach: float = 1.0):
        """``basis [J, 4]`` with each chain's end joint (:meth:`arm_chains`,
        :meth:`leg_chains`, any mix) moved onto its goal (``goals [C, 3]``,
        one per chain, world metres) by two-bone IK, the middle joint
        bending on the side it bent, the end keeping its world rotation."""
        if not chains:
            return basis
        from .ik import elbow_pole, two_bone_ik_matrices

        W, par, R_T = self._W, self.target.parents, self._rest_mat_T
        pts = self._chain_points(chains)
        a, b, c = pts[:, 0], pts[:, 1], pts[:, 2]
        pole = elbow_pole(a, b, c)
        goal = np.asarray(goals, dtype=np.float64)
        m_up, m_low, _ = two_bone_ik_matrices(a, b, c, goal, pole, max_reach=max_reach)
        mats, rows = [], []
        for k, (_side, u, low, h, _path) in enumerate(chains):
            pu, pl, ph = int(par[u]), int(par[low]), int(par[h])
            new_u, new_l = m_up[k] @ W[u], m_low[k] @ W[low]
            parent_l = new_u if pl == u else m_up[k] @ W[pl]
            parent_h = new_l if ph == low else m_low[k] @ W[ph]
            parent_u = W[pu] if pu >= 0 else np.eye(3)
            mats += [R_T[u] @ parent_u.T @ new_u, R_T[low] @ parent_l.T @ new_l, R_T[h] @ parent_h.T @ W[h]]
            rows += [u, low, h]
        basis[rows] = quats_from_matrices(np.stack(mats))
        return basis


__all__ = ["LiveRetarget", "fk_levels"]
