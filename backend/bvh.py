"""Vectorised BVH reader and writer.

The hierarchy is parsed token by token (it is small); the MOTION block is read
in one go into a ``[frames, channels]`` array and every frame of a joint is
converted at once (Holden et al.'s approach), so a 100k-frame file costs a few
NumPy calls per joint, not a Python loop over frames.

BVH semantics used here:

- Euler rotation channels are *intrinsic* in the order listed, in degrees:
  ``Zrotation Xrotation Yrotation`` means ``R = Rz @ Rx @ Ry``. Any order and
  any number of rotation channels is accepted.
- Position channels may appear on any joint, in any order and position within
  ``CHANNELS``; when present they *replace* that joint's OFFSET (the OFFSET is
  then only the rest pose). Components without a channel keep the OFFSET.
- A joint's ``End Site`` OFFSET becomes ``Skeleton.tails[j]``; BVH joints are
  aligned with the world at rest, so every rest rotation is identity.

Everything returned is in RigMind's conventions: metres, seconds, radians,
Blender's Z-up frame (see :mod:`.axes`; a Y-up file ``(x, y, z)`` becomes
``(x, -z, y)``), quaternions ``(w, x, y, z)``.

``Skeleton.meta["bvh"]`` records the source layout so :func:`write_bvh` can
reproduce it: ``channels`` (per joint, the channel names in file order),
``up`` ("Y"/"Z"), ``units`` (name, see :data:`UNITS`), ``scale`` (metres per
file unit), ``frame_time`` (seconds, as written), ``end_sites`` (per joint,
whether the file had an End Site) and ``source`` (the file).
"""

from __future__ import annotations

import gzip
import os
import zlib
import io
import re
import warnings
from pathlib import Path
from dataclasses import dataclass

import numpy as np

from . import axes
from . import rotations
from .motion import Motion
from .skeleton import Skeleton
from .errors import UserError

#: Metres per file unit for the names accepted by ``units``. "cmu" is the unit
#: of the CMU mocap database's BVH conversions (CMU FAQ: 0.056444 m).
UNITS = {"m": 1.0, "cm": 0.01, "mm": 0.001, "cmu": 0.056444, "in": 0.0254}

_CHANNEL_NAMES = {
    "xposition": ("Xposition", "p", 0),
    "yposition": ("Yposition", "p", 1),
    "zposition": ("Zposition", "p", 2),
    "xrotation": ("Xrotation", "r", 0),
    "yrotation": ("Yrotation", "r", 1),
    "zrotation": ("Zrotation", "r", 2),
}
_AXIS = "XYZ"
_TOKEN = re.compile(r"[{}]|[^\s{}]+")


#: Characters of a file's start checked for binary data.
BINARY_SNIFF_CHARS = 4096
#: Longest piece of file content an error message quotes.
QUOTE_CHARS = 40


class BVHError(UserError):
    """A malformed BVH file. ``path`` and ``line`` (1-based, or None) say where."""

    def __init__(self, message: str, path=None, line=None):
        self.path = None if path is None else str(path)
        self.line = line
        self.message = message
        where = self.path or "<bvh>"
        if line is not None:
            where += f":{line}"
        super().__init__(f"{where}: {message}")


# --- units ----------------------------------------------------------------------


def guess_units(size: float) -> str:
    """The unit name "auto" picks for a character whose frame-0 size is ``size``
    file units. ``size`` is the longest side of the axis-aligned bounding box
    of the first frame's posed joints and end sites, root joints excluded (a
    root is often a ground projection far from the body): it is the height of
    a standing person, or the arm span of a T-pose.

    - ``size < 3``: metres (nothing humanoid is taller than 3 m);
    - ``3 <= size < 60``: CMU units (0.056444 m; a 1.7 m person is ~30 units,
      while one 60 cm tall would be a doll);
    - ``60 <= size < 1000``: centimetres;
    - ``size >= 1000``: millimetres.

    Pass ``units`` explicitly for anything that is not human-sized.
    """
    if not np.isfinite(size) or size < 3.0:
        return "m"
    if size < 60.0:
        return "cmu"
    if size < 1000.0:
        return "cm"
    return "mm"


def _unit_scale(units, *, allow_auto: bool) -> tuple:
    """(name, metres per file unit) for a unit name or a positive float."""
    if isinstance(units, str):
        key = units.lower()
        if key == "auto" and allow_auto:
            return "auto", None
        if key in UNITS:
            return key, UNITS[key]
        raise ValueError(f"unknown units {units!r}: use {'auto, ' if allow_auto else ''}{', '.join(UNITS)} or a float")
    s = float(units)
    if not (s > 0 and np.isfinite(s)):
        raise ValueError(f"units scale must be a positive number of metres per unit, got {units!r}")
    for k, v in UNITS.items():
        if abs(v - s) <= 1e-12 * v:
            return k, v
    return "custom", s


def _snap_fps(frame_time: float) -> float:
    """1 / frame_time, snapped to an integer when the printed frame time is
    1/n to the ~6 decimals exporters write (0.0333333 -> 30, not 30.00003)."""
    fps = 1.0 / frame_time
    n = round(fps)
    if n >= 1 and abs(frame_time - 1.0 / n) <= 5.1e-7:
        return float(n)
    return fps


# --- reading --------------------------------------------------------------------


class _Joint:
    __slots__ = ("name", "parent", "offset", "channels", "end", "line")

    def __init__(self, name, parent, line):
        self.name = name
        self.parent = parent
        self.offset = np.zeros(3)
        self.channels = []
        self.end = None
        self.line = line


#: The most BVH text read from one file, plain or inflated from gzip (bytes).
#: A 100 000-frame take of a 65-bone rig is about 180 MB of text; past this a
#: file is refused before its text is allocated (a 1 MB ``.bvh.gz`` can
#: inflate to gigabytes).
MAX_TEXT_BYTES = 256 * 1024 * 1024
_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 20


def _too_large(path, what: str) -> "BVHError":
    return BVHError(f"{what} more than {MAX_TEXT_BYTES // (1024 * 1024)} MB of BVH text, RigMind's limit for one "
                    "file; split the take into shorter clips", path)


def _inflate(fh, path, keep: bool = True) -> bytes:
    """The gzip stream in ``fh`` (one member or several, as ``gzip``
    allows) inflated a chunk at a time, refused once it passes
    :data:`MAX_TEXT_BYTES`; with ``keep`` False only its size is checked
    (nothing is kept, so a bomb costs a chunk of memory, not the limit)."""
    def member():
        return zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)

    inflater, fed, out, size, pending = member(), False, [], 0, b""
    try:
        while True:
            if not pending:
                pending = fh.read(_CHUNK)
                if not pending:
                    break
            part = inflater.decompress(pending, min(4 * _CHUNK, MAX_TEXT_BYTES + 1 - size))
            fed = True
            size += len(part)
            if keep:
                out.append(part)
            if size > MAX_TEXT_BYTES:
                raise _too_large(path, "the gzip stream inflates to")
            if inflater.eof:
                pending, inflater, fed = inflater.unused_data, member(), False
            else:
                pending = inflater.unconsumed_tail
    except zlib.error as e:
        raise BVHError(f"corrupt gzip stream ({e}); the file is damaged: export or download it again", path) from None
    if fed:
        raise BVHError("corrupt gzip stream (it ends early); the file is truncated: export or download it again",
                       path)
    return b"".join(out)


def _open_text(path: Path) -> str:
    """The file's text (UTF-8; a byte-order mark, as Windows tools write one,
    dropped), from plain or gzip-compressed BVH, bounded by :data:`MAX_TEXT_BYTES`."""
    with open(path, "rb") as fh:
        if fh.read(2) == _GZIP_MAGIC:  # gzip magic: accept .bvh.gz whatever the name says
            fh.seek(0)
            _inflate(fh, path, keep=False)
            fh.seek(0)
            raw = _inflate(fh, path)
        else:
            if os.fstat(fh.fileno()).st_size > MAX_TEXT_BYTES:
                raise _too_large(path, "the file holds")
            fh.seek(0)
            raw = fh.read(MAX_TEXT_BYTES + 1)
            if len(raw) > MAX_TEXT_BYTES:  # a device or a file that grew while read
                raise _too_large(path, "the file holds")
    text = raw.decode("utf-8", errors="replace")
    if _looks_binary(text[:BINARY_SNIFF_CHARS]):
        raise BVHError("binary data, not BVH text: pick a .bvh file (text starting with HIERARCHY), "
                       "or import FBX/glTF clips as such", path)
    return text[1:] if text.startswith("\ufeff") else text


def _looks_binary(head: str) -> bool:
    """Whether the file's first characters are bytes rather than text: a NUL
    or more than 1 % of them not UTF-8 (BVH is ASCII; a stray accented joint
    name in a legacy encoding stays far below that)."""
    return "\x00" in head or head.count("\ufffd") > max(2, len(head) // 100)


def _quoted(value, limit: int = QUOTE_CHARS) -> str:
    """File content as an error message quotes it: ASCII only (other
    characters escaped, so a damaged file cannot put control bytes in a
    one-line report), at most ``limit`` characters."""
    v = str(value)
    return ascii(v if len(v) <= limit else v[:limit] + "...")


class _Tokens:
    """The HIERARCHY's tokens in order, each with its 1-based line and the
    tokens after it on that line; readers raise BVHError naming ``what``."""

    def __init__(self, lines, src):
        self.lines = lines
        self.src = src
        self._it = self._tokens()

    def _tokens(self):
        for ln, line in enumerate(self.lines, start=1):
            toks = _TOKEN.findall(line)
            for i, t in enumerate(toks):
                yield t, ln, toks[i + 1 :]

    def __next__(self):
        return next(self._it)

    def nxt(self, what):
        try:
            return next(self._it)
        except StopIteration:
            raise BVHError(f"unexpected end of file while reading {what}: no MOTION block", self.src, len(self.lines)) from None

    def number(self, what):
        t, ln, _ = self.nxt(what)
        try:
            return float(t)
        except ValueError:
            raise BVHError(f"expected a number for {what}, got {_quoted(t)}", self.src, ln) from None

    def expect_brace(self):
        t, ln, _ = self.nxt("'{'")
        if t != "{":
            raise BVHError(f"expected '{{', got {_quoted(t)}", self.src, ln)


def _read_joint_start(it, key, ln, rest, joints, stack, seen_header):
    """``ROOT name {`` or ``JOINT name {``: append the joint and open it."""
    src = it.src
    if not seen_header:
        raise BVHError("missing HIERARCHY keyword", src, ln)
    if key == "ROOT" and stack:
        raise BVHError("ROOT inside another joint", src, ln)
    if key == "JOINT" and not stack:
        raise BVHError("JOINT outside any ROOT", src, ln)
    name_toks = []
    for t in rest:
        if t in "{}":
            break
        name_toks.append(t)
    for _ in name_toks:
        next(it)
    brace_on_line = len(rest) > len(name_toks) and rest[len(name_toks)] == "{"
    if brace_on_line:
        next(it)
    name = " ".join(name_toks)
    if not name:
        raise BVHError(f"{key} without a name", src, ln)
    joints.append(_Joint(name, stack[-1] if stack else -1, ln))
    stack.append(len(joints) - 1)
    if not brace_on_line:
        it.expect_brace()


def _read_end_site(it, ln, joints, stack):
    """``End Site { OFFSET x y z }`` after ``End``: the open joint's end."""
    src = it.src
    t, ln2, _ = it.nxt("End Site")
    if t.upper() != "SITE":
        raise BVHError(f"expected 'Site' after 'End', got {_quoted(t)}", src, ln2)
    if not stack:
        raise BVHError("End Site outside any joint", src, ln)
    it.expect_brace()
    t, ln2, _ = it.nxt("End Site OFFSET")
    if t.upper() != "OFFSET":
        raise BVHError(f"expected OFFSET in End Site, got {_quoted(t)}", src, ln2)
    end = np.array([it.number("End Site OFFSET") for _ in range(3)])
    t, ln2, _ = it.nxt("'}'")
    if t != "}":
        raise BVHError(f"expected '}}' closing End Site, got {_quoted(t)}", src, ln2)
    joints[stack[-1]].end = end


def _read_channels(it, ln, joints, stack):
    """``CHANNELS n name...`` after ``CHANNELS``: the open joint's channels."""
    src = it.src
    if not stack:
        raise BVHError("CHANNELS outside any joint", src, ln)
    t, ln2, _ = it.nxt("CHANNELS")
    try:
        n = int(t)
    except ValueError:
        raise BVHError(f"expected a channel count after CHANNELS, got {_quoted(t)}", src, ln2) from None
    chans = []
    for _ in range(n):
        t, ln2, _ = it.nxt("channel names")
        info = _CHANNEL_NAMES.get(t.lower())
        if info is None:
            raise BVHError(
                f"unknown channel name {_quoted(t)} (CHANNELS {n} of joint {_quoted(joints[stack[-1]].name)}; "
                "expected Xposition/Yposition/Zposition/Xrotation/Yrotation/Zrotation)",
                src,
                ln2,
            )
        chans.append(info[0])
    joints[stack[-1]].channels = chans


def _parse_hierarchy(lines, src):
    """Joints (list of _Joint) and the index of the MOTION line."""
    joints = []
    stack = []
    seen_header = False
    it = _Tokens(lines, src)
    while True:
        try:
            tok, ln, rest = next(it)
        except StopIteration:
            raise BVHError("no MOTION block (the file ends inside or after the HIERARCHY)", src, len(lines)) from None
        key = tok.upper()
        if key == "HIERARCHY":
            seen_header = True
        elif key in ("ROOT", "JOINT"):
            _read_joint_start(it, key, ln, rest, joints, stack, seen_header)
        elif key == "END":
            _read_end_site(it, ln, joints, stack)
        elif key == "OFFSET":
            if not stack:
                raise BVHError("OFFSET outside any joint", src, ln)
            joints[stack[-1]].offset = np.array([it.number("OFFSET") for _ in range(3)])
        elif key == "CHANNELS":
            _read_channels(it, ln, joints, stack)
        elif tok == "}":
            if not stack:
                raise BVHError("unbalanced '}'", src, ln)
            stack.pop()
        elif tok == "{":
            raise BVHError("unexpected '{'", src, ln)
        elif key == "MOTION":
            if stack:
                raise BVHError(f"MOTION before joint {_quoted(joints[stack[-1]].name)} was closed", src, ln)
            if not joints:
                raise BVHError("no joints in HIERARCHY", src, ln)
            return joints, ln  # ln: 1-based line of MOTION
        else:
            raise BVHError(f"unexpected token {_quoted(tok)} in HIERARCHY", src, ln)


def _header_value(lines, i, pattern, what, src):
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i >= len(lines):
        raise BVHError(f"truncated MOTION block: missing '{what}'", src, len(lines))
    m = re.match(pattern, lines[i], re.IGNORECASE)
    if m is None:
        raise BVHError(f"expected '{what} ...', got {_quoted(lines[i].strip()[:40])}", src, i + 1)
    return m.group(1), i


def _diagnose(lines, start, n_frames, n_chan, frames_line, src):
    """Slow path, only after the fast parse disagreed: raise at the bad line,
    or return the ``[frames, channels]`` values if every row is fine after all."""
    rows = 0
    parsed = []
    last = start
    for i in range(start, len(lines)):
        toks = lines[i].split()
        if not toks:
            continue
        last = i + 1
        for t in toks:
            try:
                float(t)
            except ValueError:
                raise BVHError(f"non-numeric value {_quoted(t)} in MOTION data", src, i + 1) from None
        if len(toks) != n_chan:
            if rows == n_frames - 1 and len(toks) < n_chan and all(not s.strip() for s in lines[i + 1 :]):
                raise BVHError(
                    f"truncated MOTION block: last frame has {len(toks)} of {n_chan} values", src, i + 1
                )
            raise BVHError(f"frame row has {len(toks)} values, expected {n_chan} (one per channel)", src, i + 1)
        parsed.append([float(t) for t in toks])
        rows += 1
    if rows == n_frames:
        return np.array(parsed, dtype=np.float64).reshape(n_frames, n_chan)
    if rows < n_frames:
        raise BVHError(
            f"truncated MOTION block: header says {n_frames} frames but only {rows} rows follow", src, last
        )
    raise BVHError(f"frame count mismatch: header says {n_frames} frames but {rows} rows follow", src, frames_line)


def _check_finite(vals, joints, data_start, src) -> None:
    """NaN or Inf in the MOTION rows (or the OFFSETs) is the file's fault: say
    where, instead of failing later as a degenerate skeleton."""
    for jt in joints:
        if not all(np.isfinite(v) for v in jt.offset) or (jt.end is not None and not all(np.isfinite(v) for v in jt.end)):
            raise BVHError(f"joint {_quoted(jt.name)} has a non-finite OFFSET (NaN or Inf); fix the HIERARCHY", src, jt.line)
    bad = ~np.isfinite(vals)
    if not bad.any():
        return
    frame, col = (int(v) for v in np.argwhere(bad)[0])
    channels = [(jt.name, ch) for jt in joints for ch in jt.channels]
    joint, channel = channels[col]
    raise BVHError(f"{int(bad.sum())} NaN or Inf value(s) in the MOTION data, the first in frame {frame + 1} "
                   f"({joint} {channel}); re-export the file with finite values", src)


def _rotations(vals, joints, cols_per_joint, n_frames):
    """Local rotations ``[F, J, 4]`` from the Euler channels, one vectorised
    call per distinct channel order."""
    rot = np.empty((n_frames, len(joints), 4))
    groups = {}
    for j, jt in enumerate(joints):
        seq = "".join(c[0] for c in jt.channels if c.endswith("rotation"))
        cols = [cols_per_joint[j][k] for k, c in enumerate(jt.channels) if c.endswith("rotation")]
        groups.setdefault(seq, ([], []))
        groups[seq][0].append(j)
        groups[seq][1].append(cols)
    for seq, (idx, cols) in groups.items():
        if not seq:
            rot[:, idx] = rotations.identity((n_frames, len(idx)))
            continue
        ang = np.deg2rad(vals[:, np.asarray(cols)])  # [F, Jg, n]
        if len(seq) == 3 and seq[0] != seq[1] and seq[1] != seq[2]:
            q = rotations.from_euler(ang, seq, intrinsic=True)
        else:  # unusual channel sets (1, 2 or 4+ rotations): compose in listed order
            q = rotations.identity(ang.shape[:-1])
            for k, a in enumerate(seq):
                axis = np.zeros(3)
                axis[_AXIS.index(a)] = 1.0
                axes_k = np.broadcast_to(axis, ang.shape[:-1] + (3,))
                q = rotations.mul(q, rotations.from_axis_angle_pair(axes_k, ang[..., k]))
        rot[:, idx] = q
    return rotations.normalize(rot)


#: End sites may widen the frame-0 box at most this many times the joints' own.
END_SITE_SPAN = 2.0


def _frame0_size(motion: Motion) -> float:
    """Longest bounding-box side of frame 0 (non-root joints + end sites,
    the end sites only while they widen it at most :data:`END_SITE_SPAN`
    times), in file units; see :func:`guess_units`."""
    sk = motion.skeleton
    if motion.num_frames:
        rot, pos = motion.slice(0, 1).world()
        rot, pos = rot[0], pos[0]
    else:
        rot, pos = sk.rest_world()
    keep = sk.parents >= 0
    if not np.any(keep):
        keep = np.ones(len(sk), dtype=bool)
    joints = float(np.max(np.ptp(pos[keep], axis=0)))
    pts = np.concatenate([pos[keep], (pos + rotations.rotate(rot, sk.tails))[keep]])
    with_ends = float(np.max(np.ptp(pts, axis=0)))
    # An end site is a leaf bone's tail, and some exporters write display
    # lengths there (Blender's glTF import of X Bot: a 23 m head-top); the
    # end sites count only while they stay within the joints' own scale.
    return joints if 0.0 < joints and END_SITE_SPAN * joints < with_ends else with_ends


def _motion_header(lines, motion_ln, src):
    """``Frames:`` and ``Frame Time:`` after the MOTION line: ``(n_frames,
    frame_time in seconds, index of the first data line, 1-based line of
    Frames:)``."""
    n_frames_s, i = _header_value(lines, motion_ln, r"\s*Frames\s*:?\s*(\S+)", "Frames:", src)
    frames_line = i + 1
    try:
        n_frames = int(float(n_frames_s))
        if n_frames < 0 or n_frames != float(n_frames_s):
            raise ValueError
    except ValueError:
        raise BVHError(f"bad frame count {_quoted(n_frames_s)}", src, frames_line) from None
    ft_s, i = _header_value(lines, i + 1, r"\s*Frame\s+Time\s*:?\s*(\S+)", "Frame Time:", src)
    try:
        frame_time = float(ft_s)
        if not (frame_time > 0 and np.isfinite(frame_time)):
            raise ValueError
    except ValueError:
        raise BVHError(f"bad Frame Time {_quoted(ft_s)} (must be a positive number of seconds)", src, i + 1) from None
    return n_frames, frame_time, i + 1, frames_line


def _motion_values(lines, joints, n_frames, data_start, frames_line, src):
    """The MOTION rows as ``[frames, channels]`` float64, checked finite."""
    n_chan = sum(len(j.channels) for j in joints)
    data = "\n".join(lines[data_start:])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        vals = np.fromstring(data, dtype=np.float64, sep=" ") if data.strip() else np.zeros(0)
    if caught or vals.size != n_frames * n_chan:
        vals = _diagnose(lines, data_start, n_frames, n_chan, frames_line, src)
    vals = vals.reshape(n_frames, n_chan)
    _check_finite(vals, joints, data_start, src)
    return vals


def _unique_names(joints) -> list:
    """Joint names, duplicates suffixed ``.001``, ``.002``... as Blender does
    (duplicate names break name lookups)."""
    names = []
    taken = set()
    for jt in joints:
        nm, k = jt.name, 0
        while nm in taken:
            k += 1
            nm = f"{jt.name}.{k:03d}"
        taken.add(nm)
        names.append(nm)
    return names


def _local_translations(vals, joints, cols_per_joint, offsets, n_frames):
    """``([F, J, 3] local translations, [J] bool animated)``: OFFSET unless a
    position channel replaces a component."""
    trans = np.broadcast_to(offsets, (n_frames, len(joints), 3)).copy()
    animated = np.zeros(len(joints), dtype=bool)
    for j, jt in enumerate(joints):
        for k, ch in enumerate(jt.channels):
            if ch.endswith("position"):
                trans[:, j, _AXIS.index(ch[0])] = vals[:, cols_per_joint[j][k]]
                animated[j] = True
    return trans, animated


def loads_bvh(
    text: str,
    *,
    name: str = "",
    source=None,
    units="auto",
    up: str = "Y",
    keep_end_sites: bool = True,
) -> Motion:
    """Parse BVH ``text``; see :func:`read_bvh` (``source`` names the file in errors)."""
    src = source if source is not None else "<string>"
    up = str(up).upper()
    if up not in ("Y", "Z"):
        raise ValueError(f"up must be 'Y' or 'Z', got {up!r}")
    unit_name, scale = _unit_scale(units, allow_auto=True)
    lines = text.splitlines()
    joints, motion_ln = _parse_hierarchy(lines, src)
    n_frames, frame_time, data_start, frames_line = _motion_header(lines, motion_ln, src)
    vals = _motion_values(lines, joints, n_frames, data_start, frames_line, src)

    # Column index of every channel, joint by joint.
    cols_per_joint = []
    c = 0
    for jt in joints:
        cols_per_joint.append(list(range(c, c + len(jt.channels))))
        c += len(jt.channels)

    names = _unique_names(joints)
    parents = np.array([jt.parent for jt in joints], dtype=np.int64)
    offsets = np.array([jt.offset for jt in joints])
    tails = np.zeros((len(joints), 3))
    if keep_end_sites:
        for j, jt in enumerate(joints):
            if jt.end is not None:
                tails[j] = jt.end

    trans, animated = _local_translations(vals, joints, cols_per_joint, offsets, n_frames)
    rot = _rotations(vals, joints, cols_per_joint, n_frames)

    meta = {
        "bvh": {
            "channels": [list(jt.channels) for jt in joints],
            "up": up,
            "units": unit_name,
            "scale": scale,
            "frame_time": frame_time,
            "end_sites": [jt.end is not None for jt in joints],
            "source": str(src),
        }
    }
    sk = Skeleton(names, parents, offsets, None, tails, meta)
    # Joint 0 (always a root) animates through root_positions; anything else needs translations.
    non_root_animated = bool(np.any(animated[1:]))
    motion = Motion(
        sk,
        rot,
        trans[:, 0].copy(),
        _snap_fps(frame_time),
        trans if non_root_animated else None,
        name=name,
    )

    if scale is None:
        unit_name = guess_units(_frame0_size(motion))
        scale = UNITS[unit_name]
        meta["bvh"]["units"] = unit_name
        meta["bvh"]["scale"] = scale
    motion = _scaled(motion, scale)
    return axes.to_blender(motion, up)


def _scaled(m: Motion, s: float) -> Motion:
    """Lengths multiplied by ``s`` (rotations untouched)."""
    sk = m.skeleton
    sk2 = Skeleton(list(sk.names), sk.parents.copy(), sk.offsets * s, sk.rest_rotations.copy(), sk.tails * s, sk.meta)
    return Motion(
        sk2,
        m.rotations,
        m.root_positions * s,
        m.fps,
        None if m.translations is None else m.translations * s,
        list(m.shape_names),
        m.shape_weights,
        m.name,
    )


def read_bvh(path, *, units="auto", up: str = "Y", keep_end_sites: bool = True) -> Motion:
    """Read a ``.bvh`` or gzip-compressed ``.bvh.gz`` file.

    Args:
        path: the file.
        units: length unit of the file: "auto", a name in :data:`UNITS`
            ("m", "cm", "mm", "cmu", "in") or metres per file unit as a float.
            "auto" follows :func:`guess_units` (frame-0 size < 3 -> m,
            < 60 -> CMU units, < 1000 -> cm, else mm).
        up: the file's up axis, "Y" (the usual BVH convention; converted to
            Blender with ``(x, y, z) -> (x, -z, y)``) or "Z" (no axis change).
        keep_end_sites: store End Site offsets in ``skeleton.tails`` (metres,
            joint frame); False leaves tails at zero.

    Returns:
        A :class:`Motion` in metres, Blender Z-up, with identity rest
        rotations, local rotations ``[F, J, 4]``, ``root_positions [F, 3]``
        (joint 0's position channels, or its OFFSET), ``translations
        [F, J, 3]`` only when a joint other than the first root has position
        channels, ``fps = 1 / Frame Time`` (snapped to an integer when the
        frame time is printed 1/n) and ``name`` = file name without
        ``.bvh``/``.gz``. ``skeleton.meta["bvh"]`` records the source layout.

    Raises:
        BVHError: malformed hierarchy, unknown channel name, missing or
            truncated MOTION block, frame count mismatch (message has the file
            and line).
    """
    path = Path(path)
    stem = path.name
    for suffix in (".gz", ".bvh"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    return loads_bvh(_open_text(path), name=stem, source=path, units=units, up=up, keep_end_sites=keep_end_sites)


# --- writing --------------------------------------------------------------------


def identity_rest(motion: Motion) -> Motion:
    """``motion`` on a skeleton whose rest rotations are identity (BVH's rest
    convention), with the same rest world positions and the same world motion.

    Offsets become ``rest_pos[j] - rest_pos[parent]`` (world-aligned) and tails
    are rotated out of each joint's old rest frame. Returned unchanged when the
    rest rotations already are identity.
    """
    target = identity_rest_skeleton(motion.skeleton)
    return motion if target is None else motion.with_rest(target)


def identity_rest_skeleton(sk: Skeleton):
    """:func:`identity_rest`'s skeleton for ``sk``: identity rest rotations,
    the same rest world positions (offsets world-aligned, tails rotated out
    of each joint's old rest frame); None when ``sk``'s rest rotations
    already are identity."""
    if np.abs(sk.rest_rotations[:, 1:]).max(initial=0.0) < 1e-12:
        return None
    rot_w, pos_w = sk.rest_world()
    offsets = pos_w.copy()
    nonroot = sk.parents >= 0
    offsets[nonroot] = pos_w[nonroot] - pos_w[sk.parents[nonroot]]
    tails = rotations.rotate(rot_w, sk.tails)
    return Skeleton(list(sk.names), sk.parents.copy(), offsets, None, tails, dict(sk.meta))


#: Frames converted and written at once by :func:`write_bvh`: its arrays
#: are a block's, not the clip's (a 100 000-frame take at 120 fps would need
#: a dozen [frames, joints, 3, 3] float64 temporaries at once).
BLOCK_FRAMES = 2048


def _file_blocks(motion: Motion, up: str):
    """The clip as the file holds it, :data:`BLOCK_FRAMES` frames at a
    time: on its identity-rest skeleton (:func:`identity_rest`, the
    rotations' signs continuous across blocks) in the file's axes. The same
    numbers as converting the whole clip at once: every step is per frame
    but the sign continuity, which carries its last frame over."""
    target = identity_rest_skeleton(motion.skeleton)
    prev_q = prev_flip = None
    for a in range(0, motion.num_frames, BLOCK_FRAMES):
        m = motion.slice(a, min(a + BLOCK_FRAMES, motion.num_frames))
        if target is not None:
            local, trans = m.pose_on_rest(target)
            local, prev_q, prev_flip = rotations.continue_signs(local, prev_q, prev_flip)
            m = m.with_pose(local, trans, skeleton=target)
        yield axes.from_blender(m, up)


def _translation_spread(motion: Motion, up: str, sk: Skeleton):
    """Per joint, the largest distance (m, per axis) its file translation
    leaves its offset over the clip ``[J]``; None without translations."""
    if motion.translations is None:
        return None
    spread = np.zeros(len(sk))
    for m in _file_blocks(motion, up):
        spread = np.maximum(spread, np.abs(m.translations - sk.offsets[None]).max(axis=(0, 2), initial=0.0))
    return spread


def _format_row(v, decimals):
    return " ".join(f"{x:.{decimals}f}" for x in v)


def dumps_bvh(
    motion: Motion,
    *,
    up="Y",
    units="cm",
    order="ZXY",
    position_channels="root",
    decimals=None,
) -> str:
    """BVH text for ``motion``; see :func:`write_bvh`."""
    out = io.StringIO()
    _write_planned(out, motion, _plan(motion, up, units, order, position_channels, decimals))
    return out.getvalue()


@dataclass(frozen=True)
class _FilePlan:
    """What a BVH file of a clip holds besides its numbers: the file's up
    axis, metres per unit and decimals, its skeleton ``sk`` (identity rest,
    file axes), each joint's ``(channels, Euler order)`` and children, and
    the joints in the file's (depth-first) order."""

    up: str
    scale: float
    decimals: int
    sk: Skeleton
    layout: list
    children: list
    dfs: list


def _plan(motion: Motion, up, units, order, position_channels, decimals) -> _FilePlan:
    """The file's layout for ``motion`` with :func:`write_bvh`'s options
    (bad ones raise ValueError here, before anything is written)."""
    bmeta = motion.skeleton.meta.get("bvh", {}) if isinstance(motion.skeleton.meta, dict) else {}
    src_channels = bmeta.get("channels")
    if src_channels is not None and len(src_channels) != len(motion.skeleton):
        src_channels = None
    up, scale, decimals, order, position_channels = _export_options(
        bmeta, src_channels, up, units, order, position_channels, decimals)
    target = identity_rest_skeleton(motion.skeleton)
    sk = axes.from_blender(motion.skeleton if target is None else target, up)
    spread = _translation_spread(motion, up, sk)
    moving = np.zeros(len(sk), bool)
    if position_channels == "moving" and spread is not None:
        # 1e-6 m: float32 noise of a scene's curves is not motion.
        moving = spread > 1e-6
    layout = [_joint_channels(sk, j, src_channels, order, position_channels, moving) for j in range(len(sk))]
    _warn_dropped_translations(sk, spread, layout)
    children = [sk.children(j) for j in range(len(sk))]
    return _FilePlan(up, scale, decimals, sk, layout, children, _depth_first(sk, children))


def _write_planned(out, motion: Motion, plan: _FilePlan) -> None:
    """Write the BVH text of ``motion`` to the text stream ``out``, the
    MOTION block a block of frames at a time (:func:`_file_blocks`)."""
    sk, s = plan.sk, 1.0 / plan.scale
    out.write("HIERARCHY\n")
    for r in np.nonzero(sk.parents < 0)[0]:
        _write_joint(out, sk, plan.layout, plan.children, int(r), 0, s, plan.decimals)
    out.write(f"MOTION\nFrames: {motion.num_frames}\nFrame Time: {1.0 / motion.fps:.10g}\n")
    unwrap = _Unwrap(motion.num_frames > 1)
    for m in _file_blocks(motion, plan.up):
        np.savetxt(out, _motion_columns(m, plan.layout, plan.dfs, s, unwrap), fmt=f"%.{plan.decimals}f",
                   delimiter=" ")


def _export_options(bmeta, src_channels, up, units, order, position_channels, decimals) -> tuple:
    """The export options with None resolved from what the clip was read with
    (``bmeta``) or the defaults: ``(up, metres per unit, decimals, order,
    position_channels)``; bad values raise ValueError."""
    if up is None:
        up = bmeta.get("up", "Y")
    up = str(up).upper()
    if units is None:
        units = bmeta.get("scale") or "cm"
    _, scale = _unit_scale(units, allow_auto=False)
    if decimals is None:
        # 1e-8 m resolution for lengths (6 decimals in cm, 8 in m); degrees
        # with 6 decimals are already finer than that at human scale.
        decimals = int(max(6, 8 + np.floor(np.log10(scale) + 1e-9)))
    if order is None and src_channels is None:
        order = "ZXY"
    if order is not None:
        order = rotations.check_euler_order(order)
        if order[0] == order[2]:
            raise ValueError(f"order {order!r}: BVH export needs three different axes (Tait-Bryan)")
    if position_channels is None:
        position_channels = "source" if src_channels is not None else "root"
    if position_channels not in ("root", "all", "source", "moving"):
        raise ValueError(f"position_channels must be 'root', 'moving' or 'all' (or None), got {position_channels!r}")
    return up, scale, decimals, order, position_channels


_XYZ_POSITION = ["Xposition", "Yposition", "Zposition"]


def _joint_channels(sk: Skeleton, j: int, src_channels, order, position_channels, moving) -> tuple:
    """Joint ``j``'s ``(channel names, Euler order)`` in the file."""
    src = src_channels[j] if src_channels is not None else None
    src_rot = "".join(c[0] for c in src if c.endswith("rotation")) if src is not None else ""
    src_ok = len(src_rot) == 3 and len(set(src_rot)) == 3
    rot_seq = order if order is not None else (src_rot if src_ok else "ZXY")
    if position_channels == "source" and src is not None and order is None and src_ok:
        chans = list(src)  # exact source layout, interleaving included
    else:
        if position_channels == "all" or moving[j]:
            pos = list(_XYZ_POSITION)
        elif position_channels == "source" and src is not None:
            pos = [c for c in src if c.endswith("position")]
        else:
            pos = []
        chans = pos + [a + "rotation" for a in rot_seq]
    if sk.parents[j] < 0 and not any(c.endswith("position") for c in chans):
        chans = _XYZ_POSITION + chans  # a root always carries its position
    return chans, rot_seq


def _warn_dropped_translations(sk: Skeleton, spread, layout) -> None:
    """Warn when joints without position channels have animated translations
    (``spread [J]``: :func:`_translation_spread`, None without translations)."""
    if spread is None:
        return
    pos_joints = np.array(["position" in "".join(ch) for ch, _ in layout])
    fixed = ~pos_joints & (sk.parents >= 0)
    if np.any(fixed):
        err = spread[fixed].max(initial=0.0)
        if err > 1e-6:
            warnings.warn(
                f"write_bvh: joint translations differ from the offsets by up to {err:.3g} m "
                "but those joints get no position channels; use position_channels='all' to keep them",
                stacklevel=4,
            )


def _depth_first(sk: Skeleton, children) -> list:
    """Joint indices in the file's order: depth first from each root. MOTION
    columns must follow it, which differs from ours when a parent's children
    are not contiguous."""
    dfs = []
    stack = [int(r) for r in np.nonzero(sk.parents < 0)[0]][::-1]
    while stack:
        j = stack.pop()
        dfs.append(j)
        stack.extend(children[j][::-1])
    return dfs


class _Unwrap:
    """``np.unwrap(angles, period=360, axis=0)`` of a clip's Euler angles
    (degrees) fed a block of frames at a time, per Euler order: each block
    carries on from the previous one's last angles and summed correction,
    so the numbers are those of unwrapping the whole clip. ``active``:
    False for a one-frame clip (nothing to unwrap)."""

    def __init__(self, active: bool):
        self.active = active
        self.last = {}

    def __call__(self, key, p: np.ndarray) -> np.ndarray:
        if not self.active:
            return p
        prev = self.last.get(key)
        ext = p if prev is None else np.concatenate([prev[0][None], p])
        dd = np.diff(ext, axis=0)
        ddmod = np.mod(dd + 180.0, 360.0) - 180.0
        np.copyto(ddmod, 180.0, where=(ddmod == -180.0) & (dd > 0))
        correct = ddmod - dd
        np.copyto(correct, 0, where=abs(dd) < 180.0)
        up = np.array(p, copy=True, dtype=np.float64)
        if prev is None:
            total = correct.cumsum(axis=0)
            up[1:] = p[1:] + total
            carry = total[-1] if len(total) else np.zeros(p.shape[1:])
        else:
            total = np.concatenate([prev[1][None], correct]).cumsum(axis=0)[1:]
            up[:] = p + total
            carry = total[-1]
        self.last[key] = (p[-1].copy(), carry.copy())
        return up


def _motion_columns(m: Motion, layout, dfs, s: float, unwrap) -> np.ndarray:
    """The MOTION block ``[F, channels]``: positions in file units (``s`` per
    metre) and Euler angles (degrees), one vectorised call per order, unwrapped
    in time (``unwrap``: a :class:`_Unwrap`) so curves do not jump by 360
    degrees (the rotation is unchanged)."""
    F = m.num_frames
    local_t = m.local_translations() * s  # [F, J, 3]
    euler = np.zeros((F, len(layout), 3))
    by_order = {}
    for j, (_, seq) in enumerate(layout):
        by_order.setdefault(seq, []).append(j)
    for seq, idx in by_order.items():
        euler[:, idx] = unwrap(seq, np.rad2deg(rotations.to_euler(m.rotations[:, idx], seq, intrinsic=True)))
    columns = []
    for j in dfs:
        chans, seq = layout[j]
        for ch in chans:
            a = _AXIS.index(ch[0])
            columns.append(local_t[:, j, a] if ch.endswith("position") else euler[:, j, seq.index(ch[0])])
    return np.stack(columns, axis=1) if columns else np.zeros((F, 0))


def _write_joint(out, sk: Skeleton, layout, children, j: int, depth: int, s: float, decimals: int) -> None:
    """Joint ``j``'s HIERARCHY block (and its children's), lengths ``s`` per metre."""
    ind = "\t" * depth
    out.write(f"{ind}{'ROOT' if sk.parents[j] < 0 else 'JOINT'} {sk.names[j]}\n{ind}{{\n")
    out.write(f"{ind}\tOFFSET {_format_row(sk.offsets[j] * s, decimals)}\n")
    chans = layout[j][0]
    out.write(f"{ind}\tCHANNELS {len(chans)} {' '.join(chans)}\n")
    for c in children[j]:
        _write_joint(out, sk, layout, children, c, depth + 1, s, decimals)
    if not children[j]:
        out.write(f"{ind}\tEnd Site\n{ind}\t{{\n{ind}\t\tOFFSET {_format_row(sk.tails[j] * s, decimals)}\n{ind}\t}}\n")
    out.write(f"{ind}}}\n")


def write_bvh(path, motion: Motion, **options) -> Path:
    """Write ``motion`` (metres, Blender Z-up) as BVH; gzip when ``path`` ends
    with ``.gz``. Returns the path.

    Keyword options, those of :func:`dumps_bvh` (defaults ``up="Y", units="cm",
    order="ZXY", position_channels="root", decimals=None``):
        up: up axis of the file, "Y" (``(x, y, z)`` Blender -> ``(x, z, -y)``)
            or "Z" (no change).
        units: file length unit, a name in :data:`UNITS` or metres per unit.
        order: Euler order for every joint's rotation channels (intrinsic,
            degrees), e.g. "ZXY".
        position_channels: "root" (roots get 6 channels, other joints 3: their
            animated ``translations``, if any, are dropped with a warning),
            "moving" (roots and the joints whose ``translations`` leave their
            offset by more than 1e-6 m get 6 channels) or "all" (6 channels
            on every joint, writing ``translations``).
        decimals: digits after the point for every number; None picks a
            resolution of 1e-8 m for lengths (6 in cm, 8 in m), at least 6.

    Any of ``up``, ``units``, ``order``, ``position_channels`` may be None to
    reproduce what ``skeleton.meta["bvh"]`` recorded when the clip was read
    (per-joint channel lists and order included), falling back to the
    defaults above.

    BVH's rest pose has every joint aligned with the world, so a skeleton with
    non-identity rest rotations (e.g. read from a Blender armature) is first
    re-expressed by :func:`identity_rest` (``Motion.with_rest`` onto a
    skeleton built from the rest world positions): world joint positions are
    preserved, local rotations change meaning. Leaf joints get an End Site at
    their ``tails``.
    """
    opts = dict(up="Y", units="cm", order="ZXY", position_channels="root", decimals=None)
    unknown = set(options) - set(opts)
    if unknown:
        raise TypeError(f"write_bvh() got unexpected options {sorted(unknown)}")
    opts.update(options)
    plan = _plan(motion, **opts)
    path = Path(path)
    # Written as it is made (a long take's text is hundreds of MB, and a
    # StringIO holds 4 bytes a character).
    if path.name.lower().endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8", newline="\n") as fh:
            _write_planned(fh, motion, plan)
    else:
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            _write_planned(fh, motion, plan)
    return path


__all__ = [
    "BVHError",
    "UNITS",
    "guess_units",
    "read_bvh",
    "loads_bvh",
    "write_bvh",
    "dumps_bvh",
    "identity_rest",
]
