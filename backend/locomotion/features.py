"""Per-clip locomotion features, left/right mirroring and the feature cache.

Everything is vectorised over frames. Frames: Blender Z-up, metres, seconds,
radians; characters face -Y and their left is +X.

The *character root* of frame ``f`` is the ground projection (``z = 0``) of
the hips, ``root_pos[f] = hips[f, :2]``, with a facing direction
``facing[f]`` (unit 2D, world XY) from the hips' and shoulders' left-right
axes: ``across = unit(hip_L - hip_R) + unit(shoulder_L - shoulder_R)``
(horizontal parts), ``forward = across x up``, Gaussian-smoothed over
``sigma = 0.25 s`` and normalised. ``yaw[f]`` is the rotation about +Z (counter
clockwise seen from above) taking the rest facing -Y to ``facing[f]``, so
``facing = (sin yaw, -cos yaw)``; it is unwrapped (continuous) over the clip.

*Root space* is the frame with its origin at ``(root_pos, 0)`` rotated by
``yaw``: in it the character faces -Y and its left is +X like at rest.

The Bandai skeleton's joint 0 (``joint_Root``) is a static ground root at the
origin and ``Hips`` carries the translation. Root-space rotations replace
joint 0 by the character root: joint 0 is identity and the children of joint
0 (the hips) are expressed relative to the character root, so
:meth:`ClipFeatures.to_motion` gives back a :class:`Motion` whose joint 0 is
the character root (``root_positions = (x, y, 0)``, rotation = yaw) and whose
world joint positions equal the source's.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from ..atomic_write import replaced
from ..filters import gaussian_filter1d

from .. import rotations
from ..bvh import read_bvh
from ..errors import UserError
from ..foot_contacts import ContactConfig, detect_contacts
from ..motion import Motion
from ..resample import resample
from ..skeleton import Skeleton
from . import dataset
from .. import paths

#: Frame rate of every cached clip.
FPS = 30.0
#: Trajectory sample times (s) relative to the current frame.
TRAJ_TIMES = (-1.0, -2.0 / 3.0, -1.0 / 3.0, 0.0, 1.0 / 3.0, 2.0 / 3.0, 1.0)
#: Joints whose contacts are detected, in the order of ``contacts[:, k]``.
CONTACT_JOINTS = ("Foot_L", "Toes_L", "Foot_R", "Toes_R")
#: Joints used for the facing direction and the root (Bandai names).
BANDAI_JOINTS = {
    "hips": "Hips",
    "hip_l": "UpperLeg_L",
    "hip_r": "UpperLeg_R",
    "shoulder_l": "UpperArm_L",
    "shoulder_r": "UpperArm_R",
}
#: Bumped whenever the cached arrays change meaning; stale cache files are rebuilt.
FEATURE_VERSION = "1"
#: Default cache folder (git-ignored).
DEFAULT_CACHE_DIR = paths.cache_dir("locomotion")

_UP = np.array([0.0, 0.0, 1.0])
_EPS = 1e-9


# --- small helpers ---------------------------------------------------------------


def yaw_quat(yaw: np.ndarray) -> np.ndarray:
    """Quaternions ``[..., 4]`` of rotations by ``yaw`` (radians) about +Z."""
    yaw = np.asarray(yaw, dtype=np.float64)
    z = np.zeros_like(yaw)
    return np.stack([np.cos(0.5 * yaw), z, z, np.sin(0.5 * yaw)], axis=-1)


def rotate2d(v: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rotate 2D vectors ``v [..., 2]`` counter clockwise by ``angle [...]``."""
    c, s = np.cos(angle), np.sin(angle)
    x, y = v[..., 0], v[..., 1]
    return np.stack([c * x - s * y, s * x + c * y], axis=-1)


def facing_from_yaw(yaw: np.ndarray) -> np.ndarray:
    """Unit world facing ``[..., 2]`` for ``yaw`` (0 = facing -Y)."""
    yaw = np.asarray(yaw, dtype=np.float64)
    return np.stack([np.sin(yaw), -np.cos(yaw)], axis=-1)


def yaw_from_facing(facing: np.ndarray) -> np.ndarray:
    """Yaw (radians, in (-pi, pi]) of world facing directions ``[..., 2]``."""
    facing = np.asarray(facing, dtype=np.float64)
    return np.arctan2(facing[..., 0], -facing[..., 1])


# Decoding millions of 6D rotations: the matrices are orthonormal already,
# so skip the SVD of rotations.from_matrix.
quat_from_rotmat = rotations.from_orthonormal_matrix


def quat_from_6d(d6: np.ndarray) -> np.ndarray:
    """6D rotations ``[..., 6]`` (Gram-Schmidt) to quaternions ``[..., 4]``."""
    return quat_from_rotmat(rotations.matrix_from_6d(d6))


# --- character root ----------------------------------------------------------------


def character_root(world_pos: np.ndarray, names, fps: float = FPS, sigma: float = 0.25, joints=None):
    """Ground-projected hips and smoothed facing.

    Args:
        world_pos: ``[F, J, 3]`` world joint positions (metres, Z-up).
        names: joint names of the skeleton.
        fps: frames per second (for ``sigma``).
        sigma: Gaussian smoothing of the facing direction, seconds.
        joints: role -> joint name (default :data:`BANDAI_JOINTS`).

    Returns:
        ``root_pos [F, 2]`` (world XY of the hips), ``facing [F, 2]`` (unit
        world XY) and ``yaw [F]`` (radians, unwrapped; 0 faces -Y).
    """
    joints = dict(BANDAI_JOINTS, **(joints or {}))
    ix = {k: list(names).index(v) for k, v in joints.items()}

    def horiz_unit(v):
        v = v.copy()
        v[..., 2] = 0.0
        return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), _EPS)

    across = horiz_unit(world_pos[:, ix["hip_l"]] - world_pos[:, ix["hip_r"]]) + horiz_unit(
        world_pos[:, ix["shoulder_l"]] - world_pos[:, ix["shoulder_r"]]
    )
    fwd = np.cross(across, _UP)[:, :2]
    fwd /= np.maximum(np.linalg.norm(fwd, axis=-1, keepdims=True), _EPS)
    if sigma > 0 and len(fwd) > 1:
        fwd = gaussian_filter1d(fwd, sigma * fps, axis=0, mode="nearest")
        fwd /= np.maximum(np.linalg.norm(fwd, axis=-1, keepdims=True), _EPS)
    yaw = np.unwrap(yaw_from_facing(fwd))
    return world_pos[:, ix["hips"], :2].copy(), fwd, yaw


# --- features ------------------------------------------------------------------------


@dataclass
class ClipFeatures:
    """Features of one clip at ``fps`` (30). Shapes: ``F`` frames, ``J``
    joints (22 for Bandai), ``T`` trajectory samples (7), ``K`` contact
    joints (4).

    World (Blender Z-up, metres): ``root_pos [F, 2]`` (hips projected on
    z = 0), ``facing [F, 2]`` (unit), ``yaw [F]`` (radians, 0 = facing -Y,
    CCW positive, unwrapped).

    Root space of the current frame (faces -Y, left = +X):
    ``joint_pos [F, J, 3]`` (m), ``joint_vel [F, J, 3]`` (m/s, world central
    differences rotated into the current root frame), ``rot6d [F, J, 6]``
    (local rotations, first two matrix columns; joint 0 identity and its
    children relative to the character root), ``traj_pos [F, T, 2]`` (m) and
    ``traj_dir [F, T, 2]`` (unit) at ``traj_times [T]`` seconds (indices
    clamped at the clip ends), ``root_vel [F, 2]`` (m/s).
    ``root_ang_vel [F]``: yaw rate, rad/s (positive = turning left / CCW).
    ``contacts [F, K]``: 1.0 where :data:`CONTACT_JOINTS` touch the floor.
    """

    name: str
    labels: dict
    fps: float
    root_pos: np.ndarray
    facing: np.ndarray
    yaw: np.ndarray
    joint_pos: np.ndarray
    joint_vel: np.ndarray
    rot6d: np.ndarray
    traj_pos: np.ndarray
    traj_dir: np.ndarray
    root_vel: np.ndarray
    root_ang_vel: np.ndarray
    contacts: np.ndarray
    traj_times: np.ndarray
    joint_names: list
    parents: np.ndarray
    offsets: np.ndarray
    mirrored: bool = False
    meta: dict = field(default_factory=dict)

    _ARRAYS = (
        "root_pos", "facing", "yaw", "joint_pos", "joint_vel", "rot6d", "traj_pos", "traj_dir",
        "root_vel", "root_ang_vel", "contacts",
    )

    @property
    def num_frames(self) -> int:
        arr = next(getattr(self, k) for k in self._ARRAYS if getattr(self, k) is not None)
        return int(arr.shape[0])

    def skeleton(self) -> Skeleton:
        return Skeleton(list(self.joint_names), self.parents, self.offsets)

    def local_quats(self) -> np.ndarray:
        """Root-space local rotations ``[F, J, 4]`` (w, x, y, z) from ``rot6d``."""
        return rotations.make_continuous(quat_from_6d(self.rot6d), axis=0)

    def to_motion(self) -> Motion:
        """The clip as a :class:`Motion` on the skeleton, joint 0 being the
        character root (world ``(x, y, 0)``, rotation ``yaw`` about +Z); the
        children of joint 0 are placed at their root-space ``joint_pos``."""
        sk = self.skeleton()
        rot = self.local_quats()
        rot[:, 0] = yaw_quat(self.yaw)
        f = self.num_frames
        trans = np.broadcast_to(sk.offsets, (f, len(sk), 3)).copy()
        top = np.nonzero(sk.parents == 0)[0]
        trans[:, top] = self.joint_pos[:, top]
        root = np.concatenate([self.root_pos, np.zeros((f, 1))], axis=1)
        trans[:, 0] = root
        return Motion(sk, rot, root, self.fps, trans, name=self.name)

    # -- storage ---------------------------------------------------------------
    def save(self, path, extra: dict = None) -> None:
        """``.npz`` of float32 arrays (contacts uint8) plus JSON metadata;
        uncompressed because zlib only saves ~10 % on mocap floats and
        triples the write time."""
        arrays = {k: np.asarray(getattr(self, k), dtype=np.float32) for k in self._ARRAYS}
        arrays["contacts"] = arrays["contacts"].astype(np.uint8)
        meta = {
            "name": self.name,
            "labels": self.labels,
            "fps": self.fps,
            "traj_times": [float(t) for t in self.traj_times],
            "joint_names": list(self.joint_names),
            "parents": [int(p) for p in self.parents],
            "offsets": np.asarray(self.offsets).tolist(),
            "mirrored": bool(self.mirrored),
            "meta": dict(self.meta, **(extra or {})),
        }
        path = Path(path)
        with replaced(path, ".tmp.npz") as tmp:
            np.savez(tmp, meta=np.array(json.dumps(meta)), **arrays)

    @classmethod
    def load(cls, path, keys=None) -> "ClipFeatures":
        """Read a file written by :meth:`save`; ``keys`` limits the arrays
        decompressed (the others are None)."""
        with np.load(path) as z:
            meta = json.loads(str(z["meta"]))
            arrays = {}
            for k in cls._ARRAYS:
                arrays[k] = None if keys is not None and k not in keys else z[k]
        if arrays["contacts"] is not None:
            arrays["contacts"] = arrays["contacts"].astype(np.float32)
        return cls(
            name=meta["name"],
            labels=meta["labels"],
            fps=meta["fps"],
            traj_times=np.asarray(meta["traj_times"]),
            joint_names=meta["joint_names"],
            parents=np.asarray(meta["parents"]),
            offsets=np.asarray(meta["offsets"]),
            mirrored=meta["mirrored"],
            meta=meta.get("meta", {}),
            **arrays,
        )


def foot_contacts(
    world_pos: np.ndarray,
    names,
    fps: float = FPS,
    joints=CONTACT_JOINTS,
    height: float = 0.04,
    speed: float = 0.3,
    release: float = 1.5,
) -> np.ndarray:
    """Contacts ``[F, K]`` (float 0/1) of ``joints`` with hysteresis.

    The floor of each joint is its lowest height in the clip (1st percentile,
    robust to a glitch): Bandai's ankles never go below ~11.7 cm and the toe
    joints below ~4.2 cm because the joints sit above the sole. A joint enters
    contact when it is less than ``height`` (m) above its floor and moves
    horizontally slower than ``speed`` (m/s); it leaves only when either
    exceeds ``release`` times its threshold, so contacts do not flicker.
    """
    ix = [list(names).index(n) for n in joints]
    cfg = ContactConfig(floor_percentile=1.0, height=height, speed=speed, release=release, release_height=release)
    return detect_contacts(world_pos[:, ix], fps, cfg).astype(np.float32)


def compute_features(motion: Motion, labels=None, *, sigma: float = 0.25, traj_times=TRAJ_TIMES, joints=None) -> ClipFeatures:
    """Features of ``motion`` (a Bandai-skeleton clip, any fps: the frame
    rate is used as is; :func:`build_cache` resamples to 30 fps first).

    ``labels`` is a dict or a :class:`~.dataset.ClipInfo` (stored as a
    dict). See :class:`ClipFeatures` for the arrays.
    """
    if isinstance(labels, dataset.ClipInfo):
        labels = labels.labels()
    labels = dict(labels or {})
    sk = motion.skeleton
    fps = float(motion.fps)
    dt = 1.0 / fps
    f = motion.num_frames
    world_rot, world_pos = motion.world()
    root_pos, facing, yaw = character_root(world_pos, sk.names, fps, sigma, joints)

    inv_yaw = yaw_quat(-yaw)  # world -> root space
    origin = np.concatenate([root_pos, np.zeros((f, 1))], axis=1)
    joint_pos = rotations.rotate(inv_yaw[:, None], world_pos - origin[:, None])
    vel_w = np.gradient(world_pos, dt, axis=0) if f > 1 else np.zeros_like(world_pos)
    joint_vel = rotations.rotate(inv_yaw[:, None], vel_w)

    local = motion.rotations.copy()
    local[:, 0] = rotations.identity((f,))
    top = np.nonzero(sk.parents == 0)[0]
    local[:, top] = rotations.mul(inv_yaw[:, None], world_rot[:, top])
    rot6d = rotations.to_6d(local)

    times = np.asarray(traj_times, dtype=np.float64)
    offs = np.rint(times * fps).astype(np.int64)
    idx = np.clip(np.arange(f)[:, None] + offs[None], 0, f - 1)
    traj_pos = rotate2d(root_pos[idx] - root_pos[:, None], -yaw[:, None])
    traj_dir = rotate2d(facing[idx], -yaw[:, None])

    if f > 1:
        root_vel = rotate2d(np.gradient(root_pos, dt, axis=0), -yaw)
        root_ang_vel = np.gradient(yaw, dt)
    else:
        root_vel, root_ang_vel = np.zeros((f, 2)), np.zeros(f)
    contacts = foot_contacts(world_pos, sk.names, fps)

    return ClipFeatures(
        name=motion.name,
        labels=labels,
        fps=fps,
        root_pos=root_pos,
        facing=facing,
        yaw=yaw,
        joint_pos=joint_pos,
        joint_vel=joint_vel,
        rot6d=rot6d,
        traj_pos=traj_pos,
        traj_dir=traj_dir,
        root_vel=root_vel,
        root_ang_vel=root_ang_vel,
        contacts=contacts,
        traj_times=times,
        joint_names=list(sk.names),
        parents=sk.parents.copy(),
        offsets=sk.offsets.copy(),
    )


# --- mirroring -----------------------------------------------------------------------


def mirror_pairs(names) -> np.ndarray:
    """``perm [J]``: index of each joint's left/right counterpart (``_L`` <->
    ``_R`` suffix; itself for centre joints)."""
    names = list(names)
    perm = np.arange(len(names))
    for j, n in enumerate(names):
        for a, b in (("_L", "_R"), ("_R", "_L")):
            if n.endswith(a) and n[: -len(a)] + b in names:
                perm[j] = names.index(n[: -len(a)] + b)
    return perm


_M = np.diag([-1.0, 1.0, 1.0])  # the world reflection X -> -X
_REFLECTIONS_CACHE = {}


def _signed_permutations_det_minus1() -> np.ndarray:
    import itertools

    mats = []
    for perm in itertools.permutations(range(3)):
        for signs in itertools.product((-1.0, 1.0), repeat=3):
            m = np.zeros((3, 3))
            m[range(3), perm] = signs
            if np.linalg.det(m) < 0:
                mats.append(m)
    return np.array(mats)


def _bandai_reflections(names) -> np.ndarray:
    n = np.empty((len(names), 3, 3))
    for j, nm in enumerate(names):
        if nm == "joint_Root":
            n[j] = _M  # static at the origin with identity rotation: the world reflection itself
        elif nm == "Hips":
            n[j] = np.diag([1.0, 1.0, -1.0])  # the legs sit at local +-Z
        elif nm in ("Spine", "Chest", "Neck", "Head"):
            n[j] = np.diag([1.0, -1.0, 1.0])  # the shoulders sit at local +-Y of the chest
        else:
            n[j] = -np.eye(3)  # Maya-style "behaviour" mirrored limb chains: right bones point along -X
    return n


#: Joint names of the Bandai Namco skeleton (datasets 1 and 2).
BANDAI_NAMES = (
    "joint_Root", "Hips", "Spine", "Chest", "Neck", "Head", "Shoulder_L", "UpperArm_L", "LowerArm_L",
    "Hand_L", "Shoulder_R", "UpperArm_R", "LowerArm_R", "Hand_R", "UpperLeg_L", "LowerLeg_L", "Foot_L",
    "Toes_L", "UpperLeg_R", "LowerLeg_R", "Foot_R", "Toes_R",
)
#: Indices of :data:`CONTACT_JOINTS` in :data:`BANDAI_NAMES`.
CONTACT_INDEX = tuple(BANDAI_NAMES.index(n) for n in CONTACT_JOINTS)


def estimate_reflections(motion: Motion) -> np.ndarray:
    """Data-driven per-joint reflections ``N [J, 3, 3]`` (see
    :func:`mirror_reflections`): with the yaw removed (so the sagittal plane
    is the YZ plane), ``R[swap(j)]^T M R[j]`` summed over the frames is
    projected on the nearest signed permutation with det -1. Joints that do
    not rotate over the clip (a static ground root) use their world rotation
    as is. Needs a long, roughly symmetric clip (a straight walk of several
    cycles): the left and right limbs are compared at the same frame, so on
    a short or asymmetric clip the forearms and feet can come out wrong."""
    sk = motion.skeleton
    world_rot, world_pos = motion.world()
    _, _, yaw = character_root(world_pos, sk.names, motion.fps)
    static = np.all(np.abs(rotations.canonical(world_rot) - rotations.canonical(world_rot[:1])) < 1e-6, axis=(0, 2))
    rs = rotations.mul(np.where(static[None, :, None], rotations.identity((1, 1)), yaw_quat(-yaw)[:, None]), world_rot)
    rs = rotations.to_matrix(rs)  # [F, J, 3, 3]
    perm = mirror_pairs(sk.names)
    a = np.einsum("fjki,kl,fjlm->jim", rs[:, perm], _M, rs)
    cands = _signed_permutations_det_minus1()
    n = cands[np.argmax(np.einsum("cik,jik->jc", cands, a), axis=1)]
    # Counterparts must use transposed reflections or mirroring twice would not be the identity.
    for j, s in enumerate(perm):
        if s > j:
            n[s] = n[j].T
    return n


def mirror_reflections(motion: Motion) -> np.ndarray:
    """Per-joint local reflections ``N [J, 3, 3]`` (signed permutations,
    det -1) such that ``M R[swap(j)] N[j]`` is joint ``j``'s mirrored world
    rotation (``M``: X -> -X).

    A joint's local axes are not the mirror images of its counterpart's in
    general, so ``N`` depends on the rig. Bandai's BVH rest pose has identity
    rotations with every bone along local +-X: right-side limb bones point
    along -X (Maya's "behaviour" mirroring, ``N = -I``), the hips' left-right
    axis is local Z and the spine/chest/neck/head's is local Y. That table
    (checked against :func:`estimate_reflections` pooled over 60 clips, where
    every joint agreed with a clear margin; per-clip estimates disagree on
    15-25 % of the clips for the forearms, hands and feet) is used for the
    Bandai skeleton; other skeletons are estimated from ``motion``, once per
    skeleton (cached on names and offsets) so that all clips of a dataset are
    mirrored alike and mirroring twice is the identity.
    """
    sk = motion.skeleton
    if tuple(sk.names) == BANDAI_NAMES:
        return _bandai_reflections(sk.names)
    key = (tuple(sk.names), np.round(sk.offsets, 4).tobytes(), sk.parents.tobytes())
    if key not in _REFLECTIONS_CACHE:
        _REFLECTIONS_CACHE[key] = estimate_reflections(motion)
    return _REFLECTIONS_CACHE[key]


def mirror_motion(motion: Motion, reflections: np.ndarray = None) -> Motion:
    """``motion`` reflected across the world YZ plane (X -> -X) with left and
    right joints swapped: a left turn becomes a right turn, a left step a
    right step. The result is on the same skeleton; mirroring twice gives the
    input back (to float precision).

    With ``M = diag(-1, 1, 1)`` and the reflections ``N`` of
    :func:`mirror_reflections` (``reflections`` overrides them), world
    rotations become ``M R[swap(j)] N[j]``, so local rotations become
    ``N[p]^T L[swap(j)] N[j]`` (``N[root's parent] = M``) and local
    translations ``N[p]^T t[swap(j)]``. Since ``-M`` and ``-N`` are proper
    rotations, this is done with quaternions.
    """
    sk = motion.skeleton
    n = mirror_reflections(motion) if reflections is None else np.asarray(reflections, dtype=np.float64)
    perm = mirror_pairs(sk.names)
    parents = sk.parents
    qn = rotations.from_matrix(-n)  # [J, 4], proper rotations
    qm = rotations.from_matrix(-_M)
    q_parent = np.array([qm if p < 0 else qn[p] for p in parents])
    n_parent = np.array([_M if p < 0 else n[p] for p in parents])
    rot = rotations.mul(rotations.mul(rotations.inv(q_parent)[None], motion.rotations[:, perm]), qn[None])
    root = motion.root_positions @ _M.T
    trans = None
    if motion.translations is not None:
        trans = np.einsum("jki,fjk->fji", n_parent, motion.translations[:, perm])
        trans[:, parents < 0] = motion.translations[:, perm][:, parents < 0] @ _M.T
    return Motion(
        sk,
        rotations.make_continuous(rot, axis=0),
        root,
        motion.fps,
        trans,
        list(motion.shape_names),
        None if motion.shape_weights is None else motion.shape_weights.copy(),
        motion.name + "_mirror" if not motion.name.endswith("_mirror") else motion.name[: -len("_mirror")],
    )


# --- cache ---------------------------------------------------------------------------


def _file_hash(path) -> str:
    h = hashlib.sha1()
    with open(path, "rb") as f:
        h.update(f.read())
    return h.hexdigest()[:16]


def load_clip(info, fps: float = FPS) -> Motion:
    """Read a clip (``ClipInfo`` or path) at ``fps``."""
    path = info.path if isinstance(info, dataset.ClipInfo) else Path(info)
    m = read_bvh(path)
    if abs(m.fps - fps) > 1e-6:
        m = resample(m, fps)
    return m


def _resolve_split(clips, seed: int) -> dict:
    """``{file: "train"|"validation"}``: the committed split when it has this
    seed and covers the clips, else one computed in memory over all clips of
    the same data folder (so a subset gets the same answer as the full set)."""
    try:
        split = dataset.load_split()
        if split.get("seed") == seed:
            which = dataset.split_of(split)
            if all(c.file in which for c in clips):
                return which
    except FileNotFoundError:
        pass
    folders = {c.path.parents[2] for c in clips}
    everything = [c for d in folders for c in dataset.list_clips(d)] or list(clips)
    return dataset.split_of(dataset.split_clips(everything, seed=seed))


def build_cache(data_dir=None, cache_dir=None, seed: int = 0, clips=None, mirror: bool = True, verbose: bool = False) -> dict:
    """Compute and store the features of every clip (d2 + d1) under
    ``cache_dir`` (default ``<repo>/.cache/locomotion``).

    Each clip is read, resampled to 30 fps when needed and saved as
    ``{stem}.npz``; training clips (by the split with ``seed``) also get
    ``{stem}_mirror.npz`` (see :func:`mirror_motion`). ``index.json`` records
    the source file hash, the split and :data:`FEATURE_VERSION` per clip:
    clips whose entry matches and whose files exist are skipped, so calling
    again does nothing. ``clips`` restricts the work to some
    :class:`~.dataset.ClipInfo` (or file names).

    Returns ``{"built", "skipped", "frames", "seconds", "bytes", "cache_dir"}``
    (``bytes``: total size of the cache folder).
    """
    t0 = time.perf_counter()
    data_dir = Path(data_dir) if data_dir is not None else paths.data_dir()
    cache_dir = Path(cache_dir) if cache_dir is not None else DEFAULT_CACHE_DIR
    cache_dir.mkdir(parents=True, exist_ok=True)
    all_clips = dataset.list_clips(data_dir)
    if not all_clips:
        # The cache may hold another folder's clips: never train or evaluate on those unasked.
        raise UserError(f"no locomotion clips under {data_dir} ({dataset.DATASETS['d2']}/bvh/*.bvh.gz); "
                        "pass --data with the shared data folder")
    if clips is not None:
        wanted = {c.file if isinstance(c, dataset.ClipInfo) else str(c) for c in clips}
        all_clips = [c for c in all_clips if c.file in wanted]
    which = _resolve_split(all_clips, seed) if all_clips else {}
    index_path = cache_dir / "index.json"
    index = _read_index(index_path)
    reflections = [None]  # the mirror's joint pairing, found on the first mirrored clip
    built = skipped = frames = 0
    dirty = False
    for k, info in enumerate(all_clips):
        h = _file_hash(info.path)
        split = which.get(info.file, "train")
        files = [info.stem + ".npz"] + ([info.stem + "_mirror.npz"] if mirror and split == "train" else [])
        if _is_cached(index["clips"].get(info.stem), h, split, files, cache_dir):
            skipped += 1
            continue
        n = _cache_clip(info, split, files, h, cache_dir, reflections)
        index["clips"][info.stem] = {"hash": h, "split": split, "files": files, "frames": n, **info.labels()}
        built += 1
        frames += n * len(files)
        dirty = True
        if verbose and built % 50 == 0:
            print(f"[locomotion cache] {k + 1}/{len(all_clips)} clips, {time.perf_counter() - t0:.1f} s", flush=True)
        if built % 200 == 0:
            _write_index(index_path, index)
    if dirty or not index_path.exists():
        _write_index(index_path, index)
    size = sum(p.stat().st_size for p in cache_dir.glob("*.npz"))
    return {
        "built": built,
        "skipped": skipped,
        "frames": frames,
        "seconds": time.perf_counter() - t0,
        "bytes": size,
        "cache_dir": str(cache_dir),
    }


def _read_index(path: Path) -> dict:
    """The cache's index, or an empty one when missing, unreadable or of
    another :data:`FEATURE_VERSION`."""
    if path.exists():
        try:
            old = json.loads(path.read_text())
            if old.get("version") == FEATURE_VERSION:
                return old
        except (json.JSONDecodeError, OSError):
            pass
    return {"version": FEATURE_VERSION, "clips": {}}


def _is_cached(entry, source_hash: str, split: str, files: list, cache_dir: Path) -> bool:
    """Whether an index entry matches the source and split and its files exist."""
    return bool(
        entry
        and entry.get("hash") == source_hash
        and entry.get("split") == split
        and entry.get("files") == files
        and all((cache_dir / f).exists() for f in files)
    )


def _cache_clip(info, split: str, files: list, source_hash: str, cache_dir: Path, reflections: list) -> int:
    """Compute and save one clip's features (and its mirror's when ``files``
    has two names; a stale mirror is removed otherwise). ``reflections`` is a
    one-item list holding the mirror's joint pairing once found. Returns the
    clip's frame count."""
    m = load_clip(info)
    labels = dict(info.labels(), split=split)
    feats = compute_features(m, labels)
    feats.save(cache_dir / files[0], extra={"source_hash": source_hash})
    if len(files) > 1:
        if reflections[0] is None:
            reflections[0] = mirror_reflections(m)
        mf = compute_features(mirror_motion(m, reflections[0]), dict(labels, mirrored=True))
        mf.mirrored = True
        mf.save(cache_dir / files[1], extra={"source_hash": source_hash})
    else:
        stale = cache_dir / (info.stem + "_mirror.npz")
        if stale.exists():
            stale.unlink()
    return m.num_frames


def _write_index(path: Path, index: dict) -> None:
    with replaced(path) as tmp:
        tmp.write_text(json.dumps(index, indent=1))


def load_cache(cache_dir=None, split: str = None, mirrored: bool = True, styles=None, keys=None) -> list:
    """Cached :class:`ClipFeatures` listed in ``index.json``.

    ``split``: "train", "validation" or None (all); ``mirrored``: include the
    mirrored copies; ``styles``: keep only these ``style_key`` values;
    ``keys``: arrays to decompress (None = all).
    """
    cache_dir = Path(cache_dir) if cache_dir is not None else DEFAULT_CACHE_DIR
    index = json.loads((cache_dir / "index.json").read_text())
    out = []
    for _stem, e in sorted(index["clips"].items()):
        if split is not None and e["split"] != split:
            continue
        if styles is not None and e["style_key"] not in styles:
            continue
        for f in e["files"]:
            if not mirrored and f.endswith("_mirror.npz"):
                continue
            out.append(ClipFeatures.load(cache_dir / f, keys=keys))
    return out


__all__ = [
    "FPS", "TRAJ_TIMES", "CONTACT_JOINTS", "BANDAI_JOINTS", "FEATURE_VERSION", "DEFAULT_CACHE_DIR",
    "ClipFeatures", "compute_features", "character_root", "foot_contacts", "mirror_motion",
    "mirror_reflections", "estimate_reflections", "mirror_pairs", "BANDAI_NAMES", "build_cache", "load_cache", "load_clip",
    "yaw_quat", "rotate2d", "facing_from_yaw", "yaw_from_facing", "quat_from_6d", "quat_from_rotmat",
]
