"""backend/gltf_refs.py: what a glTF points at is checked before Blender's
importer follows it (#27): only data: URIs and regular files in the file's
own folder, within the limits."""

from __future__ import annotations

import base64
import json
import os
import struct

import pytest

from rigmind.backend import gltf_refs
from rigmind.backend.errors import UserError


def _gltf(folder, uri, name="scene.gltf", kind="buffers"):
    doc = {"asset": {"version": "2.0"}, kind: [{"uri": uri, "byteLength": 4}]}
    path = folder / name
    path.write_text(json.dumps(doc))
    return path


def _glb(folder, doc, name="scene.glb"):
    raw = json.dumps(doc).encode()
    raw += b" " * (-len(raw) % 4)
    body = struct.pack("<II", len(raw), 0x4E4F534A) + raw
    path = folder / name
    path.write_bytes(struct.pack("<4sII", b"glTF", 2, 12 + len(body)) + body)
    return path


def test_data_uris_and_files_beside_it_pass(tmp_path):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "mesh data.bin").write_bytes(b"\0" * 4)
    gltf_refs.check_references(_gltf(tmp_path, "bin/mesh%20data.bin"))
    gltf_refs.check_references(_gltf(tmp_path, "data:application/octet-stream;base64,"
                                     + base64.b64encode(b"\0" * 4).decode(), name="inline.gltf"))
    gltf_refs.check_references(_glb(tmp_path, {"asset": {"version": "2.0"}, "buffers": [{"byteLength": 4}]}))


@pytest.mark.parametrize("uri, words", [
    ("/dev/zero", "absolute or remote"),
    ("../../../../etc/passwd", "outside the file's folder"),
    ("sub/../../outside.bin", "outside the file's folder"),
    ("file:///etc/passwd", "absolute or remote"),
    ("https://example.invalid/x.bin", "absolute or remote"),
    ("C:/Windows/win.ini", "absolute or remote"),
    ("missing.bin", "not a file beside it"),
    ("sub", "not a file beside it"),
])
def test_a_uri_outside_the_folder_or_not_a_file_is_refused(tmp_path, uri, words):
    (tmp_path / "sub").mkdir()
    with pytest.raises(gltf_refs.GLTFReferenceError) as e:
        gltf_refs.check_references(_gltf(tmp_path, uri))
    assert isinstance(e.value, UserError) and words in str(e.value) and "\n" not in str(e.value)


def test_a_symlink_out_of_the_folder_is_refused(tmp_path):
    inner = tmp_path / "model"
    inner.mkdir()
    (tmp_path / "secret.bin").write_bytes(b"x" * 4)
    os.symlink(tmp_path / "secret.bin", inner / "link.bin")
    with pytest.raises(gltf_refs.GLTFReferenceError, match="outside the file's folder"):
        gltf_refs.check_references(_gltf(inner, "link.bin"))


def test_a_device_through_a_symlink_is_refused(tmp_path):
    os.symlink("/dev/zero", tmp_path / "zero.bin")
    with pytest.raises(gltf_refs.GLTFReferenceError):
        gltf_refs.check_references(_gltf(tmp_path, "zero.bin"))


def test_a_glb_image_uri_is_checked_too(tmp_path):
    doc = {"asset": {"version": "2.0"}, "images": [{"uri": "/etc/passwd"}]}
    with pytest.raises(gltf_refs.GLTFReferenceError, match="image 0"):
        gltf_refs.check_references(_glb(tmp_path, doc))


def test_a_glb_whose_json_chunk_lies_is_refused(tmp_path):
    path = tmp_path / "liar.glb"
    path.write_bytes(struct.pack("<4sIIII", b"glTF", 2, 40, 10**9, 0x4E4F534A) + b"{}" + b" " * 18)
    with pytest.raises(gltf_refs.GLTFReferenceError, match="claims 1000000000 bytes"):
        gltf_refs.check_references(path)


def test_referenced_bytes_past_the_limit_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(gltf_refs, "MAX_REFERENCED_BYTES", 1000)
    (tmp_path / "big.bin").write_bytes(b"\0" * 2000)
    with pytest.raises(gltf_refs.GLTFReferenceError, match="RigMind's limit"):
        gltf_refs.check_references(_gltf(tmp_path, "big.bin"))


def test_not_json_is_a_user_error(tmp_path):
    path = tmp_path / "notes.gltf"
    path.write_text("this is a text file")
    with pytest.raises(gltf_refs.GLTFReferenceError, match="could not be read .not glTF JSON"):
        gltf_refs.check_references(path)


@pytest.mark.parametrize("uri", [
    "mesh.bin#/../../outside.bin",        # the fuzz run's: passed as mesh.bin, Blender opened ../outside.bin
    "mesh.bin?/../../outside.bin",
    "data:/../../outside.bin",            # no ;base64,: Blender opens it as a file name
    "data:x/../../outside.bin",
])
def test_a_uri_is_checked_as_the_path_blender_opens(tmp_path, uri):
    home = tmp_path / "model"
    home.mkdir()
    (home / "mesh.bin").write_bytes(b"\0" * 4)
    (tmp_path / "outside.bin").write_bytes(b"\0" * 4)
    assert os.path.isfile(os.path.join(home, gltf_refs.blender_path(uri)))  # what Blender would read
    with pytest.raises(gltf_refs.GLTFReferenceError):
        gltf_refs.check_references(_gltf(home, uri, kind="images"))


@pytest.mark.parametrize("uri, words", [
    ("%%00", "not a file name this system can open (ValueError)"),         # a NUL once decoded
    ("a\x00b", "not a file name this system can open (ValueError)"),
    ("\ud800", "not a file name this system can open (UnicodeEncodeError)"),  # a lone surrogate
    ("mesh.bin%ff" + "x" * 300, "not a file name this system can open (OSError)"),  # ENAMETOOLONG
    ("//[abc", "absolute or remote"),                                       # urlsplit: "Invalid IPv6 URL"
    ("http://[x/y", "absolute or remote"),
    ("data:,hello", "data: URI without ';base64,'"),
])
def test_a_uri_no_file_can_have_is_refused_in_one_line(tmp_path, uri, words):
    with pytest.raises(gltf_refs.GLTFReferenceError) as e:
        gltf_refs.check_references(_gltf(tmp_path, uri))
    assert words in str(e.value) and "\n" not in str(e.value)


def test_json_nested_thousands_deep_is_refused(tmp_path):
    # The fuzz run's: a buffer uri of {"a": ...} 3000 deep raised RecursionError out of json.loads.
    raw = '{"asset":{"version":"2.0"},"buffers":[{"byteLength":4,"uri":' + '{"a":' * 3000 + "1" + "}" * 3000 + "}]}"
    for path in (tmp_path / "deep.gltf", tmp_path / "deep.glb"):
        data = raw.encode()
        if path.suffix == ".glb":
            data += b" " * (-len(data) % 4)
            body = struct.pack("<II", len(data), 0x4E4F534A) + data
            data = struct.pack("<4sII", b"glTF", 2, 12 + len(body)) + body
        path.write_bytes(data)
        with pytest.raises(gltf_refs.GLTFReferenceError, match="RecursionError"):
            gltf_refs.check_references(path)


def test_a_base64_data_uri_passes_unread(tmp_path):
    # Blender decodes it (bad base64 fails there, as a RigFileError); nothing is opened.
    gltf_refs.check_references(_gltf(tmp_path, "data:application/octet-stream;base64,!!!*"))



def test_blender_path_is_the_path_blenders_importer_opens():
    import bpy  # noqa: F401 - puts Blender's add-ons on sys.path (and marks only this test bpy)
    from io_scene_gltf2.io.com.path import uri_to_path  # the importer's own

    from support.fuzz_inputs import GLTF_URIS

    for uri in GLTF_URIS:
        assert gltf_refs.blender_path(uri) == uri_to_path(uri), uri
