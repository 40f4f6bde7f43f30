"""A walk's speeds: each style's own, what its clips cover, and a path's per point.

Speeds are m/s. The table (``gaits.speeds_table``) is in the controller
skeleton's (the Bandai actor's) metres; a rig whose legs are ``scale`` x the
actor's walks ``scale`` x faster at the same cadence, with longer strides.

Pure Python (no bpy).
"""

from __future__ import annotations

import numpy as np

from ..errors import UserError
from ..limits import check_all
from .gaits import gait_warning, speeds_table
from .path_input import path_points_and_speeds


#: Hip-to-ankle leg lengths (m) a character walks with: a 20 cm toy to a
#: 20 m giant. Outside, the rig is almost always in other units (an FBX from
#: Maya in centimetres with its 0.01 scale applied has 90 m legs).
LEG_LENGTH_RANGE_M = (0.1, 10.0)
#: A person's leg (m), to say how far off a rig is.
PERSON_LEG_M = 0.9


class RigScaleError(UserError):
    """A rig whose legs are far outside a character's size: it is in other units."""


#: Units a rig may have been built in, as metres per unit, with their names.
_UNITS = ((0.01, "centimetres"), (0.001, "millimetres"), (0.0254, "inches"), (0.3048, "feet"))


def check_rig_scale(leg_m: float, rig: str) -> None:
    """Refuse a rig whose hip-to-ankle ``leg_m`` (world metres) is outside
    :data:`LEG_LENGTH_RANGE_M`, naming its scale and the fix; every speed
    would otherwise be scaled by it (a walk of 100 m/s the user never asked for)."""
    lo, hi = LEG_LENGTH_RANGE_M
    if lo <= leg_m <= hi:
        return
    factor = leg_m / PERSON_LEG_M
    # The unit that brings the leg nearest a person's, if one brings it near at all.
    u, unit = min(_UNITS, key=lambda un: abs(np.log(leg_m * un[0] / PERSON_LEG_M)))
    if 0.3 <= leg_m * u <= 1.5:
        fix = f"it looks built in {unit}: scale it by {u:g} (S {u:g}, then Object > Apply > Scale)"
    else:
        fix = f"scale it by {1 / factor:.3g} (S {1 / factor:.3g}, then Object > Apply > Scale)"
    raise RigScaleError(f"rig {rig!r} has legs {leg_m:.3g} m long, {factor:.3g}x a person's ({PERSON_LEG_M} m): "
                        f"{fix} and try again")


#: The crouched gait's speeds (m/s, the controller skeleton's legs): what
#: the controller walks slowly and still on its speed (asked 0.3-0.8 m/s, it
#: walks within 0.04 m/s of it); the default is the sneak clip's
#: (``actions.crouch.crouch_speed``).
CROUCH_SPEED_RANGE = (0.25, 1.0)


def style_speeds(style: str, gait: str = "walk", crouch_speed: float = None) -> tuple:
    """``(default, (low, high))`` m/s of ``style`` walking or running, from
    its training clips, for a character with the controller skeleton's legs;
    for the crouched gait ``crouch_speed`` (the sneak's) and
    :data:`CROUCH_SPEED_RANGE`."""
    if gait == "crouch":
        if crouch_speed is None:
            raise ValueError("the crouched gait's speed comes from the crouch layer (actions.crouch.crouch_speed)")
        return float(crouch_speed), CROUCH_SPEED_RANGE
    styles = speeds_table()
    entry = styles.get(style, styles["normal"]).get("run" if gait == "run" else "walk")
    return float(entry["default"]), (float(entry["range"][0]), float(entry["range"][1]))


def resolve_speed(speed, style: str, gait: str = "walk", scale: float = 1.0, crouch_speed: float = None):
    """``(speed, warning)``: ``speed`` (m/s, a number or one per point; None
    = the style's default for the gait) in the world of a rig whose legs
    are ``scale`` x the controller skeleton's, clamped to what the style's
    clips cover; ``warning`` says what was clamped and the range (and when a
    "run" of the style is a grounded run, :func:`~.gaits.gait_warning`), else None."""
    default, (lo, hi) = style_speeds(style, gait, crouch_speed)
    lo, hi = lo * scale, hi * scale
    if speed is None:
        return round(default * scale, 3), gait_warning(style, gait)
    sp = np.asarray(speed, dtype=np.float64)
    clamped = np.clip(sp, lo, hi)
    warning = None
    if np.any(np.abs(clamped - sp) > 1e-9):
        asked = np.unique(np.round(sp[np.abs(clamped - sp) > 1e-9], 2))
        what = "crouched walk" if gait == "crouch" else f"{style} {'run' if gait == 'run' else 'walk'} clips"
        warning = (f"speed {', '.join(f'{a:g}' for a in asked)} m/s is outside what the {what} "
                   f"cover on this rig ({lo:.2f}-{hi:.2f} m/s): clamped")
    warning = "; ".join(w for w in (warning, gait_warning(style, gait)) if w) or None
    return (float(clamped) if clamped.ndim == 0 else clamped), warning


def path_speeds(points, speed, style: str, gait: str, scale: float, crouch_speed: float = None):
    """``(xy [N, 2], speeds, warning)``: the path's points (``[N, 2]``, or
    ``[N, 3]`` with a speed per point, NaN = ``speed``), its speeds in world
    m/s (a number, or one per point) with the defaults filled in and clamped
    (:func:`resolve_speed`, for a rig ``scale`` x the controller's legs),
    and the warning."""
    base, warning = resolve_speed(speed, style, gait, scale, crouch_speed)
    xy, sp = path_points_and_speeds(points, base)
    if not np.isscalar(sp):
        sp, w2 = resolve_speed(sp, style, gait, scale, crouch_speed)
        warning = warning or w2
    check_all("speed", sp, option="speed")
    return xy, sp, warning


__all__ = ["CROUCH_SPEED_RANGE", "style_speeds", "resolve_speed", "path_speeds"]
