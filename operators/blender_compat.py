"""Where the Blenders RigMind supports (5.0, 5.1, 5.2 LTS) differ in their
Python API, each difference in one function that works on all of them.

tests/tools/test_extension_offline.py runs the shipped zip in Blender 5.0 and 5.2
LTS and fails on any DeprecationWarning raised from RigMind's own code, so a
new difference shows up there first.
"""

from __future__ import annotations


def strip_content_start(strip) -> int:
    """The timeline frame where a sequencer strip's content (a sound) begins.

    5.1 renamed ``Strip.frame_start`` to ``content_start`` (the old name warns
    and goes in 6.0); 5.0 has only ``frame_start``."""
    start = getattr(strip, "content_start", None)
    return int(strip.frame_start if start is None else start)


__all__ = ["strip_content_start"]
