"""What a path walk does besides walking: jumps at points and crouched
stretches along the path, and how it starts (standing, or lying and getting
up), as one frozen plan parsed from the user's text and checked once.

Text form (``rigmind walk --action``, batch manifests' ``actions``, the
panel's Actions field, ``;`` between actions)::

    jump@ARC[,height=H][,length=L]     a jump whose take-off is ARC metres along the path
    crouch@A-B                          crouched from A to B metres along the path

Units: metres along the path (arc length from its first point, world
metres), ``height`` the hips' apex above their standing height (m),
``length`` the hips' travel from take-off to touch-down (m). Limits:
``options.RANGES["jump_height"]`` / ``["jump_length"]``.

Pure Python (no bpy).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ... import options
from ...errors import UserError
from ...limits import check

#: Room (m along the path) a jump needs before its take-off point (the walk
#: settles into it) and after its landing (it walks off) within the path,
#: and between one action and the next.
JUMP_CLEARANCE_M = 0.5
#: The shortest crouched stretch (m): anything shorter is a dip, not a crouch.
MIN_CROUCH_M = 0.5
#: At most this many actions in one take (a bound on the work, like the path's point limit).
MAX_ACTIONS = 200

FORM = "jump@ARC[,height=H][,length=L] or crouch@A-B (metres along the path), e.g. --action jump@3 --action crouch@7-10"


@dataclass(frozen=True)
class Jump:
    """A jump taking off ``arc`` m along the path. ``height`` (m, the hips'
    apex above standing) and ``length`` (m, the hips' travel in the air):
    None = the clip's own."""

    arc: float
    height: float | None = None
    length: float | None = None

    def text(self) -> str:
        extra = "".join(f",{k}={v:g}" for k, v in (("height", self.height), ("length", self.length)) if v is not None)
        return f"jump@{self.arc:g}{extra}"


@dataclass(frozen=True)
class Crouch:
    """Crouched from ``start`` to ``end`` m along the path (``start < end``)."""

    start: float
    end: float

    def text(self) -> str:
        return f"crouch@{self.start:g}-{self.end:g}"


@dataclass(frozen=True)
class ActionPlan:
    """A take's actions: ``jumps`` and ``crouches`` sorted along the path,
    and ``start`` (``options.START_POSES``)."""

    jumps: tuple = ()
    crouches: tuple = ()
    start: str = "standing"

    @property
    def empty(self) -> bool:
        return not self.jumps and not self.crouches and self.start == "standing"

    def text(self) -> str:
        """The actions in the text form (``;`` between them), sorted along the path."""
        items = sorted([*self.jumps, *self.crouches], key=_begin)
        return "; ".join(a.text() for a in items)


def _begin(action) -> float:
    return action.arc if isinstance(action, Jump) else action.start


def _number(text: str, what: str, whole: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise UserError(f"--action {whole!r}: {what} {text.strip()!r} is not a number; use {FORM}") from None
    if not math.isfinite(v):
        raise UserError(f"--action {whole!r}: {what} must be a finite number of metres")
    return v


def parse_action(text: str):
    """One action's text -> :class:`Jump` or :class:`Crouch` (UserError naming
    the problem and the form). Names are read in any case."""
    whole = text.strip()
    name, at, rest = whole.partition("@")
    name = name.strip().lower()
    if name not in options.ACTIONS:
        raise UserError(f"--action {whole!r}: unknown action {name!r}; use one of {', '.join(options.ACTIONS)} "
                        f"({FORM})")
    if not at or not rest.strip():
        raise UserError(f"--action {whole!r}: say where along the path; use {FORM}")
    if name == "crouch":
        a, dash, b = rest.strip().partition("-")
        if not dash or "," in rest:
            raise UserError(f"--action {whole!r}: a crouch takes a range START-END in metres, e.g. crouch@7-10")
        start, end = _number(a, "the start", whole), _number(b, "the end", whole)
        if not start < end:
            raise UserError(f"--action {whole!r}: the crouch's start must be before its end")
        if end - start < MIN_CROUCH_M:
            raise UserError(f"--action {whole!r}: a crouch needs at least {MIN_CROUCH_M:g} m of path; widen the range")
        return Crouch(start, end)
    fields = rest.split(",")
    arc = _number(fields[0], "the place", whole)
    params = {}
    for f in fields[1:]:
        key, eq, value = f.partition("=")
        key = key.strip().lower()
        if not eq or key not in ("height", "length"):
            raise UserError(f"--action {whole!r}: a jump takes height=METRES and length=METRES; got {f.strip()!r}")
        if key in params:
            raise UserError(f"--action {whole!r}: {key} given twice")
        params[key] = check(f"jump_{key}", _number(value, key, whole), option=f"--action {whole!r}: {key}")
    return Jump(arc, **params)


def parse_actions(texts, start: str = "standing") -> ActionPlan:
    """``texts``: action texts (a list, each may hold several separated by
    ``;``) -> the plan, not yet checked against a path (:func:`check_plan`).
    ``start``: one of ``options.START_POSES``."""
    if isinstance(texts, str):
        texts = [texts]
    items = [parse_action(part) for t in (texts or ()) for part in str(t).split(";") if part.strip()]
    if len(items) > MAX_ACTIONS:
        raise UserError(f"{len(items)} actions; a take holds at most {MAX_ACTIONS}")
    start = (start or "standing").strip().lower()
    if start not in options.START_POSES:
        raise UserError(f"--start {start!r}: use one of {', '.join(options.START_POSES)}")
    jumps = tuple(sorted((a for a in items if isinstance(a, Jump)), key=_begin))
    crouches = tuple(sorted((a for a in items if isinstance(a, Crouch)), key=_begin))
    return ActionPlan(jumps, crouches, start)


def check_plan(plan: ActionPlan, path_length: float, default_jump_length: float, gait: str = "walk") -> ActionPlan:
    """Refuse (UserError, one line) a plan that does not fit a path of
    ``path_length`` m: an action before the path's start or past its end
    (a jump needs :data:`JUMP_CLEARANCE_M` before its take-off and its
    landing plus that much before the end), overlapping crouch ranges, a
    jump inside a crouch range or two jumps closer than one jump's length.
    ``default_jump_length``: a jump's length (m, the hips' travel in the
    air) where it gives none, on this rig. ``gait`` "crouch" (the whole
    path crouched) takes no crouch ranges. Returns ``plan``."""
    length = float(path_length)
    if gait == "crouch" and plan.crouches:
        raise UserError(f"--action {plan.crouches[0].text()}: --gait crouch already crouches the whole path; "
                        "drop the crouch ranges or walk with --gait walk")
    for c in plan.crouches:
        if c.start < 0 or c.end > length:
            raise UserError(f"--action {c.text()}: the path is {length:.2f} m long; give a range inside 0-{length:.2f}")
    for a, b in zip(plan.crouches, plan.crouches[1:]):
        if b.start < a.end:
            raise UserError(f"--action {a.text()} and {b.text()} overlap; join them into one range or separate them")
    ends = []
    for j in plan.jumps:
        land = j.arc + (default_jump_length if j.length is None else j.length)
        if j.arc < JUMP_CLEARANCE_M:
            raise UserError(f"--action {j.text()}: a jump needs {JUMP_CLEARANCE_M:g} m of path before it to take off; "
                            f"put it at {JUMP_CLEARANCE_M:g} m or later")
        if land + JUMP_CLEARANCE_M > length:
            raise UserError(f"--action {j.text()}: it lands at {land:.2f} m, past the path's end ({length:.2f} m, "
                            f"with {JUMP_CLEARANCE_M:g} m to land); move it before {length - JUMP_CLEARANCE_M - (land - j.arc):.2f} m")
        for c in plan.crouches:
            if j.arc - JUMP_CLEARANCE_M < c.end and land + JUMP_CLEARANCE_M > c.start:
                raise UserError(f"--action {j.text()} is inside or next to the crouch {c.text()}: a jump starts "
                                f"and lands standing; keep it {JUMP_CLEARANCE_M:g} m clear of the range")
        ends.append((j, land))
    for (a, la), (b, _) in zip(ends, ends[1:]):
        if b.arc < la + JUMP_CLEARANCE_M:
            raise UserError(f"--action {a.text()} and {b.text()}: the second takes off before the first has landed "
                            f"and walked {JUMP_CLEARANCE_M:g} m; move it to {la + JUMP_CLEARANCE_M:.2f} m or later")
    return plan


__all__ = ["JUMP_CLEARANCE_M", "MIN_CROUCH_M", "MAX_ACTIONS", "FORM", "Jump", "Crouch", "ActionPlan",
           "parse_action", "parse_actions", "check_plan"]
