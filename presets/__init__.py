"""Data presets shipped with RigMind (JSON files next to this module).

No bpy here: the backend, the CLI and the add-on all read these.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from ..backend.paths import PRESETS_DIR


def preset_path(name: str) -> Path:
    """Path of the preset ``name`` in this folder; ``.json`` is appended when
    ``name`` has no suffix. Raises ``FileNotFoundError`` if it is missing."""
    p = PRESETS_DIR / name
    if not p.suffix:
        p = p.with_suffix(".json")
    if not p.is_file():
        raise FileNotFoundError(f"no preset {name!r} in {PRESETS_DIR}")
    return p


def load_preset(name: str):
    """The parsed JSON content of the preset ``name``."""
    with open(preset_path(name), encoding="utf-8") as f:
        return json.load(f)


@lru_cache(maxsize=1)
def _arkit52() -> tuple:
    names = tuple(str(n) for n in load_preset("arkit52"))
    if len(names) != 52 or len(set(names)) != 52:
        raise ValueError("presets/arkit52.json must list 52 distinct names")
    return names


def arkit52_names() -> list:
    """The 52 ARKit blendshape names in Apple's canonical order
    (``ARFaceAnchor.BlendShapeLocation``). "Left" is the character's own left,
    which is +X in Blender's frame. Returns a fresh list each call."""
    return list(_arkit52())
