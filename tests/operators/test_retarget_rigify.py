"""Retargeting onto a generated Rigify rig (real bpy, real Rigify, real walk).

Rigify's deform bones follow constraints, so the retarget must key the FK
CONTROLS (with the IK/FK switches at FK) and the result is measured where
the mesh would follow: Blender's evaluated pose of the DEF- bones.
"""

from __future__ import annotations

import numpy as np
import pytest

from support import rig_factory
from conftest import data_file

CLIP = "bandai_namco_d2_locomotion/bvh/dataset-2_walk_normal_001.bvh.gz"
SECONDS = 4.0
POSE_TOL = 0.05  # per-chain error, fraction of the chain length
CHAINS = {  # end effector: (chain root, middle joint or None)
    "hand_l": ("upperarm_l", "lowerarm_l"), "hand_r": ("upperarm_r", "lowerarm_r"),
    "foot_l": ("upperleg_l", "lowerleg_l"), "foot_r": ("upperleg_r", "lowerleg_r"),
    "head": ("hips", None),
}
MEASURED = sorted({c for e, (a, b) in CHAINS.items() for c in (e, a, b) if c})


def _sample(arm, bones: dict, frames):
    """World bone heads ``canonical -> [F, 3]`` and every pose matrix, in the
    evaluated pose (constraints and drivers included)."""
    import bpy

    scene = bpy.context.scene
    out = {c: np.empty((len(frames), 3)) for c in bones}
    mats = np.empty((len(frames), len(arm.pose.bones) * 16))
    for i, f in enumerate(frames):
        scene.frame_set(int(f))
        mw = np.array([list(r) for r in arm.matrix_world])
        for c, b in bones.items():
            out[c][i] = mw[:3, :3] @ np.array(arm.pose.bones[b].head) + mw[:3, 3]
        arm.pose.bones.foreach_get("matrix", mats[i])
    return out, mats


def _chain_errors(src, src_ref, tgt, tgt_rest):
    """Per effector ``[F]``: |(effector - chain root) / chain length| difference."""
    def length(pos, e, a, b):
        if b is None:
            return np.linalg.norm(pos[e] - pos[a])
        return np.linalg.norm(pos[b] - pos[a]) + np.linalg.norm(pos[e] - pos[b])

    out = {}
    for e, (a, b) in CHAINS.items():
        t = (tgt[e] - tgt[a]) / length(tgt_rest, e, a, b)
        s = (src[e] - src[a]) / length(src_ref, e, a, b)
        out[e] = np.linalg.norm(t - s, axis=-1)
    return out


@pytest.fixture(scope="module")
def walk():
    from rigmind.operators import retarget_scene

    motion, smap = retarget_scene.load_source(data_file(CLIP))
    return motion.slice(0, int(SECONDS * motion.fps)), smap


def test_walk_onto_rigify_keys_fk_controls_and_deforms_like_the_source(bpy_clean, walk):
    from rigmind.operators import retarget_scene, rigify, scene_io

    bpy = bpy_clean
    motion, smap = walk
    arm, truth = rig_factory.rigify_rig_cached()
    assert rigify.is_rigify(arm)
    # The user's own animation, which must survive the retarget.
    arm.pose.bones["head"].rotation_quaternion = (0.9, 0.1, 0.0, 0.0)
    arm.pose.bones["head"].keyframe_insert("rotation_quaternion", frame=1)
    previous = arm.animation_data.action
    assert previous is not None

    action, tmap, result = retarget_scene.retarget_onto(arm, motion, smap)

    # The mapping returned is where the body is measured (DEF- bones)...
    assert tmap.bones["hips"] == truth["hips"] == "DEF-spine"
    assert action is arm.animation_data.action and action is not previous
    assert previous.name in bpy.data.actions and previous.use_fake_user
    # ...while the keys sit on the FK controls, none on constraint-driven bones.
    cb = action.layers[0].strips[0].channelbag(arm.animation_data.action_slot)
    keyed = {fc.data_path.split('"')[1] for fc in cb.fcurves if fc.data_path.startswith("pose.bones")}
    for ctrl in ("torso", "spine_fk.002", "neck", "head", "shoulder.L", "upper_arm_fk.L", "forearm_fk.R",
                 "hand_fk.L", "thigh_fk.R", "shin_fk.L", "foot_fk.R", "toe_fk.L"):
        assert ctrl in keyed, f"no keys on {ctrl}"
    assert not [b for b in keyed if b.startswith(("DEF-", "ORG-", "MCH-"))]
    # Root motion on the torso control.
    assert any(fc.data_path == 'pose.bones["torso"].location' for fc in cb.fcurves)
    # IK/FK switches keyed to FK (1.0 = FK in Rigify) in the new action.
    switches = {fc.data_path: fc.evaluate(1.0) for fc in cb.fcurves if fc.data_path.endswith('["IK_FK"]')}
    assert len(switches) == 4 and all(v == 1.0 for v in switches.values()), switches

    frames = np.arange(0, motion.num_frames, 2)
    scene = bpy.context.scene
    scene_frames = np.round(1 + frames * (scene.render.fps / scene.render.fps_base) / motion.fps)
    bones = {c: truth[c] for c in MEASURED}
    tgt, mats = _sample(arm, bones, scene_frames)
    assert np.isfinite(mats).all() and all(np.isfinite(v).all() for v in tgt.values()), "NaN in the pose"
    for limb in ("upper_arm_parent.L", "upper_arm_parent.R", "thigh_parent.L", "thigh_parent.R"):
        assert arm.pose.bones[limb]["IK_FK"] == 1.0, f"{limb} is not in FK"

    # The deform bones are where the backend put the controls (the probe's
    # control skeleton converts exactly): within 5 mm.
    _, P = result.motion.world()
    controls = rigify.control_mapping(arm, scene_io.read_skeleton(arm)).bones
    for c in ("hips", "hand_l", "hand_r", "foot_l", "foot_r", "head"):
        j = result.motion.skeleton.index(controls[c])
        gap = np.linalg.norm(P[frames, j] - tgt[c], axis=-1).max()
        assert gap < 0.005, f"DEF {c} is {100 * gap:.1f} cm from where the retarget put it"

    # And they move like the source: per-chain normalised error.
    sw = motion.world_positions()
    sidx = {c: motion.skeleton.index(smap.bones[c]) for c in MEASURED}
    src = {c: sw[frames, i] for c, i in sidx.items()}
    ref = result.reference_frame
    src_ref = {c: (sw[ref, i] if ref is not None else motion.skeleton.rest_positions()[i]) for c, i in sidx.items()}
    mw = np.array([list(r) for r in arm.matrix_world])
    tgt_rest = {c: (mw @ np.append(np.array(arm.data.bones[b].head_local), 1.0))[:3] for c, b in bones.items()}
    errs = _chain_errors(src, src_ref, tgt, tgt_rest)
    worst = max(errs, key=lambda e: errs[e].max())
    assert errs[worst].max() <= POSE_TOL, f"{worst} off by {100 * errs[worst].max():.1f}% of its chain"


def test_rigify_detection_is_specific(bpy_clean):
    from rigmind.operators import rigify
    from rigmind.operators.mannequin import build_mannequin

    arm = build_mannequin()["armature"]
    assert not rigify.is_rigify(arm)
