"""Standing that stands: the gesture model's feet planted, its drifts made steps.

The model's legs carry the speaker's weight shifts, but nothing ties its
feet to the floor: they wander 25-45 cm over 20 s and pivot without ever
lifting. Here each foot stays where it is (a lock, held by leg IK) while
the pelvis sways above it, and when the model's foot has drifted more than
``step_distance`` from its foothold the foot takes a real step: it lifts,
moves to where the model now has it, and lands (:func:`plan_steps` picks
the moments, one foot at a time;
:func:`~..locomotion.cleanup.pin_feet` does the locking, the swing lift and
the leg IK with :mod:`~..foot_lock`, as it does for the walk controller).

Units: metres, seconds; Blender Z up; the SMPL-X skeleton of
:mod:`.representation`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..locomotion.cleanup import PinConfig, pin_feet
from ..motion import Motion

#: (ankle, toe, hip, knee) joint names per side on the SMPL-X skeleton.
LEGS = (("left_ankle", "left_foot", "left_hip", "left_knee"),
        ("right_ankle", "right_foot", "right_hip", "right_knee"))


@dataclass(frozen=True)
class StandingConfig:
    """``step_distance`` (m): drift of the model's ankle from its foothold
    that triggers a step. ``step_seconds``: how long a step's swing lasts.
    ``settle_seconds``: least time a foot stays planted after landing.
    ``lift_slope``/``clearance``: the swing foot stays ``lift_slope`` x its
    distance to the nearest foothold above the floor, up to ``clearance`` (m).

    ``step_distance`` on the paired take's training part (its speech in, FD
    of the result against its motion, 4 seeds, seed std ~55): no planting
    1076, 0.04/0.06/0.08 m 1160-1165, 0.12 m 1201, 0.2 m 1301 (the real
    speaker shifts and steps often; a foot that never moves reads as
    stiff). 0.08 m doubled the standing skate on the rigs (0.05 → 0.08-0.13
    cm/frame, the target being 0.15) for an FD gain inside one seed's
    spread, so 0.12 m stays."""

    step_distance: float = 0.12
    step_seconds: float = 0.4
    settle_seconds: float = 0.6
    lift_slope: float = 1.2
    clearance: float = 0.07


def plan_steps(ankles_xy: np.ndarray, fps: float, cfg: StandingConfig = StandingConfig()) -> np.ndarray:
    """``ankles_xy [F, 2, 2]`` (the model's ankles, m) → contacts ``[F, 2]``
    (1 planted, 0 stepping), left then right. A foot steps when the model's
    ankle is farther than ``step_distance`` from where the foot was planted
    and the other foot is down and settled; the step lands where the model's
    ankle is at its end."""
    f = len(ankles_xy)
    c = np.ones((f, 2), np.float32)
    n_step = max(int(round(cfg.step_seconds * fps)), 2)
    n_settle = int(round(cfg.settle_seconds * fps))
    hold = [ankles_xy[0, 0].copy(), ankles_xy[0, 1].copy()]
    free_at = [0, 0]          # first frame each foot may lift again
    busy_until = -1           # last frame of the step in progress (either foot)
    t = 0
    while t < f:
        if t > busy_until:
            d = ankles_xy[t] - np.asarray(hold)
            drift = np.sqrt((d * d).sum(axis=1))
            drift[t < np.asarray(free_at)] = -1.0
            s = int(np.argmax(drift))
            if drift[s] > cfg.step_distance and t + n_step < f:
                c[t:t + n_step, s] = 0.0
                hold[s] = ankles_xy[t + n_step, s].copy()
                busy_until = t + n_step - 1
                free_at[s] = t + n_step + n_settle
                free_at[1 - s] = max(free_at[1 - s], t + n_step + n_settle // 2)
                t += n_step
                continue
        t += 1
    return c


def plant_feet(motion: Motion, cfg: StandingConfig = StandingConfig(), *, steps_from: Motion = None) -> Motion:
    """``motion`` (SMPL-X, world space) with its feet planted and its drifts
    turned into steps; only the hip, knee and ankle rotations change. The
    steps are planned on ``steps_from``'s ankles when given (the same take
    before a layer that sways its pelvis: a sway is not a drift to step for)."""
    names = list(motion.skeleton.names)
    pos = (motion if steps_from is None else steps_from).world_positions()
    ank = pos[:, [names.index(LEGS[0][0]), names.index(LEGS[1][0])], :2]
    steps = plan_steps(ank, motion.fps, cfg)
    contacts = np.stack([steps[:, 0], steps[:, 0], steps[:, 1], steps[:, 1]], axis=1)
    return pin_feet(motion, contacts, config=PinConfig(
        foot_joints=(LEGS[0][0], LEGS[1][0]), toe_joints=(LEGS[0][1], LEGS[1][1]),
        hip_joints=(LEGS[0][2], LEGS[1][2]), knee_joints=(LEGS[0][3], LEGS[1][3]),
        blend_seconds=cfg.step_seconds / 2, max_slide=1.0, release_reach=2.0,
        swing_slope=cfg.lift_slope, swing_clearance=cfg.clearance))
