"""The foot clean-up's settings on a path (Walk Along Path, ``rigmind walk
--path``, the rig evaluation): one place for the tuned values.

A path walk turns, starts and stops, so its feet get more help than the
defaults of :class:`~.cleanup.PinConfig` give: a higher swing lift, a
gentler landing, a bounded knee speed and the mocap's swing pitch. The
numbers and how they were measured are in bench/RESULTS.md ("Issue #12,
session 8").

Pure Python (no bpy).
"""

from __future__ import annotations

import numpy as np

from .cleanup import PinConfig
from .swing_pitch import style_profiles

#: Least height (m, controller skeleton) the swinging foot is lifted to
#: between footholds (``PinConfig.swing_clearance``): the validation mocap's
#: walks peak their toes at ~10 cm, the network's swing skims the floor.
SWING_CLEARANCE = 0.115
#: The lift's slope toward the next foothold (``PinConfig.swing_landing_slope``):
#: steeper held the foot up until the last frames before a foothold at the
#: edge of reach, then snapped the leg straight; with the swing pitch the
#: foot comes down sooner, as the mocap's does.
SWING_LANDING_SLOPE = 0.15
#: Fastest the cleaned knee may flex or straighten (rad/s,
#: ``PinConfig.knee_speed``; 13.3 degrees a frame at 30 fps): fewer one-frame
#: knee pops where a lock sits at the edge of reach.
KNEE_SPEED = float(np.radians(400.0))
#: Whether the swinging foot's pitch follows each style's training mocap
#: (toe-off, heel strike, the roll to flat: ``PinConfig.swing_pitch``)
#: instead of the network's flat landing.
SWING_PITCH = True


def path_pin_config(style="normal") -> PinConfig:
    """The foot clean-up's settings on a path for ``style`` (a name, or a
    ``{name: weight}`` blend: its heaviest style's swing pitch)."""
    return PinConfig(swing_clearance=SWING_CLEARANCE, swing_landing_slope=SWING_LANDING_SLOPE, knee_speed=KNEE_SPEED,
                     swing_pitch=style_profiles(style) if SWING_PITCH else None)


__all__ = ["SWING_CLEARANCE", "SWING_LANDING_SLOPE", "KNEE_SPEED", "SWING_PITCH", "path_pin_config"]
