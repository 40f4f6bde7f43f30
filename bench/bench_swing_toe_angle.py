"""Why the swing toe clearance ratio (generated / mocap) differs by rig (issue #12, session 8).

The rig evaluation measures the swing clearance at each rig's toe joint. The
rigs' foot bones point at different angles, so after the retarget (which
keeps a flat foot flat) the toe joint of one rig sits on a different point of
the source's foot than another's. This script shows that the ratio depends
on that point:

1. Per rig (Blender): the validation mocap's first normal walk retargeted
   onto it as the evaluation does (``retarget_onto``); the mean pitch of the
   rig's ankle -> toe joint vector minus the source's (degrees; negative =
   the rig's toe joint sits above the source's toe line).
2. On the controller's skeleton (no retarget): the median swing peak of a
   point ankle + (toe - ankle) turned by that angle about the hips' lateral
   axis, for the controller's walks (16 validation paths at X Bot's scale,
   cleaned with Walk Along Path's constants) and the validation mocap (6
   normal walk and turn clips), and their ratio.

Usage:
    .venv/bin/python bench/bench_swing_toe_angle.py [--count 16] [--angles -12 -6 0 6] [--no-rigs]
"""

from __future__ import annotations

import argparse
from dataclasses import replace
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_swing_lift  # noqa: E402

from rigmind.backend.locomotion import cleanup  # noqa: E402
from rigmind.backend.locomotion import dataset  # noqa: E402
from rigmind.backend.locomotion import features  # noqa: E402
from rigmind.backend.locomotion import path_sets  # noqa: E402
from rigmind.backend.locomotion.swing_pitch import foot_pitch  # noqa: E402
from rigmind.evaluation import locomotion_rigs  # noqa: E402
from rigmind.evaluation import locomotion_rig_scores as rig_scores  # noqa: E402
from rigmind.backend.locomotion import controllers, path_pin


def pitch_deg(ankle: np.ndarray, toe: np.ndarray) -> np.ndarray:
    """``[F]`` angle (deg) of ankle -> toe below the horizontal (Z-up;
    ``swing_pitch.foot_pitch`` in degrees)."""
    return np.degrees(foot_pitch(ankle, toe))


def validation_mocap(data_dir) -> list:
    split = dataset.split_of(dataset.load_split())
    clips = [c for c in dataset.list_clips(data_dir, datasets=("d2",)) if split.get(c.file) == "validation"]
    return [c for key in locomotion_rigs.MOCAP_CLIPS
            for c in sorted((c for c in clips if f"{c.content}_{c.style_key}" == key), key=lambda c: c.file)[:2]]


def rig_offsets(data_dir, clip) -> dict:
    """``rig -> mean (rig pitch - source pitch)`` (deg) of the left foot over ``clip``."""
    from rigmind.backend.bone_mapping import match_preset
    from rigmind.backend.requests.retarget import RetargetRequest
    from rigmind.operators import retarget_scene

    m = features.load_clip(clip)
    names = list(m.skeleton.names)
    _, wp = m.world()
    src = pitch_deg(wp[:, names.index("Foot_L")], wp[:, names.index("Toes_L")])
    out = {}
    for rig in locomotion_rigs.RIGS:
        try:
            arm = locomotion_rigs.load_rig(rig, data_dir)
        except FileNotFoundError as e:
            print(f"[{rig}] skipped: {e}")
            continue
        action, _, _ = retarget_scene.retarget_onto(arm, m, match_preset(m.skeleton, "bandai_namco"),
                                                    RetargetRequest(action_name=f"mocap {clip.file}"))
        pos, _, _ = locomotion_rigs.positions_of_action(arm, action)
        p = pitch_deg(pos["foot_l"], pos["toes_l"])
        out[rig] = float(np.mean(p - src[: len(p)]))
    return out


def turned_point(ankle, toe, hip_l, hip_r, deg: float) -> np.ndarray:
    """ankle + (toe - ankle) turned by ``deg`` about the hips' horizontal
    lateral axis; negative raises the toe (the pitch falls)."""
    k = hip_l - hip_r
    k[:, 2] = 0.0
    k /= np.linalg.norm(k, axis=1, keepdims=True)
    d = toe - ankle
    th = np.radians(deg)  # about the left axis a positive angle lowers a forward point
    rot = d * np.cos(th) + np.cross(k, d) * np.sin(th) + k * np.sum(k * d, 1, keepdims=True) * (1 - np.cos(th))
    return ankle + rot


def swing_peaks_cm(motion, leg: float, angles) -> dict:
    names = list(motion.skeleton.names)
    _, wp = motion.world()
    hl, hr = wp[:, names.index("UpperLeg_L")], wp[:, names.index("UpperLeg_R")]
    out = {a: [] for a in angles}
    for s in "LR":
        ankle, toe = wp[:, names.index(f"Foot_{s}")], wp[:, names.index(f"Toes_{s}")]
        swing = ~rig_scores.planted_contacts(ankle, motion.fps, leg)
        for a in angles:
            z = turned_point(ankle, toe, hl, hr, a)[:, 2]
            out[a] += rig_scores.swing_peaks(z - np.percentile(z, 2), swing)
    return {a: float(np.median(v) * 100) for a, v in out.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=16)
    ap.add_argument("--angles", type=float, nargs="+", default=[-12.0, -6.0, 0.0, 6.0])
    ap.add_argument("--no-rigs", action="store_true")
    ap.add_argument("--data", default=str(controllers.default_data_dir()))
    ap.add_argument("--no-swing-pitch", action="store_true", help="leave the swing foot's pitch to the network")
    args = ap.parse_args(argv)
    clips = validation_mocap(args.data)
    angles = list(args.angles)
    if not args.no_rigs:
        offs = rig_offsets(args.data, clips[0])
        print("rig toe-joint pitch - source's (deg, mean over the clip):",
              ", ".join(f"{r} {v:+.1f}" for r, v in offs.items()))
        angles += [round(v, 1) for v in offs.values()]
    angles = sorted(set(angles))
    ctl = controllers.load_controller("neural")
    leg = controllers.controller_leg_length(ctl)
    mocap = [swing_peaks_cm(features.load_clip(c), leg, angles) for c in clips]
    cfg = path_pin.path_pin_config("normal")  # as Walk Along Path cleans (swing pitch included)
    if args.no_swing_pitch:
        cfg = replace(cfg, swing_pitch=None)
    gen = [swing_peaks_cm(cleanup.pin_feet(res.motion, predicted=res.contacts, feet=res.feet, config=cfg), leg, angles)
           for _, res in bench_swing_lift.walks(ctl, path_sets.random_paths(path_sets.VALIDATION_SEED, args.count), scale=1.11)]
    print("| toe point turned (deg; - = raised) | generated (cm) | mocap (cm) | ratio |\n|---|---|---|---|")
    for a in angles:
        g, m = np.median([r[a] for r in gen]), np.median([r[a] for r in mocap])
        print(f"| {a:+.1f} | {g:.1f} | {m:.1f} | {g / m:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
