"""The ``rigmind`` command line (also ``python -m rigmind``).

Every subcommand runs headless in-process with the PyPI ``bpy`` module.
Errors a user can cause (a missing file, an unknown format, a rig that is not
a humanoid) print one line ``rigmind <cmd>: <problem and fix>`` and exit 2.
Heavy imports (bpy, torch) happen inside the subcommand, so ``--help`` is fast.
"""

from __future__ import annotations

import sys


def _started_as_the_cli() -> bool:
    """Is this process the ``rigmind`` command (the console script or
    ``python -m rigmind``), not Blender, a test or a library user?"""
    main_file = str(getattr(sys.modules.get("__main__"), "__file__", "") or "").replace("\\", "/")
    return main_file.endswith(("/bin/rigmind", "/rigmind/__main__.py", "/Scripts/rigmind-script.py"))


#: A Ctrl-C while this module and its imports load (0.1-0.3 s on a loaded
#: machine) would be a KeyboardInterrupt traceback out of an import: it is
#: only noted here, and main() then cancels before doing anything.
_EARLY_CTRL_C = []
if _started_as_the_cli():
    import signal as _signal

    _signal.signal(_signal.SIGINT, lambda signum, frame: _EARLY_CTRL_C.append(signum))

import argparse  # noqa: E402 - after the Ctrl-C guard on purpose
from pathlib import Path  # noqa: E402

from .backend.atomic_write import atomic_output, check_output_path, write_atomically  # noqa: E402
from .backend.errors import Cancelled, UserError  # noqa: E402
from .backend.interrupts import is_blender_interrupt, quiet_interrupts, record_interrupts  # noqa: E402
from .backend.limits import check_options, check_path  # noqa: E402

EXIT_USER_ERROR = 2
#: A bug (anything that is not a UserError or a cancel).
EXIT_INTERNAL_ERROR = 1
#: Ctrl-C: the shell's code for SIGINT.
EXIT_CANCELLED = 130
#: stdout closed early (``rigmind info X | head -1``): the code of a process killed by SIGPIPE.
EXIT_BROKEN_PIPE = 141

# Models with `rigmind train MODEL` / `rigmind eval MODEL`: backend packages
# with train.main_train and eval.main_eval.
MODELS = ("locomotion", "gesture", "face")


#: Option lists from backend/options.py (pure: building the parser imports nothing heavy).
from .backend.options import (  # noqa: E402
    CONTROLLER_KINDS,
    EXPORT_PRESETS,
    FACE_METHODS,
    GAITS,
    GESTURE_BASES,
    GESTURE_STYLES,
    ROOT_MODES,
    RUNTIMES,
    START_POSES,
    STYLES,
    TRACK_METHODS,
    TRACK_PLACEMENTS,
    TRACKER_UP_AXES,
)


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
    ap.add_argument("--debug", action="store_true",
                    help="show the full traceback of an internal error (a bug) instead of one line and a log file")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")

    _add_info_parser(sub)
    _add_mannequin_parser(sub)
    _add_export_parser(sub)
    _add_render_parser(sub)
    _add_retarget_parser(sub)
    _add_walk_parser(sub)
    _add_face_parser(sub)
    _add_gesture_parser(sub)
    _add_track_parser(sub)
    _add_batch_parser(sub)
    _add_train_parser(sub)
    _add_eval_parser(sub)
    _add_demo_parser(sub)
    _add_debug_everywhere(sub)
    return ap


def _add_info_parser(sub) -> None:
    p = sub.add_parser("info", help="what RigMind sees in a rig file (.blend .glb .gltf .fbx .bvh)")
    p.add_argument("rig", help="rig file")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


def _add_mannequin_parser(sub) -> None:
    p = sub.add_parser("mannequin", help="build the procedural mannequin (armature, body, ARKit head) into a .blend")
    p.add_argument("--out", required=True, help="output .blend")


def _add_export_parser(sub) -> None:
    p = sub.add_parser("export", help="export a character and one take (action) to BVH/FBX/glTF/.blend")
    p.add_argument("--rig", required=True, help="input rig file")
    p.add_argument("--armature", help="armature object name (default: the largest)")
    p.add_argument("--take", help="the action to export (default: the armature's active action)")
    p.add_argument("--preset", type=str.lower, default="generic", choices=EXPORT_PRESETS,
                   help="target conventions: generic (default), unreal or unity (scale, axes, leaf bones; see README)")
    p.add_argument("--no-mesh", action="store_true", help="FBX/glTF: the armature and its animation only")
    p.add_argument("--out", required=True, help="output file: .bvh .fbx .glb .gltf .blend")


def _add_render_parser(sub) -> None:
    p = sub.add_parser("render", help="render a .blend to a PNG still or an MP4 (with its sound strip)")
    p.add_argument("--scene", required=True, help="input .blend")
    p.add_argument("--out", required=True, help="output .png or .mp4")
    p.add_argument("--engine", type=str.upper, default="CYCLES", choices=["CYCLES", "EEVEE", "WORKBENCH"],
                   help="render engine, any case (default CYCLES: runs anywhere; EEVEE and WORKBENCH need OpenGL)")
    p.add_argument("--resolution", type=_resolution, default=(640, 360), help="WxH, default 640x360")
    p.add_argument("--samples", type=int, default=16)
    p.add_argument("--frames", type=_frames, help="START:END for an MP4 (default: the scene range)")
    p.add_argument("--frame", type=int, help="frame for a PNG still")


def _add_retarget_parser(sub) -> None:
    p = sub.add_parser("retarget", help="put a clip (BVH, FBX, glTF, SMPL-X .npz, DeepMimic .txt) on any humanoid rig")
    p.add_argument("--src", required=True, help="source clip: .bvh .bvh.gz .fbx .glb .gltf .npz (EMAGE/BEAT2 SMPL-X) "
                   ".txt .json (DeepMimic)")
    p.add_argument("--rig", required=True, help="target rig file: .blend .glb .gltf .fbx")
    p.add_argument("--armature", help="target armature object name (default: the largest)")
    p.add_argument("--map", help="bone-map preset for the target (default: detect); see `rigmind info RIG`")
    p.add_argument("--root-mode", type=str.lower, default="hips", choices=ROOT_MODES)
    p.add_argument("--root-bone", help="root bone for --root-mode root_bone")
    p.add_argument("--no-ik", action="store_true", help="do not lock planted feet with leg IK")
    p.add_argument("--out", required=True, help="output: .blend .bvh .fbx .glb .gltf")


def _add_walk_parser(sub) -> None:
    p = sub.add_parser("walk", help="generate walking on any humanoid rig: a seamless cycle, or a walk along a path")
    p.add_argument("--rig", required=True, help="target rig file: .blend .glb .gltf .fbx")
    p.add_argument("--armature", help="target armature object name (default: the largest)")
    p.add_argument("--style", type=str.lower, default="normal", help=", ".join(STYLES[:-1]) + " or " + STYLES[-1])
    p.add_argument("--speed", type=float, help="m/s (default: the style's own speed for the gait, the median of its "
                                               "clips, scaled to the rig's legs on a path; clamped to what the clips cover)")
    p.add_argument("--gait", type=str.lower, default="walk", choices=GAITS)
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--cycle", action="store_true", help="bake a looping cycle (a cyclic action)")
    how.add_argument("--path", help='ground-plane path in metres (Blender X,Y), e.g. "0,0;3,0;3,3"; a point may '
                                    'carry its own speed in m/s, "x,y,speed" (e.g. "0,0;3,0,0.8;3,3") '
                                    '(write --path="-1,0;…" when it starts with a minus sign); @FILE reads '
                                    'the points from a text file, one x,y[,speed] per line')
    p.add_argument("--pause", action="append", default=[], metavar="ARC,SECONDS",
                   help='--path: stop ARC metres along the path and stand SECONDS there, e.g. "4,1.5"; repeatable')
    p.add_argument("--action", action="append", default=[], metavar="ACTION",
                   help='--path: jump@ARC[,height=M][,length=M] (take off ARC metres along the path; the hips\' apex '
                        'above standing and their travel in the air, default the clip\'s) or crouch@A-B (crouched '
                        'from A to B metres), e.g. --action jump@3 --action crouch@7-10; repeatable')
    p.add_argument("--start", type=str.lower, default="standing", choices=START_POSES,
                   help="--path: start standing (default), or lying face up / face down and get up into the walk")
    p.add_argument("--in-place", action="store_true",
                   help="no horizontal root motion (--path: the path's walk, turns included, on the spot)")
    p.add_argument("--seconds", type=float, help="--cycle: seconds of steady walking searched for the loop (default 6); "
                                                 "--path: time limit (default: what the path needs)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--controller", type=str.lower, default="auto", choices=CONTROLLER_KINDS,
                   help="auto: the trained model when present, else motion matching on --data")
    p.add_argument("--data", help="folder with bandai_namco_d2_locomotion for motion matching (default $RIGMIND_DATA or ../shared/data)")
    p.add_argument("--weights", help="folder with your own locomotion.onnx / locomotion.pt for the neural controller "
                                     "(default: the models RigMind ships); checked like them before use")
    p.add_argument("--out", required=True, help="output: .blend .bvh .fbx .glb .gltf")


def _add_face_parser(sub) -> None:
    p = sub.add_parser("face", help="speech → lip-sync, blinks and brows as ARKit-52 shape-key animation")
    p.add_argument("--audio", required=True, help="speech file (.wav .flac .mp3 .ogg …); NAME.txt beside it is used as the transcript")
    p.add_argument("--mesh", help="FILE[:OBJECT]: .blend/.glb/.gltf/.fbx with a mesh that has ARKit shape keys "
                                  "(default object: the mesh with the most); needed for a .blend output")
    p.add_argument("--transcript", help="the spoken text (forced alignment: better timing and p/b/m closures)")
    p.add_argument("--smile", type=float, default=0.0, help="smile 0..1 (default 0)")
    p.add_argument("--emotion", action="append", metavar="NAME[:WEIGHT][@START-END]",
                   help="emotion, repeatable: happy sad angry surprised afraid disgusted (or neutral), weight 0..1 "
                        "(default 1), over START-END seconds of the take (default all of it): happy:1@0-10 --emotion sad:0.8@10-20")
    p.add_argument("--seed", type=int, default=0, help="random seed for blinks and gaze (default 0)")
    p.add_argument("--method", type=str.lower, default="model", choices=FACE_METHODS,
                   help="without a transcript: the learned model (default: fast, any language), words (English word "
                        "recognition + alignment: fewer lip-sync errors, ~15x slower) or table (phone recognition, baseline)")
    p.add_argument("--fps", type=float, default=30.0, help="frame rate of JSON/CSV output (default 30; .blend uses the scene's)")
    p.add_argument("--runtime", type=str.lower, choices=RUNTIMES,
                   help="inference engine for the face model (default: onnxruntime, faster and no torch import, "
                        "when models/face.onnx was exported from the weights; else torch)")
    p.add_argument("--start-frame", type=int, default=1, help="first frame in the .blend (default 1)")
    p.add_argument("--out", required=True, help="output: .blend (animated mesh + sound strip), .json or .csv (Live Link Face style)")


def _add_gesture_parser(sub) -> None:
    p = sub.add_parser("gesture", help="speech → body, head, hand and finger motion on any humanoid rig")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--audio", help="speech file (.wav .flac .mp3 .ogg …, any rate, mono or stereo)")
    src.add_argument("--audio-dir", help="a folder of speech files: one take each into --out-dir "
                                         "(shorthand for `rigmind batch gesture`)")
    p.add_argument("--rig", help="rig file (.blend .glb .gltf .fbx .bvh); not needed for an .npz output")
    p.add_argument("--armature", help="armature object in the rig file (default: the only/first one)")
    p.add_argument("--face", help="also animate this mesh's ARKit shape keys: an object name in the rig file, "
                                  "or 'auto' for the mesh with the most ARKit keys")
    p.add_argument("--transcript", help="the spoken text (used by the face: forced alignment)")
    p.add_argument("--face-method", type=str.lower, default="model", choices=FACE_METHODS,
                   help="the face without a transcript: model (default), words (English word recognition, slower) or table")
    p.add_argument("--amount", type=float, default=0.5, help="0 calm … 1 animated (default 0.5, as the training speaker)")
    p.add_argument("--emotion", action="append", metavar="NAME[:WEIGHT][@START-END]",
                   help="emotion, repeatable: happy sad angry surprised afraid disgusted (or neutral), weight 0..1 "
                        "(default 1), over START-END seconds of the take (default all of it): happy:1@0-10 --emotion sad:0.8@10-20")
    p.add_argument("--style", type=str.lower, default="", metavar="STYLE",
                   help="move like a Bandai Namco style: " + " ".join(GESTURE_STYLES))
    p.add_argument("--style-clip", metavar="FILE", help="a clip (.bvh .fbx .glb .gltf .npz) of the speaker gesturing: "
                                                        "the take takes on its hand places, energy and hand shapes")
    p.add_argument("--runtime", type=str.lower, choices=RUNTIMES,
                   help="inference engine for the gesture and face models (default: onnxruntime, faster and no torch "
                        "import, when models/*.onnx were exported from the weights; else torch)")
    p.add_argument("--seed", type=int, default=0, help="which take (default 0)")
    p.add_argument("--base", type=str.lower, default="idle", choices=GESTURE_BASES,
                   help="idle: whole body from the model; keep_legs: keep the rig's current action's hips and legs")
    p.add_argument("--start-frame", type=int, default=1)
    dst = p.add_mutually_exclusive_group(required=True)
    dst.add_argument("--out", help="output: .blend .bvh .fbx .glb .gltf, or .npz (EMAGE/BEAT2 SMPL-X schema)")
    dst.add_argument("--out-dir", help="output folder for --audio-dir (one NAME.FORMAT per speech file)")
    p.add_argument("--format", type=str.lower, default="fbx", help="with --out-dir: fbx (default), bvh, glb, blend, npz, csv")
    _add_engine_args(p)


def _add_track_parser(sub) -> None:
    p = sub.add_parser("track", help="a full body from three trackers (head, left hand, right hand) on any humanoid rig")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--trackers", metavar="FILE.csv", help="tracker CSV: time, then per tracker (head, lhand, rhand) "
                                                            "x y z in metres and qw qx qy qz (docs/tracking.md)")
    src.add_argument("--trackers-from", metavar="CLIP", help="use the head and wrists of a clip (.bvh .bvh.gz .fbx .glb "
                                                             ".gltf .npz .txt) as the trackers, to test against the clip")
    p.add_argument("--trackers-up", type=str.upper, default="Z", choices=TRACKER_UP_AXES,
                   help="--trackers: the file's up axis, Z (Blender, default) or Y")
    p.add_argument("--rig", required=True, help="target rig file: .blend .glb .gltf .fbx")
    p.add_argument("--armature", help="target armature object name (default: the largest)")
    p.add_argument("--method", type=str.lower, default="model", choices=TRACK_METHODS,
                   help="model: the learned model (default); baseline: IK from the trackers alone")
    p.add_argument("--fps", type=float, help="frame rate of the body (default 30, the model's)")
    p.add_argument("--start-frame", type=int, default=1, help="first frame of the take (default 1)")
    p.add_argument("--placement", type=str.lower, choices=TRACK_PLACEMENTS,
                   help="rig: the trackers are where this rig's head and hands go (default for --trackers); "
                        "performer: another body's, scaled onto the rig (default for --trackers-from)")
    p.add_argument("--out", required=True, help="output: .blend .bvh .fbx .glb .gltf")


def _add_train_parser(sub) -> None:
    p = sub.add_parser("train", help="train a model from ../shared/data (locomotion, gesture, face, track; actions: "
                                     "rebuild the jump/crouch/get-up clips)", add_help=False)
    p.add_argument("what", type=str.lower, choices=MODELS + ("actions", "track"), help="which model")


def _add_eval_parser(sub) -> None:
    p = sub.add_parser("eval", help="measure a model against baselines and real data (locomotion, gesture, face)", add_help=False)
    p.add_argument("what", type=str.lower, choices=MODELS, help="what to evaluate")


def _add_demo_parser(sub) -> None:
    p = sub.add_parser("demo", help="the end-to-end demo on the mannequin (what `install.py demo` runs)")
    p.add_argument("--out", default="rigmind_out/demo", help="output folder")


def _add_debug_everywhere(sub) -> None:
    """``--debug`` also after the command (``rigmind info X --debug``); SUPPRESS
    keeps a subcommand from resetting the flag given before it."""
    for parser in list(sub.choices.values()):
        if parser.prog.split()[-1] in PASS_THROUGH:
            continue  # their remaining arguments belong to the model's own parser
        parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
        inner = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        for action in inner:
            _add_debug_everywhere(action)


# --- commands -------------------------------------------------------------------


class _phase:
    """``with _phase("name"):`` prints ``rigmind-timing: name SECONDS`` to
    stderr when RIGMIND_TIMINGS is set (bench/bench_commands.py reads it)."""

    def __init__(self, name: str):
        self.name = name

    def __enter__(self):
        import time

        self.t0 = time.perf_counter()

    def __exit__(self, *exc):
        import os
        import time

        if os.environ.get("RIGMIND_TIMINGS"):
            print(f"rigmind-timing: {self.name} {time.perf_counter() - self.t0:.4f}", file=sys.stderr)


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
    with atomic_output(out) as tmp:
        mannequin.save_mannequin(tmp)
    print(f"wrote {out.resolve()}")
    return 0


def cmd_export(args) -> int:
    from .operators import export, rig_files

    out = Path(args.out)
    if out.suffix.lower() not in export.EXPORT_SUFFIXES:
        raise UserError(f"{out}: unsupported output type; use one of {' '.join(export.EXPORT_SUFFIXES)}")
    check_output_path(args.out)
    with _phase("load"):
        rig_files.load_rig_file(args.rig)
        arm = _armature(args)
    request = _export_request(args)
    with _phase("export"):
        path = write_atomically(out, lambda tmp: export.export_requested(arm, request, tmp))
    print(f"wrote {Path(path).resolve()}")
    return 0


def _export_request(args):
    """``rigmind export``'s arguments as an ``ExportRequest``."""
    from .backend.requests.export import ExportRequest

    return ExportRequest(path=Path(args.out), preset=args.preset, take=args.take, with_mesh=not args.no_mesh)


def cmd_render(args) -> int:
    import bpy

    from .operators import render, rig_files

    scene_path = Path(args.scene)
    if scene_path.suffix.lower() != ".blend":
        raise UserError(f"{scene_path}: render takes a .blend scene")
    check_output_path(args.out)
    rig_files.load_rig_file(scene_path)
    if args.frame is not None:
        bpy.context.scene.frame_set(args.frame)
    path = write_atomically(args.out, lambda tmp: render.render(
        tmp, engine=args.engine, resolution=args.resolution, samples=args.samples, frames=args.frames
    ))
    print(f"wrote {Path(path).resolve()}")
    return 0


def cmd_retarget(args) -> int:
    from .operators import export, retarget_scene, rig_checks, rig_files

    if Path(args.out).suffix.lower() not in export.EXPORT_SUFFIXES:
        raise UserError(f"{args.out}: unsupported output type; use one of {' '.join(export.EXPORT_SUFFIXES)}")
    check_output_path(args.out)
    request = _retarget_request(args)
    rig_files.load_rig_file(args.rig)
    arm = _armature(args)
    tgt_map = rig_checks.check_rig(arm, preset=request.bone_map)
    motion, src_map = retarget_scene.load_source(request.source)
    action, tgt_map, result = retarget_scene.retarget_onto(arm, motion, src_map, request, tgt_map=tgt_map)
    print(f"source {Path(args.src).name}: {motion.num_frames} frames at {motion.fps:g} fps, mapping '{src_map.preset}'")
    print(f"target {arm.name}: mapping '{tgt_map.preset}' (confidence {tgt_map.overall:.2f}), leg scale {result.leg_scale:.3f}")
    path = write_atomically(args.out, lambda tmp: export.export_written(arm, action, tmp))
    print(f"wrote {Path(path).resolve()} (action '{action.name}')")
    return 0


def _retarget_request(args):
    """``rigmind retarget``'s arguments as a checked ``RetargetRequest`` (the
    new take from frame 1; the scene's rate and range become the clip's)."""
    from .backend.requests import checked
    from .backend.requests.retarget import RetargetRequest

    # A BVH is made from the take's values alone: no keys in the scene
    # (Blender holds ~72 bytes a key: 1.6 GB for 100 000 frames).
    return checked(RetargetRequest(source=args.src, bone_map=args.map, root_mode=args.root_mode,
                                   root_bone=args.root_bone, ik=not args.no_ik,
                                   keyed=Path(args.out).suffix.lower() != ".bvh"))


def cmd_walk(args) -> int:
    import random

    import numpy as np

    from .backend.locomotion.controllers import load_chosen
    from .backend.locomotion.dataset import D2_STYLES
    from .backend.locomotion.path_input import read_path_argument
    from .operators import export, rig_checks, rig_files
    from .operators import locomotion_scene

    # Check everything the user typed before the (slow) rig load and generation.
    if args.style not in D2_STYLES:
        raise UserError(f"unknown --style {args.style!r}; use one of {', '.join(D2_STYLES)}")
    points = read_path_argument(args.path) if args.path is not None else None
    request = _walk_request(args, points)
    out = Path(args.out)
    if out.suffix.lower() not in export.EXPORT_SUFFIXES:
        raise UserError(f"{out}: unsupported output type; use one of {' '.join(export.EXPORT_SUFFIXES)}")
    check_output_path(out)
    random.seed(args.seed)
    np.random.seed(args.seed)
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(args.seed)

    with _phase("load"):
        rig_files.load_rig_file(args.rig)
        arm = _armature(args)
        rig_checks.check_rig(arm)
        controller = load_chosen(request.controller, request.style, request.gait)
    what = type(controller).__name__
    with _phase("generate"):
        if points is None:
            action = locomotion_scene.bake_walk_cycle(arm, request, controller=controller)
        else:
            action = locomotion_scene.walk_along_path(arm, request, controller=controller)
    first, last = action.frame_range
    print(f"{what}: '{action.name}', {int(round(last - first))} frames on {arm.name}")
    # A .blend keeps the scene range the bake set (one cycle, without the
    # closing key); the exporters take the action's keyed range.
    scene = arm.users_scene[0] if arm.users_scene else None
    rng = (scene.frame_start, scene.frame_end) if scene is not None and out.suffix.lower() == ".blend" else None
    with _phase("export"):
        path = write_atomically(args.out, lambda tmp: export.export_character(arm, tmp, frame_range=rng))
    print(f"wrote {Path(path).resolve()}")
    return 0


def _walk_request(args, points):
    """``rigmind walk``'s arguments as a walk request (a cycle, or the path
    ``points`` with its ``--pause`` stops; the walk job checks it against the
    range table, the path's limits are checked here, before the rig loads)."""
    from .backend.locomotion.path_input import path_xy
    from .backend.requests.walk import CYCLE_SECONDS, ControllerChoice, WalkCycleRequest, WalkPathRequest

    if points is not None:
        check_path(path_xy(points), args.speed, args.seconds)
    pauses = _walk_pauses(args.pause, points)
    actions = _walk_actions(args.action, args.start, points)
    # Own weights mean the neural controller: no silent fall-back to motion matching.
    kind = "neural" if _weights_folder(args.weights) and args.controller == "auto" else args.controller
    common = dict(style=args.style, gait=args.gait, speed=args.speed, in_place=args.in_place,
                  controller=ControllerChoice(kind=kind, models_dir=args.weights, data_dir=args.data))
    if points is None:
        return WalkCycleRequest(seconds=args.seconds or CYCLE_SECONDS, **common)
    return WalkPathRequest(points=points, pauses=tuple(pauses), max_seconds=args.seconds, actions=actions, **common)


def _walk_actions(texts, start, points):
    """``--action`` and ``--start`` as an action plan (checked against the
    path and the rig by the walk job, once the rig's size is known)."""
    from .backend.locomotion.actions.action_plan import parse_actions

    if points is None and (texts or start != "standing"):
        raise UserError(f"{'--action' if texts else '--start'} needs --path (a cycle walks in place); "
                        "for a crouched cycle use --gait crouch")
    return parse_actions(texts, start)


def _walk_pauses(texts, points) -> list:
    """``--pause ARC,SECONDS`` options as ``[(arc m, seconds)]``, checked
    against the ``--path`` points (``path_follow.check_pauses``)."""
    if not texts:
        return []
    if points is None:
        raise UserError("--pause needs --path (a cycle has nowhere to stop)")
    from .backend.locomotion.path_follow import Path2D, check_pauses, parse_pauses
    from .backend.locomotion.path_input import path_xy

    pauses = [p for t in texts for p in parse_pauses(t, "--pause")]
    return check_pauses(Path2D(path_xy(points)), pauses)


def _weights_folder(folder):
    """``--weights FOLDER``, refused when it is not a folder (None: the shipped models)."""
    if folder is not None and not Path(folder).is_dir():
        raise UserError(f"--weights {folder}: not a folder; give the folder that holds locomotion.onnx or locomotion.pt")
    return folder


def _armature(args):
    """The armature to animate (``--armature``, else the largest), saying
    which when the file holds several, and how to pick another."""
    import bpy

    from .operators import rig_files

    arm = rig_files.find_armature(args.armature)
    others = [o.name for o in bpy.data.objects if o.type == "ARMATURE" and o is not arm]
    if others and not args.armature:
        print(f"note: {len(others) + 1} armatures in {Path(args.rig).name}; animating '{arm.name}' (the one with the "
              f"most bones), not {', '.join(repr(n) for n in others)}; choose with --armature NAME")
    return arm


def cmd_gesture(args) -> int:
    from .operators import export

    if args.audio_dir or args.out_dir:
        if not (args.audio_dir and args.out_dir):
            raise UserError("--audio-dir goes with --out-dir (and --audio with --out)")
        args.batch_kind = "gesture"
        return cmd_batch(args)
    out = Path(args.out)
    suffix = out.suffix.lower()
    if suffix != ".npz" and suffix not in export.EXPORT_SUFFIXES:
        raise UserError(f"{out}: unsupported output type; use .npz or one of {' '.join(export.EXPORT_SUFFIXES)}")
    if suffix != ".npz" and not args.rig:
        raise UserError(f"a {suffix} output needs --rig RIG (the character to animate)")
    check_output_path(out)
    request = _gesture_request(args)
    if suffix == ".npz":
        # The EMAGE schema describes the SMPL-X body itself, not a rig.
        from .backend.audio import load_audio
        from .backend.gesture.generate import generate_gesture
        from .operators.gesture_scene import write_npz

        clip = load_audio(args.audio)
        from .operators.gesture_scene import body_style

        res = generate_gesture(clip, amount=request.amount, seed=request.seed, runtime=request.runtime,
                               body=body_style(request))
        path = write_atomically(out, lambda tmp: write_npz(tmp, res))
        print(f"gesture: {res.motion.num_frames} frames at 30 fps from {clip.seconds:.1f} s of speech")
        print(f"wrote {Path(path).resolve()}")
        return 0

    import bpy

    from .operators import face_scene, gesture_scene, rig_checks, rig_files

    with _phase("load"):
        rig_files.load_rig_file(args.rig)
    arm = _armature(args)
    rig_checks.check_rig(arm)
    mesh = None
    if request.face_mesh:
        meshes = [o for o in bpy.data.objects if o.type == "MESH" and o.data.shape_keys is not None]
        mesh = face_scene.pick_face_mesh(request.face_mesh, meshes)
        if mesh is None or mesh.type != "MESH":
            raise UserError(f"{args.rig} has no face mesh {request.face_mesh!r}; meshes with shape keys: "
                            f"{', '.join(o.name for o in meshes) or 'none'}")
    with _phase("generate"):
        res = gesture_scene.generate_gesture_on_rig(arm, request, mesh)
    print(res.summary())
    scene = bpy.context.scene
    rng = (scene.frame_start, scene.frame_end) if suffix == ".blend" else None
    with _phase("export"):
        path = write_atomically(out, lambda tmp: export.export_written(arm, res.action, tmp, frame_range=rng))
    print(f"wrote {Path(path).resolve()}")
    return 0


def _gesture_request(args):
    """``rigmind gesture``'s arguments as a checked ``GestureRequest`` (the
    scene switched to the model's 30 fps; the speech added as a strip)."""
    from .backend.requests import checked
    from .backend.emotion.timeline import parse_emotions
    from .backend.gesture.style_layer import check_style
    from .backend.requests.gesture import GestureRequest

    return checked(GestureRequest(audio_path=Path(args.audio).resolve(), amount=args.amount, seed=args.seed,
                                  start_frame=args.start_frame, base=args.base, face_mesh=args.face or "",
                                  face_method=args.face_method, transcript=args.transcript, runtime=args.runtime,
                                  keyed=Path(args.out or "").suffix.lower() != ".bvh",
                                  emotion=parse_emotions(args.emotion), style=check_style(args.style),
                                  style_clip=Path(args.style_clip).resolve() if args.style_clip else None))


def cmd_track(args) -> int:
    from .operators import export, rig_checks, rig_files, track_scene

    out = Path(args.out)
    if out.suffix.lower() not in export.EXPORT_SUFFIXES:
        raise UserError(f"{out}: unsupported output type; use one of {' '.join(export.EXPORT_SUFFIXES)}")
    check_output_path(out)
    request = _track_request(args)
    if not Path(args.rig).is_file():
        raise UserError(f"rig file not found: {args.rig}")
    if request.trackers_from is not None and not Path(request.trackers_from).is_file():
        raise UserError(f"{request.trackers_from}: no such file; give a clip (.bvh .fbx .glb .gltf .npz .txt)")
    if request.trackers is not None:
        # A CSV is checked before the (slow) rig load; a clip may need Blender's importers.
        take, label = track_scene.load_take(request)
    with _phase("load"):
        rig_files.load_rig_file(args.rig)
        arm = _armature(args)
        rig_checks.check_rig(arm)
    if request.trackers is None:
        take, label = track_scene.load_take(request)
    with _phase("track"):
        action, tgt_map, _ = track_scene.track_onto(arm, take, request, label)
    print(f"trackers {label}: {take.num_samples} samples over {take.duration:.2f} s; method {request.method}")
    print(f"target {arm.name}: mapping '{tgt_map.preset}' (confidence {tgt_map.overall:.2f})")
    with _phase("export"):
        path = write_atomically(out, lambda tmp: export.export_written(arm, action, tmp))
    print(f"wrote {Path(path).resolve()} (action '{action.name}')")
    return 0


def _track_request(args):
    """``rigmind track``'s arguments as a checked ``TrackRequest`` (the take
    from ``--start-frame``; the scene's rate and range become the body's)."""
    from .backend.requests import checked
    from .backend.requests.track import TrackRequest

    return checked(TrackRequest(trackers=args.trackers, trackers_from=args.trackers_from, up=args.trackers_up,
                                method=args.method, fps=args.fps, start_frame=args.start_frame,
                                placement=args.placement,
                                keyed=Path(args.out).suffix.lower() != ".bvh"))


def _add_engine_args(p) -> None:
    p.add_argument("--engine", type=str.lower, default="local", choices=("local", "ray"),
                   help="local: a process pool on this machine (default); ray: Ray tasks on a cluster")
    p.add_argument("--workers", type=int, help="worker processes / Ray actors (default: the machine's cores)")
    p.add_argument("--address", help="Ray cluster address (auto, ray://HOST:10001); default: a local Ray instance")
    p.add_argument("--force", action="store_true", help="redo takes whose output already exists")


def _add_batch_parser(sub) -> None:
    p = sub.add_parser("batch", help="many takes at once: a folder of speech, or a manifest of walks")
    kinds = p.add_subparsers(dest="batch_kind", metavar="KIND", required=True)

    g = kinds.add_parser("gesture", help="speech files → body (+ face) takes on one rig")
    g.add_argument("--audio-dir", required=True, help="folder of speech files (.wav .flac .mp3 .ogg …)")
    g.add_argument("--rig", help="rig file (.blend .glb .gltf .fbx); not needed for npz/csv")
    g.add_argument("--armature", help="armature object in the rig file (default: the only/first one)")
    g.add_argument("--face", help="also animate this mesh's ARKit shape keys: an object name, or 'auto'")
    g.add_argument("--face-method", type=str.lower, default="model", choices=FACE_METHODS)
    g.add_argument("--amount", type=float, default=0.5, help="0 calm … 1 animated (default 0.5)")
    g.add_argument("--emotion", action="append", metavar="NAME[:WEIGHT][@START-END]",
                   help="emotion, repeatable: happy sad angry surprised afraid disgusted (or neutral), weight 0..1 "
                        "(default 1), over START-END seconds of the take (default all of it): happy:1@0-10 --emotion sad:0.8@10-20")
    g.add_argument("--style", type=str.lower, default="", metavar="STYLE",
                   help="move like a Bandai Namco style: " + " ".join(GESTURE_STYLES))
    g.add_argument("--style-clip", metavar="FILE", help="a clip (.bvh .fbx .glb .gltf .npz) of the speaker gesturing: "
                                                        "the take takes on its hand places, energy and hand shapes")
    g.add_argument("--seed", type=int, default=0, help="mixed with each file's name into its take's seed")
    g.add_argument("--base", type=str.lower, default="idle", choices=GESTURE_BASES)
    g.add_argument("--out-dir", required=True, help="output folder (NAME.FORMAT per input, batch_report.json)")
    g.add_argument("--format", type=str.lower, default="fbx", help="fbx (default), bvh, glb, blend, npz, csv (face curves)")
    _add_engine_args(g)

    f = kinds.add_parser("face", help="speech files → ARKit-52 face curves (CSV/JSON, or a .blend with the mesh)")
    f.add_argument("--audio-dir", required=True, help="folder of speech files")
    f.add_argument("--mesh", help="FILE[:OBJECT] with ARKit shape keys (needed for --format blend)")
    f.add_argument("--method", dest="face_method", type=str.lower, default="model", choices=FACE_METHODS)
    f.add_argument("--seed", type=int, default=0, help="mixed with each file's name into its take's seed")
    f.add_argument("--emotion", action="append", metavar="NAME[:WEIGHT][@START-END]",
                   help="emotion, repeatable: happy sad angry surprised afraid disgusted (or neutral), weight 0..1 "
                        "(default 1), over START-END seconds of the take (default all of it): happy:1@0-10 --emotion sad:0.8@10-20")
    f.add_argument("--out-dir", required=True, help="output folder")
    f.add_argument("--format", type=str.lower, default="csv", help="csv (Live Link Face, default), json, blend")
    _add_engine_args(f)

    t = kinds.add_parser("track", help="a folder of tracker CSV files → one body take each on one rig")
    t.add_argument("--trackers-dir", required=True, help="folder of tracker CSV files (docs/tracking.md)")
    t.add_argument("--rig", required=True, help="rig file (.blend .glb .gltf .fbx)")
    t.add_argument("--armature", help="armature object in the rig file")
    t.add_argument("--method", type=str.lower, default="model", choices=TRACK_METHODS)
    t.add_argument("--placement", type=str.lower, default="rig", choices=TRACK_PLACEMENTS,
                   help="rig: the trackers are where the rig's head and hands go (default); performer: another "
                        "body's, scaled onto the rig")
    t.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    t.add_argument("--out-dir", required=True, help="output folder (NAME.FORMAT per tracker file, batch_report.json)")
    t.add_argument("--format", type=str.lower, default="fbx", help="fbx (default), bvh, glb, blend")
    _add_engine_args(t)

    w = kinds.add_parser("walk", help="a JSON manifest of paths → one walk take each")
    w.add_argument("--paths", required=True, help='JSON list of {"name", "path": "x,y;x,y", "style", "speed", "gait"}')
    w.add_argument("--rig", required=True, help="rig file (.blend .glb .gltf .fbx)")
    w.add_argument("--armature", help="armature object in the rig file")
    w.add_argument("--controller", type=str.lower, default="auto", choices=CONTROLLER_KINDS)
    w.add_argument("--data", help="data folder for the motion-matching controller")
    w.add_argument("--seed", type=int, default=0, help="mixed with each walk's name into its take's seed")
    w.add_argument("--out-dir", required=True, help="output folder")
    w.add_argument("--format", type=str.lower, default="fbx", help="fbx (default), bvh, glb, blend")
    _add_engine_args(w)


def cmd_batch(args) -> int:
    from . import batch

    kind = args.batch_kind
    rig, face = getattr(args, "rig", None), getattr(args, "face", None)
    if kind == "face" and args.mesh:
        rig, face = _split_mesh_arg(args.mesh)
        face = face or "auto"
    if rig and not Path(rig).is_file():
        raise UserError(f"rig file not found: {rig}")
    needs_scene = args.format in ("fbx", "bvh", "glb", "blend")
    if needs_scene and not rig:
        what = "--mesh FILE[:OBJECT]" if kind == "face" else "--rig RIG"
        raise UserError(f"--format {args.format} needs {what} (the character to animate)")
    config = batch.WorkerConfig(
        kind=kind, fmt=args.format, rig=str(Path(rig).resolve()) if rig else None,
        armature=getattr(args, "armature", None), face=face, amount=getattr(args, "amount", 0.5),
        base_seed=args.seed, face_method=getattr(args, "face_method", "model"), base=getattr(args, "base", "idle"),
        controller=getattr(args, "controller", "auto"), data=getattr(args, "data", None),
        emotion=tuple(getattr(args, "emotion", None) or ()), style=getattr(args, "style", "") or "",
        style_clip=str(Path(args.style_clip).resolve()) if getattr(args, "style_clip", None) else None,
        method=getattr(args, "method", "model"), placement=getattr(args, "placement", "rig"),
    )
    if kind == "walk":
        items = batch.walk_items(args.paths)
    elif kind == "track":
        items = batch.tracker_items(args.trackers_dir)
    else:
        items = batch.audio_items(args.audio_dir)
    # From here the batch handles Ctrl-C and SIGTERM itself (it stops its
    # workers and writes its report); the CLI's handler, back once it
    # returns, must not turn a late second Ctrl-C into "nothing written".
    quiet_interrupts()
    report = batch.run_batch(config, items, args.out_dir, engine=args.engine, workers=args.workers,
                             address=args.address, force=args.force)
    print(batch.summary_table(report))
    print(f"wrote {(Path(args.out_dir) / batch.REPORT_NAME).resolve()}")
    return batch.exit_code(report)


def _split_mesh_arg(text: str):
    """``FILE[:OBJECT]`` → (file, object or None); a colon inside the path is kept."""
    head, sep, tail = text.rpartition(":")
    if sep and Path(head).suffix.lower() in (".blend", ".glb", ".gltf", ".fbx") and "/" not in tail and "\\" not in tail:
        return head, tail or None
    return text, None


def cmd_face(args) -> int:
    from .backend.audio import load_audio
    from .backend.face.export import write_animation
    from .backend.face.generate import generate_face_for, transcript_beside

    out = Path(args.out)
    suffix = out.suffix.lower()
    if suffix not in (".blend", ".json", ".csv"):
        raise UserError(f"{out}: write the face animation as .blend, .json or .csv")
    if suffix == ".blend" and not args.mesh:
        raise UserError("a .blend output needs --mesh FILE[:OBJECT] with ARKit shape keys")
    check_output_path(out)
    clip = load_audio(args.audio)
    transcript = args.transcript if args.transcript is not None else transcript_beside(args.audio)
    request = _face_request(args, transcript, suffix)
    if not args.mesh:
        anim = generate_face_for(clip, request)
        write_atomically(out, lambda tmp: write_animation(anim, tmp))
        print(f"face: {anim.num_frames} frames at {anim.fps:g} fps from {anim.source}")
        for note in anim.notes:
            print(f"note: {note}")
        print(f"wrote {out.resolve()}")
        return 0

    import bpy

    from .backend.face.arkit_names import resolve_arkit_names
    from .operators import face_scene, rig_files

    path, obj_name = _split_mesh_arg(args.mesh)
    rig_files.load_rig_file(path)
    meshes = [o for o in bpy.data.objects if o.type == "MESH" and o.data.shape_keys is not None]
    mesh = face_scene.pick_face_mesh(request.face_mesh, meshes)
    if obj_name and (mesh is None or mesh.type != "MESH"):
        raise UserError(f"{path} has no mesh object named {obj_name!r}; meshes with shape keys: "
                        f"{', '.join(o.name for o in meshes) or 'none'}")
    if mesh is None:
        raise UserError(f"{path} has no mesh with shape keys; give a face mesh with ARKit shape keys")
    clip.path = request.audio_path
    if suffix == ".blend":
        res = face_scene.generate_face_on_mesh(mesh, request, clip=clip)
        anim = res.animation
        write_atomically(out, lambda tmp: bpy.ops.wm.save_as_mainfile(filepath=str(tmp), copy=True))
    else:
        anim = generate_face_for(clip, request)
        keys = [k.name for k in mesh.data.shape_keys.key_blocks]
        found = resolve_arkit_names(keys)
        res = None
        write_atomically(out, lambda tmp: write_animation(anim, tmp))
    print(f"face: {anim.num_frames} frames at {anim.fps:g} fps from {anim.source}, mesh '{mesh.name}'")
    if res is not None:
        print(res.summary())
    else:
        missing = [n for n in anim.names if n not in found]
        print(f"mesh '{mesh.name}' has {52 - len(missing)}/52 ARKit shapes" + (f"; missing: {', '.join(missing)}" if missing else ""))
    for note in anim.notes:
        print(f"note: {note}")
    print(f"wrote {out.resolve()}")
    return 0


def _face_request(args, transcript, suffix: str):
    """``rigmind face``'s arguments as a checked ``FaceRequest``; a .blend's
    curves take the scene's frame rate, JSON/CSV ``--fps``. ``transcript``:
    ``--transcript``, else the ``.txt`` beside the audio."""
    from .backend.requests import checked
    from .backend.emotion.timeline import parse_emotions
    from .backend.requests.face import FaceRequest

    _, obj_name = _split_mesh_arg(args.mesh) if args.mesh else (None, None)
    return checked(FaceRequest(audio_path=str(Path(args.audio).resolve()), method=args.method, smile=args.smile,
                               seed=args.seed, start_frame=args.start_frame,
                               fps=None if suffix == ".blend" else args.fps, face_mesh=obj_name or "auto",
                               transcript=transcript, runtime=args.runtime, emotion=parse_emotions(args.emotion)))


def cmd_demo(args) -> int:
    from . import demo

    written = demo.run(Path(args.out))
    print("\nRigMind demo wrote:")
    width = max(len(label) for label, _ in written)
    for label, path in written:
        print(f"  {label:<{width}}  {Path(path).resolve()}")
    return 0


def _model_tool(tool: str, args, extra) -> int:
    """``rigmind {train,eval} MODEL ...``: the model package's own
    ``main_train``/``main_eval`` parses the remaining arguments."""
    import importlib

    module = importlib.import_module(f".backend.{args.what}.{tool}", __package__)
    return getattr(module, f"main_{tool}")(extra)


def cmd_eval(args, extra) -> int:
    if args.what == "locomotion" and "--rigs" in extra:
        # Walk Along Path baked on real rigs and read back from Blender (needs bpy).
        from .evaluation.locomotion_rigs import main_rig_eval

        return main_rig_eval([a for a in extra if a != "--rigs"])
    if args.what == "gesture" and "--viewer" in extra:
        # The viewer metrics bake takes onto rigs (evaluation/, not in the extension).
        from .evaluation.gesture_viewer import main_viewer_eval

        return main_viewer_eval([a for a in extra if a != "--viewer"])
    return _model_tool("eval", args, extra)


def cmd_train(args, extra) -> int:
    if args.what == "actions":
        # Not a trained network: the locomotion actions' reference clips, rebuilt from the data.
        from .backend.locomotion.actions.clip_bank import main_build

        return main_build(extra)
    if args.what == "track":
        # Three-point tracking (backend/tracking/): the package is named for the feature.
        from .backend.tracking.train import main_train

        return main_train(extra)
    return _model_tool("train", args, extra)


# Commands whose remaining arguments go to a sub-program's own parser.
PASS_THROUGH = {"eval": cmd_eval, "train": cmd_train}
COMMANDS = {"batch": cmd_batch, "track": cmd_track, "gesture": cmd_gesture, "face": cmd_face, "walk": cmd_walk, "retarget": cmd_retarget, "info": cmd_info, "mannequin": cmd_mannequin, "export": cmd_export, "render": cmd_render, "demo": cmd_demo}


def main(argv=None) -> int:
    record_interrupts()
    try:
        if _EARLY_CTRL_C:
            raise KeyboardInterrupt  # Ctrl-C while the command was starting: nothing done yet
        return _main(argv)
    except KeyboardInterrupt:
        # A second Ctrl-C while the first (or an error) was being reported.
        return _cancelled(_command_name(argv))
    finally:
        # The command is over (its file written or not); a Ctrl-C while the
        # process exits changes nothing and must not print a traceback.
        quiet_interrupts()


def _main(argv=None) -> int:
    ap = build_parser()
    args, extra = ap.parse_known_args(argv)
    if extra and args.command not in PASS_THROUGH:
        ap.error(f"unrecognized arguments: {' '.join(extra)}")
    if not args.command:
        ap.print_help()
        return EXIT_USER_ERROR
    try:
        check_options(args)
        if args.command in PASS_THROUGH:
            code = PASS_THROUGH[args.command](args, extra)
        else:
            code = COMMANDS[args.command](args)
        # Inside the try: a reader that closed the pipe fails here, not at exit.
        sys.stdout.flush()
        return code
    except UserError as e:
        # Bad input the user can fix: the message names the problem and the fix.
        print(f"rigmind {args.command}: {_one_line(e)}", file=sys.stderr)
        return EXIT_USER_ERROR
    except (Cancelled, KeyboardInterrupt) as e:
        return _cancelled(args.command, getattr(e, "outcome", None))
    except BrokenPipeError:
        return _broken_pipe()
    except Exception as e:
        if is_blender_interrupt(e):
            return _cancelled(args.command)  # Ctrl-C inside a Blender Python operator
        if args.debug:
            raise
        from .backend.error_log import internal_error_line

        print(f"rigmind {args.command}: {internal_error_line(e, where=f'rigmind-{args.command}')}", file=sys.stderr)
        return EXIT_INTERNAL_ERROR


def _one_line(e: BaseException) -> str:
    """The message on one line (a few errors list their findings on several)."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    return "; ".join(lines) or type(e).__name__


def _broken_pipe() -> int:
    """The reader of stdout went away (``| head -1``): stop quietly. Point
    stdout at /dev/null so the interpreter's final flush does not fail too."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass  # stdout is not a real file (captured in a test)
    return EXIT_BROKEN_PIPE


def _command_name(argv) -> str:
    words = [a for a in (sys.argv[1:] if argv is None else argv) if not str(a).startswith("-")]
    return str(words[0]) if words and str(words[0]) in {**COMMANDS, **PASS_THROUGH} else "command"


def _cancelled(command: str, outcome: str = None) -> int:
    """``outcome``: what a cancel that had already written something left
    (a stopped batch's kept takes and report); otherwise nothing was:
    outputs are written atomically (backend.atomic_write)."""
    quiet_interrupts()  # the command is over: a further Ctrl-C must not interrupt the message
    print(f"rigmind {command}: {outcome or 'cancelled, nothing written'}", file=sys.stderr)
    return EXIT_CANCELLED
