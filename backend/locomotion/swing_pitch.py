"""The swing foot's pitch: toe-off plantarflexion, late-swing dorsiflexion
(heel strike) and the roll to flat after it, as people walk.

A network trained on mocap regresses toward the mean swing: its foot lands
flat (about 0 degrees relative to stance at 0.8-0.9 of the swing, where the
Bandai walks land heel first with the toes up by about 19 degrees). The
clean-up (:func:`~.cleanup.pin_feet`, ``PinConfig.swing_pitch``) gives the
swinging foot a target pitch profile instead, derived from the training
mocap by :func:`flight_profiles` (``bench/locomotion_swing_pitch.py`` writes
``presets/locomotion_swing_pitch.json``; never hand-drawn).

- A **flight** (:func:`flights`) runs from toe-off (the end of a toe contact
  or lock) to heel strike (the start of the next ankle contact or lock), the
  ankle free in between and no toe contact starting before it.
- Its **phase** goes from 0 at the toe's last planted frame to 1 at the last
  frame before the ankle is planted.
- **Pitch**: the angle of ankle -> toe below the horizontal (radians, +
  toe down), relative to the stance pitch (the median over the frames where
  both the ankle and the toe are planted).
- A flight is a **run flight** when, somewhere in it, no foot joint is
  planted at all (a flight phase of the body); runs have their own profile.

Units: radians, seconds, metres; Blender Z up. Arrays ``[F, ...]``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import paths
from ..foot_contacts import mask_of_runs
from ..foot_lock import ramp, smoothstep

#: Samples of a profile over the phase 0..1 (uniform).
PROFILE_SAMPLES = 21
#: Flights shorter than this (frames) are left alone (a shuffle, a flicker).
MIN_FLIGHT = 4
#: Each style's (walk, run) profiles from its own training clips, in degrees
#: (written by ``bench/locomotion_swing_pitch.py``; read by :func:`style_profiles`).
PROFILES_FILE = paths.PRESETS_DIR / "locomotion_swing_pitch.json"
_PROFILES = None


@dataclass(frozen=True)
class PitchProfile:
    """One gait's swing pitch: ``pitch`` (rad, relative to stance, + = toe
    down) at uniform phases 0..1 of the flight; ``apex`` and ``low``: the
    median phases where the ankle is highest and back down
    (:func:`anchor_phases`). The mocap's flights are lined up on both
    anchors before their median is taken (:func:`flight_profiles`; without
    it the heel strikes of flights of different timing blur into each
    other). :func:`pitch_swing` puts the profile's apex on the flight's
    own: the network's swing peaks later than the mocap's (0.4-0.5 of the
    flight against 0.3-0.35), and a foot turned up for the heel strike
    while still high would clear more than the mocap's."""

    pitch: tuple
    apex: float
    low: float

    def at(self, u, anchors) -> np.ndarray:
        """Pitch (rad) at phases ``u`` of a flight whose ankle passes its
        ``anchors`` = (apex, low) phases (:func:`anchor_phases`): the
        profile's anchors moved there, linearly in between."""
        u = np.asarray(u, dtype=np.float64)
        warped = np.interp(u, [0.0, *anchors, 1.0], [0.0, self.apex, self.low, 1.0])
        return np.interp(warped, np.linspace(0.0, 1.0, len(self.pitch)), np.asarray(self.pitch, dtype=np.float64))


def style_profiles(style) -> tuple:
    """``(walk, run)`` :class:`PitchProfile` of ``style`` from
    :data:`PROFILES_FILE` (a name, or a ``{name: weight}`` blend: its
    heaviest style's; the normal style's for a style without clips; None
    for a gait without flights)."""
    global _PROFILES
    if _PROFILES is None:
        import json

        _PROFILES = json.loads(PROFILES_FILE.read_text(encoding="utf-8"))["styles"]
    if isinstance(style, dict):  # a {name: weight} blend: its dominant style's swing
        style = max(style, key=style.get)
    entry = _PROFILES.get(style, _PROFILES["normal"])
    return tuple(None if entry[g]["pitch"] is None else
                 PitchProfile(tuple(np.radians(entry[g]["pitch"]).tolist()), float(entry[g]["apex"]),
                              float(entry[g]["low"]))
                 for g in ("walk", "run"))


def anchor_phases(z, te: int, hs: int, low_fraction: float = 0.25, lo: float = 0.15, hi: float = 0.9) -> tuple:
    """``(apex, low)`` phases of a flight's frames ``te - 1 .. hs - 1`` of
    an ankle at heights ``z [F]``: where it is highest, and the first frame
    after that where it is back down within ``low_fraction`` of the apex's
    height over its height at heel strike (the descent done). Kept in
    ``lo <= apex < low <= hi``."""
    zz = z[te - 1:hs]
    ph = flight_phase(te, hs)
    i = int(np.argmax(zz))
    down = np.nonzero(zz[i:] - zz[-1] <= low_fraction * (zz[i] - zz[-1]))[0]
    apex = float(np.clip(ph[i], lo, hi - 0.05))
    low = float(ph[i + down[0]]) if len(down) else 1.0
    return apex, float(np.clip(low, apex + 0.05, hi))


def foot_pitch(ankle, toe) -> np.ndarray:
    """``[F]`` angle (rad) of ankle -> toe below the horizontal (+ = toe down)."""
    d = np.asarray(toe, dtype=np.float64) - np.asarray(ankle, dtype=np.float64)
    return np.arctan2(-d[:, 2], np.linalg.norm(d[:, :2], axis=1))


def flights(ankle_runs, toe_runs, max_frames: int = None) -> list:
    """``[(toe_off, heel_strike)]``: for each toe contact run ``(s, e)`` (stop
    exclusive; ``*_runs``: ``[(start, stop, ...)]``), ``toe_off = e`` (first
    free frame) and ``heel_strike`` the start of the next ankle run, when no
    ankle run covers any frame in between and no toe run starts there (a toe
    landing first is left alone), and the flight lasts at least
    :data:`MIN_FLIGHT` (at most ``max_frames``) frames."""
    a_starts = np.array([r[0] for r in ankle_runs], dtype=np.int64)
    a_ends = np.array([r[1] for r in ankle_runs], dtype=np.int64)
    t_starts = np.array([r[0] for r in toe_runs], dtype=np.int64)
    if all(np.all(np.diff(x) >= 0) for x in (a_starts, a_ends, t_starts)):
        return _ordered_flights(a_starts, a_ends, t_starts, [r[1] for r in toe_runs], max_frames)
    out = []
    for _, te, *_ in toe_runs:
        later = a_starts[a_starts >= te]
        if not len(later):
            continue
        hs = int(later[0])
        if any(s < hs and e > te for s, e, *_ in ankle_runs):
            continue
        if any(te <= s < hs for s, *_ in toe_runs):
            continue
        n = hs - te
        if n < MIN_FLIGHT or (max_frames is not None and n > max_frames):
            continue
        out.append((int(te), hs))
    return out


def _ordered_flights(a_starts, a_ends, t_starts, t_ends, max_frames) -> list:
    """:func:`flights` for runs in time order (starts and stops ascending,
    as ``foot_contacts.runs`` gives them): each toe run's tests by binary
    search, not by scanning every run (that was quadratic in the take's
    steps). The same flights."""
    out = []
    for te in t_ends:
        k = int(np.searchsorted(a_starts, te, side="left"))
        if k == len(a_starts):
            continue
        hs = int(a_starts[k])
        # An ankle run over (te, hs): among those starting before hs, the last ends latest.
        before = int(np.searchsorted(a_starts, hs, side="left"))
        if before > 0 and a_ends[before - 1] > te:
            continue
        if np.searchsorted(t_starts, hs, side="left") > np.searchsorted(t_starts, te, side="left"):
            continue
        n = hs - te
        if n < MIN_FLIGHT or (max_frames is not None and n > max_frames):
            continue
        out.append((int(te), hs))
    return out


def flight_phase(te: int, hs: int) -> np.ndarray:
    """Phase ``[hs - te + 1]`` of frames ``te - 1 .. hs - 1`` (0 at the toe's
    last planted frame, 1 at the last frame before heel strike)."""
    return np.linspace(0.0, 1.0, hs - te + 1)


def airborne(contacts) -> np.ndarray:
    """``[F]`` bool: no foot joint planted (``contacts [F, K]``, > 0.5)."""
    return ~np.any(np.asarray(contacts) > 0.5, axis=1)


def stance_pitch(pitch, ankle_mask, toe_mask) -> float:
    """Median ``pitch`` (rad) over the frames where both joints are planted
    (all frames when there are none)."""
    both = np.asarray(ankle_mask, bool) & np.asarray(toe_mask, bool)
    return float(np.median(pitch[both] if both.any() else pitch))


def flight_rows(pitch, ankle_z, ankle_runs, toe_runs, flat: float, air, samples: int = PROFILE_SAMPLES):
    """``(walk rows [N, samples + 2], run rows [M, samples + 2])``: per
    flight (:func:`flights`), ``pitch - flat`` (rad) resampled at uniform
    phases, then the ankle's apex and low phases (``ankle_z [F]``,
    :func:`anchor_phases`); split by whether the body is ``air``-borne (``[F]``
    bool) in the flight."""
    walk, run = [], []
    for te, hs in flights(ankle_runs, toe_runs):
        row = np.interp(np.linspace(0.0, 1.0, samples), flight_phase(te, hs), pitch[te - 1:hs] - flat)
        row = np.append(row, anchor_phases(ankle_z, te, hs))
        (run if air[te:hs].any() else walk).append(row)
    empty = np.zeros((0, samples + 2))
    return (np.array(walk) if walk else empty), (np.array(run) if run else empty)


def flight_profiles(rows_walk, rows_run) -> dict:
    """``{"walk": PitchProfile, "run": PitchProfile}``: per gait, each
    flight's pitch moved to the median apex phase, then the median by phase
    (None for a gait without rows)."""
    out = {}
    for g, rows in (("walk", rows_walk), ("run", rows_run)):
        if not len(rows):
            out[g] = None
            continue
        apex, low = (float(v) for v in np.median(rows[:, -2:], axis=0))
        grid = np.linspace(0.0, 1.0, rows.shape[1] - 2)
        # Each row's own anchors moved onto the median ones before the median by phase.
        aligned = [np.interp(np.interp(grid, [0.0, apex, low, 1.0], [0.0, r[-2], r[-1], 1.0]), grid, r[:-2])
                   for r in rows]
        out[g] = PitchProfile(tuple(np.median(aligned, axis=0).tolist()), apex, low)
    return out


@dataclass(frozen=True)
class PitchTiming:
    """How :func:`pitch_swing` turns the foot over a flight. Seconds, metres.

    - ``ease_seconds``: the ease from the foot's own pitch into the profile
      after toe-off; ``roll_seconds``: the roll to flat after heel strike.
    - ``land_phase``: the flight phase (0..1) until which the foot turns
      about the toe; from there more and more about the ankle.
    - ``knee``: the floor lift's smoothing (m).
    - ``smooth_seconds``: the Gaussian smoothing of the pitch change.
    """

    ease_seconds: float = 0.2
    roll_seconds: float = 0.1
    land_phase: float = 0.3
    knee: float = 0.01
    smooth_seconds: float = 0.033


def pitch_swing(target, toe_target, ankle_runs, toe_runs, air, profiles, floors, fps: float,
                timing: PitchTiming = PitchTiming()):
    """``(ankle target [F, 3], toe target [F, 3])`` with the foot's pitch set
    to ``profiles`` over each flight (see the module docstring); the eases,
    the roll, the pivot and the smoothing below are ``timing``'s
    (:class:`PitchTiming`).

    - ``target`` / ``toe_target`` ``[F, 3]`` (m): where the ankle and the
      toe go (locks, blends and lift applied); ``ankle_runs`` /
      ``toe_runs``: their locks (:func:`~..foot_lock.lock_runs`); ``air``
      ``[F]`` bool: :func:`airborne` frames; ``profiles``: ``(walk, run)``
      :class:`PitchProfile` (None: that gait's flights are left alone),
      applied with its apex on the flight's own (the ankle target's
      highest frame).
    - In a flight the pitch goes to stance pitch + profile: eased in from the
      foot's own over ``ease_seconds`` after toe-off (no jump at the lock's
      edge), and, from heel strike on, what is left is eased out over
      ``roll_seconds`` while the ankle stays on its lock (the roll to flat;
      the toe is not moved once its own lock has begun).
    - The foot turns about the toe until ``land_phase`` (it leaves the
      floor toe last: the ankle moves, the toe keeps the height the lift
      gave it), then more and more about the ankle (``smoothstep``), wholly
      at heel strike, where the ankle lands on its lock: the heel strikes
      where it was going to and the toe comes down after it.
    - The pitch change is smoothed over ``smooth_seconds`` (Gaussian), inside
      the flights and rolls only: the profile's kinks and the eases' edges
      showed as jerk in the knees and feet (mean jerk of the hips and leg
      joints on 8 validation paths: 199 m/s^3 unsmoothed with a 0.1 s ease,
      142 now, 130 without the pitch, 149 in the validation mocap).
    - Where the ankle or the toe would go below its floor (``floors`` = (ankle,
      toe), m) in a flight, the whole foot is raised by the difference
      (smoothed over ``knee`` m): with the toes up the heel strikes first."""
    ease_seconds, roll_seconds, land_phase = timing.ease_seconds, timing.roll_seconds, timing.land_phase
    knee, smooth_seconds = timing.knee, timing.smooth_seconds
    target = np.array(target, dtype=np.float64, copy=True)
    toe_target = np.array(toe_target, dtype=np.float64, copy=True)
    f = len(target)
    fl = flights(ankle_runs, toe_runs)
    if not fl:
        return target, toe_target
    d = toe_target - target
    length = np.linalg.norm(d, axis=1)
    heading = d[:, :2] / np.maximum(np.linalg.norm(d[:, :2], axis=1, keepdims=True), 1e-9)
    pitch = foot_pitch(target, toe_target)
    a_mask, t_mask = mask_of_runs(ankle_runs, f), mask_of_runs(toe_runs, f)
    flat = stance_pitch(pitch, a_mask, t_mask)
    delta, pivot_toe, in_flight = _pitch_changes(fl, target[:, 2], pitch, heading, (t_mask, air), profiles, flat,
                                                 (ease_seconds * fps, roll_seconds * fps, land_phase))
    if smooth_seconds > 0:
        # The profile's median and its piecewise-linear anchors have kinks:
        # smoothed over ~a frame, kept inside the flights and rolls.
        from ..filters import gaussian_filter1d

        delta = gaussian_filter1d(delta, smooth_seconds * fps, mode="nearest") * (delta != 0.0)
    new_pitch = pitch + delta
    d_new = np.concatenate([length[:, None] * np.cos(new_pitch)[:, None] * heading,
                            -(length * np.sin(new_pitch))[:, None]], axis=1)
    changed = (delta != 0.0) | in_flight
    move = (d_new - d) * changed[:, None]
    target -= pivot_toe[:, None] * move
    toe_target += (1.0 - pivot_toe)[:, None] * move
    lift = _floor_lift(target[:, 2], toe_target[:, 2], move[:, 2], pivot_toe, floors, knee) * in_flight
    target[:, 2] += lift
    toe_target[:, 2] += lift
    return target, toe_target


def _pitch_changes(fl, ankle_z, pitch, heading, masks, profiles, flat: float, frames) -> tuple:
    """``(delta [F] rad, pivot_toe [F], in_flight [F] bool)`` of
    :func:`pitch_swing` over the flights ``fl``: the pitch change, the share
    of the turn about the toe (1) rather than the ankle (0), and the flights'
    frames. ``heading [F, 2]`` is updated in place: in a flight it turns from
    toe-off's to heel strike's. ``masks``: ``(t_mask, air)`` ``[F]`` bool,
    the toe's locks and the airborne frames; ``frames``: ``(n_ease, n_roll,
    land_phase)``, the eases in frames and the pivot's phase."""
    t_mask, air = masks
    n_ease, n_roll, land_phase = frames
    f = len(pitch)
    delta = np.zeros(f)
    pivot_toe = np.zeros(f)
    in_flight = np.zeros(f, bool)
    n_ease, n_roll = max(n_ease, 1.0), max(n_roll, 1.0)
    for te, hs in fl:
        prof = profiles[1] if air[te:hs].any() else profiles[0]
        if prof is None:
            continue
        u = flight_phase(te, hs)[1:]  # frames te .. hs - 1
        k = np.arange(te, hs)
        # The profile's apex on the flight's own; what follows it scaled into
        # the rest of the flight. (Putting the profile's descent on the
        # flight's too, the network's late descent squeezed the heel strike
        # into the last two frames: faster, and gone once smoothed.)
        apex = anchor_phases(ankle_z, te, hs)[0]
        low = apex + (prof.low - prof.apex) * (1.0 - apex) / (1.0 - prof.apex)
        want = flat + prof.at(u, (apex, low))
        delta[te:hs] = smoothstep((k - (te - 1)) / n_ease) * (want - pitch[te:hs])
        # The swinging foot's heading turns from toe-off's to heel strike's:
        # its own is undefined where the network points the foot down.
        yaw0, yaw1 = (np.arctan2(heading[i, 1], heading[i, 0]) for i in (te - 1, min(hs, f - 1)))
        yaw = yaw0 + np.angle(np.exp(1j * (yaw1 - yaw0))) * u
        heading[te:hs] = np.stack([np.cos(yaw), np.sin(yaw)], axis=1)
        pivot_toe[te:hs] = 1.0 - smoothstep((u - land_phase) / (1.0 - land_phase))
        in_flight[te:hs] = True
        # The roll to flat: the landing's pitch eased out on the ankle lock.
        end = min(int(hs + np.ceil(n_roll)), f)
        j = np.arange(hs, end)
        free_toe = ~np.maximum.accumulate(t_mask[hs:end]) if end > hs else np.zeros(0, bool)
        delta[hs:end] = (want[-1] - pitch[hs - 1]) * (1.0 - smoothstep((j - (hs - 1)) / n_roll)) * free_toe
    return delta, pivot_toe, in_flight


def _floor_lift(ankle_z, toe_z, move_z, pivot_toe, floors, knee: float) -> np.ndarray:
    """``[F]`` m to raise the whole foot so that neither joint is below its
    floor (``floors`` = (ankle, toe), m) by more than before the turn
    (``move_z``: the turn's vertical move, split by ``pivot_toe``; smoothed
    over ``knee`` m): nothing where the turn took nothing."""
    lift = np.zeros(len(ankle_z))
    for z_new, dz, floor in ((ankle_z, -pivot_toe * move_z, floors[0]),
                             (toe_z, (1.0 - pivot_toe) * move_z, floors[1])):
        below = ramp(floor - z_new + 0.5 * knee, knee) - ramp(floor - (z_new - dz) + 0.5 * knee, knee)
        lift = np.maximum(lift, below)
    return lift

__all__ = ["PitchProfile", "style_profiles", "PROFILES_FILE", "anchor_phases", "foot_pitch", "flights", "flight_phase", "airborne", "stance_pitch",
           "flight_rows", "flight_profiles",
           "pitch_swing", "PitchTiming", "PROFILE_SAMPLES"]
