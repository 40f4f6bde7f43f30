"""Walk Along Path measured where the user sees it: on the rig, in the scene
(``rigmind eval locomotion --rigs``).

For a rig in the scene and a path (``[N, 2]`` m, optional speeds), bake the
walk with :func:`rigmind.operators.locomotion_scene.walk_along_path`, read
Blender's *evaluated* pose frame by frame (constraints, Rigify's DEF- bones,
the object transform included) and score it against the drawn path
(:mod:`.locomotion_rig_scores`, pure). The rigs: the mannequin, X Bot, a Ready
Player Me avatar and a generated Rigify rig, with the validation mocap
retargeted onto each as the reference.

Units: metres, seconds, radians; Blender Z-up. Needs bpy (imported inside
the functions).
"""

from __future__ import annotations

import time

import numpy as np

from .locomotion_rig_scores import CANONICAL_BODY, format_markdown, score_take, style_accuracy, summarize


def evaluated_positions(arm, bones: dict, frames) -> dict:
    """``canonical -> [F, 3]`` world positions (m) of the bones' heads in the
    evaluated pose at scene ``frames`` (matrix_world x pose matrix, read with
    foreach_get per frame)."""
    import bpy

    scene = bpy.context.scene
    names = list(bones)
    order = [arm.pose.bones.find(bones[c]) for c in names]
    buf = np.empty(len(arm.pose.bones) * 16, dtype=np.float32)
    out = np.empty((len(frames), len(names), 3))
    saved = scene.frame_current
    try:
        for i, f in enumerate(frames):
            scene.frame_set(int(f))
            arm.pose.bones.foreach_get("matrix", buf)
            heads = buf.reshape(-1, 4, 4).transpose(0, 2, 1)[order][:, :3, 3]
            mw = np.array([list(r) for r in arm.matrix_world])
            out[i] = heads @ mw[:3, :3].T + mw[:3, 3]
    finally:
        scene.frame_set(saved)
    return {c: out[:, k] for k, c in enumerate(names)}


def bake_and_score(arm, points, *, style="normal", speed=1.3, controller=None, frames_step: int = 1) -> dict:
    """Bake Walk Along Path on ``arm`` (``points [N, 2]`` or ``[N, 3]`` with
    speeds) and score the evaluated take (:func:`score_take`); adds
    ``bake_s`` (wall seconds of the bake) and ``action``."""
    from ..backend.requests.walk import WalkPathRequest
    from ..operators import locomotion_scene
    from ..operators import retarget_scene

    t0 = time.perf_counter()
    action = locomotion_scene.walk_along_path(arm, WalkPathRequest(points=points, style=style, speed=speed), controller=controller)
    bake_s = time.perf_counter() - t0
    tmap = retarget_scene.target_mapping(arm)
    bones = {c: tmap.bones[c] for c in CANONICAL_BODY if tmap.bones.get(c)}
    a, b = (int(round(x)) for x in action.frame_range)
    frames = list(range(a, b + 1, frames_step))
    pos = evaluated_positions(arm, bones, frames)
    import bpy

    fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base / frames_step
    res = score_take(pos, np.asarray(points, dtype=np.float64)[:, :2], fps, locomotion_scene.rig_leg_length(arm),
                     toe_rest=toe_rest_heights(arm, bones))
    res.update(bake_s=bake_s, action=action.name)
    return res


def toe_rest_heights(arm, bones: dict) -> dict:
    """``canonical -> m``: the foot and toe bones' rest head heights in the
    world: where a flat, planted foot has them (every rig measured here
    stands on z = 0 at rest)."""
    mw = np.array([list(r) for r in arm.matrix_world])
    return {c: float((mw @ np.append(np.array(arm.data.bones[bones[c]].head_local), 1.0))[2])
            for c in ("foot_l", "foot_r", "toes_l", "toes_r") if c in bones}




RIGS = ("mannequin", "xbot", "rpm", "rigify")


#: Validation mocap clips retargeted onto each rig as the reference (normal
#: style: two straight walks and a turn each way).
MOCAP_CLIPS = ("walk_normal", "walk-turn-left_normal", "walk-turn-right_normal")


def load_rig(name: str, data_dir):
    """A fresh scene with the rig ``name`` (see :data:`RIGS`); its armature."""
    import bpy

    from pathlib import Path

    from ..operators import mannequin, rig_files

    data_dir = Path(data_dir)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    if name == "mannequin":
        return mannequin.build_mannequin()["armature"]
    if name in ("xbot", "rpm"):
        f = data_dir / ("characters/Xbot.glb" if name == "xbot" else "character_rpm_arkit/brunette-t.glb")
        if not f.is_file():
            raise FileNotFoundError(f"{f} is absent")
        rig_files.load_rig_file(f)
        return rig_files.find_armature()
    if name == "rigify":
        import addon_utils

        if not addon_utils.check("rigify")[1]:
            addon_utils.enable("rigify", default_set=True)
        bpy.ops.object.armature_human_metarig_add()
        meta = bpy.context.view_layer.objects.active
        bpy.ops.pose.rigify_generate()
        rig = bpy.context.view_layer.objects.active
        data = meta.data
        bpy.data.objects.remove(meta)
        bpy.data.armatures.remove(data)
        return rig
    raise ValueError(f"unknown rig {name!r}; use one of {', '.join(RIGS)}")


def positions_of_action(arm, action):
    import bpy

    from ..operators import retarget_scene

    tmap = retarget_scene.target_mapping(arm)
    bones = {c: tmap.bones[c] for c in CANONICAL_BODY if tmap.bones.get(c)}
    a, b = (int(round(x)) for x in action.frame_range)
    fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base
    return evaluated_positions(arm, bones, range(a, b + 1)), fps, bones


def mocap_reference(arm, data_dir, per_content: int = 2) -> list:
    """Scores (:func:`score_take`, no path) of validation mocap clips
    (:data:`MOCAP_CLIPS`) retargeted onto ``arm`` the way a walk is
    (``retarget_onto``, hips root motion), read from the evaluated pose."""
    from ..backend.bone_mapping import match_preset
    from ..backend.requests.retarget import RetargetRequest
    from ..backend.locomotion import dataset
    from ..backend.locomotion import features
    from ..operators import locomotion_scene
    from ..operators import retarget_scene

    split = dataset.split_of(dataset.load_split())
    clips = [c for c in dataset.list_clips(data_dir, datasets=("d2",)) if split.get(c.file) == "validation"]
    out = []
    for key in MOCAP_CLIPS:
        mine = sorted((c for c in clips if f"{c.content}_{c.style_key}" == key), key=lambda c: c.file)[:per_content]
        for c in mine:
            m = features.load_clip(c)
            action, _, _ = retarget_scene.retarget_onto(arm, m, match_preset(m.skeleton, "bandai_namco"),
                                                        RetargetRequest(action_name=f"mocap {c.file}"))
            pos, fps, bones = positions_of_action(arm, action)
            r = score_take(pos, None, fps, locomotion_scene.rig_leg_length(arm), toe_rest=toe_rest_heights(arm, bones))
            r["clip"] = c.file
            out.append(r)
    return out


def evaluate_rig(name, data_dir, paths, *, style="normal", controller=None, verbose=False) -> dict:
    """Every path of ``paths`` (:class:`~..backend.locomotion.path_sets.RandomPath`)
    baked on rig ``name`` at its speeds (x the style's default on that rig)
    and scored, and the mocap reference on the same rig."""
    from ..backend.locomotion.controllers import load_controller
    from ..backend.locomotion.walk_speeds import resolve_speed
    from ..operators import locomotion_scene

    arm = load_rig(name, data_dir)
    ctl = controller or load_controller("neural")
    scale = locomotion_scene.path_scale(arm, ctl)
    default = resolve_speed(None, style, "walk", scale)[0]
    takes = []
    for p in paths:
        pts = np.column_stack([p.points, p.speeds(default)])
        r = bake_and_score(arm, pts, style=style, controller=ctl)
        r.update(path=p.name, length_m=p.length, turns_deg=[round(float(t)) for t in p.turns_deg])
        takes.append(r)
        if verbose:
            print(f"[{name}] {p.name}: mean {r['mean_cm']:.1f} max {r['max_cm']:.1f} final {r['final_cm']:.1f} cm, "
                  f"heading {r['heading_deg']:.1f} deg, cv {r['hip_speed_cv']:.3f}, bake {r['bake_s']:.2f} s", flush=True)
    mocap = mocap_reference(arm, data_dir)
    return {"rig": name, "armature": arm.name, "bones": len(arm.data.bones), "leg_scale": scale,
            "default_speed": default, "takes": takes, "mocap": mocap}


def main_rig_eval(argv=None) -> int:
    """``rigmind eval locomotion --rigs [--set held-out|validation] [--count N]
    [--rig NAME ...] [--out FILE] [--json FILE]``."""
    import argparse
    import datetime
    import json
    import sys
    from pathlib import Path

    from ..backend.locomotion import path_sets
    from ..backend.locomotion.controllers import default_data_dir, load_controller
    from ..backend.locomotion.eval import machine_description

    ap = argparse.ArgumentParser(prog="rigmind eval locomotion --rigs",
                                 description="Walk Along Path baked on real rigs, measured on the evaluated pose.")
    ap.add_argument("--data", default=str(default_data_dir()))
    ap.add_argument("--set", default="held-out", choices=["held-out", "validation"])
    ap.add_argument("--count", type=int, default=8)
    ap.add_argument("--rig", action="append", choices=list(RIGS), help="rig(s) to measure (default: all)")
    ap.add_argument("--style", default="normal")
    ap.add_argument("--out", default=None, help="markdown report (default bench/locomotion_rigs_<set>.md)")
    ap.add_argument("--json", help="raw results as JSON")
    ap.add_argument("--no-styles", action="store_true", help="skip the style accuracy (all 7 styles on every path)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(list(argv or []))
    seed = path_sets.HELD_OUT_SEED if args.set == "held-out" else path_sets.VALIDATION_SEED
    paths = path_sets.random_paths(seed, args.count)
    ctl = load_controller("neural")
    rigs = []
    for name in args.rig or RIGS:
        try:
            rigs.append(evaluate_rig(name, args.data, paths, style=args.style, controller=ctl, verbose=args.verbose))
        except FileNotFoundError as e:
            print(f"[{name}] skipped: {e}", file=sys.stderr)
    summaries = [summarize(r) for r in rigs]
    acc = None if args.no_styles else style_accuracy(paths, ctl, data_dir=args.data)
    meta = {
        "style_accuracy": acc,
        "set": args.set, "seed": seed, "style": args.style, "rigs": rigs,
        "command": "rigmind eval locomotion --rigs " + " ".join(argv or []),
        "machine": machine_description(), "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "paths_desc": (f"{len(paths)} random paths, seed {seed} ({args.set}), {path_sets.LEG_RANGE_M[0]}-{path_sets.LEG_RANGE_M[1]} m legs, "
                       f"{path_sets.TURN_RANGE_DEG[0]:g}-{path_sets.TURN_RANGE_DEG[1]:g} deg turns, per-point speed "
                       f"{path_sets.SPEED_FRACTION[0]}-{path_sets.SPEED_FRACTION[1]} x default"),
    }
    md = format_markdown(summaries, meta)
    from ..backend.paths import BENCH_DIR  # the module name "paths" is the path list here

    out = Path(args.out or BENCH_DIR / f"locomotion_rigs_{args.set}.md")
    out.write_text(md, encoding="utf-8")
    if args.json:
        Path(args.json).write_text(json.dumps({"summaries": summaries, "meta": meta}, indent=1, default=str),
                                   encoding="utf-8")
    print(md)
    print(f"wrote {out}")
    return 0


__all__ = ["evaluated_positions", "bake_and_score", "toe_rest_heights", "RIGS", "MOCAP_CLIPS", "load_rig",
           "positions_of_action", "mocap_reference", "evaluate_rig", "main_rig_eval"]
