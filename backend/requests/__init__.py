"""One request object per job: what the user asked for, as one frozen value.

Each job (walk, gesture, face, retarget, export) has a frozen dataclass in
this package, built in one place per front end -- the operator from its
properties, the CLI from its arguments, batch from its manifest -- checked
once against the one range table (``backend.options.RANGES``) with
:func:`checked`, and passed down whole to the pipeline. Adding an option
touches the request, its builder in each front end and the code that uses
it, nothing between.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import ClassVar

from ..limits import check


@dataclass(frozen=True)
class JobRequest:
    """Base of every request. ``RANGED`` maps a field to its row of the range
    table (``{"speed": "speed", "start_frame": "start_frame"}``); a field left
    ``None`` means "the default" and is not checked."""

    RANGED: ClassVar[dict] = {}

    def option_name(self, field: str) -> str:
        """How the user names ``field`` in messages: the CLI's spelling."""
        return "--" + field.replace("_", "-")


def request_fields(cls, props: dict) -> dict:
    """The entries of ``props`` (an operator's ``as_keywords()``) that are
    fields of the request class ``cls``; the operator's other properties
    (``armature``, ...) are left out."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in props.items() if k in names}


def checked(request: JobRequest) -> JobRequest:
    """``request`` once every field in its ``RANGED`` lies in the table;
    else :class:`~rigmind.backend.limits.OutOfRange` (a UserError, one line
    naming the option and its range)."""
    for field, row in type(request).RANGED.items():
        value = getattr(request, field)
        if value is not None:
            check(row, value, option=request.option_name(field))
    return request


__all__ = ["JobRequest", "checked", "request_fields"]
