"""Device rotations -> the trackers' rotation convention.

A headset or controller reports its own orientation, in its own axes; the
tracking model wants the canonical skeleton's ``Head`` / ``Hand`` world
rotations (:mod:`.trackers`). One calibration sample, taken while the user
stands in a neutral pose (arms hanging, looking ahead) facing ``facing_yaw``,
ties the two: ``q(t) = q_device(t) * inv(q_device_calibration) * q_standing``,
``q_standing`` the canonical rotations of a neutral standing pose (the walk
controller's idle stance) turned to ``facing_yaw``. Quaternions (w, x, y,
z), world, Blender Z up; yaw in radians about +Z, 0 = facing -Y.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .. import rotations
from ..locomotion.features import yaw_quat
from .canonical import TRACKED


@lru_cache(maxsize=1)
def _standing() -> np.ndarray:
    from ..locomotion.controllers import load_controller
    from ..locomotion.motion_matching import Control

    ctrl = load_controller("neural", engine="onnxruntime")
    ctrl.reset(position=(0.0, 0.0), yaw=0.0)
    pose = ctrl.step(Control())
    w = pose.world_rotations()[0]
    return np.array([w[pose.skeleton.index(n)] for n in TRACKED])


def standing_rotations(facing_yaw: float = 0.0) -> np.ndarray:
    """``[3, 4]`` head, left hand, right hand rotations of a neutral standing
    pose facing ``facing_yaw`` (the walk controller's idle stance)."""
    return rotations.mul(yaw_quat(np.full(3, float(facing_yaw))), _standing())


def calibrate(device_rotations, device_calibration, facing_yaw: float = 0.0) -> np.ndarray:
    """``device_rotations [..., 3, 4]`` in the trackers' convention, given the
    devices' rotations ``device_calibration [3, 4]`` while the user stood
    neutral facing ``facing_yaw``."""
    q = rotations.normalize(np.asarray(device_rotations, dtype=np.float64))
    cal = rotations.normalize(np.asarray(device_calibration, dtype=np.float64).reshape(3, 4))
    return rotations.mul(rotations.mul(q, rotations.inv(cal)), standing_rotations(facing_yaw))
