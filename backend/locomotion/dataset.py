"""Locomotion clips of the Bandai Namco datasets, their labels and the split.

Files are ``{data_dir}/bandai_namco_d2_locomotion/bvh/dataset-2_{content}_{style}_{NNN}.bvh.gz``
(contents walk, walk-turn-left, walk-turn-right, run; 7 styles) and
``{data_dir}/bandai_namco_d1_locomotion/bvh/dataset-1_{content}_{style}_{NNN}.bvh.gz``
(contents walk, walk-back, walk-left, walk-right = sidesteps, run, dash; 15
styles). Labels come from the file name only.

Styles keep each dataset's own name in :attr:`ClipInfo.style`; the d1 styles
whose meaning matches a d2 style are mapped in :data:`D1_TO_D2_STYLE` and
:attr:`ClipInfo.style_key` is the shared vocabulary (:data:`STYLE_VOCAB`) a
model conditions on.

The split is by file: for every (dataset, style) at least 10 % of the files
(rounded up) go to validation, spread over the contents so that every content
of a style is held out when the style has enough files of it (d2), and every
content is held out by some style (d1, where a style has 1-2 files per
content). It is written once to ``presets/locomotion_split.json`` and
committed, so training runs on different machines agree.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from .. import options, paths

#: Repository root (the ``rigmind`` package folder).
REPO_ROOT = paths.PACKAGE_ROOT
#: Default data folder: ``$RIGMIND_DATA`` or ``../shared/data`` next to the repository.
DEFAULT_DATA_DIR = paths.data_dir()
#: The committed split.
SPLIT_PATH = paths.PRESETS_DIR / "locomotion_split.json"

DATASETS = {
    "d2": "bandai_namco_d2_locomotion",
    "d1": "bandai_namco_d1_locomotion",
}
D2_CONTENTS = ("walk", "walk-turn-left", "walk-turn-right", "run")
D1_CONTENTS = ("walk", "walk-back", "walk-left", "walk-right", "run", "dash")
D2_STYLES = options.STYLES
D1_STYLES = (
    "normal", "happy", "sad", "angry", "proud", "not-confident", "masculinity", "feminine",
    "childish", "old", "tired", "active", "musical", "giant", "chimpira",
)
#: d1 styles that mean the same as a d2 style. "childish" -> "youthful" is the
#: loosest match (a child-like vs. a young adult's gait); the others are
#: the same word or a synonym.
D1_TO_D2_STYLE = {
    "normal": "normal",
    "active": "active",
    "feminine": "feminine",
    "masculinity": "masculine",
    "old": "elderly",
    "tired": "exhausted",
    "childish": "youthful",
}
#: Shared style vocabulary: the 7 d2 styles, then the d1-only styles.
STYLE_VOCAB = D2_STYLES + tuple(s for s in D1_STYLES if s not in D1_TO_D2_STYLE)
#: Gait of each content: sprint ("dash") counts as running.
GAIT = {
    "walk": "walk", "walk-turn-left": "walk", "walk-turn-right": "walk", "walk-back": "walk",
    "walk-left": "walk", "walk-right": "walk", "run": "run", "dash": "run",
}

_NAME = re.compile(r"^dataset-(?P<ds>[12])_(?P<content>[a-z-]+?)_(?P<style>[a-z-]+)_(?P<take>\d+)\.bvh(\.gz)?$")


@dataclass(frozen=True)
class ClipInfo:
    """One locomotion file and its labels (all from the file name)."""

    path: Path
    dataset: str  # "d1" or "d2"
    content: str  # e.g. "walk-turn-left", "walk-back", "dash"
    style: str  # the dataset's own style name ("masculinity" in d1, "masculine" in d2)
    style_shared: str | None  # the d2 style with the same meaning, None for d1-only styles
    take: int
    gait: str  # "walk" or "run"

    @property
    def file(self) -> str:
        """File name, unique over both datasets (the split's key)."""
        return self.path.name

    @property
    def stem(self) -> str:
        return self.path.name.split(".bvh")[0]

    @property
    def style_key(self) -> str:
        """Style in :data:`STYLE_VOCAB` (shared meaning merged across datasets)."""
        return self.style_shared or self.style

    def labels(self) -> dict:
        return {
            "file": self.file,
            "dataset": self.dataset,
            "content": self.content,
            "style": self.style,
            "style_key": self.style_key,
            "gait": self.gait,
        }


def parse_name(path) -> ClipInfo:
    """Labels of a ``dataset-{1,2}_{content}_{style}_{NNN}.bvh[.gz]`` file.

    Contents are matched against the known lists first because both contents
    ("walk-turn-left") and styles ("not-confident") contain hyphens.
    """
    path = Path(path)
    m = _NAME.match(path.name)
    if not m:
        raise ValueError(f"not a Bandai Namco locomotion file name: {path.name}")
    ds = "d" + m["ds"]
    contents, styles = (D2_CONTENTS, D2_STYLES) if ds == "d2" else (D1_CONTENTS, D1_STYLES)
    body = path.name.split(".bvh")[0].split("_", 1)[1]  # "{content}_{style}_{NNN}"
    content, style, take = body.rsplit("_", 2) if body.count("_") == 2 else (None, None, None)
    if content not in contents or style not in styles:
        raise ValueError(f"unknown content/style in {path.name}: {content!r}/{style!r}")
    shared = style if ds == "d2" else D1_TO_D2_STYLE.get(style)
    return ClipInfo(path, ds, content, style, shared, int(take), GAIT[content])


def list_clips(data_dir=None, datasets=("d2", "d1")) -> list:
    """All locomotion clips under ``data_dir`` (default ``../shared/data``),
    sorted by (dataset as given, file name). Missing dataset folders are
    skipped; an absent ``data_dir`` gives an empty list."""
    data_dir = Path(data_dir) if data_dir is not None else paths.data_dir()
    out = []
    for ds in datasets:
        folder = data_dir / DATASETS[ds] / "bvh"
        if folder.is_dir():
            out.extend(parse_name(p) for p in sorted(folder.glob("*.bvh.gz")))
    return out


def _held_out_count(n: int, fraction: float) -> int:
    return min(n, max(1, math.ceil(fraction * n - 1e-9)))


def split_clips(clips, seed: int = 0, fraction: float = 0.1) -> dict:
    """Deterministic split of ``clips`` by file: ``{"train": [...],
    "validation": [...]}`` of file names (sorted).

    Per (dataset, style) at least ``ceil(fraction * n)`` files are held out.
    When every content of the style has enough files (d2: >= 17 each), the
    count is taken per (dataset, style, content) so each content is held out.
    Otherwise (d1: 1-2 files per content) the style's held-out files cycle
    through the contents in a seeded order shared by all styles of the dataset,
    so each content is held out by some style.
    """
    rng = np.random.default_rng(seed)
    groups = {}
    for c in sorted(clips, key=lambda c: c.file):
        groups.setdefault((c.dataset, c.style), []).append(c)
    validation = set()
    # One content rotation per dataset, advanced style by style.
    rotation = {}
    for (ds, _style), members in sorted(groups.items()):
        by_content = {}
        for c in members:
            by_content.setdefault(c.content, []).append(c)
        need = _held_out_count(len(members), fraction)
        if all(len(v) >= math.ceil(1 / fraction) for v in by_content.values()):
            for content in sorted(by_content):
                v = by_content[content]
                k = _held_out_count(len(v), fraction)
                for i in sorted(rng.choice(len(v), size=k, replace=False)):
                    validation.add(v[i].file)
            # Per-content rounding already gives >= need; top up just in case.
            held = [c for c in members if c.file in validation]
            rest = [c for c in members if c.file not in validation]
            for i in rng.permutation(len(rest))[: max(0, need - len(held))]:
                validation.add(rest[i].file)
        else:
            if ds not in rotation:
                contents = sorted({c.content for (d, _), m in groups.items() if d == ds for c in m})
                rotation[ds] = [[contents[i] for i in rng.permutation(len(contents))], 0]
            order, pos = rotation[ds]
            taken = 0
            while taken < need:
                content = order[pos % len(order)]
                pos += 1
                cands = [c for c in by_content.get(content, []) if c.file not in validation]
                if cands:
                    validation.add(cands[int(rng.integers(len(cands)))].file)
                    taken += 1
            rotation[ds][1] = pos
    files = sorted(c.file for c in clips)
    return {
        "seed": int(seed),
        "fraction": float(fraction),
        "validation": sorted(f for f in files if f in validation),
        "train": sorted(f for f in files if f not in validation),
    }


def make_split(data_dir=None, seed: int = 0, path=None, fraction: float = 0.1) -> dict:
    """Split the clips under ``data_dir`` (see :func:`split_clips`) and write
    ``{"seed", "fraction", "validation", "train"}`` to ``path`` (default
    ``presets/locomotion_split.json``). Returns the split."""
    clips = list_clips(data_dir)
    if not clips:
        raise FileNotFoundError(f"no Bandai Namco locomotion clips under {data_dir or paths.data_dir()}")
    split = split_clips(clips, seed=seed, fraction=fraction)
    path = Path(path) if path is not None else SPLIT_PATH
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(split, f, indent=1)
        f.write("\n")
    return split


def load_split(path=None) -> dict:
    """The committed split: ``{"seed", "fraction", "validation", "train"}``
    (lists of file names)."""
    path = Path(path) if path is not None else SPLIT_PATH
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def split_of(split: dict) -> dict:
    """``{file name: "train" | "validation"}`` for a split dict."""
    out = {f: "train" for f in split["train"]}
    out.update({f: "validation" for f in split["validation"]})
    return out


__all__ = [
    "ClipInfo", "parse_name", "list_clips", "split_clips", "make_split", "load_split", "split_of",
    "DATASETS", "D1_STYLES", "D2_STYLES", "D1_CONTENTS", "D2_CONTENTS", "D1_TO_D2_STYLE",
    "STYLE_VOCAB", "GAIT", "DEFAULT_DATA_DIR", "SPLIT_PATH", "REPO_ROOT",
]
