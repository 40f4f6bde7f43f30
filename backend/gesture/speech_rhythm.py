"""The body settles where the speech's onsets thin out and works where they come thick.

Why. The gesture model's decoder takes beat pulses but its speed minima (the
motion's beats, as beat consistency finds them) land on them no more often
than at unrelated timing: the rhythm comes from its latent code
(``bench/results/gesture_alignment.md``). A speaker's hands are busiest
while syllables come thick and settle while they thin out or pause; what
makes beats follow a voice, any voice, is *where* the motion has them.
Measured on the validation voices, the motion's own beats with those in the
sparsest quarter of the speech removed follow the speech well above the
real capture (``bench/beat_rhythm.py --ceiling``).

How. The speech's onset density ``d(t)`` is the count of onsets within a
Gaussian of ``density_s`` seconds (:attr:`SpeechFeatures.onset_times`, the
onsets beat consistency is scored against). Each joint's local rotation and
the root's position are split into three bands: the slow drift (a Gaussian
of ``slow_s``), the finest detail (under a Gaussian of ``fine_s``) and the
gesture band between them. A weight that is ``busy_gain`` where ``d`` is at
or above its ``busy`` quantile over the speech and falls (smoothstep) to
``settled`` at its ``sparse`` quantile and below (silence is always
sparse), smoothed over ``fade_s``, scales the gesture band; the fine detail
settles with it but is never raised. The slow drift keeps a settled body
shifting and breathing instead of freezing; the energy moved from the
sparse stretches to the busy ones keeps the take's mean hand speed; the
fine detail never raised keeps the arms' largest accelerations; nothing is
retimed, so the motion stays on its speech.

Runs on the decoded motion before the feet are planted (the root's sway is
part of every upper-body joint's speed); the steps are planned on the take
before it (:func:`.standing.plant_feet` ``steps_from``), so a livelier
pelvis is not read as a drift to step for. Units: seconds, radians; shapes
``[frames, joints, 4]``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .. import rotations
from ..filters import gaussian_filter1d
from ..foot_lock import smoothstep
from ..motion import Motion
from .style_features import slow_pose


#: Joints whose bands are computed together (bounds the temporaries).
JOINTS_AT_A_TIME = 4


@dataclass(frozen=True)
class RhythmConfig:
    """How the body settles with the speech (module notes). Chosen on the
    validation voices only (``bench/beat_rhythm.py --grid``)."""

    #: σ (s) of each onset's share of the density.
    density_s: float = 0.3
    #: Density quantiles (over the speech, see ``quantiles_over``): at or
    #: below ``sparse`` fully settled, at or above ``busy`` fully raised.
    sparse: float = 0.3
    busy: float = 0.5
    #: The gesture band's scale where fully settled (0..1) ...
    settled: float = 0.45
    #: ... and where the speech is busy (1: as generated): the energy taken
    #: from the sparse stretches goes to the busy ones, so the take's mean
    #: hand speed, its beat consistency and its FD stay about as they were.
    busy_gain: float = 1.4
    #: The largest weight the root takes — the pelvis's position and its
    #: rotation, which carry the legs (its gesture band settles with the
    #: rest but is raised at most this much: a livelier pelvis makes the
    #: planted feet step and slide more).
    root_max: float = 1.4
    root_joint: str = "pelvis"
    #: σ (s) of the slow part that is kept whole.
    slow_s: float = 1.0
    #: σ (s) of the finest detail, which settles with the rest but is never
    #: raised: raising it would raise the arms' largest accelerations and
    #: sharpen the take against its style.
    fine_s: float = 0.13
    #: Raise the fine detail with the gesture band too (True only to measure
    #: what not raising it is worth).
    raise_detail: bool = False
    #: σ (s) of the weight's smoothing: how gently the body settles and wakes.
    fade_s: float = 0.15
    #: Joints left as generated: the legs (their feet are planted by leg IK
    #: afterwards; a livelier leg drifts into more steps).
    leg_joints: tuple = ("left_hip", "right_hip", "left_knee", "right_knee", "left_ankle", "right_ankle",
                         "left_foot", "right_foot")
    #: Frames the quantiles are taken over: "speech" (where the voice is
    #: active; silence is then always sparse) or "take" (every frame).
    quantiles_over: str = "speech"


def onset_density(onset_times: np.ndarray, n_frames: int, fps: float, sigma_s: float) -> np.ndarray:
    """``[n_frames]``: onsets (seconds, each put on its nearest frame k / fps;
    ones outside the take or not finite dropped) spread as unit-height
    Gaussians of ``sigma_s`` seconds and summed."""
    t = np.asarray(onset_times, np.float64).reshape(-1)
    t = t[np.isfinite(t) & (t >= -0.5 / fps) & (t < (n_frames - 0.5) / fps)]
    k = np.round(t * fps).astype(np.int64)
    counts = np.bincount(k, minlength=n_frames).astype(np.float64)
    sigma = sigma_s * fps
    return gaussian_filter1d(counts, sigma, mode="constant") * (np.sqrt(2.0 * np.pi) * sigma)


def activity_weight(density: np.ndarray, fps: float, config: RhythmConfig, talking: np.ndarray = None) -> np.ndarray:
    """``[T]`` in ``settled .. busy_gain``: how much of the fast motion each frame
    keeps. With ``quantiles_over="speech"`` the quantiles are the speech's
    (frames where ``talking [T]``, when given and a second or more long), so
    a take's leading and trailing silence does not use up its sparsest share."""
    ref = density
    if talking is not None and config.quantiles_over == "speech":
        talking = np.asarray(talking, bool)[:len(density)]
        if talking.sum() >= fps:
            ref = density[:len(talking)][talking]
    a, b = np.quantile(ref, config.sparse), np.quantile(ref, config.busy)
    w = config.settled + (config.busy_gain - config.settled) * smoothstep((density - a) / max(b - a, 1e-9))
    return gaussian_filter1d(w, config.fade_s * fps, mode="nearest")


def _scaled_gesture_band(q: np.ndarray, w: np.ndarray, fps: float, config: RhythmConfig) -> np.ndarray:
    """Rotations ``q [T, J, 4]`` with their motion faster than a Gaussian of
    ``config.slow_s`` raised to the power ``w [T]``, except that the finest
    detail (faster than a Gaussian of ``fine_s``) takes ``min(w, 1)``: it
    settles with the rest but is never raised (``raise_detail``: ``w`` too)."""
    q = rotations.make_continuous(q, axis=0)
    smooth = slow_pose(q, fps, config.fine_s) if config.fine_s > 0 else q
    base = slow_pose(q, fps, config.slow_s)
    ident = np.zeros_like(q)
    ident[..., 0] = 1.0

    def scaled(x, weight):
        return rotations.slerp(ident, x, np.broadcast_to(weight[:, None], x.shape[:2]))

    band = scaled(rotations.mul(rotations.inv(base), smooth), w)
    detail = scaled(rotations.mul(rotations.inv(smooth), q), w if config.raise_detail else np.minimum(w, 1.0))
    return rotations.mul(rotations.mul(base, band), detail)


def settle_with_speech(motion: Motion, onset_times: np.ndarray, config: RhythmConfig = RhythmConfig(), *,
                       talking: np.ndarray = None) -> Motion:
    """``motion`` (any skeleton, ``fps`` frames per second, frame k at k / fps
    seconds of the speech) settled where ``onset_times`` (seconds) are sparse;
    ``talking [T]`` (bool, voice activity per frame) picks the frames the
    density's quantiles are taken over. Unchanged when there are no onsets
    (silence gives nothing to follow)."""
    n = motion.num_frames
    if n < 3 or len(np.asarray(onset_times).reshape(-1)) == 0:
        return motion
    fps = motion.fps
    w = activity_weight(onset_density(onset_times, n, fps, config.density_s), fps, config, talking)
    names = motion.skeleton.names
    moved = [j for j, name in enumerate(names) if name not in config.leg_joints]
    rot = motion.rotations.copy()
    # A few joints at a time: each band is a take-long temporary, and a
    # 30-minute take's whole skeleton would hold ~100 MB per array.
    w_root = np.minimum(w, config.root_max)
    for a in range(0, len(moved), JOINTS_AT_A_TIME):
        g = [j for j in moved[a:a + JOINTS_AT_A_TIME] if names[j] != config.root_joint]
        rot[:, g] = _scaled_gesture_band(motion.rotations[:, g], w, fps, config)
    if config.root_joint in names:
        j = names.index(config.root_joint)
        rot[:, [j]] = _scaled_gesture_band(motion.rotations[:, [j]], w_root, fps, config)
    root = motion.root_positions
    base = gaussian_filter1d(root, config.slow_s * fps, axis=0, mode="nearest")
    smooth = gaussian_filter1d(root, config.fine_s * fps, axis=0, mode="nearest") if config.fine_s > 0 else root
    w_detail = w if config.raise_detail else np.minimum(w, 1.0)
    root = base + w_root[:, None] * (smooth - base) + w_detail[:, None] * (root - smooth)
    return replace(motion, rotations=rot, root_positions=root, shape_names=list(motion.shape_names))
