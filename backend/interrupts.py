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

A Ctrl-C that lands while Blender's own Python runs (its start-up scripts
when bpy loads, ``bpy.ops``, the exporters) is not raised there: Blender
would print a traceback and could be left half initialised (a segfault at
exit was measured). It is retried every 50 ms (SIGALRM) until control is
back in RigMind's code.
"""

from __future__ import annotations

import contextlib
import signal
import threading

_state = {"installed": False, "count": 0, "defer": 0, "quiet": False}
#: How often a Ctrl-C that landed inside Blender's own Python is retried.
RETRY_S = 0.05


def _in_blender_scripts(frame) -> bool:
    """Is Blender's bundled Python (its start-up scripts, ``bpy.ops``, the
    exporters in ``addons_core``) or an import on the stack? An exception
    raised in Blender's scripts is caught by Blender, printed as a traceback,
    and can leave Blender half initialised (a crash at exit was seen). One
    raised inside an import is caught by a C extension's initialisation
    (numpy prints "ImportError: numpy.core.multiarray failed to import" under
    the KeyboardInterrupt's traceback, measured 4 times in 24 trials at
    0.3-1.0 s into a gesture run) and the import may be left half done."""
    while frame is not None:
        name = frame.f_code.co_filename.replace("\\", "/")
        if "/bpy/" in name and "/scripts/" in name:
            return True
        if name.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


def _raise_when_safe(frame) -> None:
    if _state["quiet"] or (_state["defer"] and _state["count"] == 1):
        return
    if _in_blender_scripts(frame) and hasattr(signal, "setitimer"):
        # Not here: try again shortly, once control is back in RigMind's code.
        signal.setitimer(signal.ITIMER_REAL, RETRY_S)
        return
    raise KeyboardInterrupt


def _on_sigint(signum, frame):
    _state["count"] += 1
    _raise_when_safe(frame)


def _on_retry(signum, frame):
    _raise_when_safe(frame)


def is_blender_interrupt(exc: BaseException) -> bool:
    """A Ctrl-C that a Blender Python operator (the BVH, FBX and glTF
    exporters) caught and re-raised as ``RuntimeError("...KeyboardInterrupt...")``:
    still the user cancelling."""
    return isinstance(exc, RuntimeError) and "KeyboardInterrupt" in str(exc)


def record_interrupts() -> None:
    """Count SIGINTs from now on (main thread only; a no-op elsewhere)."""
    _state["count"], _state["quiet"] = 0, False
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _on_sigint)
        if hasattr(signal, "setitimer"):  # not on Windows: there a Ctrl-C inside Blender raises at once
            signal.signal(signal.SIGALRM, _on_retry)
        _state["installed"] = True


def quiet_interrupts() -> None:
    """Ignore Ctrl-C from now on: the command has finished (its file is
    written or not) and the process is exiting, which with Blender takes a
    second. Python's default action during shutdown would kill the process
    by the signal instead of letting it exit with its code."""
    _state["quiet"] = True
    if _state["installed"] and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if hasattr(signal, "setitimer"):
            # A retry may still be armed; at interpreter exit Python puts
            # SIGALRM back to its default action, and a pending alarm would
            # then end the process by the signal instead of its exit code.
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, signal.SIG_IGN)


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
