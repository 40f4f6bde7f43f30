"""DeepMimic reference motions (``humanoid3d_*.txt``): the skeleton with its
neutral head, toes and fingers, the axes (Y up, facing +X -> Blender), the
revolute knees and elbows, the rate from ``dt`` (resampled when frames
differ), the bad files each refused in one line, and the real clips
(``deepmimic_motions/``: the jump's rise and travel, the walk's feet), which
skip with the reason when the data folder is absent.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rigmind.backend import deepmimic_motion, rotations
from rigmind.backend.bone_mapping import auto_map, load_humanoid, match_preset
from rigmind.backend.deepmimic_motion import (
    DeepMimicFileError,
    deepmimic_character,
    deepmimic_rest_skeleton,
    frame_layout,
    looks_like_deepmimic,
    numbers_per_frame,
    read_deepmimic,
)
from rigmind.backend.errors import UserError
from rigmind.backend.retarget import RetargetConfig, retarget
from rigmind.backend.smplx_motion import smplx_rest_skeleton

from conftest import data_file

CLIPS = "deepmimic_motions"
UP = np.array([0.0, 0.0, 1.0])


# --- synthetic clips ------------------------------------------------------------------


def _rest_frame(dt=1.0 / 30, root=(0.0, 0.88, 0.0)) -> list:
    """One humanoid3d frame at rest: identity quaternions, straight joints."""
    frame = [dt, *root, 1.0, 0.0, 0.0, 0.0]
    for _name, kind, _start, count in frame_layout()[1:]:
        frame += [1.0, 0.0, 0.0, 0.0] if kind == "spherical" else [0.0] * count
    return frame


def _set(frame: list, joint: str, values) -> list:
    """``frame`` with ``joint``'s numbers (quaternion or angle) replaced."""
    for name, kind, start, _count in frame_layout():
        if name == joint:
            s = start + 3 if kind == "none" else start
            frame[s:s + len(values)] = list(values)
    return frame


def _write(path, frames, **extra):
    path.write_text(json.dumps({"Loop": "wrap", **extra, "Frames": frames}))
    return path


def _world(motion, joint: str):
    """World positions ``[F, 3]`` (metres, Z up) of ``joint``."""
    return motion.world()[1][:, motion.skeleton.index(joint)]


def _heading(motion):
    """``(forward, right)`` unit horizontal vectors ``[F, 3]`` of the pelvis
    (a character at rest faces -Y in Blender; right = forward x up)."""
    rot = motion.world()[0][:, motion.skeleton.index("root")]
    fwd = rotations.rotate(rot, np.array([0.0, -1.0, 0.0])) * [1.0, 1.0, 0.0]
    fwd /= np.linalg.norm(fwd, axis=1, keepdims=True)
    return fwd, np.cross(fwd, UP)


# --- the skeleton -----------------------------------------------------------------------


def test_layout_is_44_numbers_in_the_characters_joint_order():
    assert numbers_per_frame() == 44
    kinds = {n: k for n, k, _, _ in frame_layout()}
    assert kinds["root"] == "none" and kinds["right_knee"] == kinds["left_elbow"] == "revolute"
    assert kinds["right_wrist"] == kinds["left_wrist"] == "fixed"
    assert [n for n, *_ in frame_layout()] == deepmimic_character()["names"]


def test_rest_skeleton_stands_on_the_floor_facing_minus_y():
    sk = deepmimic_rest_skeleton()
    pos = sk.rest_positions()
    p = {n: pos[sk.index(n)] for n in sk.names}
    assert len(sk) == 48 and np.allclose(sk.rest_rotations[:, 0], 1.0)
    assert p["root"][2] == pytest.approx(0.8814, abs=1e-4)  # hip joints to the soles
    for side in ("right", "left"):
        assert 0.0 < p[f"{side}_toe"][2] < p[f"{side}_ankle"][2] == pytest.approx(0.05, abs=1e-6)
        assert p[f"{side}_toe"][1] < p[f"{side}_ankle"][1] - 0.05  # toes forward (-Y)
        for f in ("thumb", "index", "middle", "ring", "pinky"):
            assert p[f"{side}_{f}3"][2] < p[f"{side}_{f}1"][2] < p[f"{side}_wrist"][2]  # fingers hang down
        assert p[f"{side}_thumb3"][1] < p[f"{side}_pinky1"][1]  # thumb in front
        hand = p[f"{side}_middle1"] - p[f"{side}_wrist"]
        assert 0.08 < np.linalg.norm(hand) < 0.12
    assert p["right_hip"][0] < 0 < p["left_hip"][0]  # the character's left is +X
    assert p["head"][2] > p["neck"][2] > p["chest"][2] > p["root"][2]


def test_every_canonical_chain_is_mapped_by_the_deepmimic_preset():
    sk = deepmimic_rest_skeleton()
    m = match_preset(sk, "deepmimic")
    assert not m.unmapped and not m.missing_required and m.overall == 1.0
    # all of the canonical humanoid but the extra spine, clavicles, jaw and eyes
    left = set(load_humanoid()["joints"]) - set(m.bones)
    assert left == {"spine1", "spine2", "clavicle_l", "clavicle_r", "jaw", "eye_l", "eye_r"}
    assert auto_map(sk).preset == "deepmimic"


def test_preset_agrees_with_the_character_file():
    ch = json.loads(data_file(f"{CLIPS}/humanoid3d_character.txt").read_text())
    joints = ch["Skeleton"]["Joints"]
    mine = deepmimic_character()
    assert mine["names"] == [j["Name"] for j in joints]
    assert mine["parents"] == [j["Parent"] for j in joints]
    assert mine["types"] == [j["Type"] for j in joints]
    assert mine["offsets"] == [[j["AttachX"], j["AttachY"], j["AttachZ"]] for j in joints]
    assert all(j[f"AttachTheta{a}"] == 0 for j in joints for a in "XYZ")
    box = next(b for b in ch["BodyDefs"] if b["Name"] == "right_ankle")
    assert mine["foot_box"]["size"] == [box["Param0"], box["Param1"], box["Param2"]]


# --- axes and joints ------------------------------------------------------------------


def test_rest_clip_is_the_rest_skeleton_and_keeps_the_root_path(tmp_path):
    frames = [_rest_frame(root=(0.1 * i, 0.88, 0.0)) for i in range(4)]
    m = read_deepmimic(_write(tmp_path / "rest.txt", frames))
    assert (m.num_frames, m.fps, m.name) == (4, 30.0, "rest")
    # DeepMimic +X (forward) is Blender -Y, its +Y (up) Blender +Z
    assert np.allclose(m.root_positions, [[0.0, -0.1 * i, 0.88] for i in range(4)])
    rest = m.skeleton.rest_positions() - m.skeleton.rest_positions()[0]
    assert np.allclose(m.world_positions() - m.root_positions[:, None], rest[None], atol=1e-12)


def test_knees_bend_backwards_and_elbows_forwards(tmp_path):
    frame = _set(_set(_rest_frame(), "right_knee", [-1.0]), "left_elbow", [1.0])
    m = read_deepmimic(_write(tmp_path / "bend.txt", [frame]))
    knee, ankle = _world(m, "right_knee")[0], _world(m, "right_ankle")[0]
    assert ankle[1] - knee[1] == pytest.approx(0.40987 * np.sin(1.0), abs=1e-9)  # +Y: behind the knee
    assert knee[2] - ankle[2] == pytest.approx(0.40987 * np.cos(1.0), abs=1e-9)
    elbow, wrist = _world(m, "left_elbow")[0], _world(m, "left_wrist")[0]
    assert wrist[1] - elbow[1] == pytest.approx(-0.258947 * np.sin(1.0), abs=1e-9)  # -Y: in front
    # the neutral toes and fingers follow their joints
    assert np.linalg.norm(_world(m, "right_toe")[0] - ankle) == pytest.approx(
        np.linalg.norm(m.skeleton.offsets[m.skeleton.index("right_toe")]))


def test_root_turn_about_up_turns_the_character_to_its_left(tmp_path):
    c, s = np.cos(np.pi / 4), np.sin(np.pi / 4)  # +90 degrees about DeepMimic's up (+Y)
    m = read_deepmimic(_write(tmp_path / "turn.txt", [_set(_rest_frame(), "root", [c, 0.0, s, 0.0])]))
    fwd, right = _heading(m)
    assert np.allclose(fwd[0], [1.0, 0.0, 0.0], atol=1e-12)  # facing the rest pose's left (+X)
    assert np.allclose(right[0], [0.0, -1.0, 0.0], atol=1e-12)


def test_near_unit_quaternions_are_normalised(tmp_path):
    frame = _set(_set(_rest_frame(), "root", [0.58, 0.0, 0.0, 0.0]), "chest", [0.0, 0.0, 0.0, 1.7])
    m = read_deepmimic(_write(tmp_path / "norm.txt", [frame]))
    assert np.allclose(np.linalg.norm(m.rotations, axis=-1), 1.0)
    chest = m.rotations[0, m.skeleton.index("chest")]
    assert np.allclose(np.abs(chest), [0.0, 1.0, 0.0, 0.0])  # 180 degrees about DeepMimic's Z = Blender's X


# --- the rate -----------------------------------------------------------------------


@pytest.mark.parametrize("dt,fps", [(0.016666, 60.0), (0.0333333, 30.0), (0.041667, 24.0), (0.0625, 16.0),
                                    (0.008333, 120.0), (0.02, 50.0), (0.0333, 1 / 0.0333)])
def test_fps_is_one_over_dt_snapped_to_whole_numbers(tmp_path, dt, fps):
    frames = [_rest_frame(dt) for _ in range(3)]
    frames[-1][0] = 0.0  # DeepMimic's last frame lasts 0 s
    m = read_deepmimic(_write(tmp_path / "rate.txt", frames))
    assert m.fps == pytest.approx(fps, rel=1e-12) and m.num_frames == 3
    assert m.skeleton.meta["deepmimic"] == {"loop": "wrap", "source": str(tmp_path / "rate.txt"),
                                            "file_fps": pytest.approx(1 / dt), "resampled": False}


def test_frames_of_different_lengths_are_resampled_to_the_typical_rate(tmp_path):
    dts = [0.1, 0.2, 0.1, 0.1, 0.0]  # frame 1 lasts two frames: times 0, .1, .3, .4, .5 s
    frames = [_rest_frame(dt, root=(x, 0.88, 0.0)) for dt, x in zip(dts, (0.0, 1.0, 3.0, 4.0, 5.0))]
    frames[1] = _set(frames[1], "right_knee", [-1.0])
    frames[2] = _set(frames[2], "right_knee", [-0.5])
    m = read_deepmimic(_write(tmp_path / "uneven.txt", frames))
    assert m.fps == 10.0 and m.num_frames == 6 and m.skeleton.meta["deepmimic"]["resampled"]
    assert np.allclose(-m.root_positions[:, 1], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0])  # linear in time
    knee = rotations.to_axis_angle(m.rotations[:, m.skeleton.index("right_knee")])
    assert np.allclose(np.linalg.norm(knee, axis=1), [0.0, 1.0, 0.75, 0.5, 0.0, 0.0])  # slerped


# --- bad files ---------------------------------------------------------------------------


def _frames_with(mutate, count=3):
    frames = [_rest_frame() for _ in range(count)]
    mutate(frames)
    return json.dumps({"Frames": frames})


def _quat(frame_index, joint, values):
    return lambda fr: _set(fr[frame_index], joint, values)


BAD_TEXTS = [
    ("not-json", "{oops", "not JSON (Expecting property name"),
    ("json-list", "[1, 2]", "top level is a list, not an object with \"Frames\""),
    ("json-string", "\"Frames\"", "top level is a string"),
    ("no-frames-key", "{\"Loop\": \"wrap\"}", "JSON without \"Frames\" (keys: Loop)"),
    ("character-file", "{\"Skeleton\": {\"Joints\": []}, \"BodyDefs\": []}", "a DeepMimic character"),
    ("frames-not-list", "{\"Frames\": {\"0\": []}}", "\"Frames\" is an object, not a list"),
    ("frames-empty", "{\"Frames\": []}", "no frames"),
    ("frame-not-list", "{\"Frames\": [3]}", "frame 0 is a number, not a list of 44 numbers"),
    ("frame-short", _frames_with(lambda fr: fr[2].pop()), "frame 2 holds 43 numbers, a humanoid3d frame 44"),
    ("frame-long", _frames_with(lambda fr: fr[1].append(0.0)), "frame 1 holds 45 numbers"),
    ("string-number", _frames_with(lambda fr: fr[1].__setitem__(5, "0.5")),
     "frame 1, number 5 (the root quaternion) is a string, not a number"),
    ("bool-number", _frames_with(lambda fr: fr[0].__setitem__(20, True)),
     "frame 0, number 20 (right_knee's angle) is true/false"),
    ("null-number", _frames_with(lambda fr: fr[0].__setitem__(1, None)), "number 1 (the root position) is null"),
    ("nested-number", _frames_with(lambda fr: fr[0].__setitem__(0, [[0.1]])), "number 0 (dt) is a list"),
    ("nan", _frames_with(lambda fr: fr[1].__setitem__(2, float("nan"))),
     "frame 1, number 2 (the root position) is nan"),
    ("infinity", _frames_with(lambda fr: fr[2].__setitem__(9, float("inf"))),
     "frame 2, number 9 (chest's quaternion) is inf"),
    ("overflowing-float", "{\"Frames\": [[1e999" + ", 0" * 43 + "]]}", "frame 0, number 0 (dt) is inf"),
    ("huge-integer", "{\"Frames\": [[1" + "0" * 400 + ", 0" * 43 + "]]}", "number 0 (dt) is too large"),
    ("endless-integer", "{\"Frames\": [[1" + "0" * 5000 + "]]}", "not readable JSON (a number of thousands of digits)"),
    ("dt-zero", _frames_with(lambda fr: fr[0].__setitem__(0, 0.0)), "frame 0 lasts dt = 0 s"),
    ("dt-negative", _frames_with(lambda fr: fr[1].__setitem__(0, -0.03)), "frame 1 lasts dt = -0.03 s"),
    ("dt-last-negative", _frames_with(lambda fr: fr[2].__setitem__(0, -1.0)), "the last frame lasts dt = -1 s"),
    ("dt-in-milliseconds", json.dumps({"Frames": [_rest_frame(33.3) for _ in range(3)]}),
     "frames of 33.3 s are 0.03003 fps, outside RigMind's 1-240 fps"),
    ("dt-tiny", json.dumps({"Frames": [_rest_frame(1e-9) for _ in range(3)]}), "outside RigMind's 1-240 fps"),
    ("zero-quaternion", _frames_with(_quat(1, "left_hip", [0, 0, 0, 0])),
     "frame 1: left_hip holds a zero quaternion, not a rotation"),
    ("zero-root-quaternion", _frames_with(_quat(0, "root", [0, 0, 0, 0])), "frame 0: root holds a zero quaternion"),
    ("big-quaternion", _frames_with(_quat(2, "neck", [5, 0, 0, 0])), "frame 2: neck holds a quaternion of norm 5"),
    ("small-quaternion", _frames_with(_quat(2, "neck", [0.3, 0, 0, 0])), "quaternion of norm 0.3"),
    ("huge-quaternion", _frames_with(_quat(1, "chest", [1e200, 0, 0, 0])),
     "frame 1: chest holds a quaternion of norm 1e+200"),
    ("far-root", _frames_with(lambda fr: fr[2].__setitem__(3, 2e4)),
     "frame 2: the root position [0.0, 0.88, 20000.0] is past +-10000; give positions in metres"),
    ("knee-in-degrees", _frames_with(lambda fr: _set(fr[1], "left_knee", [-45.0])),
     "frame 1: the left_knee angle [-45.0] is past +-12.5664; give angles in radians"),
    ("deep-nesting", "{\"Frames\": " + "[" * 100_000 + "]" * 100_000 + "}", "JSON nested deeper than RigMind reads"),
    ("deep-object", "{\"a\": " * 100_000 + "1" + "}" * 100_000, "JSON nested deeper than RigMind reads"),
]


@pytest.mark.parametrize("name,text,expect", BAD_TEXTS, ids=[b[0] for b in BAD_TEXTS])
def test_bad_files_are_one_line_user_errors(tmp_path, name, text, expect):
    path = tmp_path / f"{name}.txt"
    path.write_text(text)
    with pytest.raises(DeepMimicFileError) as e:
        read_deepmimic(path)
    msg = str(e.value)
    assert expect in msg, msg
    assert isinstance(e.value, UserError) and "\n" not in msg
    assert msg.startswith(f"{path}: ") and "; " in msg  # the file, the problem; the fix


def test_not_utf8_and_not_a_file(tmp_path):
    (tmp_path / "bin.txt").write_bytes(b"{\xff\xfe\x00 binary")
    with pytest.raises(DeepMimicFileError, match="not text \\(byte 1 is not UTF-8\\)"):
        read_deepmimic(tmp_path / "bin.txt")
    (tmp_path / "dir.txt").mkdir()
    with pytest.raises(DeepMimicFileError, match="not a file"):
        read_deepmimic(tmp_path / "dir.txt")
    with pytest.raises(FileNotFoundError):
        read_deepmimic(tmp_path / "absent.txt")


def test_a_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"Frames": [_rest_frame()]}).encode())
    assert looks_like_deepmimic(path)
    assert read_deepmimic(path).num_frames == 1


def test_content_sniff(tmp_path):
    (tmp_path / "notes.txt").write_text("just some notes {\n")
    (tmp_path / "list.json").write_text("[1, 2]")
    (tmp_path / "clip.json").write_text("\n  {\"Frames\": []}")
    assert not looks_like_deepmimic(tmp_path / "notes.txt")
    assert not looks_like_deepmimic(tmp_path / "list.json")
    assert looks_like_deepmimic(tmp_path / "clip.json")


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path):
    import tracemalloc

    path = tmp_path / "huge.txt"
    with open(path, "wb") as fh:  # sparse: no disk is used
        fh.truncate(deepmimic_motion.MAX_FILE_BYTES + 1)
    tracemalloc.start()
    try:
        with pytest.raises(DeepMimicFileError, match="64 MB, more than RigMind's 64 MB for a DeepMimic clip"):
            read_deepmimic(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1024 * 1024, peak


def test_frame_count_and_resampled_length_are_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(deepmimic_motion, "MAX_FRAMES", 10)
    path = _write(tmp_path / "long.txt", [_rest_frame() for _ in range(11)])
    with pytest.raises(DeepMimicFileError, match="11 frames, more than RigMind's 10"):
        read_deepmimic(path)
    # a lying dt: one frame of ~9 hours among 1/30 s frames would resample to a million frames
    frames = [_rest_frame() for _ in range(5)]
    frames[2][0] = 30_000.0
    with pytest.raises(DeepMimicFileError, match=r"the frames last 30000 s, 900004 frames at 30 fps, more than"):
        read_deepmimic(_write(tmp_path / "liar.txt", frames))


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8)
_EDITS = st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from("idr"), st.text("[]{},.:-e0123456789\"aN", max_size=3)),
                  max_size=6)


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("deepmimic_fuzz")


def test_mangled_clips_raise_nothing_but_deepmimic_errors(fuzz_dir):
    """A few hundred clips with a value swapped for any JSON value and
    characters inserted, deleted or replaced: each reads as a finite clip or
    is a DeepMimicFileError, never another exception."""
    @settings(max_examples=300, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(frame=st.integers(0, 2), number=st.integers(0, 45), value=_JSON_VALUES, edits=_EDITS)
    def run(frame, number, value, edits):
        frames = [_rest_frame() for _ in range(3)]
        frames[frame][number % len(frames[frame])] = value
        text = json.dumps({"Loop": "wrap", "Frames": frames})
        for at, op, chars in edits:
            at %= len(text) + 1
            keep = {"i": at, "d": at + len(chars) + 1, "r": at + len(chars)}[op]
            text = text[:at] + ("" if op == "d" else chars) + text[keep:]
        path = fuzz_dir / "clip.txt"
        path.write_text(text)
        try:
            m = read_deepmimic(path)
        except DeepMimicFileError as e:
            assert "\n" not in str(e)
            return
        assert np.all(np.isfinite(m.rotations)) and np.all(np.isfinite(m.root_positions))

    run()


# --- the real clips ------------------------------------------------------------------------


# SOURCE.md's table: frames @ fps
REAL = {"jump": (107, 60), "walk": (39, 30), "run": (25, 30), "backflip": (29, 16), "spin": (107, 24),
        "dance_spin": (122, 120), "stealthy_walk0": (1587, 24), "crawl": (177, 60), "kick": (47, 30)}


@pytest.mark.parametrize("clip", sorted(REAL))
def test_real_clips_read_at_their_rates(clip):
    m = read_deepmimic(data_file(f"{CLIPS}/humanoid3d_{clip}.txt"))
    assert (m.num_frames, m.fps) == REAL[clip]
    assert np.all(np.isfinite(m.rotations)) and np.allclose(np.linalg.norm(m.rotations, axis=-1), 1.0)
    assert not m.skeleton.meta["deepmimic"]["resampled"]


def test_the_roll_with_a_double_frame_is_resampled():
    m = read_deepmimic(data_file(f"{CLIPS}/humanoid3d_roll.txt"))
    assert m.fps == 60.0 and m.skeleton.meta["deepmimic"]["resampled"]
    # 119 frames of 0.016666 s and one of 0.032666 s: 2.0499 s, whole frames up to 2.0 s at 60 fps
    assert m.num_frames == 121


def test_jump_rises_25_cm_and_travels_1_07_m_forward():
    m = read_deepmimic(data_file(f"{CLIPS}/humanoid3d_jump.txt"))
    hips = _world(m, "root")
    fwd, _ = _heading(m)
    assert hips[:, 2].max() - hips[0, 2] == pytest.approx(0.247, abs=0.005)
    travel = hips[-1] - hips[0]
    assert travel @ fwd[0] == pytest.approx(1.06, abs=0.02)  # forward, where the character faces
    assert abs(travel[2]) < 1e-9


def test_walk_feet_on_the_ground_right_on_the_right_knees_backwards():
    m = read_deepmimic(data_file(f"{CLIPS}/humanoid3d_walk.txt"))
    fwd, right = _heading(m)
    toes = np.stack([_world(m, "right_toe")[:, 2], _world(m, "left_toe")[:, 2]], 1)
    ankles = np.stack([_world(m, "right_ankle")[:, 2], _world(m, "left_ankle")[:, 2]], 1)
    sole_below_toe = 0.25 * deepmimic_character()["foot_box"]["size"][1]
    lowest = toes.min(1) - sole_below_toe  # the sole under the lowest ball of a foot
    assert lowest.min() > -0.01  # never under the floor
    assert np.all(lowest < 0.03)  # a foot on it in every frame of a walk
    assert ankles.min() > 0.04
    # the character's right is -X at rest: the right leg stays on the right of its heading
    for a, b in (("right_hip", "left_hip"), ("right_ankle", "left_ankle")):
        side = np.einsum("fi,fi->f", _world(m, a) - _world(m, b), right)
        assert np.all(side > 0.05), (a, side.min())
    assert (m.root_positions[-1] - m.root_positions[0]) @ fwd[0] > 1.0  # walks forward
    for s in ("right", "left"):
        hip, knee, ankle = (_world(m, f"{s}_{j}") for j in ("hip", "knee", "ankle"))
        thigh = (knee - hip) / np.linalg.norm(knee - hip, axis=1, keepdims=True)
        shin = ankle - knee
        bend = shin - np.sum(shin * thigh, 1, keepdims=True) * thigh
        bent = np.linalg.norm(bend, axis=1) > 0.1  # knees bent by more than ~15 degrees
        assert bent.sum() > 5 and np.all(np.einsum("fi,fi->f", bend[bent], fwd[bent]) < 0)  # shin behind


def test_jump_retargets_onto_smplx_with_every_chain():
    """Pure retargeting onto the SMPL-X template (55 joints): every mapped
    chain driven, the hips' rise and travel scaled by the leg ratio."""
    m = read_deepmimic(data_file(f"{CLIPS}/humanoid3d_jump.txt"))
    src_map = match_preset(m.skeleton, "deepmimic").bones
    target = smplx_rest_skeleton()
    r = retarget(m, src_map, target, match_preset(target, "smplx").bones, RetargetConfig())
    pos = r.motion.world_positions()
    assert np.all(np.isfinite(pos))
    pelvis = pos[:, target.index("pelvis")]
    k = r.leg_scale
    assert 0.8 < k < 1.1
    assert pelvis[:, 2].max() - pelvis[0, 2] == pytest.approx(0.247 * k, abs=0.02)
    assert -(pelvis[-1, 1] - pelvis[0, 1]) == pytest.approx(1.066 * k, abs=0.03)
    for ankle, toe in (("left_ankle", "left_foot"), ("right_ankle", "right_foot")):
        assert 0.03 < pos[0, target.index(ankle), 2] < 0.1  # standing at the start
        assert pos[:, target.index(toe), 2].min() > -0.01  # never under the floor
