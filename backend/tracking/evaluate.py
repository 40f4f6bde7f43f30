"""Scores of a tracked body against the mocap its trackers came from.

- ``mpjpe_cm``: mean joint position error (cm) over the mapped body joints,
  the output first put on the source's proportions (a canonical source: the
  same rotations on the source's own bone lengths; any other skeleton:
  :func:`~rigmind.backend.retarget.retarget` onto it).
- ``skate_cm`` / ``skate_ref_cm``: foot skate (:func:`~rigmind.backend.
  locomotion.metrics.foot_skate`, cm per 30 fps contact frame, each joint's
  own planted height and the clip's floor) of the output and of the mocap.
- ``jitter`` / ``jitter_ref``: mean joint jerk (m/s^3) at 30 fps.
- ``hand_err_cm``: mean and max distance of the wrists from their targets;
  ``head_err_cm``: mean and 95th percentile of the head joint's from its.
- ``limb_angle_deg``: mean angle between the output's and the mocap's
  upper-arm, forearm, thigh and shin directions, each in its own body frame
  (hips' left-right axis, world up, and their cross product).
- ``steps_moving`` / ``planted_still``: foot touch-downs while the head
  moves (> 0.3 m/s, a walk is walked) and the fraction of frames with both
  feet planted while it stands (< 0.1 m/s).
"""

from __future__ import annotations

import numpy as np

from ..locomotion.metrics import foot_skate, jitter
from ..motion import Motion
from ..resample import resample
from ..retarget import RetargetConfig, retarget
from .canonical import CANONICAL_MAP, is_canonical
from .features import contacts_of

LIMBS = (("upperarm_l", "lowerarm_l"), ("lowerarm_l", "hand_l"), ("upperarm_r", "lowerarm_r"),
         ("lowerarm_r", "hand_r"), ("upperleg_l", "lowerleg_l"), ("lowerleg_l", "foot_l"),
         ("upperleg_r", "lowerleg_r"), ("lowerleg_r", "foot_r"))
#: :data:`LIMBS` as a reader names them, in the same order.
LIMB_NAMES = ("upper arm L", "forearm L", "upper arm R", "forearm R", "thigh L", "shin L", "thigh R", "shin R")
FEET = ("foot_l", "toes_l", "foot_r", "toes_r")


def on_source(out: Motion, source: Motion, src_map: dict) -> Motion:
    """The output on the source's skeleton and proportions."""
    if is_canonical(source):
        trans = np.broadcast_to(source.skeleton.offsets, out.rotations.shape[:2] + (3,)).copy()
        trans[:, :2] = out.local_translations()[:, :2]
        return Motion(source.skeleton, out.rotations, out.root_positions, out.fps, trans)
    # root_scale 1: the output already travels the source's path (its trackers'), so
    # the travel must not be scaled again by the leg-length ratio.
    return retarget(out, CANONICAL_MAP, source.skeleton, src_map,
                    RetargetConfig(ik=False, hand_ik=False, root_scale=1.0, ground_height=0.0)).motion


def body_frames(pos: np.ndarray, idx: dict) -> np.ndarray:
    """Body frames ``[F, 3, 3]`` (rows: left, forward, up) from the hips' left-right axis."""
    across = pos[:, idx["upperleg_l"]] - pos[:, idx["upperleg_r"]]
    across[:, 2] = 0.0
    across /= np.maximum(np.linalg.norm(across, axis=-1, keepdims=True), 1e-9)
    up = np.broadcast_to([0.0, 0.0, 1.0], across.shape)
    fwd = np.cross(up, across)
    return np.stack([across, fwd, up], axis=1)


def limb_angles(pos_a, idx_a, pos_b, idx_b) -> np.ndarray:
    """Angles ``[F, 8]`` (degrees) between the limbs of two poses, each in its body frame."""
    fa, fb = body_frames(pos_a, idx_a), body_frames(pos_b, idx_b)
    out = []
    for a, b in LIMBS:
        va = np.einsum("fij,fj->fi", fa, pos_a[:, idx_a[b]] - pos_a[:, idx_a[a]])
        vb = np.einsum("fij,fj->fi", fb, pos_b[:, idx_b[b]] - pos_b[:, idx_b[a]])
        c = np.sum(va * vb, -1) / np.maximum(np.linalg.norm(va, axis=-1) * np.linalg.norm(vb, axis=-1), 1e-12)
        out.append(np.degrees(np.arccos(np.clip(c, -1.0, 1.0))))
    return np.stack(out, axis=1)


def _skate(motion: Motion, mapping: dict) -> float:
    names = [mapping[k] for k in FEET if k in mapping]
    return foot_skate(motion, names, lift=[None] * len(names), floor="clip")["skate_cm_per_frame"]


def _touch_downs(pos, idx, fps: float, mask) -> int:
    """Touch-downs of the mocap's feet (ankle or toe contact starts) in ``mask`` frames."""
    from ..foot_contacts import ContactConfig, detect_contacts

    feet = [idx[k] for k in FEET if k in idx]
    c = detect_contacts(pos[:, feet], fps, ContactConfig())
    c = np.stack([c[:, :len(feet) // 2].any(1), c[:, len(feet) // 2:].any(1)], 1)
    t = np.zeros_like(c)
    t[1:] = c[1:] & ~c[:-1]
    return int(t[mask].sum())


def score(result, source: Motion, src_map: dict) -> dict:
    """Scores (see the module docstring) of a :class:`~.body_from_trackers.TrackResult`
    against the ``source`` mocap (``src_map``: its canonical name -> bone)."""
    out = result.motion
    src = resample(source, out.fps) if abs(source.fps - out.fps) > 1e-6 else source
    n = min(src.num_frames, out.num_frames)
    src, out = src.slice(0, n), out.slice(0, n)
    mine = on_source(out, src, src_map)
    keys = [k for k in CANONICAL_MAP if k in src_map]
    si = {k: src.skeleton.index(src_map[k]) for k in keys}
    ps, pm = src.world_positions(), mine.world_positions()
    err = np.linalg.norm(ps[:, list(si.values())] - pm[:, list(si.values())], axis=-1)
    po = out.world_positions()
    oi = {k: out.skeleton.index(v) for k, v in CANONICAL_MAP.items()}
    hands = np.linalg.norm(po[:, [oi["hand_l"], oi["hand_r"]]] - result.targets[:n, 1:], axis=-1)
    head = np.linalg.norm(po[:, oi["head"]] - result.targets[:n, 0], axis=-1)
    ang = limb_angles(ps, si, po, oi)
    head_speed = np.linalg.norm(np.gradient(result.targets[:n, 0, :2], axis=0), axis=-1) * out.fps
    head_speed = np.convolve(head_speed, np.ones(9) / 9, mode="same")
    c = result.contacts[:n]
    touch = np.zeros_like(c)
    touch[1:] = c[1:] & ~c[:-1]
    moving, still = head_speed > 0.3, head_speed < 0.1
    out_map = dict(CANONICAL_MAP)
    return {
        "frames": int(n),
        "mpjpe_cm": float(err.mean() * 100.0),
        "skate_cm": _skate(out, out_map),
        "skate_ref_cm": _skate(src, src_map),
        "jitter": jitter(out),
        "jitter_ref": jitter(src),
        "hand_err_cm": float(hands.mean() * 100.0),
        "hand_err_max_cm": float(hands.max() * 100.0),
        "head_err_cm": float(head.mean() * 100.0),
        "head_err_p95_cm": float(np.percentile(head, 95) * 100.0),
        "limb_angle_deg": float(ang.mean()),
        "steps_moving": int(touch[moving].sum()),
        "moving_s": float(moving.sum() / out.fps),
        "steps_moving_ref": _touch_downs(ps, si, out.fps, moving),
        "planted_still": float(c[still].all(axis=1).mean()) if still.any() else float("nan"),
        "ref_planted_still": float(contacts_of(src.world_positions(), src.skeleton.names, out.fps)[still].min(1).mean())
        if still.any() and is_canonical(src) else float("nan"),
    }
