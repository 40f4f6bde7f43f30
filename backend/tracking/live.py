"""Live tracking: one tracker sample in, one body pose out (viewport ticks).

:class:`LiveTracker` keeps the last second of tracker samples at 30 fps (a
tick of any length adds the 30 fps samples that fall inside it, linearly
interpolated), runs the network on the latest window (one row), smooths its
output exponentially, holds each planted foot at its lock with two-bone leg
IK (a released foot eases back over a few frames) and solves the arms onto
the current hand targets. Causal: it never waits for future samples.
"""

from __future__ import annotations

import numpy as np

from .. import ik, rotations
from ..foot_lock import knee_pole
from ..motion import Motion
from .canonical import canonical_skeleton
from .features import LAGS, heading, window_inputs
from .posing import ARMS, LEGS, PoseConfig, decode, scaled_skeleton

_HISTORY = max(LAGS) + 2


class LiveTracker:
    """``step(positions [3, 3], rotations [3, 4], dt) -> Motion`` (one frame,
    canonical skeleton scaled to the subject). ``scale`` None: from the
    first sample's head height (the user stands up straight at the start)."""

    def __init__(self, scale: float = None, *, model_path=None, engine: str = "onnxruntime",
                 smoothing: float = 0.5, pose: PoseConfig = None):
        from .engine import load_engine

        self.engine = load_engine(model_path, engine)
        self.scale = scale
        self.smoothing = float(smoothing)
        self.cfg = pose or PoseConfig()
        self.base = canonical_skeleton()
        self.reset()

    def reset(self) -> None:
        self.pos = None  # [H, 3, 3] history at 30 fps, oldest first
        self.rot = None
        self.clock = 0.0
        self.y = None
        self.locks = [None, None]
        self.lock_w = np.zeros(2)
        self.planted = np.zeros(2, bool)
        self.sk = None

    def _push(self, p, q, dt):
        if self.pos is None:
            if self.scale is None:
                self.scale = float(np.clip(p[0, 2] / self.engine.head_height, 0.5, 1.6))
            self.sk = scaled_skeleton(self.base, self.scale)
            self.pos = np.repeat(p[None], _HISTORY, 0)
            self.rot = np.repeat(q[None], _HISTORY, 0)
            return
        self.clock += dt
        last_p, last_q = self.pos[-1], self.rot[-1]
        new_p, new_q = [], []
        while self.clock >= 1.0 / 30.0 - 1e-9:
            self.clock -= 1.0 / 30.0
            a = 1.0 - self.clock / max(dt, 1e-9)
            new_p.append((1.0 - a) * last_p + a * p)
            new_q.append(rotations.slerp(last_q, q, np.full(3, np.clip(a, 0.0, 1.0))))
        if new_p:
            self.pos = np.concatenate([self.pos, np.array(new_p)])[-_HISTORY:]
            self.rot = np.concatenate([self.rot, np.array(new_q)])[-_HISTORY:]

    def step(self, positions, rotations_, dt: float) -> Motion:
        p = np.asarray(positions, dtype=np.float64).reshape(3, 3)
        q = rotations.normalize(np.asarray(rotations_, dtype=np.float64).reshape(3, 4))
        q = np.where((np.sum(q * self.rot[-1], -1, keepdims=True) < 0) if self.rot is not None else False, -q, q)
        self._push(p, q, float(dt))
        hp = self.pos.copy()
        hr = self.rot.copy()
        hp[-1], hr[-1] = p, q  # the window ends at the current sample
        x = window_inputs(hp / self.scale, hr, 30.0, frames=[len(hp) - 1])
        y = self.engine(x)[0].astype(np.float64)
        self.y = y if self.y is None else self.smoothing * self.y + (1.0 - self.smoothing) * y
        origin, hinv = heading(hp[-1:], hr[-1:])
        body = decode(self.y[None], origin, hinv, self.scale, self.sk)
        return self._finish(body, p, q)

    def _finish(self, body: Motion, p, q) -> Motion:
        sk, ix, par, cfg = self.sk, self.sk.index, self.sk.parents, self.cfg
        W, P = body.world()
        W, P = W[0], P[0]
        local = body.rotations[0].copy()
        trans = body.translations[0].copy()
        prob = self.y[-2:]
        self.planted = np.where(self.planted, prob > cfg.contact_off, prob > cfg.contact_on)
        # All four limbs in one solve (legs: soft reach; arms: hard, stretched below).
        chains = [(ix(u), ix(lo), ix(f)) for u, lo, f, _ in LEGS] + [tuple(ix(n) for n in arm) for arm in ARMS]
        a, b, c = (np.array([P[ch[k]] for ch in chains]) for k in range(3))
        goal = c.copy()
        for side in range(2):
            if self.planted[side]:
                if self.locks[side] is None:
                    self.locks[side] = c[side].copy()
                self.lock_w[side] = min(1.0, self.lock_w[side] + 1.0 / cfg.lock_ramp)
            else:
                self.lock_w[side] = max(0.0, self.lock_w[side] - 1.0 / cfg.lock_ramp)
                if self.lock_w[side] == 0.0:
                    self.locks[side] = None
            if self.locks[side] is not None:
                goal[side] = c[side] + self.lock_w[side] * (self.locks[side] - c[side])
        goal[2:] = p[1:]
        toes = np.array([P[ix(t)] for *_, t in LEGS])
        pole = np.empty((4, 3))
        pole[:2] = knee_pole(a[:2], b[:2], c[:2], toes)
        bend = b[2:] - 0.5 * (a[2:] + c[2:])
        pole[2:] = b[2:] + ik.unit_vectors(bend, np.array([0.0, 0.3, -1.0])) * 0.3
        soft = np.array([cfg.leg_soft, cfg.leg_soft, 1.0, 1.0])
        reach = np.array([ik.MAX_REACH, ik.MAX_REACH, cfg.arm_reach, cfg.arm_reach])
        q_up, q_low, reached = ik.two_bone_ik(a, b, c, goal, pole, max_reach=reach, soft=soft)
        ch = np.array(chains)  # [4, 3] upper, lower, end joint of each limb
        ends = np.concatenate([W[ch[:2, 2]], q[1:]])
        nu, nl = rotations.mul(q_up, W[ch[:, 0]]), rotations.mul(q_low, W[ch[:, 1]])
        local[ch[:, 0]] = rotations.mul(rotations.inv(W[par[ch[:, 0]]]), nu)
        local[ch[:, 1]] = rotations.mul(rotations.inv(nu), nl)
        local[ch[:, 2]] = rotations.mul(rotations.inv(nl), ends)
        if cfg.stretch_arms:
            trans[ch[2:, 2]] += rotations.rotate(rotations.inv(nl[2:]), goal[2:] - reached[2:])
        head = ix("Head")
        local[head] = rotations.mul(rotations.inv(W[par[head]]), q[0])
        return Motion(sk, local[None], np.zeros((1, 3)), 30.0, trans[None], name="live track")
