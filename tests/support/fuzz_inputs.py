"""Generated inputs for the file readers (issue #17 item 7), shared by the
short CI run (tests/project/test_fuzz_inputs.py) and the full one (bench/fuzz_inputs.py).

Each ``check_*`` feeds one generated input to a reader and returns
``"ok"`` (read) or ``"refused"`` (the reader's documented error: BVHError,
SMPLXFileError, AudioError); any other exception propagates, and is a
failure. A read result is also checked for sense (finite arrays, the shapes
the docstrings promise).
"""

from __future__ import annotations

import io
import os
import tempfile
import zipfile

import numpy as np
from hypothesis import strategies

from rigmind.backend.audio.loading import AudioError, load_audio
from rigmind.backend.bvh import BVHError, loads_bvh
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
