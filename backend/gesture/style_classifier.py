"""The gesture style classifier: which Bandai Namco style a take moves in.

A linear discriminant (shared covariance, shrunk towards its diagonal) on
the window features of :mod:`.style_features`, trained on REAL styled clips
only (the training split of :mod:`.style_data`); a take's style is the one
with the highest log-likelihood summed over its windows. NumPy only; it
trains in a second. It judges generated takes (``bench/bench_gesture_style.py``):
it never sees generated motion while it learns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import style_features as sf

#: Shrinkage of the pooled covariance towards its diagonal (0..1).
SHRINK = 0.3
#: Features left out: where the arms and hands are is mostly a clip's
#: CONTENT (a wave holds a hand up, a bow hangs both), not its style; with
#: them the classifier learnt "d2 content" and called every d2 style of a
#: generated take feminine (tuning speech, bench/bench_gesture_style.py).
CONTENT_FEATURES = ("posture_shoulder", "posture_elbow", "hand_")
USED = np.array([i for i, n in enumerate(sf.FEATURE_NAMES) if not n.startswith(CONTENT_FEATURES)])


@dataclass(frozen=True)
class StyleClassifier:
    """``styles [S]``, feature ``mean [F]``/``scale [F]`` (standardisation),
    discriminant ``weights [S, F]`` and ``bias [S]``."""

    styles: tuple
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: np.ndarray

    def scores(self, features: np.ndarray) -> np.ndarray:
        """Window features ``[N, F]`` → per-window log-likelihoods ``[N, S]`` (up to a constant)."""
        x = (np.asarray(features, np.float64)[:, USED] - self.mean) / self.scale
        return x @ self.weights.T + self.bias

    def classify(self, features: np.ndarray) -> str:
        """The style of a take from its window features ``[N, F]``."""
        return self.styles[int(np.argmax(self.scores(features).sum(axis=0)))]

    def classify_motion(self, rot: np.ndarray, root: np.ndarray, fps: float) -> str:
        """The style of SMPL-X motion (``rot [T, 55, 4]``, ``root [T, 3]`` m, Z up)."""
        return self.classify(sf.window_features(rot, root, fps))

    def arrays(self) -> dict:
        return {"clf_styles": np.array(self.styles), "clf_mean": self.mean, "clf_scale": self.scale,
                "clf_weights": self.weights, "clf_bias": self.bias}

    @classmethod
    def from_arrays(cls, z) -> "StyleClassifier":
        return cls(tuple(str(s) for s in z["clf_styles"]), z["clf_mean"], z["clf_scale"], z["clf_weights"],
                   z["clf_bias"])


def fit(features: list, labels: list, shrink: float = SHRINK) -> StyleClassifier:
    """Window features ``[[N_i, F], ...]`` (all of :data:`.style_features.FEATURE_NAMES`;
    the classifier reads :data:`USED`) of clips with style ``labels`` →
    a classifier. Each clip weighs the same whatever its length, and each
    style the same whatever its number of clips."""
    styles = tuple(sorted(set(labels)))
    X = np.concatenate(features)[:, USED]
    w = np.concatenate([np.full(len(f), 1.0 / len(f)) for f in features])
    y = np.concatenate([np.full(len(f), styles.index(s)) for f, s in zip(features, labels)])
    mean = np.average(X, axis=0, weights=w)
    scale = np.sqrt(np.average((X - mean) ** 2, axis=0, weights=w)) + 1e-6
    Z = (X - mean) / scale
    mu = np.stack([np.average(Z[y == k], axis=0, weights=w[y == k]) for k in range(len(styles))])
    R = Z - mu[y]
    cov = (R * w[:, None]).T @ R / w.sum()
    cov = (1 - shrink) * cov + shrink * np.diag(np.diag(cov))
    inv = np.linalg.inv(cov)
    W = mu @ inv
    b = -0.5 * np.sum(W * mu, axis=1)
    return StyleClassifier(styles, mean, scale, W, b)


__all__ = ["SHRINK", "StyleClassifier", "fit"]
