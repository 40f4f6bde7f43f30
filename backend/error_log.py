"""Where internal errors (bugs) go: a log file with the full traceback.

The CLI and the operators show a bug as one line -- "internal error: ...; details
in LOG; please report it at ISSUES_URL" -- and keep the traceback in a log file,
so a user can attach it to a report. ``RIGMIND_LOG_DIR`` overrides the folder
(default: ``~/.cache/rigmind/logs``, or the system temp folder if that cannot be
made).
"""

from __future__ import annotations

import os
import tempfile
import time
import traceback
from pathlib import Path

ISSUES_URL = "https://github.com/rigmind/rigmind/issues"


def log_dir() -> Path:
    env = os.environ.get("RIGMIND_LOG_DIR")
    if env:
        return Path(env)
    return Path.home() / ".cache" / "rigmind" / "logs"


def log_internal_error(exc: BaseException, where: str = "rigmind") -> Path:
    """Write ``exc``'s traceback to a new log file; return its path."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for folder in (log_dir(), Path(tempfile.gettempdir()) / "rigmind-logs"):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"{where}-{stamp}-{os.getpid()}.log"
            path.write_text(f"{where}: internal error\n{text}", encoding="utf-8")
            return path
        except OSError:
            continue
    return Path(os.devnull)


def internal_error_line(exc: BaseException, where: str = "rigmind") -> str:
    """Log ``exc`` and return the one line shown to the user."""
    path = log_internal_error(exc, where)
    kind = type(exc).__name__
    return f"internal error ({kind}: {exc}); details in {path}; please report it at {ISSUES_URL}"
