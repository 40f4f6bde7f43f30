"""An emotion timeline: per emotion, a weight 0..1 over the take's seconds.

Built from the CLI's ``--emotion NAME[:WEIGHT][@START-END]`` (repeatable;
:func:`parse_emotions`), from a batch manifest's list of the same texts, or
from Blender properties keyframed over the take (:meth:`EmotionTimeline.sampled`).
The face and the body read it the same way, as weights ``[frames, 6]`` at
their own frame rate (:meth:`EmotionTimeline.weights`), so both follow the
same emotion at the same moment. Neutral is every weight 0.

Rules (each broken one is a one-line :class:`EmotionError`): a known name
(``backend.options.EMOTIONS``, or "neutral"); a weight in 0..1; a range
with 0 <= START < END (seconds); the same emotion given twice over the same
time; two timed ranges that overlap. An untimed entry covers the whole take
and blends with the others (``happy:0.5 --emotion surprised:0.5``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from ..errors import UserError
from ..limits import check
from ..options import EMOTIONS

#: Seconds over which a timed emotion fades in at its start and out at its end
#: (centred on the boundary, so adjoining ranges cross-fade instead of jumping).
RAMP_S = 0.3

_ENTRY = re.compile(r"^\s*(?P<name>[A-Za-z_-]+)\s*(?::\s*(?P<weight>[^@]+?))?\s*(?:@\s*(?P<range>.+?))?\s*$")


class EmotionError(UserError):
    """An emotion entry that cannot be used; the message is one line."""


@dataclass(frozen=True)
class EmotionEntry:
    """One emotion at ``weight`` (0..1) from ``start`` to ``end`` seconds;
    both None: the whole take."""

    name: str
    weight: float = 1.0
    start: float | None = None
    end: float | None = None

    @property
    def timed(self) -> bool:
        return self.start is not None

    def text(self) -> str:
        """The entry as the CLI spells it."""
        rng = f"@{self.start:g}-{self.end:g}" if self.timed else ""
        return f"{self.name}:{self.weight:g}{rng}"


@dataclass(frozen=True)
class EmotionTimeline:
    """Entries (:class:`EmotionEntry`), or a sampled curve: ``times`` [K]
    seconds (increasing) and ``values`` [K, 6] weights in the order of
    ``backend.options.EMOTIONS``, interpolated linearly and held past
    either end (keyframed Blender properties)."""

    entries: tuple = ()
    times: tuple | None = None
    values: tuple | None = None

    @classmethod
    def sampled(cls, times, values) -> "EmotionTimeline":
        """A timeline from weights sampled over the take: ``times [K]`` s,
        ``values [K, 6]`` (each checked 0..1)."""
        t = np.asarray(times, np.float64).reshape(-1)
        v = np.asarray(values, np.float64).reshape(len(t), len(EMOTIONS))
        if len(t) == 0 or not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0):
            raise EmotionError("emotion keys need increasing, finite times")
        bad = ~np.isfinite(v) | (v < 0) | (v > 1)
        if bad.any():
            k, j = np.argwhere(bad)[0]
            raise EmotionError(f"emotion {EMOTIONS[j]} must be between 0 and 1, got {v[k, j]:g} at {t[k]:g} s")
        return cls(times=tuple(t.tolist()), values=tuple(map(tuple, v.tolist())))

    @property
    def is_neutral(self) -> bool:
        if self.times is not None:
            return not np.any(np.asarray(self.values) > 0)
        return all(e.weight == 0 or e.name == "neutral" for e in self.entries)

    @property
    def last_time(self) -> float:
        """The latest second the timeline names (0 for an untimed one)."""
        if self.times is not None:
            return float(self.times[-1])
        return max([e.end for e in self.entries if e.timed] or [0.0])

    def weights(self, n_frames: int, fps: float) -> np.ndarray:
        """Weights ``[n_frames, 6]`` (order of ``EMOTIONS``) at frame times
        ``i / fps`` seconds, each 0..1."""
        t = np.arange(int(n_frames)) / float(fps)
        out = np.zeros((len(t), len(EMOTIONS)), np.float32)
        if self.times is not None:
            times, values = np.asarray(self.times), np.asarray(self.values)
            for j in range(len(EMOTIONS)):
                out[:, j] = np.interp(t, times, values[:, j])
            return out
        for e in self.entries:
            j = EMOTIONS.index(e.name) if e.name in EMOTIONS else None
            if j is None:       # neutral: no weight of its own
                continue
            out[:, j] += e.weight * (_window(t, e.start, e.end) if e.timed else 1.0)
        return np.clip(out, 0.0, 1.0)

    def texts(self) -> list:
        """The entries as CLI texts (a batch report, a take's notes)."""
        return [e.text() for e in self.entries]


NEUTRAL = EmotionTimeline()


def _smoothstep(u):
    u = np.clip(u, 0.0, 1.0)
    return u * u * (3 - 2 * u)


def _window(t: np.ndarray, start: float, end: float) -> np.ndarray:
    """1 inside [start, end] s with :data:`RAMP_S` smooth ramps centred on
    each edge (a range starting at 0 is full from the first frame)."""
    h = RAMP_S / 2
    rise = np.ones_like(t) if start <= 0 else _smoothstep((t - (start - h)) / RAMP_S)
    fall = _smoothstep(((end + h) - t) / RAMP_S)
    return np.minimum(rise, fall)


def _number(text: str, what: str, entry: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise EmotionError(f"--emotion {entry!r}: the {what} {text.strip()!r} is not a number") from None
    if not math.isfinite(value):
        raise EmotionError(f"--emotion {entry!r}: the {what} must be a finite number, got {text.strip()}")
    return value


def parse_entry(text: str) -> EmotionEntry:
    """One ``NAME[:WEIGHT][@START-END]`` text → :class:`EmotionEntry`."""
    if not isinstance(text, str) or len(text) > 200:
        raise EmotionError("--emotion takes NAME[:WEIGHT][@START-END], for example happy:0.8@0-10")
    m = _ENTRY.match(text)
    if not m:
        raise EmotionError(f"--emotion {text!r}: write NAME[:WEIGHT][@START-END], for example happy:0.8@0-10")
    name = m["name"].lower()
    if name not in EMOTIONS + ("neutral",):
        raise EmotionError(f"unknown emotion {m['name']!r}; choose from neutral, {', '.join(EMOTIONS)}")
    weight = 1.0 if m["weight"] is None else _number(m["weight"], "weight", text)
    check("emotion_weight", weight, option=f"--emotion {name}'s weight")
    start = end = None
    if m["range"] is not None:
        parts = re.fullmatch(r"\s*([^-]+?)\s*-\s*(.+?)\s*", m["range"])
        if not parts or m["range"].lstrip().startswith("-"):
            raise EmotionError(f"--emotion {text!r}: the time range must be START-END in seconds, "
                               "0 or more (for example @0-10)")
        start, end = (_number(p, "time", text) for p in parts.groups())
        check("emotion_time", start, option=f"--emotion {name}'s start")
        check("emotion_time", end, option=f"--emotion {name}'s end")
        if end <= start:
            raise EmotionError(f"--emotion {text!r}: the range must end after it starts ({start:g}-{end:g} s)")
    return EmotionEntry(name, weight, start, end)


def parse_emotions(texts) -> EmotionTimeline:
    """The CLI's ``--emotion`` texts (or a manifest's list) → a checked
    :class:`EmotionTimeline` (None or empty: neutral)."""
    if texts is None:
        return NEUTRAL
    if isinstance(texts, str):
        texts = [texts]
    if not isinstance(texts, (list, tuple)) or len(texts) > 1000:
        raise EmotionError("emotion must be a list of NAME[:WEIGHT][@START-END] texts (at most 1000)")
    entries = tuple(parse_entry(t) for t in texts)
    _check_overlaps(entries)
    return EmotionTimeline(entries=entries)


def _check_overlaps(entries) -> None:
    timed = sorted((e for e in entries if e.timed), key=lambda e: e.start)
    for a, b in zip(timed, timed[1:]):
        if b.start < a.end:
            raise EmotionError(f"--emotion {a.text()} and {b.text()} overlap in time; "
                               "give each stretch of the take one emotion")
    seen = {}
    for e in entries:
        if e.name in seen and (not e.timed or not seen[e.name].timed):
            raise EmotionError(f"--emotion {e.name} is given twice over the same time "
                               f"({seen[e.name].text()} and {e.text()})")
        seen.setdefault(e.name, e)


__all__ = ["EmotionEntry", "EmotionError", "EmotionTimeline", "NEUTRAL", "RAMP_S", "parse_emotions", "parse_entry"]
