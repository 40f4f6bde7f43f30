"""Where RigMind finds its files: the one module that turns ``__file__`` into
the folders the rest of the code reads and writes.

- the package root (the repository root, which is the package ``rigmind``)
  and its ``presets/`` and ``models/`` (weights, committed or trained here);
- caches under ``<package root>/.cache/<name>`` (features, datasets; never
  committed, rebuilt when missing) and the per-user cache ``~/.cache/rigmind``;
- the data folder: ``$RIGMIND_DATA`` when set, else ``../shared/data`` next to
  the package root (the project's real data sets, read-only).

Functions, not constants, where the answer depends on the environment, so a
``RIGMIND_DATA`` set after import is still honoured; the module-level names in
other modules that keep their old spelling are computed from these at import.
"""

from __future__ import annotations

import os
from pathlib import Path

#: The package root: the repository root, imported as ``rigmind`` (or
#: ``bl_ext.<repo>.rigmind`` inside Blender).
PACKAGE_ROOT = Path(__file__).resolve().parents[1]
#: Shipped presets (bone maps, splits, speeds).
PRESETS_DIR = PACKAGE_ROOT / "presets"
#: Model weights (``*.onnx``, ``*.pt``) and their training logs.
MODELS_DIR = PACKAGE_ROOT / "models"
#: Benchmarks and their reports; present in a checkout, never in the extension.
BENCH_DIR = PACKAGE_ROOT / "bench"

DATA_ENV = "RIGMIND_DATA"


def data_dir() -> Path:
    """The data folder: ``$RIGMIND_DATA``, else ``../shared/data`` next to the package root."""
    env = os.environ.get(DATA_ENV)
    return Path(env).expanduser() if env else PACKAGE_ROOT.parent / "shared" / "data"


def model_path(name: str) -> Path:
    """``models/<name>`` in the package (e.g. ``"locomotion.onnx"``)."""
    return MODELS_DIR / name


def cache_dir(name: str) -> Path:
    """``<package root>/.cache/<name>``: a rebuildable cache next to the code
    it belongs to (not created here)."""
    return PACKAGE_ROOT / ".cache" / name


def user_cache_dir() -> Path:
    """``~/.cache/rigmind``: per-user caches that outlive a checkout."""
    return Path.home() / ".cache" / "rigmind"
