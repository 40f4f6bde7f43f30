"""The documented range of every numeric option, and the size of a walk.

A value outside sense either crashed (``face --fps 0``: ZeroDivisionError),
silently did something useless (``--fps -30``: one frame for 5 s of speech;
``render --resolution 0x0``: a 4x4 PNG; ``--frames 10:1``: a 1-frame MP4)
or ran without bound (``walk --cycle --seconds 1e9`` forever; ``--path
"0,0;1e9,0"`` tried to allocate 373 GiB). Each is refused up front with one
line that says the limit. The same table is printed in docs/limits.md, and it
is the one the add-on's properties take their hard limits from
(``blender_addon.properties.hard_range``) and batch checks its manifests
and settings against (``batch.py``).
"""

from __future__ import annotations

import math

from .errors import UserError

# RANGES: option → (lowest, highest, unit), inclusive. The one table lives in
# backend/options.py (pure data, so the add-on's properties read it at
# registration without loading this module); it is checked here.
from .options import RANGES

#: A walk path: at most this long (m), this far from the origin (m), with
#: this many points. A take lasts length / speed, at most ``path_seconds``.
PATH_MAX_LENGTH_M = 1000.0
PATH_MAX_COORDINATE_M = 10_000.0
PATH_MAX_POINTS = 10_000


class OutOfRange(UserError):
    """A value outside its documented range; the message is one line."""


def _fmt(v) -> str:
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 10**20:
        return f"a {len(str(abs(v)))}-digit number"  # the whole integer would fill the line
    return f"{v:g}" if isinstance(v, float) else str(v)


def _finite(value) -> bool:
    # An int is finite at any size; math.isfinite would turn one past 1e308 into a float and overflow.
    return isinstance(value, int) or math.isfinite(value)


def check(name: str, value, *, option: str = None):
    """Return ``value`` if it lies in ``RANGES[name]``, else raise
    :class:`OutOfRange` naming the option (``--name`` by default)."""
    lo, hi, unit = RANGES[name]
    option = option or "--" + name.replace("_", "-")
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and _finite(value) and lo <= value <= hi
    if not ok:
        unit = f" {unit}" if unit else ""
        raise OutOfRange(f"{option} must be between {_fmt(lo)} and {_fmt(hi)}{unit}, got {_fmt(value)}")
    return value


def check_all(name: str, values, *, option: str = None):
    """:func:`check` for a number or for each of a 1-D sequence of numbers
    (a path's per-point speeds); the message names the first value outside
    and its place. Returns ``values``."""
    if isinstance(values, (int, float)) and not isinstance(values, bool):
        return check(name, values, option=option)
    try:
        items = [float(v) for v in values]
    except (TypeError, ValueError):
        items = None
    if not items:
        # Not numbers: let check() word the refusal of the value itself.
        check(name, values, option=option)
        return values
    for k, v in enumerate(items):
        try:
            check(name, v, option=option)
        except OutOfRange as e:
            raise OutOfRange(f"{e} (value {k + 1} of {len(items)})") from None
    return values


def check_frame_range(start: int, end: int, option: str = "--frames") -> tuple:
    check("frame", start, option=f"{option} start")
    check("frame", end, option=f"{option} end")
    if end < start:
        raise OutOfRange(f"{option} {start}:{end} ends before it starts; give START:END with START <= END")
    return start, end


def check_path(points_xy, speed: float = None, max_seconds: float = None) -> float:
    """Refuse a walk path that is too long, too far out or too detailed, or
    that would take longer than ``path_seconds`` at ``speed`` m/s (unless
    ``max_seconds`` caps the take). ``points_xy [N, 2]`` metres. Returns the
    path length in metres."""
    import numpy as np

    xy = np.asarray(points_xy, dtype=float).reshape(-1, 2)
    if len(xy) > PATH_MAX_POINTS:
        raise OutOfRange(f"the path has {len(xy)} points; RigMind walks paths of up to {PATH_MAX_POINTS} points")
    if not np.all(np.isfinite(xy)):
        raise OutOfRange("the path has a point that is not a finite number")
    far = float(np.abs(xy).max()) if len(xy) else 0.0
    if far > PATH_MAX_COORDINATE_M:
        raise OutOfRange(f"the path reaches {far:g} m from the origin; keep its points within "
                         f"±{PATH_MAX_COORDINATE_M:g} m (paths up to {PATH_MAX_LENGTH_M / 1000:g} km long)")
    length = float(np.linalg.norm(np.diff(xy, axis=0), axis=1).sum()) if len(xy) > 1 else 0.0
    if length > PATH_MAX_LENGTH_M:
        raise OutOfRange(f"the path is {length:g} m long; RigMind walks paths up to {PATH_MAX_LENGTH_M:g} m "
                         f"({PATH_MAX_LENGTH_M / 1000:g} km): split it into several takes")
    if max_seconds is not None:
        check("path_seconds", max_seconds, option="--seconds")
    elif speed is not None and speed > 0:
        hi = RANGES["path_seconds"][1]
        if length / speed > hi:
            raise OutOfRange(f"walking {length:g} m at {speed:g} m/s takes {length / speed:.0f} s; takes are limited "
                             f"to {hi:g} s: walk faster, shorten the path or cap it with --seconds")
    return length


#: ``rigmind train MODEL`` and ``rigmind eval MODEL`` options (each model's
#: tool parses its own) → their range in RANGES.
MODEL_TOOL_OPTIONS = {
    "steps": "train_steps", "seed": "seed", "threads": "train_threads", "batch": "train_batch",
    "minutes": "train_minutes", "seconds": "train_seconds", "synth": "train_synth", "beta": "loss_weight",
    "beat_weight": "loss_weight", "beat_accel_weight": "loss_weight", "prior_share": "share",
    "encoder_jitter": "encoder_jitter", "seeds": "eval_seeds", "voices": "eval_voices", "amount": "amount",
    "max_clips": "eval_clips", "max_seconds": "eval_run_seconds", "timing_steps": "timing_steps"}


def check_model_tool_options(args, **ranges) -> None:
    """Check the numeric options present on a parsed ``rigmind train MODEL``
    or ``rigmind eval MODEL`` command line before any data is read; raise
    :class:`OutOfRange`. ``ranges``: a tool's own range name for an option
    (attribute=name)."""
    for attr, name in {**MODEL_TOOL_OPTIONS, **ranges}.items():
        value = getattr(args, attr, None)
        if value is not None:
            check(name, value, option="--" + attr.replace("_", "-"))


def check_output_paths(*paths, example_suffix: str = ".pt") -> None:
    """Refuse, before a long run, an output path that cannot be written (a
    folder, a parent that is a file, no permission); None is skipped.
    ``example_suffix``: the kind of file the message suggests for a folder."""
    from .atomic_write import check_output_path

    for path in paths:
        if path is not None:
            check_output_path(path, example_suffix)


def check_options(args) -> None:
    """Check every numeric option present on a parsed ``rigmind`` command
    line (an ``argparse.Namespace``); raise :class:`OutOfRange`."""
    get = lambda name: getattr(args, name, None)  # noqa: E731
    for name in ("speed", "amount", "smile", "fps", "samples", "start_frame", "seed", "workers"):
        if get(name) is not None:
            check(name, get(name))
    if get("resolution") is not None:
        w, h = args.resolution
        check("resolution", w, option="--resolution width")
        check("resolution", h, option="--resolution height")
    if get("frames") is not None:
        check_frame_range(*args.frames)
    if get("frame") is not None:
        check("frame", args.frame)
    if get("seconds") is not None:
        check("cycle_seconds" if get("cycle") else "path_seconds", args.seconds, option="--seconds")
