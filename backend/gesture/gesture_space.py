"""Gesture space: hands work in front of the chest, rising on stressed speech.

The model's hands spend most of the take in front of the thighs: too low
(wrist height ~10 cm under the real speaker's on the same rig) and, when
low, too far forward (the real speaker's resting hands hang at his sides,
~5 cm in front of the pelvis; the model's ~12 cm), while its strokes stay
closer to the body than his. :func:`lift_hands` moves each wrist, in the
body's frame, so that over the take the wrists' **height** (relative to the
shoulders) and **forward distance** (in front of the pelvis, along the hips'
facing) follow a real speaker's distributions (:class:`GestureSpaceTarget`,
measured on the training part of the paired takes; ``presets/gesture_space.json``)
— the stressed moments taking the high, forward places:

1. each frame's height rank is a mix of the model's own wrist height and the
   speech's stress envelope (:func:`stress_envelope`), so stressed speech
   raises the hands; its forward rank mixes the model's own forward
   distance with the new height (a raised hand is in front of the chest, a
   resting hand by the thigh, as in the real take);
2. the ranks are read off the target quantiles (quantile mapping), the
   offsets to there smoothed in time (no jolts) and kept off the torso;
   ``amount`` scales them (0: unchanged; 0.5: the real speaker's space;
   1: more of the take in its upper, forward part);
3. the arm is re-solved with two-bone IK (shoulder → elbow → wrist; the
   elbow bends in the animated arm's plane, outwards and back where the arm
   is straight), so only shoulder and elbow rotations change and the
   gesture's own timing stays.

Units: metres, seconds; Blender Z up; SMPL-X joint names.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import ik
from .. import rotations
from ..filters import gaussian_filter1d
from ..motion import Motion
from .. import paths
from .viewer_metrics import facing

ARMS = (("left_shoulder", "left_elbow", "left_wrist"), ("right_shoulder", "right_elbow", "right_wrist"))
TARGET_FILE = paths.PRESETS_DIR / "gesture_space.json"
QUANTILES = np.linspace(0.0, 1.0, 101)


@dataclass(frozen=True)
class GestureSpaceConfig:
    """Where the wrists are moved to (see :func:`lift_hands`); every field's
    default is documented beside it.

    Chosen on validation speech only (``bench/fit_gesture_space.py --grid``:
    the paired take's training-part speech, Russian TTS and LibriSpeech,
    whole and in 4.3-s parts; 3 seeds; never the evaluation takes): every
    setting of the grid (stress_weight 0.5-0.9, height_weight 0.6/0.8,
    smooth 0.1-0.3 s, 1-3 passes) brought the summed wrist height + forward
    distance from 14.6 cm (no lift) to 2.6-4.2 cm; 3 passes reach 2.6-2.8
    cm at any smoothing. The largest elbow/wrist acceleration stays near the
    unlifted motion's (23.6 vs 22.6 mm/frame² averaged over the takes).
    Of those, 0.2 s of smoothing keeps more of the model's own strokes
    than the best setting's 0.1 s (2.64 cm against 2.56; same weights)."""

    #: Share of the stress envelope in a frame's height rank (the rest is the
    #: model's own wrist height).
    stress_weight: float = 0.7
    #: Share of the new height in the forward rank (the rest is the model's
    #: own forward distance).
    height_weight: float = 0.6
    #: Gaussian smoothing of the wrist offsets (s).
    smooth_seconds: float = 0.2
    #: Smoothing of the stress envelope (s).
    stress_seconds: float = 0.35
    #: How long the envelope takes to rise from the take's first frame (s):
    #: the body starts at rest even when the speech starts at once.
    rise_seconds: float = 0.6
    #: Smoothing of the voice activity that decides where the hands rest (s):
    #: pauses between phrases (under ~2 s) keep the gesture space, as the
    #: real speaker's hands stay up across them; longer silences (and a
    #: silent take) let them rest.
    pause_seconds: float = 1.0
    #: Least horizontal distance of a moved wrist from the pelvis → neck
    #: axis (m).
    torso_clearance: float = 0.14
    #: Share of the target's extremes left out at each end: the real
    #: speaker's outermost 1 % (hands 19-29 cm behind the pelvis, 9-22 cm
    #: over his shoulders, 47-51 cm in front), where the quantiles are sparse
    #: and steep, so a small change of rank would jerk the hand; without it
    #: an elbow popped, 62 mm/frame², on validation.
    tail: float = 0.01
    #: How often the smoothed places are matched to the target again
    #: (smoothing narrows the distribution, most on a short take).
    passes: int = 3


@dataclass
class GestureSpaceTarget:
    """A real speaker's wrist distributions as quantiles at :data:`QUANTILES`:
    ``height`` (m, wrist height minus the shoulders' mean height, so negative
    below the shoulders) and ``forward`` (m, in front of the pelvis along the
    hips' facing), both wrists pooled; ``rest`` (m, [height, forward]): the
    median place of his wrists where he is silent (the hands' resting place);
    ``source`` says which frames."""

    height: np.ndarray
    forward: np.ndarray
    rest: np.ndarray
    source: str = ""

    @classmethod
    def load(cls, path=None) -> "GestureSpaceTarget":
        d = json.loads(Path(path or TARGET_FILE).read_text())
        return cls(np.asarray(d["height"], np.float64), np.asarray(d["forward"], np.float64),
                   np.asarray(d["rest"], np.float64), d.get("source", ""))

    def save(self, path=None) -> None:
        Path(path or TARGET_FILE).write_text(json.dumps(
            {"source": self.source, "quantiles": "0, 0.01, ..., 1",
             "height": [round(float(v), 5) for v in self.height],
             "forward": [round(float(v), 5) for v in self.forward],
             "rest": [round(float(v), 5) for v in self.rest]}, indent=1) + "\n")

    @classmethod
    def from_positions(cls, positions: list, names, talking: list, source: str = "") -> "GestureSpaceTarget":
        """From world positions ``[[T, J, 3], ...]`` of real takes (SMPL-X
        names ``names``) and their voice activity ``[[T], ...]``: ``rest`` is
        the median place of the wrists where the speaker is silent."""
        hf = [body_frame(p, list(names))[0] for p in positions]
        allhf = np.concatenate([h.reshape(-1, 2) for h in hf])
        quiet = np.concatenate([h[_talk_weight(t, 30.0) < 0.5].reshape(-1, 2) for h, t in zip(hf, talking)])
        # (Silence here: ~0.35 s from any speech, so that the few pauses of a
        # talking take count; 40 frames on the paired take's training part.)
        return cls(np.quantile(allhf[:, 0], QUANTILES), np.quantile(allhf[:, 1], QUANTILES),
                   np.median(quiet if len(quiet) else allhf, axis=0), source)


def _talk_weight(talking: np.ndarray, fps: float, seconds: float = 0.35) -> np.ndarray:
    """Voice activity ``[T]`` (0/1) → 0..1: 1 while talking and for ~``seconds``
    around it, fading to 0 in longer silences."""
    w = gaussian_filter1d(np.asarray(talking, np.float64), seconds * fps, mode="nearest")
    return np.clip(2.0 * w, 0.0, 1.0)


_TARGET = {}


def default_target() -> GestureSpaceTarget:
    if "default" not in _TARGET:
        _TARGET["default"] = GestureSpaceTarget.load()
    return _TARGET["default"]


def body_frame(pos: np.ndarray, names: list):
    """World positions ``[T, J, 3]`` → ``(hf [T, 2, 2], fwd [T, 3], shoulder_height [T])``:
    per wrist (left, right) the height relative to the shoulders' mean height
    and the forward distance from the pelvis along the hips' facing (m)."""
    ix = names.index
    fwd = facing(pos[:, ix("left_hip")], pos[:, ix("right_hip")])
    sh = 0.5 * (pos[:, ix("left_shoulder"), 2] + pos[:, ix("right_shoulder"), 2])
    w = pos[:, [ix("left_wrist"), ix("right_wrist")]]
    h = w[..., 2] - sh[:, None]
    f = np.sum((w - pos[:, None, ix("pelvis")]) * fwd[:, None], axis=-1)
    return np.stack([h, f], axis=-1), fwd, sh


def stress_envelope(energy: np.ndarray, pulses: np.ndarray, speech: np.ndarray, rest_energy: float, fps: float,
                    cfg: GestureSpaceConfig = GestureSpaceConfig()) -> np.ndarray:
    """``[T]`` in 0..1 from the model's controls: energy above the resting
    energy (log wrist speed; +1.5 ≈ full) and the beat pulses, only during
    speech, smoothed (it rises before a stroke and fades after a phrase) and
    relative to this voice's own range (a flat synthetic voice stresses too,
    only less loudly than the training speaker)."""
    e = np.clip((np.asarray(energy, np.float64) - rest_energy) / 1.5, 0, 1)
    p = gaussian_filter1d(np.asarray(pulses, np.float64), 0.3 * fps)
    s = gaussian_filter1d(np.asarray(speech, np.float64), 0.25 * fps)
    x = np.clip(0.75 * e + 0.5 * np.clip(p * 3, 0, 1), 0, 1) * s
    x = gaussian_filter1d(x, cfg.stress_seconds * fps, mode="nearest")
    talking = np.asarray(speech) > 0.5
    if talking.any():
        x = x / max(float(np.percentile(x[talking], 90)), 0.2)
    # The take starts from rest: the hands rise into the first phrase (a
    # gesture's preparation) instead of being up on the first frame.
    u = np.clip(np.arange(len(x)) / max(cfg.rise_seconds * fps, 1.0), 0.0, 1.0)
    return np.clip(x, 0.0, 1.0) * u * u * (3 - 2 * u)


def _percent_rank(x: np.ndarray) -> np.ndarray:
    """Each value's rank among all of ``x`` (any shape) as 0..1, ties averaged."""
    flat = x.reshape(-1)
    order = np.argsort(flat, kind="stable")
    r = np.empty(len(flat))
    r[order] = np.arange(len(flat))
    # Ties (e.g. zero stress in every pause) share their mean rank.
    _, inv, counts = np.unique(flat, return_inverse=True, return_counts=True)
    sums = np.bincount(inv, weights=r)
    r = sums[inv] / counts[inv]
    return (r / max(len(flat) - 1, 1)).reshape(x.shape)


def target_places(hf: np.ndarray, stress: np.ndarray, target: GestureSpaceTarget,
                  cfg: GestureSpaceConfig = GestureSpaceConfig(), boost: float = 0.0) -> np.ndarray:
    """Current ``hf [T, 2, 2]`` (height, forward per wrist) and ``stress [T]``
    → the wrists' places ``[T, 2, 2]`` in the target's distributions.
    ``boost`` 0..1 moves every rank up to half-way towards the top (more of
    the take in the high, forward places; the order of frames is kept)."""
    s = np.broadcast_to(np.asarray(stress, np.float64)[:, None], hf.shape[:2])
    lo, hi = cfg.tail, 1.0 - cfg.tail
    up = lambda r: lo + (hi - lo) * (r + 0.5 * boost * (1.0 - r))  # noqa: E731
    rank_h = _percent_rank((1 - cfg.stress_weight) * _percent_rank(hf[..., 0]) + cfg.stress_weight * s)
    h = np.interp(up(rank_h), QUANTILES, target.height)
    rank_f = _percent_rank((1 - cfg.height_weight) * _percent_rank(hf[..., 1]) + cfg.height_weight * rank_h)
    f = np.interp(up(rank_f), QUANTILES, target.forward)
    return np.stack([h, f], axis=-1)


def _clear_of_torso(wrist: np.ndarray, pelvis: np.ndarray, neck: np.ndarray, clearance: float) -> np.ndarray:
    """Wrist targets ``[T, 3]`` pushed horizontally out of a vertical-ish
    cylinder of radius ``clearance`` around the pelvis → neck segment."""
    ab = neck - pelvis
    t = np.clip(np.sum((wrist - pelvis) * ab, -1) / np.maximum(np.sum(ab * ab, -1), 1e-12), 0.0, 1.0)
    axis_pt = pelvis + t[:, None] * ab
    d = wrist - axis_pt
    d[:, 2] = 0.0
    n = np.linalg.norm(d, axis=-1, keepdims=True)
    push = np.maximum(clearance - n, 0.0)
    return wrist + push * d / np.maximum(n, 1e-9)


def lift_hands(motion: Motion, stress: np.ndarray, amount: float = 0.5,
               cfg: GestureSpaceConfig = GestureSpaceConfig(), target: GestureSpaceTarget = None,
               talking: np.ndarray = None) -> Motion:
    """``motion`` (SMPL-X, world space, Z up) with the wrists moved towards
    ``target``'s gesture space (default: the real speaker's), stressed frames
    (``stress [T]`` 0..1) higher and further forward. ``amount`` 0..0.5 is
    the share of the way there (0: the motion itself is returned, 0.5: the
    real speaker's space); above 0.5 the hands spend more of the take in
    the upper, forward part of that space (``boost`` of :func:`target_places`),
    never outside it. ``talking [T]`` (voice activity, 0/1; None: all
    talking): in silence the hands keep the model's calm idle, moved as a
    whole to the speaker's resting place (``target.rest``). Only shoulder
    and elbow rotations change."""
    amount = float(amount)
    k = min(2.0 * amount, 1.0)
    if k == 0.0:
        return motion
    target = target or default_target()
    names = list(motion.skeleton.names)
    world_rot, pos = motion.world()
    hf, fwd, _ = body_frame(pos, names)
    boost = max(2.0 * amount - 1.0, 0.0)
    sigma = cfg.smooth_seconds * motion.fps
    smooth = (lambda d: gaussian_filter1d(d, sigma, axis=0, mode="nearest")) if sigma > 0 else (lambda d: d)  # noqa: E731
    moved = hf + smooth(target_places(hf, stress, target, cfg, boost) - hf)
    # Smoothing narrows the distribution (most on a short take); matching
    # the smoothed places again, by their own order, restores its spread.
    for _ in range(cfg.passes - 1):
        moved = moved + smooth(target_places(moved, np.zeros(len(hf)), target,
                                             GestureSpaceConfig(0.0, 0.0, tail=cfg.tail), boost) - moved)
    delta = moved - hf
    if talking is not None:
        # In silence the hands go to the speaker's resting place by a
        # constant shift (the model's rest is ~7 cm too far forward) and keep
        # the model's own calm motion (matching ranks there would spread a
        # calm idle over the whole gesture space).
        w = _talk_weight(talking, motion.fps, cfg.pause_seconds)[:, None, None]
        quiet = (1.0 - w) * np.ones_like(hf)
        rest_shift = target.rest - np.sum(quiet * hf, axis=0) / np.maximum(quiet.sum(axis=0), 1e-9)
        delta = w * delta + (1.0 - w) * rest_shift[None]
    pelvis, neck = pos[:, names.index("pelvis")], pos[:, names.index("neck")]
    up = np.array([0.0, 0.0, 1.0])
    goals = []
    for side, (_, _, wr) in enumerate(ARMS):
        goal_w = pos[:, names.index(wr)] + k * (delta[:, side, 0:1] * up + delta[:, side, 1:2] * fwd)
        goals.append(_clear_of_torso(goal_w, pelvis, neck, cfg.torso_clearance))
    return reach_wrists(motion, np.stack(goals, axis=1), world_rot, pos, fwd)


def reach_wrists(motion: Motion, goals: np.ndarray, world_rot: np.ndarray = None, pos: np.ndarray = None,
                 fwd: np.ndarray = None) -> Motion:
    """``motion`` with both arms re-solved by two-bone IK (shoulder → elbow →
    wrist) so the wrists reach ``goals [T, 2, 3]`` (m, world, left then
    right); only shoulder and elbow rotations change. ``world_rot``/``pos``
    (:meth:`Motion.world`) and ``fwd [T, 3]`` (the hips' facing) are
    recomputed when not given."""
    names = list(motion.skeleton.names)
    if world_rot is None or pos is None:
        world_rot, pos = motion.world()
    if fwd is None:
        fwd = facing(pos[:, names.index("left_hip")], pos[:, names.index("right_hip")])
    rot = motion.rotations.copy()
    parents = motion.skeleton.parents
    up = np.array([0.0, 0.0, 1.0])
    for side, (sh, el, wr) in enumerate(ARMS):
        a, b, c = (names.index(n) for n in (sh, el, wr))
        s_p, e_p, w_p = pos[:, a], pos[:, b], pos[:, c]
        goal_w = goals[:, side]
        # Pole: the animated elbow's side of the shoulder → wrist line; where
        # the arm is nearly straight that side is noise, so a natural elbow
        # direction (outwards, back and down) takes over.
        axis = w_p - s_p
        axis /= np.maximum(np.linalg.norm(axis, axis=-1, keepdims=True), 1e-9)
        rel = e_p - s_p
        bend = rel - np.sum(rel * axis, axis=-1, keepdims=True) * axis
        outward = s_p - pos[:, names.index("spine3")]
        outward[:, 2] = 0.0
        outward /= np.maximum(np.linalg.norm(outward, axis=-1, keepdims=True), 1e-9)
        natural = 0.6 * outward - 0.6 * fwd - 0.5 * up
        pole = e_p + bend + 0.03 * natural
        # Reach: soft from the arm's own extension, so an arm stretched
        # towards an unreachable place straightens gradually (no elbow snap).
        length = np.linalg.norm(e_p - s_p, axis=-1) + np.linalg.norm(w_p - e_p, axis=-1)
        soft = np.clip(np.linalg.norm(w_p - s_p, axis=-1) / np.maximum(length, 1e-9), ik.SOFT_REACH, ik.MAX_REACH)
        q_up, q_low, _ = ik.two_bone_ik(s_p, e_p, w_p, goal_w, pole, soft=soft)
        up_w = rotations.mul(q_up, world_rot[:, a])
        low_w = rotations.mul(q_low, world_rot[:, b])
        rot[:, a] = rotations.mul(rotations.inv(world_rot[:, parents[a]]), up_w)
        rot[:, b] = rotations.mul(rotations.inv(up_w), low_w)
    return Motion(motion.skeleton, rotations.make_continuous(rotations.normalize(rot), axis=0), motion.root_positions.copy(),
                  motion.fps, None if motion.translations is None else motion.translations.copy(),
                  list(motion.shape_names), None if motion.shape_weights is None else motion.shape_weights.copy(),
                  motion.name)
