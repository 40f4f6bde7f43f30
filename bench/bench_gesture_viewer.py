"""Viewer metrics of Generate Gesture on baked rigs (issue #13): the same as
``rigmind eval gesture --viewer`` (see evaluation/gesture_viewer.py).

    .venv/bin/python bench/bench_gesture_viewer.py [--seconds 30] [--json out.json]
"""

import os
import sys
import tempfile

os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="rigmind-bench-"))

import bpy  # noqa: E402,F401

from rigmind.evaluation.gesture_viewer import main_viewer_eval  # noqa: E402

if __name__ == "__main__":
    sys.exit(main_viewer_eval())
