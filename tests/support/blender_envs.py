"""The Blenders the tests install the shipped extension into.

A Blender is represented by a Python that can ``import bpy`` (PyPI's bpy
module): Blender 5.0 by this venv (bpy 5.0.1, Python 3.11), Blender 5.2 LTS
by ``.venv-bpy52`` (bpy 5.2.3, Python 3.13), which ``install.py`` makes.
What such a Blender bundles is bpy's own dependency closure in that Python:
the tests run Blender steps with ``-I -S`` on a folder linking only those
modules, so Torch, pip and the venv's other packages are absent there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: Where install.py puts the Blender 5.2 LTS environment.
BPY52_VENV = REPO / ".venv-bpy52"
#: install.py sets this when it made that environment, so its tests never skip.
REQUIRE_BPY52 = "RIGMIND_REQUIRE_BPY52"

# Run inside the env's own Python: bpy's distribution closure and the
# top-level entries its files install (packages, ``six.py`` modules, ``numpy.libs``).
_BUNDLED = r"""
import importlib.metadata as md, json, re
seen, todo, names = set(), ["bpy"], set()
while todo:
    n = todo.pop()
    key = re.sub(r"[-_.]+", "-", n).lower()
    if key in seen:
        continue
    try:
        d = md.distribution(n)
    except md.PackageNotFoundError:
        continue
    seen.add(key)
    todo += [re.split(r"[ ;<>=!~\[(]", r, maxsplit=1)[0] for r in d.requires or [] if "extra ==" not in r]
    for f in d.files or []:
        top = f.parts[0]
        if not top.endswith((".dist-info", ".data")) and top not in ("..", "__pycache__"):
            names.add(top)
import site, sysconfig
print(json.dumps({"site": sysconfig.get_paths()["purelib"], "names": sorted(names)}))
"""


def speech_wav_code(seconds: int) -> str:
    """Python, for a Blender step, that writes ``seconds`` of a voiced,
    syllable-rate signal (a 140 Hz buzz gated at 3 Hz, 16 kHz mono) to
    ``speech.wav`` in the current folder and binds its path to ``wav``
    (standard library only: the step has no numpy of its own to rely on)."""
    return f"""
import math, os, struct, wave
wav = os.path.join(os.getcwd(), "speech.wav")
with wave.open(wav, "wb") as w:
    w.setnchannels(1); w.setsampwidth(2); w.setframerate(16000)
    frames = bytearray()
    for i in range({int(seconds)} * 16000):
        t = i / 16000
        on = math.sin(2 * math.pi * 3 * t) > 0
        s = 0.3 * on * math.copysign(1.0, math.sin(2 * math.pi * 140 * t)) * abs(math.sin(2 * math.pi * 700 * t))
        frames += struct.pack("<h", int(s * 32767))
    w.writeframes(bytes(frames))
"""


@dataclass(frozen=True)
class BlenderEnv:
    """One Blender as a module: its label ("5.0"), its Python, its version."""

    label: str
    python: str

    def bundled_site(self, folder: Path) -> Path:
        """``folder`` filled with links to what this Blender bundles."""
        proc = subprocess.run([self.python, "-I", "-c", _BUNDLED], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        info = json.loads(proc.stdout)
        folder.mkdir(parents=True, exist_ok=True)
        for name in info["names"]:
            src = Path(info["site"]) / name
            if src.exists():
                (folder / name).symlink_to(src, target_is_directory=src.is_dir())
        return folder


def blender_50() -> BlenderEnv:
    return BlenderEnv("5.0", sys.executable)


def blender_52():
    """The 5.2 LTS env, or None where install.py has not made it."""
    py = BPY52_VENV / "bin" / "python"
    return BlenderEnv("5.2", str(py)) if py.is_file() else None


def require(env, label: str):
    """``env``, or skip (fail where install.py promised the env)."""
    import pytest

    if env is not None:
        return env
    if os.environ.get(REQUIRE_BPY52):
        pytest.fail(f"Blender {label}'s environment {BPY52_VENV} is missing though install.py made it")
    pytest.skip(f"no Blender {label} environment: `python3 install.py setup` makes {BPY52_VENV} (bpy 5.2.3, Python 3.13)")
