"""The style layer: a gesture take moved like a Bandai Namco style or an
emotion, without touching its timing.

Each style (``backend.options.GESTURE_STYLES``) is three things learned
from the styled clips (:mod:`.style_data`, training split) against the
SAME content performed in the "normal" style (:func:`learn`):

- ``posture [P, 3]``: rotation-vector offsets (radians, parent frame) of the
  posture joints (:data:`.style_features.POSTURE`: spine, neck, head, and
  collar/shoulder/elbow with left and right pooled and mirrored);
- ``log_amp``: log of the amplitude ratio of the motion around the slow
  (0.5-s) pose;
- ``log_sharp``: log of the extra gain of the fast band (0.033-0.1 s,
  :func:`.style_features.fast_band`) on top of the amplitude: "sharper" moves.

:func:`apply_layer` rotates every moving joint as ``slow ⊗ exp(g·d_lo +
g·s·d_hi)`` (``d`` its rotation from its own slow pose, ``d_hi`` its
sharp band, ``d_lo`` the rest) and then pre-multiplies the posture offset. Nothing is
shifted in time, so the beats stay where the model put them; the legs are
not touched, so the planted feet stay planted. Per frame the layer is the
weighted blend of the active layers (``weights [T, K]``): an emotion
timeline's six weights plus the style at weight 1.

The emotions: happy, sad and angry are the learned Bandai styles of those
names; surprised, afraid and disgusted have no Bandai clips and are
designed here (:data:`DESIGNED`). :data:`EMOTION_GAIN` scales an emotion's
learned amplitude and sharpness (not its posture) so that at weight 1 an
emotion reads as strongly as an actor playing it broadly; see docs/gesture.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import paths, rotations
from ..errors import UserError
from ..filters import gaussian_filter1d
from ..motion import Motion
from ..options import EMOTIONS, GESTURE_STYLES
from . import style_features as sf
from .representation import names

STYLE_FILE = paths.model_path("gesture_styles.npz")
#: Emotions learned from the Bandai style of the same name.
LEARNED_EMOTIONS = ("happy", "sad", "angry")
#: How much a learned emotion's energy and sharpness (log gains, not its
#: posture) are exaggerated at weight 1: the Bandai actor plays "happy" only
#: 1.08x as fast as "normal" on the training contents (bow, bye, byebye),
#: less than a listener reads as happy; a designed factor.
EMOTION_GAIN = 2.0
#: Range of an emotion's energy gain at weight 1 (a designed limit: slower
#: than 0.6x the hands all but stop, faster than 1.6x they flail).
EMOTION_GAIN_RANGE = (0.6, 1.6)
#: Ranges of a learned style's energy and sharpness gains, and the largest
#: posture offset per joint (degrees). Sharpness down to 0.2x: giant's
#: smoothness (its fast-band share, the lowest of the styles) is out of reach
#: at 0.4x, and the classifier then calls its takes masculinity (chosen on
#: alignment_eval.VALIDATION_VOICES; bench/results/gesture_style.md).
STYLE_GAIN_RANGE = (0.3, 3.0)
SHARP_GAIN_RANGE = (0.2, 2.5)
#: Measure-and-correct passes of :func:`apply_style` (speed and sharpness
#: are not linear in their gains: three passes left proud's short takes
#: short of its calm, the validation voices' misses).
STYLE_PASSES = 5
MAX_OFFSET_DEG = 25.0
#: Range of an emotion's sharpness gain at weight 1 (designed).
EMOTION_SHARP_RANGE = (0.6, 1.6)


class StyleError(UserError):
    """A style or style clip that cannot be used; the message is one line."""


def _posture(**deg) -> np.ndarray:
    """Designed posture offsets from degrees per joint: ``spine2=(x, y, z)``."""
    out = np.zeros((len(sf.POSTURE), 3))
    keys = [j if isinstance(j, str) else j[0][5:] for j in sf.POSTURE]
    for k, v in deg.items():
        out[keys.index(k)] = np.radians(v)
    return out


# SMPL-X local axes (identity rest, Blender frame): +X about the body's left
# axis bends forward for the spine (chin down for the head); +Z yaws; the
# collar's -Y (left side, mirrored on the right) raises the shoulder.
#: The emotions no Bandai style plays, designed (posture in degrees, log gains).
DESIGNED = {
    # Surprise: chest and head up and back, shoulders up, bigger, sharp onsets.
    "surprised": dict(posture=_posture(spine2=(-4, 0, 0), spine3=(-4, 0, 0), head=(-8, 0, 0), collar=(0, -6, 0)),
                      log_amp=np.log(1.2), log_sharp=np.log(1.3)),
    # Fear: hunched, head down, shoulders raised, elbows in, small and jittery.
    "afraid": dict(posture=_posture(spine2=(6, 0, 0), spine3=(6, 0, 0), head=(8, 0, 0), collar=(0, -8, 0),
                                    shoulder=(0, 0, 6)),
                   log_amp=np.log(0.75), log_sharp=np.log(1.4)),
    # Disgust: leaning back and away, head turned and down, smaller moves.
    "disgusted": dict(posture=_posture(spine2=(-5, 0, 0), spine3=(-3, 0, 0), neck=(0, 0, 8), head=(6, 0, 6)),
                      log_amp=np.log(0.85), log_sharp=np.log(1.0)),
}


@dataclass(frozen=True)
class StyleBank:
    """The learned layers: ``styles`` names; relative to "normal" (the
    emotions): ``posture [S, P, 3]`` (radians), ``log_amp [S]``,
    ``log_sharp [S]``; absolute (``--style``): the style's own mean pooled
    posture ``abs_posture [S, P, 3]`` (radians), log mean wrist speed
    ``abs_speed [S]`` (log m/s), log fast-band share ``abs_sharp [S]`` and
    log trunk share of the motion ``abs_trunk [S]`` (:func:`trunk_share`);
    ``source`` says which clips."""

    styles: tuple
    posture: np.ndarray
    log_amp: np.ndarray
    log_sharp: np.ndarray
    source: str = ""
    abs_posture: np.ndarray = None
    abs_speed: np.ndarray = None
    abs_sharp: np.ndarray = None
    abs_trunk: np.ndarray = None

    def index(self, style: str) -> int:
        if style not in self.styles:
            raise StyleError(f"unknown gesture style {style!r}; choose from {', '.join(self.styles)}")
        return self.styles.index(style)

    def layer(self, name: str) -> tuple:
        """``(posture [P, 3], log_amp, log_sharp)`` of a style or an emotion."""
        if name in DESIGNED:
            d = DESIGNED[name]
            return d["posture"], float(d["log_amp"]), float(d["log_sharp"])
        i = self.index(name)
        return self.posture[i], float(self.log_amp[i]), float(self.log_sharp[i])

    def emotion(self, name: str) -> tuple:
        """An emotion's layer at weight 1: a designed one (:data:`DESIGNED`),
        or the learned style of its name with its gains exaggerated by
        :data:`EMOTION_GAIN` (energy within :data:`EMOTION_GAIN_RANGE`)."""
        if name in DESIGNED:
            return self.layer(name)
        p, a, s = self.layer(name)
        a = float(np.clip(EMOTION_GAIN * a, *np.log(EMOTION_GAIN_RANGE)))
        return p, a, float(np.clip(EMOTION_GAIN * s, *np.log(EMOTION_SHARP_RANGE)))


_BANK = {}


def load_bank(path=None) -> StyleBank:
    """The style layers in ``models/gesture_styles.npz`` (once per process)."""
    from ..model_files.manifest import verify

    key = str(path or STYLE_FILE)
    if key not in _BANK:
        p = verify(path or STYLE_FILE) if path is None else path
        z = np.load(p)
        _BANK[key] = StyleBank(tuple(str(s) for s in z["layer_styles"]), z["layer_posture"], z["layer_log_amp"],
                               z["layer_log_sharp"], str(z["source"]), z["abs_posture"], z["abs_speed"],
                               z["abs_sharp"], z["abs_trunk"])
    return _BANK[key]


def check_style(style: str) -> str:
    """``style`` lower-cased if it is a known style ("" for none); else a one-line :class:`StyleError`."""
    s = (style or "").strip().lower()
    if s and s not in GESTURE_STYLES:
        raise StyleError(f"unknown gesture style {style!r}; choose from {', '.join(GESTURE_STYLES)}")
    return s


@dataclass(frozen=True)
class BodyStyle:
    """What the style layer does to one take: ``emotion`` an
    ``EmotionTimeline`` (None: neutral), ``style`` a style name ("" none),
    ``clip`` a :class:`~.style_clip.ClipStyle` (None: none)."""

    emotion: object = None
    style: str = ""
    clip: object = None

    @property
    def is_neutral(self) -> bool:
        return (self.emotion is None or self.emotion.is_neutral) and not self.style and self.clip is None


def layer_curves(body: BodyStyle, n_frames: int, fps: float, bank: StyleBank = None):
    """``(posture [T, P, 3], log_amp [T], log_sharp [T])``: the blend of the
    take's emotion layers per frame (relative to the model's own motion)."""
    bank = bank or load_bank()
    post = np.zeros((n_frames, len(sf.POSTURE), 3))
    la, ls = np.zeros(n_frames), np.zeros(n_frames)
    if body.emotion is not None and not body.emotion.is_neutral:
        w = body.emotion.weights(n_frames, fps)
        for j, name in enumerate(EMOTIONS):
            if not np.any(w[:, j] > 0):
                continue
            p, a, s = bank.emotion(name)
            post += w[:, j, None, None] * p[None]
            la += w[:, j] * a
            ls += w[:, j] * s
    return post, la, ls


def apply_layer(motion: Motion, posture: np.ndarray, log_amp: np.ndarray, log_sharp: np.ndarray) -> Motion:
    """``motion`` (SMPL-X, local rotations) with the layer applied: per frame
    the moving joints' deviation from their slow pose scaled by
    ``exp(log_amp [T])`` (or per moving joint, ``[T, len(MOVING)]``; its
    fast band by ``exp(log_sharp [T])`` more),
    then the posture joints pre-rotated by ``posture [T, P, 3]`` (radians;
    pooled right joints get the mirrored offset). Root and legs unchanged."""
    rot = rotations.make_continuous(rotations.normalize(motion.rotations.copy()), axis=0)
    fps = motion.fps
    ix = sf.moving_index()
    slow, d = sf.deviation(rot[:, ix], fps)
    band = sf.fast_band(d, fps)
    hi = d - gaussian_filter1d(d, sf.SHARP_SECONDS * fps, axis=0, mode="nearest")
    g = np.exp(np.asarray(log_amp, np.float64))
    g = g[:, None, None] if g.ndim == 1 else g[..., None]
    s = np.exp(np.asarray(log_sharp, np.float64))[:, None, None]
    # Softer (s < 1) damps the whole fast part, jitter too; sharper (s > 1)
    # boosts only the stroke band, never the frame-to-frame residue.
    d_new = g * (d - hi) + g * np.minimum(s, 1.0) * (hi - band) + g * s * band
    rot[:, ix] = rotations.mul(slow, rotations.from_axis_angle(d_new))
    n = list(names())
    for k, j in enumerate(sf.POSTURE):
        pairs = [(j, 1.0)] if isinstance(j, str) else [(j[0], 1.0), (j[1], -1.0)]
        for joint, sign in pairs:
            off = posture[:, k] * np.array([1.0, sign, sign])
            a = n.index(joint)
            rot[:, a] = rotations.mul(rotations.from_axis_angle(off), rot[:, a])
    return Motion(motion.skeleton, rotations.make_continuous(rotations.normalize(rot), axis=0),
                  motion.root_positions.copy(), fps,
                  None if motion.translations is None else motion.translations.copy(),
                  list(motion.shape_names), None if motion.shape_weights is None else motion.shape_weights.copy(),
                  motion.name)


def take_statistics(motion: Motion) -> tuple:
    """``(posture [P, 3], log speed, log sharp)`` of a take: its mean pooled
    posture (radians), log mean wrist speed (log m/s) and log fast-band
    share of its motion, as :func:`learn` measures the clips."""
    amp, sharp = sf.band_energies(motion.rotations, motion.fps)
    speed = sf.wrist_speed(motion.world_positions(), motion.fps).mean()
    return (sf.rotvecs(motion.rotations).mean(axis=0), float(np.log(max(speed, 1e-4))),
            float(np.log(np.sqrt(np.mean(sharp ** 2)) / max(np.sqrt(np.mean(amp ** 2)), 1e-9))),
            float(np.log(trunk_share(motion.rotations, motion.fps))))


def trunk_share(rot: np.ndarray, fps: float) -> float:
    """RMS motion of the trunk (spine, neck, head) around its slow pose ÷ that of all moving joints."""
    _, d = sf.deviation(rot[:, sf.moving_index()], fps)
    e = np.sqrt((d ** 2).sum(-1).mean(0))
    return float(np.sqrt(np.mean(e[:5] ** 2)) / max(np.sqrt(np.mean(e ** 2)), 1e-9))


def apply_style(motion: Motion, style: str, bank: StyleBank = None, passes: int = STYLE_PASSES) -> Motion:
    """``motion`` moved into a style's own statistics: its trunk posture
    (spine, neck, head, collars) set to the style's mean, its energy,
    sharpness and the trunk's share of the motion scaled to the style's (within :data:`STYLE_GAIN_RANGE` /
    :data:`SHARP_GAIN_RANGE` over the take); the arms take the style's
    offset relative to "normal" (where the hands are is mostly a clip's
    content, a wave or a bow, not its style). ``passes``: the gains are
    re-measured and corrected (speed is not exactly linear in the gain)."""
    bank = bank or load_bank()
    i = bank.index(style)
    T = motion.num_frames
    trunk = np.array([isinstance(j, str) or j[0] == "left_collar" for j in sf.POSTURE])
    total_a = total_s = total_t = 0.0
    trunk_joints = np.arange(len(sf.MOVING)) < 5
    for k in range(passes):
        post, speed, sharp, share = take_statistics(motion)
        off = np.where(trunk[:, None], bank.abs_posture[i] - post, bank.posture[i] if k == 0 else 0.0)
        da = float(np.clip(total_a + bank.abs_speed[i] - speed, *np.log(STYLE_GAIN_RANGE))) - total_a
        ds = float(np.clip(total_s + bank.abs_sharp[i] - sharp, *np.log(SHARP_GAIN_RANGE))) - total_s
        dt = float(np.clip(total_t + bank.abs_trunk[i] - share, *np.log(STYLE_GAIN_RANGE))) - total_t
        gains = np.full((T, len(sf.MOVING)), da) + np.where(trunk_joints, dt, 0.0)[None]
        motion = apply_layer(motion, np.broadcast_to(off, (T,) + off.shape), gains, np.full(T, ds))
        total_a, total_s, total_t = total_a + da, total_s + ds, total_t + dt
    return motion


def style_motion(motion: Motion, body: BodyStyle, bank: StyleBank = None) -> Motion:
    """``motion`` with ``body``'s style (:func:`apply_style`), then its
    emotion layers on top (the clip's distributions are applied by
    :mod:`.style_clip`); neutral: ``motion`` itself."""
    if body.style:
        motion = apply_style(motion, body.style, bank)
    if body.emotion is None or body.emotion.is_neutral:
        return motion
    post, la, ls = layer_curves(body, motion.num_frames, motion.fps, bank)
    return apply_layer(motion, post, la, ls)


def learn(clips: list) -> StyleBank:
    """Each style's layer from the training clips (:class:`.style_data.StyledClip`):
    per (dataset, content) with both the style and "normal", the posture
    difference of the mean pooled rotation vectors, the log ratio of the
    mean wrist speed (the energy: it is what the amplitude gain scales) and
    of the fast band's share of the motion (sharpness); averaged over the
    contents. Arm offsets are halved and every offset is limited to
    :data:`MAX_OFFSET_DEG` (the clips' arm postures are partly their
    content: a wave holds the hand up), the gains to :data:`STYLE_GAIN_RANGE`.
    "normal" is zero."""
    from .dataset import positions

    fps = 30.0
    groups = {}
    for c in clips:
        if c.split != "train":
            continue
        amp, sharp = sf.band_energies(c.rot, fps)
        speed = sf.wrist_speed(positions(c.rot, c.root), fps).mean()
        groups.setdefault((c.dataset, c.content, c.style), []).append(
            (sf.rotvecs(c.rot).mean(axis=0), speed, np.sqrt(np.mean(sharp ** 2)) / np.sqrt(np.mean(amp ** 2)),
             trunk_share(c.rot, fps)))
    stats = {k: (np.mean([v[0] for v in vs], axis=0), np.log(np.mean([v[1] for v in vs])),
                 np.log(np.mean([v[2] for v in vs])), np.log(np.mean([v[3] for v in vs])))
             for k, vs in groups.items()}
    styles = tuple(s for s in GESTURE_STYLES if any(k[2] == s for k in stats))
    P = np.zeros((len(styles), len(sf.POSTURE), 3))
    A, S = np.zeros(len(styles)), np.zeros(len(styles))
    arm = np.array([0.5 if isinstance(j, tuple) and j[0] != "left_collar" else 1.0 for j in sf.POSTURE])
    for i, s in enumerate(styles):
        diffs = [tuple(a - b for a, b in zip(stats[k][:3], stats[(k[0], k[1], "normal")][:3]))
                 for k in stats if k[2] == s and (k[0], k[1], "normal") in stats]
        if s == "normal" or not diffs:
            continue
        p = np.mean([d[0] for d in diffs], axis=0) * arm[:, None]
        norm = np.linalg.norm(p, axis=-1, keepdims=True)
        P[i] = p * np.minimum(1.0, np.radians(MAX_OFFSET_DEG) / np.maximum(norm, 1e-9))
        A[i] = np.clip(np.mean([d[1] for d in diffs]), *np.log(STYLE_GAIN_RANGE))
        S[i] = np.clip(np.mean([d[2] for d in diffs]), *np.log(SHARP_GAIN_RANGE))
    # A style's own statistics: the mean over its clips (each clip once, as
    # the classifier weighs them; a clip's arm content moves its collars).
    clip_stats = {s: [v for k, vs in groups.items() if k[2] == s for v in vs] for s in styles}
    ab = [np.array([np.mean([v[0] for v in clip_stats[s]], axis=0) for s in styles])]
    ab += [np.array([np.log(np.mean([v[m] for v in clip_stats[s]])) for s in styles]) for m in (1, 2, 3)]
    n = sum(c.split == "train" for c in clips)
    return StyleBank(styles, P, A, S, f"Bandai Namco d1+d2 styled clips, training split ({n} clips)", *ab)


__all__ = ["BodyStyle", "DESIGNED", "StyleBank", "StyleError", "apply_layer", "check_style", "layer_curves",
           "learn", "load_bank", "style_motion"]
