"""The self-contained extension (#15, #25): this platform's zip, wheels for
Python 3.11 and 3.13 included, installs with
``extensions.package_install_files`` into a fresh Blender user folder with
the network off, in Blender 5.0 (bpy 5.0.1, Python 3.11) and Blender 5.2 LTS
(bpy 5.2.3, Python 3.13), and runs the main jobs there through
``bpy.ops.rigmind.*`` with explicit arguments: add the mannequin, Bake Walk
Cycle, Walk Along Path, Generate Gesture with the face, Generate Face,
Export BVH/FBX/GLB, and a scripted Drive take; in 5.2 also a styled Generate
Gesture over keyed emotions and Generate Face with an emotion (#29).

"Nothing but": each Blender step runs in its own interpreter started with
``-I -S`` (no site-packages, no PYTHONPATH, no user site); its ``sys.path`` is
the standard library plus a folder that links only what that Blender bundles
(bpy's own dependency closure: numpy, requests & co, zstandard, Cython;
tests/support/blender_envs.py). Torch, pip, librosa and the venv's onnxruntime/scipy
are therefore absent, not merely blocked: the test asserts ``find_spec``
finds neither torch nor pip, and that onnxruntime and scipy load from the
extension's own site-packages. "Network off": socket connections and name
look-ups raise in those processes, and the test asserts none was attempted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from support import blender_envs
from conftest import REPO

sys.path.insert(0, str(REPO / "tools"))
import build_extension  # noqa: E402  (stdlib-only tool, not part of the package)

MODULE = "bl_ext.user_default.rigmind"
MARK = "RESULT:"
BLENDERS = ("5.0", "5.2")


@pytest.fixture(scope="module", params=BLENDERS)
def blender(request, tmp_path_factory):
    """(env, folder of its bundled modules) for each supported Blender."""
    env = blender_envs.blender_50() if request.param == "5.0" else blender_envs.blender_52()
    env = blender_envs.require(env, request.param)
    return env, env.bundled_site(tmp_path_factory.mktemp(f"bundled-{request.param}"))


@pytest.fixture(scope="module")
def platform_zip(tmp_path_factory) -> Path:
    platform = build_extension.this_platform()
    try:
        wheels = build_extension.fetch_wheels(REPO, platform)
    except build_extension.WheelsMissing as ex:
        pytest.skip(f"cannot fetch the runtime wheels (PyPI unreachable and .cache/wheels empty?): {ex}")
    return build_extension.build_platform_zip(REPO, tmp_path_factory.mktemp("dist"), platform, wheels)


PRELUDE = """
import importlib.util, json, socket, sys, warnings
sys.path.insert(0, {site!r})
# Deprecations raised from RigMind's own code (an API this Blender renamed).
DEPRECATED = []
_show = warnings.showwarning
def _record(message, category, filename, lineno, file=None, line=None):
    if issubclass(category, DeprecationWarning) and "/rigmind/" in filename.replace(chr(92), "/"):
        DEPRECATED.append(f"{{filename.rsplit('rigmind', 1)[-1]}}:{{lineno}}: {{message}}")
    _show(message, category, filename, lineno, file, line)
warnings.showwarning = _record
warnings.simplefilter("always", DeprecationWarning)
NET = []
def _offline(*a, **k):
    NET.append(repr(a)[:80])
    raise OSError("the network is off in this test")
socket.socket.connect = socket.socket.connect_ex = _offline
socket.create_connection = socket.getaddrinfo = _offline
def report(d):
    d["net"] = NET
    d["deprecated"] = DEPRECATED
    d["torch_importable"] = importlib.util.find_spec("torch") is not None
    d["pip_importable"] = importlib.util.find_spec("pip") is not None
    d["torch_loaded"] = "torch" in sys.modules
    print({mark!r} + json.dumps(d), flush=True)
"""


def run_isolated(code: str, blender, user: Path, timeout: float = 900) -> dict:
    python, site = blender[0].python, blender[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(BLENDER_USER_RESOURCES=str(user), HOME=str(user))
    proc = subprocess.run([python, "-I", "-S", "-c", PRELUDE.format(site=str(site), mark=MARK) + code],
                          cwd=user, env=env, capture_output=True, text=True, timeout=timeout)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(MARK)]
    assert proc.returncode == 0 and lines, (
        f"exit {proc.returncode}\n--- stdout\n{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-4000:]}"
    )
    res = json.loads(lines[-1][len(MARK):])
    assert res["net"] == [], f"network attempted: {res['net']}"
    assert res["deprecated"] == [], f"RigMind uses an API this Blender deprecates: {res['deprecated']}"
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

JOBS = """
import math, os, struct, sys, wave
import bpy, addon_utils

def raise_(ex):
    raise ex

bpy.ops.wm.read_factory_settings(use_empty=True)
addon_utils.enable({module!r}, default_set=True, handle_error=raise_)
out = {{"blender": bpy.app.version_string, "python": "%d.%d" % sys.version_info[:2]}}
scene = bpy.context.scene
here = os.getcwd()

def new_actions(before):
    return sorted(a.name for a in bpy.data.actions if a not in before)

out["mannequin"] = sorted(bpy.ops.rigmind.add_mannequin())
arm = [o for o in bpy.data.objects if o.type == "ARMATURE"][0]
face = [o for o in bpy.data.objects if o.type == "MESH" and o.data.shape_keys
        and "jawOpen" in o.data.shape_keys.key_blocks][0]

before = set(bpy.data.actions)
out["walk"] = sorted(bpy.ops.rigmind.bake_walk_cycle(armature=arm.name, style="normal",
                                                     gait="walk", controller="neural", start_frame=1))
out["walk_actions"] = new_actions(before)

curve = bpy.data.curves.new("RM Path", "CURVE")
curve.dimensions = "3D"
spline = curve.splines.new("POLY")
spline.points.add(2)
for p, (x, y) in zip(spline.points, ((0, 0), (3, 0), (3, 2))):
    p.co = (x, y, 0.0, 1.0)
path = bpy.data.objects.new("RM Path", curve)
scene.collection.objects.link(path)
before = set(bpy.data.actions)
out["path"] = sorted(bpy.ops.rigmind.walk_along_path(armature=arm.name, path=path.name, style="elderly",
                                                     gait="walk", controller="neural", start_frame=1,
                                                     actions="jump@1.2"))
out["path_actions"] = new_actions(before)
# The jump's clip comes from the extension's own models/locomotion_actions.npz.
first, last = (int(round(f)) for f in arm.animation_data.action.frame_range)
hips_z = []
for f in range(first, last + 1):
    scene.frame_set(f)
    hips_z.append((arm.matrix_world @ arm.pose.bones["Hips"].head).z)
out["path_hips_rise"] = max(hips_z) - sorted(hips_z)[len(hips_z) // 2]
before = set(bpy.data.actions)
out["crouch"] = sorted(bpy.ops.rigmind.bake_walk_cycle(armature=arm.name, style="normal", gait="crouch",
                                                       controller="neural", start_frame=1))
out["crouch_actions"] = new_actions(before)

{speech}

before = set(bpy.data.actions)
out["gesture"] = sorted(bpy.ops.rigmind.generate_gesture(armature=arm.name, audio_path=wav, amount=0.6, seed=3,
                                                         start_frame=1, base="idle", face_mesh=face.name,
                                                         face_method="model"))
out["gesture_actions"] = new_actions(before)
out["armature_action"] = arm.animation_data.action.name
keys = face.data.shape_keys
out["face_action_after_gesture"] = keys.animation_data.action.name if keys.animation_data and keys.animation_data.action else None

before = set(bpy.data.actions)
out["face"] = sorted(bpy.ops.rigmind.generate_face(face_mesh=face.name, audio_path=wav, seed=1, start_frame=1,
                                                   method="table"))
out["face_actions"] = new_actions(before)

out["exports"] = {{}}
for fmt in ("BVH", "FBX", "GLB"):
    target = os.path.join(here, "take." + fmt.lower())
    res = sorted(bpy.ops.rigmind.export(armature=arm.name, format=fmt, filepath=target))
    out["exports"][fmt] = [res, os.path.getsize(target) if os.path.exists(target) else 0]

# An MP4 of three frames with the gesture's speech (the sequencer's strips are
# read there, an API that changed in 5.1).
scene.frame_start, scene.frame_end = 1, 3
mp4 = os.path.join(here, "take.mp4")
out["render"] = [sorted(bpy.ops.rigmind.render(engine="CYCLES", filepath=mp4, resolution=(64, 48), samples=1)),
                 os.path.getsize(mp4) if os.path.exists(mp4) else 0]

# Drive: the operator is modal (key events), so the script feeds its session
# the events a user would type, as tests/operators/test_drive_blender.py does.
pkg = {module!r}
import importlib
DS = importlib.import_module(pkg + ".operators.drive_scene")
DI = importlib.import_module(pkg + ".backend.locomotion.drive_input")
CT = importlib.import_module(pkg + ".backend.locomotion.controllers")
session = DS.DriveSession(arm, controller=CT.load_controller("neural"))
script = [(0.0, DI.InputEvent("R")), (0.0, DI.InputEvent("W")), (2.0, DI.InputEvent("W", "RELEASE")),
          (2.5, DI.InputEvent("RET"))]
fps, k, cmds = 24.0, 0, []
for i in range(int(2.5 * fps) + 1):
    t = i / fps
    while k < len(script) and script[k][0] <= t + 1e-9:
        c = session.handle(script[k][1]); k += 1
        if c:
            cmds.append(c)
    if "finish" in cmds:
        break
    session.tick(1.0 / fps)
before = set(bpy.data.actions)
session.finish(frame_start=1)
out["drive_commands"] = cmds
out["drive_actions"] = new_actions(before)

# Track Body (#30): three empties walking along +X at 0.5 m/s for 2 s.
trackers = []
for name in ("RM Head", "RM HandL", "RM HandR"):
    ob = bpy.data.objects.new(name, None)
    scene.collection.objects.link(ob)
    trackers.append(ob)
fps = scene.render.fps / scene.render.fps_base
for f in range(1, 61):
    t = (f - 1) / fps
    for ob, p in zip(trackers, ((0.5 * t, 0.0, 1.6), (0.5 * t, 0.22, 0.85), (0.5 * t, -0.22, 0.85))):
        ob.location = p
        ob.keyframe_insert("location", frame=f)
before = set(bpy.data.actions)
out["track"] = sorted(bpy.ops.rigmind.track_body(armature=arm.name, head=trackers[0].name,
                                                  hand_l=trackers[1].name, hand_r=trackers[2].name))
out["track_actions"] = new_actions(before)
hips = []
for f in (1, 60):
    scene.frame_set(f)
    hips.append((arm.matrix_world @ arm.pose.bones["Hips"].head).x)
out["track_hips_travel"] = hips[1] - hips[0]

{emotion}
ext = os.path.join(bpy.utils.user_resource("EXTENSIONS"), ".local")
out["loaded_from_extension"] = {{
    name: os.path.realpath(sys.modules[name].__file__).startswith(os.path.realpath(ext))
    for name in ("onnxruntime", "scipy") if name in sys.modules}}
report(out)
"""


# Emotion and style (#29), run in 5.2: a "happy" gesture over keyed emotions
# (happy at frame 1, sad from half-way) with its face, then Generate Face with
# a constant happy, read back from the curves: the gesture's face smiles early,
# not late, and the happy face more than the neutral one made above.
EMOTION = """
smiles = ['key_blocks["%s"].value' % k.name for k in face.data.shape_keys.key_blocks
          if k.name.lower().replace("_", "").startswith("mouthsmile")]
n = int(round(3 * scene.render.fps / scene.render.fps_base))
def smile(action, first=1, last=n):
    fcs = [fc for fc in action.layers[0].strips[0].channelbags[0].fcurves if fc.data_path in smiles]
    return sum(fc.evaluate(f) for fc in fcs for f in range(first, last + 1)) / (len(fcs) * (last - first + 1))
R = scene.rigmind
for frame, happy in ((1, 1.0), (n // 2, 0.0)):
    R.emotion_happy, R.emotion_sad = happy, 1.0 - happy
    scene.keyframe_insert("rigmind.emotion_happy", frame=frame)
    scene.keyframe_insert("rigmind.emotion_sad", frame=frame)
before = set(bpy.data.actions)
out["styled_gesture"] = sorted(bpy.ops.rigmind.generate_gesture(armature=arm.name, audio_path=wav, seed=3,
                                                                start_frame=1, face_mesh=face.name, style="happy"))
out["styled_gesture_actions"] = new_actions(before)
act = keys.animation_data.action
out["styled_gesture_smile"] = [smile(act, 1, n // 6), smile(act, 2 * n // 3)]
scene.animation_data_clear()
R.emotion_happy, R.emotion_sad = 1.0, 0.0
before = set(bpy.data.actions)
out["happy_face"] = sorted(bpy.ops.rigmind.generate_face(face_mesh=face.name, audio_path=wav, seed=1, start_frame=1,
                                                         method="table"))
out["happy_face_actions"] = new_actions(before)
out["face_smile"] = [smile(bpy.data.actions[name]) for name in out["face_actions"] + out["happy_face_actions"]]
"""


def test_platform_zip_lists_its_wheels_for_each_python_and_validates(platform_zip, blender):
    """The manifest lists every wheel; each supported Python finds a wheel
    of every runtime package; no Torch wheel and no Torch weights ship; and
    the Blender's own strict validator passes it."""
    import tomllib

    env, _ = blender
    zf = zipfile.ZipFile(platform_zip)
    names = zf.namelist()
    wheels = sorted(n for n in names if n.startswith("wheels/"))
    data = tomllib.loads(zf.read("blender_manifest.toml").decode())
    assert data["platforms"] == [build_extension.this_platform()]
    assert sorted(w.removeprefix("./") for w in data["wheels"]) == wheels
    assert "blender_version_max" not in data and data["blender_version_min"] == "5.0.0"
    for py in build_extension.PYTHONS:
        fits = {n.split("/")[1].split("-")[0] for n in wheels if build_extension.wheel_fits_python(n, py)}
        want = {build_extension._norm(w).replace("-", "_") for w in build_extension.RUNTIME_WHEELS}
        assert fits == want, (py, want - fits)
    assert not any("torch" in w for w in wheels)
    assert not [n for n in names if n.endswith(".pt")], "Torch weights ship in the extension"
    assert {"models/locomotion.onnx", "models/gesture.onnx", "models/face.onnx"} <= set(names)
    code = ("import bpy, subprocess, sys\nfrom pathlib import Path\n"
            "s = Path(bpy.utils.system_resource('SCRIPTS'))\n"
            "p = subprocess.run([sys.executable, '-I', str(s / 'addons_core/bl_pkg/cli/blender_ext.py'), 'validate',"
            " '--valid-tags', str(s / 'modules/_bpy_internal/extensions/tags.py'), sys.argv[1]],"
            " capture_output=True, text=True)\nprint(p.returncode, p.stdout[-2000:], p.stderr[-2000:])\n"
            "sys.exit(p.returncode)")
    proc = subprocess.run([env.python, "-c", code, str(platform_zip)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_offline_install_runs_every_main_job_without_torch(platform_zip, blender, tmp_path):
    env, _ = blender
    user = tmp_path / "blender-user"
    user.mkdir()
    res = run_isolated(INSTALL.format(zip=str(platform_zip)), blender, user)
    assert res["result"] == ["FINISHED"]
    assert {"onnxruntime", "scipy", "soundfile", "soxr", "silero_vad"} <= set(res["local_packages"])
    assert "torch" not in res["local_packages"]
    assert (user / "extensions" / "user_default" / "rigmind" / "blender_manifest.toml").is_file()

    res = run_isolated(JOBS.format(module=MODULE, speech=blender_envs.speech_wav_code(3),
                                   emotion=EMOTION if env.label == "5.2" else ""), blender, user)
    assert res["blender"].startswith(env.label), res["blender"]
    assert res["mannequin"] == ["FINISHED"]
    assert res["walk"] == ["FINISHED"] and len(res["walk_actions"]) == 1
    assert res["walk_actions"][0].startswith("RigMind Walk")
    assert res["path"] == ["FINISHED"] and len(res["path_actions"]) == 1
    assert res["path_hips_rise"] > 0.12, res["path_hips_rise"]   # the jump, from the installed clip bank
    assert res["crouch"] == ["FINISHED"] and res["crouch_actions"][0].startswith("RigMind Crouch")
    assert res["gesture"] == ["FINISHED"]
    assert any(n.startswith("RigMind Gesture") for n in res["gesture_actions"])
    assert res["armature_action"].startswith("RigMind Gesture")
    assert res["face_action_after_gesture"] is not None      # the gesture's face on the ARKit mesh
    assert len(res["gesture_actions"]) >= 2                  # body and face
    assert res["face"] == ["FINISHED"] and len(res["face_actions"]) == 1
    for fmt, (result, size) in res["exports"].items():
        assert result == ["FINISHED"] and size > 1000, (fmt, result, size)
    assert res["render"][0] == ["FINISHED"] and res["render"][1] > 1000, res["render"]
    assert "finish" in res["drive_commands"] and len(res["drive_actions"]) >= 1
    assert res["loaded_from_extension"] == {"onnxruntime": True, "scipy": True}
    assert res["track"] == ["FINISHED"] and res["track_actions"][0].startswith("RigMind Track")
    assert 0.5 < res["track_hips_travel"] < 1.5, res["track_hips_travel"]   # ~0.98 m tracked
    if env.label == "5.2":
        assert res["styled_gesture"] == ["FINISHED"], res["styled_gesture"]
        assert any(n.startswith("RigMind Gesture") for n in res["styled_gesture_actions"])
        early, late = res["styled_gesture_smile"]
        assert early > late + 0.25, (early, late)                 # happy, then sad
        assert res["happy_face"] == ["FINISHED"] and len(res["happy_face_actions"]) == 1
        neutral, happy = res["face_smile"]
        assert happy > neutral + 0.25, (neutral, happy)


XBOT = """
import bpy, addon_utils
def raise_(ex):
    raise ex
bpy.ops.wm.read_factory_settings(use_empty=True)
addon_utils.enable({module!r}, default_set=True, handle_error=raise_)
bpy.ops.import_scene.gltf(filepath={xbot!r})
arm = [o for o in bpy.data.objects if o.type == "ARMATURE"][0]
out = {{"retarget": sorted(bpy.ops.rigmind.retarget_motion(filepath={clip!r}, armature=arm.name, start_frame=1))}}
out["retarget_export"] = sorted(bpy.ops.rigmind.export(armature=arm.name, format="BVH", filepath={retarget_out!r}))
curve = bpy.data.curves.new("Line", "CURVE")
curve.dimensions = "3D"
spline = curve.splines.new("POLY")
spline.points.add(1)
spline.points[0].co, spline.points[1].co = (0, 0, 0, 1), (3, 0, 0, 1)
path = bpy.data.objects.new("Line", curve)
bpy.context.scene.collection.objects.link(path)
out["walk"] = sorted(bpy.ops.rigmind.walk_along_path(armature=arm.name, path=path.name, style="normal",
                                                     controller="neural", start_frame=1))
out["walk_export"] = sorted(bpy.ops.rigmind.export(armature=arm.name, format="BVH", filepath={walk_out!r}))
report(out)
"""


@pytest.fixture(scope="module")
def xbot_takes(platform_zip, tmp_path_factory):
    """The shipped extension in each Blender on the user's X Bot: a CMU clip
    retargeted and a 3 m walk baked, each exported to BVH; ``{label: (retarget.bvh, walk.bvh)}``."""
    from conftest import data_file

    xbot = data_file("characters/Xbot.glb")
    clip = data_file("cmu_131_start_walk_stop/131_01.bvh")
    takes = {}
    for label in BLENDERS:
        env = blender_envs.blender_50() if label == "5.0" else blender_envs.blender_52()
        env = blender_envs.require(env, label)
        folder = tmp_path_factory.mktemp(f"xbot-{label}")
        blender = (env, env.bundled_site(folder / "bundled"))
        user = folder / "user"
        user.mkdir()
        assert run_isolated(INSTALL.format(zip=str(platform_zip)), blender, user)["result"] == ["FINISHED"]
        outs = (folder / "retarget.bvh", folder / "walk.bvh")
        res = run_isolated(XBOT.format(module=MODULE, xbot=str(xbot), clip=str(clip), retarget_out=str(outs[0]),
                                       walk_out=str(outs[1])), blender, user)
        assert all(res[k] == ["FINISHED"] for k in ("retarget", "retarget_export", "walk", "walk_export")), res
        takes[label] = (outs, clip)
    return takes


def test_xbot_takes_read_back_from_the_exported_files(xbot_takes):
    """Read from the files each Blender wrote: the retarget lasts as long as
    the clip (resampled to the user's scene rate, which the operator keeps),
    the walk ends on the path's end (3 m along Blender's X)."""
    from rigmind.backend.bvh import read_bvh

    # RigMind writes BVH in centimetres: read them so. (Units are not left to
    # the guess: X Bot's leaf bones, as Blender's glTF importer sizes them,
    # give End Sites metres long, which the guess would take for millimetres.)
    for label, ((retarget_bvh, walk_bvh), clip) in xbot_takes.items():
        source, take = read_bvh(clip), read_bvh(retarget_bvh, units="cm")
        span = lambda m: (m.num_frames - 1) / m.fps  # noqa: E731  (seconds from first to last frame)
        assert abs(span(take) - span(source)) < 1.0 / take.fps, (label, span(take), span(source))
        walk = read_bvh(walk_bvh, units="cm")
        hips = walk.world_positions()[:, 0, :2]
        assert np.linalg.norm(hips[-1] - (3.0, 0.0)) < 0.15, (label, hips[-1])


def test_blender_50_and_52_bake_the_same_takes_on_xbot(xbot_takes):
    """The same code in both Blenders: the exported takes agree (world joint
    positions within 1 mm on every frame)."""
    from rigmind.backend.bvh import read_bvh

    (a_ret, a_walk), _ = xbot_takes["5.0"]
    (b_ret, b_walk), _ = xbot_takes["5.2"]
    for a, b in ((a_ret, b_ret), (a_walk, b_walk)):
        ma, mb = read_bvh(a, units="cm"), read_bvh(b, units="cm")
        assert ma.num_frames == mb.num_frames and ma.skeleton.names == mb.skeleton.names
        assert np.abs(ma.world_positions() - mb.world_positions()).max() < 1e-3
