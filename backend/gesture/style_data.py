"""The Bandai Namco styled gesture clips, labelled and split, on the SMPL-X
skeleton at 30 fps (for the style layer and the style classifier).

File names are ``dataset-<d>_<content>_<style>_<NNN>.bvh.gz``. Only the
conversational contents are read (d1: bow, bye, byebye, guide, each in 15
styles; d2: wave / raise-up hands, 7 styles). The split is fixed by name:

- ``validation``: d1's ``guide`` clips and every 5th d2 clip (NNN % 5 == 0);
  they check the classifier and play "the speaker" for ``--style-clip``
  measurements, and are used for nothing else;
- ``train``: the rest; the style layer and the classifier learn from it.

Clips are retargeted with RigMind's own retargeter (as
:func:`.dataset.bandai_to_smplx`) and cached in ``.cache/gesture``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import paths
from .dataset import CACHE_DIR, FPS, bandai_to_smplx

D1_CONTENT = ("bow", "bye", "byebye", "guide")
D2_CONTENT = ("raise-up-both-hands", "raise-up-left-hand", "raise-up-right-hand",
              "wave-both-hands", "wave-left-hand", "wave-right-hand")
FOLDERS = ("bandai_namco_d1_gestures", "bandai_namco_d2_hand_gestures")


@dataclass
class StyledClip:
    """One clip: ``rot [T, 55, 4]`` local SMPL-X rotations, ``root [T, 3]``
    pelvis (m, Z up), 30 fps; its ``style``, ``content``, ``dataset`` (1/2),
    ``number`` (NNN) and ``split`` ("train"/"validation")."""

    name: str
    rot: np.ndarray
    root: np.ndarray
    style: str
    content: str
    dataset: int
    number: int

    @property
    def split(self) -> str:
        return split_of(self.dataset, self.content, self.number)


def split_of(dataset: int, content: str, number: int) -> str:
    if dataset == 1:
        return "validation" if content == "guide" else "train"
    return "validation" if number % 5 == 0 else "train"


def parse_name(name: str):
    """``dataset-1_bow_happy_001.bvh.gz`` → ``(1, "bow", "happy", 1)`` (None if not a styled gesture clip)."""
    parts = name.split(".")[0].split("_")
    if len(parts) != 4 or not parts[0].startswith("dataset-"):
        return None
    d = int(parts[0][-1])
    content, style, num = parts[1], parts[2], parts[3]
    if content not in (D1_CONTENT if d == 1 else D2_CONTENT) or not num.isdigit():
        return None
    return d, content, style, int(num)


def find_styled(data_dir=None) -> list:
    data_dir = Path(data_dir or paths.data_dir())
    out = []
    for folder in FOLDERS:
        for f in sorted((data_dir / folder).glob("bvh/*.bvh*")):
            if parse_name(f.name) is not None:
                out.append(f)
    return out


def _resampled(rot, root, fps):
    if abs(fps - FPS) < 1e-3:
        return rot, root
    from ..motion import Motion
    from ..resample import resample
    from ..smplx_motion import smplx_rest_skeleton

    m = resample(Motion(smplx_rest_skeleton(), rot, root, fps), FPS)
    return m.rotations, m.root_positions


def load_styled(data_dir=None, *, cache: bool = True, progress=None) -> list:
    """Every styled clip (:class:`StyledClip`) under ``data_dir`` (default
    the data folder); ``[]`` when the Bandai folders are absent."""
    files = find_styled(data_dir)
    if not files:
        return []
    key = hashlib.sha1("\n".join(f"{f.name}:{f.stat().st_size}" for f in files).encode()).hexdigest()[:12]
    cache_file = CACHE_DIR / f"styled_{key}.npz"
    if cache and cache_file.exists():
        z = np.load(cache_file)
        names = json.loads(str(z["names"]))
        cuts = np.concatenate([[0], np.cumsum(z["lengths"])])
        rots, roots = z["rot"].astype(np.float64), z["root"].astype(np.float64)
        return [StyledClip(n, rots[a:b], roots[a:b], *_labels(n)) for n, a, b in zip(names, cuts[:-1], cuts[1:])]
    from ..bvh import read_bvh

    clips = []
    for i, f in enumerate(files):
        rot, root = bandai_to_smplx(f)
        rot, root = _resampled(rot, root, read_bvh(f).fps)
        name = f.name.split(".")[0]
        clips.append(StyledClip(name, np.asarray(rot, np.float64), np.asarray(root, np.float64), *_labels(name)))
        if progress:
            progress(i + 1, len(files))
    if cache:
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        np.savez(cache_file, names=json.dumps([c.name for c in clips]), lengths=[len(c.rot) for c in clips],
                 rot=np.concatenate([c.rot for c in clips]).astype(np.float32),
                 root=np.concatenate([c.root for c in clips]).astype(np.float32))
    return clips


def _labels(name: str) -> tuple:
    d, content, style, num = parse_name(name)
    return style, content, d, num


__all__ = ["StyledClip", "load_styled", "find_styled", "parse_name", "split_of", "D1_CONTENT", "D2_CONTENT"]
