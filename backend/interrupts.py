"""Ctrl-C that is never lost and never tears a file.

Python turns SIGINT into KeyboardInterrupt, but inside Blender the exception
can vanish: a driver evaluated by ``scene.frame_set`` catches it, and a
Python operator (the BVH, FBX and glTF exporters) catches it, prints a
traceback and turns it into a RuntimeError. The command then goes on and
writes its file as if nothing had happened.

:func:`record_interrupts` installs a SIGINT handler that also counts the
signal, so a swallowed Ctrl-C is still seen by :func:`interrupted`. While an
output file is being written (:func:`deferred`), the first Ctrl-C is only
counted: the writer finishes its temporary file without a Blender traceback,
and the caller then discards it and raises KeyboardInterrupt. A second
Ctrl-C interrupts at once.
"""

from __future__ import annotations

import contextlib
import signal
import threading

_state = {"installed": False, "count": 0, "defer": 0, "quiet": False}


def _on_sigint(signum, frame):
    _state["count"] += 1
    if _state["quiet"] or (_state["defer"] and _state["count"] == 1):
        return
    raise KeyboardInterrupt


def record_interrupts() -> None:
    """Count SIGINTs from now on (main thread only; a no-op elsewhere)."""
    _state["count"], _state["quiet"] = 0, False
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _on_sigint)
        _state["installed"] = True


def quiet_interrupts() -> None:
    """Ignore Ctrl-C from now on: the command has finished (its file is
    written or not) and the process is exiting, which with Blender takes a
    second. Python's default action during shutdown would kill the process
    by the signal instead of letting it exit with its code."""
    _state["quiet"] = True
    if _state["installed"] and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def interrupted() -> bool:
    """True once a Ctrl-C arrived after :func:`record_interrupts`."""
    return _state["installed"] and _state["count"] > 0


@contextlib.contextmanager
def deferred():
    """Hold off the first Ctrl-C (count it only) while the body runs."""
    _state["defer"] += 1
    try:
        yield
    finally:
        _state["defer"] -= 1
