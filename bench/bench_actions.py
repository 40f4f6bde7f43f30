"""Jumps, crouches and get-ups on the user's rigs, read from the exported
files (issue #28 item 7).

    .venv/bin/python bench/bench_actions.py [--rigs mannequin,xbot,rpm,rigify] [--json OUT.json] [--md OUT.md]

For each rig, whole ``rigmind walk`` processes write BVH files that
``evaluation/locomotion_action_scores.py`` scores:

- the issue's acceptance take (path ``0,0;6,0;6,5;1,5``, ``--action jump@3
  --action crouch@7-10 --action jump@13``) and the same path plain;
- two held-out paths (``path_sets.held_out_paths``, never tuned on) with a
  jump at 30 % of their length and a crouch over 55-70 %, and plain;
- ``--cycle --gait crouch`` (its seam), ``--start lying-up`` and
  ``lying-down`` on the acceptance path;
- the references on the same rig: three Bandai normal walks retargeted (the
  mocap's p99.9 per-frame largest joint step), DeepMimic's sneak
  retargeted (its knee bend).

And the cost: a 20 m path (``0,0;8,0;8,6;2,6``) baked with three actions
and without, on the mannequin, three times each alternating, wall and CPU
seconds from process start to file written (``os.wait4``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from bench_scaling import measure  # noqa: E402

from rigmind.backend.bvh import read_bvh  # noqa: E402
from rigmind.backend.locomotion.path_sets import held_out_paths  # noqa: E402
from rigmind.evaluation import locomotion_action_scores as S  # noqa: E402

RIGMIND = [sys.executable, "-m", "rigmind"]
ACCEPT_PATH = "0,0;6,0;6,5;1,5"
ACCEPT_ACTIONS = ["jump@3", "crouch@7-10", "jump@13"]
COST_PATH, COST_ACTIONS = "0,0;8,0;8,6;2,6", ["jump@4", "crouch@9-12", "jump@16"]
MOCAP = [f"bandai_namco_d2_locomotion/bvh/dataset-2_walk_normal_00{i}.bvh.gz" for i in (1, 2, 3)]
SNEAK = "deepmimic_motions/humanoid3d_stealthy_walk.txt"
RIGIFY_SCRIPT = """
import bpy, addon_utils, sys
bpy.ops.wm.read_factory_settings(use_empty=True)
addon_utils.enable("rigify", default_set=True)
bpy.ops.object.armature_human_metarig_add()
meta = bpy.context.view_layer.objects.active
bpy.ops.pose.rigify_generate()
data = meta.data
bpy.data.objects.remove(meta)
bpy.data.armatures.remove(data)
bpy.ops.wm.save_as_mainfile(filepath=sys.argv[-1])
"""


def points_text(points) -> str:
    return ";".join(f"{x:.4f},{y:.4f}" for x, y in points)


def parse_points(text: str) -> np.ndarray:
    return np.array([[float(v) for v in p.split(",")] for p in text.split(";")])


def run(args, out: Path) -> dict:
    rec = measure(RIGMIND + [str(a) for a in args] + ["--out", str(out)], out)
    if rec["rc"] != 0:
        raise RuntimeError(f"rigmind {' '.join(map(str, args))}: exit {rec['rc']}: {rec.get('stderr_tail')}")
    return rec


def rig_files(names, data: Path, tmp: Path) -> dict:
    files = {}
    for name in names:
        if name == "mannequin":
            files[name] = tmp / "mannequin.blend"
            subprocess.run(RIGMIND + ["mannequin", "--out", str(files[name])], check=True, capture_output=True)
        elif name == "xbot":
            files[name] = data / "characters/Xbot.glb"
        elif name == "rpm":
            files[name] = data / "character_rpm_arkit/brunette-t.glb"
        elif name == "rigify":
            files[name] = tmp / "rigify.blend"
            subprocess.run([sys.executable, "-c", "import runpy,sys; exec(sys.argv[1])", RIGIFY_SCRIPT, str(files[name])],
                           check=True, capture_output=True)
    return files


def mocap_step(rig: Path, data: Path, tmp: Path) -> float:
    steps = []
    for i, clip in enumerate(MOCAP):
        out = tmp / f"mocap_{i}.bvh"
        run(["retarget", "--src", data / clip, "--rig", rig], out)
        steps.append(S.joint_steps(read_bvh(out).world_positions()))
    return float(np.percentile(np.concatenate(steps), 99.9))


def sneak_knee(rig: Path, data: Path, tmp: Path) -> float:
    out = tmp / "sneak.bvh"
    run(["retarget", "--src", data / SNEAK, "--rig", rig], out)
    return float(np.degrees(S.body(read_bvh(out))["knees"].mean()))


def plan_on(points: np.ndarray) -> tuple:
    length = float(np.sum(np.linalg.norm(np.diff(points, axis=0), axis=1)))
    j, a, b = 0.3 * length, 0.55 * length, 0.7 * length
    return [f"jump@{j:.2f}", f"crouch@{a:.2f}-{b:.2f}"], [(j, 0.6)], [(a, b)]


def jump_lengths(texts, default=0.6) -> list:
    """``[(arc, air travel m)]`` of the jump texts (the default's rough length: the window only)."""
    return [(float(t.split("@")[1].split(",")[0]), default) for t in texts if t.startswith("jump")]


def crouch_ranges(texts) -> list:
    return [tuple(float(v) for v in t.split("@")[1].split("-")) for t in texts if t.startswith("crouch")]


def score_rig(name: str, rig: Path, data: Path, tmp: Path) -> dict:
    d = tmp / name
    d.mkdir()
    ref = mocap_step(rig, data, d)
    rec = {"rig": name, "mocap_step_p999_m": ref, "sneak_knee_deg": sneak_knee(rig, data, d), "takes": {}}
    takes = [("acceptance", ACCEPT_PATH, ACCEPT_ACTIONS)]
    for k, p in enumerate(held_out_paths(2)):
        texts, _, _ = plan_on(p.points)
        takes.append((f"held-out {k}", points_text(p.points), texts))
    for label, path, texts in takes:
        plain_out, act_out = d / f"{label}_plain.bvh".replace(" ", "_"), d / f"{label}.bvh".replace(" ", "_")
        run(["walk", "--rig", rig, "--path", path], plain_out)
        args = ["walk", "--rig", rig, "--path", path] + [x for t in texts for x in ("--action", t)]
        run(args, act_out)
        pts = parse_points(path)
        plain_motion = read_bvh(plain_out)
        plain = S.score_take(plain_motion, pts, reference_step=ref)
        scored = S.score_take(read_bvh(act_out), pts, jump_lengths(texts), crouch_ranges(texts), reference_step=ref,
                              plain=S.body(plain_motion))
        rec["takes"][label] = {"actions": texts, "with": scored, "plain": plain}
    for start in ("lying-up", "lying-down"):
        out = d / f"{start}.bvh"
        run(["walk", "--rig", rig, "--path", ACCEPT_PATH, "--start", start], out)
        m = read_bvh(out)
        b = S.body(m)
        scored = S.score_take(m, parse_points(ACCEPT_PATH), start=start, reference_step=ref)
        scored["first_hips_m"] = float(b["hips"][0, 2])
        rec["takes"][start] = {"actions": [f"--start {start}"], "with": scored}
    out = d / "crouch_cycle.bvh"
    run(["walk", "--rig", rig, "--cycle", "--gait", "crouch"], out)
    rec["crouch_cycle"] = S.seam(read_bvh(out))
    rec["crouch_cycle"]["hips_ratio"] = float(np.median(S.body(read_bvh(out))["hips"][:, 2])
                                              / rec["takes"]["acceptance"]["plain"]["walking_hips_m"])
    return rec


def cost(rig: Path, tmp: Path, repeats: int = 3) -> dict:
    rows = {"plain": [], "actions": []}
    for _ in range(repeats):
        for kind in ("plain", "actions"):
            extra = [x for t in COST_ACTIONS for x in ("--action", t)] if kind == "actions" else []
            rows[kind].append(run(["walk", "--rig", rig, "--path", COST_PATH] + extra, tmp / f"cost_{kind}.bvh"))
    med = {k: {m: float(np.median([r[m] for r in v])) for m in ("seconds", "cpu_s")} for k, v in rows.items()}
    return {"path": COST_PATH, "actions": COST_ACTIONS, "repeats": repeats, "median": med,
            "ratio_wall": med["actions"]["seconds"] / med["plain"]["seconds"],
            "ratio_cpu": med["actions"]["cpu_s"] / med["plain"]["cpu_s"],
            "frames": {k: v[0]["stdout_tail"] for k, v in rows.items()}}


def _f(x, nd=3):
    return "—" if x is None else f"{x:.{nd}f}"


def markdown(res: dict) -> str:
    lines = [f"Command: `{res['command']}`; machine: {res['machine']}; date {res['date']}.", ""]
    lines += ["| rig | take | jump: air s | flight s / physics s | apex over walk m | crouch hips max / mean | "
              "knee ° (clip's) | path err mean m (plain) | arrival m | transition step m (× mocap p99.9) | "
              "skate mm/frame (plain) | take-off / landing skate mm |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in res["rigs"]:
        for label, t in r["takes"].items():
            w, p = t["with"], t.get("plain") or {}
            js = w["jumps"]
            air = ", ".join(_f(j["air_s"], 2) for j in js) or "—"
            fl = ", ".join(f"{j['flight_s']:.3f} / {j['physics_s']:.3f}" for j in js if "flight_s" in j) or "—"
            apex = ", ".join(_f(j.get("apex_over_walking_m")) for j in js) or "—"
            sk = ", ".join(f"{j['skate_take_off_mm']:.1f} / {j['skate_landing_mm']:.1f}" for j in js if "skate_landing_mm" in j) or "—"
            cr = ", ".join(f"{c['hips_ratio_max']:.3f} / {c['hips_ratio_mean']:.3f}" for c in w["crouches"]) or "—"
            kn = ", ".join(f"{c['knee_bend_deg']:.0f} ({r['sneak_knee_deg']:.0f})" for c in w["crouches"]) or "—"
            err = f"{w['path_error_mean_m']:.3f} ({_f(p.get('path_error_mean_m'))})"
            step = f"{w['transition_step_max_m']:.3f} ({w.get('transition_step_ratio', 0):.2f}×)"
            skate = f"{w['skate_mm']:.2f} ({_f(w.get('plain_skate_mm'), 2)})"
            lines.append(f"| {r['rig']} | {label}: {'; '.join(t['actions'])} | {air} | {fl} | {apex} | {cr} | {kn} | "
                         f"{err} | {w['arrival_m']:.3f} | {step} | {skate} | {sk} |")
    lines += ["", "| rig | mocap p99.9 step m | crouch cycle: wrap step m / largest inside m | closure m | hips / walking |",
              "|---|---|---|---|---|"]
    for r in res["rigs"]:
        c = r["crouch_cycle"]
        lines.append(f"| {r['rig']} | {r['mocap_step_p999_m']:.3f} | {c['wrap_step_m']:.3f} / {c['inner_step_max_m']:.3f} | "
                     f"{c['closure_m']:.4f} | {c['hips_ratio']:.3f} |")
    if res.get("cost"):
        c = res["cost"]
        lines += ["", f"Cost, mannequin, path `{c['path']}` (20 m), median of {c['repeats']} alternating runs: "
                  f"plain {c['median']['plain']['seconds']:.2f} s wall / {c['median']['plain']['cpu_s']:.2f} s CPU, "
                  f"with `{' '.join(c['actions'])}` {c['median']['actions']['seconds']:.2f} s / "
                  f"{c['median']['actions']['cpu_s']:.2f} s: **{c['ratio_wall']:.2f}× wall, {c['ratio_cpu']:.2f}× CPU**."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rigs", default="mannequin,xbot,rpm,rigify")
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    ap.add_argument("--json", default=None)
    ap.add_argument("--md", default=None)
    ap.add_argument("--no-cost", action="store_true")
    args = ap.parse_args(argv)
    data = Path(args.data)
    names = [n for n in args.rigs.split(",") if n]
    with tempfile.TemporaryDirectory(prefix="rigmind-actions-") as t:
        tmp = Path(t)
        files = rig_files(names, data, tmp)
        res = {"command": "python bench/bench_actions.py " + " ".join(argv or sys.argv[1:]),
               "machine": f"{platform.processor() or platform.machine()}, nproc {os.cpu_count()}, Python {platform.python_version()}",
               "date": time.strftime("%Y-%m-%d"), "rigs": []}
        for name in names:
            print(f"[actions] {name}", flush=True)
            res["rigs"].append(score_rig(name, files[name], data, tmp))
        if not args.no_cost and "mannequin" in files:
            print("[actions] cost", flush=True)
            res["cost"] = cost(files["mannequin"], tmp)
    text = markdown(res)
    print(text)
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1, default=float))
    if args.md:
        Path(args.md).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
