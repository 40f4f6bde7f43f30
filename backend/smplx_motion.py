"""Read and write SMPL-X motion files (EMAGE / BEAT2 / AMASS-style ``.npz``).

File layout (one take per file)::

    poses             (T, 165) axis-angle, radians: 55 joints x 3 in SMPL-X order
                      (global orient = pelvis, 21 body, jaw, left eye, right eye,
                      15 left-hand, 15 right-hand joints); (T, 55, 3) is accepted
    trans             (T, 3) metres, added to the pelvis joint position
    betas             (B,) shape coefficients (BEAT2: 300)            [optional]
    expressions       (T, E) FLAME expression coefficients (BEAT2: 100) [optional]
    mocap_frame_rate  scalar, frames per second (AMASS SMPL-H: ``mocap_framerate``) [optional, 30]
    model, gender     strings, e.g. 'smplx2020', 'neutral'           [optional]

SMPL-X's frame is right-handed, Y up, the body faces +Z and +X is the
character's left. Its rest pose is a T-pose whose joint frames are all aligned
with the world, and every rotation is relative to the parent joint's frame
(like BVH). Hence the skeleton here has identity rest rotations and a clip's
``Motion.rotations`` are exactly the file's rotations, re-expressed in
Blender's Z-up frame by :mod:`.axes` (``(x, y, z) -> (x, -z, y)``: the body
then faces -Y, left is +X).

In SMPL-X the body is posed about the pelvis joint ``J0`` and then moved by
``trans``: ``joint_world = R0 (J - J0) + J0 + trans``. So
``Motion.root_positions = trans + J0`` (pelvis world position) and writing
back subtracts the skeleton's rest pelvis position.

Finger rotations are taken as stored, i.e. relative to the *flat* template hand
(``flat_hand_mean=True`` in the ``smplx`` package); BEAT2's finger poses carry
their relaxed curl themselves, which fits that convention.

Rest joint positions depend on the licensed body model (not shipped, see
:func:`smplx_rest_skeleton`): rotations read from a file are exact, the bone
lengths of the built-in template are approximate.

Extras ride in ``motion.skeleton.meta["smplx"]`` (a dict): ``betas`` (B,),
``expressions`` (T, E) or ``None``, ``gender``, ``model``, ``fps`` (as in the
file), ``rest_source`` ("model" or "approx_template"), ``source`` (the path).
:func:`smplx_extras` returns that dict.
"""

from __future__ import annotations

import tokenize
import warnings
import zipfile
import zlib
from pathlib import Path

import numpy as np

from .atomic_write import replaced
from . import axes
from . import rotations
from .motion import Motion
from .skeleton import Skeleton
from ..presets import load_preset
from .errors import UserError

NUM_JOINTS = 55
NUM_BETAS = 300
NUM_EXPRESSIONS = 100
DEFAULT_FPS = 30.0
DEFAULT_MODEL = "smplx2020"
DEFAULT_GENDER = "neutral"

_FPS_KEYS = ("mocap_frame_rate", "mocap_framerate", "fps", "frame_rate")


class SMPLXFileError(UserError):
    """An SMPL-X motion file that cannot be read or written: missing key,
    wrong shape, non-finite values, or a motion not on the SMPL-X skeleton."""


# --- skeleton ---------------------------------------------------------------------


def smplx_joint_names() -> list:
    """The 55 SMPL-X joint names in pose-vector order (fresh list)."""
    return list(load_preset("smplx_skeleton")["names"])


def smplx_parents() -> np.ndarray:
    """``[55]`` parent indices (-1 for the pelvis)."""
    return np.asarray(load_preset("smplx_skeleton")["parents"], dtype=np.int64)


def approx_rest_positions() -> np.ndarray:
    """``[55, 3]`` approximate neutral SMPL-X rest joint positions, metres, in
    the SMPL-X frame (Y up, facing +Z, pelvis near ``y = -0.35``), from
    ``presets/smplx_skeleton.json`` ("rest_positions_approx")."""
    p = np.asarray(load_preset("smplx_skeleton")["rest_positions_approx"], dtype=np.float64)
    if p.shape != (NUM_JOINTS, 3):
        raise ValueError(f"smplx_skeleton.json rest_positions_approx has shape {p.shape}, expected (55, 3)")
    return p


# Leaf bones need a tail (Blender bone end); SMPL-X frame, metres, from the joint.
_LEAF_TAILS_YUP = {
    "head": (0.0, 0.12, 0.02),
    "jaw": (0.0, -0.04, 0.07),
    "left_eye_smplhf": (0.0, 0.0, 0.02),
    "right_eye_smplhf": (0.0, 0.0, 0.02),
    "left_foot": (0.0, -0.01, 0.06),
    "right_foot": (0.0, -0.01, 0.06),
}
# Joints with several children: the child the bone should point at.
_MAIN_CHILD = {"pelvis": "spine1", "spine3": "neck", "left_wrist": "left_middle1", "right_wrist": "right_middle1"}


def _tails_yup(names, parents, pos) -> np.ndarray:
    tails = np.zeros((len(names), 3))
    idx = {n: i for i, n in enumerate(names)}
    for j, n in enumerate(names):
        kids = [c for c in range(len(names)) if parents[c] == j]
        if n in _LEAF_TAILS_YUP:
            tails[j] = _LEAF_TAILS_YUP[n]
        elif n in _MAIN_CHILD:
            tails[j] = pos[idx[_MAIN_CHILD[n]]] - pos[j]
        elif len(kids) == 1:
            tails[j] = pos[kids[0]] - pos[j]
        elif not kids and parents[j] >= 0:
            # finger tips: continue the last phalanx at ~85% of its length
            tails[j] = 0.85 * (pos[j] - pos[parents[j]])
    return tails


def _skeleton_from_positions_yup(pos_yup: np.ndarray, meta: dict, up: str = "Z") -> Skeleton:
    names, parents = smplx_joint_names(), smplx_parents()
    pos_yup = np.asarray(pos_yup, dtype=np.float64).reshape(NUM_JOINTS, 3)
    offsets = pos_yup.copy()
    offsets[1:] = pos_yup[1:] - pos_yup[parents[1:]]
    sk = Skeleton(names, parents, offsets, None, _tails_yup(names, parents, pos_yup), meta)
    return axes.to_blender(sk, "Y") if str(up).upper() == "Z" else sk


def _exact_rest_positions_yup(betas: np.ndarray, model_path, gender: str, model: str) -> np.ndarray:
    """Rest joints ``[55, 3]`` (SMPL-X frame) from the real body model, or raise."""
    import smplx  # optional dependency (needs torch); ImportError -> caller falls back
    import torch

    path = Path(model_path).expanduser()
    kw = dict(model_type="smplx", use_pca=False, flat_hand_mean=True, use_face_contour=False)
    nb = int(betas.shape[0]) if betas.size else 10
    genders = [gender]
    # EMAGE names the 2020 neutral model SMPLX_NEUTRAL_2020.npz (gender "NEUTRAL_2020").
    if "2020" in str(model) and "2020" not in gender:
        genders.insert(0, f"{gender}_2020")
    if path.is_file():
        tries = [dict(model_path=str(path), ext=path.suffix.lstrip(".") or "npz")]
    else:
        # smplx.create looks in <folder>/smplx/; people also point at the folder holding the files
        tries = [
            dict(model_path=str(f), ext=ext, gender=g)
            for folder in (path / "smplx", path)
            for g in genders
            for ext in ("npz", "pkl")
            for f in [folder / f"SMPLX_{g.upper()}.{ext}"]
            if f.is_file()
        ]
        if not tries:
            raise FileNotFoundError(f"no SMPLX_{genders[0].upper()}.npz/.pkl in {path} or {path / 'smplx'}")
    last = None
    for t in tries:
        try:
            body = smplx.create(**t, num_betas=nb, num_expression_coeffs=NUM_EXPRESSIONS, **kw)
            break
        except Exception as e:  # smplx raises assorted errors for a missing/odd file
            last = e
    else:
        raise RuntimeError(f"smplx could not load a model from {path}: {last}")

    nb = int(getattr(body, "num_betas", nb))
    b = np.zeros((1, nb), dtype=np.float32)
    b[0, : min(nb, betas.size)] = betas[:nb]
    with torch.no_grad():
        out = body(betas=torch.from_numpy(b), return_verts=False)
    return out.joints[0, :NUM_JOINTS].detach().cpu().numpy().astype(np.float64)


def smplx_rest_skeleton(
    betas=None, model_path=None, *, gender: str = DEFAULT_GENDER, model: str = DEFAULT_MODEL, up: str = "Z"
) -> Skeleton:
    """The 55-joint SMPL-X skeleton in its rest T-pose, identity rest rotations.

    ``betas`` ``(B,)`` shape coefficients (stored in meta; used only with a
    model). If ``model_path`` (a model file, or a folder as accepted by
    ``smplx.create``) is given and the ``smplx`` package loads it, the joints
    are the model's exact zero-pose joints for ``betas`` (zero expression,
    flat hands). Otherwise -- always when no model is given -- the built-in
    APPROXIMATE neutral template of ``presets/smplx_skeleton.json`` is used and
    ``betas`` do not change it: bone lengths are then off by up to a few
    centimetres (the licence of SMPL-X forbids shipping the model), while
    rotations stay exact. ``meta["smplx"]["rest_source"]`` says which.

    Returned in Blender's frame (``up="Z"``: metres, Z up, faces -Y) or the
    SMPL-X frame (``up="Y"``: Y up, faces +Z). The root offset is the pelvis
    rest position in the model frame (pelvis near 0.35 m *below* the origin),
    so ``trans`` plus it is the pelvis world position.
    """
    b = np.zeros(0) if betas is None else np.asarray(betas, dtype=np.float64).reshape(-1)
    source = "approx_template"
    pos = None
    if model_path is not None:
        try:
            pos = _exact_rest_positions_yup(b, model_path, gender, model)
            source = "model"
        except Exception as e:
            warnings.warn(f"SMPL-X model at {model_path} not usable ({e}); using the approximate template", stacklevel=2)
    if pos is None:
        pos = approx_rest_positions()
    meta = {"smplx": {"betas": b.copy(), "gender": gender, "model": model, "rest_source": source}}
    return _skeleton_from_positions_yup(pos, meta, up)


def smplx_extras(motion: Motion) -> dict:
    """The SMPL-X extras of ``motion`` (``motion.skeleton.meta["smplx"]``;
    created empty if absent): betas, expressions ``(T, E)``, gender, model..."""
    return motion.skeleton.meta.setdefault("smplx", {})


# --- reading ------------------------------------------------------------------------


#: The most bytes one array of an ``.npz`` may take once read (30 minutes of
#: SMPL-X poses at 30 fps are 36 MB of float32): an array past it, or a member
#: that would inflate past it, is refused before anything is allocated.
MAX_ARRAY_BYTES = 512 * 1024 * 1024


def _check_member_size(data, key: str, path) -> None:
    """Refuse ``key`` from its npy header and the zip directory, before it is
    read: an array whose header asks for more than :data:`MAX_ARRAY_BYTES`,
    a header that claims more data than its member holds (a lying header), or
    a member that inflates past the limit (a zip bomb)."""
    name = key if key in data.zip.namelist() else key + ".npy"
    try:
        info = data.zip.getinfo(name)
        with data.zip.open(name) as fh:
            version = np.lib.format.read_magic(fh)
            read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                           else np.lib.format.read_array_header_2_0)
            shape, _, dtype = read_header(fh)
            header = fh.tell() if fh.seekable() else 0
    except (ValueError, OSError, EOFError, KeyError, zipfile.BadZipFile, zlib.error, NotImplementedError,
            RuntimeError, SyntaxError, tokenize.TokenError) as e:  # numpy parses the header as Python tokens
        raise SMPLXFileError(f"{path}: key {key!r} has no readable array header ({type(e).__name__}: {e})") from None
    limit_mb = MAX_ARRAY_BYTES // (1024 * 1024)
    if info.file_size > MAX_ARRAY_BYTES:
        raise SMPLXFileError(f"{path}: key {key!r} inflates to {info.file_size / 2**20:.0f} MB, more than "
                             f"RigMind's {limit_mb} MB per array")
    nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if nbytes > MAX_ARRAY_BYTES:
        raise SMPLXFileError(f"{path}: key {key!r} claims shape {tuple(shape)} ({nbytes / 2**30:.1f} GiB), more "
                             f"than RigMind's {limit_mb} MB per array")
    if nbytes > info.file_size - header:
        raise SMPLXFileError(f"{path}: key {key!r} claims shape {tuple(shape)} ({nbytes} bytes) but holds "
                             f"{info.file_size - header}: the file is damaged or lies about its contents")


def _field(data, key: str, path, required: bool = True):
    if key not in data.files:
        if required:
            raise SMPLXFileError(f"{path}: missing key {key!r} (keys present: {sorted(data.files)})")
        return None
    _check_member_size(data, key, path)
    try:
        return data[key]
    except ValueError as e:
        if "pickle" not in str(e).lower():
            raise SMPLXFileError(f"{path}: key {key!r} cannot be read ({e})") from None
        # object (pickled) arrays: never unpickle an untrusted file
        if required:
            raise SMPLXFileError(f"{path}: key {key!r} is a pickled object array; refusing to unpickle") from e
        return None
    except (OSError, EOFError, zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError) as e:  # a damaged member
        raise SMPLXFileError(f"{path}: key {key!r} is damaged ({type(e).__name__}: {e})") from None


def _finite(name: str, a: np.ndarray, path) -> np.ndarray:
    if np.iscomplexobj(a):
        raise SMPLXFileError(f"{path}: {name!r} holds complex numbers; expected real values")
    try:
        a = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise SMPLXFileError(f"{path}: {name!r} is not numeric ({e})") from None
    if not np.all(np.isfinite(a)):
        bad = np.argwhere(~np.isfinite(a))[0]
        raise SMPLXFileError(f"{path}: {name!r} has NaN/inf values (first at index {tuple(int(i) for i in bad)})")
    return a


def _string(data, key: str, default: str, path) -> str:
    v = _field(data, key, path, required=False)
    if v is None:
        return default
    v = np.asarray(v)
    if v.size != 1:
        return default
    v = v.reshape(()).item()
    return v.decode() if isinstance(v, bytes) else str(v)


def _poses_array(poses, path) -> np.ndarray:
    p = np.asarray(poses)
    if p.ndim == 3 and p.shape[1:] == (NUM_JOINTS, 3):
        p = p.reshape(p.shape[0], NUM_JOINTS * 3)
    if p.ndim != 2 or p.shape[1] != NUM_JOINTS * 3:
        raise SMPLXFileError(
            f"{path}: 'poses' has shape {p.shape}, expected (T, 165) or (T, 55, 3) "
            "(SMPL-X: 55 joints x axis-angle; SMPL (72) and SMPL-H (156) are not SMPL-X)"
        )
    if p.shape[0] < 1:
        raise SMPLXFileError(f"{path}: 'poses' has no frames")
    return _finite("poses", p, path)


def read_smplx_npz(path, *, model_path=None) -> Motion:
    """Read an SMPL-X motion ``.npz`` into a :class:`Motion` in Blender's frame.

    Returns a motion on :func:`smplx_rest_skeleton` (exact rest joints when
    ``model_path`` loads, the approximate template otherwise): rotations
    ``[T, 55, 4]`` (exact, parent-relative, identity rest), root positions
    ``[T, 3]`` = pelvis world position in metres (``trans`` + rest pelvis,
    Z up), fps from ``mocap_frame_rate`` (default 30). Betas, FLAME
    expressions ``(T, E)``, gender and model go to
    ``motion.skeleton.meta["smplx"]`` (see :func:`smplx_extras`).

    Raises ``FileNotFoundError`` for a missing file and :class:`SMPLXFileError`
    (a ``ValueError``) for a file that is not an npz, lacks ``poses`` or
    ``trans``, has wrong shapes, or holds NaN/inf values.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no SMPL-X motion file {path}")
    try:
        data = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, NotImplementedError, RuntimeError) as e:
        # NotImplementedError: a zip "version needed" it does not know; RuntimeError: an encrypted member.
        raise SMPLXFileError(f"{path}: not a readable .npz file ({type(e).__name__}: {e})") from None
    if not hasattr(data, "files"):
        raise SMPLXFileError(f"{path}: a single array (.npy), not an .npz archive of named arrays")
    with data:
        poses = _poses_array(_field(data, "poses", path), path)
        t = poses.shape[0]
        trans = _finite("trans", _field(data, "trans", path), path)
        if trans.ndim == 1 and trans.shape == (3,):
            trans = np.broadcast_to(trans, (t, 3)).copy()
        if trans.shape != (t, 3):
            raise SMPLXFileError(f"{path}: 'trans' has shape {trans.shape}, expected ({t}, 3) to match 'poses'")

        betas = _field(data, "betas", path, required=False)
        betas = np.zeros(0) if betas is None else _finite("betas", betas, path).reshape(-1)
        if betas.ndim != 1:
            raise SMPLXFileError(f"{path}: 'betas' must be one vector")

        expr = _field(data, "expressions", path, required=False)
        if expr is None:
            expr = _field(data, "expression", path, required=False)
        if expr is not None:
            expr = _finite("expressions", expr, path)
            if expr.ndim != 2 or expr.shape[0] != t:
                raise SMPLXFileError(f"{path}: 'expressions' has shape {expr.shape}, expected ({t}, E)")

        fps = DEFAULT_FPS
        fps_raw = None
        for k in _FPS_KEYS:
            v = _field(data, k, path, required=False)
            if v is not None:
                fps_raw = v
                try:
                    if np.iscomplexobj(v):
                        raise TypeError("complex")
                    v = np.asarray(v, dtype=np.float64).reshape(-1)
                except (TypeError, ValueError):
                    raise SMPLXFileError(f"{path}: {k!r} must be one positive frame rate, got {v!r}") from None
                if v.size != 1 or not np.isfinite(v[0]) or v[0] <= 0:
                    raise SMPLXFileError(f"{path}: {k!r} must be one positive frame rate, got {v}")
                fps = float(v[0])
                break
        gender = _string(data, "gender", DEFAULT_GENDER, path)
        model = _string(data, "model", DEFAULT_MODEL, path)

    sk_y = smplx_rest_skeleton(betas, model_path, gender=gender, model=model, up="Y")
    extras = sk_y.meta["smplx"]
    extras.update(
        expressions=expr,
        fps=None if fps_raw is None else np.asarray(fps_raw).reshape(()).item(),
        source=str(path),
    )
    q = rotations.from_axis_angle(poses.reshape(t, NUM_JOINTS, 3))
    root = trans + sk_y.offsets[0]
    m = Motion(sk_y, rotations.make_continuous(q), root, fps, name=path.stem)
    return axes.to_blender(m, "Y")


# --- writing ------------------------------------------------------------------------


def _on_identity_rest(motion: Motion) -> Motion:
    """``motion`` on an SMPL-X-ordered skeleton with identity rest rotations."""
    sk = motion.skeleton
    names = smplx_joint_names()
    if sorted(sk.names) != sorted(names):
        missing = sorted(set(names) - set(sk.names))
        extra = sorted(set(sk.names) - set(names))
        raise SMPLXFileError(
            "write_smplx_npz needs a motion on the 55-joint SMPL-X skeleton "
            f"(missing {missing[:6]}{'...' if len(missing) > 6 else ''}, "
            f"unexpected {extra[:6]}{'...' if len(extra) > 6 else ''}); retarget it first"
        )
    if list(sk.names) != names:
        order = [sk.index(n) for n in names]
        sk2 = sk.reorder(names)
        if not np.array_equal(sk2.parents, smplx_parents()):
            raise SMPLXFileError("the motion's skeleton has SMPL-X joint names but another hierarchy")
        motion = Motion(
            sk2,
            motion.rotations[:, order],
            motion.root_positions,
            motion.fps,
            None if motion.translations is None else motion.translations[:, order],
            list(motion.shape_names),
            motion.shape_weights,
            motion.name,
        )
        sk = sk2
    elif not np.array_equal(sk.parents, smplx_parents()):
        raise SMPLXFileError("the motion's skeleton has SMPL-X joint names but another hierarchy")
    if np.allclose(np.abs(sk.rest_rotations[:, 0]), 1.0, atol=1e-9):
        return motion
    # Same rest joint positions, world-aligned rest frames (what SMPL-X expects).
    _, pos = sk.rest_world()
    offsets = pos.copy()
    offsets[1:] = pos[1:] - pos[sk.parents[1:]]
    ident = Skeleton(list(sk.names), sk.parents.copy(), offsets, None, None, dict(sk.meta))
    return motion.with_rest(ident)


def write_smplx_npz(path, motion: Motion, *, compress: bool = False) -> Path:
    """Write ``motion`` (on the SMPL-X skeleton, Blender frame) as an
    EMAGE/BEAT2-style SMPL-X ``.npz`` and return the path.

    Keys: ``poses`` (T, 165) float32 axis-angle (angles in [0, pi]), ``trans``
    (T, 3) float64 metres = root position minus the skeleton's rest pelvis
    position, in the SMPL-X frame (Y up), ``betas`` (stored, else zeros(300)),
    ``expressions`` (stored (T, E), else zeros (T, 100)), ``mocap_frame_rate``
    (int32 when whole, else float64), ``model`` (stored, else 'smplx2020'),
    ``gender`` (stored, else 'neutral').

    A skeleton whose rest rotations are not identity (e.g. Blender bones) is
    first converted with :meth:`Motion.with_rest` onto world-aligned rest
    frames at the same rest joint positions. Joint ``translations`` other than
    the root cannot be stored in SMPL-X and are dropped. Raises
    :class:`SMPLXFileError` if the skeleton is not the SMPL-X one or values are
    not finite.
    """
    path = Path(path)
    m = _on_identity_rest(motion)
    if m.translations is not None:
        moved = np.abs(m.translations[:, 1:] - m.skeleton.offsets[None, 1:]).max() if m.num_frames else 0.0
        if moved > 1e-6:
            warnings.warn("write_smplx_npz: per-joint translations cannot be stored in SMPL-X; dropped", stacklevel=2)
    m_y = axes.from_blender(m, "Y")
    t = m_y.num_frames
    poses = rotations.to_axis_angle(m_y.rotations).reshape(t, NUM_JOINTS * 3)
    trans = m_y.root_positions - m_y.skeleton.offsets[0]
    for name, a in (("poses", poses), ("trans", trans)):
        if not np.all(np.isfinite(a)):
            raise SMPLXFileError(f"write_smplx_npz: {name} would contain NaN/inf")

    extras = motion.skeleton.meta.get("smplx", {}) or {}
    betas = extras.get("betas")
    betas = np.zeros(NUM_BETAS, np.float32) if betas is None or np.size(betas) == 0 else np.asarray(betas, np.float32)
    expr = extras.get("expressions")
    if expr is not None and np.asarray(expr).shape[0] != t:
        warnings.warn(
            f"write_smplx_npz: stored expressions have {np.asarray(expr).shape[0]} frames, the motion {t}; "
            "writing zero expressions",
            stacklevel=2,
        )
        expr = None
    expr = np.zeros((t, NUM_EXPRESSIONS)) if expr is None else np.asarray(expr, dtype=np.float64)
    fps = float(m.fps)
    fps_out = np.int32(round(fps)) if abs(fps - round(fps)) < 1e-9 else np.float64(fps)

    arrays = dict(
        betas=betas,
        poses=poses.astype(np.float32),
        expressions=expr,
        trans=trans.astype(np.float64),
        model=np.array(str(extras.get("model") or DEFAULT_MODEL)),
        gender=np.array(str(extras.get("gender") or DEFAULT_GENDER)),
        mocap_frame_rate=np.array(fps_out),
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    # np.savez appends ".npz" to other names; write through a handle to keep the name asked for.
    with replaced(path) as tmp, open(tmp, "wb") as f:
        (np.savez_compressed if compress else np.savez)(f, **arrays)
    return path


__all__ = [
    "SMPLXFileError",
    "NUM_JOINTS",
    "smplx_joint_names",
    "smplx_parents",
    "approx_rest_positions",
    "smplx_rest_skeleton",
    "smplx_extras",
    "read_smplx_npz",
    "write_smplx_npz",
]
