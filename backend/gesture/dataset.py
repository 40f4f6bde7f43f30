"""The gesture training corpus as arrays: paired speech+motion takes
(BEAT2 format) and unpaired real motion (Bandai Namco gestures), all on the
canonical SMPL-X skeleton at 30 fps.

Layouts accepted under the data folder (``../shared/data`` by default):
- BEAT2: any folder with ``smplxflame_30/*.npz`` + ``wave16k/*.wav`` (the full
  dataset's layout), or ``.npz`` files with a ``.wav`` of the same stem beside
  them (the sample folder ``beat2_speech_gesture_sample``).
- Bandai Namco BVHs (``bandai_namco_d1_gestures``, ``bandai_namco_d2_hand_gestures``):
  retargeted once onto the SMPL-X skeleton with RigMind's own retargeter and
  cached in ``.cache/gesture`` (not committed).

Split: the last ``HOLDOUT`` (20%) of every paired take is held out for
evaluation; unpaired motion is all training data (it carries no audio).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from ..errors import UserError
from .. import paths

FPS = 30.0
HOLDOUT = 0.2
# Conversational/gestural content only: d1's dance, kick, punch and slash are
# not co-speech gesture and would teach the prior the wrong movements.
BANDAI_CONTENT = ("bow", "bye", "byebye", "call", "guide", "respond", "wave-both-hands", "wave-left-hand",
                  "wave-right-hand", "raise-up-both-hands", "raise-up-left-hand", "raise-up-right-hand")
DOMAINS = ("beat2", "bandai_d1", "bandai_d2")
CACHE_DIR = paths.cache_dir("gesture")


class GestureDataError(UserError):
    pass


@dataclass
class Take:
    """One clip: ``rot [T, 55, 4]`` local SMPL-X rotations, ``root [T, 3]``
    pelvis positions (metres, Z up), ``audio`` path or None, ``domain`` in
    DOMAINS, ``has_fingers``; ``start`` is the first frame within the source
    file (non-zero for the held-out tail)."""

    name: str
    rot: np.ndarray
    root: np.ndarray
    domain: str
    has_fingers: bool
    audio: str = None
    start: int = 0
    meta: dict = field(default_factory=dict)

    @property
    def num_frames(self) -> int:
        return len(self.rot)

    def part(self, a: int, b: int, suffix: str) -> "Take":
        return Take(self.name + suffix, self.rot[a:b], self.root[a:b], self.domain, self.has_fingers,
                    self.audio, self.start + a, dict(self.meta))


def positions(rot: np.ndarray, root: np.ndarray) -> np.ndarray:
    """World joint positions ``[T, 55, 3]`` (metres, Z up) of SMPL-X rotations
    ``[T, 55, 4]`` with pelvis positions ``root [T, 3]`` (forward kinematics
    on the approximate rest skeleton)."""
    from ..motion import Motion
    from ..smplx_motion import smplx_rest_skeleton

    return Motion(smplx_rest_skeleton(), rot, root, FPS).world_positions()


def find_paired(data_dir) -> list:
    """``[(npz, wav)]`` BEAT2-format pairs anywhere under ``data_dir``."""
    data_dir = Path(data_dir)
    pairs = []
    for npz in sorted(data_dir.rglob("*.npz")):
        if npz.parent.name == "smplxflame_30":
            wav = npz.parent.parent / "wave16k" / (npz.stem + ".wav")
        else:
            wav = npz.with_suffix(".wav")
        if wav.exists():
            pairs.append((npz, wav))
    return pairs


def find_speech_only(data_dir) -> list:
    """BEAT2 wavs with no motion file (held-out speech for evaluation)."""
    data_dir = Path(data_dir)
    paired = {w for _, w in find_paired(data_dir)}
    out = []
    for wav in sorted(data_dir.rglob("*.wav")):
        beat_like = wav.parent.name in ("wave16k", "beat2_speech_gesture_sample")
        if beat_like and wav not in paired:
            out.append(wav)
    return out


def find_bandai(data_dir) -> list:
    data_dir = Path(data_dir)
    files = []
    for folder in ("bandai_namco_d1_gestures", "bandai_namco_d2_hand_gestures"):
        for f in sorted((data_dir / folder).glob("bvh/*.bvh*")):
            content = f.name.split("_")[1]
            if content in BANDAI_CONTENT:
                files.append(f)
    return files


def load_paired_take(npz, wav) -> Take:
    from ..smplx_motion import read_smplx_npz

    m = read_smplx_npz(npz)
    if abs(m.fps - FPS) > 1e-3:
        from ..resample import resample

        m = resample(m, FPS)
    return Take(Path(npz).stem, m.rotations, m.root_positions, "beat2", True, str(wav))


def bandai_to_smplx(path) -> tuple:
    """A Bandai Namco BVH retargeted onto the SMPL-X rest skeleton (hips
    root motion, no IK): ``(local rotations, root positions)`` as the
    gesture dataset stores them."""
    from ..bone_mapping import auto_map
    from ..bvh import read_bvh
    from ..retarget import RetargetConfig, retarget
    from ..smplx_motion import smplx_rest_skeleton

    m = read_bvh(path)
    tgt = smplx_rest_skeleton()
    r = retarget(m, auto_map(m.skeleton).bones, tgt, auto_map(tgt).bones, RetargetConfig(root_mode="hips", ik=False, hand_ik=False))
    return r.motion.rotations.astype(np.float32), r.motion.root_positions.astype(np.float32)


def load_bandai(data_dir, *, cache: bool = True, progress=None) -> list:
    """Bandai gesture clips on the SMPL-X skeleton (cached as one npz)."""
    files = find_bandai(data_dir)
    if not files:
        return []
    key = hashlib.sha1("\n".join(f"{f.name}:{f.stat().st_size}" for f in files).encode()).hexdigest()[:12]
    cache_file = CACHE_DIR / f"bandai_{key}.npz"
    if cache and cache_file.exists():
        z = np.load(cache_file)
        names = json.loads(str(z["names"]))
        lens = z["lengths"]
        cuts = np.concatenate([[0], np.cumsum(lens)])
        return [Take(n, z["rot"][a:b].astype(np.float64), z["root"][a:b].astype(np.float64),
                     "bandai_d1" if n.startswith("dataset-1") else "bandai_d2", False)
                for n, a, b in zip(names, cuts[:-1], cuts[1:])]
    takes = []
    for i, f in enumerate(files):
        rot, root = bandai_to_smplx(f)
        name = f.name.split(".")[0]
        takes.append(Take(name, rot.astype(np.float64), root.astype(np.float64),
                          "bandai_d1" if name.startswith("dataset-1") else "bandai_d2", False))
        if progress:
            progress(i + 1, len(files))
    if cache:
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        np.savez(cache_file, names=json.dumps([t.name for t in takes]), lengths=[t.num_frames for t in takes],
                 rot=np.concatenate([t.rot for t in takes]).astype(np.float32),
                 root=np.concatenate([t.root for t in takes]).astype(np.float32))
    return takes


@dataclass
class Corpus:
    train_paired: list
    heldout_paired: list
    unpaired: list
    speech_only: list


def load_corpus(data_dir, *, with_unpaired: bool = True, progress=None) -> Corpus:
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise GestureDataError(f"data folder {data_dir} not found — pass --data with BEAT2-format takes "
                               "(smplxflame_30/*.npz + wave16k/*.wav)")
    pairs = find_paired(data_dir)
    if not pairs:
        raise GestureDataError(f"no paired speech+motion under {data_dir}: need BEAT2-format "
                               "smplxflame_30/*.npz with wave16k/*.wav (or .npz and .wav side by side)")
    train, held = [], []
    for npz, wav in pairs:
        t = load_paired_take(npz, wav)
        cut = int(round(t.num_frames * (1 - HOLDOUT)))
        train.append(t.part(0, cut, ""))
        held.append(t.part(cut, t.num_frames, "_heldout"))
    unpaired = load_bandai(data_dir, progress=progress) if with_unpaired else []
    return Corpus(train, held, unpaired, find_speech_only(data_dir))
