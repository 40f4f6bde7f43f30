"""Does the body turn ahead of its path in a turn, as people do? (issue #12, session 8)

In a turn people face a little ahead of where they travel: the body turns
first and the walking direction follows. Measured as the *facing lead*
(s): the sideslip angle ``beta`` (radians; the angle of the root's ground
velocity from the facing direction, positive toward the character's left)
against the yaw rate ``omega`` (rad/s, positive = turning left), as the
least-squares slope ``lead = -sum(beta * omega) / sum(omega^2)``
(`metrics.facing_lead`): a body that faces ``lead`` seconds ahead of its
travel direction has ``beta = -lead * omega``. Positive = the facing leads,
negative = the body turns after its path (it crabs sideways round the
corner). Frames count when the walk is at least 0.8 m/s and turning at
least 0.4 rad/s, both averaged over 0.5 s (a stride's sway left out;
`metrics.turning_frames`).

1. The mocap: the walk clips of each style (d2 and d1, no runs) of the
   features cache, validation and training splits.
2. Walk Along Path: each style walked along validation paths (seed 1012,
   `path_sets`; never the held-out seed) exactly as the add-on makes it
   (`locomotion_scene.generate_path`, each path's speeds x the style's
   default), for each ``--lead`` value of `path_follow.FACING_LEAD_SECONDS`
   (how far ahead along the path, in seconds at the commanded speed, the
   facing asked of the controller is taken).
3. With ``--accuracy``: per lead, the style accuracy of `rigmind eval
   locomotion` (`evaluation.locomotion_rig_scores.style_accuracy`) on the first
   ``--accuracy-count`` validation paths, and for each ``--margin-style``
   the classifier's margin (P(style) minus the best other style's) on the
   first ``--margin-paths`` validation paths.

No Blender. Usage:
    .venv/bin/python bench/bench_turn_facing.py --lead 0.2 0.45 [--paths 24] [--accuracy]
    .venv/bin/python bench/bench_turn_facing.py --lead 0.2 0.45 --paths 0 --accuracy --accuracy-count 0 \
        --margin-style active,elderly,exhausted,feminine,masculine,normal,youthful --margin-paths 24
"""

from __future__ import annotations

import argparse

import numpy as np

from rigmind.backend.locomotion import dataset
from rigmind.backend.locomotion import eval
from rigmind.backend.locomotion import features
from rigmind.backend.locomotion import metrics
from rigmind.backend.locomotion import path_follow
from rigmind.backend.locomotion import path_sets
from rigmind.backend.locomotion import style_classifier
from rigmind.evaluation import locomotion_rig_scores as rig_scores
from rigmind.backend.locomotion import controllers, walk_generation, walk_speeds


def turning_frames(root_vel, yaw_rate):
    return metrics.turning_frames(root_vel, yaw_rate, features.FPS)


def facing_lead(betas, omegas) -> tuple:
    """``(lead s, frames)`` of lists of per-clip arrays (:func:`.metrics.facing_lead`)."""
    return metrics.facing_lead(list(betas), list(omegas)), int(sum(len(w) for w in omegas))


def mocap_leads(split: str) -> dict:
    """``{style: (lead s, frames)}`` of the walk clips of ``split``."""
    clips = features.load_cache(None, split=split, mirrored=False, styles=dataset.D2_STYLES, keys=("root_vel", "root_ang_vel"))
    acc = {}
    for c in clips:
        content = str(c.labels.get("content", ""))
        if "run" in content or "dash" in content:
            continue
        b, w = turning_frames(c.root_vel, c.root_ang_vel)
        s = c.labels.get("style_key")
        acc.setdefault(s, ([], []))
        acc[s][0].append(b)
        acc[s][1].append(w)
    return {s: facing_lead(*v) for s, v in acc.items()}


def generated_leads(ctl, paths, styles) -> dict:
    """``{style: (lead s, frames)}`` of Walk Along Path's walks."""
    out = {}
    for style in styles:
        default = walk_speeds.style_speeds(style, "walk")[0]
        bs, ws = [], []
        for p in paths:
            motion, _ = walk_generation.generate_path(ctl, p.points, style=style, speed=p.speeds(default))
            c = style_classifier._as_features(motion)
            b, w = turning_frames(c.root_vel, c.root_ang_vel)
            bs.append(b)
            ws.append(w)
        out[style] = facing_lead(bs, ws)
    return out


def margins(ctl, clf, paths, style: str) -> np.ndarray:
    """Per path: P(style) minus the largest other style's P (the
    evaluation's verdict is right when > 0)."""
    k = clf.styles.index(style)
    default = walk_speeds.style_speeds(style, "walk")[0]
    out = []
    for p in paths:
        motion, _ = walk_generation.generate_path(ctl, p.points, style=style, speed=p.speeds(default))
        m = style_classifier.predict_style(clf, motion)
        out.append(float(m[k] - np.delete(m, k).max()))
    return np.array(out)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lead", type=float, nargs="+", default=[path_follow.FACING_LEAD_SECONDS],
                    help="values of path_follow.FACING_LEAD_SECONDS to walk with (s)")
    ap.add_argument("--paths", type=int, default=24, help="validation paths for the facing lead")
    ap.add_argument("--styles", default=",".join(dataset.D2_STYLES))
    ap.add_argument("--accuracy", action="store_true", help="also the style accuracy and the margins")
    ap.add_argument("--accuracy-count", type=int, default=8)
    ap.add_argument("--margin-style", default="active", help="style(s), comma separated, whose margins are listed")
    ap.add_argument("--margin-paths", type=int, default=80)
    a = ap.parse_args(argv)
    styles = a.styles.split(",")

    ctl = controllers.load_controller("neural")
    if a.paths > 0:
        print("### Facing lead in turns (s; + = the body faces ahead of its travel)\n")
        mocap = {split: mocap_leads(split) for split in ("validation", "train")}
        paths = path_sets.random_paths(path_sets.VALIDATION_SEED, a.paths)
        gen = {}
        for lead in a.lead:
            path_follow.FACING_LEAD_SECONDS = lead
            gen[lead] = generated_leads(ctl, paths, styles)
        head = "| style | mocap validation | mocap train | " + " | ".join(f"Walk Along Path, lead {v:g} s" for v in a.lead) + " |"
        print(head)
        print("|" + "---|" * (3 + len(a.lead)))
        for s in styles:
            cells = [f"{mocap[sp].get(s, (float('nan'), 0))[0]:+.3f} ({mocap[sp].get(s, (0, 0))[1]})" for sp in ("validation", "train")]
            cells += [f"{gen[v][s][0]:+.3f} ({gen[v][s][1]})" for v in a.lead]
            print(f"| {s} | " + " | ".join(cells) + " |")
        print(f"\n(frames in brackets; Walk Along Path on the first {a.paths} validation paths)")

    if a.accuracy:
        clf = eval.cached_classifier(features.DEFAULT_CACHE_DIR, 0)
        if a.accuracy_count > 0:
            print(f"\n### Style accuracy (first {a.accuracy_count} validation paths)\n")
            print("| lead (s) | mean | " + " | ".join(dataset.D2_STYLES) + " |")
            print("|" + "---|" * (2 + len(dataset.D2_STYLES)))
        for lead in a.lead if a.accuracy_count > 0 else ():
            path_follow.FACING_LEAD_SECONDS = lead
            acc = rig_scores.style_accuracy(path_sets.random_paths(path_sets.VALIDATION_SEED, a.accuracy_count), ctl)
            print(f"| {lead:g} | {acc['mean']:.0%} | " + " | ".join(f"{acc['styles'][s]:.0%}" for s in dataset.D2_STYLES)
                  + " |", flush=True)
        print(f"\n### Margin: P(style) minus the best other style's P (first {a.margin_paths} validation paths)\n")
        print("| lead (s) | style | paths read right | mean margin | smallest margin |")
        print("|---|---|---|---|---|")
        for lead in a.lead:
            path_follow.FACING_LEAD_SECONDS = lead
            for style in a.margin_style.split(","):
                m = margins(ctl, clf, path_sets.random_paths(path_sets.VALIDATION_SEED, a.margin_paths), style)
                print(f"| {lead:g} | {style} | {int(np.sum(m > 0))} / {len(m)} | {m.mean():+.3f} | {m.min():+.3f} |",
                      flush=True)


if __name__ == "__main__":
    main()
