"""Live tracking: one tracker sample in, one body pose out (viewport ticks).

:class:`LiveTracker` keeps the last second of tracker samples at 30 fps (a
tick of any length adds the 30 fps samples that fall inside it, linearly
interpolated), runs the network on the latest window (one row), smooths its
output exponentially, holds each planted foot at its lock with two-bone leg
IK (a released foot eases back over a few frames) and solves the arms onto
the current hand targets. Causal: it never waits for future samples.
"""

from __future__ import annotations

import math

import numpy as np

from .. import ik, rotations
from ..foot_lock import knee_pole
from ..motion import Motion, world_matrices
from .canonical import canonical_skeleton
from .features import HEAD_FORWARD, HEAD_UP, LAGS
from .posing import ARMS, LEGS, PoseConfig, decode_matrices, scaled_skeleton

_HISTORY = max(LAGS) + 2


def _has_ancestor(parents, j: int, ancestors: set) -> bool:
    p = int(parents[j])
    while p >= 0:
        if p in ancestors:
            return True
        p = int(parents[p])
    return False


class LiveTracker:
    """``step(positions [3, 3], rotations [3, 4], dt) -> Motion`` (one frame,
    canonical skeleton scaled to the subject). ``scale`` None: from the
    first sample's head height (the user stands up straight at the start)."""

    def __init__(self, scale: float = None, *, model_path=None, engine: str = "onnxruntime",
                 smoothing: float = 0.5, pose: PoseConfig = None):
        from .engine import load_engine

        self.engine = load_engine(model_path, engine)
        if tuple(self.engine.lags) != LAGS:
            raise ValueError(f"the live tracker runs a model with the causal window {LAGS}, "
                             f"not {self.engine.lags} (a --future model is offline only)")
        self.scale = scale
        self.smoothing = float(smoothing)
        self.cfg = pose or PoseConfig()
        self.base = canonical_skeleton()
        ix = self.base.index
        self.parents = np.asarray(self.base.parents)
        #: [4, 3]: upper, lower, end joint of the left leg, right leg, left arm, right arm.
        self.chains = np.array([(ix(u), ix(lo), ix(f)) for u, lo, f, _ in LEGS] + [tuple(ix(n) for n in arm) for arm in ARMS])
        self.toes = np.array([ix(t) for *_, t in LEGS])
        self.head = ix("Head")
        self.soft = np.array([self.cfg.leg_soft, self.cfg.leg_soft, 1.0, 1.0])
        self.reach = np.array([ik.MAX_REACH, ik.MAX_REACH, self.cfg.arm_reach, self.cfg.arm_reach])
        self.src = _HISTORY - 1 - np.asarray(LAGS)  # the window's history rows, current first
        # The root .. hips chain never rotates (joint_Root is fixed, the hips
        # are placed by their translation): the hips' world position is the
        # sum of the chain's translations.
        self.hips_chain = [0, ix("Hips")]
        moved = {int(j) for j in self.chains[2:, 2]} | {self.head}
        self.below_ends = [j for j in range(len(self.parents)) if _has_ancestor(self.parents, j, moved)]
        self.reset()

    def reset(self) -> None:
        self.pos = None  # [H, 3, 3] history at 30 fps, oldest first
        self.rot = None  # [H, 3, 4]
        self.mats = None  # [H, 3, 3, 3]: ``rot`` as matrices
        self.clock = 0.0
        self.y = None
        self.yaw = 0.0
        self.locks = [None, None]
        self.lock_w = np.zeros(2)
        self.planted = np.zeros(2, bool)
        self.sk = None

    def _push(self, p, q, dt) -> np.ndarray:
        """Add the 30 fps samples up to ``p``, ``q`` (``dt`` seconds after
        the last tick) to the history; returns the rotation matrices of the
        tracker rotations ``q`` ([3, 3, 3]), converted together with the new
        samples' (one conversion per tick)."""
        if self.pos is None:
            if self.scale is None:
                self.scale = float(np.clip(p[0, 2] / self.engine.head_height, 0.5, 1.6))
            self.sk = scaled_skeleton(self.base, self.scale)
            off = self.sk.offsets
            self.arm_length = np.linalg.norm(off[self.chains[2:, 1]], axis=-1) + np.linalg.norm(off[self.chains[2:, 2]], axis=-1)
            self.pos = np.repeat(p[None], _HISTORY, 0)
            self.rot = np.repeat(q[None], _HISTORY, 0)
            self.mats = np.repeat(rotations.to_matrix(q)[None], _HISTORY, 0)
            return self.mats[-1].copy()
        self.clock += dt
        last_p, last_q = self.pos[-1], self.rot[-1]
        new_p, new_q = [], []
        while self.clock >= 1.0 / 30.0 - 1e-9:
            self.clock -= 1.0 / 30.0
            a = 1.0 - self.clock / max(dt, 1e-9)
            new_p.append((1.0 - a) * last_p + a * p)
            # A tick on the 30 fps grid (a = 1) lands on the sample itself.
            new_q.append(q if a >= 1.0 else rotations.slerp(last_q, q, np.full(3, np.clip(a, 0.0, 1.0))))
        mats = rotations.to_matrix(np.array(new_q + [q]))  # [N + 1, 3, 3, 3]
        if new_p:
            self.pos = np.concatenate([self.pos, np.array(new_p)])[-_HISTORY:]
            self.rot = np.concatenate([self.rot, np.array(new_q)])[-_HISTORY:]
            self.mats = np.concatenate([self.mats, mats[:-1]])[-_HISTORY:]
        return mats[-1]

    def _heading(self, head: np.ndarray) -> tuple:
        """``(origin [3], world -> heading matrix [3, 3])`` of the current
        head rotation matrix ``head [3, 3]``: :func:`.features.heading_yaw`
        for one frame in plain floats (a degenerate frame keeps the last yaw)."""
        fx, fy, tilt = head @ HEAD_FORWARD
        ux, uy, _ = head @ HEAD_UP
        k = math.copysign(1.0, tilt) * max(abs(tilt) - 0.7, 0.0) * 3.0 if tilt != 0.0 else 0.0
        dx, dy = fx - k * ux, fy - k * uy
        if math.hypot(dx, dy) > 1e-4:
            self.yaw = math.atan2(dx, -dy)
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        return np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]])

    def _window(self, p: np.ndarray, mats: np.ndarray, hinv_m: np.ndarray) -> np.ndarray:
        """The network's input row ``[1, I]`` (float32) for the history with
        the current sample last: :func:`.features.window_inputs` of its last
        frame, from the matrices kept with the history."""
        pos = self.pos.copy()
        pos[-1] = p
        pos /= self.scale
        src = self.src
        origin = np.array([pos[-1, 0, 0], pos[-1, 0, 1], 0.0])
        ht = hinv_m.T
        x = np.concatenate([(pos[src] - origin) @ ht, ((pos[src] - pos[src - 1]) * 30.0) @ ht,
                            rotations.matrix_to_6d(hinv_m @ mats[src])], axis=-1)  # [L, 3, 12]
        return x.reshape(1, -1).astype(np.float32)

    def step(self, positions, rotations_, dt: float) -> Motion:
        """Advance by ``dt`` seconds to the sample ``positions [3, 3]``
        (metres, world), ``rotations_ [3, 4]`` (w, x, y, z; head, left hand,
        right hand) and return the body: one frame on the scaled canonical
        skeleton."""
        local, trans, _ = self._pose(positions, rotations_, dt)
        quats = rotations.from_orthonormal_matrix(local)
        return Motion(self.sk, quats[None], np.zeros((1, 3)), 30.0, trans[None], name="live track")

    def step_world(self, positions, rotations_, dt: float) -> tuple:
        """:meth:`step` as ``(world rotation matrices [J, 3, 3], hips world
        position [3])``: what the live mapping onto a rig reads
        (:meth:`~rigmind.backend.live_retarget.LiveRetarget.apply_world`),
        without quaternions or forward kinematics in between."""
        _, trans, world = self._pose(positions, rotations_, dt)
        return world, trans[self.hips_chain].sum(axis=0)

    def _pose(self, positions, rotations_, dt: float) -> tuple:
        p = np.asarray(positions, dtype=np.float64).reshape(3, 3)
        q = rotations.normalize(np.asarray(rotations_, dtype=np.float64).reshape(3, 4))
        q = np.where((np.sum(q * self.rot[-1], -1, keepdims=True) < 0) if self.rot is not None else False, -q, q)
        now = self._push(p, q, float(dt))  # [3, 3, 3]
        mats = self.mats.copy()
        mats[-1] = now  # the window ends at the current sample
        hinv_m = self._heading(now[0])
        y = self.engine(self._window(p, mats, hinv_m))[0].astype(np.float64)
        self.y = y if self.y is None else self.smoothing * self.y + (1.0 - self.smoothing) * y
        origin = np.array([p[0, 0], p[0, 1], 0.0])
        local_m, trans = decode_matrices(self.y, origin, hinv_m.T, self.scale, self.sk)
        return self._finish(local_m, trans, p, now)

    def _finish(self, local_m: np.ndarray, trans: np.ndarray, p, q) -> tuple:
        """The pose of local rotation matrices ``local_m [J, 3, 3]`` and
        translations ``trans [J, 3]`` finished like :func:`.posing.finish`
        (causally): the body moved so the head sits on ``p[0]``, feet held
        at their locks (or where they were before the move), wrists on
        ``p[1:]``, hands and head turned to the tracker rotation matrices
        ``q [3, 3, 3]``.
        Returns ``(local rotation matrices, local translations, world
        rotation matrices)``, matrices throughout."""
        cfg, par, ch, toes, head = self.cfg, self.parents, self.chains, self.toes, self.head
        W, P = world_matrices(par, local_m, trans)
        feet = P[ch[:2, 2]]  # where the ankles are before the body is moved onto the head tracker
        if cfg.head_on_target:
            # The whole body onto the head tracker (the hips' parent is the
            # fixed joint_Root, so every joint moves by the hips' shift), as
            # far as the arms still reach their trackers (posing.put_head_on).
            miss = ik.within_reach(p[0] - P[head], p[1:] - P[ch[2:, 0]], cfg.arm_reach * self.arm_length)
            trans = trans.copy()
            trans[self.hips_chain[-1]] += miss
            P = P + miss
        prob = self.y[-2:]
        self.planted = np.where(self.planted, prob > cfg.contact_off, prob > cfg.contact_on)
        # All four limbs in one solve (legs: soft reach; arms: hard, stretched below).
        a, b, c = P[ch[:, 0]], P[ch[:, 1]], P[ch[:, 2]]
        goal = c.copy()
        goal[:2] = feet
        for side in range(2):
            if self.planted[side]:
                if self.locks[side] is None:
                    self.locks[side] = feet[side].copy()
                self.lock_w[side] = min(1.0, self.lock_w[side] + 1.0 / cfg.lock_ramp)
            else:
                self.lock_w[side] = max(0.0, self.lock_w[side] - 1.0 / cfg.lock_ramp)
                if self.lock_w[side] == 0.0:
                    self.locks[side] = None
            if self.locks[side] is not None:
                goal[side] = feet[side] + self.lock_w[side] * (self.locks[side] - feet[side])
        goal[2:] = p[1:]
        pole = np.empty((4, 3))
        pole[:2] = knee_pole(a[:2], b[:2], c[:2], P[toes])
        pole[2:] = ik.elbow_pole(a[2:], b[2:], c[2:])
        r_up, r_low, reached = ik.two_bone_ik_matrices(a, b, c, goal, pole, max_reach=self.reach, soft=self.soft)
        nu, nl = r_up @ W[ch[:, 0]], r_low @ W[ch[:, 1]]
        ends = np.concatenate([W[ch[:2, 2]], q[1:]])
        local = local_m.copy()
        local[ch[:, 0]] = np.swapaxes(W[par[ch[:, 0]]], -1, -2) @ nu
        local[ch[:, 1]] = nu.swapaxes(-1, -2) @ nl
        local[ch[:, 2]] = nl.swapaxes(-1, -2) @ ends
        local[head] = W[par[head]].T @ q[0]
        trans = trans.copy()
        if cfg.stretch_arms:
            trans[ch[2:, 2]] += (nl[2:].swapaxes(-1, -2) @ (goal[2:] - reached[2:])[..., None])[..., 0]
        world = W.copy()
        world[ch[:, 0]], world[ch[:, 1]], world[ch[:, 2]], world[head] = nu, nl, ends, q[0]
        for j in self.below_ends:  # bones under the hands and the head (none on the canonical skeleton)
            world[j] = world[par[j]] @ local[j]
        return local, trans, world
