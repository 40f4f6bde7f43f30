"""Read DeepMimic reference motions (``humanoid3d_*.txt``, JSON) onto a
humanoid skeleton that the ``deepmimic`` bone map puts on the canonical
humanoid.

File layout (one clip per file)::

    {"Loop": "wrap" | "none",
     "Frames": [[dt, root_pos(3), root_quat(4), chest(4), neck(4),
                 right_hip(4), right_knee(1), right_ankle(4), right_shoulder(4), right_elbow(1),
                 left_hip(4), left_knee(1), left_ankle(4), left_shoulder(4), left_elbow(1)], ...]}

44 numbers a frame, in the order of the humanoid3d character's joints
(``presets/deepmimic_humanoid3d.json``; the wrists are fixed and carry
none). ``dt`` is the frame's duration in seconds, the time to the next frame
(DeepMimic writes 0 for the last one). Metres, Y up; the character faces +X
and +Z is its right. Quaternions are ``(w, x, y, z)``: the root's in the
world, every other one relative to its parent joint's frame. A revolute
joint (knees, elbows) is one angle in radians about its own Z axis,
DeepMimic's revolute axis: a knee bends backwards at negative angles, an
elbow forwards at positive ones. DeepMimic normalises quaternions when it
loads a clip, and its own clips hold norms from 0.58 to 1.12 (hand-keyed
frames): so does this reader, within :data:`QUAT_NORM_RANGE`; a zero one is
refused. Other keys (``RightJoints``, ``CycleSyncRootPos``...) are ignored.

Skeleton (:func:`deepmimic_rest_skeleton`): the character's 15 joints at its
own offsets, identity rest rotations (rest: standing with the arms hanging,
the soles on the floor), plus the joints it lacks in a neutral pose that
never moves relative to its parent: a head joint where the head sphere
starts (the head and neck turn as one body, as in DeepMimic), a toe joint at
the ball of each foot (from the foot box) and 15 finger joints a hand, the
SMPL-X template's flat hand hung along the forearm (palm to the thigh, thumb
forward) and scaled to the arm. So every rig's hands, fingers and toes get a
full chain. The wrists carry the hands straight on from the forearms
(DeepMimic's are fixed). The 15 joints' rotations are exactly the file's.

Axes: DeepMimic's frame is first turned to the usual Y-up one (faces +Z, +X
its left: -90 degrees about Y, ``(x, y, z) -> (-z, y, x)``), then into
Blender's by :mod:`.axes`: Z up, the character faces -Y, +X its left.

Rate: ``fps = 1 / dt`` of the clip's typical frame (the median ``dt`` of all
frames but the last), snapped to a whole number within 0.01% (DeepMimic
writes 6 decimals: 0.016666 s is 60 fps). When a frame's ``dt`` differs from
the typical one by more than 0.1% (``humanoid3d_roll.txt`` holds one frame
twice as long), the clip is RESAMPLED to that constant rate: an output frame
every ``1 / fps`` seconds of the file's own times, rotations slerped and the
root position interpolated linearly between the file's frames around it;
``motion.skeleton.meta["deepmimic"]["resampled"]`` says so. The meta dict
also holds the file's ``loop`` (or None), ``source`` (the path) and
``file_fps`` (``1 / dt`` before snapping).

Bad files raise :class:`DeepMimicFileError` (a UserError) with one line
naming the file, the problem and the fix; the size, the frame count and the
resampled length are bounded before anything large is built.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from . import axes
from . import options
from . import rotations
from .errors import UserError
from .motion import Motion
from .skeleton import Skeleton
from .smplx_motion import approx_rest_positions, smplx_joint_names, smplx_parents
from ..presets import load_preset

#: The largest clip file read (bytes), checked before reading: the longest
#: DeepMimic clip is 1.5 MB for 66 s; 64 MB is about an hour at 24 fps.
MAX_FILE_BYTES = 64 * 1024 * 1024
#: The most frames a clip may hold or be resampled to (30 minutes at 60 fps;
#: the longest DeepMimic clip has 1 595): bounds the ``[frames, joints, 4]``
#: arrays built from it.
MAX_FRAMES = 108_000
#: Quaternion norms normalised without a word; outside, the four numbers are
#: not a rotation (DeepMimic's own clips: 0.58 to 1.12).
QUAT_NORM_RANGE = (0.5, 2.0)
#: The farthest a root position may be from the origin on an axis (metres):
#: DeepMimic's clips stay within 3 m of it.
MAX_DISTANCE = 10_000.0
#: The largest revolute angle (radians, two turns): DeepMimic's joints bend
#: within +-3.14, and a clip in degrees is past it at any real bend.
MAX_ANGLE = 4 * np.pi
#: Frame durations within this fraction of the typical one count as equal.
UNIFORM_DT_TOLERANCE = 1e-3
#: ``1 / dt`` within this fraction of a whole number is that number.
FPS_SNAP_TOLERANCE = 1e-4
#: The rate of a one-frame clip whose ``dt`` is 0 (a pose).
DEFAULT_FPS = 30.0

#: Numbers a joint of each type takes in a frame (the root: position and quaternion).
_NUMBERS = {"none": 7, "spherical": 4, "revolute": 1, "fixed": 0}
_NUMBER_TYPES = {int, float}  # what json gives for numbers (bool is a type of its own)
#: Toes: the front share of the foot box's length, and the ball's height as a
#: share of the box's height above its sole.
_TOE_LENGTH_SHARE = 0.25
_TOE_HEIGHT_SHARE = 0.25
#: Finger tips continue the last phalanx at this share of its length (as smplx_motion).
_TIP_SHARE = 0.85
_FINGERS = ("thumb", "index", "middle", "ring", "pinky")


class DeepMimicFileError(UserError):
    """A DeepMimic motion file that cannot be read: too large, not JSON, not
    a humanoid3d clip, or holding numbers that are no motion. The message
    names the file, the problem and the fix (one line)."""


# --- the character ------------------------------------------------------------------


def deepmimic_character() -> dict:
    """The humanoid3d character (``presets/deepmimic_humanoid3d.json``): joint
    ``names``, ``parents``, ``types`` and ``offsets`` ``[15, 3]`` (metres,
    DeepMimic's frame), the ``foot_box`` and ``head_sphere`` shapes."""
    return load_preset("deepmimic_humanoid3d")


def frame_layout() -> list:
    """``[(joint, type, start, count)]``: where each joint's numbers sit in a
    frame (index 0 is ``dt``; the root's position is ``start:start+3``, its
    quaternion the next 4)."""
    ch = deepmimic_character()
    out, at = [], 1
    for name, kind in zip(ch["names"], ch["types"]):
        out.append((name, kind, at, _NUMBERS[kind]))
        at += _NUMBERS[kind]
    return out


def numbers_per_frame() -> int:
    """44 for humanoid3d: ``dt`` and every joint's numbers."""
    name, kind, start, count = frame_layout()[-1]
    return start + count


def _column_name(col: int) -> str:
    """What number ``col`` of a frame is, for error messages."""
    if col == 0:
        return "dt"
    for name, kind, start, count in frame_layout():
        if start <= col < start + count:
            if kind == "none":
                return f"the root {'position' if col < start + 3 else 'quaternion'}"
            return f"{name}'s {'quaternion' if kind == 'spherical' else 'angle'}"
    return "beyond the layout"


# --- axes ---------------------------------------------------------------------------


def _dm_to_yup(p) -> np.ndarray:
    """Points or vectors ``[..., 3]`` from DeepMimic's frame (faces +X, +Z
    right) to the usual Y-up one (faces +Z, +X left): ``(-z, y, x)``, a -90
    degree turn about Y."""
    p = np.asarray(p, dtype=np.float64)
    return np.stack([-p[..., 2], p[..., 1], p[..., 0]], axis=-1)


def _quats_dm_to_yup(q) -> np.ndarray:
    """Quaternions ``[..., 4]`` (w, x, y, z) re-expressed like :func:`_dm_to_yup`
    (conjugation by the turn rotates the vector part only)."""
    q = np.asarray(q, dtype=np.float64)
    return np.concatenate([q[..., :1], _dm_to_yup(q[..., 1:])], axis=-1)


# --- the skeleton -------------------------------------------------------------------


def _sole_height(ch: dict) -> float:
    """Rest height (metres) of the hips joint above the soles: the leg's
    offsets down to the bottom of the foot box."""
    idx = ch["names"].index
    legs = sum(ch["offsets"][idx(n)][1] for n in ("right_hip", "right_knee", "right_ankle"))
    box = ch["foot_box"]
    return -(legs + box["centre"][1] - 0.5 * box["size"][1])


def _head_and_toes(ch: dict) -> list:
    """``[(name, parent, offset [3], tail [3])]`` of the head joint (where the
    head sphere starts above the neck joint; its bone reaches the top of the
    sphere) and the toe joints (at the ball of each foot: the front quarter of
    the foot box, a quarter of its height above its sole; the bone reaches the
    box's front), in DeepMimic's frame, metres."""
    head = ch["head_sphere"]
    d = float(head["diameter"])
    out = [("head", "neck", (0.0, head["centre"][1] - 0.5 * d, 0.0), (0.0, d, 0.0))]
    box = ch["foot_box"]
    (cx, cy, cz), (lx, ly, _) = box["centre"], box["size"]
    toe = (cx + 0.5 * lx - _TOE_LENGTH_SHARE * lx, cy - 0.5 * ly + _TOE_HEIGHT_SHARE * ly, cz)
    for side in ("right", "left"):
        out.append((f"{side}_toe", f"{side}_ankle", toe, (_TOE_LENGTH_SHARE * lx, 0.0, 0.0)))
    return out


def _arm_length(pos, names, side: str) -> float:
    """Shoulder-to-elbow plus elbow-to-wrist length of rest positions ``[J, 3]``."""
    s, e, w = (pos[names.index(f"{side}_{j}")] for j in ("shoulder", "elbow", "wrist"))
    return float(np.linalg.norm(e - s) + np.linalg.norm(w - e))


def _neutral_hand_yup(side: str, forearm_yup, arm_length: float) -> list:
    """``[(name, parent, offset [3], tail [3])]`` of the 15 finger joints of
    ``side`` ("left" or "right"), Y-up metres: the SMPL-X template's flat
    hand turned so that its forearm points along ``forearm_yup [3]`` (the
    shortest turn: the T-pose hand's palm, down, ends up towards the body
    when the forearm hangs) and scaled by ``arm_length`` over the template's."""
    names, parents, pos = smplx_joint_names(), smplx_parents(), approx_rest_positions()
    turn = rotations.between_vectors(pos[names.index(f"{side}_wrist")] - pos[names.index(f"{side}_elbow")],
                                     np.asarray(forearm_yup, dtype=np.float64))
    scale = arm_length / _arm_length(pos, names, side)
    out = []
    for j, n in enumerate(names):
        if not (n.startswith(f"{side}_") and n[len(side) + 1:-1] in _FINGERS):
            continue
        p = int(parents[j])
        offset = scale * rotations.rotate(turn, pos[j] - pos[p])
        kids = [c for c in range(len(names)) if parents[c] == j]
        tail = scale * rotations.rotate(turn, pos[kids[0]] - pos[j]) if kids else _TIP_SHARE * offset
        out.append((n, names[p], offset, tail))
    return out


def _tails_yup(names, parents, offsets, given: dict) -> np.ndarray:
    """Bone ends ``[J, 3]``: ``given`` ones, else towards the main child (the
    chest for the root, the neck for the chest, the middle finger for a
    wrist, the only child otherwise)."""
    main = {"root": "chest", "chest": "neck", "right_wrist": "right_middle1", "left_wrist": "left_middle1"}
    tails = np.zeros((len(names), 3))
    for j, n in enumerate(names):
        kids = [c for c in range(len(names)) if parents[c] == j]
        if n in given:
            tails[j] = given[n]
        elif n in main:
            tails[j] = offsets[names.index(main[n])]
        elif len(kids) == 1:
            tails[j] = offsets[kids[0]]
    return tails


def deepmimic_rest_skeleton(up: str = "Z") -> Skeleton:
    """The humanoid3d skeleton the reader's clips are on: the 15 joints of
    the character in its order (rest: standing, arms hanging, soles on the
    floor, so the root's offset is its height above them, 0.88 m), then
    ``head``, ``right_toe``, ``left_toe`` and 15 finger joints a hand
    (SMPL-X names: ``right_index1`` ...) in a neutral pose (module
    docstring). Identity rest rotations; metres. Returned in Blender's frame
    (``up="Z"``: Z up, faces -Y) or the Y-up one (``up="Y"``: faces +Z, +X
    its left)."""
    ch = deepmimic_character()
    names, parents = list(ch["names"]), list(ch["parents"])
    offsets = [_dm_to_yup(o) for o in ch["offsets"]]
    offsets[0] = np.array([0.0, _sole_height(ch), 0.0])
    given = {}
    for name, parent, offset, tail in _head_and_toes(ch):
        names.append(name)
        parents.append(names.index(parent))
        offsets.append(_dm_to_yup(offset))
        given[name] = _dm_to_yup(tail)
    rest = np.zeros((len(names), 3))
    for j, p in enumerate(parents):
        rest[j] = offsets[j] + (rest[p] if p >= 0 else 0.0)
    for side in ("right", "left"):
        forearm = rest[names.index(f"{side}_wrist")] - rest[names.index(f"{side}_elbow")]
        for name, parent, offset, tail in _neutral_hand_yup(side, forearm, _arm_length(rest, names, side)):
            names.append(name)
            parents.append(names.index(parent))
            offsets.append(offset)
            given[name] = tail
    offsets = np.array(offsets)
    meta = {"name": "DeepMimic humanoid3d"}
    sk = Skeleton(names, parents, offsets, None, _tails_yup(names, parents, offsets, given), meta)
    return axes.to_blender(sk, "Y") if str(up).upper() == "Z" else sk


# --- reading: the file --------------------------------------------------------------


def _fail(path, problem: str, fix: str) -> DeepMimicFileError:
    return DeepMimicFileError(f"{path}: {problem}; {fix}")


_NOT_A_CLIP = "give a DeepMimic motion clip (JSON with \"Frames\", e.g. humanoid3d_walk.txt)"


def _read_text(path: Path) -> str:
    """The file's text (UTF-8, a byte-order mark dropped), its size checked
    against :data:`MAX_FILE_BYTES` before it is read."""
    limit = f"{MAX_FILE_BYTES // 2**20} MB"
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise _fail(path, f"{size / 2**20:.0f} MB, more than RigMind's {limit} for a DeepMimic clip",
                    "split the clip into shorter ones")
    with open(path, "rb") as fh:
        raw = fh.read(MAX_FILE_BYTES + 1)
    if len(raw) > MAX_FILE_BYTES:  # a device, or a file that grew while read
        raise _fail(path, f"more than RigMind's {limit} for a DeepMimic clip", "split the clip into shorter ones")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise _fail(path, f"not text (byte {e.start} is not UTF-8)", _NOT_A_CLIP) from None


def _parse_json(text: str, path: Path) -> dict:
    """The file's JSON object; refuses what is not JSON, nested beyond the
    parser's depth, or not an object with a list of frames."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise _fail(path, "JSON nested deeper than RigMind reads (a clip is 3 levels: object, frames, numbers)",
                    _NOT_A_CLIP) from None
    except json.JSONDecodeError as e:
        raise _fail(path, f"not JSON ({e.msg} at line {e.lineno}, column {e.colno})", _NOT_A_CLIP) from None
    except ValueError:  # an integer of more digits than Python converts (4300)
        raise _fail(path, "not readable JSON (a number of thousands of digits)", _NOT_A_CLIP) from None
    if not isinstance(data, dict):
        raise _fail(path, f"JSON whose top level is {_kind(data)}, not an object with \"Frames\"", _NOT_A_CLIP)
    if "Frames" not in data:
        if "Skeleton" in data:
            raise _fail(path, "a DeepMimic character (a \"Skeleton\"), not a motion",
                        "give one of its motion clips (humanoid3d_*.txt with \"Frames\")")
        keys = ", ".join(sorted(map(str, data))[:6]) or "none"
        raise _fail(path, f"JSON without \"Frames\" (keys: {keys})", _NOT_A_CLIP)
    frames = data["Frames"]
    if not isinstance(frames, list):
        raise _fail(path, f"\"Frames\" is {_kind(frames)}, not a list of frames", _NOT_A_CLIP)
    if not frames:
        raise _fail(path, "the clip has no frames (\"Frames\" is empty)", "give a clip with motion")
    if len(frames) > MAX_FRAMES:
        raise _fail(path, f"{len(frames)} frames, more than RigMind's {MAX_FRAMES} for a DeepMimic clip",
                    "split the clip into shorter ones")
    return data


def _kind(value) -> str:
    """'a list', 'a string', 'null'... for messages about JSON values."""
    names = {dict: "an object", list: "a list", str: "a string", bool: "true/false", type(None): "null",
             int: "a number", float: "a number"}
    return names.get(type(value), type(value).__name__)


def _frames_array(frames: list, path: Path) -> np.ndarray:
    """``[F, 44]`` float64 from the JSON frames, each checked to be a list of
    exactly 44 numbers (the first bad one named, frames counted from 0)."""
    width = numbers_per_frame()
    for i, fr in enumerate(frames):
        if not isinstance(fr, list):
            raise _fail(path, f"frame {i} is {_kind(fr)}, not a list of {width} numbers", _FIX_LAYOUT)
        if len(fr) != width:
            raise _fail(path, f"frame {i} holds {len(fr)} numbers, a humanoid3d frame {width}", _FIX_LAYOUT)
        if not set(map(type, fr)) <= _NUMBER_TYPES:
            k = next(k for k, x in enumerate(fr) if type(x) not in _NUMBER_TYPES)
            raise _fail(path, f"frame {i}, number {k} ({_column_name(k)}) is {_kind(fr[k])}, not a number",
                        _FIX_LAYOUT)
    try:
        a = np.array(frames, dtype=np.float64)
    except OverflowError:
        i, k = next((i, k) for i, fr in enumerate(frames) for k, x in enumerate(fr) if abs(x) > 1e308)
        raise _fail(path, f"frame {i}, number {k} ({_column_name(k)}) is too large for a number", _FIX_NUMBERS) from None
    bad = np.argwhere(~np.isfinite(a))
    if len(bad):
        i, k = (int(x) for x in bad[0])
        raise _fail(path, f"frame {i}, number {k} ({_column_name(k)}) is {a[i, k]}", _FIX_NUMBERS)
    return a


_FIX_LAYOUT = ("a humanoid3d frame is [dt, root position (3), root quaternion (4), 12 joints' quaternions or "
               "angles] (44 numbers): fix or re-export the clip")
_FIX_NUMBERS = "every number must be finite: fix or re-export the clip"


# --- reading: rotations and time ----------------------------------------------------


def _unit_quaternions(a: np.ndarray, path: Path) -> np.ndarray:
    """Every quaternion block of ``a [F, 44]`` normalised in place (the root's
    and the spherical joints'); a zero one, or one whose norm is outside
    :data:`QUAT_NORM_RANGE`, is refused naming the frame and joint."""
    lo, hi = QUAT_NORM_RANGE
    for name, kind, start, _ in frame_layout():
        if kind not in ("none", "spherical"):
            continue
        s = start + 3 if kind == "none" else start
        # Scaled by the largest component first: squaring 1e200 would overflow.
        big = np.abs(a[:, s:s + 4]).max(axis=1, keepdims=True)
        n = big[:, 0] * np.linalg.norm(a[:, s:s + 4] / np.maximum(big, 1e-300), axis=1)
        bad = np.nonzero(~((n >= lo) & (n <= hi)))[0]
        if len(bad):
            i = int(bad[0])
            what = "a zero quaternion" if n[i] < 1e-12 else f"a quaternion of norm {n[i]:.3g}"
            raise _fail(path, f"frame {i}: {name} holds {what}, not a rotation (norms {lo} to {hi} are normalised)",
                        "write each rotation as a unit quaternion (w, x, y, z): fix or re-export the clip")
        a[:, s:s + 4] /= n[:, None]
    return a


def _check_ranges(a: np.ndarray, path: Path) -> None:
    """Refuses root positions ``a[:, 1:4]`` farther than :data:`MAX_DISTANCE`
    metres from the origin on an axis and revolute angles past
    :data:`MAX_ANGLE` radians (degrees, most likely), naming the frame."""
    for name, kind, start, _ in frame_layout():
        if kind == "none":
            cols, limit, what = slice(start, start + 3), MAX_DISTANCE, "root position"
        elif kind == "revolute":
            cols, limit, what = slice(start, start + 1), MAX_ANGLE, f"{name} angle"
        else:
            continue
        bad = np.nonzero(np.abs(a[:, cols]).max(axis=1) > limit)[0]
        if len(bad):
            i = int(bad[0])
            fix = ("give positions in metres" if kind == "none"
                   else f"give angles in radians (DeepMimic's joints bend within +-{np.pi:.2f})")
            raise _fail(path, f"frame {i}: the {what} {np.round(a[i, cols], 3).tolist()} is past +-{limit:g}", fix)


def _local_rotations(a: np.ndarray) -> np.ndarray:
    """``[F, 15, 4]`` rotations (w, x, y, z) of the character's joints in
    DeepMimic's frame: the root's world rotation, the others relative to
    their parents (a revolute joint's angle, radians, about its Z axis; a
    fixed joint identity). ``a`` holds unit quaternions already."""
    layout = frame_layout()
    q = rotations.identity((len(a), len(layout)))
    z_axis = np.broadcast_to([0.0, 0.0, 1.0], (len(a), 3))
    for j, (_name, kind, start, _count) in enumerate(layout):
        if kind == "none":
            q[:, j] = a[:, start + 3:start + 7]
        elif kind == "spherical":
            q[:, j] = a[:, start:start + 4]
        elif kind == "revolute":
            q[:, j] = rotations.from_axis_angle_pair(z_axis, a[:, start])
    return q


def _snap_fps(fps: float) -> float:
    """``fps`` as the whole number it is within :data:`FPS_SNAP_TOLERANCE` of."""
    n = round(fps)
    return float(n) if n >= 1 and abs(fps - n) <= FPS_SNAP_TOLERANCE * n else fps


def _frame_times(dt: np.ndarray, path: Path) -> tuple:
    """``(fps, positions)`` from the frames' durations ``dt [F]`` (seconds):
    the rate of the typical frame and, when durations differ, each file
    frame's time in output frames ``[F]`` (None when they are all equal).
    Every frame but the last must last more than 0 s (the last one's ``dt``
    is never used: DeepMimic writes 0)."""
    lo, hi, _ = options.RANGES["fps"]
    if len(dt) > 1 and np.any(dt[:-1] <= 0):
        i = int(np.nonzero(dt[:-1] <= 0)[0][0])
        raise _fail(path, f"frame {i} lasts dt = {dt[i]:g} s", "every frame but the last needs a dt above 0 seconds")
    if dt[-1] < 0:
        raise _fail(path, f"the last frame lasts dt = {dt[-1]:g} s", "give it a dt of 0 or more seconds")
    if len(dt) == 1:
        fps = 1.0 / dt[0] if dt[0] > 0 else DEFAULT_FPS
        typical = 1.0 / fps
    else:
        typical = float(np.median(dt[:-1]))
        fps = 1.0 / typical
    if not lo <= fps <= hi:
        raise _fail(path, f"frames of {typical:g} s are {fps:.4g} fps, outside RigMind's {lo:g}-{hi:g} fps",
                    "give dt in seconds (0.016666 is 60 fps)")
    if len(dt) == 1 or np.all(np.abs(dt[:-1] / typical - 1.0) <= UNIFORM_DT_TOLERANCE):
        return _snap_fps(fps), None
    positions = np.concatenate([[0.0], np.cumsum(dt[:-1])]) / typical
    if positions[-1] + 1 > MAX_FRAMES:
        raise _fail(path, f"the frames last {positions[-1] * typical:.0f} s, {positions[-1] + 1:.0f} frames at "
                    f"{fps:.4g} fps, more than RigMind's {MAX_FRAMES}", "fix the frames' dt or split the clip")
    return _snap_fps(fps), positions


def _resample_uneven(q: np.ndarray, root: np.ndarray, positions: np.ndarray) -> tuple:
    """Rotations ``[F, J, 4]`` and root positions ``[F, 3]`` (metres) of
    frames at ``positions [F]`` (increasing, in output frames from 0) at every
    whole output frame up to the last: slerped / linearly interpolated
    between the file frames around it. Returns ``(q [N, J, 4], root [N, 3])``."""
    n = int(np.floor(positions[-1] + 1e-6)) + 1
    k = np.arange(n, dtype=np.float64)
    i0 = np.clip(np.searchsorted(positions, k, side="right") - 1, 0, len(positions) - 2)
    alpha = np.clip((k - positions[i0]) / (positions[i0 + 1] - positions[i0]), 0.0, 1.0)
    out_q = rotations.slerp(q[i0], q[i0 + 1], np.broadcast_to(alpha[:, None], (n, q.shape[1])))
    out_root = (1.0 - alpha)[:, None] * root[i0] + alpha[:, None] * root[i0 + 1]
    return out_q, out_root


def looks_like_deepmimic(path) -> bool:
    """Whether ``path`` starts like a DeepMimic clip: its first character
    past white space (and a UTF-8 byte-order mark) is ``{``, a JSON object.
    Reads 4 KB at most; :func:`read_deepmimic` then checks the rest."""
    with open(path, "rb") as fh:
        head = fh.read(4096)
    return head.removeprefix(b"\xef\xbb\xbf").lstrip().startswith(b"{")


def read_deepmimic(path) -> Motion:
    """Read a DeepMimic humanoid3d clip into a :class:`Motion` in Blender's
    frame (module docstring: layout, skeleton, axes, rate).

    Returns a motion on :func:`deepmimic_rest_skeleton` (``[F, 48, 4]``
    rotations: the file's for its 15 joints, identity for the neutral head,
    toes and fingers), root positions ``[F, 3]`` = the file's root (pelvis)
    position in metres, Z up, ``fps`` from the frames' ``dt`` (a clip whose
    frames differ in length resampled to a constant rate). The clip's name
    is the file's stem; ``motion.skeleton.meta["deepmimic"]`` holds ``loop``,
    ``source``, ``file_fps`` and ``resampled``.

    Raises ``FileNotFoundError`` for a missing file and
    :class:`DeepMimicFileError` for one that is not a readable clip.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no DeepMimic motion file {path}")
    if not path.is_file():
        raise _fail(path, "not a file", _NOT_A_CLIP)
    data = _parse_json(_read_text(path), path)
    a = _unit_quaternions(_frames_array(data["Frames"], path), path)
    _check_ranges(a, path)
    fps, positions = _frame_times(a[:, 0], path)
    q_dm, root_dm = _local_rotations(a), a[:, 1:4]
    if positions is not None:
        q_dm, root_dm = _resample_uneven(q_dm, root_dm, positions)
    sk = deepmimic_rest_skeleton(up="Y")
    loop = data.get("Loop")
    sk.meta["deepmimic"] = {"loop": loop if isinstance(loop, str) else None, "source": str(path),
                            "file_fps": 1.0 / float(np.median(a[:-1, 0])) if len(a) > 1 else fps,
                            "resampled": positions is not None}
    q = rotations.identity((len(q_dm), len(sk)))
    q[:, :q_dm.shape[1]] = _quats_dm_to_yup(q_dm)
    m = Motion(sk, rotations.make_continuous(q), _dm_to_yup(root_dm), fps, name=path.stem)
    return axes.to_blender(m, "Y")


__all__ = [
    "DeepMimicFileError",
    "MAX_FILE_BYTES",
    "MAX_ANGLE",
    "MAX_DISTANCE",
    "MAX_FRAMES",
    "QUAT_NORM_RANGE",
    "deepmimic_character",
    "deepmimic_rest_skeleton",
    "frame_layout",
    "looks_like_deepmimic",
    "numbers_per_frame",
    "read_deepmimic",
]
