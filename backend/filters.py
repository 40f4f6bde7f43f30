"""Small 1-D filters in NumPy, the same as their ``scipy.ndimage``
namesakes (tests/backend/test_filters.py checks), so a generation run does not
import scipy.ndimage (~0.3-0.5 s of start-up for three one-line uses)."""

from __future__ import annotations

import numpy as np

_PAD_MODE = {"reflect": "symmetric", "nearest": "edge", "wrap": "wrap", "mirror": "reflect", "constant": "constant"}


def gaussian_filter1d(x, sigma: float, axis: int = -1, mode: str = "reflect", truncate: float = 4.0) -> np.ndarray:
    """``scipy.ndimage.gaussian_filter1d`` (order 0): a normalised Gaussian
    of ``sigma`` samples, ``int(truncate * sigma + 0.5)`` taps each side,
    borders extended by ``mode`` (scipy's names); same dtype as ``x``."""
    x = np.asarray(x)
    if mode not in _PAD_MODE:
        raise ValueError(f"mode must be one of {', '.join(_PAD_MODE)}, got {mode!r}")
    r = int(truncate * float(sigma) + 0.5)
    t = np.arange(-r, r + 1)
    w = np.exp(-0.5 / (float(sigma) ** 2) * t.astype(np.float64) ** 2)
    w /= w.sum()
    a = np.moveaxis(x, axis, 0).astype(np.float64)
    n = a.shape[0]
    if mode == "nearest" and 0 < n <= r:
        w, r = _fold_edge_taps(w, r, n - 1)
    pad = [(r, r)] + [(0, 0)] * (a.ndim - 1)
    ap = np.pad(a, pad, mode=_PAD_MODE[mode])
    out = np.zeros_like(a)
    for k in range(2 * r + 1):  # 2r+1 shifted slices, each over every sample
        out += w[k] * ap[k:k + n]
    out = np.moveaxis(out, 0, axis)
    if np.issubdtype(x.dtype, np.integer):
        out = np.round(out)
    return out.astype(x.dtype, copy=False)


def _fold_edge_taps(w: np.ndarray, r: int, m: int) -> tuple:
    """The taps ``w`` (offsets -r..r) cut to -m..m for a signal of m + 1
    samples extended by its edge values, each cut tail added to the end
    tap it meets: past m samples every tap reads the edge sample for every
    output, so the sum is the same while the loop runs 2m + 1 times, not
    2r + 1 (r grows with sigma: 10^6 taps, seconds, for a path a few
    micrometres long). Returns ``(taps, m)``."""
    folded = w[r - m:r + m + 1].copy()
    folded[0] += w[:r - m].sum()
    folded[-1] += w[r + m + 1:].sum()
    return folded, m


def running_mean(x, n: int, axis: int = 0) -> np.ndarray:
    """Mean over a centred window of ``n`` samples along ``axis`` (``n // 2``
    before, ``n - 1 - n // 2`` after), the ends extended with their edge
    values; same shape as ``x``."""
    x = np.asarray(x)
    pad = [(0, 0)] * x.ndim
    pad[axis] = (n // 2, n - 1 - n // 2)
    return np.lib.stride_tricks.sliding_window_view(np.pad(x, pad, mode="edge"), n, axis=axis).mean(axis=-1)


def binary_closing_1d(on: np.ndarray, size: int) -> np.ndarray:
    """``scipy.ndimage.binary_closing(on, structure=np.ones(size))`` for a 1-D
    bool array (``size`` odd): dilation then erosion, outside counted False."""
    on = np.asarray(on, bool)
    h = size // 2

    def window_count(b):
        c = np.concatenate([[0], np.cumsum(np.pad(b, h).astype(np.int64))])
        return c[size:] - c[:-size]

    dil = window_count(on) > 0
    return window_count(dil) == size


def distance_to_zero_1d(a: np.ndarray) -> np.ndarray:
    """``scipy.ndimage.distance_transform_edt`` of a 1-D array: for every
    non-zero entry, the distance (samples) to the nearest zero; 0 at zeros.
    The array must hold at least one zero."""
    z = np.asarray(a) == 0
    n = len(z)
    idx = np.arange(n, dtype=np.float64)
    last = np.maximum.accumulate(np.where(z, idx, -np.inf))
    nxt = np.minimum.accumulate(np.where(z, idx, np.inf)[::-1])[::-1]
    return np.where(z, 0.0, np.minimum(idx - last, nxt - idx))
