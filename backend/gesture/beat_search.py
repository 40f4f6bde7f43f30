"""Each window's latent draw picked among a few so its beats fall where the speech's onsets come thick.

Why. The decoder's speed minima (the motion's beats, as beat consistency
finds them) come from its latent codes, not from the beat pulses it is
given (``bench/results/gesture_alignment.md``), and which draw of the codes
puts them where the speech's syllables cluster is chance: on a short clip
the alignment gain moves by about 0.1 with the seed alone. Every draw is a
sample of the model, so choosing among a few draws per window keeps the
motion on the model's own distribution (no filter, no retiming) and lets
the speech pick its timing.

How. While the take is generated window by window
(:func:`.generate.generate_from_features`), each window past the pre-roll
tries ``candidates`` draws of the codes that mainly drive its newest frames
(the codes between the previous window's end and its own; the first draw
is the take's own, so one candidate is the take without the search). Each
draw is decoded, joined as it would be, and scored by :class:`BeatCritic`:
the upper-body joints' speed minima in the frames the draw decides, each
weighted by how far the speech's onset density there is above (positive)
or below (negative) its mean over the speech. The best draw's codes are
kept and the next window reads them. The same seed gives the same take.

Units: frames at the model's rate (30 fps), seconds for onsets, metres for
positions; arrays ``[frames, joints, 3]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .. import rotations
from ..motion import world_matrices
from . import dims, latent_track, representation
from .controls import extrema_mask
from .speech_rhythm import RhythmConfig, activity_weight, onset_density


#: Frames of the drawn take turned into positions at once.
BLOCK_FRAMES = 2048


@dataclass(frozen=True)
class BeatSearchConfig:
    """``candidates``: latent draws tried per window (1: no search);
    ``density_s``: σ (s) of each onset's share of the density; ``order``:
    frames on each side a speed minimum is lowest over and ``threshold``
    the share of the joint's mean speed it must exceed to count (beat
    consistency's 7 and 0.3)."""

    candidates: int = 4
    density_s: float = 0.3
    order: int = 7
    threshold: float = 0.3
    #: Score a draw by its beats' mean weight (no beats: 0) — where its beats
    #: sit, not how many it has; False: their sum, which favours draws with
    #: more beats (a higher beat consistency, a larger FD).
    per_beat: bool = True


def strict_minima(x: np.ndarray, order: int) -> tuple:
    """``(frames, joints)`` of the entries of ``x [n, J]`` lower than every
    other within ``order`` frames on each side (:func:`.controls.extrema_mask`
    with ``np.less``, the test beat consistency finds beats with), among the
    frames that have ``order`` neighbours on both sides: a window's frames
    past its ends are unknown, not absent, so a frame near an end is never
    taken for a minimum (``argrelextrema``, which clips, would take it
    against the end frame)."""
    ok = extrema_mask(x, np.less, order)
    ok[:order] = False
    ok[len(x) - order:] = False
    return np.nonzero(ok)


@lru_cache(maxsize=1)
def _upper_chain() -> tuple:
    """``(parents, offsets [B, 3], upper [13])``: the SMPL-X rest skeleton cut
    to the model's BODY joints (BODY's order; every rest frame the
    identity), their offsets from their parents (metres, Blender frame) and
    the indices of :data:`representation.UPPER` in BODY."""
    from ..smplx_motion import smplx_rest_skeleton

    body = smplx_rest_skeleton().subset(representation.BODY)
    upper = np.array([body.index(n) for n in representation.UPPER])
    return tuple(int(p) for p in body.parents), np.asarray(body.offsets, np.float64), upper


def upper_body_positions(poses: np.ndarray) -> np.ndarray:
    """Model poses ``[n, POSE_DIM]`` (not normalised) → the 13 upper-body
    joints' positions ``[n, 13, 3]`` (metres, relative to the rest pelvis
    plus the modelled sway; the heading the model leaves out is left out)."""
    parents, offsets, upper = _upper_chain()
    n = len(poses)
    mats = rotations.matrix_from_6d(np.asarray(poses[:, :representation.ROT_DIM], np.float64)
                                    .reshape(n, len(parents), 6))
    local_t = np.repeat(offsets[None], n, axis=0)
    local_t[:, 0] = poses[:, representation.ROOT_SLICE]
    return world_matrices(parents, mats, local_t)[1][:, upper]


class BeatCritic:
    """Scores a stretch of decoded motion by where its beats sit against the
    speech's onsets, as beat consistency would find them after the settling
    step (:mod:`.speech_rhythm`).

    ``onset_times [K]`` seconds of the take, ``talking [T]`` voice activity
    per take frame, ``drawn [total, POSE_DIM]`` the take as first drawn
    (poses, not normalised, the pre-roll first), ``lead`` frames of
    pre-roll, ``fps``. A speed minimum counts as a beat where the joint's
    speed, scaled as the settling step will scale it (its default
    :class:`.speech_rhythm.RhythmConfig`), is above
    ``threshold`` × that joint's mean speed over the drawn take (beat
    consistency's gate, against the take's own speeds)."""

    def __init__(self, onset_times, talking, drawn: np.ndarray, *, lead: int, fps: float,
                 config: BeatSearchConfig = BeatSearchConfig()):
        talking = np.asarray(talking, bool)
        n, total = len(talking), len(drawn)
        density = onset_density(onset_times, n, fps, config.density_s)
        ref = density[talking] if talking.sum() >= fps else density
        mean = float(ref.mean()) if len(ref) else 0.0
        take = slice(lead, lead + n)
        self.config = config
        self.weight = np.zeros(total)
        # A window is worth searching only where the speech has onsets near it.
        self.near_speech = np.zeros(total, bool)
        self.settle = np.ones(total)
        if mean > 0:
            self.weight[take] = density[:total - lead] / mean - 1.0
            self.near_speech[take] = density[:total - lead] > 1e-3
            self.settle[take] = activity_weight(density, fps, RhythmConfig(), talking)[:total - lead]
            self.settle[lead + n:] = self.settle[lead + n - 1]
        self.ref = np.maximum(self._mean_speed(drawn, lead, lead + n), 1e-9)

    def _mean_speed(self, poses: np.ndarray, start: int, stop: int) -> np.ndarray:
        """``[J]``: each upper-body joint's mean settled speed (m/frame) over
        the steps from frame ``start`` to frame ``stop - 1`` of ``poses
        [total, POSE_DIM]``, a block at a time (a 30-minute take's rotation
        matrices at once are GBs)."""
        total, count = 0.0, 0
        for a in range(start, max(stop - 1, start), BLOCK_FRAMES):
            b = min(a + BLOCK_FRAMES + 1, stop)
            speed = self._speed(upper_body_positions(poses[a:b]), a)
            total, count = total + speed.sum(axis=0), count + len(speed)
        return total / count if count else np.ones(len(representation.UPPER))

    def _speed(self, positions: np.ndarray, first: int) -> np.ndarray:
        """``[n - 1, J]`` m/frame at frames ``first + 1 ..``, scaled by the settling weight."""
        speed = np.linalg.norm(np.diff(positions, axis=0), axis=-1)
        return speed * self.settle[first + 1:first + len(positions)][:, None]

    def worth_searching(self, lo: int, hi: int) -> bool:
        """True when frames ``lo .. hi`` (decoded-frame indices) lie near speech."""
        return bool(self.near_speech[max(lo, 0):max(hi, 0)].any())

    def score(self, positions: np.ndarray, first: int, lo: int, hi: int) -> float:
        """``positions [n, J, 3]`` (metres) of decoded frames ``first ..
        first + n``: the mean (``per_beat``; else the sum), over the joints'
        beats at frames in ``lo .. hi``, of the onset-density weight there
        (density ÷ its mean over the speech − 1); 0 without beats."""
        speed = self._speed(positions, first) / self.ref
        order = self.config.order
        m, j = strict_minima(speed, order)
        f = first + m + 1
        keep = (f >= lo) & (f < hi) & (speed[m, j] > self.config.threshold)
        total, count = float(self.weight[f[keep]].sum()), int(keep.sum())
        return total / max(count, 1) if self.config.per_beat else total


class WindowSearch:
    """Picks each window's draw of its newest codes (module notes).

    ``drawn [D, total]``: the take as first drawn (normalised frames, the
    pre-roll first), which sets the speeds a beat is measured against;
    ``scale [N + 2·TAPS]``: the spread each padded code is drawn with (as
    the take's own codes were); ``normalisation``: the model's pose mean
    and standard deviation (``[POSE_DIM]`` each); ``seed``: the take's
    seed (the other draws come from a generator of their own, so the take's
    own draws are unchanged)."""

    def __init__(self, config: BeatSearchConfig, onset_times, talking, drawn: np.ndarray, *, lead: int, fps: float,
                 scale: np.ndarray, seed: int, normalisation: tuple):
        self.config = config
        self.mean, self.std = (np.asarray(a, np.float64) for a in normalisation)
        self.critic = BeatCritic(onset_times, talking, self._poses(drawn), lead=lead, fps=fps, config=config)
        self.scale = np.asarray(scale, np.float32)
        self.rng = np.random.default_rng([int(seed), 9])

    def _poses(self, frames: np.ndarray) -> np.ndarray:
        return np.asarray(frames, np.float64).T * self.std + self.mean

    def best_window(self, decode, k: int, starts, codes: np.ndarray, out: np.ndarray) -> np.ndarray:
        """Window ``k``'s new frames ``[D, W - CONTEXT]`` from the best of
        ``candidates`` draws of its newest codes, which are left in
        ``codes`` (padded ``[D, N + 2·TAPS]``, changed in place);
        ``decode([codes, ...])`` decodes the window from each set of codes
        after the frames so far in ``out`` (normalised ``[D, total]``)."""
        W, Cx, L, order = dims.WINDOW, dims.CONTEXT, dims.LATENT_STRIDE, self.config.order
        a, prev_end = int(starts[k]), int(starts[k - 1]) + W
        lo, hi = max(prev_end - order, a + Cx - 1), a + W - order
        # The codes at frames prev_end .. a + W: read by the earlier windows only through the sinc's tails.
        first, last = -(-prev_end // L), -(-(a + W) // L)
        fresh = np.arange(first, last) + latent_track.TAPS
        fresh = fresh[fresh < codes.shape[1]]
        # Drawn for every window, searched or not, so a window's draws do not depend on the earlier ones'.
        draws = self.rng.standard_normal((self.config.candidates - 1, codes.shape[0], len(fresh))).astype(np.float32)
        if len(fresh) == 0 or hi <= lo or not self.critic.worth_searching(lo, hi):
            return decode([codes])[0]
        trials = [codes[:, fresh].copy()] + [d * self.scale[fresh][None, :] for d in draws]
        variants = []
        for trial in trials:
            variant = codes.copy()
            variant[:, fresh] = trial
            variants.append(variant)
        news = decode(variants)
        head = out[:, a + Cx - order - 1:a + Cx]          # frames before the new ones, for the minima's context
        scores = [self.critic.score(upper_body_positions(self._poses(np.concatenate([head, new], axis=1))),
                                    a + Cx - order - 1, lo, hi) for new in news]
        best = int(np.argmax(scores))                       # the first of equals, the take's own draw first
        codes[:, fresh] = trials[best]
        return news[best]
