"""The viseme set and its tables (``presets/visemes.json``): phone → viseme
for CMU ARPAbet (pocketsphinx) and IPA (eSpeak NG), viseme → ARKit-52
targets and co-articulation dominance."""

from __future__ import annotations

import unicodedata
from functools import lru_cache

import numpy as np

from ...presets import arkit52_names, load_preset


@lru_cache(maxsize=1)
def _table() -> dict:
    return load_preset("visemes")


def viseme_names() -> list:
    """The viseme classes, ``sil`` first (class index 0)."""
    return list(_table()["visemes"])


def viseme_index() -> dict:
    return {v: i for i, v in enumerate(viseme_names())}


def arpabet_to_viseme(phone: str) -> str:
    """CMU phone (stress digits ignored, e.g. ``AH0``) → viseme; unknown → ``sil``."""
    p = phone.strip().upper().rstrip("012")
    return _table()["arpabet"].get(p, "sil")


_IPA_STRIP = set("ˈˌːˑ̩̯̃ʰʲʷˠˤ̪̥̬̠̟.-'ʼ˞")


@lru_cache(maxsize=4096)
def ipa_to_viseme(phone: str) -> str:
    """eSpeak IPA phone (stress, length and most diacritics ignored; affricates
    and diphthongs take their first sound) → viseme; unknown → ``kk`` when it
    has letters (a neutral consonant), ``sil`` for pauses."""
    table = _table()["ipa"]
    s = unicodedata.normalize("NFD", phone)
    s = "".join(c for c in s if c not in _IPA_STRIP and not unicodedata.combining(c))
    if s in ("", "_"):
        return "sil"
    for n in (2, 1):
        if s[:n] in table:
            return table[s[:n]]
    s2 = unicodedata.normalize("NFKD", s)[:1].lower()   # e.g. accented Latin letters
    return table.get(s2, "kk")


def _expand(targets: dict) -> dict:
    """``mouthStretch`` → ``mouthStretchLeft`` and ``mouthStretchRight``."""
    names = set(arkit52_names())
    out = {}
    for k, v in targets.items():
        if k in names:
            out[k] = float(v)
        elif f"{k}Left" in names:
            out[f"{k}Left"] = out[f"{k}Right"] = float(v)
        else:
            raise ValueError(f"presets/visemes.json: {k!r} is not an ARKit blendshape")
    return out


def _viseme_matrix(row_base, row_channels, multiply: bool) -> np.ndarray:
    """Read-only ``[V, 52]`` float32: row ``v`` starts at ``row_base(v)``, then
    each ARKit channel of ``row_channels(v)`` (names expanded by :func:`_expand`)
    is set to its value, or multiplied by it when ``multiply``."""
    col = {n: i for i, n in enumerate(arkit52_names())}
    m = np.zeros((len(viseme_names()), 52), np.float32)
    for i, v in enumerate(viseme_names()):
        m[i, :] = row_base(v)
        for k, w in _expand(row_channels(v)).items():
            m[i, col[k]] = m[i, col[k]] * w if multiply else w
    m.setflags(write=False)
    return m


@lru_cache(maxsize=1)
def target_matrix() -> np.ndarray:
    """``[V, 52]`` float32: each viseme's ARKit target weights (0..1)."""
    t = _table()["arkit_targets"]
    return _viseme_matrix(lambda v: 0.0, lambda v: t[v], multiply=False)


@lru_cache(maxsize=1)
def dominance_matrix() -> np.ndarray:
    """``[V, 52]`` float32 dominance of each viseme on each channel (> 0)."""
    d = _table()["dominance"]
    return _viseme_matrix(lambda v: d["default"][v], lambda v: d["channels"].get(v, {}), multiply=True)


def timing() -> dict:
    return dict(_table()["timing"])


def mouth_channels() -> list:
    """Indices (into the 52) of the shapes that move the mouth, jaw, cheeks or tongue."""
    return [i for i, n in enumerate(arkit52_names()) if n.startswith(("mouth", "jaw", "cheek", "tongue"))]
