"""The names a baked walk's action gets: gait, style and speed, e.g.
"RigMind Walk · normal · 1.3 m/s" or "RigMind Run Along Path in place ·
active · 2-3.1 m/s". Pure Python (no bpy)."""

from __future__ import annotations

import numpy as np

from .gaits import gait_title


def speed_text(speed) -> str:
    """``speed`` (m/s, a number or one per point) as "1.3 m/s", or the
    range "0.8-1.6 m/s" when the points' speeds differ."""
    sp = np.asarray(speed, dtype=np.float64)
    if sp.ndim and sp.size > 1 and np.ptp(sp) > 1e-6:
        return f"{round(float(sp.min()), 2):g}-{round(float(sp.max()), 2):g} m/s"
    return f"{round(float(sp.ravel()[0] if sp.ndim else sp), 2):g} m/s"


def cycle_action_name(style: str, speed, gait: str = "walk") -> str:
    """The action name of a walk (or run) cycle."""
    return f"RigMind {gait_title(style, gait)} · {style} · {speed_text(speed)}"


def path_action_name(style: str, speed, gait: str = "walk", in_place: bool = False) -> str:
    """The action name of a walk (or run) along a path."""
    where = " in place" if in_place else ""
    return f"RigMind {gait_title(style, gait)} Along Path{where} · {style} · {speed_text(speed)}"


__all__ = ["speed_text", "cycle_action_name", "path_action_name"]
