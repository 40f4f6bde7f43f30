"""The self-contained extension (#15): this platform's zip, wheels included,
installs with ``extensions.package_install_files`` into a fresh Blender user
folder with the network off, and bakes a walk and a gesture take there with
nothing but Blender's own modules and the zip's wheels.

"Nothing but": each Blender step runs in its own interpreter started with
``-I -S`` (no site-packages, no PYTHONPATH, no user site); its ``sys.path`` is
the standard library plus a folder that links only what a desktop Blender 5.0
bundles (bpy with its scripts, numpy, requests & co, zstandard, Cython). Torch,
pip, librosa and the venv's onnxruntime/scipy are therefore absent, not merely
blocked: the test asserts ``find_spec`` finds neither torch nor pip, and that
onnxruntime and scipy load from the extension's own site-packages. "Network
off": socket connections and name look-ups raise in those processes, and the
test asserts none was attempted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

import rigmind

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
import build_extension  # noqa: E402  (stdlib-only tool, not part of the package)

MODULE = "bl_ext.user_default.rigmind"
MARK = "RESULT:"
#: What a desktop Blender 5.0 bundles in its Python that RigMind's run time may use
#: (bpy's own requirements and theirs); everything else must come from the zip.
BLENDER_BUNDLED = ("bpy", "numpy", "numpy.libs", "requests", "urllib3", "idna", "certifi",
                   "charset_normalizer", "zstandard", "Cython", "cython.py")


@pytest.fixture(scope="module")
def platform_zip(tmp_path_factory) -> Path:
    platform = build_extension.this_platform()
    try:
        wheels = build_extension.fetch_wheels(REPO, platform)
    except build_extension.WheelsMissing as ex:
        pytest.skip(f"cannot fetch the runtime wheels (PyPI unreachable and .cache/wheels empty?): {ex}")
    return build_extension.build_platform_zip(REPO, tmp_path_factory.mktemp("dist"), platform, wheels)


@pytest.fixture(scope="module")
def blender_site(tmp_path_factory) -> Path:
    """A folder with links to Blender's bundled modules only."""
    site = Path(sysconfig.get_paths()["purelib"])
    folder = tmp_path_factory.mktemp("blender-bundled")
    for name in BLENDER_BUNDLED:
        src = site / name
        assert src.exists(), f"{src} missing from the test venv"
        (folder / name).symlink_to(src, target_is_directory=src.is_dir())
    return folder


PRELUDE = """
import importlib.util, json, socket, sys
sys.path.insert(0, {site!r})
NET = []
def _offline(*a, **k):
    NET.append(repr(a)[:80])
    raise OSError("the network is off in this test")
socket.socket.connect = socket.socket.connect_ex = _offline
socket.create_connection = socket.getaddrinfo = _offline
def report(d):
    d["net"] = NET
    d["torch_importable"] = importlib.util.find_spec("torch") is not None
    d["pip_importable"] = importlib.util.find_spec("pip") is not None
    d["torch_loaded"] = "torch" in sys.modules
    print({mark!r} + json.dumps(d), flush=True)
"""


def run_isolated(code: str, site: Path, user: Path, timeout: float = 600) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(BLENDER_USER_RESOURCES=str(user), HOME=str(user))
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", PRELUDE.format(site=str(site), mark=MARK) + code],
                          cwd=user, env=env, capture_output=True, text=True, timeout=timeout)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(MARK)]
    assert proc.returncode == 0 and lines, (
        f"exit {proc.returncode}\n--- stdout\n{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-4000:]}"
    )
    res = json.loads(lines[-1][len(MARK):])
    assert res["net"] == [], f"network attempted: {res['net']}"
    assert res["torch_importable"] is False and res["torch_loaded"] is False
    assert res["pip_importable"] is False
    return res


INSTALL = """
import bpy, os
res = bpy.ops.extensions.package_install_files(filepath={zip!r}, repo="user_default", enable_on_install=True)
local = os.path.join(bpy.utils.user_resource("EXTENSIONS"), ".local")
top = set()
for d, dirs, files in os.walk(local):
    if os.path.basename(d) == "site-packages":
        top |= {{n[:-3] if n.endswith(".py") else n for n in dirs + files}}
report({{"result": sorted(res), "local_packages": sorted(top)}})
"""

TAKES = """
import math, os, struct, sys, wave
import bpy, addon_utils

def raise_(ex):
    raise ex

bpy.ops.wm.read_factory_settings(use_empty=True)
addon_utils.enable({module!r}, default_set=True, handle_error=raise_)
out = {{}}
bpy.ops.rigmind.add_mannequin()
arm = [o for o in bpy.data.objects if o.type == "ARMATURE"][0]

before = set(bpy.data.actions)
out["walk"] = sorted(bpy.ops.rigmind.bake_walk_cycle())     # controller "auto": the neural one, on ONNX Runtime
walk = [a for a in bpy.data.actions if a not in before]
out["walk_actions"] = [a.name for a in walk]
out["walk_frames"] = [round(a.frame_range[1] - a.frame_range[0]) for a in walk]

# Three seconds of a voiced, syllable-rate signal (a 140 Hz buzz gated at 3 Hz).
wav = os.path.join(os.getcwd(), "speech.wav")
sr = 16000
with wave.open(wav, "wb") as w:
    w.setnchannels(1); w.setsampwidth(2); w.setframerate(sr)
    frames = bytearray()
    for i in range(3 * sr):
        t = i / sr
        on = math.sin(2 * math.pi * 3 * t) > 0
        s = 0.3 * on * math.copysign(1.0, math.sin(2 * math.pi * 140 * t)) * abs(math.sin(2 * math.pi * 700 * t))
        frames += struct.pack("<h", int(s * 32767))
    w.writeframes(bytes(frames))
op = bpy.ops.rigmind.generate_gesture
if "audio_path" in op.get_rna_type().properties.keys():
    kwargs = {{"audio_path": wav}}      # operators with properties (#15 item 1)
else:
    bpy.context.scene.rigmind.audio_path = wav
    kwargs = {{}}
before = set(bpy.data.actions)
out["gesture"] = sorted(op(**kwargs))
gest = [a for a in bpy.data.actions if a not in before]
out["gesture_actions"] = [a.name for a in gest]
out["armature_action"] = arm.animation_data.action.name if arm.animation_data and arm.animation_data.action else None
ext = os.path.join(bpy.utils.user_resource("EXTENSIONS"), ".local")
out["loaded_from_extension"] = {{
    name: os.path.realpath(sys.modules[name].__file__).startswith(os.path.realpath(ext))
    for name in ("onnxruntime", "scipy") if name in sys.modules}}
report(out)
"""


def test_platform_zip_lists_its_wheels_and_validates(platform_zip):
    import bpy

    names = zipfile.ZipFile(platform_zip).namelist()
    wheels = sorted(n for n in names if n.startswith("wheels/"))
    manifest = zipfile.ZipFile(platform_zip).read("blender_manifest.toml").decode()
    import tomllib

    data = tomllib.loads(manifest)
    assert data["platforms"] == [build_extension.this_platform()]
    assert sorted(w.removeprefix("./") for w in data["wheels"]) == wheels
    assert any("onnxruntime" in w for w in wheels) and not any("torch" in w for w in wheels)
    scripts = Path(bpy.utils.system_resource("SCRIPTS"))
    tool = scripts / "addons_core" / "bl_pkg" / "cli" / "blender_ext.py"
    tags = scripts / "modules" / "_bpy_internal" / "extensions" / "tags.py"
    proc = subprocess.run([sys.executable, "-I", str(tool), "validate", "--valid-tags", str(tags), str(platform_zip)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_offline_install_bakes_a_walk_and_a_gesture_without_torch(platform_zip, blender_site, tmp_path):
    user = tmp_path / "blender-user"
    user.mkdir()
    res = run_isolated(INSTALL.format(zip=str(platform_zip)), blender_site, user)
    assert res["result"] == ["FINISHED"]
    assert {"onnxruntime", "scipy", "soundfile", "soxr", "silero_vad"} <= set(res["local_packages"])
    assert "torch" not in res["local_packages"]
    assert (user / "extensions" / "user_default" / "rigmind" / "blender_manifest.toml").is_file()

    res = run_isolated(TAKES.format(module=MODULE), blender_site, user)
    assert res["walk"] == ["FINISHED"] and len(res["walk_actions"]) == 1
    assert res["walk_actions"][0].startswith("RigMind Walk") and res["walk_frames"][0] > 20
    assert res["gesture"] == ["FINISHED"]
    assert any(n.startswith("RigMind Gesture") for n in res["gesture_actions"])
    assert res["armature_action"].startswith("RigMind Gesture")
    assert res["loaded_from_extension"] == {"onnxruntime": True, "scipy": True}
