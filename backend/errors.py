"""RigMind's errors, by kind.

- ``RigMindError``: the base of every error RigMind raises on purpose.
- ``UserError``: bad input the user can fix (a missing file, a rig that is not
  a humanoid, silent audio, an option out of range). Its message is one line
  that names the problem and the fix. The CLI prints it and exits 2; an
  operator shows it as an ERROR report.
- ``Cancelled``: the user stopped the run (Esc in Blender, Ctrl-C in the CLI);
  nothing was written.

Anything else that escapes is a bug and is reported as one (a traceback with
``--debug``, otherwise a one-line "internal error" naming a log file).

``UserError`` also derives from ``ValueError`` so that code written before the
hierarchy (``except ValueError`` around a parser) keeps working while handlers
move to ``except UserError``; handlers must never catch bare ``ValueError``.
"""

from __future__ import annotations


class RigMindError(Exception):
    """Base of the errors RigMind raises on purpose."""


class UserError(RigMindError, ValueError):
    """Bad input the user can fix; the message says what and how (one line)."""


class Cancelled(RigMindError):
    """The user cancelled the run; nothing was written.

    Not a UserError: a cancel is not a failure."""
