"""The crouch of one live frame (Drive's crouch toggle): what
:func:`.crouch.apply_crouch` does to a clip, for a single pose, in a
fraction of the time.

:func:`.crouch.apply_crouch` is written for whole takes: its forward
kinematics and leg solve are quaternion products over frames, one NumPy
call per joint, which for a single frame costs ~10 ms (measured on the
controller's 22-joint skeleton) against Drive's ~2 ms tick budget.
:class:`LiveCrouch` does the same steps on one frame with rotation
matrices, one matrix product per depth level of the skeleton and the
two-bone solve written out for one leg, and returns the same pose (within
1e-9 of :func:`~.crouch.apply_crouch` at the same weight:
``tests/backend/locomotion/test_live_actions.py``):

- the upper body leaned by the layer's offsets times the weight;
- the hips lowered to ``1 - w (1 - hips_ratio)`` of their height over the
  ground root and moved back along the facing (:func:`.crouch.lowered_hips`);
- both legs re-solved so the ankles, toes and feet's world orientations
  stay where they were (the knee bending in its own leg plane).

Units: metres, radians; the controller's Bandai skeleton (``joint_Root``
on the ground, ``Hips`` with a translation). Pure NumPy (no bpy).
"""

from __future__ import annotations

import numpy as np

from ... import rotations
from ...motion import Motion
from ...foot_lock import knee_pole
from ..cleanup import BANDAI_LEGS
from ..controller import quats_from_matrices
from .crouch import ARM_JOINTS, HIPS, CrouchConfig, CrouchLayer

_EPS = 1e-9
#: The two-bone solve's reach limit (``ik.MAX_REACH``: the leg never locks straight).
_MAX_REACH = 0.999


def _depth_levels(parents) -> list:
    """``[(joints, their parents)]`` by depth, roots first."""
    parents = np.asarray(parents)
    depth = np.zeros(len(parents), dtype=np.int64)
    for j, p in enumerate(parents):
        depth[j] = 0 if p < 0 else depth[p] + 1
    return [(np.nonzero(depth == d)[0], parents[depth == d]) for d in range(int(depth.max()) + 1)]


def quat_matrices(q: np.ndarray) -> np.ndarray:
    """Unit quaternions ``[N, 4]`` (w, x, y, z) to rotation matrices ``[N, 3, 3]``."""
    w, x, y, z = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    m = np.empty((len(q), 3, 3))
    m[:, 0, 0] = 1 - 2 * (y * y + z * z)
    m[:, 0, 1] = 2 * (x * y - w * z)
    m[:, 0, 2] = 2 * (x * z + w * y)
    m[:, 1, 0] = 2 * (x * y + w * z)
    m[:, 1, 1] = 1 - 2 * (x * x + z * z)
    m[:, 1, 2] = 2 * (y * z - w * x)
    m[:, 2, 0] = 2 * (x * z - w * y)
    m[:, 2, 1] = 2 * (y * z + w * x)
    m[:, 2, 2] = 1 - 2 * (x * x + y * y)
    return m


def axis_angle_matrices(aa: np.ndarray) -> np.ndarray:
    """Rotation vectors ``[N, 3]`` (rad) to matrices ``[N, 3, 3]`` (Rodrigues)."""
    ang = np.sqrt(np.einsum("ij,ij->i", aa, aa))
    k = aa / np.maximum(ang, _EPS)[:, None]
    kx = np.zeros((len(aa), 3, 3))
    kx[:, 0, 1], kx[:, 0, 2], kx[:, 1, 2] = -k[:, 2], k[:, 1], -k[:, 0]
    kx[:, 1, 0], kx[:, 2, 0], kx[:, 2, 1] = k[:, 2], -k[:, 1], k[:, 0]
    s, c = np.sin(ang)[:, None, None], (1.0 - np.cos(ang))[:, None, None]
    return np.eye(3) + s * kx + c * (kx @ kx)


def cross3(a, b) -> np.ndarray:
    """``a x b`` of two 3-vectors (``np.cross`` costs ~10x more on one pair)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def between_matrix(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The shortest-arc rotation ``[3, 3]`` taking direction ``u [3]`` to ``v
    [3]`` (never called on opposite directions: a leg bone turns by far
    less than 180 degrees in one solve)."""
    u = u / max(float(np.sqrt(u @ u)), _EPS)
    v = v / max(float(np.sqrt(v @ v)), _EPS)
    c = cross3(u, v)
    d = float(u @ v)
    kx = np.array([[0.0, -c[2], c[1]], [c[2], 0.0, -c[0]], [-c[1], c[0], 0.0]])
    return np.eye(3) + kx + (kx @ kx) / (1.0 + d)


def _unit(v: np.ndarray, fallback: np.ndarray = None) -> np.ndarray:
    n = float(np.sqrt(v @ v))
    if n <= 1e-8 and fallback is not None:
        return fallback
    return v / max(n, _EPS)


def two_bone_matrices(a, b, c, target, pole) -> tuple:
    """``ik.two_bone_ik`` for one chain (hip ``a``, knee ``b``, ankle ``c``
    ``[3]``, reaching ``target`` and bending toward ``pole``): the world
    delta rotations ``(upper [3, 3], lower [3, 3])`` (``lower`` includes
    ``upper``'s effect)."""
    l1, l2 = float(np.sqrt((b - a) @ (b - a))), float(np.sqrt((c - b) @ (c - b)))
    at = target - a
    lo = abs(l1 - l2) + 1e-6
    d = min(max(float(np.sqrt(at @ at)), lo), max(_MAX_REACH * (l1 + l2), lo))
    u = _unit(at, _unit(c - a, np.array([0.0, 0.0, -1.0])))

    def perp(v):
        return v - (v @ u) * u

    any_perp = cross3(u, (1.0, 0.0, 0.0))
    if np.sqrt(any_perp @ any_perp) <= 1e-3:
        any_perp = cross3(u, (0.0, 1.0, 0.0))
    v = _unit(perp(pole - a), _unit(perp(b - a), _unit(any_perp)))
    cos_a = min(max((l1 * l1 + d * d - l2 * l2) / max(2.0 * l1 * d, _EPS), -1.0), 1.0)
    b_new = a + l1 * (cos_a * u + np.sqrt(1.0 - cos_a * cos_a) * v)
    reached = a + d * u
    upper = between_matrix(b - a, b_new - a)
    c_rot = b_new + upper @ (c - b)
    return upper, between_matrix(c_rot - b_new, reached - b_new) @ upper


class LiveCrouch:
    """:func:`.crouch.apply_crouch` for one frame at a time (see the module
    docstring), set up once for a skeleton and a :class:`~.crouch.CrouchLayer`.

    Args:
        skeleton: the controller's (Bandai) skeleton.
        layer: :func:`.crouch.crouch_layer` of it.
        config: :class:`~.crouch.CrouchConfig` (depth, lean and arm shares; None: the defaults).
    """

    def __init__(self, skeleton, layer: CrouchLayer, config: CrouchConfig = None):
        config = CrouchConfig() if config is None else config
        names = list(skeleton.names)
        self.skeleton = skeleton
        self.layer = layer
        self.config = config
        self.parents = np.asarray(skeleton.parents)
        self.levels = _depth_levels(self.parents)
        self.hips = names.index(HIPS)
        self.legs = [tuple(names.index(n) for n in leg) for leg in BANDAI_LEGS]
        self.lean_ix = np.array([names.index(n) for n in layer.joints])
        share = np.array([config.arms if n in ARM_JOINTS else config.lean for n in layer.joints])
        self.lean_aa = rotations.to_axis_angle(layer.offsets) * share[:, None]  # [K, 3] at weight 1
        self.leg_levels = [np.array([leg[d] for leg in self.legs]) for d in range(3)]
        assert all(self.parents[leg[0]] == self.hips for leg in self.legs), "the legs hang off the hips"
        leg_ix = [j for leg in self.legs for j in leg[:3]]
        self.changed = np.unique(np.concatenate([self.lean_ix, leg_ix]))  # joints whose rotation changes

    def fk(self, local_m: np.ndarray, local_t: np.ndarray) -> tuple:
        """World rotation matrices ``[J, 3, 3]`` and positions ``[J, 3]`` of
        one pose from its local matrices and translations."""
        rot = np.empty_like(local_m)
        pos = np.empty_like(local_t)
        for joints, parents in self.levels:
            if parents[0] < 0:
                rot[joints], pos[joints] = local_m[joints], local_t[joints]
            else:
                rot[joints] = rot[parents] @ local_m[joints]
                pos[joints] = pos[parents] + np.einsum("jab,jb->ja", rot[parents], local_t[joints])
        return rot, pos

    def leg_fk(self, src_rot, src_pos, new_m, new_t) -> tuple:
        """World rotations and positions (copies of ``src_*`` with the hips
        and both legs' hip, knee and ankle joints recomputed) after the
        hips' rotation and translation changed to ``new_m``/``new_t``: the
        only joints the leg solve reads (the legs hang off the hips, whose
        parent, the ground root, does not move)."""
        rot, pos = src_rot.copy(), src_pos.copy()
        h, hp = self.hips, self.parents[self.hips]
        rot[h] = rot[hp] @ new_m[h]
        pos[h] = pos[hp] + rot[hp] @ new_t[h]
        for depth in range(3):  # hip, knee, ankle of both legs at once
            j = self.leg_levels[depth]
            p = self.parents[j]
            pos[j] = pos[p] + np.einsum("jab,jb->ja", rot[p], new_t[j])
            rot[j] = rot[p] @ new_m[j]
        return rot, pos

    def lowered_hips(self, pos: np.ndarray, weight: float) -> np.ndarray:
        """:func:`.crouch.lowered_hips` of one frame's world positions ``[J, 3]``."""
        cfg, h = self.config, self.hips
        hips = pos[h].copy()
        ground = pos[0, 2]
        hips[2] = ground + (hips[2] - ground) * (1.0 - weight * (1.0 - cfg.hips_ratio))
        left = pos[self.legs[0][0]] - pos[self.legs[1][0]]
        fwd = np.array([left[1], -left[0], 0.0])  # left x up, on the ground
        n = float(np.hypot(fwd[0], fwd[1]))
        fwd = fwd / n if n > 1e-8 else np.array([0.0, -1.0, 0.0])
        return hips - weight * cfg.hips_back * self.layer.hips_back * fwd

    def apply(self, pose: Motion, weight: float) -> Motion:
        """``pose`` (one frame, world space, with translations) crouched by
        ``weight`` in 0..1; weight 0 gives ``pose`` itself."""
        w = float(weight)
        if w <= 0.0:
            return pose
        q0 = pose.rotations[0]
        local_t = pose.local_translations()[0]
        local_m = quat_matrices(q0)
        src_rot, src_pos = self.fk(local_m, local_t)
        # Upper body leaned (on the right: in each joint's own frame).
        new_m = local_m.copy()
        new_m[self.lean_ix] = local_m[self.lean_ix] @ axis_angle_matrices(self.lean_aa * w)
        h, hp = self.hips, self.parents[self.hips]
        new_t = local_t.copy()
        new_t[h] = src_rot[hp].T @ (self.lowered_hips(src_pos, w) - src_pos[hp])
        nrot, npos = self.leg_fk(src_rot, src_pos, new_m, new_t)
        for hip, knee, ankle, toe in self.legs:
            pole_pt = knee_pole(src_pos[hip], src_pos[knee], src_pos[ankle], src_pos[toe].copy())
            bend = _unit(pole_pt - src_pos[knee])
            pole = 0.5 * (npos[hip] + src_pos[ankle]) + bend
            upper, lower = two_bone_matrices(npos[hip], npos[knee], npos[ankle], src_pos[ankle], pole)
            up_w, low_w = upper @ nrot[hip], lower @ nrot[knee]
            new_m[hip] = nrot[self.parents[hip]].T @ up_w
            new_m[knee] = up_w.T @ low_w
            new_m[ankle] = low_w.T @ src_rot[ankle]
        rot = q0.copy()
        q = quats_from_matrices(new_m[self.changed])
        q *= np.where(np.einsum("ij,ij->i", q, q0[self.changed]) < 0.0, -1.0, 1.0)[:, None]  # the input's hemisphere
        rot[self.changed] = q
        return pose.with_pose(rot[None], new_t[None])


__all__ = ["LiveCrouch", "quat_matrices", "axis_angle_matrices", "between_matrix", "two_bone_matrices"]
