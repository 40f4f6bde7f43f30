"""A full body from three trackers (head, left hand, right hand).

:func:`track_body` resamples the take to ``config.fps`` (30), scales it to
the canonical skeleton (the head's usual height), runs the tracking network
(``method="model"``) or the baseline (``"baseline"``: the walk controller
driven by the head's velocity and facing), and finishes the pose
(:mod:`.posing`: foot locks, arm IK onto the hand trackers, head and hands
turned to theirs). The result is a :class:`Motion` on the canonical
(Bandai) skeleton scaled to the subject, Blender Z up, metres.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import rotations
from ..errors import Cancelled
from ..filters import gaussian_filter1d
from ..motion import Motion
from .canonical import canonical_skeleton
from .features import contacts_of, heading, window_inputs
from .live import LiveTracker  # noqa: F401  (part of this module's API)
from .mocap_trackers import trackers_from_motion  # noqa: F401  (part of this module's API)
from .posing import PoseConfig, contact_mask, decode, finish, scaled_skeleton
from .trackers import TrackerTake

METHODS = ("model", "baseline")


@dataclass(frozen=True)
class TrackConfig:
    """How :func:`track_body` works."""

    #: "model" (the tracking network) or "baseline" (walk controller + IK).
    method: str = "model"
    #: Output frame rate (frames per second); the network runs at 30.
    fps: float = 30.0
    #: The subject's size relative to the canonical skeleton; None estimates
    #: it from the head's height (its 90th percentile over the take).
    scale: float = None
    #: Gaussian smoothing (frames at 30 fps) of the network's output rows
    #: before decoding; 0 for none.
    smooth: float = 1.5
    #: ONNX Runtime ("onnxruntime") or torch ("torch") for the network.
    engine: str = "onnxruntime"
    #: Model file (default the committed ``models/track.onnx`` / ``.pt``).
    model_path: str = None
    pose: PoseConfig = field(default_factory=PoseConfig)


@dataclass
class TrackResult:
    """``motion``: the body (canonical skeleton scaled by ``scale``) at
    ``config.fps``; ``targets [F, 3, 3]`` and ``target_rotations [F, 3, 4]``:
    the trackers resampled to its frames; ``contacts [F, 2]`` planted
    left/right feet; ``contact_prob [F, 2]`` the network's (or, for the
    baseline, the detected) contacts; ``arm_stretch_m [F, 2]`` how far each
    hand bone slid past the arm's reach to its target."""

    motion: Motion
    targets: np.ndarray
    target_rotations: np.ndarray
    contacts: np.ndarray
    contact_prob: np.ndarray
    scale: float
    arm_stretch_m: np.ndarray
    method: str = "model"


def resample_take(take: TrackerTake, fps: float) -> tuple:
    """``(times [F], pos [F, 3, 3], rot [F, 3, 4])`` of a take at ``fps``
    from its first sample (positions linear, rotations slerped)."""
    t = take.times
    if len(t) == 1:
        return t.copy(), take.positions.copy(), take.rotations.copy()
    n = int(np.floor((t[-1] - t[0]) * fps + 1e-6)) + 1
    out_t = t[0] + np.arange(n) / fps
    i0 = np.clip(np.searchsorted(t, out_t, side="right") - 1, 0, len(t) - 2)
    a = np.clip((out_t - t[i0]) / (t[i0 + 1] - t[i0]), 0.0, 1.0)
    pos = (1.0 - a)[:, None, None] * take.positions[i0] + a[:, None, None] * take.positions[i0 + 1]
    rot = rotations.slerp(take.rotations[i0], take.rotations[i0 + 1], np.broadcast_to(a[:, None], (n, 3)))
    return out_t, pos, rotations.make_continuous(rot)


def estimate_scale(head_z: np.ndarray, head_height: float) -> float:
    """The subject's size relative to the canonical skeleton from head heights ``[F]`` (m)."""
    return float(np.clip(np.percentile(head_z, 90) / head_height, 0.5, 1.6))


def _model_body(pos, rot, scale, cfg: TrackConfig, sk):
    from .engine import load_engine

    eng = load_engine(cfg.model_path, cfg.engine)
    x = window_inputs(pos / scale, rot, 30.0, lags=eng.lags)
    y = eng(x)
    if cfg.smooth > 0 and len(y) > 1:
        y = np.concatenate([gaussian_filter1d(y[:, :-2], cfg.smooth, axis=0, mode="nearest"), y[:, -2:]], axis=1)
    origin, hinv = heading(pos, rot)
    body = decode(y, origin, hinv, scale, sk)
    return body, y[:, -2:].astype(np.float64)


def _check(cancelled) -> None:
    if cancelled is not None and cancelled():
        raise Cancelled("Cancelled")


def track_body(take: TrackerTake, config: TrackConfig = None, *, progress=None, cancelled=None) -> TrackResult:
    """The whole body for a tracker take (see the module docstring).
    ``progress(fraction)`` (0..1) is called between the stages;
    ``cancelled()`` returning True stops the work at the next stage (and
    every 64 frames of the baseline's controller loop) with
    :class:`~rigmind.backend.errors.Cancelled`."""
    cfg = config or TrackConfig()
    if cfg.method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {cfg.method!r}")
    _, pos, rot = resample_take(take, 30.0)
    from .engine import load_engine

    head_height = load_engine(cfg.model_path, cfg.engine).head_height
    scale = cfg.scale or estimate_scale(pos[:, 0, 2], head_height)
    sk = scaled_skeleton(canonical_skeleton(), scale)
    _check(cancelled)
    if progress:
        progress(0.1)
    if cfg.method == "model":
        body, prob = _model_body(pos, rot, scale, cfg, sk)
    else:
        from .baseline import baseline_body

        body = baseline_body(pos, rot, scale, sk, progress=progress, cancelled=cancelled)
        prob = contacts_of(body.world_positions(), sk.names, 30.0)
    _check(cancelled)
    contacts = contact_mask(prob, cfg.pose)
    if cfg.pose.geometric_contacts and cfg.method == "model":
        contacts |= contacts_of(body.world_positions(), sk.names, 30.0) > 0.5
    motion, info = finish(body, pos, rot, contacts, cfg.pose, 30.0, scale, prob)
    contacts = info["contacts"]
    if progress:
        progress(0.9)
    if abs(cfg.fps - 30.0) > 1e-6:
        from ..resample import resample

        motion = resample(motion, cfg.fps)
        _, pos, rot = resample_take(TrackerTake(np.arange(len(pos)) / 30.0, pos, rot), cfg.fps)
        idx = np.minimum(np.round(np.arange(motion.num_frames) * 30.0 / cfg.fps).astype(int), len(contacts) - 1)
        contacts, prob, stretch = contacts[idx], prob[idx], info["arm_stretch_m"][idx]
        pos, rot = pos[:motion.num_frames], rot[:motion.num_frames]
    else:
        stretch = info["arm_stretch_m"]
    motion.name = "track"
    if progress:
        progress(1.0)
    return TrackResult(motion, pos, rot, contacts, prob, scale, stretch, cfg.method)
