"""BVH reader/writer: synthetic files, round trips, the real data folders, errors."""

from __future__ import annotations

import gzip
import warnings

import numpy as np
import pytest

from conftest import data_file
from rigmind.backend import axes
from rigmind.backend import bvh, rotations
from rigmind.backend.errors import UserError
from rigmind.backend.bvh import BVHError, dumps_bvh, guess_units, loads_bvh, read_bvh, write_bvh
from rigmind.backend.motion import Motion
from rigmind.backend.skeleton import Skeleton

# A Y-up chain in metres: root at y=1, a child 1 m along +X with an End Site.
SIMPLE = """HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Arm
  {
    OFFSET 1 0 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 0.5 0
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.0333333
0 1 0 0 0 0 0 0 0
0 1 0 0 0 90 0 0 0
"""


# Position and rotation channels mixed, and joints with 0, 1 and 2 channels.
INTERLEAVED = """HIERARCHY
ROOT root {
  OFFSET 0 0 0
  CHANNELS 6 Yrotation Zposition Xrotation Xposition Zrotation Yposition
  JOINT a {
    OFFSET 0 1 0
    CHANNELS 1 Zrotation
    JOINT b {
      OFFSET 0 1 0
      CHANNELS 0
      JOINT c {
        OFFSET 0 1 0
        CHANNELS 2 Xrotation Yposition
        End Site { OFFSET 0 1 0 }
      }
    }
  }
}
MOTION
Frames: 1
Frame Time: 0.01
30 3 40 1 50 2   90   5 7
"""


def random_motion(frames=12, seed=0, rest=False, translations=False) -> Motion:
    """A branching 7-joint clip in Blender space (metres), random rotations."""
    rng = np.random.default_rng(seed)
    parents = [-1, 0, 1, 2, 0, 4, 1]
    offsets = rng.uniform(-0.3, 0.3, size=(7, 3))
    offsets[0] = (0.0, 0.0, 0.9)
    tails = np.zeros((7, 3))
    for leaf in (3, 5, 6):
        tails[leaf] = rng.uniform(-0.1, 0.1, size=3)
    rest_rot = rotations.normalize(rng.normal(size=(7, 4))) if rest else None
    sk = Skeleton([f"j{i}" for i in range(7)], parents, offsets, rest_rot, tails)
    rot = rotations.normalize(rng.normal(size=(frames, 7, 4)))
    root = rng.normal(size=(frames, 3)) * 0.5
    tr = None
    if translations:
        tr = offsets[None] + rng.normal(scale=0.05, size=(frames, 7, 3))
    return Motion(sk, rot, root, 30.0, tr, name="rand")


def end_positions(m: Motion) -> np.ndarray:
    rot, pos = m.world()
    return pos + rotations.rotate(rot, m.skeleton.tails)


def same_world(back: Motion, src: Motion, atol=1e-6):
    """World joint and end-site positions equal, joints matched by name (a
    written file lists joints depth first, which may reorder them)."""
    idx = [back.skeleton.index(n) for n in src.skeleton.names]
    assert sorted(back.skeleton.names) == sorted(src.skeleton.names)
    np.testing.assert_allclose(back.world_positions()[:, idx], src.world_positions(), atol=atol)
    np.testing.assert_allclose(end_positions(back)[:, idx], end_positions(src), atol=atol)


# --- synthetic files --------------------------------------------------------------


def test_simple_file_to_blender_space():
    m = loads_bvh(SIMPLE, units="m", name="simple")
    sk = m.skeleton
    assert sk.names == ["Hips", "Arm"]
    assert list(sk.parents) == [-1, 0]
    assert m.fps == 30.0 and m.num_frames == 2 and m.name == "simple"
    np.testing.assert_allclose(sk.offsets[1], [1, 0, 0])
    # End Site (0, 0.5, 0) Y-up -> Blender (0, 0, 0.5)
    np.testing.assert_allclose(sk.tails[1], [0, 0, 0.5], atol=1e-15)
    np.testing.assert_allclose(sk.rest_rotations, rotations.identity((2,)))
    assert m.translations is None
    pos = m.world_positions()
    np.testing.assert_allclose(pos[0], [[0, 0, 1], [1, 0, 1]], atol=1e-12)
    # Yrotation 90 (Y-up) turns +X toward -Z (Y-up) = +Y in Blender
    np.testing.assert_allclose(pos[1], [[0, 0, 1], [0, 1, 1]], atol=1e-12)
    # that is a +90 degree turn about Blender's Z
    np.testing.assert_allclose(rotations.to_matrix(m.rotations[1, 0]) @ [1, 0, 0], [0, 1, 0], atol=1e-12)
    meta = sk.meta["bvh"]
    assert meta["channels"][1] == ["Zrotation", "Xrotation", "Yrotation"]
    assert meta["up"] == "Y" and meta["units"] == "m" and meta["scale"] == 1.0
    assert meta["end_sites"] == [False, True]


def test_up_z_and_units_and_end_sites():
    m = loads_bvh(SIMPLE, units="cm", up="Z", keep_end_sites=False)
    np.testing.assert_allclose(m.world_positions()[0], [[0, 0.01, 0], [0.01, 0.01, 0]], atol=1e-15)
    np.testing.assert_allclose(m.skeleton.tails, 0.0)
    m2 = loads_bvh(SIMPLE, units=0.5)
    np.testing.assert_allclose(m2.skeleton.offsets[1], [0.5, 0, 0])
    assert m2.skeleton.meta["bvh"]["scale"] == 0.5
    with pytest.raises(ValueError):
        loads_bvh(SIMPLE, units="furlong")
    with pytest.raises(ValueError):
        loads_bvh(SIMPLE, up="X")


def test_auto_units_rule():
    assert guess_units(1.8) == "m"
    assert guess_units(30.0) == "cmu"
    assert guess_units(170.0) == "cm"
    assert guess_units(1700.0) == "mm"
    # the 1.5 m SIMPLE figure reads as metres; scaled by 100 it reads as cm
    assert loads_bvh(SIMPLE).skeleton.meta["bvh"]["units"] == "m"
    big = SIMPLE.replace("OFFSET 1 0 0", "OFFSET 150 0 0").replace("OFFSET 0 0.5 0", "OFFSET 0 170 0")
    m = loads_bvh(big)
    assert m.skeleton.meta["bvh"]["units"] == "cm"
    np.testing.assert_allclose(m.skeleton.offsets[1], [1.5, 0, 0])
    # a 30-unit figure is taken for CMU units (0.056444 m)
    cmu = SIMPLE.replace("OFFSET 0 0.5 0", "OFFSET 0 30 0")
    np.testing.assert_allclose(loads_bvh(cmu).skeleton.tails[1], [0, 0, 30 * 0.056444])
    np.testing.assert_allclose(m.root_positions[0], [0, 0, 0.01])


def test_auto_units_ignore_end_sites_far_outside_the_joints():
    """A 170 cm figure whose head-top end site is 2310 units long (the
    display length Blender's glTF import gives X Bot's leaf bone) still
    reads as centimetres, not millimetres; end sites within the joints'
    scale still count."""
    def figure(end):
        return ("HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation "
                "Yrotation\n JOINT Spine\n {\n  OFFSET 0 20 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n  JOINT Head\n"
                "  {\n   OFFSET 0 150 0\n   CHANNELS 3 Zrotation Xrotation Yrotation\n   End Site\n   {\n    OFFSET 0 "
                f"{end} 0\n   }}\n  }}\n }}\n}}\nMOTION\nFrames: 1\nFrame Time: 0.0333333\n0 90 0 0 0 0 0 0 0 0 0 0\n")

    assert loads_bvh(figure(2310)).skeleton.meta["bvh"]["units"] == "cm"
    assert loads_bvh(figure(20)).skeleton.meta["bvh"]["units"] == "cm"
    assert loads_bvh(figure(1000)).skeleton.meta["bvh"]["units"] == "cm"
    # a figure in millimetres with a sane head-top still reads as mm
    assert loads_bvh(figure(200).replace("OFFSET 0 150 0", "OFFSET 0 1500 0")).skeleton.meta["bvh"]["units"] == "mm"


@pytest.mark.parametrize("order", ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"])
def test_channel_orders_give_the_same_world(order):
    src = random_motion(seed=1)
    text = dumps_bvh(src, order=order, units="m", decimals=10)
    assert f"CHANNELS 3 {' '.join(a + 'rotation' for a in order)}" in text
    back = loads_bvh(text, units="m")
    same_world(back, src, atol=1e-8)


def test_interleaved_partial_and_missing_channels():
    text = INTERLEAVED
    m = loads_bvh(text, units="m", up="Z")
    assert m.fps == 100.0
    # root: rotations listed Y, X, Z -> intrinsic "YXZ"; position (1, 2, 3)
    np.testing.assert_allclose(m.root_positions[0], [1, 2, 3])
    expect = rotations.from_euler(np.deg2rad([30, 40, 50]), "YXZ", intrinsic=True)
    assert abs(rotations.dot(m.rotations[0, 0], expect)) > 1 - 1e-12
    np.testing.assert_allclose(m.rotations[0, 1], rotations.from_euler(np.deg2rad([0, 0, 90]), "XYZ"), atol=1e-12)
    np.testing.assert_allclose(m.rotations[0, 2], rotations.identity(), atol=1e-15)
    # joint c's Yposition replaces the offset's y only
    assert m.translations is not None
    np.testing.assert_allclose(m.translations[0, 3], [0, 7, 0])
    np.testing.assert_allclose(m.translations[0, 1], [0, 1, 0])
    assert m.skeleton.meta["bvh"]["channels"][3] == ["Xrotation", "Yposition"]


def test_position_channels_replace_offsets():
    text = SIMPLE.replace(
        "CHANNELS 3 Zrotation Xrotation Yrotation",
        "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation",
    ).replace("0 1 0 0 0 0 0 0 0\n0 1 0 0 0 90 0 0 0", "0 1 0 0 0 0 2 0 0 0 0 0\n0 1 0 0 0 0 3 0 0 0 0 0")
    m = loads_bvh(text, units="m")
    pos = m.world_positions()
    np.testing.assert_allclose(pos[:, 1], [[2, 0, 1], [3, 0, 1]], atol=1e-12)
    np.testing.assert_allclose(m.skeleton.offsets[1], [1, 0, 0])  # rest pose keeps the OFFSET


def test_crlf_tabs_same_line_braces_and_multiple_roots():
    text = (
        "HIERARCHY\r\nROOT A {\r\n\tOFFSET 0 0 0\r\n\tCHANNELS 3 Xposition Yposition Zposition\r\n"
        "\tEnd Site {\r\n\t\tOFFSET 0 1 0\r\n\t}\r\n}\r\n"
        "ROOT B\r\n{\r\n\tOFFSET 5 0 0\r\n\tCHANNELS 3 Zrotation Xrotation Yrotation\r\n"
        "\tEnd Site\r\n\t{\r\n\t\tOFFSET 0 1 0\r\n\t}\r\n}\r\n"
        "MOTION\r\nFrames:\t2\r\nFrame Time:\t0.5\r\n1 2 3 0 0 0\r\n4 5 6 0 0 0\r\n\r\n"
    )
    m = loads_bvh(text, units="m")
    assert m.skeleton.names == ["A", "B"] and list(m.skeleton.parents) == [-1, -1]
    assert m.fps == 2.0
    np.testing.assert_allclose(m.world_positions()[1], [[4, -6, 5], [5, 0, 0]], atol=1e-12)


def test_gzip_read_and_write(tmp_out):
    p = tmp_out / "clip.bvh.gz"
    p.write_bytes(gzip.compress(SIMPLE.encode()))
    m = read_bvh(p, units="m")
    assert m.name == "clip" and m.num_frames == 2
    # gzip detected by content even when the name does not say so
    p2 = tmp_out / "disguised.bvh"
    p2.write_bytes(gzip.compress(SIMPLE.encode()))
    assert read_bvh(p2, units="m").name == "disguised"
    out = write_bvh(tmp_out / "out.bvh.gz", m)
    assert out.read_bytes()[:2] == b"\x1f\x8b"
    back = read_bvh(out, units="cm")
    assert back.name == "out"
    np.testing.assert_allclose(back.world_positions(), m.world_positions(), atol=1e-6)


@pytest.mark.parametrize("up,units", [("Y", "cm"), ("Z", "m"), ("Y", "mm")])
def test_write_read_round_trip(tmp_out, up, units):
    src = random_motion(seed=2)
    p = write_bvh(tmp_out / "rt.bvh", src, up=up, units=units)
    text = p.read_text()
    assert "End Site" in text and "Frame Time: 0.03333333333" in text
    back = read_bvh(p, up=up, units=units)
    assert back.fps == 30.0 and back.num_frames == src.num_frames
    same_world(back, src)
    # the file is in the requested axes
    yup = read_bvh(p, up="Z", units=units)
    idx = [yup.skeleton.index(n) for n in src.skeleton.names]
    expect = src.world_positions() if up == "Z" else axes.positions_blender_to_yup(src.world_positions())
    np.testing.assert_allclose(yup.world_positions()[:, idx], expect, atol=1e-6)


def test_write_non_identity_rest(tmp_out):
    src = random_motion(seed=3, rest=True)
    back = read_bvh(write_bvh(tmp_out / "rest.bvh", src), units="cm")
    np.testing.assert_allclose(back.skeleton.rest_rotations, rotations.identity((7,)), atol=1e-12)
    idx = [back.skeleton.index(n) for n in src.skeleton.names]
    np.testing.assert_allclose(back.skeleton.rest_positions()[idx], src.skeleton.rest_positions(), atol=1e-6)
    same_world(back, src)


def test_translations_all_channels_and_warning(tmp_out):
    src = random_motion(seed=4, translations=True)
    back = read_bvh(write_bvh(tmp_out / "all.bvh", src, position_channels="all"), units="cm")
    assert back.translations is not None
    same_world(back, src)
    with pytest.warns(UserWarning, match="position_channels='all'"):
        dumps_bvh(src, position_channels="root")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dumps_bvh(random_motion(seed=4), position_channels="root")


def test_writer_reproduces_source_layout():
    m = loads_bvh(INTERLEAVED, units="m", up="Z")
    text = dumps_bvh(m, up=None, units=None, order=None, position_channels=None, decimals=8)
    assert "CHANNELS 6 Yrotation Zposition Xrotation Xposition Zrotation Yposition" in text
    back = loads_bvh(text, units="m", up="Z")
    np.testing.assert_allclose(back.world_positions(), m.world_positions(), atol=1e-8)


def test_bad_files(tmp_out):
    assert issubclass(BVHError, ValueError)
    cases = {
        "no_motion": (SIMPLE.split("MOTION")[0], "no MOTION"),
        "no_frame_time": (SIMPLE.split("Frame Time")[0], "truncated MOTION"),
        "short": (SIMPLE.replace("Frames: 2", "Frames: 3"), "truncated MOTION"),
        "cut_row": (SIMPLE.rsplit(" 0 0", 1)[0] + "\n", "truncated MOTION"),
        "extra": (SIMPLE.replace("Frames: 2", "Frames: 1"), "frame count mismatch"),
        "channel": (SIMPLE.replace("Xrotation Yrotation\n    End", "Xrot Yrotation\n    End"), "unknown channel"),
        "nan_text": (SIMPLE.replace("0 1 0 0 0 90", "0 1 0 0 0 abc"), "non-numeric"),
        "row_len": (SIMPLE.replace("0 1 0 0 0 0 0 0 0", "0 1 0 0 0 0 0 0 0 0"), "values, expected 9"),
        "braces": (SIMPLE.replace("  }\n}\nMOTION", "  }\nMOTION"), "closed"),
        "bad_time": (SIMPLE.replace("0.0333333", "-1"), "Frame Time"),
        "empty": ("", "no MOTION"),
    }
    for name, (text, msg) in cases.items():
        p = tmp_out / f"{name}.bvh"
        p.write_text(text)
        with pytest.raises(BVHError, match=msg) as ei:
            read_bvh(p)
        assert str(p) in str(ei.value), name
        if name not in ("empty",):
            assert ei.value.line is not None and f":{ei.value.line}:" in str(ei.value), name
    # the error points at the offending line
    with pytest.raises(BVHError) as ei:
        loads_bvh(cases["nan_text"][0])
    assert ei.value.line == 20
    with pytest.raises(BVHError) as ei:
        loads_bvh(cases["channel"][0])
    assert ei.value.line == 9


def test_binary_and_damaged_files_are_reported_in_plain_ascii(tmp_out):
    junk = tmp_out / "junk.bvh"
    junk.write_bytes(np.random.default_rng(0).integers(0, 256, 200_000, dtype=np.uint8).tobytes())
    with pytest.raises(BVHError, match="binary data, not BVH text") as ei:
        read_bvh(junk)
    assert ei.value.line is None
    # One damaged row in a text file: the bad bytes are quoted escaped, never raw.
    damaged = tmp_out / "damaged.bvh"
    damaged.write_bytes(SIMPLE.replace("0 1 0 0 0 90", "0 1 0 0 0 \xff\xfe\x07\x1b[2J").encode("latin-1"))
    with pytest.raises(BVHError, match="non-numeric") as ei:
        read_bvh(damaged)
    message = str(ei.value)
    assert message.isascii() and message.isprintable(), message
    # A long token is cut short in the message.
    long_token = tmp_out / "long.bvh"
    long_token.write_text(SIMPLE.replace("HIERARCHY", "HIERARCHY\n" + "x" * 5000, 1))
    with pytest.raises(BVHError) as ei:
        read_bvh(long_token)
    assert len(str(ei.value)) < len(str(long_token)) + 200


# --- real data ----------------------------------------------------------------------

BANDAI = "bandai_namco_d2_locomotion/bvh"
BANDAI_NAMES = [
    "joint_Root", "Hips", "Spine", "Chest", "Neck", "Head", "Shoulder_L", "UpperArm_L", "LowerArm_L",
    "Hand_L", "Shoulder_R", "UpperArm_R", "LowerArm_R", "Hand_R", "UpperLeg_L", "LowerLeg_L", "Foot_L",
    "Toes_L", "UpperLeg_R", "LowerLeg_R", "Foot_R", "Toes_R",
]


def _header_frames(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as fh:
        for line in fh:
            if line.startswith("Frames:"):
                return int(line.split()[1])
    raise AssertionError("no Frames line")


def _bandai_sample(data_dir, k=6):
    files = sorted((data_dir / BANDAI).glob("*.bvh.gz"))
    if not files:
        pytest.skip(f"no Bandai files under {data_dir / BANDAI}")
    return files[:: max(1, len(files) // k)][:k]


def test_bandai_reads(data_dir):
    for f in _bandai_sample(data_dir):
        m = read_bvh(f)
        sk = m.skeleton
        assert sk.names == BANDAI_NAMES, f
        assert m.fps == 30.0 and m.num_frames == _header_frames(f)
        assert sk.meta["bvh"]["units"] == "cm" and sk.meta["bvh"]["up"] == "Y"
        assert all(len(c) == 6 for c in sk.meta["bvh"]["channels"])
        assert m.translations is not None and m.translations.shape == (m.num_frames, 22, 3)
        assert m.name == f.name[: -len(".bvh.gz")]
        pos = m.world_positions()
        hips = pos[:, sk.index("Hips")]
        assert 0.8 <= np.median(hips[:, 2]) <= 1.1, (f, np.median(hips[:, 2]))
        # Z-up: the head is above both feet in every frame
        head = pos[:, sk.index("Head"), 2]
        feet_l, feet_r = pos[:, sk.index("Foot_L"), 2], pos[:, sk.index("Foot_R"), 2]
        assert np.all(head > np.maximum(feet_l, feet_r) + 0.3), f
        assert np.median(head - np.minimum(feet_l, feet_r)) > 1.0, f
        assert np.all(np.isfinite(pos))


def test_bandai_write_read_round_trip(data_dir, tmp_out):
    f = _bandai_sample(data_dir, 1)[0]
    m = read_bvh(f)
    # reproduce the source layout (6 channels everywhere, cm, Y-up)
    p = write_bvh(tmp_out / "bandai.bvh.gz", m, up=None, units=None, order=None, position_channels=None)
    with gzip.open(p, "rt") as fh:
        text = fh.read()
    assert text.count("CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation") == 22
    back = read_bvh(p)
    np.testing.assert_allclose(back.world_positions(), m.world_positions(), atol=1e-6)
    # and a plain ZXY, root-only-positions file
    back2 = read_bvh(write_bvh(tmp_out / "b2.bvh", m.slice(0, 20), position_channels="all", order="XYZ"))
    np.testing.assert_allclose(back2.world_positions(), m.slice(0, 20).world_positions(), atol=1e-6)


GAMES105 = ["idle", "labS_motion", "run_forward", "walkF", "walk_and_ture_right", "walk_and_turn_left", "walk_forward"]


@pytest.mark.parametrize("stem", GAMES105)
def test_games105_reads(data_dir, stem):
    f = data_file(f"games105_locomotion/{stem}.bvh")
    m = read_bvh(f)
    assert m.num_frames == _header_frames(f)
    assert m.fps in (60.0, 100.0)
    pos = m.world_positions()
    assert np.all(np.isfinite(pos))
    if stem != "labS_motion":  # the 20-joint course skeleton, in metres
        assert len(m.skeleton) == 20 and m.skeleton.meta["bvh"]["units"] == "m"
    else:  # a Mixamo skeleton in cm
        assert m.skeleton.meta["bvh"]["units"] == "cm"
    root_z = np.median(pos[:, 0, 2])
    assert 0.7 < root_z < 1.2, root_z
    assert np.median(pos[:, :, 2].max(1)) > root_z + 0.3  # something is above the root: Z is up


@pytest.mark.parametrize("stem", ["131_01", "131_02", "131_03"])
def test_cmu_reads(data_dir, stem):
    f = data_file(f"cmu_131_start_walk_stop/{stem}.bvh")
    m = read_bvh(f)
    assert len(m.skeleton) == 31 and m.fps == 120.0
    assert m.num_frames == _header_frames(f)
    assert m.skeleton.meta["bvh"]["units"] == "cmu"
    pos = m.world_positions()
    sk = m.skeleton
    hips = np.median(pos[:, sk.index("Hips"), 2])
    assert 0.8 <= hips <= 1.1, hips
    assert np.all(pos[:, sk.index("Head"), 2] > pos[:, sk.index("LeftToe"), 2])


def test_duplicate_names_and_empty_clip(tmp_out):
    text = SIMPLE.replace("JOINT Arm", "JOINT Hips")
    m = loads_bvh(text, units="m")
    assert m.skeleton.names == ["Hips", "Hips.001"]
    empty = SIMPLE.replace("Frames: 2", "Frames: 0").split("0 1 0 0")[0]
    e = loads_bvh(empty, units="m")
    assert e.num_frames == 0 and e.rotations.shape == (0, 2, 4)
    back = read_bvh(write_bvh(tmp_out / "empty.bvh", e), units="cm")
    assert back.num_frames == 0 and back.skeleton.names == ["Hips", "Arm"]


# --- axes (the Y-up <-> Blender conversion the reader and writer rely on) ------------


def test_axes_mapping_and_round_trips():
    np.testing.assert_allclose(axes.positions_yup_to_blender([1.0, 2.0, 3.0]), [1.0, -3.0, 2.0])
    np.testing.assert_allclose(axes.positions_blender_to_yup([1.0, -3.0, 2.0]), [1.0, 2.0, 3.0])
    # the basis change is +90 degrees about X, as a quaternion and as a matrix
    np.testing.assert_allclose(rotations.to_matrix(axes.YUP_TO_BLENDER), axes.YUP_TO_BLENDER_MATRIX, atol=1e-15)
    v = np.random.default_rng(0).normal(size=(5, 3))
    np.testing.assert_allclose(rotations.rotate(axes.YUP_TO_BLENDER, v), axes.positions_yup_to_blender(v), atol=1e-15)
    q = rotations.normalize(np.random.default_rng(1).normal(size=(5, 4)))
    qb = axes.quats_yup_to_blender(q)
    np.testing.assert_allclose(rotations.to_matrix(qb), axes.matrices_yup_to_blender(rotations.to_matrix(q)), atol=1e-12)
    np.testing.assert_allclose(axes.quats_blender_to_yup(qb), q, atol=1e-15)
    np.testing.assert_allclose(axes.matrices_blender_to_yup(axes.matrices_yup_to_blender(rotations.to_matrix(q))), rotations.to_matrix(q), atol=1e-12)
    # rotating then converting == converting then rotating
    np.testing.assert_allclose(
        axes.positions_yup_to_blender(rotations.rotate(q, v)), rotations.rotate(qb, axes.positions_yup_to_blender(v)), atol=1e-12
    )


def test_axes_motion_and_skeleton():
    m = random_motion(seed=5, rest=True, translations=True)
    y = axes.motion_blender_to_yup(m)
    np.testing.assert_allclose(y.world_positions(), axes.positions_blender_to_yup(m.world_positions()), atol=1e-12)
    np.testing.assert_allclose(end_positions(y), axes.positions_blender_to_yup(end_positions(m)), atol=1e-12)
    back = axes.motion_yup_to_blender(y)
    np.testing.assert_allclose(back.rotations, m.rotations, atol=1e-15)
    np.testing.assert_allclose(back.translations, m.translations, atol=1e-15)
    sk = axes.skeleton_blender_to_yup(m.skeleton)
    np.testing.assert_allclose(sk.rest_positions(), axes.positions_blender_to_yup(m.skeleton.rest_positions()), atol=1e-12)
    assert axes.to_blender(m, "Z") is m
    assert isinstance(axes.to_blender(sk, "Y"), Skeleton)
    np.testing.assert_allclose(axes.from_blender([0.0, 0.0, 1.0], "Y"), [0.0, 1.0, 0.0])
    with pytest.raises(ValueError):
        axes.to_blender(m, "X")


# --- bounded, forgiving reads (#27) ------------------------------------------------------------


def _clip_text() -> bytes:
    skel = Skeleton(["Hips", "Spine"], np.array([-1, 0]), np.array([[0, 0, 0], [0, 0.2, 0]]))
    rot = np.tile(np.array([1.0, 0, 0, 0]), (12, 2, 1))
    return bvh.dumps_bvh(Motion(skel, rot, np.tile([0.0, 0.0, 1.0], (12, 1)), 30.0)).encode()


def test_a_utf8_byte_order_mark_is_accepted(tmp_path):
    """Windows tools write a BOM before HIERARCHY; the clip reads as without it."""
    plain, bom = tmp_path / "a.bvh", tmp_path / "bom.bvh"
    plain.write_bytes(_clip_text())
    bom.write_bytes(b"\xef\xbb\xbf" + _clip_text())
    a, b = bvh.read_bvh(plain), bvh.read_bvh(bom)
    assert b.skeleton.names == a.skeleton.names
    assert np.array_equal(b.rotations, a.rotations) and np.array_equal(b.root_positions, a.root_positions)


def test_gzip_of_several_members_reads_like_gzip_does(tmp_path):
    text = _clip_text()
    cut = len(text) // 2
    f = tmp_path / "two.bvh.gz"
    f.write_bytes(gzip.compress(text[:cut]) + gzip.compress(text[cut:]))
    assert bvh.read_bvh(f).num_frames == 12


@pytest.mark.parametrize("damage, words", [
    (lambda g: g[:20] + bytes(b ^ 0x5A for b in g[20:60]) + g[60:], "the file is damaged"),
    (lambda g: g[: len(g) // 2], "the file is truncated"),
])
def test_a_damaged_gzip_is_a_user_error(tmp_path, damage, words):
    f = tmp_path / "bad.bvh.gz"
    f.write_bytes(damage(gzip.compress(_clip_text())))
    with pytest.raises(bvh.BVHError) as e:
        bvh.read_bvh(f)
    assert isinstance(e.value, UserError) and words in str(e.value) and "\n" not in str(e.value)


def test_a_gzip_bomb_is_refused_without_inflating_it(tmp_path, monkeypatch):
    """A small .bvh.gz that inflates past the limit is refused; the check
    keeps nothing, so memory stays near one chunk (tracemalloc counts the
    bytes objects), not the limit."""
    import tracemalloc

    monkeypatch.setattr(bvh, "MAX_TEXT_BYTES", 32 * 1024 * 1024)
    f = tmp_path / "bomb.bvh.gz"
    with gzip.open(f, "wb", compresslevel=9) as fh:
        for _ in range(48):
            fh.write(b"0 " * (1 << 19))            # 48 MB of text, ~50 kB on disk
    tracemalloc.start()
    try:
        with pytest.raises(bvh.BVHError, match="inflates to more than 32 MB"):
            bvh.read_bvh(f)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 1024 * 1024, peak


def test_a_plain_file_past_the_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(bvh, "MAX_TEXT_BYTES", 1024)
    f = tmp_path / "big.bvh"
    f.write_bytes(_clip_text() + b" " * 4096)
    with pytest.raises(bvh.BVHError, match="more than 0 MB|RigMind's limit"):
        bvh.read_bvh(f)


# --- long clips: written a block of frames at a time ---------------------------------


@pytest.mark.parametrize("channels", ["moving", "all"])
def test_blocks_of_frames_write_the_same_file(tmp_out, monkeypatch, channels):
    """write_bvh converts and writes BLOCK_FRAMES at a time (bounded memory);
    the quaternion signs and the unwrapped angles carry over between blocks,
    so the file is the one of converting the whole clip at once."""
    m = random_motion(frames=41, seed=4, rest=True, translations=True)
    flips = np.where(np.random.default_rng(5).random(m.rotations.shape[:2]) < 0.4, -1.0, 1.0)
    m = Motion(m.skeleton, m.rotations * flips[..., None], m.root_positions, m.fps, m.translations, name=m.name)
    monkeypatch.setattr(bvh, "BLOCK_FRAMES", 10**6)
    whole = dumps_bvh(m, position_channels=channels)
    monkeypatch.setattr(bvh, "BLOCK_FRAMES", 4)
    write_bvh(tmp_out / "blocks.bvh", m, position_channels=channels)
    assert (tmp_out / "blocks.bvh").read_text() == whole
    assert dumps_bvh(m, position_channels=channels) == whole


def test_bad_options_write_nothing(tmp_out):
    with pytest.raises(ValueError):
        write_bvh(tmp_out / "bad.bvh", random_motion(), position_channels="some")
    assert not (tmp_out / "bad.bvh").exists()
