"""Beat strokes ("baton" gestures): the hands and head mark the speech's accents.

The gesture model is conditioned on beat pulses at the speech's strongest
onsets, but its motion's speed minima land on them no more often than at
unrelated timing (``bench/results/gesture_alignment.md``): the rhythm comes
from its latent code. This layer adds what animators and procedural
co-speech systems add for that: at each accent the wrists make a short
stroke whose extreme falls ON the beat frame (the hand decelerates into it
and releases), and the head (a spine share) gives a small nod on the same
beats. Before the stroke the body's own motion *settles* into each beat: a
local retiming (:func:`settle_time`) slows every joint into the accent and
catches up around it, net zero; :func:`snap_time` (off by default) instead
plays the body's own nearest speed minimum at the beat. All of it sits on top
of the model's motion, so its own gestures stay.

Status: ``rigmind gesture`` does NOT apply this layer. On held-out voices it
lowered the alignment gain (mean 1.046 → 1.020) and raised the largest arm
acceleration; no setting tried on the validation voices did better than the
layer off (``bench/bench_beat_alignment.py --stages/--stroke-grid/--ceiling``,
``bench/results/gesture_alignment.md``). To try it: one line after
``lift_hands`` in :func:`.generate.gesture_from_features`,
``res.motion = add_beat_strokes(res.motion, pulse_peaks(res.pulses), stress, res.speech)``.

The stroke of a beat at ``b`` (s) with amplitude ``a`` (m) is a displacement
along the stroke direction (down, a little forward) ``a · exp(-(t-b)² / 2τ²)``
— ``τ`` = ``rise_seconds`` before the beat and ``release_seconds`` after it,
so the hand swings into the accent faster than it releases — plus a small
drift along the hips' facing that passes the beat at ``drift_speed``: the
wrist's speed has its minimum at the beat (the down component stops there)
but not zero, so the minimum counts as a motion beat (BC gates minima below
0.3 of the joint's mean speed, :mod:`.metrics`). The whole displacement is
made mean-neutral over ``neutral_seconds`` (its slow mean is removed), so the
hands' height and forward distributions barely move. The wrists reach their
new places by the arm IK of :mod:`.gesture_space` (only shoulder and elbow
rotations change) and are kept out of the torso as there.

Amplitude follows the stress envelope (0..1, :func:`.gesture_space.stress_envelope`)
at the beat, so calm speech strokes less; no beats, no strokes (in silence
the controls place none).

Units: metres, seconds, degrees where named; Blender Z up; SMPL-X joint names.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rigmind.backend import rotations
from rigmind.backend.filters import gaussian_filter1d
from rigmind.backend.gesture.gesture_space import ARMS, _clear_of_torso, reach_wrists
from rigmind.backend.gesture.viewer_metrics import facing
from rigmind.backend.motion import Motion


@dataclass(frozen=True)
class BeatStrokeConfig:
    """How the beat strokes look; see the module notes."""

    #: Least time between two strokes (s): a beat closer to the previous
    #: stroke than this is left to the model (BC counts at most one speed
    #: minimum per ±7 frames, so denser strokes blur into each other).
    min_gap_seconds: float = 0.0
    #: Largest wrist stroke (m) at full stress.
    amplitude: float = 0.035
    #: Share of ``amplitude`` at zero stress (calm speech still marks its beats a little).
    calm_share: float = 0.35
    #: Stroke direction: metres forward (hips' facing) per metre down.
    forward_per_down: float = 0.3
    #: Width of the swing into the beat (s, Gaussian σ before the beat).
    rise_seconds: float = 0.07
    #: Width of the release after the beat (s, Gaussian σ after it).
    release_seconds: float = 0.1
    #: Speed of the forward drift through the beat (m/s), the floor of the
    #: wrist's speed minimum there.
    drift_speed: float = 0.08
    #: Width of the drift's excursion (s, σ).
    drift_seconds: float = 0.16
    #: The stroke's slow mean over this many seconds (σ) is removed.
    neutral_seconds: float = 1.0
    #: Head pitch (degrees, down) at a full stroke.
    nod_degrees: float = 1.5
    #: Share of the nod taken by the upper spine (spine3).
    spine_share: float = 0.4
    #: How much the body's own motion slows into each beat: its playback rate
    #: dips to ``1 - settle_depth`` at the beat (0: no retiming).
    settle_depth: float = 0.85
    #: Width of that slow-down (s, σ).
    settle_seconds: float = 0.08
    #: Width of the catch-up around it (s, σ; the rate is a little above 1
    #: there, so each beat's retiming sums to zero and the motion stays in
    #: time with the speech).
    catchup_seconds: float = 0.3
    #: Snap instead of settle: the body's own nearest upper-body speed
    #: minimum within ``snap_seconds`` of a beat is moved onto it by a local
    #: retiming (0: off).
    snap_seconds: float = 0.0
    #: Width (s, σ) over which a snap's time shift fades out.
    snap_width_seconds: float = 0.15
    #: Least horizontal distance of a moved wrist from the pelvis → neck axis (m),
    #: as :class:`.gesture_space.GestureSpaceConfig`.
    torso_clearance: float = 0.14


def pulse_peaks(pulses: np.ndarray) -> np.ndarray:
    """Beat frames ``[K]`` of a pulse track ``[T]`` (:func:`.controls.pulses`):
    its full-height local maxima."""
    p = np.asarray(pulses, np.float64)
    x = np.r_[-1.0, p, -1.0]
    return np.nonzero((x[1:-1] >= x[:-2]) & (x[1:-1] > x[2:]) & (p > 0.9))[0]


def _thin(beats: np.ndarray, gap: float) -> np.ndarray:
    """Sorted beat frames with each kept beat at least ``gap`` frames after the previous kept one."""
    kept = []
    for b in beats:
        if not kept or b - kept[-1] >= gap:
            kept.append(b)
    return np.asarray(kept, dtype=int)


def stroke_profile(beats: np.ndarray, amps: np.ndarray, n: int, fps: float,
                   config: BeatStrokeConfig = None) -> tuple:
    """``(down [n], drift [n])`` in metres: the stroke displacement along its
    direction (peaks of height ``amps [K]`` at frames ``beats [K]``) and the
    forward drift through each beat, both before the mean is removed."""
    c = config or BeatStrokeConfig()
    t = np.arange(n)[:, None] / fps
    b = np.asarray(beats, np.float64)[None, :] / fps
    a = np.asarray(amps, np.float64)[None, :]
    if b.size == 0:
        return np.zeros(n), np.zeros(n)
    d = t - b
    tau = np.where(d < 0, c.rise_seconds, c.release_seconds)
    down = (a * np.exp(-0.5 * (d / tau) ** 2)).sum(axis=1)
    # d/dt [g·d·exp(-d²/2σ²)] = g at d = 0: the drift passes the beat at speed g.
    rel = a / max(c.amplitude, 1e-9)
    drift = (c.drift_speed * rel * d * np.exp(-0.5 * (d / c.drift_seconds) ** 2)).sum(axis=1)
    return down, drift


def settle_time(beats: np.ndarray, weights: np.ndarray, n: int, fps: float,
                config: BeatStrokeConfig = None) -> np.ndarray:
    """Source time ``[n]`` (frames, increasing, 0..n-1) for each output frame:
    the playback rate dips to ``1 - settle_depth·weight`` at each of ``beats
    [K]`` (frames) and is a little above 1 around it (Gaussians of widths
    ``settle_seconds`` and ``catchup_seconds``, equal areas), so each beat
    moves the motion by at most ~``settle_depth·settle_seconds`` and none
    accumulates."""
    c = config or BeatStrokeConfig()
    t = np.arange(n)[:, None] / fps
    if len(beats) == 0 or c.settle_depth <= 0:
        return np.arange(n, dtype=np.float64)
    u = t - np.asarray(beats, np.float64)[None, :] / fps
    s1, s2 = c.settle_seconds, c.catchup_seconds
    dip = np.exp(-0.5 * (u / s1) ** 2) - (s1 / s2) * np.exp(-0.5 * (u / s2) ** 2)
    rate = 1.0 - c.settle_depth * (dip * np.asarray(weights, np.float64)[None, :]).sum(axis=1) / (1.0 - s1 / s2)
    rate = np.clip(rate, 0.1, 3.0)
    phi = np.concatenate([[0.0], np.cumsum(0.5 * (rate[1:] + rate[:-1]))])
    return np.clip(phi, 0.0, n - 1.0)


def snap_time(beats: np.ndarray, own_minima: np.ndarray, n: int, fps: float,
              config: BeatStrokeConfig = None) -> np.ndarray:
    """Source time ``[n]`` (frames, increasing) that plays the body's own
    speed minimum nearest each beat (``own_minima [M]`` frames, within
    ``snap_seconds``) at the beat: shifts blended with Gaussian weights of
    width ``snap_width_seconds``, fading to none away from the beats."""
    c = config or BeatStrokeConfig()
    t = np.arange(n, dtype=np.float64)
    mins = np.sort(np.asarray(own_minima, np.float64))
    if len(beats) == 0 or len(mins) == 0 or c.snap_seconds <= 0:
        return t
    b = np.asarray(beats, np.float64)
    i = np.clip(np.searchsorted(mins, b), 1, max(len(mins) - 1, 1))
    near = np.where(np.abs(mins[i - 1] - b) <= np.abs(mins[np.minimum(i, len(mins) - 1)] - b),
                    mins[i - 1], mins[np.minimum(i, len(mins) - 1)])
    d = near - b
    ok = np.abs(d) <= c.snap_seconds * fps
    b, d = b[ok], d[ok]
    if len(b) == 0:
        return t
    w = np.exp(-0.5 * ((t[:, None] - b[None, :]) / (c.snap_width_seconds * fps)) ** 2)
    shift = (w * d[None, :]).sum(axis=1) / np.maximum(w.sum(axis=1), 1.0)
    phi = t + shift
    # Keep time running forwards (a steep blend between two opposite shifts).
    rate = np.clip(np.diff(phi), 0.2, 5.0)
    phi = np.concatenate([[phi[0]], phi[0] + np.cumsum(rate)])
    return np.clip(phi, 0.0, n - 1.0)


def retime(motion: Motion, source_frames: np.ndarray) -> Motion:
    """``motion`` sampled at fractional frames ``source_frames [T]``: rotations
    slerped, root positions (and translations, shape weights) interpolated."""
    f = np.asarray(source_frames, np.float64)
    i0 = np.clip(np.floor(f).astype(int), 0, max(motion.num_frames - 2, 0))
    a = np.clip(f - i0, 0.0, 1.0)
    i1 = np.minimum(i0 + 1, motion.num_frames - 1)
    lerp = lambda x: None if x is None else (1 - a.reshape((-1,) + (1,) * (x.ndim - 1))) * x[i0] + \
        a.reshape((-1,) + (1,) * (x.ndim - 1)) * x[i1]  # noqa: E731
    q = rotations.slerp(motion.rotations[i0], motion.rotations[i1],
                        np.broadcast_to(a[:, None], (len(f), motion.rotations.shape[1])))
    return Motion(motion.skeleton, rotations.make_continuous(q, axis=0), lerp(motion.root_positions), motion.fps,
                  lerp(motion.translations), list(motion.shape_names), lerp(motion.shape_weights), motion.name)


def _nod(motion: Motion, world_rot: np.ndarray, pos: np.ndarray, angle: np.ndarray, right: np.ndarray,
         config: BeatStrokeConfig) -> np.ndarray:
    """Local rotations ``[T, J, 4]`` with the head (and spine3's share)
    pitched forward by ``angle [T]`` radians about the body's ``right [T, 3]`` axis."""
    names = list(motion.skeleton.names)
    parents = motion.skeleton.parents
    rot = motion.rotations.copy()
    for joint, share in (("spine3", config.spine_share), ("head", 1.0 - config.spine_share)):
        j = names.index(joint)
        # About right = facing × up a positive angle turns the face up: the nod is negative.
        dq = rotations.from_axis_angle(right * (-share * angle)[:, None])
        pw = world_rot[:, parents[j]]
        rot[:, j] = rotations.mul(rotations.mul(rotations.inv(pw), rotations.mul(dq, pw)), rot[:, j])
    return rot


def add_beat_strokes(motion: Motion, beats_frames, stress: np.ndarray, speech: np.ndarray,
                     config: BeatStrokeConfig = None) -> Motion:
    """``motion`` (SMPL-X, world space, Z up, ``motion.fps``) with a beat
    stroke of both wrists and a head nod at each of ``beats_frames [K]``
    (frame indices). ``stress [T]`` 0..1 scales each stroke (see
    :class:`BeatStrokeConfig`); ``speech [T]`` (voice activity 0/1) gates
    them: a beat outside speech gets none. No beats: ``motion`` itself."""
    c = config or BeatStrokeConfig()
    n = motion.num_frames
    beats = np.asarray(beats_frames, dtype=int).reshape(-1)
    beats = beats[(beats >= 0) & (beats < n)]
    if len(beats):
        talk = np.asarray(speech, np.float64)[beats] > 0.5
        beats = beats[talk]
    if len(beats) == 0:
        return motion
    beats = _thin(np.sort(beats), c.min_gap_seconds * motion.fps)
    s = np.clip(np.asarray(stress, np.float64)[beats], 0.0, 1.0)
    amps = c.amplitude * (c.calm_share + (1.0 - c.calm_share) * s)
    # The body slows into each accent (its own gesture settles on the beat),
    # then the stroke and nod mark it.
    if c.snap_seconds > 0:
        from rigmind.backend.gesture.controls import relative_extrema, upper_body_speed

        own = relative_extrema(gaussian_filter1d(upper_body_speed(motion.world_positions(), motion.fps), 1.0),
                               np.less, order=3)
        motion = retime(motion, snap_time(beats, own, n, motion.fps, c))
    motion = retime(motion, settle_time(beats, amps / c.amplitude, n, motion.fps, c))
    down, drift = stroke_profile(beats, amps, n, motion.fps, c)
    sigma = c.neutral_seconds * motion.fps
    down = down - gaussian_filter1d(down, sigma, mode="nearest")
    drift = drift - gaussian_filter1d(drift, sigma, mode="nearest")
    names = list(motion.skeleton.names)
    world_rot, pos = motion.world()
    fwd = facing(pos[:, names.index("left_hip")], pos[:, names.index("right_hip")])
    up = np.array([0.0, 0.0, 1.0])
    right = np.cross(fwd, up)
    right /= np.maximum(np.linalg.norm(right, axis=-1, keepdims=True), 1e-9)
    angle = np.deg2rad(c.nod_degrees) * down / max(c.amplitude, 1e-9)
    nodded = Motion(motion.skeleton, _nod(motion, world_rot, pos, angle, right, c), motion.root_positions.copy(),
                    motion.fps, None if motion.translations is None else motion.translations.copy(),
                    list(motion.shape_names), None if motion.shape_weights is None else motion.shape_weights.copy(),
                    motion.name)
    disp = -down[:, None] * up + (c.forward_per_down * down + drift)[:, None] * fwd
    w_rot2, pos2 = nodded.world()
    pelvis, neck = pos2[:, names.index("pelvis")], pos2[:, names.index("neck")]
    goals = np.stack([_clear_of_torso(pos[:, names.index(wr)] + disp, pelvis, neck, c.torso_clearance)
                      for _, _, wr in ARMS], axis=1)
    return reach_wrists(nodded, goals, w_rot2, pos2, fwd)
