"""Track Body's head and hands against trackers made for the rig, in one Blender session (issue #30).

:mod:`track_rig_hands` goes through exported BVH files, which a generated
Rigify rig's deform bones do not read back from; this does the same in the
scene: the CMU clip retargeted onto the rig (``retarget_scene.retarget_onto``),
the rig's own head and hand bones sampled per frame as the trackers'
positions (the rotations from the same clip's canonical trackers), Track
Body (``track_scene.track_onto``, as the operator runs it) on the same rig,
and the head and hand bones' heads against the trackers, per third frame,
with the feet's skate beside the performed take's.

    PYTHONPATH=/tmp/pkg .venv/bin/python bench/track_rig_hands_scene.py [--rig rigify]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import bpy  # noqa: E402

from bench_actions import rig_files  # noqa: E402
from rigmind.backend.locomotion.metrics import foot_skate  # noqa: E402
from rigmind.backend.paths import data_dir  # noqa: E402
from rigmind.backend.requests.retarget import RetargetRequest  # noqa: E402
from rigmind.backend.requests.track import TrackRequest  # noqa: E402
from rigmind.backend.resample import resample  # noqa: E402
from rigmind.backend.tracking.body_from_trackers import resample_take  # noqa: E402
from rigmind.backend.tracking.mocap_trackers import load_mocap, trackers_from_motion  # noqa: E402
from rigmind.backend.tracking.trackers import TrackerTake  # noqa: E402
from rigmind.operators import retarget_scene, track_scene  # noqa: E402
from rigmind.operators import rig_files as rig_io  # noqa: E402
from track_rig_hands import CLIP  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rig", default="rigify")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as td:
        rig = rig_files([a.rig], data_dir(), Path(td))[a.rig]
        clip, cmap = load_mocap(data_dir() / CLIP)
        _, _, rot = resample_take(trackers_from_motion(clip, cmap), 30.0)
        bpy.ops.wm.read_factory_settings(use_empty=True)
        rig_io.load_rig_file(rig)
        arm = rig_io.find_armature(None)
        src, smap = retarget_scene.load_source(data_dir() / CLIP)
        act, _, _ = retarget_scene.retarget_onto(arm, resample(src, 30.0), dict(getattr(smap, "bones", smap)),
                                                 RetargetRequest(set_scene_fps=True, scene_range="grow"))
    bones = retarget_scene.target_mapping(arm).bones
    names = (bones["head"], bones["hand_l"], bones["hand_r"])
    sc = bpy.context.scene
    f0 = int(act.frame_range[0])
    n = min(len(rot), int(act.frame_range[1]) - f0 + 1)
    pos = np.zeros((n, 3, 3))
    for i in range(n):
        sc.frame_set(f0 + i)
        pos[i] = [np.array(arm.matrix_world @ arm.pose.bones[b].head) for b in names]
    feet = [bones[k] for k in ("foot_l", "toes_l", "foot_r", "toes_r")]
    feet_before = _feet(arm, feet, sc, f0, n)
    take = TrackerTake(np.arange(n) / 30.0, pos, rot[:n])
    action, _, _ = track_scene.track_onto(arm, take, TrackRequest(set_scene_fps=True, scene_range="grow"), "self")
    f0 = int(action.frame_range[0])
    miss, head = [], []
    for i in range(0, n, 3):
        sc.frame_set(f0 + i)
        at = [np.array(arm.matrix_world @ arm.pose.bones[b].head) for b in names]
        miss += [np.linalg.norm(at[k] - pos[i, k]) for k in (1, 2)]
        head.append(np.linalg.norm(at[0] - pos[i, 0]))
    miss, head = 100.0 * np.array(miss), 100.0 * np.array(head)
    skate = {k: foot_skate(p, list(range(4)), fps=30.0, lift=[None] * 4, floor="clip")["skate_cm_per_frame"]
             for k, p in (("performed", feet_before), ("tracked", _feet(arm, feet, sc, f0, n)))}
    print(f"{a.rig}: hand bones ({names[1]}, {names[2]}) to the trackers made from them, cm: median "
          f"{np.median(miss):.2f}, 95th percentile {np.percentile(miss, 95):.1f}, max {miss.max():.1f} "
          f"({len(miss)} hand-frames); head bone ({names[0]}): median {np.median(head):.2f}, 95th percentile "
          f"{np.percentile(head, 95):.1f}, max {head.max():.1f} ({len(head)} frames); feet ({', '.join(feet)}) "
          f"skate {skate['tracked']:.2f} cm/frame (the performed take's {skate['performed']:.2f})")
    return 0


def _feet(arm, bones, scene, first: int, n: int) -> np.ndarray:
    """World positions ``[n, len(bones), 3]`` of ``bones``' heads over ``n`` frames from ``first``."""
    out = np.zeros((n, len(bones), 3))
    for i in range(n):
        scene.frame_set(first + i)
        out[i] = [np.array(arm.matrix_world @ arm.pose.bones[b].head) for b in bones]
    return out


if __name__ == "__main__":
    raise SystemExit(main())
