"""Where internal errors (bugs) go: a log file with the full traceback.

The CLI and the operators show a bug as one line -- "internal error: ...; details
in LOG; please report it with that file (README, "Reporting problems")" -- and
keep the traceback, with the versions a report needs, in a log file, so a user
can attach it. ``RIGMIND_LOG_DIR`` overrides the folder (default:
``~/.cache/rigmind/logs``, or the system temp folder if that cannot be made).
"""

from __future__ import annotations

import os
import platform
import sys
import tempfile
import time
import traceback
from pathlib import Path

#: The README section that says what to attach to a report. The project has
#: no public tracker address to give, so the message names no web address.
REPORT_SECTION = 'README, "Reporting problems"'


def log_dir() -> Path:
    env = os.environ.get("RIGMIND_LOG_DIR")
    if env:
        return Path(env)
    return Path.home() / ".cache" / "rigmind" / "logs"


def _versions() -> str:
    """RigMind, Python, the OS and (when it is loaded) Blender: what a report
    needs to reproduce the error. Never imports bpy itself."""
    # The package root is loaded whenever this module is (it is its parent);
    # read its version without importing upwards from the backend.
    root = sys.modules.get(__package__.rsplit(".", 1)[0])
    parts = [f"rigmind {getattr(root, '__version__', '?')}", f"python {platform.python_version()}", platform.platform()]
    bpy = sys.modules.get("bpy")
    if bpy is not None and hasattr(bpy, "app"):
        parts.append(f"blender {bpy.app.version_string}")
    return "; ".join(parts)


def log_internal_error(exc: BaseException, where: str = "rigmind") -> Path:
    """Write ``exc``'s traceback, the command line and the versions to a new
    log file; return its path."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    stamp = time.strftime("%Y%m%d-%H%M%S")
    body = f"{where}: internal error\nversions: {_versions()}\nargv: {' '.join(sys.argv)}\n{text}"
    for folder in (log_dir(), Path(tempfile.gettempdir()) / "rigmind-logs"):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"{where}-{stamp}-{os.getpid()}.log"
            path.write_text(body, encoding="utf-8")
            return path
        except OSError:
            continue
    return Path(os.devnull)


def internal_error_line(exc: BaseException, where: str = "rigmind") -> str:
    """Log ``exc`` and return the one line shown to the user."""
    path = log_internal_error(exc, where)
    kind = type(exc).__name__
    return f"internal error ({kind}: {exc}); details in {path}; please report it with that file ({REPORT_SECTION})"
