"""Per validation path, the style classifier's reading of one style's walk (issue #12; the lead's diagnostic of session 8).

For each of the first COUNT paths drawn with SEED (use the validation seed 1012, never the held-out one): the mean P of STYLE
(default active) over the 2 s windows of `rigmind eval locomotion`'s classifier, the top two styles, the share of windows read as
STYLE and the share of frames under 0.9 m/s. No Blender. Usage:
    .venv/bin/python bench/bench_active_paths.py 1012 24 [STYLE]
"""
import sys, time, numpy as np
from rigmind.backend.locomotion import eval as E, features as FT, path_sets as PS, style_classifier as SC
from rigmind.backend.locomotion import controllers, walk_generation, walk_speeds
seed = int(sys.argv[1]); count = int(sys.argv[2]); style = sys.argv[3] if len(sys.argv) > 3 else "active"
paths = PS.random_paths(seed, count)
ctl = controllers.load_controller("neural")
cache = FT.DEFAULT_CACHE_DIR
clf = E.cached_classifier(cache, 0)
default = walk_speeds.style_speeds(style, "walk")[0]
k = clf.styles.index(style)
for p in paths:
    t = time.time()
    motion, _ = walk_generation.generate_path(ctl, p.points, style=style, speed=p.speeds(default))
    c = SC._as_features(motion)
    probs = clf.window_probs(SC.frame_features(c))
    m = probs.mean(0)
    order = np.argsort(-m)
    sp = np.linalg.norm(np.asarray(c.root_vel), axis=1)
    L = p.length
    print(f"{p.name} len {L:5.1f} m turns {np.round(np.abs(p.turns_deg)).astype(int).tolist()} frames {c.num_frames} "
          f"P({style})={m[k]:.2f} top {clf.styles[order[0]]} {m[order[0]]:.2f} 2nd {clf.styles[order[1]]} {m[order[1]]:.2f} "
          f"win-read {np.mean(probs.argmax(1)==k):.2f} slow<0.9 {np.mean(sp<0.9):.2f} ({time.time()-t:.1f}s)", flush=True)
