"""The ``rigmind`` command line (also ``python -m rigmind``).

Every subcommand runs headless in-process with the PyPI ``bpy`` module.
Errors a user can cause (a missing file, an unknown format, a rig that is not
a humanoid) print one line ``rigmind <cmd>: <problem and fix>`` and exit 2.
Heavy imports (bpy, torch) happen inside the subcommand, so ``--help`` is fast.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_USER_ERROR = 2

# Subcommands whose features are still being built; each names its issue so
# the message tells the user what to expect instead of failing obscurely.
PLANNED = {
    "gesture": "speech-to-gesture generation",
    "face": "speech-to-face ARKit animation",
}


class UserError(Exception):
    pass


def _resolution(text: str):
    try:
        w, h = text.lower().split("x")
        return int(w), int(h)
    except ValueError:
        raise argparse.ArgumentTypeError(f"resolution must look like 640x360, got {text!r}") from None


def _frames(text: str):
    try:
        a, b = text.split(":")
        return int(a), int(b)
    except ValueError:
        raise argparse.ArgumentTypeError(f"frames must look like 1:120, got {text!r}") from None


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    ap = argparse.ArgumentParser(prog="rigmind", description="RigMind: neural character animation for Blender, headless.")
    ap.add_argument("--version", action="version", version=f"rigmind {__version__}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("info", help="what RigMind sees in a rig file (.blend .glb .gltf .fbx .bvh)")
    p.add_argument("rig", help="rig file")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")

    p = sub.add_parser("mannequin", help="build the procedural mannequin (armature, body, ARKit head) into a .blend")
    p.add_argument("--out", required=True, help="output .blend")

    p = sub.add_parser("export", help="export a character (and its active animation) to BVH/FBX/glTF/.blend")
    p.add_argument("--rig", required=True, help="input rig file")
    p.add_argument("--armature", help="armature object name (default: the largest)")
    p.add_argument("--out", required=True, help="output file: .bvh .fbx .glb .gltf .blend")

    p = sub.add_parser("render", help="render a .blend to a PNG still or an MP4 (with its sound strip)")
    p.add_argument("--scene", required=True, help="input .blend")
    p.add_argument("--out", required=True, help="output .png or .mp4")
    p.add_argument("--engine", default="CYCLES", choices=["CYCLES", "EEVEE", "WORKBENCH"])
    p.add_argument("--resolution", type=_resolution, default=(640, 360), help="WxH, default 640x360")
    p.add_argument("--samples", type=int, default=16)
    p.add_argument("--frames", type=_frames, help="START:END for an MP4 (default: the scene range)")
    p.add_argument("--frame", type=int, help="frame for a PNG still")

    p = sub.add_parser("retarget", help="put a clip (BVH, FBX, glTF, SMPL-X .npz) on any humanoid rig")
    p.add_argument("--src", required=True, help="source clip: .bvh .bvh.gz .fbx .glb .gltf .npz (EMAGE/BEAT2 SMPL-X)")
    p.add_argument("--rig", required=True, help="target rig file: .blend .glb .gltf .fbx")
    p.add_argument("--armature", help="target armature object name (default: the largest)")
    p.add_argument("--map", help="bone-map preset for the target (default: detect); see `rigmind info RIG`")
    p.add_argument("--root-mode", default="hips", choices=["hips", "in_place", "root_bone", "object"])
    p.add_argument("--root-bone", help="root bone for --root-mode root_bone")
    p.add_argument("--no-ik", action="store_true", help="do not lock planted feet with leg IK")
    p.add_argument("--out", required=True, help="output: .blend .bvh .fbx .glb .gltf")

    p = sub.add_parser("walk", help="generate walking on any humanoid rig: a seamless cycle, or a walk along a path")
    p.add_argument("--rig", required=True, help="target rig file: .blend .glb .gltf .fbx")
    p.add_argument("--armature", help="target armature object name (default: the largest)")
    p.add_argument("--style", default="normal", help="active, elderly, exhausted, feminine, masculine, normal or youthful")
    p.add_argument("--speed", type=float, default=1.3, help="m/s (default 1.3)")
    p.add_argument("--gait", default="walk", choices=["walk", "run"])
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--cycle", action="store_true", help="bake a looping cycle (a cyclic action)")
    how.add_argument("--path", help='ground-plane path in metres (Blender X,Y), e.g. "0,0;3,0;3,3" '
                                    '(write --path="-1,0;…" when it starts with a minus sign)')
    p.add_argument("--in-place", action="store_true", help="with --cycle: no forward root motion")
    p.add_argument("--seconds", type=float, help="--cycle: seconds of steady walking searched for the loop (default 6); "
                                                 "--path: time limit (default: what the path needs)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--controller", default="auto", choices=["auto", "neural", "motion_matching"],
                   help="auto: the trained model when present, else motion matching on --data")
    p.add_argument("--data", help="folder with bandai_namco_d2_locomotion for motion matching (default $RIGMIND_DATA or ../shared/data)")
    p.add_argument("--out", required=True, help="output: .blend .bvh .fbx .glb .gltf")

    p = sub.add_parser("train", help="train a model from ../shared/data (locomotion)", add_help=False)
    p.add_argument("what", choices=["locomotion", "gesture", "face"], help="which model")

    p = sub.add_parser("eval", help="measure a model against baselines and real data (locomotion)", add_help=False)
    p.add_argument("what", choices=["locomotion", "gesture", "face"], help="what to evaluate")

    p = sub.add_parser("demo", help="the end-to-end demo on the mannequin (what `install.py demo` runs)")
    p.add_argument("--out", default="rigmind_out/demo", help="output folder")

    for name, what in PLANNED.items():
        sub.add_parser(name, help=f"{what} (not in this version yet)", add_help=False)
    return ap


# --- commands -------------------------------------------------------------------


def cmd_info(args) -> int:
    import json

    from .operators import rig_files

    objs = rig_files.load_rig_file(args.rig)
    desc = rig_files.describe_scene(objs)
    rig_files.add_mappings(desc, objs)
    if args.json:
        print(json.dumps(desc, indent=1))
    else:
        print(rig_files.format_description(desc, Path(args.rig)))
    return 0


def cmd_mannequin(args) -> int:
    from .operators import mannequin

    out = Path(args.out)
    if out.suffix.lower() != ".blend":
        raise UserError(f"{out}: the mannequin is saved as a .blend; give --out FILE.blend")
    path = mannequin.save_mannequin(out)
    print(f"wrote {Path(path).resolve()}")
    return 0


def cmd_export(args) -> int:
    from .operators import export, rig_files

    rig_files.load_rig_file(args.rig)
    arm = rig_files.find_armature(args.armature)
    path = export.export_character(arm, args.out)
    print(f"wrote {Path(path).resolve()}")
    return 0


def cmd_render(args) -> int:
    import bpy

    from .operators import render, rig_files

    scene_path = Path(args.scene)
    if scene_path.suffix.lower() != ".blend":
        raise UserError(f"{scene_path}: render takes a .blend scene")
    rig_files.load_rig_file(scene_path)
    if args.frame is not None:
        bpy.context.scene.frame_set(args.frame)
    path = render.render(
        args.out, engine=args.engine, resolution=args.resolution, samples=args.samples, frames=args.frames
    )
    print(f"wrote {Path(path).resolve()}")
    return 0


def cmd_retarget(args) -> int:
    from .operators import export, retarget_scene, rig_files

    rig_files.load_rig_file(args.rig)
    arm = rig_files.find_armature(args.armature)
    motion, src_map = retarget_scene.load_source(args.src)
    tgt_map = retarget_scene.target_mapping(arm, preset=args.map)
    action, tgt_map, result = retarget_scene.retarget_onto(
        arm, motion, src_map, tgt_map=tgt_map, root_mode=args.root_mode, root_bone=args.root_bone, ik=not args.no_ik
    )
    print(f"source {Path(args.src).name}: {motion.num_frames} frames at {motion.fps:g} fps, mapping '{src_map.preset}'")
    print(f"target {arm.name}: mapping '{tgt_map.preset}' (confidence {tgt_map.overall:.2f}), leg scale {result.leg_scale:.3f}")
    path = export.export_character(arm, args.out)
    print(f"wrote {Path(path).resolve()} (action '{action.name}')")
    return 0


def cmd_walk(args) -> int:
    import random

    import numpy as np

    from .backend.locomotion.dataset import D2_STYLES
    from .operators import export, rig_files
    from .operators import locomotion_scene as LS

    # Check everything the user typed before the (slow) rig load and generation.
    if args.style not in D2_STYLES:
        raise UserError(f"unknown --style {args.style!r}; use one of {', '.join(D2_STYLES)}")
    points = LS.parse_path(args.path) if args.path is not None else None
    out = Path(args.out)
    if out.suffix.lower() not in export.EXPORT_SUFFIXES:
        raise UserError(f"{out}: unsupported output type; use one of {' '.join(export.EXPORT_SUFFIXES)}")
    if args.seconds is not None and not args.seconds > 0:
        raise UserError(f"--seconds must be positive, got {args.seconds:g}")
    random.seed(args.seed)
    np.random.seed(args.seed)
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(args.seed)

    rig_files.load_rig_file(args.rig)
    arm = rig_files.find_armature(args.armature)
    controller = LS.load_controller(args.controller, args.data, styles=(args.style,), gait=args.gait)
    what = type(controller).__name__
    if points is None:
        action = LS.bake_walk_cycle(arm, style=args.style, gait=args.gait, speed=args.speed, in_place=args.in_place,
                                    controller=controller, seconds=args.seconds or LS.CYCLE_SECONDS)
    else:
        action = LS.walk_along_path(arm, points, style=args.style, speed=args.speed, gait=args.gait,
                                    controller=controller, max_seconds=args.seconds)
    first, last = action.frame_range
    print(f"{what}: '{action.name}', {int(round(last - first))} frames on {arm.name}")
    # A .blend keeps the scene range the bake set (one cycle, without the
    # closing key); the exporters take the action's keyed range.
    scene = arm.users_scene[0] if arm.users_scene else None
    rng = (scene.frame_start, scene.frame_end) if scene is not None and out.suffix.lower() == ".blend" else None
    path = export.export_character(arm, args.out, frame_range=rng)
    print(f"wrote {Path(path).resolve()}")
    return 0


def cmd_demo(args) -> int:
    from . import demo

    written = demo.run(Path(args.out))
    print("\nRigMind demo wrote:")
    for label, path in written:
        print(f"  {label:<28} {Path(path).resolve()}")
    return 0


def cmd_eval(args, extra) -> int:
    if args.what == "locomotion":
        from .backend.locomotion.eval import main_eval

        return main_eval(extra)
    raise UserError(f"'eval {args.what}' is not available in this version of RigMind yet")


def cmd_train(args, extra) -> int:
    if args.what == "locomotion":
        from .backend.locomotion.train import main_train

        return main_train(extra)
    raise UserError(f"'train {args.what}' is not available in this version of RigMind yet")


def cmd_planned(args) -> int:
    raise UserError(f"'{args.command}' ({PLANNED[args.command]}) is not available in this version of RigMind yet")


# Commands whose remaining arguments go to a sub-program's own parser.
PASS_THROUGH = {"eval": cmd_eval, "train": cmd_train}
COMMANDS = {"walk": cmd_walk, "retarget": cmd_retarget, "info": cmd_info, "mannequin": cmd_mannequin, "export": cmd_export, "render": cmd_render, "demo": cmd_demo}


def main(argv=None) -> int:
    ap = build_parser()
    args, extra = ap.parse_known_args(argv)
    if extra and args.command not in PLANNED and args.command not in PASS_THROUGH:
        ap.error(f"unrecognized arguments: {' '.join(extra)}")
    if not args.command:
        ap.print_help()
        return EXIT_USER_ERROR
    try:
        if args.command in PASS_THROUGH:
            return PASS_THROUGH[args.command](args, extra)
        return COMMANDS.get(args.command, cmd_planned)(args)
    except (UserError, ValueError, FileNotFoundError) as e:
        # Backend and scene errors are ValueError subclasses whose message
        # already names the problem and the fix.
        print(f"rigmind {args.command}: {e}", file=sys.stderr)
        return EXIT_USER_ERROR
    except RuntimeError as e:
        # Blender operators report failures as RuntimeError("Error: ...").
        first = next((ln.strip() for ln in str(e).splitlines() if ln.strip()), type(e).__name__)
        print(f"rigmind {args.command}: Blender could not do it: {first.removeprefix('Error: ')}", file=sys.stderr)
        return EXIT_USER_ERROR
