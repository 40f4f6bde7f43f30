"""A binary FBX's structure, checked before Blender's importer reads it.

Blender's importer (``io_scene_fbx/parse_fbx.py``) trusts the counts an FBX
declares: a node's property count sizes a list, an array's length sizes
``zlib.decompress``'s buffer before anything is inflated. A few hundred bytes
that claim a 2³²-element array of doubles ask for 32 GB. This module walks
the node tree the same way (headers only; array data is skipped, never read
or inflated) and refuses a file whose declared sizes do not fit inside it, do
not add up, could not come from its compressed bytes, or would inflate past
:data:`MAX_ARRAY_BYTES` in all. Pure Python.

Format (FBX 7.x binary): a 27-byte header (magic, version), then nodes. A
node is ``end_offset, property_count, property_bytes`` (uint32 before version
7500, uint64 from it), a name (uint8 length), its properties, then child
nodes closed by a null record (13 or 25 zero bytes).
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

from .errors import UserError

#: The largest FBX file RigMind opens (bytes).
MAX_FILE_BYTES = 2 * 1024**3
#: The most the arrays of an FBX may hold once inflated, all together (bytes).
MAX_ARRAY_BYTES = 2 * 1024**3
#: Deeper nesting than any exporter writes (Blender's parser recurses per level).
MAX_DEPTH = 64
#: Deflate never inflates a byte to more than about 1032 bytes.
_DEFLATE_MAX_RATIO = 1032

_MAGIC = b"Kaydara FBX Binary\x20\x20\x00\x1a\x00"
_ARRAY_STRIDE = {ord("b"): 1, ord("c"): 1, ord("i"): 4, ord("l"): 8, ord("f"): 4, ord("d"): 8}
_FIXED_SIZE = {ord("Z"): 1, ord("Y"): 2, ord("B"): 1, ord("C"): 1, ord("I"): 4, ord("F"): 4, ord("D"): 8, ord("L"): 8}
_BLOB = (ord("R"), ord("S"))


class FBXFileError(UserError):
    """An FBX that is not binary FBX, is damaged, or declares more than RigMind reads."""


class _Damaged(Exception):
    """Raised inside the walk; turned into one FBXFileError line by :func:`check_fbx`."""


class _Reader:
    """Reads headers at absolute offsets of an open file; counts what the arrays would inflate to."""

    def __init__(self, fh, size: int, version: int):
        self.fh, self.size = fh, size
        self.head = struct.Struct("<IIIB" if version < 7500 else "<QQQB")
        self.sentinel = 13 if version < 7500 else 25
        self.array_bytes = 0

    def read(self, pos: int, n: int) -> bytes:
        if pos + n > self.size:
            raise _Damaged(f"it ends inside a node (offset {pos})")
        self.fh.seek(pos)
        return self.fh.read(n)


def _array_size(r: _Reader, pos: int, stride: int, end: int) -> int:
    """Check one array property at ``pos`` (its 12-byte header); returns its byte length in the file."""
    length, encoding, stored = struct.unpack("<III", r.read(pos, 12))
    if stored > end - pos - 12:
        raise _Damaged(f"an array at offset {pos} claims {stored} bytes, more than its node holds")
    inflated = length * stride
    if encoding == 0 and inflated != stored:
        raise _Damaged(f"an array at offset {pos} claims {length} values but holds {stored} bytes")
    if encoding == 1 and inflated > stored * _DEFLATE_MAX_RATIO + 64:
        raise _Damaged(f"an array at offset {pos} claims {length} values, more than its {stored} "
                       "compressed bytes can hold")
    if encoding not in (0, 1):
        raise _Damaged(f"an array at offset {pos} has unknown encoding {encoding}")
    r.array_bytes += inflated
    if r.array_bytes > MAX_ARRAY_BYTES:
        raise FBXFileError(f"its arrays would take more than {MAX_ARRAY_BYTES // 1024**3} GB once read "
                           "(RigMind's limit for an FBX); export the rig without the extra meshes or animation")
    return 12 + stored


def _properties_end(r: _Reader, pos: int, count: int, end: int) -> int:
    """Walk ``count`` properties from ``pos``; returns the offset after the last."""
    if count > (end - pos):  # every property takes at least one byte (its type code)
        raise _Damaged(f"a node at offset {pos} claims {count} properties, more than its bytes can hold")
    for _ in range(count):
        code = r.read(pos, 1)[0]
        pos += 1
        if code in _ARRAY_STRIDE:
            pos += _array_size(r, pos, _ARRAY_STRIDE[code], end)
        elif code in _BLOB:
            (n,) = struct.unpack("<I", r.read(pos, 4))
            pos += 4 + n
        elif code in _FIXED_SIZE:
            pos += _FIXED_SIZE[code]
        else:
            raise _Damaged(f"unknown property type {chr(code)!r} at offset {pos - 1}")
        if pos > end:
            raise _Damaged(f"a property runs past the end of its node (offset {pos})")
    return pos


def _node_end(r: _Reader, pos: int, limit: int, depth: int) -> int:
    """Check the node at ``pos`` and its children; returns its end offset, or 0 for a null record."""
    if depth > MAX_DEPTH:
        raise _Damaged(f"nodes nested more than {MAX_DEPTH} deep")
    end, count, _, name_len = r.head.unpack(r.read(pos, r.head.size))
    if end == 0:
        return 0
    if not pos < end <= limit:
        raise _Damaged(f"a node at offset {pos} claims to end at {end}, outside its parent")
    props_end = _properties_end(r, pos + r.head.size + name_len, count, end)
    if props_end < end:
        child = props_end
        while child < end - r.sentinel:
            child_end = _node_end(r, child, end - r.sentinel, depth + 1)
            if child_end == 0:
                raise _Damaged(f"a null record inside a node at offset {child}")
            child = child_end
        if child != end - r.sentinel:
            raise _Damaged(f"a node at offset {pos} does not close where it says")
    elif props_end != end:
        raise _Damaged(f"a node at offset {pos} does not close where it says")
    return end


def check_fbx(path) -> None:
    """Refuse (FBXFileError, one line) an FBX that Blender's importer would
    misread or that would make it allocate past the limits above."""
    path = Path(path)
    size = os.stat(path).st_size
    if size > MAX_FILE_BYTES:
        raise FBXFileError(f"{path}: {size / 1024**3:.1f} GB, larger than the {MAX_FILE_BYTES // 1024**3} GB "
                           "RigMind opens; export the rig without the extra meshes or animation")
    with open(path, "rb") as fh:
        head = fh.read(len(_MAGIC) + 4)
        if not head.startswith(_MAGIC):
            if head.lstrip().startswith((b"; FBX", b"FBXHeaderExtension")):
                raise FBXFileError(f"{path}: an ASCII FBX; Blender imports binary FBX only: re-export it as "
                                   "binary FBX (7.4 or later)")
            raise FBXFileError(f"{path}: could not be read (not an FBX file: no binary FBX header); check the file")
        if len(head) < len(_MAGIC) + 4:
            raise FBXFileError(f"{path}: could not be read (a truncated FBX: the header is cut short)")
        (version,) = struct.unpack("<I", head[len(_MAGIC):])
        reader = _Reader(fh, size, version)
        pos = len(head)
        try:
            while pos + reader.head.size <= size:
                end = _node_end(reader, pos, size, 0)
                if end == 0:
                    break
                pos = end
        except _Damaged as e:
            raise FBXFileError(f"{path}: could not be read (a damaged FBX: {e})") from None
        except FBXFileError as e:
            raise FBXFileError(f"{path}: {e}") from None
