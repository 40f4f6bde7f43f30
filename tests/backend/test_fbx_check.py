"""backend/fbx_check.py: an FBX's declared sizes checked before Blender's
importer trusts them (issue #27). Pure: files built byte by byte."""

from __future__ import annotations

import struct
import zlib

import pytest

from rigmind.backend import fbx_check
from rigmind.backend.fbx_check import FBXFileError, check_fbx
from support import bad_files as B

pytestmark = pytest.mark.pure


def _leaf(wide=False):
    values = zlib.compress(struct.pack("<4d", 1, 2, 3, 4))
    props = B.fbx_array(b"d", 4, values, 1) + B.fbx_array(b"i", 2, struct.pack("<2i", 5, 6), 0)
    props += b"S" + struct.pack("<I", 5) + b"hello" + b"I" + struct.pack("<i", 7) + b"D" + struct.pack("<d", 0.5)
    return B.fbx_node(b"Vertices", props, 5, wide=wide)


@pytest.mark.parametrize("version,wide", [(7400, False), (7500, True)])
def test_a_well_formed_file_passes(tmp_path, version, wide):
    tree = B.fbx_node(b"Objects", b"", 0, [_leaf(wide), B.fbx_node(b"Empty", wide=wide)], wide=wide)
    path = tmp_path / "ok.fbx"
    path.write_bytes(B.fbx_file(tree, version=version))
    check_fbx(path)


@pytest.mark.parametrize("build,words", [
    (B.fbx_array_bomb, "more than its 12 compressed bytes can hold"),
    (B.fbx_property_count_liar, "claims 2147483648 properties"),
    (B.fbx_raw_array_liar, "claims 1000000000 values but holds 16 bytes"),
    (B.fbx_end_outside, "outside its parent"),
    (lambda: B.fbx_deep(fbx_check.MAX_DEPTH + 1), "nested more than 64 deep"),
    (B.fbx_unknown_property_type, "unknown property type"),
    (lambda: B.FBX_MAGIC + b"\x01", "truncated FBX"),
    (lambda: b"; FBX 7.4.0 project file\n", "an ASCII FBX"),
    (lambda: b"PK\x03\x04", "not an FBX file"),
])
def test_lying_or_damaged_files_are_refused_in_one_line(tmp_path, build, words):
    path = tmp_path / "bad.fbx"
    path.write_bytes(build())
    with pytest.raises(FBXFileError) as e:
        check_fbx(path)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_arrays_adding_up_past_the_limit_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(fbx_check, "MAX_ARRAY_BYTES", 100 * 1024 * 1024)
    path = tmp_path / "big.fbx"
    path.write_bytes(B.fbx_inflating_past_limit(fbx_check.MAX_ARRAY_BYTES))
    with pytest.raises(FBXFileError, match="would take more than"):
        check_fbx(path)


def test_a_node_that_does_not_close_where_it_says(tmp_path):
    node = B.fbx_node(b"Objects", b"I" + struct.pack("<i", 1), 1, claim_end=27 + 13 + 7 + 5 + 3)
    path = tmp_path / "gap.fbx"
    path.write_bytes(B.fbx_file(node) + bytes(16))
    with pytest.raises(FBXFileError, match="does not close where it says"):
        check_fbx(path)
