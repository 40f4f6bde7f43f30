"""What a viewer sees of Generate Gesture, measured on the user's rigs (issue #13).

For each rig (the mannequin, the Mixamo X Bot, the Ready Player Me avatar)
and each speech take (``speech_multilingual``: German, English, Spanish,
Mandarin; the first ``--seconds`` of each), Generate Gesture runs as a user
runs it (``generate_gesture_on_rig``, Idle base) and the baked scene is
sampled frame by frame (Blender's evaluated pose: bone heads in world
space). The reference row is the real BEAT2 take (``2_scott_0_1_1.npz``)
retargeted onto the same rig with the same retargeter. Metrics:
:mod:`..backend.gesture.viewer_metrics`:

- standing foot skate (cm/frame, ankles, height-weighted), largest ankle lift (cm) and foot hover
  (median height of the lower ankle above its rest-pose height, cm: a foot held in the air);
- longest frozen stretch (frames in which no mapped bone moves 0.3 mm);
- seam periodicity at the window strides (48: the old generator's, 32: the current one's);
- wrist height / forward distance: 1-D Wasserstein distances (cm) to the real take on the same rig;
- pops: the largest acceleration of an elbow or a wrist in any frame (mm/frame²); hands through the
  body: the least distance of a wrist from the hips → neck axis (fraction of leg length; under 0.12 = inside);
- Keep Legs: the trunk's forward lean (hips → neck, degrees) of a baked walk alone and with a gesture layered over it;
- gaze (Ready Player Me, which has eyeLook* keys and eye bones): saccade rate, fixation durations, eye bones keyed.

    rigmind eval gesture --viewer [--seconds 30] [--rigs mannequin,xbot,rpm] [--json out.json]

Runs inside Blender's Python (bpy as a module); the CLI routes ``--viewer`` here.
"""

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from ..backend import retarget_metrics
from ..backend.gesture import viewer_metrics
from ..backend import paths

REPO_ROOT = paths.PACKAGE_ROOT


LANGS = ("silero_de.wav", "silero_en.wav", "silero_es.wav", "zh_aishell-BAC009S0724W0121.wav")
REAL = "beat2_speech_gesture_sample/2_scott_0_1_1.npz"


def load_rig(kind, data):
    """A fresh scene with the rig: ``(armature, face mesh with eyeLook* keys or None)``."""
    import bpy

    from ..operators import mannequin, rig_files

    bpy.ops.wm.read_factory_settings(use_empty=True)
    if kind == "mannequin":
        return mannequin.build_mannequin()["armature"], None
    path = data / ("characters/Xbot.glb" if kind == "xbot" else "character_rpm_arkit/brunette-t.glb")
    rig_files.load_rig_file(path)
    arm = rig_files.find_armature()
    face = None
    if kind == "rpm":
        meshes = [o for o in bpy.data.objects if o.type == "MESH" and o.data.shape_keys is not None
                  and any(k.name == "eyeLookInLeft" for k in o.data.shape_keys.key_blocks)]
        face = max(meshes, key=lambda o: len(o.data.vertices)) if meshes else None
    return arm, face


def sample(arm, tgt_map, first, last):
    from ..operators.retarget_scene import sample_positions_world

    bones = {c: b for c, b in tgt_map.bones.items() if b in arm.pose.bones}
    pos = sample_positions_world(arm, bones, range(first, last + 1))
    return bones, pos


def measure(pos, rest, fps=30.0):
    allj = np.stack([pos[c] for c in pos], axis=1)
    ank = np.stack([pos["foot_l"], pos["foot_r"]], axis=1)
    up = [c for c in ("spine", "spine1", "spine2", "chest", "neck", "head", "shoulder_l", "shoulder_r", "upperarm_l",
                      "upperarm_r", "lowerarm_l", "lowerarm_r", "hand_l", "hand_r") if c in pos]
    upper = np.stack([pos[c] for c in up], axis=1)
    fwd = viewer_metrics.facing(pos["upperleg_l"], pos["upperleg_r"])
    floor = float(np.percentile(ank[..., 2], 1))
    hs = viewer_metrics.hand_space(np.stack([pos["hand_l"], pos["hand_r"]], axis=1), pos["hips"], fwd, floor)
    arms = np.stack([pos[c] for c in ("lowerarm_l", "lowerarm_r", "hand_l", "hand_r")], axis=1)
    return {"arm_accel_max_mm": viewer_metrics.largest_acceleration(arms),
            "hand_torso_clearance_min": float(retarget_metrics.hand_torso_clearance(pos, rest).min()),
            "skate_cm_per_frame": viewer_metrics.standing_foot_skate(ank), "ankle_lift_cm": 100 * viewer_metrics.foot_lift(ank),
            "foot_hover_cm": viewer_metrics.foot_hover(ank, [rest["foot_l"][2], rest["foot_r"][2]]),
            "frozen_frames": viewer_metrics.longest_frozen_stretch(allj), "seam48": viewer_metrics.seam_periodicity(upper, 48),
            "seam32": viewer_metrics.seam_periodicity(upper, 32),
            # The same ratio where no joins repeat: what the seam columns read above.
            "seam48_floor": viewer_metrics.off_stride_periodicity(upper, 48),
            "seam32_floor": viewer_metrics.off_stride_periodicity(upper, 32),
            "lean_deg": float(viewer_metrics.trunk_lean(pos["hips"], pos["neck"], fwd).mean()),
            "wrist_height_median_m": float(np.median(hs[:, 0])),
            "wrist_forward_median_m": float(np.median(hs[:, 1]))}, hs


def clip_wav(src, seconds, folder, name=None):
    """The first ``seconds`` of the speech file ``src`` written as a new file
    ``name`` (default ``src``'s own name) in ``folder`` (a temporary one);
    ``src`` is only read, whatever path ``--langs`` gave it."""
    import soundfile as sf

    src, out = Path(src), Path(folder) / (name or Path(src).name)
    if out.resolve() == src.resolve():
        raise ValueError(f"{src}: would cut the speech file in place; give another folder")
    x, sr = sf.read(src, dtype="float32")
    sf.write(out, x[: int(seconds * sr)], sr)
    return out


def eye_stats(arm, face, action, first, last):
    """Gaze from the baked scene: eye-bone world directions (yaw, pitch) when
    the rig has eye bones, and the eyeLook* shape-key ranges."""
    import bpy

    out = {}
    eyes = [b for b in ("LeftEye", "RightEye") if b in arm.pose.bones]
    keyed = set()
    if arm.animation_data and arm.animation_data.action:
        for lay in arm.animation_data.action.layers:
            for st in lay.strips:
                for bag in st.channelbags:
                    keyed |= {fc.data_path.split('"')[1] for fc in bag.fcurves if fc.data_path.startswith("pose.bones")}
    out["eye_bones"] = eyes
    out["eye_bones_keyed"] = [b for b in eyes if b in keyed]
    scene = bpy.context.scene
    if eyes:
        head = arm.pose.bones.get("Head")
        dirs = []
        for f in range(first, last + 1):
            scene.frame_set(f)
            mw = np.array(arm.matrix_world)
            hm = mw @ np.array(head.matrix)
            em = mw @ np.array(arm.pose.bones[eyes[0]].matrix)
            # The eye's Y axis (bone direction) in the head's frame.
            d = np.linalg.inv(hm[:3, :3]) @ em[:3, 1]
            dirs.append(d / np.linalg.norm(d))
        d = np.array(dirs)
        d0 = d.mean(axis=0)
        d0 /= np.linalg.norm(d0)
        # yaw/pitch around the mean direction (small angles): two axes orthogonal to it
        a = np.cross(d0, [0, 0, 1.0]) if abs(d0[2]) < 0.9 else np.cross(d0, [1.0, 0, 0])
        a /= np.linalg.norm(a)
        b = np.cross(d0, a)
        yp = np.stack([np.arcsin(np.clip(d @ a, -1, 1)), np.arcsin(np.clip(d @ b, -1, 1))], axis=1)
        out["bones"] = viewer_metrics.gaze_statistics(yp, 30.0)
    if face is not None and face.data.shape_keys.animation_data and face.data.shape_keys.animation_data.action:
        act = face.data.shape_keys.animation_data.action
        vals = {}
        for lay in act.layers:
            for st in lay.strips:
                for bag in st.channelbags:
                    for fc in bag.fcurves:
                        name = fc.data_path.split('"')[1]
                        if name.startswith("eyeLook"):
                            v = np.empty(2 * len(fc.keyframe_points))
                            fc.keyframe_points.foreach_get("co", v)
                            vals[name] = v[1::2]
        if vals:
            out["eyeLook_max"] = float(max(v.max() for v in vals.values()))
            h = vals.get("eyeLookOutLeft", 0) - vals.get("eyeLookInLeft", 0)
            v = vals.get("eyeLookUpLeft", 0) - vals.get("eyeLookDownLeft", 0)
            out["shapes"] = viewer_metrics.gaze_statistics(np.radians(45.0) * np.stack([h, v], axis=1), 30.0)
    return out


def main_viewer_eval(argv=None) -> int:
    """``rigmind eval gesture --viewer``: the viewer metrics on baked rigs (see the module docstring)."""
    ap = argparse.ArgumentParser(prog="rigmind eval gesture --viewer", description="Viewer metrics of Generate Gesture on baked rigs.")
    ap.add_argument("--data", type=Path, default=paths.data_dir())
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--rigs", default="mannequin,xbot,rpm")
    ap.add_argument("--langs", default=",".join(LANGS),
                    help="speech files: names under speech_multilingual, or paths (only read, cut in a temporary folder)")
    ap.add_argument("--no-keep-legs", action="store_true")
    ap.add_argument("--seed", type=int, default=0, help="the takes' seed (the measures move with it; compare over several)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    import bpy

    from ..backend.smplx_motion import read_smplx_npz
    from ..backend.requests.gesture import GestureRequest
    from ..backend.requests.retarget import RetargetRequest
    from ..backend.requests.walk import WalkCycleRequest
    from ..operators import gesture_scene, locomotion_scene
    from ..operators.retarget_scene import rest_positions_world, retarget_onto, target_mapping

    try:
        import torch

        torch.set_num_threads(2)
    except ImportError:  # the extension's own runtime (Blender 5.2 wheels) runs the models on ONNX Runtime alone
        pass

    tmp = Path(tempfile.mkdtemp())
    real = read_smplx_npz(args.data / REAL)
    rows = []
    for rig in args.rigs.split(","):
        arm, face = load_rig(rig, args.data)
        tgt = target_mapping(arm)
        rest = rest_positions_world(arm, {c: b for c, b in tgt.bones.items() if b in arm.pose.bones})
        _, _, _ = retarget_onto(arm, real, gesture_scene.smplx_source_map(),
                                RetargetRequest(root_mode="hips", ik=True, action_name="real", set_scene_fps=True),
                                tgt_map=tgt)
        _, pos = sample(arm, tgt, 1, real.num_frames)
        m, ref_hs = measure(pos, rest)
        rows.append({"rig": rig, "take": "real BEAT2 (reference)", **m})
        print(json.dumps(rows[-1]), flush=True)
        for lang in args.langs.split(","):
            wav = clip_wav(args.data / "speech_multilingual" / lang, args.seconds, tmp)
            t0 = time.perf_counter()
            res = gesture_scene.generate_gesture_on_rig(arm, GestureRequest(audio_path=wav, seed=args.seed, start_frame=1),
                                                        face if lang == LANGS[1] else None)
            dt = time.perf_counter() - t0
            _, pos = sample(arm, tgt, 1, res.frames)
            m, hs = measure(pos, rest)
            m.update({f"hands_{k}": v for k, v in viewer_metrics.hand_space_distance(hs, ref_hs).items()})
            row = {"rig": rig, "take": lang, "seconds": res.seconds, "command_s": dt, **m}
            if rig == "rpm" and lang == LANGS[1]:
                row["gaze"] = eye_stats(arm, face, res.action, 1, res.frames)
            rows.append(row)
            print(json.dumps(row), flush=True)
        if not args.no_keep_legs:
            bpy.context.scene.frame_set(1)
            for fc in list(arm.animation_data.nla_tracks):
                arm.animation_data.nla_tracks.remove(fc)
            arm.animation_data.action = None
            walk = locomotion_scene.bake_walk_cycle(arm, WalkCycleRequest(style="normal", gait="walk", speed=1.3, in_place=False))
            n = int(args.seconds * 30)
            _, wpos = sample(arm, tgt, 1, int(walk.frame_range[1]))
            fwd = viewer_metrics.facing(wpos["upperleg_l"], wpos["upperleg_r"])
            walk_lean = viewer_metrics.trunk_lean(wpos["hips"], wpos["neck"], fwd)
            wav = clip_wav(args.data / "speech_multilingual" / LANGS[1], args.seconds, tmp, "kl.wav")
            res = gesture_scene.generate_gesture_on_rig(arm, GestureRequest(audio_path=wav, seed=args.seed, base="keep_legs"),
                                                        None)
            _, kpos = sample(arm, tgt, 1, min(res.frames, n))
            fwd = viewer_metrics.facing(kpos["upperleg_l"], kpos["upperleg_r"])
            kl = viewer_metrics.trunk_lean(kpos["hips"], kpos["neck"], fwd)
            rows.append({"rig": rig, "take": "keep_legs over walk", "walk_lean_mean_deg": float(walk_lean.mean()),
                         "keep_legs_lean_mean_deg": float(kl.mean()), "keep_legs_lean_max_deg": float(kl.max()),
                         "lean_difference_deg": float(kl.mean() - walk_lean.mean())})
            print(json.dumps(rows[-1]), flush=True)
    out = {"rows": rows, "seconds_per_take": args.seconds, "seed": args.seed, "machine": f"{platform.machine()} ({os.cpu_count()} cores)",
           "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "python": sys.version.split()[0]}
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    print(markdown(out))
    return 0


def markdown(result: dict) -> str:
    """The rows as Markdown tables (takes, then Keep Legs)."""
    lines = ["| rig | take | skate cm/frame | hover cm | lift cm | frozen | seam 48 / 32 | wrist h / fwd (m) | hands W1 h + f cm "
             "| arm accel max mm/f² | hand-torso min |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        if "skate_cm_per_frame" in r:
            lines.append(f"| {r['rig']} | {r['take']} | {r['skate_cm_per_frame']:.3f} | {r['foot_hover_cm']:.1f} | "
                         f"{r['ankle_lift_cm']:.1f} | {r['frozen_frames']} | {r['seam48']:.2f} / {r['seam32']:.2f} | "
                         f"{r['wrist_height_median_m']:.2f} / {r['wrist_forward_median_m']:.2f} | "
                         f"{r.get('hands_height_cm', 0.0):.1f} + {r.get('hands_forward_cm', 0.0):.1f} | "
                         f"{r['arm_accel_max_mm']:.1f} | {r['hand_torso_clearance_min']:.2f} |")
    lines += ["", "| rig | walk lean ° | Keep Legs lean ° (max) | difference ° |", "|---|---|---|---|"]
    for r in result["rows"]:
        if "walk_lean_mean_deg" in r:
            lines.append(f"| {r['rig']} | {r['walk_lean_mean_deg']:.1f} | {r['keep_legs_lean_mean_deg']:.1f} "
                         f"({r['keep_legs_lean_max_deg']:.1f}) | {r['lean_difference_deg']:+.2f} |")
    for r in result["rows"]:
        if "gaze" in r:
            lines += ["", f"Gaze ({r['rig']}, {r['take']}): {json.dumps(r['gaze'])}"]
    return "\n".join(lines)


