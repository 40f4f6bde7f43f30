"""Keep Blender's own chatter out of the terminal, into a log file.

Blender's renderer, exporters and file savers print from C straight to file
descriptors 1 and 2 (a render prints a "Saved:" and a "Video append frame"
line per frame: about 1,200 lines in the demo), so redirecting
``sys.stdout`` does not reach them. :func:`to_log` points the descriptors
themselves at a log file while its body runs and gives the caller a stream
on the real terminal for the lines meant for the user.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path


@contextlib.contextmanager
def redirected(target, fds=(1, 2)):
    """Point the file descriptors ``fds`` (1 stdout, 2 stderr) at the file
    ``target`` (truncated; ``os.devnull`` to drop the output) while the body
    runs, C-level writes included; Python's streams are flushed on the way
    in and out, and the descriptors put back on exit, an exception included."""
    for s in (sys.stdout, sys.stderr):
        s.flush()
    saved = {fd: os.dup(fd) for fd in fds}
    out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for fd in fds:
            os.dup2(out, fd)
        yield
    finally:
        for s in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                s.flush()
        for fd, keep in saved.items():
            os.dup2(keep, fd)
            os.close(keep)
        os.close(out)


@contextlib.contextmanager
def to_log(log_path):
    """Redirect descriptors 1 and 2 (C and Python output alike) to
    ``log_path`` (a fresh file: one run's messages) while the body runs; yield a line-buffered
    text stream on the original stdout. Everything is put back on exit,
    an exception included, so its message reaches the terminal."""
    log_path = Path(log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    terminal = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8", errors="replace")
    try:
        with redirected(log_path, (1, 2)):
            yield terminal
    finally:
        terminal.close()
