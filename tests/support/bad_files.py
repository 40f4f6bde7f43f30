"""Hostile and damaged files built byte by byte: FBX bombs and liars, WAV
headers that lie, compression bombs. Used by the bad-input matrix and the
FBX checker's tests."""

from __future__ import annotations

import gzip
import struct
import zipfile
import zlib
from pathlib import Path

FBX_MAGIC = b"Kaydara FBX Binary\x20\x20\x00\x1a\x00"


def fbx_node(name: bytes, props: bytes = b"", nprops: int = 0, children=(), *, claim_end: int = None,
             claim_props: int = None, wide: bool = False):
    """A node as a function of its absolute offset: ``build(pos) -> bytes``;
    FBX 7400's 32-bit headers, or 7500's 64-bit ones with ``wide`` (children
    must match). ``claim_end``/``claim_props`` overwrite the declared end
    offset / property count (a lying header)."""
    fmt, null = ("<QQQB", 25) if wide else ("<IIIB", 13)

    def build(pos: int) -> bytes:
        head = struct.calcsize(fmt) + len(name)
        body = b""
        if children:
            child_pos = pos + head + len(props)
            for child in children:
                part = child(child_pos)
                body += part
                child_pos += len(part)
            body += bytes(null)
        end = pos + head + len(props) + len(body)
        count = nprops if claim_props is None else claim_props
        return struct.pack(fmt, claim_end if claim_end is not None else end, count, len(props),
                           len(name)) + name + props + body

    return build


def fbx_file(*nodes, version: int = 7400) -> bytes:
    """Header, the nodes, then the top-level null record."""
    out = FBX_MAGIC + struct.pack("<I", version)
    for node in nodes:
        out += node(len(out))
    return out + bytes(25 if version >= 7500 else 13)


def fbx_array(code: bytes, length: int, data: bytes, encoding: int) -> bytes:
    """One array property: type code, (length, encoding, stored bytes), the bytes."""
    return code + struct.pack("<III", length, encoding, len(data)) + data


def fbx_array_bomb() -> bytes:
    """A few hundred bytes whose one array claims 2^31 doubles (16 GB)."""
    return fbx_file(fbx_node(b"Objects", fbx_array(b"d", 2**31 - 1, zlib.compress(bytes(64)), 1), 1))


def fbx_inflating_past_limit(limit_bytes: int) -> bytes:
    """Honest arrays (each inflates to what it claims) that add up past ``limit_bytes``."""
    chunk = 64 * 1024 * 1024
    packed = zlib.compress(bytes(chunk), 9)
    n = limit_bytes // chunk + 1
    props = fbx_array(b"d", chunk // 8, packed, 1) * n
    return fbx_file(fbx_node(b"Objects", props, n))


def fbx_property_count_liar() -> bytes:
    return fbx_file(fbx_node(b"Objects", b"I" + struct.pack("<i", 1), 1, claim_props=2**31))


def fbx_raw_array_liar() -> bytes:
    """An uncompressed array that claims more values than its bytes hold."""
    return fbx_file(fbx_node(b"Objects", fbx_array(b"f", 10**9, bytes(16), 0), 1))


def fbx_end_outside() -> bytes:
    return fbx_file(fbx_node(b"Objects", b"I" + struct.pack("<i", 1), 1, claim_end=2**31))


def fbx_deep(levels: int) -> bytes:
    node = fbx_node(b"Leaf", b"I" + struct.pack("<i", 1), 1)
    for _ in range(levels):
        node = fbx_node(b"N", b"", 0, [node])
    return fbx_file(node)


def fbx_unknown_property_type() -> bytes:
    return fbx_file(fbx_node(b"Objects", b"Q" + bytes(8), 1))


def wav_header(rate: int, channels: int, data: bytes, *, bits: int = 16, claimed_data: int = None) -> bytes:
    """A PCM WAV whose fmt chunk says ``rate`` Hz and ``channels``; ``claimed_data`` lies about the data size."""
    size = len(data) if claimed_data is None else claimed_data
    block = channels * bits // 8
    fmt = struct.pack("<IHHIIHH", 16, 1, channels, rate, (rate * block) & 0xFFFFFFFF, block, bits)
    return (b"RIFF" + struct.pack("<I", (36 + size) & 0xFFFFFFFF) + b"WAVE" + b"fmt " + fmt + b"data"
            + struct.pack("<I", size) + data)


def gzip_bomb(path: Path, inflated_bytes: int) -> Path:
    """A ``.bvh.gz`` that inflates to ``inflated_bytes`` (a BVH header, then zeros)."""
    block = b"0 " * (1024 * 1024)
    with gzip.open(path, "wb", compresslevel=9) as f:
        f.write(b"HIERARCHY\nROOT Hips\n{\n")
        for _ in range(inflated_bytes // len(block) + 1):
            f.write(block)
    return path


def npz_zip_bomb(path: Path, inflated_bytes: int) -> Path:
    """An ``.npz`` whose poses member is an honest header over ``inflated_bytes`` of zeros, deflated."""
    import io

    import numpy as np

    rows = inflated_bytes // (165 * 4) + 1
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False, "shape": (rows, 165)})
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        with z.open("poses.npy", "w", force_zip64=True) as m:
            m.write(header.getvalue())
            zeros = bytes(16 * 1024 * 1024)
            left = rows * 165 * 4
            while left > 0:
                m.write(zeros[: min(left, len(zeros))])
                left -= len(zeros)
        z.writestr("trans.npy", b"")
    return path
