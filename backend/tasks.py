"""One task runner for every long operation: a worker thread, its progress
and a cancel flag. Pure Python (no bpy), shared by the Blender operators
(modal, with a progress bar and Esc) and the CLI (run to the end).

A *work* function is ``work(progress, cancel) -> result``: it calls
``progress(fraction)`` (0..1) now and then and asks ``cancel()`` between
chunks, raising :class:`~.errors.Cancelled` when it turns True. It must not
touch bpy: Blender's data is only safe on the main thread.

A *job* is a generator that yields progress fractions and returns its result
(``StopIteration.value``): typically checks on the main thread, then
``yield from run_in_thread(work, name)``, then writing to the scene on the
main thread. :func:`finish` runs a job to the end synchronously (scripts, the
CLI, an operator's ``execute``); a modal operator advances it on timer events
and closes it on Esc, which cancels the worker before anything is written.
"""

from __future__ import annotations

import threading
import time

from .errors import Cancelled

#: Seconds a closed job waits for its worker to see the cancel flag. Work that
#: cannot stop mid-way (one long library call) is left to finish in the
#: background (a daemon thread); its result is dropped.
JOIN_SECONDS = 2.0


class Task:
    """``work(progress, cancel)`` running in a daemon thread named ``name``."""

    def __init__(self, work, name: str):
        self.name = name
        self.progress = 0.0
        self._work = work
        self._stop = threading.Event()
        self._box = {}
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def _set_progress(self, fraction: float) -> None:
        self.progress = float(min(max(fraction, 0.0), 1.0))

    def _run(self) -> None:
        try:
            self._box["result"] = self._work(self._set_progress, self._stop.is_set)
        except BaseException as e:  # handed to the caller's thread by result()
            self._box["error"] = e

    def start(self) -> "Task":
        self._thread.start()
        return self

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def cancel(self, wait: float = JOIN_SECONDS) -> None:
        """Ask the work to stop and wait up to ``wait`` seconds for it."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(wait)

    def result(self):
        """The work's result, or its exception raised here (``Cancelled`` if it was cancelled)."""
        self._thread.join()
        if "error" in self._box:
            raise self._box["error"]
        if self._stop.is_set():
            raise Cancelled("Cancelled")
        return self._box["result"]


def run_in_thread(work, name: str = "rigmind-task"):
    """Generator: run ``work(progress, cancel)`` in a worker thread named
    ``name``, yield its latest progress fraction while it runs, return its
    result (or raise its exception). Closing the generator early cancels the
    work (``cancel()`` turns True), so nothing runs on after the caller gave up."""
    task = Task(work, name).start()
    try:
        while task.running:
            yield task.progress
    finally:
        if task.running:
            task.cancel()
    return task.result()


def finish(job, poll_seconds: float = 0.02, on_progress=None):
    """Run a job (a progress-yielding generator) to the end on this thread
    and return its result; ``on_progress(fraction)`` sees each fraction it
    yields. A KeyboardInterrupt closes it (cancelling its worker) and
    propagates."""
    try:
        while True:
            try:
                fraction = next(job)
            except StopIteration as done:
                return done.value
            if on_progress is not None and fraction is not None:
                on_progress(float(fraction))
            time.sleep(poll_seconds)
    finally:
        job.close()


def with_callbacks(work, progress=None, cancel=None):
    """``work(progress, cancel)`` that also reports to a caller's own
    ``progress(fraction)`` (clipped to 0..1) and stops when the caller's
    ``cancel()`` says so: a synchronous API's callbacks on top of the task
    runner's. ``work`` itself when both are None."""
    if progress is None and cancel is None:
        return work

    def wrapped(report, stop):
        def both(f):
            report(f)
            if progress is not None:
                progress(float(min(max(f, 0.0), 1.0)))

        return work(both, lambda: stop() or bool(cancel is not None and cancel()))

    return wrapped
