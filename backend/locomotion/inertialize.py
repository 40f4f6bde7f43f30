"""Inertialised blends between motions (Bollo, "Inertialization", GDC 2018).

Instead of cross-fading two animations, the *offset* between where the old
motion left off and the new one, and its velocity, decay to zero with a
quintic, so the result starts exactly where the old motion was (same pose
and velocity) and ends exactly on the new one with no jerk. Used where a
character comes to rest: the path follower's standing end and the
controller's idle stand.

Units: metres, radians; frames of the clips' own rate.
"""

from __future__ import annotations

import numpy as np

from .. import rotations
from ..motion import Motion


# Quintic Hermite decay basis on u in [0, 1]: an offset whose value (h0),
# slope (h1) or curvature (h2) is 1 at u = 0 reaches zero value, slope and
# curvature at u = 1. Shared with the foot cleanup's lock blends.
def decay_value(u):
    return 1.0 - u**3 * (10.0 - 15.0 * u + 6.0 * u * u)


def decay_slope(u):
    return u - u**3 * (6.0 - 8.0 * u + 3.0 * u * u)


def decay_curvature(u):
    return 0.5 * u * u - u**3 * (1.5 - 1.5 * u + 0.5 * u * u)


def blend_to_pose(prev: Motion, last: Motion, target: Motion, frames: int) -> Motion:
    """Inertialization into a still pose: ``frames`` frames that start where
    the one-frame clips ``prev`` -> ``last`` left off (same pose offset and
    velocity) and end exactly on the one-frame ``target`` at rest.

    Per joint, the offset from ``target`` (local rotations as rotation
    vectors, left-multiplied; translations and the root position in metres)
    and its per-frame velocity at ``last`` decay with a quintic Hermite to
    zero value, velocity and acceleration; the blend runs on the offsets
    only, so nothing is averaged between unrelated poses. All three clips
    are on the same skeleton; returns ``frames`` frames (``[1, frames]``
    after ``last``)."""
    u = (np.arange(1, frames + 1) / float(frames))[:, None]
    h0, h1 = decay_value(u), decay_slope(u)  # [n, 1]
    n = float(frames)

    def rot_off(a, b):  # rotation vector of a * inv(b), [J, 3]
        return rotations.to_axis_angle(rotations.canonical(rotations.mul(a, rotations.inv(b))))

    q_t = target.rotations[0]
    off = rot_off(last.rotations[0], q_t)
    vel = rot_off(last.rotations[0], prev.rotations[0])
    rots = rotations.mul(rotations.from_axis_angle(h0[:, None] * off[None] + h1[:, None] * n * vel[None]), q_t[None])

    def lin(get):
        x_t, x_l, x_p = get(target)[0], get(last)[0], get(prev)[0]
        shape = (frames,) + (1,) * x_t.ndim
        return x_t[None] + h0.reshape(shape) * (x_l - x_t)[None] + h1.reshape(shape) * n * (x_l - x_p)[None]

    trans = None
    if target.translations is not None and last.translations is not None and prev.translations is not None:
        trans = lin(lambda m: m.translations)
    roots = lin(lambda m: m.root_positions)
    if trans is not None:
        trans[:, 0] = roots  # joint 0 is the character root
    return Motion(target.skeleton, rotations.normalize(rots), roots, target.fps, trans, name=target.name)


__all__ = ["blend_to_pose", "decay_value", "decay_slope", "decay_curvature"]
