"""What a glTF file points at, checked before Blender's importer opens it.

A ``.gltf`` (and a ``.glb``'s JSON chunk) names its buffers and images by
URI. Blender's importer follows any of them: an absolute path, ``../..``, a
device such as ``/dev/zero`` (a 1 kB file grew a process to 23 GB). RigMind
lets through only ``data:`` URIs and relative paths to regular files inside
the file's own folder, each within :data:`MAX_REFERENCED_BYTES` in all, and
refuses the rest in one line before anything is read. A URI is checked as
the path Blender will open for it (:func:`blender_path`), not as a URL: the
importer keeps ``?`` and ``#`` in the path and reads a ``data:`` URI without
``;base64,`` as a file name, so ``mesh.bin?/../../x`` or ``data:/../../x``
would otherwise pass as a file beside it and open something outside. Pure
Python.
"""

from __future__ import annotations

import json
import os
import re
import struct
from pathlib import Path
from urllib.parse import unquote

from .errors import UserError

#: The most JSON a ``.gltf`` (or a ``.glb``'s JSON chunk) may hold (bytes).
MAX_JSON_BYTES = 64 * 1024 * 1024
#: The most bytes the files a glTF references may hold together.
MAX_REFERENCED_BYTES = 2 * 1024 * 1024 * 1024
_GLB_MAGIC = b"glTF"
_JSON_CHUNK = 0x4E4F534A
#: A URI scheme (RFC 3986: a letter, then letters, digits, + - .), then ":".
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


class GLTFReferenceError(UserError):
    """A glTF file that points outside its folder, at a device, or at too much."""


def _json_of(path: Path) -> dict:
    with open(path, "rb") as fh:
        head = fh.read(20)
        if head[:4] == _GLB_MAGIC:
            if len(head) < 20:
                raise GLTFReferenceError(f"{path}: could not be read (a truncated .glb: no JSON chunk)")
            _, _, _, chunk_len, chunk_type = struct.unpack("<4sIIII", head)
            if chunk_type != _JSON_CHUNK:
                raise GLTFReferenceError(f"{path}: could not be read (not a valid .glb: its first chunk is not JSON)")
            if chunk_len > MAX_JSON_BYTES or chunk_len > os.fstat(fh.fileno()).st_size - 20:
                raise GLTFReferenceError(f"{path}: could not be read (the .glb's JSON chunk claims {chunk_len} bytes, "
                                         "more than the file holds or RigMind reads: the file is damaged)")
            raw = fh.read(chunk_len)
        else:
            if os.fstat(fh.fileno()).st_size > MAX_JSON_BYTES:
                raise GLTFReferenceError(f"{path}: more than {MAX_JSON_BYTES // 2**20} MB of glTF JSON; "
                                         "save it as .glb with its buffers inside")
            raw = head + fh.read(MAX_JSON_BYTES)
    try:
        doc = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:  # RecursionError: arrays nested thousands deep
        raise GLTFReferenceError(f"{path}: could not be read (not glTF JSON: {type(e).__name__}: {str(e)[:80]})") from None
    if not isinstance(doc, dict):
        raise GLTFReferenceError(f"{path}: could not be read (not glTF JSON: the top level is not an object)")
    return doc


def _uris(doc: dict):
    for kind in ("buffers", "images"):
        items = doc.get(kind)
        if not isinstance(items, list):
            continue
        for i, item in enumerate(items):
            uri = item.get("uri") if isinstance(item, dict) else None
            if uri is not None:
                yield f"{kind[:-1]} {i}", uri


def blender_path(uri: str) -> str:
    """The path, relative to the glTF's folder, that Blender's importer
    opens for ``uri`` (io_scene_gltf2 ``uri_to_path``: backslashes read as
    slashes, percent-decoded, normalised; a query or fragment stays part of
    the name)."""
    return os.path.normpath(unquote(uri.replace("\\", "/")))


def is_inline_data(uri) -> bool:
    """Whether Blender's importer decodes ``uri`` itself (``data:…;base64,…``)
    rather than opening it as a file."""
    return isinstance(uri, str) and uri.startswith("data:") and ";base64," in uri


def _referenced_file(path: Path, what: str, uri) -> Path:
    """The file Blender will open for ``uri``, if it is a regular file inside ``path``'s folder."""
    fix = "a glTF may reference only files beside it (relative paths) or data: URIs"
    if not isinstance(uri, str):
        raise GLTFReferenceError(f"{path}: {what}'s uri is not a string; {fix}")
    if uri.startswith("data:"):
        raise GLTFReferenceError(f"{path}: {what}'s uri {uri[:80]!r} is a data: URI without ';base64,', which "
                                 "Blender opens as a file name; write the bytes as data:...;base64,...")
    if _SCHEME.match(uri) or uri.startswith(("/", "\\")) or (len(uri) > 1 and uri[1] == ":"):
        raise GLTFReferenceError(f"{path}: {what}'s uri {uri[:80]!r} is absolute or remote; {fix}")
    folder = path.resolve().parent
    try:
        target = (folder / blender_path(uri)).resolve()
        inside = folder in target.parents
        is_file = inside and target.is_file()
    except (OSError, ValueError) as e:  # a NUL, a lone surrogate, a name longer than the file system takes
        raise GLTFReferenceError(f"{path}: {what}'s uri {uri[:80]!r} is not a file name this system can open "
                                 f"({type(e).__name__}); {fix}") from None
    if not inside:
        raise GLTFReferenceError(f"{path}: {what}'s uri {uri[:80]!r} points outside the file's folder; {fix}")
    if not is_file:
        raise GLTFReferenceError(f"{path}: {what}'s uri {uri[:80]!r} is not a file beside it (missing, a folder "
                                 "or a device); put the file there or pack it into a .glb")
    return target


def check_references(path) -> None:
    """Raise :class:`GLTFReferenceError` (one line) for a ``.gltf``/``.glb``
    that references anything but ``data:`` URIs and regular files inside its
    own folder, or more than :data:`MAX_REFERENCED_BYTES` of them."""
    path = Path(path)
    total = 0
    for what, uri in _uris(_json_of(path)):
        if is_inline_data(uri):
            continue
        total += _referenced_file(path, what, uri).stat().st_size
        if total > MAX_REFERENCED_BYTES:
            raise GLTFReferenceError(f"{path}: its buffers and images hold more than "
                                     f"{MAX_REFERENCED_BYTES // 2**30} GB, RigMind's limit for one glTF")


__all__ = ["GLTFReferenceError", "MAX_JSON_BYTES", "MAX_REFERENCED_BYTES", "blender_path", "check_references",
           "is_inline_data"]
