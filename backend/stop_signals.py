"""SIGINT and SIGTERM as one orderly stop, for a driver that must clean up.

A driver with workers and a report (``rigmind batch``) cannot simply die on
a signal: its workers would outlive it (SIGTERM's default action kills only
the driver) and a second Ctrl-C while it writes its report would lose the
report. :class:`StopSignals` turns the first SIGINT or SIGTERM into one
KeyboardInterrupt, the same stop for both, and from then on only notes
further signals, so the clean-up (stopping the workers, writing the report)
runs to the end whatever the user presses. Inside :meth:`StopSignals.held`
(a file being written) even the first signal waits until the file is done.

Main thread only: elsewhere Python cannot install handlers, and the
caller's own handling stays as it was.
"""

from __future__ import annotations

import contextlib
import signal
import threading

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopSignals:
    """``install()`` … ``disarm()`` … ``restore()``: between install and
    disarm the first signal raises KeyboardInterrupt (once); after disarm,
    and for every later signal, a signal is only recorded in ``received``."""

    def __init__(self):
        self.received: list = []
        self._armed = False
        self._raised = False
        self._hold = 0
        self._saved = {}

    def install(self) -> "StopSignals":
        if threading.current_thread() is not threading.main_thread():
            return self
        for s in SIGNALS:
            self._saved[s] = signal.getsignal(s)
            signal.signal(s, self._on_signal)
        self._armed = True
        return self

    def disarm(self) -> None:
        """From now on a signal is noted, never raised: the caller is
        cleaning up and must finish."""
        self._armed = False

    def restore(self) -> None:
        """Put the handlers that were there before :meth:`install` back."""
        for s, handler in self._saved.items():
            signal.signal(s, handler if handler is not None else signal.SIG_DFL)
        self._saved.clear()

    @contextlib.contextmanager
    def held(self):
        """Hold off the stop while the body runs (a file being written);
        raise it at the end if it came meanwhile and nothing raised it yet."""
        self._hold += 1
        try:
            yield
        finally:
            self._hold -= 1
        if self._pending():
            self._raised = True
            raise KeyboardInterrupt

    def _pending(self) -> bool:
        return self._armed and not self._raised and not self._hold and bool(self.received)

    def _on_signal(self, signum, frame) -> None:
        self.received.append(signum)
        if self._pending():
            self._raised = True
            raise KeyboardInterrupt
