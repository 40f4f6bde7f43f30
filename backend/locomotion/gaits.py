"""What a style's gait really is, from its training clips.

``presets/locomotion_speeds.json`` (``bench/locomotion_default_speeds.py``)
records, per style and gait, the share of the clips' strides with a flight
phase (both feet off the ground). Every style's "run" clips have one in
every stride except the elderly style's: none of its 28 "run" clips (25 of them
training clips) leaves the ground (the lower foot rises 0.8 cm at most in a median stride, at 1.43 m/s
and 163 steps a minute): a grounded run, a shuffling jog. What RigMind makes
of a "run" is then named for what it is, and the user is told why.
"""

from __future__ import annotations

import json
from .. import paths

SPEEDS_FILE = paths.PRESETS_DIR / "locomotion_speeds.json"
#: A "run" whose clips have a flight phase in fewer strides than this is grounded.
MIN_FLIGHT_SHARE = 0.5
_STYLES = None


def speeds_table() -> dict:
    """``style -> {"walk": {...}, "run": {...}, "turn_lateral_accel": {...}}``
    of :data:`SPEEDS_FILE`, read once: the one reader of that file (default
    speeds, their ranges, flight shares, cornering)."""
    global _STYLES
    if _STYLES is None:
        _STYLES = json.loads(SPEEDS_FILE.read_text(encoding="utf-8"))["styles"]
    return _STYLES


def _entry(style: str, gait: str) -> dict:
    styles = speeds_table()
    return styles.get(style, styles["normal"]).get("run" if gait == "run" else "walk", {})


def controller_gait(gait: str) -> str:
    """The gait the controller walks for ``gait``: "run" for a run, "walk"
    otherwise (a crouch is the walk slowed and lowered)."""
    return "run" if gait == "run" else "walk"


def is_grounded_run(style: str, gait: str) -> bool:
    """True when ``gait`` is "run" and ``style``'s run clips have (almost) no
    flight phase."""
    return gait == "run" and float(_entry(style, gait).get("flight_share", 1.0)) < MIN_FLIGHT_SHARE


def gait_title(style: str, gait: str) -> str:
    """The gait's name for an action: "Walk", "Crouch", "Run" or "Grounded Run"."""
    if gait == "crouch":
        return "Crouch"
    if gait != "run":
        return "Walk"
    return "Grounded Run" if is_grounded_run(style, gait) else "Run"


def gait_warning(style: str, gait: str):
    """A one-line warning when the gait asked for is not what the data has
    (a "run" of a style whose run clips never leave the ground), else None."""
    if not is_grounded_run(style, gait):
        return None
    e = _entry(style, gait)
    return (f"the {style} style's run clips have no flight phase (both feet off the ground in "
            f"{100.0 * float(e.get('flight_share', 0.0)):.0f}% of strides, {e.get('clips', '?')} clips): "
            f"made a grounded run (a shuffling jog), not a run with flight")


__all__ = ["controller_gait", "speeds_table", "is_grounded_run", "gait_title", "gait_warning", "MIN_FLIGHT_SHARE"]
