"""Issue #15, the Blender side: operators scripted with explicit arguments,
tooltips everywhere, poll messages, and a scene left as the user keeps it
(fps, frame range, NLA, take names, the face mesh picked). Real bpy."""

from __future__ import annotations

import re

import numpy as np
import pytest
import soundfile as sf

from conftest import data_file
from rigmind.backend.requests.face import FaceRequest
from rigmind.backend.requests.gesture import GestureRequest
from rigmind.backend.requests.walk import ControllerChoice, WalkCycleRequest

BVH_CLIP = "bandai_namco_d2_locomotion/bvh/dataset-2_walk_normal_001.bvh.gz"


@pytest.fixture(scope="module")
def speech_2s(tmp_path_factory):
    """About two seconds of synthetic speech (espeak-ng), cut to exactly 2.0 s."""
    from rigmind.backend.face.espeak import synthesize

    s = synthesize("Here we go, this is a short test.", "en-us", rate=170)
    n = int(2.0 * s.sample_rate)
    samples = np.zeros(n, np.float32)
    samples[: min(n, len(s.samples))] = s.samples[:n]
    path = tmp_path_factory.mktemp("speech") / "two.wav"
    sf.write(path, samples, s.sample_rate, subtype="PCM_16")
    return path


@pytest.fixture
def character(registered):
    from rigmind.operators import mannequin

    return mannequin.build_mannequin()


def _decoy_settings(bpy):
    """Scene settings that point somewhere else: an operator called with
    explicit arguments must not read them."""
    from rigmind.operators import scene_io
    from rigmind.backend.skeleton import Skeleton

    decoy = scene_io.build_armature(Skeleton(["root"], np.array([-1]), np.zeros((1, 3))), "Decoy")
    s = bpy.context.scene.rigmind
    s.target_armature = decoy
    s.seed, s.gesture_amount, s.audio_path = 99, 0.1, "/nonexistent/speech.wav"
    s.export_path, s.render_path, s.style = "", "", "elderly"
    return decoy


def _last_key_frame(action) -> float:
    last = -np.inf
    for layer in action.layers:
        for strip in layer.strips:
            for bag in strip.channelbags:
                for fc in bag.fcurves:
                    last = max(last, fc.keyframe_points[len(fc.keyframe_points) - 1].co[0])
    return float(last)


def test_every_operator_runs_with_explicit_arguments(character, speech_2s, tmp_path):
    import bpy

    arm, head = character["armature"], character["head"]
    name = arm.name
    decoy = _decoy_settings(bpy)
    before = {k: getattr(bpy.context.scene.rigmind, k) for k in ("seed", "gesture_amount", "audio_path", "style")}
    ops = bpy.ops.rigmind

    assert ops.generate_gesture(armature=name, audio_path=str(speech_2s), seed=3, amount=0.7,
                                face_mesh=head.name) == {"FINISHED"}
    assert arm.animation_data.action.name == "RigMind Gesture · two · seed 3 · amount 0.70"
    assert head.data.shape_keys.animation_data.action.name.startswith("RigMind Face · two")
    assert ops.generate_face(face_mesh=head.name, audio_path=str(speech_2s), seed=1, start_frame=5,
                             method="model") == {"FINISHED"}
    face_action = head.data.shape_keys.animation_data.action
    assert face_action.frame_range[0] == pytest.approx(5.0)

    assert ops.bake_walk_cycle(armature=name, style="youthful", gait="walk", speed_from_style=False, speed=1.2,
                               controller="neural") == {"FINISHED"}
    assert arm.animation_data.action.name == "RigMind Walk · youthful · 1.2 m/s"
    bpy.ops.curve.primitive_bezier_curve_add(location=(0.0, 0.0, 0.0))
    curve = bpy.context.active_object
    curve.name = "My Path"
    bpy.ops.object.select_all(action="DESELECT")
    assert ops.walk_along_path(armature=name, path="My Path", style="normal", speed_from_style=False, speed=1.1,
                               controller="neural") == {"FINISHED"}
    assert arm.animation_data.action.name.startswith("RigMind Walk Along Path · normal")

    assert ops.detect_bone_map(armature=name) == {"FINISHED"}
    assert ops.save_bone_map(armature=name, preset_name="explicit_args") == {"FINISHED"}
    assert "rigmind_bone_map" in arm

    bvh = data_file(BVH_CLIP)
    assert ops.retarget_motion(armature=name, filepath=str(bvh), root_mode="in_place") == {"FINISHED"}
    assert arm.animation_data.action.name.startswith("RigMind Retarget")

    out = tmp_path / "character"
    assert ops.export(armature=name, format="BVH", filepath=str(out)) == {"FINISHED"}
    assert (tmp_path / "character.bvh").stat().st_size > 1000
    png = tmp_path / "still.png"
    assert ops.render(filepath=str(png), engine="CYCLES", resolution=(64, 36), samples=1) == {"FINISHED"}
    assert png.read_bytes()[:4] == b"\x89PNG"
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 3
    mp4 = tmp_path / "clip.mp4"
    assert ops.render(filepath=str(mp4), engine="CYCLES", resolution=(64, 36), samples=1) == {"FINISHED"}
    assert mp4.read_bytes()[4:8] == b"ftyp"
    assert [s.name for s in bpy.data.scenes] == [scene.name], "the encoding scene is removed"

    # A BVH whose joints the mannequin lacks: refused with the reason, nothing written.
    with pytest.raises(RuntimeError, match="needs retargeting"):
        ops.apply_bvh(armature=name, filepath=str(bvh))
    # Drive is interactive: headless it says so.
    with pytest.raises(RuntimeError, match="interactive"):
        ops.drive(armature=name)
    assert ops.add_mannequin() == {"FINISHED"}

    s = bpy.context.scene.rigmind
    assert {k: getattr(s, k) for k in before} == before
    assert decoy.animation_data is None or decoy.animation_data.action is None


def test_redo_panel_options_are_registered_properties(registered):
    """F9 re-runs a non-modal operator with its own properties: they must be
    operator properties (not scene settings), and the operator REGISTER/UNDO."""
    import bpy

    for idname, props in {
        "RIGMIND_OT_export": ("armature", "format", "filepath"),
        "RIGMIND_OT_apply_bvh": ("armature", "up_axis", "set_scene_fps", "start_frame"),
        "RIGMIND_OT_retarget_motion": ("armature", "root_mode", "root_bone", "use_ik", "source_armature"),
        "RIGMIND_OT_generate_gesture": ("armature", "audio_path", "amount", "seed", "base", "face_mesh"),
        "RIGMIND_OT_generate_face": ("face_mesh", "audio_path", "seed", "method"),
        "RIGMIND_OT_bake_walk_cycle": ("armature", "style", "gait", "speed", "in_place", "controller"),
        "RIGMIND_OT_walk_along_path": ("armature", "path", "style", "gait", "speed"),
        "RIGMIND_OT_render": ("engine", "filepath", "resolution", "samples"),
    }.items():
        cls = getattr(bpy.types, idname)
        module, _, name = cls.bl_idname.partition(".")
        have = set(getattr(getattr(bpy.ops, module), name).get_rna_type().properties.keys())
        assert set(props) <= have, (idname, set(props) - have)
        assert "REGISTER" in cls.bl_options
        if idname not in ("RIGMIND_OT_render",):  # non-modal: F9 needs UNDO too
            assert "UNDO" in cls.bl_options, idname


# --- tooltips ------------------------------------------------------------------------

_UNIT_WORDS = ("m/s", "metre", "second", "0..1", "(0 ", "0 calm", "0 guess", "frame", "pixel", "integer")


def _rigmind_structs():
    import bpy

    from rigmind.blender_addon import registration

    out = []
    for cls in registration.registered_classes():
        if getattr(cls, "bl_rna", None) is None or issubclass(cls, (bpy.types.Panel, bpy.types.UIList)):
            continue
        out.append(cls)
    return out


def test_every_property_and_operator_has_a_tooltip(registered):
    import bpy

    structs = _rigmind_structs()
    ops = [c for c in structs if issubclass(c, bpy.types.Operator)]
    assert len(ops) >= 12
    assert any(issubclass(c, bpy.types.AddonPreferences) for c in structs)
    assert any(issubclass(c, bpy.types.PropertyGroup) for c in structs)
    missing, vague = [], []
    for cls in structs:
        if issubclass(cls, bpy.types.Operator):
            module, _, name = cls.bl_idname.partition(".")
            rna = getattr(getattr(bpy.ops, module), name).get_rna_type()
            if len((rna.description or "").strip()) < 20:
                missing.append(f"{cls.__name__} (operator)")
            base = {"rna_type"}
        else:
            rna = cls.bl_rna
            parent = next(b for b in (bpy.types.AddonPreferences, bpy.types.PropertyGroup) if issubclass(cls, b))
            base = set(parent.bl_rna.properties.keys())
        for prop in rna.properties:
            if prop.identifier in base:
                continue
            desc = (prop.description or "").strip()
            if len(desc) < 12:
                missing.append(f"{cls.__name__}.{prop.identifier}: {desc!r}")
            if prop.type == "FLOAT" and not any(w in desc for w in _UNIT_WORDS):
                vague.append(f"{cls.__name__}.{prop.identifier}: no unit in {desc!r}")
            if prop.type == "ENUM":
                for item in prop.enum_items:
                    d = (item.description or "").strip()
                    if len(d) < 15 or re.fullmatch(r"\w+ (movement style|gait)", d):
                        missing.append(f"{cls.__name__}.{prop.identifier}[{item.identifier}]: {d!r}")
    scene_ptr = bpy.types.Scene.bl_rna.properties["rigmind"]
    if len(scene_ptr.description or "") < 12:
        missing.append("Scene.rigmind")
    assert not missing, missing
    assert not vague, vague


# --- poll messages -------------------------------------------------------------------

_ARMATURE_OPS = ("generate_gesture", "bake_walk_cycle", "walk_along_path", "export", "retarget_motion",
                 "detect_bone_map", "apply_bvh", "drive")


def _poll_message(bpy, op: str) -> str | None:
    """The poll failure message Blender shows for ``op`` (None: the poll passes)."""
    fn = getattr(bpy.ops.rigmind, op)
    if fn.poll():
        return None
    with pytest.raises(RuntimeError) as info:
        fn()
    return str(info.value)


def test_poll_messages_with_nothing_selected(registered):
    import bpy

    for op in _ARMATURE_OPS:
        msg = _poll_message(bpy, op)
        assert msg is not None and "Select the character" in msg, (op, msg)
    msg = _poll_message(bpy, "generate_face")
    assert msg is not None and "ARKit" in msg
    msg = _poll_message(bpy, "save_bone_map")
    assert msg is not None and "Select the character" in msg


def test_poll_with_only_the_mesh_selected_finds_its_armature(registered):
    import bpy

    from rigmind.operators import mannequin, op_common

    a = mannequin.build_mannequin()
    b = mannequin.build_mannequin()  # two characters: no "only candidate" to fall back on
    bpy.ops.object.select_all(action="DESELECT")
    bpy.context.view_layer.objects.active = None
    bpy.context.scene.rigmind.target_armature = None  # (filled while there was one armature)
    for op in _ARMATURE_OPS:
        msg = _poll_message(bpy, op)
        assert msg is not None and "Select the character" in msg, (op, msg)
    body = a["body"]
    body.select_set(True)
    bpy.context.view_layer.objects.active = body
    assert op_common.resolve_armature(bpy.context) is a["armature"]
    for op in _ARMATURE_OPS:
        assert _poll_message(bpy, op) is None, op
    assert _poll_message(bpy, "generate_face") is None
    msg = _poll_message(bpy, "save_bone_map")
    assert msg is not None and "Detect Mapping" in msg
    assert b["armature"] is not a["armature"]


def test_fields_fill_from_the_selection(registered):
    import bpy

    from rigmind.operators import mannequin, op_common

    parts = mannequin.build_mannequin()
    s = bpy.context.scene.rigmind
    bpy.context.view_layer.update()
    assert s.target_armature == parts["armature"]  # filled by the depsgraph handler on the import
    s.target_armature = None
    op_common.fill_selection(bpy.context.scene)  # what the handler does
    assert s.target_armature == parts["armature"]  # the scene's only armature
    s.face_auto = False
    op_common.fill_selection(bpy.context.scene)
    assert s.face_mesh == parts["head"]
    # The field follows the selection: clicking another character's mesh.
    other = mannequin.build_mannequin()
    bpy.ops.object.select_all(action="DESELECT")
    other["body"].select_set(True)
    bpy.context.view_layer.objects.active = other["body"]
    op_common.fill_selection(bpy.context.scene)
    assert s.target_armature == other["armature"]


# --- the user's scene ---------------------------------------------------------------------


def test_24_fps_scene_stays_24_and_keys_land_in_time(character, speech_2s):
    import bpy

    arm = character["armature"]
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 24, 1.0
    assert not scene.rigmind.set_scene_fps  # off by default
    assert bpy.ops.rigmind.generate_gesture(armature=arm.name, audio_path=str(speech_2s)) == {"FINISHED"}
    assert (scene.render.fps, scene.render.fps_base) == (24, 1.0)
    action = arm.animation_data.action
    assert action.frame_range[0] == pytest.approx(1.0)
    assert abs(_last_key_frame(action) - 48) <= 1, _last_key_frame(action)
    assert bpy.ops.rigmind.bake_walk_cycle(armature=arm.name, controller="neural") == {"FINISHED"}
    assert (scene.render.fps, scene.render.fps_base) == (24, 1.0)
    # The cycle's period in scene frames is its length in seconds times 24.
    # One cycle of n controller frames (30 fps) spans n * 24 / 30 scene frames.
    first, last = arm.animation_data.action.frame_range
    n30 = (last - first) * 30 / 24
    assert abs(n30 - round(n30)) < 1e-3 and 20 <= round(n30) <= 120, n30


def test_frame_range_only_grows(character, speech_2s):
    import bpy

    arm = character["armature"]
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 540
    assert bpy.ops.rigmind.bake_walk_cycle(armature=arm.name, controller="neural") == {"FINISHED"}
    assert (scene.frame_start, scene.frame_end) == (1, 540)
    scene.frame_start, scene.frame_end = 20, 30
    assert bpy.ops.rigmind.generate_gesture(armature=arm.name, audio_path=str(speech_2s), start_frame=10) == {"FINISHED"}
    assert scene.frame_start == 10 and scene.frame_end >= int(np.floor(_last_key_frame(arm.animation_data.action)))


def test_five_runs_one_history_track_unique_names(character, speech_2s):
    import bpy

    arm, head = character["armature"], character["head"]
    for _ in range(3):
        assert bpy.ops.rigmind.generate_gesture(armature=arm.name, audio_path=str(speech_2s), seed=3, amount=0.7,
                                                face_mesh="auto") == {"FINISHED"}
    for _ in range(2):
        assert bpy.ops.rigmind.bake_walk_cycle(armature=arm.name, controller="neural", speed_from_style=False,
                                               speed=1.3) == {"FINISHED"}
    for ob in (arm, head.data.shape_keys):
        tracks = [t for t in ob.animation_data.nla_tracks if "RigMind" in t.name]
        assert len(tracks) <= 1, [t.name for t in tracks]
        names = [st.name for t in ob.animation_data.nla_tracks for st in t.strips]
        assert len(names) == len(set(names)), names
    assert [t.name for t in arm.animation_data.nla_tracks] == ["RigMind history"]
    assert len(arm.animation_data.nla_tracks[0].strips) == 4  # one per replaced action
    takes = sorted(a.name for a in bpy.data.actions if a.name.startswith("RigMind Gesture"))
    assert takes == ["RigMind Gesture · two · seed 3 · amount 0.70",
                     "RigMind Gesture · two · seed 3 · amount 0.70 #2",
                     "RigMind Gesture · two · seed 3 · amount 0.70 #3"]
    assert not [a.name for a in bpy.data.actions if re.search(r"\.\d{3}$", a.name)]


def test_face_auto_on_ready_player_me_picks_the_head(registered, speech_2s):
    import bpy

    from rigmind.operators import face_scene, op_common, rig_files

    glb = data_file("character_rpm_arkit/brunette-t.glb")
    rig_files.load_rig_file(glb)
    meshes = [o for o in bpy.data.objects if o.type == "MESH" and o.data.shape_keys is not None]
    assert {"EyeLeft", "Wolf3D_Head", "Wolf3D_Teeth"} <= {m.name for m in meshes}
    assert face_scene.most_arkit_mesh(meshes).name == "Wolf3D_Head"
    assert op_common.resolve_face_mesh(bpy.context, "auto").name == "Wolf3D_Head"
    assert bpy.ops.rigmind.generate_face(face_mesh="auto", audio_path=str(speech_2s)) == {"FINISHED"}
    head = bpy.data.objects["Wolf3D_Head"]
    assert head.data.shape_keys.animation_data.action.name == "RigMind Face · two"


def test_generate_face_uses_the_scene_sound_strip(character, speech_2s):
    import bpy

    head = character["head"]
    scene = bpy.context.scene
    se = scene.sequence_editor_create()
    se.strips.new_sound(name="speech", filepath=str(speech_2s), channel=1, frame_start=30)
    assert bpy.ops.rigmind.generate_face(face_mesh=head.name) == {"FINISHED"}
    action = head.data.shape_keys.animation_data.action
    assert action.frame_range[0] == pytest.approx(30.0)
    assert len([s for s in se.strips_all if s.type == "SOUND"]) == 1  # no second strip


# --- errors by kind and the task runner ---------------------------------------------------


def test_internal_errors_are_not_called_user_errors(character, monkeypatch, tmp_path):
    import bpy

    from rigmind.operators import locomotion_scene as LS

    monkeypatch.setenv("RIGMIND_LOG_DIR", str(tmp_path))

    def broken(*a, **k):
        raise ValueError("a numpy-style bug")

    monkeypatch.setattr(LS, "generate_walk_cycle", broken)
    with pytest.raises(RuntimeError, match=r"internal error \(ValueError: a numpy-style bug\); details in"):
        bpy.ops.rigmind.bake_walk_cycle(armature=character["armature"].name, controller="neural")
    assert list(tmp_path.glob("rigmind-bake_walk_cycle-*.log"))


def test_task_runner_cancel_and_thread_name():
    import threading

    from rigmind.backend.errors import Cancelled
    from rigmind.backend.tasks import Task, finish, run_in_thread

    names = []

    def work(progress, cancel):
        names.append(threading.current_thread().name)
        for k in range(1000):
            progress(k / 1000)
            if cancel():
                raise Cancelled("stop")
            threading.Event().wait(0.001)
        return "done"

    def job():
        out = yield from run_in_thread(work, "rigmind-test")
        return out + "!"

    assert finish(job()) == "done!"
    assert names == ["rigmind-test"]
    t = Task(work, "rigmind-test-2").start()
    t.cancel()
    with pytest.raises(Cancelled):
        t.result()
    gen = job()
    next(gen)
    gen.close()  # cancels the worker, which stops at its next check


def test_cli_choices_are_case_insensitive():
    from rigmind.cli import build_parser

    ap = build_parser()
    a = ap.parse_args(["render", "--scene", "x.blend", "--out", "x.png", "--engine", "workbench"])
    assert a.engine == "WORKBENCH"
    a = ap.parse_args(["walk", "--rig", "r.glb", "--cycle", "--out", "o.bvh", "--gait", "RUN", "--style", "Elderly",
                       "--controller", "Motion_Matching"])
    assert (a.gait, a.style, a.controller) == ("run", "elderly", "motion_matching")
    a = ap.parse_args(["face", "--audio", "a.wav", "--out", "o.json", "--method", "WORDS", "--runtime", "Torch"])
    assert (a.method, a.runtime) == ("words", "torch")
    a = ap.parse_args(["export", "--rig", "r.glb", "--out", "o.fbx", "--preset", "Unreal"])
    assert a.preset == "unreal"
    a = ap.parse_args(["retarget", "--src", "a.bvh", "--rig", "r.glb", "--out", "o.fbx", "--root-mode", "IN_PLACE"])
    assert a.root_mode == "in_place"
    with pytest.raises(SystemExit):
        ap.parse_args(["render", "--scene", "x.blend", "--out", "x.png", "--engine", "povray"])
    assert "WORKBENCH" in ap._subparsers._group_actions[0].choices["render"].format_help()


def test_closing_a_job_leaves_the_scene_as_it_was(character, speech_2s, tmp_path):
    """What Esc does in the modal: the job is closed between steps. Render
    stops between frames and writes no MP4; a gesture or a walk writes no action."""
    import bpy

    from rigmind.operators import face_scene, gesture_scene, locomotion_scene, render

    arm, head = character["armature"], character["head"]
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 4
    fmt = scene.render.image_settings.file_format
    mp4 = tmp_path / "stopped.mp4"
    job = render.render_job(mp4, resolution=(32, 18), samples=1)
    fractions = [next(job), next(job)]
    job.close()
    assert fractions == sorted(fractions) and not mp4.exists()
    assert scene.render.image_settings.file_format == fmt and len(bpy.data.scenes) == 1
    actions = set(bpy.data.actions)
    for job in (gesture_scene.gesture_job(arm, GestureRequest(audio_path=speech_2s)), face_scene.face_job(head, FaceRequest(audio_path=speech_2s)),
                locomotion_scene.walk_cycle_job(arm, WalkCycleRequest(style="normal", controller=ControllerChoice(kind="neural")))):
        next(job)
        job.close()
    assert set(bpy.data.actions) == actions
    assert arm.animation_data is None or arm.animation_data.action is None
