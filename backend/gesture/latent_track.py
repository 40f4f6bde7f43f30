"""The take's latent codes as one signal in time, read by each window at its own frames.

The decoder reads one code per ``stride`` frames of its window (8 at 30 fps).
The codes are drawn once for the whole take, independent N(0, 1) at frames
0, ``stride``, 2·``stride`` …, and a window that starts between two of those
frames reads their band-limited (sinc) interpolation at its own code times.
A sinc-interpolated white sequence is a stationary signal whose
autocorrelation, sinc(τ / stride), is zero at every multiple of the stride:
the codes a window reads, at any phase, are again independent N(0, 1) — the
prior the decoder was trained on (a linear interpolation would correlate
neighbouring codes, which makes slower, more wandering motion) — and two
overlapping windows read nearly the same values where their code times are
close. So windows need not start on the code grid, and the grid's phase can
move from window to window (:data:`.generate.ADVANCES`).

Arrays: codes ``[D, N]`` (D latent dims, N codes in time).
"""

from __future__ import annotations

import numpy as np

#: Codes summed on each side of a read (the sinc truncated there, renormalised).
TAPS = 8


def pad_codes(codes: np.ndarray, seed: int) -> np.ndarray:
    """``codes [D, N]`` → ``[D, N + 2·TAPS]``: :data:`TAPS` more independent
    N(0, 1) codes on each side (a generator of their own, from ``seed``), so
    a read near either end of the take has all its taps. The codes
    themselves are kept as they are."""
    codes = np.asarray(codes, np.float32)
    pads = np.random.default_rng([int(seed), 8]).standard_normal((codes.shape[0], 2 * TAPS)).astype(np.float32)
    return np.concatenate([pads[:, :TAPS], codes, pads[:, TAPS:]], axis=1)


def read_codes(padded: np.ndarray, start: int, count: int, stride: int) -> np.ndarray:
    """``padded [D, N + 2·TAPS]`` (:func:`pad_codes`; code ``i`` belongs at
    frame ``i·stride``) → the ``count`` codes ``[D, count]`` at frames
    ``start + k·stride``. On the grid (``start`` a multiple of ``stride``)
    these are the drawn codes themselves."""
    u = start / stride + np.arange(count)
    if start % stride == 0:
        return np.ascontiguousarray(padded[:, TAPS + int(start // stride) + np.arange(count)])
    taps = np.floor(u).astype(int)[:, None] + np.arange(1 - TAPS, TAPS + 1)[None, :]
    w = np.sinc(u[:, None] - taps)
    w /= np.sqrt(np.sum(w * w, axis=1, keepdims=True))
    idx = taps + TAPS
    if idx.min() < 0 or idx.max() >= padded.shape[1]:
        raise IndexError(f"codes read at frames {start}..{start + (count - 1) * stride} lie outside the take's codes")
    return np.einsum("dkt,kt->dk", padded[:, idx], w.astype(np.float32)).astype(np.float32)
