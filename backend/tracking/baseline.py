"""The baseline body for three trackers: legs (and trunk) from the walk
controller driven by the head's velocity and facing, shifted to stay under
the head, then the same finishing as the model (:func:`.posing.finish`: arm
IK to the hand trackers, head and hands turned to theirs, foot locks).
"""

from __future__ import annotations

import numpy as np

from .. import rotations
from ..errors import Cancelled
from ..filters import gaussian_filter1d
from ..locomotion.motion_matching import Control
from ..motion import Motion
from .features import heading_yaw

#: Smoothing of the head's velocity (frames at 30 fps) before it drives the
#: controller (the head bobs and sways with every step).
VELOCITY_SIGMA = 4.0
#: Smoothing of the shift that keeps the controller's body under the head.
SHIFT_SIGMA = 15.0


def baseline_body(pos, rot, scale: float, sk, *, progress=None, cancelled=None) -> Motion:
    """The controller's walk for trackers ``pos [F, 3, 3]`` (m), ``rot [F,
    3, 4]`` at 30 fps, as a Motion on ``sk`` (canonical, scaled by ``scale``)
    with joint_Root fixed at the origin."""
    from ..locomotion.controllers import load_controller

    ctrl = load_controller("neural", engine="onnxruntime")
    F = len(pos)
    head_xy = pos[:, 0, :2] / scale
    vel = np.gradient(gaussian_filter1d(head_xy, VELOCITY_SIGMA, axis=0, mode="nearest"), axis=0) * 30.0 if F > 1 \
        else np.zeros((F, 2))
    yaw = heading_yaw(rot[:, 0])
    facing = np.stack([np.sin(yaw), -np.cos(yaw)], axis=1)
    ctrl.reset(position=head_xy[0], yaw=float(yaw[0]))
    hip_rot = np.empty((F, 4))
    hip_pos = np.empty((F, 3))
    local = np.empty((F, len(sk), 4))
    hips = sk.index("Hips")
    head = sk.index("Head")
    head_w = np.empty((F, 3))
    for f in range(F):
        if cancelled is not None and f % 64 == 0 and cancelled():
            raise Cancelled("Cancelled")
        m = ctrl.step(Control(velocity=tuple(vel[f]), facing=tuple(facing[f])))
        wr, wp = m.world()
        local[f] = m.rotations[0]
        hip_rot[f], hip_pos[f] = wr[0, hips], wp[0, hips]
        head_w[f] = wp[0, head]
        if progress is not None and f % 256 == 0:
            progress(0.1 + 0.6 * f / F)
    # Keep the body under the head: the controller follows the velocity, not the position.
    shift = gaussian_filter1d(head_xy - head_w[:, :2], SHIFT_SIGMA, axis=0, mode="nearest") if F > 1 \
        else head_xy - head_w[:, :2]
    hip_pos[:, :2] += shift
    local[:, 0] = rotations.identity((F,))
    local[:, hips] = hip_rot
    trans = np.broadcast_to(sk.offsets, (F, len(sk), 3)).copy()
    trans[:, 0] = 0.0
    trans[:, hips] = hip_pos * scale
    return Motion(sk, rotations.make_continuous(local), np.zeros((F, 3)), 30.0, trans)
