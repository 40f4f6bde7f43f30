"""The reference clips the locomotion actions are made from: DeepMimic's
jump, get-ups and sneaking walk (``../shared/data/deepmimic_motions``, MIT),
kept small in ``models/locomotion_actions.npz`` so the add-on needs no data
folder at run time.

:func:`build_clip_bank` reads the clips (``deepmimic_motion.read_deepmimic``),
resamples them to :data:`BANK_FPS`, measures what the actions need (the
jump's take-off and touch-down frames, the sneak's speed and hips height)
and writes the bank with its SHA-256 recorded in ``models/MANIFEST.sha256``
(``rigmind train actions``). :func:`load_clip_bank` reads it back, checked
(``model_files``: hash, no pickles). :func:`clip_on` puts a clip on the
controller's skeleton with the project's retarget (cached per skeleton).

Arrays: rotations ``[F, J, 4]`` (w, x, y, z) local to the parent, root
positions ``[F, 3]`` metres, Blender's frame (Z up; the clips travel along
-Y, their first frame's root above the origin).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ... import paths
from ...motion import Motion

#: The clips, by the name the actions use, and their DeepMimic file stems.
CLIPS = {
    "jump": "humanoid3d_jump",
    "getup_faceup": "humanoid3d_getup_faceup",
    "getup_facedown": "humanoid3d_getup_facedown",
    "sneak": "humanoid3d_stealthy_walk",
    "walk": "humanoid3d_walk",
}
#: The bank's frame rate: the locomotion controller's.
BANK_FPS = 30.0
BANK_FILE = "locomotion_actions.npz"
#: A foot (ankle and toe) is off the ground above this height over its
#: standing level (m); the jump's flight is where both are.
FLIGHT_CLEARANCE_M = 0.03
_LOCK = threading.Lock()
_BANK = {}
_ON = {}


@dataclass
class ClipBank:
    """The clips on DeepMimic's skeleton (``deepmimic_rest_skeleton``) at
    :data:`BANK_FPS`, and ``meta``: per clip what :func:`measure_clips` found."""

    clips: dict
    meta: dict = field(default_factory=dict)


def bank_path(models_dir=None) -> Path:
    return Path(models_dir or paths.MODELS_DIR) / BANK_FILE


def _to_origin(m: Motion) -> Motion:
    """The clip moved so its first frame's root is above the origin."""
    root = m.root_positions.copy()
    root[:, :2] -= root[0, :2]
    return Motion(m.skeleton, m.rotations, root, m.fps, m.translations, name=m.name)


def read_clips(data_dir) -> dict:
    """``name -> Motion`` of :data:`CLIPS` from ``data_dir/deepmimic_motions``
    at :data:`BANK_FPS`, each starting above the origin."""
    from ...deepmimic_motion import read_deepmimic
    from ...resample import resample

    folder = Path(data_dir) / "deepmimic_motions"
    return {name: _to_origin(resample(read_deepmimic(folder / f"{stem}.txt"), BANK_FPS)) for name, stem in CLIPS.items()}


def _feet_heights(m: Motion) -> np.ndarray:
    """``[F, 4]`` heights (m) of the ankles and toes, left then right."""
    names = list(m.skeleton.names)
    ix = [names.index(n) for n in ("left_ankle", "left_toe", "right_ankle", "right_toe")]
    return m.world_positions()[:, ix, 2]


def flight_frames(m: Motion) -> tuple:
    """``(take_off, touch_down)``: the first frame with both feet (ankles and
    toes) :data:`FLIGHT_CLEARANCE_M` above their level in the first frame,
    and the first frame after it with a foot back down; the longest such
    stretch."""
    h = _feet_heights(m)
    up = np.all(h > h[0] + FLIGHT_CLEARANCE_M, axis=1)
    best, start = (0, 0), None
    for f, u in enumerate(np.append(up, False)):
        if u and start is None:
            start = f
        elif not u and start is not None:
            best = max(best, (start, f), key=lambda s: s[1] - s[0])
            start = None
    if best[1] <= best[0]:
        raise ValueError(f"clip {m.name!r} has no flight phase")
    return best


def measure_clips(clips: dict) -> dict:
    """What the actions take from the clips (metres, seconds, the clips' own
    scale): the jump's flight frames, standing hips height, apex and travel;
    the sneak's speed and its hips height over the walk's."""
    jump = clips["jump"]
    hips = jump.root_positions
    off, down = flight_frames(jump)
    stand = float(np.median(hips[:3, 2]))
    sneak, walk = clips["sneak"], clips["walk"]
    sneak_speed = float(np.linalg.norm(sneak.root_positions[-1, :2] - sneak.root_positions[0, :2]) / sneak.duration)
    return {
        "jump": {"take_off": int(off), "touch_down": int(down), "stand_hips": stand,
                 "apex_rise": float(hips[:, 2].max() - stand),
                 "flight_length": float(np.linalg.norm(hips[down, :2] - hips[off, :2])),
                 "length": float(np.linalg.norm(hips[-1, :2] - hips[0, :2]))},
        "sneak": {"speed": sneak_speed,
                  "hips_ratio": float(np.median(sneak.root_positions[:, 2]) / np.median(walk.root_positions[:, 2]))},
    }


def build_clip_bank(data_dir, models_dir=None) -> Path:
    """Write :data:`BANK_FILE` from the DeepMimic clips in ``data_dir``
    (rotations as float32) and record its SHA-256; returns its path."""
    from ...atomic_write import replaced
    from ...model_files.manifest import record

    clips = read_clips(data_dir)
    arrays = {}
    for name, m in clips.items():
        arrays[f"{name}.rotations"] = m.rotations.astype(np.float32)
        arrays[f"{name}.root_positions"] = m.root_positions.astype(np.float32)
    meta = {"fps": BANK_FPS, "source": "DeepMimic humanoid3d clips (xbpeng/DeepMimic, MIT), ../shared/data/deepmimic_motions",
            "clips": CLIPS, "measures": measure_clips(clips)}
    arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
    out = bank_path(models_dir)
    with replaced(out, ".tmp.npz") as tmp:
        np.savez_compressed(tmp, **arrays)
    record(out)
    with _LOCK:
        _BANK.clear()
        _ON.clear()
    return out


def load_clip_bank(models_dir=None) -> ClipBank:
    """The bank, read once (checked against the models manifest; no pickles)."""
    path = bank_path(models_dir)
    with _LOCK:
        if path in _BANK:
            return _BANK[path]
        from ...deepmimic_motion import deepmimic_rest_skeleton
        from ...model_files import ModelFileError
        from ...model_files.manifest import verify

        if not path.is_file():
            raise ModelFileError(f"{path}: the locomotion action clips are missing; reinstall RigMind, or rebuild "
                                 "them with `rigmind train actions`")
        verify(path)
        sk = deepmimic_rest_skeleton()
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            clips = {name: Motion(sk, z[f"{name}.rotations"].astype(np.float64),
                                  z[f"{name}.root_positions"].astype(np.float64), float(meta["fps"]), name=name)
                     for name in meta["clips"]}
        bank = _BANK[path] = ClipBank(clips, meta["measures"])
        return bank


def clip_on(skeleton, name: str, stand: Motion, models_dir=None) -> Motion:
    """Clip ``name`` on ``skeleton`` (the controller's, mapped by the Bandai
    preset), retargeted (``backend.retarget``; the root's travel scaled by
    the leg-length ratio) onto its standing pose ``stand`` (one frame, e.g.
    a walk's first; :func:`~...retarget.standing_rest`); cached per skeleton and pose."""
    from ...bone_mapping import match_preset
    from ...retarget import RetargetConfig, retarget, standing_rest
    from ..controllers import bandai_bone_map

    bank = load_clip_bank(models_dir)
    pose = np.ascontiguousarray(np.asarray(stand.rotations[0], dtype=np.float64)[1:])
    key = (id(skeleton), tuple(skeleton.names), name, str(bank_path(models_dir)), pose.round(9).tobytes())
    with _LOCK:
        if key in _ON:
            return _ON[key]
    src = bank.clips[name]
    res = retarget(src, match_preset(src.skeleton, "deepmimic").bones, standing_rest(skeleton, stand),
                   bandai_bone_map(skeleton).bones, RetargetConfig())
    r = res.motion
    motion = Motion(skeleton, r.rotations, r.root_positions, r.fps, r.translations, name=name)
    with _LOCK:
        _ON[key] = motion
    return motion


def clip_leg_length() -> float:
    """The DeepMimic skeleton's mean hip-to-ankle leg length (m): a clip on a
    rig travels (and rises) by the rig's leg length over this."""
    from ...bone_mapping import match_preset
    from ...deepmimic_motion import deepmimic_rest_skeleton
    from ...retarget import joint_indices, leg_length

    sk = deepmimic_rest_skeleton()
    return float(leg_length(sk, joint_indices(dict(match_preset(sk, "deepmimic").bones), sk, "source")))


def default_jump(rig_leg_m: float, models_dir=None) -> tuple:
    """``(height, length)`` (m) of the clip's jump on a rig whose legs are
    ``rig_leg_m`` long: the hips' apex over standing and their air travel."""
    jump = load_clip_bank(models_dir).meta["jump"]
    k = float(rig_leg_m) / clip_leg_length()
    return jump["apex_rise"] * k, jump["flight_length"] * k


def default_crouch_speed(leg_m: float, models_dir=None) -> float:
    """The sneak clip's speed (m/s) on legs ``leg_m`` long (a rig's, or the
    controller skeleton's): the crouched gait's own speed."""
    return load_clip_bank(models_dir).meta["sneak"]["speed"] * float(leg_m) / clip_leg_length()


def main_build(argv=None) -> int:
    """``rigmind train actions [--data DIR] [--out-dir DIR]``: rebuild the bank."""
    import argparse

    from ..controllers import default_data_dir

    ap = argparse.ArgumentParser(prog="rigmind train actions",
                                 description="Rebuild models/locomotion_actions.npz from ../shared/data/deepmimic_motions")
    ap.add_argument("--data", help="folder holding deepmimic_motions (default $RIGMIND_DATA or ../shared/data)")
    ap.add_argument("--out-dir", help="folder to write into (default: the package's models/)")
    args = ap.parse_args(argv)
    data = Path(args.data) if args.data else default_data_dir()
    if not (data / "deepmimic_motions").is_dir():
        from ...errors import UserError

        raise UserError(f"--data {data}: no deepmimic_motions folder in it; give the folder that holds it")
    if args.out_dir:
        Path(args.out_dir).mkdir(parents=True, exist_ok=True)
    out = build_clip_bank(data, args.out_dir)
    print(f"wrote {out} ({out.stat().st_size} bytes); measures: {json.dumps(load_clip_bank(args.out_dir).meta)}")
    return 0


__all__ = ["CLIPS", "BANK_FPS", "BANK_FILE", "FLIGHT_CLEARANCE_M", "ClipBank", "bank_path", "read_clips",
           "flight_frames", "measure_clips", "build_clip_bank", "load_clip_bank", "clip_on", "clip_leg_length", "default_jump", "default_crouch_speed",
           "main_build"]
