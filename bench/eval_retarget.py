"""Measure retargeting quality on real rigs, as issue #3 defines it.

    .venv/bin/python bench/eval_retarget.py [--data ../shared/data] [--seconds 20]

For each target rig and each source (a Bandai-Namco walk, the BEAT2 take),
the clip is retargeted with the rig's AUTO-detected mapping. Then Blender's
evaluated pose is sampled (every 2nd frame) and these are reported:

- ee: per frame, hands, feet and head in world space, relative to the hips
  and divided by the hip-to-ankle leg length, compared with the source. The
  worst frame and joint is reported in % of leg length (target: 5%).
- foot: the highest planted ankle above its lowest height, in cm, over the
  frames where the source foot is in contact (heel-off included).
- lowest: per contact frame, the lowest point of the foot, min(ankle - rest
  ankle height, toe - rest toe height) above the floor; max and min over
  contact frames, in cm (target: max <= 2 cm).
- nan / flips: NaN in any pose, and quaternion sign flips between
  consecutive keys (dot < 0).
- torso: the smallest distance from either wrist to the torso axis (the
  segment from the hips to the neck), in % of leg length. A hand inside the
  torso would come below the torso radius, taken as 12% of leg length.

The truth mapping for the measured joints comes from the rig family's
preset. Rigs come from tests/support/rig_factory.py when it exists, else the built-in
list below.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="rigmind-eval-"))

import bpy  # noqa: E402
import numpy as np  # noqa: E402

from bench_rig import data_parser  # noqa: E402

from rigmind.backend import retarget_metrics  # noqa: E402
from rigmind.backend.retarget import foot_contacts  # noqa: E402
from rigmind.operators import retarget_scene, rig_files  # noqa: E402

EE = retarget_metrics.EFFECTORS


def evaluate(arm, motion, src_map, seconds: float, truth: dict = None) -> dict:
    """Retarget with the AUTO mapping; measure on the ``truth`` joints (the
    auto mapping's own joints when no truth is known), with the same
    measures as tests/operators/test_retarget_rigs.py (backend/retarget_metrics.py)."""
    n = min(motion.num_frames, int(seconds * motion.fps))
    clip = motion.slice(0, n)
    action, tmap, result = retarget_scene.retarget_onto(arm, clip, src_map)
    truth = {k: v for k, v in (truth or tmap.bones).items() if not k.startswith("_")}
    map_acc = float(np.mean([tmap.bones.get(c) == b for c, b in truth.items()]))
    need = ("hips", "neck", "upperarm_l", "upperarm_r", "lowerarm_l", "lowerarm_r",
            "upperleg_l", "upperleg_r", "lowerleg_l", "lowerleg_r") + EE
    bones = {c: truth[c] for c in need if c in truth}
    if "neck" not in bones:
        bones["neck"] = tmap.bones["head"]
    bones.update({c: truth[c] for c in ("toes_l", "toes_r") if c in truth})
    rest = retarget_scene.rest_positions_world(arm, bones)
    frames = list(range(0, n, 2))
    scene = bpy.context.scene
    scene_frames = [int(round(1 + f * (scene.render.fps / scene.render.fps_base) / clip.fps)) for f in frames]
    tgt = retarget_scene.sample_positions_world(arm, bones, scene_frames)

    sw = clip.world_positions()
    sidx = {c: clip.skeleton.index(src_map.bones[c]) for c in need if c in src_map.bones}
    src = {c: sw[frames, i] for c, i in sidx.items()}
    s_rest = {c: clip.skeleton.rest_positions()[i] for c, i in sidx.items()}
    err = retarget_metrics.end_effector_errors(src, s_rest, tgt, rest)
    errs, chain = err["literal"], err["per_chain"]
    # Feet during source contacts: ankle height above its own minimum.
    contacts = foot_contacts(sw, [sidx["foot_l"], sidx["foot_r"]], clip.fps, retarget_metrics.leg_length(s_rest))[frames]
    foot_h = []
    for k, c in enumerate(("foot_l", "foot_r")):
        z = tgt[c][:, 2]
        if contacts[:, k].any():
            foot_h.append(float((z[contacts[:, k]] - z.min()).max()))
    # Planted-foot acceptance (issue #3): during source contacts, the lowest
    # point of the foot, min(ankle - rest ankle height, toe - rest toe
    # height), above the floor (z = 0; rest heights are taken above the
    # floor the rig stands on at rest, result.rest_floor, which is the root
    # bone for RobotExpressive; the retarget's planted ankle level when the
    # rest pose is not standing).
    floor = result.rest_floor
    lowest = []
    for k, s in enumerate("lr"):
        if not contacts[:, k].any():
            continue
        c = contacts[:, k]
        if floor is None:
            parts = [tgt[f"foot_{s}"][c, 2] - result.foot_levels[k]]
        else:
            parts = [tgt[j][c, 2] - (rest[j][2] - floor) for j in (f"foot_{s}", f"toes_{s}") if j in tgt]
        lowest.append(np.min(parts, axis=0))
    lowest = np.concatenate(lowest) if lowest else np.full(1, np.nan)
    keys = retarget_scene.action_quaternion_keys(action, arm)
    return {
        "mapping": f"{tmap.preset} ({tmap.overall:.2f})",
        "ee_max_pct": 100 * float(errs.max()),
        "ee_worst": EE[int(errs.max(axis=1).argmax())],
        "ee_mean_pct": 100 * float(errs.mean()),
        "chain_max_pct": 100 * float(chain.max()),
        "chain_worst": EE[int(chain.max(axis=1).argmax())],
        "map_acc": map_acc,
        "chain_per_joint_max_pct": {c: round(100 * float(v), 1) for c, v in zip(EE, chain.max(axis=1))},
        "chain_per_joint_mean_pct": {c: round(100 * float(v), 1) for c, v in zip(EE, chain.mean(axis=1))},
        "foot_cm": 100 * max(foot_h) if foot_h else float("nan"),
        "lowest_cm": (100 * float(np.max(lowest)), 100 * float(np.min(lowest))),
        "nan": bool(any(np.isnan(q).any() for q in keys.values()) or any(np.isnan(v).any() for v in tgt.values())),
        "torso_pct": 100 * float(retarget_metrics.hand_torso_clearance(tgt, rest).min()),
        "frames": n,
    }


def builtin_rigs(data: Path):
    from rigmind.operators import mannequin

    def mann():
        bpy.ops.wm.read_factory_settings(use_empty=True)
        return mannequin.build_mannequin()["armature"], None

    def from_file(rel):
        def f():
            rig_files.load_rig_file(data / rel)
            return rig_files.find_armature(), None
        return f

    return [
        ("RigMind mannequin", mann),
        ("Ready Player Me (brunette-t)", from_file("character_rpm_arkit/brunette-t.glb")),
        ("RobotExpressive", from_file("characters/RobotExpressive.glb")),
        ("Mixamo X Bot (local only)", from_file("characters/Xbot.glb")),
    ]


def factory_rigs():
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    try:
        from support import rig_factory
    except ImportError:
        return []
    out = []
    for name, make in rig_factory.ALL_RIGS:
        def f(make=make):
            bpy.ops.wm.read_factory_settings(use_empty=True)
            return make()
        out.append((name, f))
    return out


def main():
    ap = data_parser()
    ap.add_argument("--seconds", type=float, default=20.0)
    args = ap.parse_args()
    data = Path(args.data)
    sources = [("Bandai walk", data / "bandai_namco_d2_locomotion/bvh/dataset-2_walk_normal_001.bvh.gz"),
               ("BEAT2 take", data / "beat2_speech_gesture_sample/2_scott_0_1_1.npz")]
    rigs = factory_rigs() or builtin_rigs(data)
    print("| rig | source | auto mapping | mapping = truth | end effectors / leg: max, mean (%) | worst | per chain: max (%) | worst | planted foot (cm) | planted lowest point max / min (cm) | min hand-torso axis (% leg) | NaN |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for rig_name, make in rigs:
        for src_name, src in sources:
            try:
                arm, truth = make()
                motion, smap = retarget_scene.load_source(src)
                r = evaluate(arm, motion, smap, args.seconds, truth)
                print(f"| {rig_name} | {src_name} | {r['mapping']} | {100 * r['map_acc']:.0f}% | {r['ee_max_pct']:.1f}, {r['ee_mean_pct']:.1f} | "
                      f"{r['ee_worst']} | {r['chain_max_pct']:.1f} | {r['chain_worst']} | {r['foot_cm']:.1f} | {r['lowest_cm'][0]:.1f} / {r['lowest_cm'][1]:.1f} | {r['torso_pct']:.0f} | {r['nan']} |", flush=True)
            except Exception as e:  # report, keep measuring the others
                print(f"| {rig_name} | {src_name} | error: {str(e).splitlines()[0][:120]} | | | | | | | | |", flush=True)


if __name__ == "__main__":
    main()
