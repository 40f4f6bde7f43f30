import sys, numpy as np
sys.path.insert(0, "/work/s8heel/bench")
import bench_swing_lift as B, bench_swing_toe_angle as T
from rigmind.backend.locomotion import cleanup as C, features as FT, path_sets as PS
from rigmind.operators import locomotion_rig_eval as E, locomotion_scene as LS
ctl = LS.load_controller("neural"); leg = LS.controller_leg_length(ctl)
def prof(motion):
    names = list(motion.skeleton.names); _, wp = motion.world()
    rows = []
    for s in "LR":
        a, t = wp[:, names.index(f"Foot_{s}")], wp[:, names.index(f"Toes_{s}")]
        p = T.pitch_deg(a, t); sw = ~E._contacts(a, motion.fps, leg)
        flat = np.median(p[~sw])
        for i, j in zip(*E.runs(sw)):
            if j - i < 5: continue
            ph = np.linspace(0, 1, j - i)
            rows.append(np.interp(np.linspace(0, 1, 11), ph, p[i:j] - flat))
    return np.array(rows)
mo = np.concatenate([prof(FT.load_clip(c)) for c in T.validation_mocap("/work/shared/data")])
cfg = LS.path_pin_config("normal")
walks = B.walks(ctl, PS.random_paths(1012, 16), scale=1.11)
ge = np.concatenate([prof(C.pin_feet(r.motion, predicted=r.contacts, feet=r.feet, config=cfg)) for _, r in walks])
raw = np.concatenate([prof(r.motion) for _, r in walks])
print("swing phase 0..1 step .1; foot pitch minus stance pitch (deg, + = toe down), median")
print("mocap  ", np.round(np.median(mo, 0), 1))
print("gen    ", np.round(np.median(ge, 0), 1))
print("gen raw", np.round(np.median(raw, 0), 1))
