"""The tracking model's mocap, its split and the per-clip arrays.

Sources (all under the data folder, read-only): the four Bandai-Namco folders
(locomotion and gestures, already on the canonical skeleton), the BEAT2
SMPL-X take and the DeepMimic clips (retargeted onto it). The split is by
clip: per source a seeded shuffle puts ~8 % of the clips in ``test`` (held
out: only the final benchmark reads it) and ~8 % in ``validation`` (what
training is tuned on); BEAT2 has a single take, so its last 20 % of frames is
the test part and the 10 % before it validation. Written once to
``presets/tracking_split.json`` (committed).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .. import paths
from .mocap_trackers import FPS, load_mocap, to_canonical

SPLIT_PATH = paths.PRESETS_DIR / "tracking_split.json"
BANDAI = ("bandai_namco_d1_locomotion", "bandai_namco_d2_locomotion", "bandai_namco_d1_gestures",
          "bandai_namco_d2_hand_gestures")
BEAT2 = "beat2_speech_gesture_sample/2_scott_0_1_1.npz"
DEEPMIMIC = "deepmimic_motions"
#: Fractions of the BEAT2 take (by time) per part.
BEAT2_PARTS = {"train": (0.0, 0.7), "validation": (0.7, 0.8), "test": (0.8, 1.0)}
HELD_OUT = 0.08


def _files(data_dir: Path) -> dict:
    out = {}
    for folder in BANDAI:
        out[folder] = sorted(f"{folder}/bvh/{p.name}" for p in (data_dir / folder / "bvh").glob("*.bvh*"))
    out[DEEPMIMIC] = sorted(f"{DEEPMIMIC}/{p.name}" for p in (data_dir / DEEPMIMIC).glob("humanoid3d_*.txt")
                            if p.name != "humanoid3d_character.txt")
    return out


def make_split(data_dir=None, seed: int = 0, path=SPLIT_PATH) -> dict:
    """Write (and return) the split ``{"seed", "train": [...], "validation":
    [...], "test": [...]}`` of relative paths (BEAT2 as ``file#lo-hi``)."""
    data_dir = Path(data_dir or paths.data_dir())
    rng = np.random.default_rng(seed)
    split = {"seed": seed, "train": [], "validation": [], "test": []}
    for _, files in sorted(_files(data_dir).items()):
        order = rng.permutation(len(files))
        n = max(1, int(round(HELD_OUT * len(files))))
        for rank, i in enumerate(order):
            part = "test" if rank < n else "validation" if rank < 2 * n else "train"
            split[part].append(files[i])
    for part, (lo, hi) in BEAT2_PARTS.items():
        split[part].append(f"{BEAT2}#{lo}-{hi}")
    for part in ("train", "validation", "test"):
        split[part].sort()
    Path(path).write_text(json.dumps(split, indent=1) + "\n", encoding="utf-8")
    return split


def load_split(path=SPLIT_PATH) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def load_entry(entry: str, data_dir=None):
    """A split entry as a canonical :class:`Motion` at 30 fps (named after the entry)."""
    data_dir = Path(data_dir or paths.data_dir())
    rel, _, span = entry.partition("#")
    motion, mapping = load_mocap(data_dir / rel)
    m = to_canonical(motion, mapping, FPS)
    if span:
        lo, hi = (float(v) for v in span.split("-"))
        m = m.slice(int(lo * m.num_frames), int(hi * m.num_frames))
    m.name = entry
    return m


def source_of(entry: str) -> str:
    """The source folder of a split entry (``bandai_namco_d1_locomotion``, ...)."""
    return entry.split("/")[0]
