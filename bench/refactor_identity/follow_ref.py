"""Issue #16 (one path follower): SHA-256 of every output of path_follow.follow_path
(and of what Walk Along Path builds on it: snap_to_path, generate_path = follow +
snap + pin_feet) on paths WITHOUT pauses, so the pause support can be shown to
leave them bit-identical. Run on the old tree and on this one, compare the JSON:

    PYTHONPATH=/tmp/old .venv/bin/python bench/refactor_identity/follow_ref.py old.json
    .venv/bin/python bench/refactor_identity/follow_ref.py new.json && cmp old.json new.json

Cases: the neural controller (models/locomotion.pt) and a motion-matching
controller (the feature cache's normal + elderly training clips) on the 8
validation paths of path_sets (per-point speeds: speed profiles), a U-turn, an L
at 24 fps, a speed given as a function of arc length, an explicit FollowConfig,
a max_seconds cut, snap_to_path and generate_path (scaled rig)."""

import hashlib
import json
import sys

import numpy as np

from rigmind.backend.locomotion import features as FT
from rigmind.backend.locomotion import path_sets as PS
from rigmind.backend.locomotion import path_follow as PF
from rigmind.backend.locomotion.controller import LocomotionController
from rigmind.backend.locomotion.motion_matching import MotionMatchingController
from rigmind.backend import paths as P


def H(a):
    if a is None:
        return None
    a = np.ascontiguousarray(a)
    return [str(a.dtype), list(a.shape), hashlib.sha256(a.tobytes()).hexdigest()[:24]]


def result_hash(r):
    m = r.motion
    d = {k: H(getattr(r, k)) for k in ("target_xy", "arc", "root_xy", "error", "command", "stopping", "path_xy",
                                        "profile", "contacts", "feet")}
    d.update(stopped_at=r.stopped_at, length=r.length, fps=m.fps, name=m.name, rot=H(m.rotations),
             root=H(m.root_positions), trans=H(m.translations))
    return d


def motion_hash(m):
    return dict(fps=m.fps, name=m.name, rot=H(m.rotations), root=H(m.root_positions), trans=H(m.translations))


def main(out_path):
    neural = LocomotionController.load(P.model_path("locomotion.pt"))
    keys = ("traj_pos", "traj_dir", "joint_pos", "joint_vel", "rot6d", "root_vel", "root_ang_vel")
    mm = MotionMatchingController.build(FT.load_cache(split="train", mirrored=True, styles=("normal", "elderly"),
                                                      keys=keys))
    out = {}
    val = PS.validation_paths()
    uturn = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 0.3]])
    ell = np.array([[0.0, 0.0], [3.0, 0.0], [3.0, 3.0]])
    for cname, ctl in (("neural", neural), ("mm", mm)):
        for i, rp in enumerate(val):
            style = ("normal", "elderly")[i % 2]
            r = PF.follow_path(ctl, rp.points, speed=rp.speeds(1.2 if style == "normal" else 0.8), style=style)
            out[f"{cname}/val/{rp.name}/{style}"] = result_hash(r)
            if i < 2:
                out[f"{cname}/val/{rp.name}/{style}/snap"] = result_hash(PF.snap_to_path(r, rp.points))
        out[f"{cname}/uturn"] = result_hash(PF.follow_path(ctl, uturn, speed=1.1, style="normal"))
        out[f"{cname}/L24"] = result_hash(PF.follow_path(ctl, ell, speed=1.3, style="normal", fps=24.0))
        out[f"{cname}/ramp"] = result_hash(PF.follow_path(ctl, ell, speed=lambda s: 0.8 + 0.1 * s, style="elderly"))
        cfg = PF.FollowConfig(accel=1.0, decel=1.2, lateral_accel=0.8, hold_seconds=0.8, stand_blend_seconds=0.6)
        out[f"{cname}/cfg"] = result_hash(PF.follow_path(ctl, ell, speed=1.0, style="normal", config=cfg))
        out[f"{cname}/cut"] = result_hash(PF.follow_path(ctl, ell, speed=1.0, style="normal",
                                                         config=PF.FollowConfig(max_seconds=3.0)))
        out[f"{cname}/nostand"] = result_hash(PF.follow_path(ctl, ell, speed=1.0, style="normal",
                                                             config=PF.FollowConfig(stand_blend_seconds=0.0)))
    from rigmind.operators import locomotion_scene as LS

    for scale in (1.0, 1.37):
        m, r = LS.generate_path(neural, val[0].points, style="normal", speed=val[0].speeds(1.2), scale=scale)
        out[f"generate/{scale}"] = dict(motion=motion_hash(m), result=result_hash(r))
    with open(out_path, "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)
    print(len(out), "cases")


if __name__ == "__main__":
    main(sys.argv[1])
