"""The tracker take: head, left hand and right hand poses over time, and its
CSV file.

Positions are metres in Blender world space (Z up). Rotations are unit
quaternions ``(w, x, y, z)`` in world space; the convention is the one of
:func:`.mocap_trackers.trackers_from_motion`: the world rotation the
canonical (Bandai-Namco) skeleton's ``Head`` / ``Hand_L`` / ``Hand_R`` bone
has when the body is put on that skeleton (its BVH rest: identity).

The CSV file (docs/tracking.md): a header row naming the columns, then one
row per sample::

    time,head_x,head_y,head_z,head_qw,head_qx,head_qy,head_qz,lhand_x,...,lhand_qz,rhand_x,...,rhand_qz

``time`` in seconds (strictly increasing, any rate, may be irregular),
positions in metres, quaternions ``w x y z``. Columns are found by name (any
order; other columns are ignored); lines starting with ``#`` are comments.
Z up by default; :func:`read_tracker_csv` with ``up="Y"`` reads a Y-up file
(``x, y, z`` -> Blender ``x, -z, y``, :mod:`..axes`).

Every take that reaches the model goes through :func:`check_take`: NaN or
infinite values, quaternions of zero length, time that does not increase,
trackers farther apart than one body allows, too few or too many samples,
each refused with one line (:class:`TrackerFileError`, a ``UserError``).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import UserError

#: Tracker order along axis 1 of the arrays.
TRACKERS = ("head", "hand_l", "hand_r")
#: The trackers' column prefixes in the CSV file, in :data:`TRACKERS` order.
CSV_PREFIXES = ("head", "lhand", "rhand")
#: How messages name the trackers.
TRACKER_WORDS = ("head", "left hand", "right hand")
#: Per tracker: position, then quaternion (w, x, y, z).
CSV_FIELDS = ("x", "y", "z", "qw", "qx", "qy", "qz")
#: The header row, in the order :func:`write_tracker_csv` writes it.
CSV_COLUMNS = ("time",) + tuple(f"{p}_{f}" for p in CSV_PREFIXES for f in CSV_FIELDS)

#: Largest tracker file read (bytes): a 1 h take at 100 Hz is ~60 MB of text.
MAX_FILE_BYTES = 128 * 1024 * 1024
#: Most samples in a take (one hour at 100 Hz).
MAX_SAMPLES = 360_000
#: Longest take (s).
MAX_SECONDS = 3600.0
#: Fewest samples: a body needs at least two to have a velocity.
MIN_SAMPLES = 2
#: Farthest apart two trackers of one person may be (m): a tall adult's arm
#: span is ~2 m and a hand ~1.1 m from the head; beyond this the file is in
#: other units (cm) or the trackers are not one person's.
MAX_TRACKER_SPREAD_M = 2.5
#: Farthest from the origin a tracker may be (m), as for walk paths.
MAX_COORDINATE_M = 10_000.0
#: A quaternion shorter than this is no rotation (the axis is lost).
MIN_QUATERNION_NORM = 1e-6


class TrackerFileError(UserError):
    """A tracker file or take RigMind cannot use (one line: what and the fix)."""


@dataclass(frozen=True)
class TrackerTake:
    """``times [T]`` seconds, increasing (any frame rate, may be irregular);
    ``positions [T, 3, 3]`` head, left hand, right hand (metres, world,
    Z up); ``rotations [T, 3, 4]`` unit quaternions (w, x, y, z), world."""

    times: np.ndarray
    positions: np.ndarray
    rotations: np.ndarray

    def __post_init__(self):
        t = np.asarray(self.times, dtype=np.float64).reshape(-1)
        p = np.asarray(self.positions, dtype=np.float64)
        q = np.asarray(self.rotations, dtype=np.float64)
        if p.shape != (len(t), 3, 3) or q.shape != (len(t), 3, 4):
            raise ValueError(f"tracker arrays must be [T, 3, 3] and [T, 3, 4] for {len(t)} times, "
                             f"got {p.shape} and {q.shape}")
        if len(t) > 1 and not np.all(np.diff(t) > 0):
            raise ValueError("tracker times must increase")
        q = q / np.maximum(np.linalg.norm(q, axis=-1, keepdims=True), 1e-12)
        object.__setattr__(self, "times", t)
        object.__setattr__(self, "positions", p)
        object.__setattr__(self, "rotations", q)

    @property
    def num_samples(self) -> int:
        return len(self.times)

    @property
    def duration(self) -> float:
        """Seconds from the first to the last sample."""
        return float(self.times[-1] - self.times[0]) if len(self.times) else 0.0


# --- checks ---------------------------------------------------------------------------


def _place(i: int, first_line) -> str:
    """Where sample ``i`` is: its file line (``first_line``: the line of
    sample 0) or its 1-based sample number."""
    return f"line {first_line + i}" if first_line is not None else f"sample {i + 1}"


def check_arrays(times, positions, rotations, *, name: str = "the tracker take", first_line: int = None) -> None:
    """Refuse tracker arrays (``times [T]`` s, ``positions [T, 3, 3]`` m,
    ``rotations [T, 3, 4]``) the body cannot be made from, with one line
    naming ``name`` and the first bad sample (``first_line``: the file line
    of sample 0, for a CSV file)."""
    t = np.asarray(times, dtype=np.float64).reshape(-1)
    p = np.asarray(positions, dtype=np.float64)
    q = np.asarray(rotations, dtype=np.float64)
    n = len(t)
    if n < MIN_SAMPLES:
        raise TrackerFileError(f"{name}: {n} sample{'s' if n != 1 else ''}; give at least {MIN_SAMPLES} "
                               "(one row per moment the trackers were read)")
    if n > MAX_SAMPLES:
        raise TrackerFileError(f"{name}: {n} samples, more than RigMind's {MAX_SAMPLES} for one take; "
                               "split it into shorter takes")
    for what, arr in (("time", t), ("a position", p), ("a quaternion", q)):
        bad = ~np.isfinite(arr.reshape(n, -1)).all(axis=1)
        if bad.any():
            i = int(np.argmax(bad))
            raise TrackerFileError(f"{name}: {what} at {_place(i, first_line)} is not a finite number (NaN or inf); "
                                   "fill or drop the samples where tracking was lost")
    dt = np.diff(t)
    if (dt <= 0).any():
        i = int(np.argmax(dt <= 0)) + 1
        verb = "repeats" if dt[i - 1] == 0 else "goes backwards"
        raise TrackerFileError(f"{name}: time {verb} at {_place(i, first_line)} ({t[i]:g} s after {t[i - 1]:g} s); "
                               "times must increase from row to row")
    if t[-1] - t[0] > MAX_SECONDS:
        raise TrackerFileError(f"{name}: {t[-1] - t[0]:.0f} s long, more than RigMind's {MAX_SECONDS:g} s for "
                               "one take; split it into shorter takes")
    far = np.abs(p).max(axis=(1, 2))
    if (far > MAX_COORDINATE_M).any():
        i = int(np.argmax(far > MAX_COORDINATE_M))
        raise TrackerFileError(f"{name}: a tracker at {_place(i, first_line)} is {far[i]:g} m from the origin; "
                               f"keep positions in metres within ±{MAX_COORDINATE_M:g} m")
    norms = np.linalg.norm(q, axis=-1)
    short = norms < MIN_QUATERNION_NORM
    if short.any():
        i, k = (int(v) for v in np.argwhere(short)[0])
        raise TrackerFileError(f"{name}: the {TRACKER_WORDS[k]}'s quaternion at {_place(i, first_line)} has zero "
                               "length; give a unit quaternion (w x y z), 1 0 0 0 for no rotation")
    for a, b in ((0, 1), (0, 2), (1, 2)):
        d = np.linalg.norm(p[:, a] - p[:, b], axis=-1)
        if (d > MAX_TRACKER_SPREAD_M).any():
            i = int(np.argmax(d > MAX_TRACKER_SPREAD_M))
            raise TrackerFileError(
                f"{name}: the {TRACKER_WORDS[a]} and {TRACKER_WORDS[b]} trackers are {d[i]:.2f} m apart at "
                f"{_place(i, first_line)}, more than one body's {MAX_TRACKER_SPREAD_M:g} m; give positions in "
                "metres, all three trackers on one person")


def check_take(take: TrackerTake, *, name: str = "the tracker take") -> TrackerTake:
    """``take`` once :func:`check_arrays` passes it (else one-line
    :class:`TrackerFileError`). ``take.rotations`` were normalised on
    construction, so a zero-length quaternion is still zero here."""
    check_arrays(take.times, take.positions, take.rotations, name=name)
    return take


# --- the CSV file ---------------------------------------------------------------------


def _read_text(path: Path) -> str:
    """The file's text, its size checked against :data:`MAX_FILE_BYTES`
    before and while it is read."""
    limit = f"{MAX_FILE_BYTES // 2**20} MB"
    if not path.is_file():
        raise TrackerFileError(f"{path}: no such file; give a tracker CSV file (docs/tracking.md)")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise TrackerFileError(f"{path}: {path.stat().st_size / 2**20:.0f} MB, more than RigMind's {limit} for a "
                               "tracker file; split the take into shorter ones")
    with open(path, "rb") as fh:
        raw = fh.read(MAX_FILE_BYTES + 1)
    if len(raw) > MAX_FILE_BYTES:  # a device, or a file that grew while read
        raise TrackerFileError(f"{path}: more than RigMind's {limit} for a tracker file; split the take")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise TrackerFileError(f"{path}: not text (byte {e.start} is not UTF-8); give a tracker CSV file "
                               "(docs/tracking.md)") from None


def _kept_lines(text: str) -> list:
    """``(line number, line)`` of the non-blank, non-comment lines."""
    return [(k, line) for k, line in enumerate(text.splitlines(), start=1)
            if line.strip() and not line.lstrip().startswith("#")]


def _cells(kept) -> list:
    """``(line number, cells)`` of ``kept`` lines (one ``csv.reader`` over
    them all: a quoted cell keeps its commas)."""
    return [(k, [c.strip() for c in row]) for (k, _), row in zip(kept, csv.reader(line for _, line in kept))]


def _fast_table(kept, cols):
    """The data rows' ``cols`` as ``[T, len(cols)]`` floats in one C parse
    (NumPy's ``loadtxt``), or None when it cannot: a short row, a cell that
    is not a number, quotes; :func:`_number_table` then finds and names it."""
    try:
        vals = np.loadtxt(io.StringIO("\n".join(line for _, line in kept)), delimiter=",", usecols=cols,
                          dtype=np.float64, ndmin=2, comments=None)
    except ValueError:
        return None
    return vals if vals.shape == (len(kept), len(cols)) else None


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def _number_table(rows, width: int, cols, names, path) -> tuple:
    """``(lines [T], values [T, len(cols)])`` from the data rows; a short
    row or a cell that is not a number is one line naming it."""
    if len(rows) > MAX_SAMPLES:
        raise TrackerFileError(f"{path}: {len(rows)} rows, more than RigMind's {MAX_SAMPLES} samples for one take; "
                               "split it into shorter takes")
    short = next(((line, cells) for line, cells in rows if len(cells) < width), None)
    if short is not None:
        raise TrackerFileError(f"{path}: line {short[0]} has {len(short[1])} values, the header {width}; "
                               "give every row all the header's columns")
    lines = np.array([line for line, _ in rows], dtype=np.int64)
    try:
        # One NumPy conversion for the whole table (~10x a float() per cell).
        vals = np.array([[cells[c] for c in cols] for _, cells in rows], dtype=np.float64).reshape(len(rows), len(cols))
    except ValueError:
        line, cells, col, name = next((line, cells, c, n) for line, cells in rows for c, n in zip(cols, names)
                                      if not _is_number(cells[c]))
        raise TrackerFileError(f"{path}: line {line}, column {name}: {cells[col][:20]!r} is not a number; "
                               "give seconds, metres and quaternions as numbers") from None
    return lines, vals


def read_tracker_csv(path, *, up: str = "Z") -> TrackerTake:
    """The take in a tracker CSV file (see the module docstring), checked
    (:func:`check_arrays`; messages name the file's lines). ``up``: "Z"
    (Blender, the default) or "Y" (converted to Blender's Z up)."""
    from .. import axes

    p = Path(path)
    up = str(up).upper()
    if up not in ("Y", "Z"):
        raise TrackerFileError(f"up axis {up!r}: give Y or Z")
    kept = _kept_lines(_read_text(p))
    if not kept:
        raise TrackerFileError(f"{p}: empty; give a header row ({','.join(CSV_COLUMNS[:4])},…) and one row per sample")
    _, header = _cells(kept[:1])[0]
    index = {name.lower(): k for k, name in enumerate(header)}
    missing = [c for c in CSV_COLUMNS if c not in index]
    if missing:
        shown = ", ".join(missing[:6]) + (f" and {len(missing) - 6} more" if len(missing) > 6 else "")
        raise TrackerFileError(f"{p}: missing column{'s' if len(missing) > 1 else ''} {shown}; the header must name "
                               f"time and {{head,lhand,rhand}}_{{x,y,z,qw,qx,qy,qz}} (docs/tracking.md)")
    cols = [index[c] for c in CSV_COLUMNS]
    data = kept[1:]
    if len(data) > MAX_SAMPLES:
        raise TrackerFileError(f"{p}: {len(data)} rows, more than RigMind's {MAX_SAMPLES} samples for one take; "
                               "split it into shorter takes")
    vals = _fast_table(data, cols) if len(data) and len(header) == len(CSV_COLUMNS) else None
    if vals is not None:
        lines = np.array([k for k, _ in data], dtype=np.int64)
    else:
        lines, vals = _number_table(_cells(data), len(header), cols, CSV_COLUMNS, p)
    if len(lines) == 0:
        raise TrackerFileError(f"{p}: a header but no samples; give one row per moment the trackers were read")
    per = vals[:, 1:].reshape(-1, 3, 7)
    times, pos, rot = vals[:, 0], per[..., :3], per[..., 3:]
    # Line numbers only run evenly without comments between the rows; name the first bad row by its line.
    first_line = int(lines[0]) if np.all(np.diff(lines) == 1) else None
    check_arrays(times, pos, rot, name=str(p), first_line=first_line)
    if up == "Y":
        pos, rot = axes.positions_yup_to_blender(pos), axes.quats_yup_to_blender(rot)
    return TrackerTake(times, pos, rot)


def tracker_csv_text(take: TrackerTake) -> str:
    """The take as tracker CSV text (Z up; 6 decimals: micrometres, and
    quaternions to 1e-6)."""
    table = np.concatenate([take.times[:, None],
                            np.concatenate([take.positions, take.rotations], axis=-1).reshape(take.num_samples, -1)],
                           axis=1)
    buf = io.StringIO()
    buf.write(",".join(CSV_COLUMNS) + "\n")
    np.savetxt(buf, table, fmt="%.6f", delimiter=",")
    return buf.getvalue()


def write_tracker_csv(path, take: TrackerTake) -> Path:
    """Write ``take`` as a tracker CSV file at ``path`` (all at once or not
    at all: ``atomic_write``). Returns the path."""
    from ..atomic_write import write_atomically

    text = tracker_csv_text(take)
    return Path(write_atomically(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8")))


__all__ = ["TRACKERS", "CSV_COLUMNS", "TrackerTake", "TrackerFileError", "check_arrays", "check_take",
           "read_tracker_csv", "write_tracker_csv", "tracker_csv_text", "MAX_TRACKER_SPREAD_M"]
