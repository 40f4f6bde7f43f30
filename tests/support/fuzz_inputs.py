"""Generated inputs for the file readers (issue #17 item 7), shared by the
short CI run (tests/project/test_fuzz_inputs.py) and the full one (bench/fuzz_inputs.py).

Each ``check_*`` feeds one generated input to a reader and returns
``"ok"`` (read) or ``"refused"`` (the reader's documented error: BVHError,
SMPLXFileError, AudioError); any other exception propagates, and is a
failure. A read result is also checked for sense (finite arrays, the shapes
the docstrings promise).
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import struct
import tempfile
import warnings
import zipfile
from urllib.parse import unquote

import numpy as np
from hypothesis import strategies

from rigmind.backend.audio.loading import AudioError, load_audio
from rigmind.backend.bvh import BVHError, loads_bvh
from rigmind.backend.errors import UserError
from rigmind.backend.gltf_refs import GLTFReferenceError, check_references
from rigmind.backend.limits import PATH_MAX_COORDINATE_M
from rigmind.backend.locomotion.path_input import MAX_PATH_FILE_BYTES
from rigmind.backend.options import RANGES
from rigmind.backend.smplx_motion import SMPLXFileError, read_smplx_npz

# --- BVH ----------------------------------------------------------------------------

SEED_BVH = """HIERARCHY
ROOT Hips
{
  OFFSET 0.0 90.0 0.0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Spine
  {
    OFFSET 0.0 10.0 0.0
    CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT Head
    {
      OFFSET 0.0 30.0 0.0
      CHANNELS 3 Zrotation Xrotation Yrotation
      End Site
      {
        OFFSET 0.0 10.0 0.0
      }
    }
  }
  JOINT LeftUpLeg
  {
    OFFSET 10.0 0.0 0.0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0.0 -40.0 0.0
    }
  }
}
MOTION
Frames: 3
Frame Time: 0.0333333
0 90 0 0 0 0 0 0 0 0 0 0 0 0 0
1 90 0 10 5 0 2 0 0 0 0 3 0 0 0
2 90 0 20 10 0 4 0 0 0 0 6 0 0 0
"""

_TOKENS = SEED_BVH.split()
_WEIRD = ["nan", "inf", "-inf", "1e308", "-1e308", "1e-320", "0", "-0", "{", "}", "ROOT", "JOINT", "End", "Site",
          "OFFSET", "CHANNELS", "MOTION", "Frames:", "Frame", "Time:", "HIERARCHY", "Xrotation", "Xposition",
          "99999999999999999999", "-1", "3.5", "0x10", "1_0", "", "\x00", "é", "\t"]


@strategies.composite
def bvh_texts(draw) -> str:
    """A mutated copy of a valid BVH: tokens replaced, lines dropped,
    duplicated or cut, the text truncated; or plain random text."""
    if draw(strategies.integers(0, 9)) == 0:
        return draw(strategies.text(max_size=400))
    lines = SEED_BVH.splitlines()
    for _ in range(draw(strategies.integers(1, 4))):
        op = draw(strategies.sampled_from(["token", "token", "token", "drop", "dup", "cut", "channels", "frames", "rows"]))
        if not lines:
            break
        k = draw(strategies.integers(0, len(lines) - 1))
        toks = lines[k].split()
        if op == "token" and toks:
            t = draw(strategies.integers(0, len(toks) - 1))
            toks[t] = draw(strategies.one_of(strategies.sampled_from(_WEIRD), strategies.sampled_from(_TOKENS),
                                     strategies.floats(allow_nan=True, allow_infinity=True).map(repr),
                                     strategies.integers(-10**6, 10**6).map(str), strategies.text(max_size=6)))
            lines[k] = " ".join(toks)
        elif op == "drop":
            del lines[k]
        elif op == "dup":
            lines.insert(k, lines[k])
        elif op == "cut":
            lines = lines[:k]
        elif op == "channels":
            lines = [ln.replace("CHANNELS 3", f"CHANNELS {draw(strategies.integers(-2, 9))}", 1) if i == k else ln
                     for i, ln in enumerate(lines)]
        elif op == "frames":
            lines = [f"Frames: {draw(strategies.integers(-5, 10**9))}" if ln.startswith("Frames") else ln for ln in lines]
        else:
            extra = draw(strategies.lists(strategies.floats(allow_nan=True, allow_infinity=True, width=32), min_size=0, max_size=20))
            lines.append(" ".join(repr(v) for v in extra))
    text = "\n".join(lines)
    if draw(strategies.booleans()) and text:
        text = text[: draw(strategies.integers(0, len(text)))]
    return text


def check_bvh(text: str) -> str:
    try:
        m = loads_bvh(text, source="fuzz.bvh")
    except BVHError:
        return "refused"
    assert np.all(np.isfinite(m.rotations)) and np.all(np.isfinite(m.root_positions)), "non-finite motion read"
    assert m.rotations.shape == (m.num_frames, len(m.skeleton), 4)
    assert np.all(np.isfinite(m.skeleton.offsets))
    return "ok"


# --- SMPL-X .npz ----------------------------------------------------------------------

_DTYPES = [np.float32, np.float64, np.int32, np.int8, np.bool_, np.complex64, "U3", np.uint16]


def _values(draw, shape, dtype):
    """Random values of ``shape``: mostly plausible angles, sometimes huge,
    NaN or Inf sprinkled in (drawn from one seed: lists of floats drawn one
    by one would make the generator the slow part)."""
    rng = np.random.default_rng(draw(strategies.integers(0, 2**32 - 1)))
    mode = draw(strategies.sampled_from(["angles", "angles", "angles", "huge", "nan", "inf", "zeros"]))
    x = {"angles": lambda: rng.normal(0, 1.0, shape), "huge": lambda: rng.normal(0, 1e30, shape),
         "nan": lambda: np.where(rng.random(shape) < 0.05, np.nan, rng.normal(0, 1, shape)),
         "inf": lambda: np.where(rng.random(shape) < 0.05, np.inf, rng.normal(0, 1, shape)),
         "zeros": lambda: np.zeros(shape)}[mode]()
    kind = np.dtype(dtype).kind
    if kind == "U":
        return np.array([str(v)[:3] for v in np.ravel(x)], dtype=dtype).reshape(shape)
    if kind in "iub":
        return np.nan_to_num(x, nan=0, posinf=0, neginf=0).clip(-100, 100).astype(dtype)
    return x.astype(dtype)


@strategies.composite
def npz_bytes(draw) -> bytes:
    """An .npz with random named arrays (poses/trans/betas/fps-like keys, odd
    shapes, dtypes and values, object arrays), a damaged zip, or random bytes.
    Half of them start from a well-formed motion (poses [T, 165], trans [T, 3])."""
    kind = draw(strategies.integers(0, 9))
    if kind == 0:
        return draw(strategies.binary(max_size=300))
    arrays = {}
    t = draw(strategies.integers(0, 6))
    if draw(strategies.booleans()):
        arrays["poses"] = _values(draw, (t, 165), np.float32)
        arrays["trans"] = _values(draw, (t, 3), np.float32)
    for key in draw(strategies.lists(strategies.sampled_from(["poses", "trans", "betas", "expressions", "mocap_frame_rate",
                                              "mocap_framerate", "fps", "gender", "model", "other"]),
                             max_size=4, unique=True)):
        shape = draw(strategies.sampled_from([(t, 165), (t, 55, 3), (t, 3), (3,), (), (t,), (10,), (t, 100), (0, 165),
                                      (t, 164), (1, 1, 1)]))
        arrays[key] = _values(draw, shape, draw(strategies.sampled_from(_DTYPES)))
    if draw(strategies.integers(0, 9)) == 0:
        arrays["obj"] = np.array([{"a": 1}, None], dtype=object)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    data = buf.getvalue()
    if kind == 1 and data:
        cut = draw(strategies.integers(0, len(data)))
        data = data[:cut]
    elif kind == 2 and data:
        i = draw(strategies.integers(0, len(data) - 1))
        data = data[:i] + bytes([draw(strategies.integers(0, 255))]) + data[i + 1:]
    return data


def check_npz(data: bytes, folder: str) -> str:
    path = os.path.join(folder, "fuzz.npz")
    with open(path, "wb") as f:
        f.write(data)
    try:
        m = read_smplx_npz(path)
    except SMPLXFileError:
        return "refused"
    except zipfile.BadZipFile as e:  # must have been turned into SMPLXFileError
        raise AssertionError(f"BadZipFile escaped: {e}") from None
    assert np.all(np.isfinite(m.rotations)) and np.all(np.isfinite(m.root_positions))
    assert m.num_frames > 0 and m.fps > 0
    return "ok"


# --- audio ----------------------------------------------------------------------------

_SUBTYPES = {"WAV": ["PCM_16", "PCM_24", "PCM_U8", "FLOAT", "DOUBLE", "ULAW"], "FLAC": ["PCM_16", "PCM_24"],
             "OGG": ["VORBIS"]}


@strategies.composite
def audio_files(draw) -> tuple:
    """``(suffix, bytes)``: a real file (WAV/FLAC/OGG, random rate,
    channels, length and samples, NaN and Inf included) possibly truncated or
    with a flipped byte, a bare header, or random bytes."""
    kind = draw(strategies.integers(0, 9))
    if kind == 0:
        return ".wav", draw(strategies.binary(max_size=400))
    fmt = draw(strategies.sampled_from(sorted(_SUBTYPES)))
    subtype = draw(strategies.sampled_from(_SUBTYPES[fmt]))
    rate = draw(strategies.sampled_from([1, 100, 3999, 4000, 8000, 11025, 16000, 22050, 44100, 48000, 96000]))
    if fmt == "OGG":
        rate = max(rate, 8000)
    if fmt == "FLAC":
        rate = min(rate, 655350)
    channels = draw(strategies.integers(1, 3))
    n = draw(strategies.integers(0, 3000))
    special = draw(strategies.sampled_from(["sine", "zeros", "noise", "loud", "nan"]))
    rng = np.random.default_rng(draw(strategies.integers(0, 2**32 - 1)))
    x = {"sine": lambda: 0.5 * np.sin(np.arange(n) / 3.0)[:, None].repeat(channels, 1),
         "zeros": lambda: np.zeros((n, channels)),
         "noise": lambda: rng.uniform(-1, 1, (n, channels)),
         "loud": lambda: rng.uniform(-50, 50, (n, channels)),
         "nan": lambda: np.where(rng.random((n, channels)) < 0.1, np.nan, 0.1)}[special]()
    if special == "nan" and subtype in ("FLOAT", "DOUBLE") and n:
        x[rng.integers(0, n), 0] = draw(strategies.sampled_from([np.nan, np.inf, -np.inf]))
    import soundfile as sf

    if subtype not in ("FLOAT", "DOUBLE"):
        x = np.nan_to_num(x)
    if subtype == "VORBIS":
        # libsndfile's Vorbis *encoder* segfaults on some out-of-range input
        # (seen twice in 10^4, in sf.write: this generator, not the reader).
        x = np.clip(x, -1.0, 1.0)
    buf = io.BytesIO()
    try:
        sf.write(buf, x, rate, subtype=subtype, format=fmt)
    except (sf.LibsndfileError, ValueError, TypeError, RuntimeError):
        return ".wav", b"RIFF\x24\x00\x00\x00WAVEfmt "  # a format libsndfile will not write: a bare header
    data = buf.getvalue()
    if kind == 1 and data:
        data = data[: draw(strategies.integers(0, len(data)))]
    elif kind == 2 and data:
        i = draw(strategies.integers(0, len(data) - 1))
        data = data[:i] + bytes([draw(strategies.integers(0, 255))]) + data[i + 1:]
    return "." + fmt.lower(), data


def check_audio(item: tuple, folder: str) -> str:
    suffix, data = item
    path = os.path.join(folder, "fuzz" + suffix)
    with open(path, "wb") as f:
        f.write(data)
    try:
        clip = load_audio(path)
    except AudioError:
        return "refused"
    assert clip.samples.ndim == 1 and clip.samples.dtype == np.float32
    assert np.all(np.isfinite(clip.samples)) and float(np.abs(clip.samples).max(initial=0)) <= 1.0
    assert clip.sample_rate == 16000 and clip.seconds > 0
    return "ok"


def scratch_folder() -> str:
    return tempfile.mkdtemp(prefix="rigmind-fuzz-")


# --- walk --path, --path @FILE and --pause ---------------------------------------------
# What `rigmind walk` reads before the rig loads: the points (text or a file,
# per-point speeds), the path's limits, the pauses checked against the path.

_PATH_NUMBERS = ["0", "-0", "1", "3", "-2.5", "0.8", "1.2", "8", "8.01", "0.1", "0.09", "1e-6", "2e-6", "1.5e-6",
                 "5e-7", "1e-320", "9999", "10000", "10001", "1e308", "-1e308", "1e999", "nan", "inf", "-inf",
                 "infinity", "NaN", "1_0", "0x10", " 1 ", "", "+", "-", ".", "1.", ".5", "1e", "1e+", "\uff10",
                 "\u0661", "\x00", "\u00e9", "\t2", "1" * 400, "0." + "0" * 300 + "1"]
#: Paths the pause fuzzing stops on: ordinary, with speeds, a km, and
#: microscopic (two points just over the 1 um that makes them distinct).
_PAUSE_PATHS = ["0,0;3,0;3,3", "0,0,0.8;5,0,1.8;5,5", "0,0;1000,0", "0,0;0,0.0000011", "0,0;1e-6,0;2.1e-6,0",
                "-5000,-5000;-4999,-5000"]


def _number_texts():
    return strategies.one_of(strategies.sampled_from(_PATH_NUMBERS),
                             strategies.floats(allow_nan=True, allow_infinity=True).map(repr),
                             strategies.floats(-12.0, 12.0).map(repr),
                             strategies.integers(-10**5, 10**5).map(str), strategies.text(max_size=4))


@strategies.composite
def _point_texts(draw, sep: str = ",") -> str:
    """One point, mostly ``x,y`` or ``x,y,speed``, sometimes 1 or 4 values."""
    k = draw(strategies.sampled_from([2, 2, 2, 3, 3, 1, 4, 0]))
    return sep.join(draw(strategies.lists(_number_texts(), min_size=k, max_size=k)))


@strategies.composite
def _clean_points_texts(draw, sep: str = ";") -> str:
    """2-8 plausible points (within 12 m, a third with a speed up to 8.5
    m/s), in repr or 3-decimal form, one value sometimes swapped for an odd one."""
    fmt = draw(strategies.sampled_from([repr, lambda v: f"{v:.3f}"]))
    points = []
    for _ in range(draw(strategies.integers(2, 8))):
        values = [fmt(draw(strategies.floats(-12.0, 12.0))) for _ in range(2)]
        if draw(strategies.integers(0, 2)) == 0:
            values.append(fmt(draw(strategies.floats(0.05, 8.5))))
        points.append(values)
    if draw(strategies.booleans()):
        pt = points[draw(strategies.integers(0, len(points) - 1))]
        pt[draw(strategies.integers(0, len(pt) - 1))] = draw(_number_texts())
    return sep.join(",".join(pt) for pt in points)


@strategies.composite
def _points_texts(draw, sep: str = ";") -> str:
    """Points joined by ``sep``: plausible ones, odd ones, or (rarely) about
    PATH_MAX_POINTS of them (the limit's edge: 9999 to 12000)."""
    if draw(strategies.integers(0, 49)) == 0:
        n = draw(strategies.sampled_from([9999, 10000, 10001, 12000]))
        return sep.join(f"{i * 1e-3:.3f},0" for i in range(n))
    if draw(strategies.booleans()):
        return draw(_clean_points_texts(sep))
    points = draw(strategies.lists(_point_texts(), max_size=12))
    if draw(strategies.integers(0, 3)) == 0 and points:
        k = draw(strategies.integers(0, len(points) - 1))
        points[k] = points[k] + draw(strategies.sampled_from([";", ",", ";;", " ", "\n", "#", "@", ",,"]))
    return sep.join(points)


@strategies.composite
def _pause_texts(draw) -> str:
    """One ``--pause``: ``ARC,SECONDS`` pairs joined by ``;``, mutated."""
    pairs = draw(strategies.lists(_point_texts(), max_size=4))
    if draw(strategies.integers(0, 19)) == 0:
        pairs = [f"{draw(strategies.floats(0.0, 3.0))!r},100"] * draw(strategies.integers(30, 60))  # past path_seconds
    return draw(strategies.sampled_from([";", "; ", ";;"])).join(pairs)


def _line_ending(draw) -> str:
    return draw(strategies.sampled_from(["\n", "\r\n", "\r", "\n\n", "\n# a comment\n"]))


@strategies.composite
def _path_file_bytes(draw) -> bytes:
    """A ``--path @FILE`` text file: a point a line (comments, blank lines,
    ``;`` inside lines), in UTF-8 with or without a BOM, UTF-16, cut, a bad
    byte, or just over MAX_PATH_FILE_BYTES (4 MB, the bound on its size)."""
    kind = draw(strategies.integers(0, 19))
    if kind == 0:
        return draw(strategies.binary(max_size=300))
    if kind == 1:
        return b"0,0\n1,0\n" * (MAX_PATH_FILE_BYTES // 8 + draw(strategies.integers(-1, 1)))
    lines = draw(strategies.lists(strategies.one_of(_point_texts(), _points_texts(), strategies.just("# note"),
                                                    strategies.just(""), _point_texts().map(lambda p: p + "  # x")),
                                  max_size=15))
    text = _line_ending(draw).join(lines)
    encoding = draw(strategies.sampled_from(["utf-8", "utf-8", "utf-8-sig", "utf-16", "latin-1"]))
    data = text.encode(encoding, errors="surrogatepass" if encoding.startswith("utf") else "replace")
    if kind == 2 and data:
        data = data[: draw(strategies.integers(0, len(data)))]
    elif kind == 3 and data:
        i = draw(strategies.integers(0, len(data) - 1))
        data = data[:i] + bytes([draw(strategies.integers(0, 255))]) + data[i + 1:]
    return data


#: ``--path @…`` values that name no ordinary file: a device, a folder, a
#: name too long for the file system, a NUL, nothing.
_ODD_AT_VALUES = ["@", "@/", "@/dev/zero", "@/dev/null", "@.", "@" + "x" * 5000, "@" + "a/" * 3000 + "p.txt",
                  "@\x00", "@p\x00.txt", "@\ud800.txt", "@~/no-such-rigmind-path.txt", "@@"]


@strategies.composite
def walk_path_args(draw) -> tuple:
    """``(value, file bytes or None, pause texts)``: ``--path`` text, or a file
    the check writes and passes as ``@FILE`` (``value`` None), or an odd
    ``@`` value; with 0-2 ``--pause`` options."""
    kind = draw(strategies.integers(0, 9))
    pauses = draw(strategies.lists(_pause_texts(), max_size=2)) if draw(strategies.booleans()) else []
    if kind < 5:
        text = draw(strategies.one_of(_points_texts(), _points_texts(), strategies.text(max_size=60)))
        return text.lstrip("@"), None, pauses
    if kind < 9:
        return None, draw(_path_file_bytes()), pauses
    return draw(strategies.sampled_from(_ODD_AT_VALUES)), None, pauses


@strategies.composite
def walk_pause_args(draw) -> tuple:
    """``(path text, None, pause texts)``: a good path (short, long, with
    speeds, microscopic) and 1-3 fuzzed ``--pause`` options."""
    return (draw(strategies.sampled_from(_PAUSE_PATHS)), None,
            draw(strategies.lists(_pause_texts(), min_size=1, max_size=3)))


def _csv_cell(draw, column: int) -> str:
    """A number as a spreadsheet writes it (3 decimals; the third column a
    speed in m/s), now and then an odd one."""
    if not draw(strategies.integers(0, 39)):
        return draw(strategies.sampled_from(_PATH_NUMBERS))
    return f"{draw(strategies.floats(0.1, 8.0) if column == 2 else strategies.floats(-20, 20)):.3f}"


@strategies.composite
def csv_point_files(draw) -> tuple:
    """``(None, bytes, [])``: a points file as a spreadsheet exports it (the
    CSV RigMind reads from a user: ``--path @points.csv``): plain ``x,y`` or
    ``x,y,speed`` rows, or with a header row, quoted cells, ``;`` or tab
    separators, decimal commas, padded rows, ``sep=,``; CRLF, a BOM,
    UTF-16 or cp1252."""
    plain = draw(strategies.booleans())
    pick = (lambda options: options[0]) if plain else (lambda options: draw(strategies.sampled_from(options)))
    sep = pick([",", ";", "\t", ", "])
    quote = pick(["", '"', "'"])
    decimal = pick([".", ","])
    columns = draw(strategies.sampled_from([2, 2, 3, 3, 1, 4]))  # a spreadsheet's rows have its columns
    trail = pick(["", sep, sep + sep, " "])  # and pads each one alike
    rows = [pick(["", "sep=,", "x,y", "X,Y,speed", '"x","y"', "x;y", "# x,y,speed"])]
    for _ in range(draw(strategies.integers(0, 12))):
        n = columns if draw(strategies.integers(0, 9)) else draw(strategies.integers(0, 4))
        cells = [quote + _csv_cell(draw, k).replace(".", decimal) + quote for k in range(n)]
        rows.append(sep.join(cells) + trail)
    text = _line_ending(draw).join(rows) + draw(strategies.sampled_from(["", "\n", "\r\n", "\n\n", sep]))
    encoding = draw(strategies.sampled_from(["utf-8", "utf-8", "utf-8-sig", "utf-16", "cp1252"]))
    return None, text.encode(encoding, errors="replace"), []


@contextlib.contextmanager
def warnings_fail():
    """A warning out of a reader fails the check: the CLI would print it
    above its one-line refusal (numpy's "overflow encountered" for a point
    at 1e308, say)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


@functools.lru_cache(maxsize=1)
def _cli_parser():
    from rigmind import cli

    return cli.build_parser()


def read_walk_path_like_the_cli(value: str, pauses) -> object:
    """``rigmind walk --path VALUE --pause …``'s reading before the rig loads,
    with the CLI's own functions: the parsed options checked, the points
    read (text or ``@FILE``), the path's limits, the pauses against the
    path; the walk request it builds."""
    from rigmind import cli
    from rigmind.backend.limits import check_options
    from rigmind.backend.locomotion.path_input import read_path_argument

    args = _cli_parser().parse_args(["walk", "--rig", "rig.blend", "--out", "walk.bvh", f"--path={value}"]
                                     + [f"--pause={p}" for p in pauses])
    check_options(args)
    return cli._walk_request(args, read_path_argument(args.path))


def check_walk_path(item: tuple, folder: str, name: str = "fuzz-path.txt") -> str:
    value, data, pauses = item
    if data is not None:
        path = os.path.join(folder, name)
        with open(path, "wb") as f:
            f.write(data)
        value = "@" + path
    try:
        with warnings_fail():
            request = read_walk_path_like_the_cli(value, pauses)
    except UserError:
        return "refused"
    p = request.points_array()
    assert p.ndim == 2 and p.shape[1] in (2, 3) and len(p) >= 2, f"points of shape {p.shape}"
    assert np.all(np.isfinite(p[:, :2])) and np.abs(p[:, :2]).max() <= PATH_MAX_COORDINATE_M
    assert np.all(np.linalg.norm(np.diff(p[:, :2], axis=0), axis=1) > 1e-6), "a repeated point kept"
    if p.shape[1] == 3:
        speeds = p[:, 2][np.isfinite(p[:, 2])]
        lo, hi, _ = RANGES["speed"]
        assert len(speeds) and np.all((speeds >= lo) & (speeds <= hi)), f"a speed outside {lo}-{hi} m/s kept"
    arcs = [a for a, _ in request.pauses]
    assert arcs == sorted(arcs) and all(np.isfinite(a) and a > 0 and np.isfinite(t) and t >= 0
                                        for a, t in request.pauses), f"pauses {request.pauses}"
    return "ok"


def check_csv_points(item: tuple, folder: str) -> str:
    return check_walk_path(item, folder, name="points.csv")


# --- JSON documents with text json.dumps cannot write ------------------------------------


class _Raw(str):
    """JSON text put into a generated document as it is: a number of 400 or
    5000 digits (json.dumps refuses past 4300), a nesting 10^5 deep."""


def _json_text(value) -> str:
    if isinstance(value, _Raw):
        return str(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k)}:{_json_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_json_text(v) for v in value) + "]"
    return json.dumps(value)


_DEEP = _Raw("[" * 50_000 + "]" * 50_000)
_ODD_JSON = [_Raw("1" * 400), _Raw("-" + "9" * 310), _Raw("1" * 5000), _Raw("1e999"), _Raw("-1e999"), _Raw("NaN"),
             _Raw("Infinity"), _Raw("-Infinity"), _Raw("1E400"), _Raw("1e-400"), _DEEP, _Raw('{"a":' * 3000 + "1" + "}" * 3000),
             True, False, None, "", "0,0;3,0", {}, [], 0, -1, 1.5, 2**63, "\u00e9", "a\nb", "\ud800", "\x00"]


def _odd_json():
    return strategies.sampled_from(_ODD_JSON)


def _mutated(draw, data: bytes) -> bytes:
    """``data`` as it is, cut, with one byte changed, with a BOM, or as UTF-16."""
    op = draw(strategies.sampled_from(["same", "same", "same", "cut", "byte", "bom", "utf16"]))
    if op == "cut" and data:
        return data[: draw(strategies.integers(0, len(data)))]
    if op == "byte" and data:
        i = draw(strategies.integers(0, len(data) - 1))
        return data[:i] + bytes([draw(strategies.integers(0, 255))]) + data[i + 1:]
    if op == "bom":
        return b"\xef\xbb\xbf" + data
    if op == "utf16":
        return data.decode("utf-8", errors="replace").encode("utf-16")
    return data


# --- the batch walk manifest (batch.walk_items) ------------------------------------------

_MANIFEST_NAMES = ["walk_a", "walk b", "c-1.2", "walk_a", ".hidden", "a/b", "..", "", "x" * 300, "\u00e9", "a\nb",
                   " ", "-", "NUL\x00"]


@strategies.composite
def _manifest_points(draw):
    """``path`` as a list: points of 2-3 numbers, or of odd values (strings,
    booleans, huge integers, NaN, nested lists)."""
    coord = strategies.one_of(strategies.floats(-20, 20), strategies.integers(-10, 10), _odd_json(),
                              strategies.floats(allow_nan=True, allow_infinity=True))
    point = strategies.one_of(strategies.lists(coord, min_size=2, max_size=3), strategies.lists(coord, max_size=5),
                              coord, strategies.sampled_from(["12", "0,0", "ab"]))
    return draw(strategies.lists(point, max_size=6))


@strategies.composite
def _odd_manifest_entry(draw):
    """An entry any part of which may be odd: a missing, unsafe or repeated
    name; a path as text, as a list of odd points, or any JSON; style, gait
    and speed of any type; an unknown key; or no object at all."""
    if draw(strategies.integers(0, 9)) == 0:
        return draw(_odd_json())
    entry = {}
    if draw(strategies.integers(0, 9)):
        entry["name"] = draw(strategies.one_of(strategies.sampled_from(_MANIFEST_NAMES), _odd_json(),
                                               strategies.text(max_size=8)))
    if draw(strategies.integers(0, 9)):
        entry["path"] = draw(strategies.one_of(_points_texts(), _manifest_points(), _odd_json()))
    for key, good in _MANIFEST_OPTIONS:
        if draw(strategies.booleans()):
            entry[key] = draw(strategies.one_of(strategies.sampled_from(good), _odd_json()))
    if draw(strategies.integers(0, 9)) == 0:
        entry[draw(strategies.sampled_from(["nme", "a\nb", "", "Path", "\ud800"]))] = 1
    return entry


_MANIFEST_OPTIONS = (("style", ["normal", "active", "tired", "NORMAL", "nope"]), ("gait", ["walk", "run", "fly"]),
                     ("speed", [1.0, 0.1, 8, 8.01, 0, -1, 1.3]))


@strategies.composite
def _good_manifest_entries(draw, n: int) -> list:
    """``n`` entries as the docs write them: unique safe names, a path as
    text or [[x, y], ...], some with a style, gait or speed."""
    entries = []
    for i in range(n):
        entry = {"name": f"walk {i}"}
        if draw(strategies.booleans()):
            entry["path"] = draw(_clean_points_texts())
        else:
            entry["path"] = [[draw(strategies.floats(-12, 12)), draw(strategies.floats(-12, 12))]
                             for _ in range(draw(strategies.integers(2, 5)))]
        for key, good in _MANIFEST_OPTIONS:
            if draw(strategies.integers(0, 2)) == 0:
                entry[key] = draw(strategies.sampled_from(good))
        entries.append(entry)
    return entries


@strategies.composite
def _manifest_entries(draw) -> list:
    """0-6 entries: good ones with (usually) one entry, field or point made
    odd, or odd ones."""
    if draw(strategies.booleans()):
        return draw(strategies.lists(_odd_manifest_entry(), max_size=6))
    entries = draw(_good_manifest_entries(draw(strategies.integers(1, 6))))
    lists = [e["path"] for e in entries if isinstance(e["path"], list)]
    change = draw(strategies.sampled_from(["none", "point", "entry", "entry"]))
    if change == "point" and lists:
        # One point of a good [[x, y], ...] path made odd: a value, or the point itself.
        points = lists[draw(strategies.integers(0, len(lists) - 1))]
        k = draw(strategies.integers(0, len(points) - 1))
        odd = draw(strategies.one_of(_odd_json(), strategies.sampled_from(["12", "0,0", "ab"])))
        if draw(strategies.booleans()):
            points[k][draw(strategies.integers(0, 1))] = odd
        else:
            points[k] = odd
    elif change == "entry":
        k = draw(strategies.integers(0, len(entries) - 1))
        odd = draw(_odd_manifest_entry())
        if isinstance(odd, dict) and odd and draw(strategies.booleans()):
            key = draw(strategies.sampled_from(sorted(odd)))
            entries[k][key] = odd[key]  # one field odd, the rest good
        else:
            entries[k] = odd
    return entries


@strategies.composite
def walk_manifests(draw) -> bytes:
    """A ``batch walk --paths`` JSON file: a list of 0-6 entries (good ones,
    one made odd, or odd ones: names repeated or unsafe, paths as text or
    lists, style, gait and speed of every type, unknown keys), rarely 10 000
    entries; or another top level, or random bytes; cut, a changed byte, a
    BOM, UTF-16."""
    kind = draw(strategies.integers(0, 19))
    if kind == 0:
        return draw(strategies.binary(max_size=200))
    if kind == 1:
        return _json_text(draw(_odd_json())).encode("utf-8", errors="surrogatepass")
    if kind == 2 and draw(strategies.integers(0, 9)) == 0:
        entries = [{"name": f"w{i}", "path": "0,0;1,0"} for i in range(10_000)]
    else:
        entries = draw(_manifest_entries())
    return _mutated(draw, _json_text(entries).encode("utf-8", errors="surrogatepass"))


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_walk_manifest(data: bytes, folder: str) -> str:
    """``batch.walk_items`` reads the file or refuses it with its BatchError
    (a UserError; limits' OutOfRange for a speed). A read item: a safe,
    unique name; a non-empty path text that the worker's ``parse_path``
    reads or refuses with a UserError, and that, written in the manifest
    as a list, was a list of [x, y] or [x, y, speed] numbers; a style and
    gait that are strings; a speed in range."""
    from rigmind import batch
    from rigmind.backend.locomotion.path_input import parse_path

    path = os.path.join(folder, "walks.json")
    with open(path, "wb") as f:
        f.write(data)
    try:
        with warnings_fail():
            items = batch.walk_items(path)
    except UserError:
        return "refused"
    entries = json.loads(data.decode("utf-8"))
    assert len(items) == len(entries) > 0
    names = [it.name for it in items]
    assert len(set(names)) == len(names) and all(n and not n.startswith(".") and "/" not in n for n in names)
    for item, entry in zip(items, entries):
        text = item.params["path"]
        assert isinstance(text, str) and text.strip(), f"path {text!r}"
        if isinstance(entry["path"], list):
            assert all(isinstance(pt, list) and len(pt) in (2, 3) and all(_is_number(c) for c in pt)
                       for pt in entry["path"]), f"path {entry['path']!r} read as {text!r}"
        try:
            with warnings_fail():
                parse_path(text)
        except UserError:
            pass
        for key in ("style", "gait"):
            assert key not in item.params or isinstance(item.params[key], str)
        if "speed" in item.params:
            lo, hi, _ = RANGES["speed"]
            assert _is_number(item.params["speed"]) and lo <= item.params["speed"] <= hi
    return "ok"


# --- glTF references (backend/gltf_refs.check_references) ---------------------------------
# The check runs in a folder holding a few files a glTF may name (a .bin, one
# with a space, one in a subfolder), a folder, a symlink out of the folder and
# a symlink to /dev/zero; outside.bin lies one level up.

GLTF_URIS = ["mesh.bin", "mesh%20data.bin", "mesh data.bin", "sub/inner.bin", "sub%2Finner.bin", "./mesh.bin",
              "sub/../mesh.bin", "sub", "link.bin", "zero.bin", "../outside.bin", "..%2Foutside.bin",
              "%2e%2e/outside.bin", "..\\outside.bin", "sub\\..\\..\\outside.bin", "/etc/passwd", "/dev/zero",
              "file:///etc/passwd", "https://example.invalid/x.bin", "//[abc", "http://[x/y", "C:/x.bin",
              "\\\\server\\share\\x.bin", "mesh.bin?x=1", "mesh.bin#frag", "mesh.bin?/../../outside.bin",
              "mesh.bin#/../../outside.bin", "data:application/octet-stream;base64,AAAA",
              "data:application/octet-stream;base64,!!!*", "data:;base64,", "data:", "data:/../../outside.bin",
              "data:x/../../../outside.bin", "DATA:;base64,AAAA", "a%00b", "a\x00b", "\ud800", "%ed%a0%80", "%ff",
              "%", "%zz", "x" * 300, "a/" * 2100 + "x", "", ".", "?", "#", "con", "mesh.bin\x00.png"]
_URI_PIECES = ["mesh.bin", "sub", "..", ".", "/", "\\", "?", "#", "%2e", "%2E", "%2f", "%5C", "%00", "%", "%ff",
               "outside.bin", "data:", ";base64,", "AAAA", "!", "=", "link.bin", "zero.bin", ":", "//", "[", " ",
               "%20", "\u00e9", "x" * 120]


def _gltf_uris():
    return strategies.one_of(strategies.sampled_from(GLTF_URIS),
                             strategies.lists(strategies.sampled_from(_URI_PIECES), min_size=1, max_size=10).map("".join),
                             strategies.text(max_size=12), _odd_json())


@strategies.composite
def _gltf_docs(draw):
    doc = {"asset": {"version": "2.0"}}
    for kind in ("buffers", "images"):
        if draw(strategies.booleans()):
            items = []
            for _ in range(draw(strategies.integers(0, 4))):
                item = {"byteLength": 4} if kind == "buffers" else {}
                if draw(strategies.integers(0, 5)):
                    item["uri"] = draw(_gltf_uris())
                items.append(item if draw(strategies.integers(0, 9)) else draw(_odd_json()))
            doc[kind] = items if draw(strategies.integers(0, 9)) else draw(_odd_json())
    if draw(strategies.integers(0, 4)) == 0:
        doc["extras"] = draw(_odd_json())
    if draw(strategies.integers(0, 19)) == 0:
        return draw(_odd_json())
    return doc


_GLB_JSON, _GLB_BIN = 0x4E4F534A, 0x004E4942


@strategies.composite
def gltf_files(draw) -> tuple:
    """``(suffix, bytes)``: a ``.gltf`` (JSON, mutated; rarely padded to a few
    MB, the bound on its size) or a ``.glb`` (header, JSON chunk whose length
    may lie, another chunk type, a BIN chunk, cut); or random bytes."""
    kind = draw(strategies.integers(0, 19))
    if kind == 0:
        return draw(strategies.sampled_from([".gltf", ".glb"])), draw(strategies.binary(max_size=200))
    raw = _json_text(draw(_gltf_docs())).encode("utf-8", errors="surrogatepass")
    if kind == 1:
        raw += b" " * draw(strategies.integers(1, 3 * 2**20))
    if draw(strategies.booleans()):
        return ".gltf", _mutated(draw, raw)
    raw += b" " * (-len(raw) % 4)
    length = draw(strategies.sampled_from(["true", "true", "true", "zero", "less", "more", "max", "huge"]))
    chunk_len = {"true": len(raw), "zero": 0, "less": max(len(raw) - 1, 0), "more": len(raw) + 1,
                 "max": 2**32 - 1, "huge": 64 * 2**20 + 1}[length]
    chunk_type = _GLB_JSON if draw(strategies.integers(0, 9)) else draw(strategies.sampled_from([_GLB_BIN, 0, 2**32 - 1]))
    body = struct.pack("<II", chunk_len, chunk_type) + raw
    if draw(strategies.booleans()):
        body += struct.pack("<II", 4, _GLB_BIN) + b"\0" * 4
    data = struct.pack("<4sII", b"glTF", 2, 12 + len(body)) + body
    if draw(strategies.integers(0, 4)) == 0:
        data = data[: draw(strategies.integers(0, len(data)))]
    return ".glb", data


def _gltf_folder(folder: str) -> str:
    home = os.path.join(folder, "gltf")
    if not os.path.isdir(home):
        os.makedirs(os.path.join(home, "sub"))
        for name in ("mesh.bin", "mesh data.bin", os.path.join("sub", "inner.bin")):
            with open(os.path.join(home, name), "wb") as f:
                f.write(b"\0" * 4)
        with open(os.path.join(folder, "outside.bin"), "wb") as f:
            f.write(b"\0" * 4)
        os.symlink(os.path.join(folder, "outside.bin"), os.path.join(home, "link.bin"))
        os.symlink("/dev/zero", os.path.join(home, "zero.bin"))
    return home


def _gltf_json(suffix: str, data: bytes):
    if suffix == ".glb" and data[:4] == b"glTF":
        (n,) = struct.unpack("<I", data[12:16])
        data = data[20:20 + n]
    return json.loads(data.decode("utf-8-sig"))


def blender_opens(home: str, uri: str):
    """The file Blender's glTF importer reads for ``uri`` in a glTF in
    ``home`` (its io_scene_gltf2/io/imp/gltf2_io_gltf.py ``load_uri``): a
    ``data:`` URI holding ``;base64,`` is decoded (None), anything else is a
    path: ``io/com/path.py`` ``uri_to_path`` (backslashes as slashes,
    percent-decoded, ``os.path.normpath``; no query or fragment dropped)
    joined to the folder, then opened (symlinks followed)."""
    if uri.startswith("data:") and ";base64," in uri:
        return None
    return os.path.realpath(os.path.join(home, os.path.normpath(unquote(uri.replace("\\", "/")))))


def check_gltf(item: tuple, folder: str) -> str:
    """``check_references`` passes the file or refuses it with its
    GLTFReferenceError. A passed file: every buffer and image URI is a
    string and what Blender's importer would open for it is a regular file
    inside the folder (or decoded data)."""
    suffix, data = item
    home = _gltf_folder(folder)
    path = os.path.join(home, "fuzz" + suffix)
    with open(path, "wb") as f:
        f.write(data)
    try:
        with warnings_fail():
            check_references(path)
    except GLTFReferenceError:
        return "refused"
    doc = _gltf_json(suffix, data)
    inside = os.path.realpath(home) + os.sep
    for kind in ("buffers", "images"):
        for entry in doc.get(kind) if isinstance(doc.get(kind), list) else []:
            uri = entry.get("uri") if isinstance(entry, dict) else None
            if uri is None:
                continue
            assert isinstance(uri, str), f"{kind} uri {uri!r} passed"
            target = blender_opens(home, uri)
            assert target is None or (target.startswith(inside) and os.path.isfile(target)), \
                f"{kind} uri {uri[:80]!r} passed; Blender would open {target[:120]}"
    return "ok"


# --- the CSV RigMind reads itself: LJSpeech metadata.csv (rigmind eval face) -------------
# RigMind writes Live Link Face CSV but reads no user CSV but the --path @FILE
# points (csv_point_files above); the one other CSV it reads is the eval's
# LJSpeech metadata (backend/face/eval.read_lj_metadata).

_LJ_SEED = ["LJ001-0001|Printing, in the only sense|Printing, in the only sense",
            "LJ001-0002|in being comparatively modern.|in being comparatively modern.",
            "LJ001-0003|For although the Chinese took impressions from wood blocks engraved in relief for centuries "
            "before the woodcutters of the Netherlands, by a similar process|For although the Chinese took "
            "impressions from wood blocks engraved in relief for centuries before the woodcutters of the "
            "Netherlands, by a similar process",
            "LJ002-0004|Mr. Jones paid £4, 2 shillings on 12/3/1850.|Mister Jones paid four pounds, two shillings."]


@strategies.composite
def lj_metadata_files(draw) -> bytes:
    """An LJSpeech ``metadata.csv``: seed lines with fields dropped, added or
    emptied, ``|`` swapped for ``,`` or tab, quotes, CRLF, NUL, non-ASCII,
    lone surrogates; a BOM, UTF-16, Latin-1, cut, a changed byte; rarely
    20 000 lines (the real one has 13 100); or random bytes."""
    kind = draw(strategies.integers(0, 19))
    if kind == 0:
        return draw(strategies.binary(max_size=300))
    if kind == 1:
        return ("\n".join(_LJ_SEED) + "\n").encode() * 5000
    lines = []
    for _ in range(draw(strategies.integers(0, 8))):
        fields = draw(strategies.sampled_from(_LJ_SEED)).split("|")
        op = draw(strategies.sampled_from(["same", "same", "drop", "add", "empty", "sep", "quote", "text"]))
        if op == "drop":
            del fields[draw(strategies.integers(0, len(fields) - 1))]
        elif op == "add":
            fields.insert(draw(strategies.integers(0, len(fields))), draw(strategies.text(max_size=10)))
        elif op == "empty":
            fields[draw(strategies.integers(0, len(fields) - 1))] = ""
        elif op == "quote":
            fields = [f'"{f}"' for f in fields]
        elif op == "text":
            fields[draw(strategies.integers(0, len(fields) - 1))] = draw(strategies.text(max_size=30))
        sep = draw(strategies.sampled_from(["|", "|", ",", "\t", "||"])) if op == "sep" else "|"
        lines.append(sep.join(fields))
    text = _line_ending(draw).join(lines) + draw(strategies.sampled_from(["", "\n", "\r\n"]))
    encoding = draw(strategies.sampled_from(["utf-8", "utf-8", "utf-8", "utf-8-sig", "utf-16", "latin-1"]))
    return _mutated(draw, text.encode(encoding, errors="replace"))


def check_lj_metadata(data: bytes, folder: str) -> str:
    """``read_lj_metadata`` reads the rows or refuses the file with its
    LJMetadataError. Read rows: ``(clip id, transcript)`` strings, the id
    the first ``|`` field of a line with at least three."""
    from rigmind.backend.face.eval import LJMetadataError, read_lj_metadata

    path = os.path.join(folder, "metadata.csv")
    with open(path, "wb") as f:
        f.write(data)
    try:
        with warnings_fail():
            rows = read_lj_metadata(path)
    except LJMetadataError:
        return "refused"
    assert isinstance(rows, list) and all(isinstance(c, str) and isinstance(t, str) and "|" not in c
                                          for c, t in rows)
    assert len(rows) <= data.count(b"|") // 2 + 1
    return "ok"
