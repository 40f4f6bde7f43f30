"""Beat alignment gain: how much better a motion follows its speech's beats
than the same motion at unrelated timing.

Beat consistency (BC, :mod:`.metrics`) alone does not say whether a motion
follows the speech: a motion with many speed minima scores high against any
audio (each onset finds a motion beat within σ = 0.3 s by chance). The gain
divides the motion's BC against the speech by the mean BC of *the same
motion* shifted in time against *the same speech*:

    gain = BC(beats, onsets) / mean_k BC(shift(beats, k), onsets)

so the motion's own beat density, the voice's onset density and the speed
threshold cancel. Gain 1: the motion's beats land on the speech's onsets no
more often than at unrelated timing; above 1: they follow the speech.

Details (chosen once, before any tuning):

- Onsets and per-joint motion beats exactly as :func:`.metrics.bc_score`
  (librosa onsets at 16 kHz; speed minima of the 13 upper-body joints, speed
  ÷ ``mean_speed``, threshold 0.3, σ = 0.3 s; ``trim_s`` (2 s) dropped at both
  ends of both, shortened for short clips as ``bc_score`` does).
- Shifts: ``SHIFTS_S`` = ±1.0, ±1.5, … ±4.0 s (14 offsets). Not below 1 s:
  a beat moved by less than ~3σ still scores against its own old place
  (exp(-0.5²/(2·0.3²)) = 0.25 at 0.5 s), which would pull the baseline
  towards the unshifted BC. Offsets longer than half the trimmed span are
  left out (a circular shift by more than half is a shorter shift the other
  way); fewer than 2 left gives ``nan``.
- Circular: each joint's beat times move by the offset modulo the trimmed
  span's length, so every shifted copy has the same beats (count and
  spacing) as the motion itself, only at other times — cropping would
  change the number of beats with the offset.
- A ratio, not a difference: BC's scale moves with onset and beat density
  (a fast TTS voice has more onsets), the ratio compares voices on one
  scale. ``nan`` when the speech has no onsets or the baseline is 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import metrics

#: Time shifts (s) of the unrelated-timing baseline: ±1.0 … ±4.0 s in 0.5-s steps.
SHIFTS_S = tuple(s * k for k in np.arange(1.0, 4.01, 0.5) for s in (1.0, -1.0))


@dataclass(frozen=True)
class Alignment:
    """``bc``: BC of the motion against its speech (0..1); ``shifted_bc``:
    the mean BC of its time-shifted copies; ``gain`` = bc / shifted_bc
    (1 = unrelated timing); ``onsets``: audio beats scored; ``seconds``:
    the trimmed span's length."""

    bc: float
    shifted_bc: float
    gain: float
    onsets: int
    seconds: float


def shifted_beats(beats: list, shift_s: float, span_s: float) -> list:
    """Per-joint beat times ``[[K_j], ...]`` (s, in 0..span_s) moved by
    ``shift_s`` seconds, circularly within the span."""
    return [np.sort(np.mod(np.asarray(b, np.float64) + shift_s, span_s)) for b in beats]


def alignment_from_beats(onsets: np.ndarray, beats: list, span_s: float, shifts=SHIFTS_S,
                         sigma: float = metrics.BC_SIGMA) -> Alignment:
    """:class:`Alignment` of per-joint motion beats ``beats`` (list of ``[K_j]``
    seconds) against audio ``onsets [K]`` (s), both within a span of
    ``span_s`` seconds."""
    onsets = np.asarray(onsets, np.float64).reshape(-1)
    bc = metrics.beat_consistency(onsets, beats, sigma=sigma)
    usable = [s for s in shifts if abs(s) <= 0.5 * span_s]
    if len(onsets) == 0 or len(usable) < 2:
        return Alignment(bc, float("nan"), float("nan"), len(onsets), span_s)
    base = float(np.mean([metrics.beat_consistency(onsets, shifted_beats(beats, s, span_s), sigma=sigma)
                          for s in usable]))
    gain = bc / base if base > 0 else float("nan")
    return Alignment(bc, base, gain, len(onsets), span_s)


def alignment_gain(samples: np.ndarray, sr: int, positions: np.ndarray, fps: float, *,
                   mean_speed: np.ndarray | None = None, trim_s: float = metrics.BC_TRIM_S,
                   shifts=SHIFTS_S) -> Alignment:
    """Alignment of motion ``positions [T, J, 3]`` (metres, SMPL-X joint order,
    ``fps``) with speech ``samples [N]`` at ``sr`` Hz, both starting at t = 0.

    Trim, onsets and beats as :func:`.metrics.bc_score` (its BC is
    ``Alignment.bc``); ``mean_speed [J]`` (m/s) normalises joint speeds —
    pass the real speaker's (:func:`.metrics.mean_joint_speed`) so every
    motion compared is thresholded alike."""
    p = np.asarray(positions, dtype=np.float64)
    onsets, (f0, f1) = metrics.trimmed_onsets(samples, sr, len(p), fps, trim_s)
    beats = metrics.motion_beats(p, fps, mean_speed=mean_speed, per_joint=True, frames=(f0, f1))
    return alignment_from_beats(onsets, beats, (f1 - f0) / float(fps), shifts)
