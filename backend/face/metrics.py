"""Lip-sync metrics (pure numpy): viseme error rate, boundary timing error,
bilabial closure, jaw correlation and mouth motion in silence."""

from __future__ import annotations

import numpy as np


def collapse(seq, drop=("sil",)) -> list:
    """Drop pauses, then merge runs of equal visemes: ``[aa aa sil aa PP] → [aa PP]``."""
    out = []
    for v in seq:
        if v in drop:
            continue
        if not out or out[-1] != v:
            out.append(v)
    return out


def edit_distance(a: list, b: list) -> int:
    """Levenshtein distance between two sequences."""
    prev = np.arange(len(b) + 1)
    for i, x in enumerate(a, 1):
        cur = np.empty_like(prev)
        cur[0] = i
        for j, y in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y))
        prev = cur
    return int(prev[-1])


def viseme_error_rate(pred: list, ref: list) -> tuple:
    """``(errors, reference_length)`` for collapsed viseme sequences."""
    p, r = collapse(pred), collapse(ref)
    return edit_distance(p, r), len(r)


def reference_visemes(text: str) -> tuple:
    """Transcript → (viseme sequence from the CMU dictionary, words missing from it)."""
    from .sphinx import cmu_dictionary, words_of
    from .visemes import arpabet_to_viseme

    d = cmu_dictionary()
    out, missing = [], []
    for w in words_of(text):
        phones = d.get(w)
        if phones is None:
            missing.append(w)
            continue
        out.extend(arpabet_to_viseme(p) for p in phones)
    return out, missing


def boundaries(segments: list, min_len: float = 0.0) -> np.ndarray:
    """Times (s) where the viseme changes in ``[(start, end, viseme)]``."""
    out, prev = [], None
    for s, _e, v in segments:
        if prev is not None and v != prev:
            out.append(s)
        prev = v
    return np.asarray(out, np.float64)


def boundary_error_ms(pred_segments: list, true_segments: list) -> float:
    """Mean over true boundaries of the distance (ms) to the nearest predicted one."""
    t, p = boundaries(true_segments), boundaries(pred_segments)
    if len(t) == 0:
        return float("nan")
    if len(p) == 0:
        return float("inf")
    d = np.abs(t[:, None] - p[None, :]).min(axis=1)
    return float(1000.0 * d.mean())


def bilabial_closure(weights: np.ndarray, names: list, fps: float, phones: list, window_s: float = 0.04,
                     close_thr: float = 0.1, jaw_thr: float = 0.05) -> tuple:
    """``(closed, total)`` over the p/b/m phones of ``phones [(s, e, ARPAbet)]``:
    closed when some frame within ±``window_s`` of the phone has mouthClose ≥
    ``close_thr`` or jawOpen ≤ ``jaw_thr``."""
    jaw = weights[:, names.index("jawOpen")]
    mc = weights[:, names.index("mouthClose")]
    ok = (mc >= close_thr) | (jaw <= jaw_thr)
    closed = total = 0
    for s, e, p in phones:
        if p.upper().rstrip("012") not in ("P", "B", "M"):
            continue
        total += 1
        a = max(int(np.floor((s - window_s) * fps)), 0)
        b = min(int(np.ceil((e + window_s) * fps)) + 1, len(ok))
        closed += bool(ok[a:b].any())
    return closed, total


def pearson(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    a, b = a - a.mean(), b - b.mean()
    den = np.sqrt((a * a).sum() * (b * b).sum())
    return float((a * b).sum() / den) if den > 0 else float("nan")
