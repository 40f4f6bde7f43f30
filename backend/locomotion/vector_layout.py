"""Packing and unpacking of the neural locomotion model's per-frame vectors.

One place for the layout, used by training (:mod:`.train`) and inference
(:mod:`.controller`) alike, so the two cannot drift apart. Every function
here works on NumPy arrays and on torch tensors (the training loop feeds the
model's own predictions back through :func:`feedback_input` with autograd),
vectorised over any leading dimensions.

All quantities are in the *root space* of a frame (see :mod:`.features`:
origin at the ground-projected hips, character faces -Y, left is +X, Z up),
metres, seconds, radians.

Input ``x [..., INPUT_SIZE]`` (294) for frame ``t``:

- ``pose`` (252): the 21 joints other than ``joint_Root`` (Bandai order,
  ``Hips`` first): positions ``[21, 3]`` (m), velocities ``[21, 3]`` (m/s),
  local rotations as 6D ``[21, 6]`` (first two matrix columns; the hips
  relative to the character root), in that order, each flattened.
- ``traj`` (28): root trajectory samples at :data:`TRAJ_TIMES` (7, s):
  positions ``[7, 2]`` (m) then unit facing directions ``[7, 2]``. The past
  samples come from the character's history, the future ones from the
  control (blended with the model's own prediction at run time).
- ``style`` (7): weights over :data:`STYLES` (a one-hot for one style, any
  non-negative vector summing to 1 for a blend).
- ``contacts`` (4): foot contacts of :data:`~.features.CONTACT_JOINTS` (0..1).
- ``root_vel`` (3): the root's velocity over the last frame: ``vx, vy`` (m/s,
  root space of ``t``) and yaw rate (rad/s, CCW positive).

Output ``y [..., OUTPUT_SIZE]`` (271), the prediction for frame ``t + 1``:

- ``pose`` (252): as in the input, in the root space of ``t + 1``.
- ``root_delta`` (3): ``dx, dy`` (m, the root of ``t + 1`` in the root
  frame of ``t``) and ``dyaw`` (rad, CCW positive).
- ``contacts`` (4): contact probabilities (the model applies a sigmoid; the
  training loss sees logits).
- ``future`` (12): the model's own future trajectory of ``t + 1`` (root space
  of ``t + 1``): positions ``[3, 2]`` then directions ``[3, 2]`` at the
  positive :data:`TRAJ_TIMES`.

The gating network of the mixture of experts sees :data:`GATING_INDEX` (22
input entries): the foot contacts, the root-space velocities of the hips and
the four foot joints, and the root velocity (MANN's choice: quantities that
tell the gait phase and speed).
"""

from __future__ import annotations

import numpy as np

from . import dataset
from .features import BANDAI_NAMES, CONTACT_JOINTS, TRAJ_TIMES

#: Joints of the Bandai skeleton.
NUM_JOINTS = len(BANDAI_NAMES)  # 22
#: Joints in the pose vector: all but joint 0 (``joint_Root``, replaced by the character root).
POSE_JOINTS = tuple(range(1, NUM_JOINTS))
J = len(POSE_JOINTS)  # 21
#: Styles the model is conditioned on: the 7 Bandai d2 styles (d1 clips join via D1_TO_D2_STYLE).
STYLES = tuple(dataset.D2_STYLES)
T = len(TRAJ_TIMES)  # 7
TRAJ_TIMES_ARR = np.asarray(TRAJ_TIMES, dtype=np.float64)
#: Indices (into TRAJ_TIMES) of the past, current and future samples.
PAST = tuple(int(i) for i in np.nonzero(TRAJ_TIMES_ARR < -1e-9)[0])
CURRENT = int(np.argmin(np.abs(TRAJ_TIMES_ARR)))
FUTURE = tuple(int(i) for i in np.nonzero(TRAJ_TIMES_ARR > 1e-9)[0])
NF = len(FUTURE)  # 3
# The controller assembles the trajectory as past + current + future.
assert PAST + (CURRENT,) + FUTURE == tuple(range(T)), "TRAJ_TIMES must be sorted with one sample at 0"
FUTURE_TIMES = tuple(float(TRAJ_TIMES_ARR[i]) for i in FUTURE)

POSE_SIZE = J * 12
TRAJ_SIZE = T * 4
STYLE_SIZE = len(STYLES)
CONTACT_SIZE = len(CONTACT_JOINTS)
ROOT_VEL_SIZE = 3
FUTURE_SIZE = NF * 4


def _slices(sizes):
    out, i = {}, 0
    for name, n in sizes:
        out[name] = slice(i, i + n)
        i += n
    return out, i


#: Input layout: name -> slice.
IN, INPUT_SIZE = _slices(
    [("pose", POSE_SIZE), ("traj", TRAJ_SIZE), ("style", STYLE_SIZE), ("contacts", CONTACT_SIZE), ("root_vel", ROOT_VEL_SIZE)]
)
#: Output layout: name -> slice.
OUT, OUTPUT_SIZE = _slices([("pose", POSE_SIZE), ("root_delta", 3), ("contacts", CONTACT_SIZE), ("future", FUTURE_SIZE)])
#: Sub-slices of a pose block (relative to its start).
POSE, _ = _slices([("pos", J * 3), ("vel", J * 3), ("rot6d", J * 6)])

#: Joints whose root-space velocities the gating network sees.
GATING_JOINTS = ("Hips", "Foot_L", "Toes_L", "Foot_R", "Toes_R")


def _gating_index():
    idx = list(range(IN["contacts"].start, IN["contacts"].stop))
    vel0 = IN["pose"].start + POSE["vel"].start
    for name in GATING_JOINTS:
        k = BANDAI_NAMES.index(name) - 1  # position in POSE_JOINTS
        idx += [vel0 + 3 * k + c for c in range(3)]
    idx += list(range(IN["root_vel"].start, IN["root_vel"].stop))
    return tuple(idx)


#: Input entries fed to the gating network (22).
GATING_INDEX = _gating_index()
GATING_SIZE = len(GATING_INDEX)


# --- array helpers (NumPy or torch) -------------------------------------------------------


def _is_torch(a) -> bool:
    return type(a).__module__.startswith("torch")


def _cat(parts, like):
    if _is_torch(like):
        import torch

        return torch.cat(parts, dim=-1)
    return np.concatenate(parts, axis=-1)


def _flat(a, lead, n):
    """``a`` reshaped to ``lead + (n,)``."""
    return a.reshape(tuple(lead) + (n,))


def _pose_joints(a):
    """Drop joint 0 when given all 22 joints."""
    return a[..., 1:, :] if a.shape[-2] == NUM_JOINTS else a


# --- style ------------------------------------------------------------------------------


def style_vector(style=None) -> np.ndarray:
    """Style weights ``[STYLE_SIZE]`` (float32) from a style name (a d2 style
    or a d1 style that maps to one), a ``{name: weight}`` dict (normalised to
    sum 1) or a vector; None means "normal"."""
    if style is None:
        style = "normal"
    if isinstance(style, str):
        name = style if style in STYLES else dataset.D1_TO_D2_STYLE.get(style)
        if name is None:
            raise KeyError(f"style {style!r} is not one of {STYLES} (or a d1 style mapped to one)")
        v = np.zeros(STYLE_SIZE, dtype=np.float32)
        v[STYLES.index(name)] = 1.0
        return v
    if isinstance(style, dict):
        v = np.zeros(STYLE_SIZE, dtype=np.float64)
        for k, w in style.items():
            v += float(w) * style_vector(k)
    else:
        v = np.asarray(style, dtype=np.float64).reshape(STYLE_SIZE)
    if np.any(v < 0) or v.sum() <= 0:
        raise ValueError(f"style weights must be non-negative with a positive sum, got {v}")
    return (v / v.sum()).astype(np.float32)


# --- packing ------------------------------------------------------------------------------


def pack_pose(joint_pos, joint_vel, rot6d):
    """Pose block ``[..., POSE_SIZE]`` from ``joint_pos [..., 21|22, 3]``,
    ``joint_vel [..., 21|22, 3]`` (m, m/s) and ``rot6d [..., 21|22, 6]``
    (joint 0 is dropped when 22 joints are given)."""
    p, v, r = _pose_joints(joint_pos), _pose_joints(joint_vel), _pose_joints(rot6d)
    lead = p.shape[:-2]
    return _cat([_flat(p, lead, J * 3), _flat(v, lead, J * 3), _flat(r, lead, J * 6)], p)


def unpack_pose(block) -> dict:
    """``{"joint_pos" [..., 21, 3], "joint_vel" [..., 21, 3], "rot6d" [..., 21, 6]}``."""
    lead = block.shape[:-1]
    return {
        "joint_pos": block[..., POSE["pos"]].reshape(tuple(lead) + (J, 3)),
        "joint_vel": block[..., POSE["vel"]].reshape(tuple(lead) + (J, 3)),
        "rot6d": block[..., POSE["rot6d"]].reshape(tuple(lead) + (J, 6)),
    }


def pack_input(joint_pos, joint_vel, rot6d, traj_pos, traj_dir, style, contacts, root_vel):
    """Model input ``[..., INPUT_SIZE]``.

    Args:
        joint_pos, joint_vel, rot6d: see :func:`pack_pose`.
        traj_pos, traj_dir: ``[..., 7, 2]`` trajectory positions (m) and unit
            directions at :data:`TRAJ_TIMES`, root space.
        style: ``[..., 7]`` style weights (see :func:`style_vector`).
        contacts: ``[..., 4]`` in 0..1.
        root_vel: ``[..., 3]``: vx, vy (m/s, root space), yaw rate (rad/s).
    """
    pose = pack_pose(joint_pos, joint_vel, rot6d)
    lead = pose.shape[:-1]
    return _cat(
        [
            pose,
            _flat(traj_pos, lead, T * 2),
            _flat(traj_dir, lead, T * 2),
            style.reshape(tuple(lead) + (STYLE_SIZE,)),
            contacts.reshape(tuple(lead) + (CONTACT_SIZE,)),
            root_vel.reshape(tuple(lead) + (ROOT_VEL_SIZE,)),
        ],
        pose,
    )


def unpack_input(x) -> dict:
    """Inverse of :func:`pack_input`: a dict of the named arrays (views)."""
    lead = tuple(x.shape[:-1])
    traj = x[..., IN["traj"]]
    out = unpack_pose(x[..., IN["pose"]])
    out.update(
        traj_pos=traj[..., : T * 2].reshape(lead + (T, 2)),
        traj_dir=traj[..., T * 2 :].reshape(lead + (T, 2)),
        style=x[..., IN["style"]],
        contacts=x[..., IN["contacts"]],
        root_vel=x[..., IN["root_vel"]],
    )
    return out


def pack_output(joint_pos, joint_vel, rot6d, root_delta, contacts, future_pos, future_dir):
    """Model output ``[..., OUTPUT_SIZE]`` (training targets). ``root_delta
    [..., 3]`` (dx, dy in m, dyaw in rad), ``contacts [..., 4]``,
    ``future_pos / future_dir [..., 3, 2]`` (root space of the next frame)."""
    pose = pack_pose(joint_pos, joint_vel, rot6d)
    lead = pose.shape[:-1]
    return _cat(
        [
            pose,
            root_delta.reshape(tuple(lead) + (3,)),
            contacts.reshape(tuple(lead) + (CONTACT_SIZE,)),
            _flat(future_pos, lead, NF * 2),
            _flat(future_dir, lead, NF * 2),
        ],
        pose,
    )


def unpack_output(y) -> dict:
    """``{"joint_pos", "joint_vel", "rot6d"`` (``[..., 21, 3|6]``),
    ``"root_delta" [..., 3], "contacts" [..., 4], "future_pos" [..., 3, 2],
    "future_dir" [..., 3, 2]}`` (views of ``y``)."""
    lead = tuple(y.shape[:-1])
    fut = y[..., OUT["future"]]
    out = unpack_pose(y[..., OUT["pose"]])
    out.update(
        root_delta=y[..., OUT["root_delta"]],
        contacts=y[..., OUT["contacts"]],
        future_pos=fut[..., : NF * 2].reshape(lead + (NF, 2)),
        future_dir=fut[..., NF * 2 :].reshape(lead + (NF, 2)),
    )
    return out


def root_velocity_from_delta(root_delta, fps: float):
    """Root velocity input ``[..., 3]`` of frame ``t + 1`` from the root
    delta ``[..., 3]`` of ``t -> t + 1``: the displacement rotated into the
    root frame of ``t + 1`` (by ``-dyaw``) times ``fps``, and ``dyaw * fps``."""
    dx, dy, dyaw = root_delta[..., 0], root_delta[..., 1], root_delta[..., 2]
    if _is_torch(root_delta):
        import torch

        c, s = torch.cos(dyaw), torch.sin(dyaw)
        stack = torch.stack
    else:
        c, s = np.cos(dyaw), np.sin(dyaw)
        stack = np.stack
    # Rotating by -dyaw: (c x + s y, -s x + c y).
    return stack([(c * dx + s * dy) * fps, (-s * dx + c * dy) * fps, dyaw * fps], -1)


def feedback_input(x_next, y, fps: float):
    """The input of frame ``t + 1`` with the model's prediction ``y`` (raw,
    for ``t -> t + 1``) in place of the data: the pose, the contacts and the
    root velocity (from ``root_delta``) are taken from ``y``; the trajectory
    and style stay those of ``x_next``. Used by scheduled sampling in
    training; the controller builds the same thing with :func:`pack_input`."""
    rv = root_velocity_from_delta(y[..., OUT["root_delta"]], fps)
    return _cat(
        [
            y[..., OUT["pose"]],
            x_next[..., IN["traj"]],
            x_next[..., IN["style"]],
            y[..., OUT["contacts"]],
            rv,
        ],
        y,
    )


# --- from cached clip features ---------------------------------------------------------------


def clip_arrays(cf, style=None):
    """Training arrays of one :class:`~.features.ClipFeatures` (at ``cf.fps``).

    Returns ``x [F, INPUT_SIZE]`` (input of every frame) and ``y [F,
    OUTPUT_SIZE]`` (target for ``t -> t + 1``; the last row repeats the one
    before and is never a target), float32. ``style`` defaults to the clip's
    ``style_key`` label. The root velocity input of frame ``t`` is the root
    delta of ``t - 1 -> t`` (:func:`root_velocity_from_delta`) exactly as the
    controller computes it from the model's own output; frame 0 uses the
    delta of ``0 -> 1``.
    """
    f = cf.num_frames
    if f < 2:
        raise ValueError(f"clip {cf.name} has {f} frame(s); training needs >= 2")
    style = style_vector(cf.labels.get("style_key", "normal") if style is None else style)
    yaw = np.asarray(cf.yaw, dtype=np.float64)
    rp = np.asarray(cf.root_pos, dtype=np.float64)
    d = rp[1:] - rp[:-1]
    c, s = np.cos(-yaw[:-1]), np.sin(-yaw[:-1])
    delta = np.stack([c * d[:, 0] - s * d[:, 1], s * d[:, 0] + c * d[:, 1], yaw[1:] - yaw[:-1]], -1)  # [F-1, 3]
    rv = root_velocity_from_delta(delta, cf.fps)
    root_vel = np.concatenate([rv[:1], rv], axis=0)  # frame t uses delta t-1 -> t
    x = pack_input(
        cf.joint_pos, cf.joint_vel, cf.rot6d, cf.traj_pos, cf.traj_dir,
        np.broadcast_to(style, (f, STYLE_SIZE)), cf.contacts, root_vel,
    )
    nxt = slice(1, None)
    y = pack_output(
        cf.joint_pos[nxt], cf.joint_vel[nxt], cf.rot6d[nxt], delta, cf.contacts[nxt],
        cf.traj_pos[nxt][:, list(FUTURE)], cf.traj_dir[nxt][:, list(FUTURE)],
    )
    y = np.concatenate([y, y[-1:]], axis=0)
    return x.astype(np.float32), y.astype(np.float32)


__all__ = [
    "NUM_JOINTS", "POSE_JOINTS", "STYLES", "TRAJ_TIMES", "PAST", "CURRENT", "FUTURE", "FUTURE_TIMES",
    "POSE_SIZE", "TRAJ_SIZE", "STYLE_SIZE", "CONTACT_SIZE", "ROOT_VEL_SIZE", "FUTURE_SIZE",
    "IN", "OUT", "POSE", "INPUT_SIZE", "OUTPUT_SIZE", "GATING_JOINTS", "GATING_INDEX", "GATING_SIZE",
    "style_vector", "pack_pose", "unpack_pose", "pack_input", "unpack_input", "pack_output", "unpack_output",
    "root_velocity_from_delta", "feedback_input", "clip_arrays",
]
