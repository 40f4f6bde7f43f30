"""Drive (issue #19): per-tick cost, the recorded take's foot skate, a
mid-drive style switch, and a slow machine's tick rate.

    .venv/bin/python bench/bench_drive.py [--data ../shared/data] [--cache .cache/locomotion]

1. Per-tick cost on X Bot (``characters/Xbot.glb``) and the mannequin, over
   a scripted 10 s drive at the scene's 30 fps (one controller step per
   tick): controller step, mapping onto the rig (LiveRetarget), pose write
   (foreach_set on the pose bones), median and 95th percentile; Blender's own
   evaluation of the written pose (``view_layer.update()``, what a redraw
   costs on top) is listed apart.
2. The 10 s take's length and foot skate after the cleanup, on the Bandai
   skeleton (the locomotion evaluation's metric, ``metrics.foot_skate``)
   and on the baked rig (foot bones sampled in the scene), against the
   validation mocap's walking clips measured in the same run.
3. A 16 s drive switching style from normal to elderly at 8 s: the style
   classifier's per-window top style over the take.
4. A slow machine: 30 ms of extra work per tick in a real-time loop; the
   tick rate drops (TickRate) while game time keeps up with the wall clock.
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="rigmind-bench-"))

import bpy  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rigmind.backend.locomotion import drive_input  # noqa: E402
from rigmind.backend.locomotion import features  # noqa: E402
from rigmind.backend.locomotion import metrics  # noqa: E402
from rigmind.backend.locomotion import style_classifier  # noqa: E402
from rigmind.backend.locomotion.eval import cached_classifier, machine_description  # noqa: E402
from rigmind.operators import drive_scene  # noqa: E402
from rigmind.backend.locomotion import controllers
from rigmind.operators import mannequin, retarget_scene, rig_files  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
E = drive_input.InputEvent

#: The 10 s drive (time s, event): record, forward, right with a run, back
#: toward the camera slowly, left; finish at 10 s.
TEN_SECONDS = [
    (0.0, E("R")), (0.0, E("W")),
    (3.0, E("W", "RELEASE")), (3.0, E("D")), (4.0, E("LEFT_SHIFT")), (5.0, E("LEFT_SHIFT", "RELEASE")),
    (6.0, E("D", "RELEASE")), (6.0, E("S")), (6.0, E("LEFT_CTRL")),
    (8.0, E("S", "RELEASE")), (8.0, E("LEFT_CTRL", "RELEASE")), (8.0, E("A")),
    (10.0, E("A", "RELEASE")),
]


def load_rig(kind: str, data: Path):
    if kind == "xbot":
        rig_files.load_rig_file(data / "characters" / "Xbot.glb")
        arm = rig_files.find_armature()
    else:
        bpy.ops.wm.read_factory_settings(use_empty=True)
        arm = mannequin.build_mannequin()["armature"]
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 30, 1.0
    return arm


def drive(session, script, seconds: float, fps: float, evaluate=False):
    """Feed ``script`` and tick at ``fps`` for ``seconds`` of game time;
    returns per-tick timings (s) {step, map, write, eval}."""
    events = sorted(script, key=lambda e: e[0])
    k = 0
    out = {"step": [], "map": [], "write": [], "eval": []}
    n = int(round(seconds * fps))
    for i in range(1, n + 1):
        t = (i - 1) / fps
        while k < len(events) and events[k][0] <= t + 1e-9:
            session.handle(events[k][1])
            k += 1
        st = session.tick(1.0 / fps)
        if st["steps"]:
            out["step"].append(st["step_s"])
            out["map"].append(st["map_s"])
            out["write"].append(st["write_s"])
        if evaluate:
            t0 = time.perf_counter()
            bpy.context.view_layer.update()
            out["eval"].append(time.perf_counter() - t0)
    while k < len(events):  # events at the very end (releases)
        session.handle(events[k][1])
        k += 1
    return out


def ms(v, q=50):
    return 1000.0 * float(np.percentile(v, q))


def foot_bones(arm):
    tmap = retarget_scene.target_mapping(arm)
    return {c: tmap.bones[c] for c in ("foot_l", "foot_r", "toes_l", "toes_r") if c in tmap.bones}


def scene_skate(arm, action, fps):
    """Foot skate of the baked take, measured on the rig's foot and toe bones
    sampled in the scene (floor z = 0; each joint's planted height its own
    1st-percentile height)."""
    a, b = (int(round(v)) for v in action.frame_range)
    bones = foot_bones(arm)
    pos = retarget_scene.sample_positions_world(arm, bones, range(a, b + 1))
    names = list(bones)
    p = np.stack([pos[c] for c in names], axis=1)
    return metrics.foot_skate(p, foot_joints=list(range(len(names))), fps=fps), p


def part1_2(data, ctl, mocap_skate):
    rows, takes = [], []
    for kind in ("xbot", "mannequin"):
        arm = load_rig(kind, data)
        s = drive_scene.DriveSession(arm, controller=ctl)
        drive(s, [(0.0, E("W"))], 1.0, 30.0)  # warm-up (not recorded)
        s.game_time, s.steps = 0.0, 0  # a fresh game clock for the measured drive
        t = drive(s, TEN_SECONDS, 10.0, 30.0, evaluate=True)
        got = s.take_motion()
        raw = got[0]
        t0 = time.perf_counter()
        action, _ = s.finish()
        bake = time.perf_counter() - t0
        fps = bpy.context.scene.render.fps
        sk_scene, _ = scene_skate(arm, action, fps)
        a, b = action.frame_range
        from rigmind.backend.locomotion.cleanup import pin_feet

        clean = pin_feet(raw, predicted=got[1], feet=got[2])
        sk_clean = metrics.foot_skate(clean)["skate_cm_per_frame"]
        sk_raw = metrics.foot_skate(raw)["skate_cm_per_frame"]
        total = np.array(t["step"]) + np.array(t["map"]) + np.array(t["write"])
        rows.append(dict(rig=f"{arm.name if kind == 'mannequin' else 'X Bot'} ({len(arm.data.bones)} bones)",
                         step=ms(t["step"]), map=ms(t["map"]), write=ms(t["write"]), total=ms(total),
                         total95=ms(total, 95), eval=ms(t["eval"]), ticks=len(total),
                         frames=int(round(b - a)) + 1, seconds=(b - a) / fps, fps=fps, raw=sk_raw,
                         clean=sk_clean, scene=sk_scene["skate_cm_per_frame"], bake=bake))
        takes.append(clean)
    print(f"machine: {machine_description()}; load average while measuring {os.getloadavg()[0]:.1f} "
          "(other jobs share the 2 cores)")
    print()
    print("| rig | controller step | mapping | pose write | per tick (median / p95) | Blender's evaluation (apart) | ticks |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['rig']} | {r['step']:.3f} ms | {r['map']:.3f} ms | {r['write']:.3f} ms | "
              f"{r['total']:.3f} / {r['total95']:.3f} ms | {r['eval']:.3f} ms | {r['ticks']} |")
    print()
    print(f"| rig | take (10 s drive at {rows[0]['fps']} fps) | skate raw | skate after cleanup (Bandai skeleton) | "
          f"skate on the baked rig | validation mocap | bake |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['rig']} | {r['frames']} frames = {r['seconds']:.2f} s | {r['raw']:.2f} | {r['clean']:.2f} | "
              f"{r['scene']:.2f} | {mocap_skate:.2f} | {r['bake']:.2f} s |")
    return rows


def part3(data, ctl, classifier):
    arm = load_rig("mannequin", data)
    s = drive_scene.DriveSession(arm, controller=ctl, style="normal")
    # 16 s: record, walk a wide curve (forward, then forward-right), switch to elderly at 8 s.
    script = [(0.0, E("R")), (0.0, E("W")), (4.0, E("D")), (6.0, E("D", "RELEASE")),
              (8.0, E(drive_input._DIGITS[drive_input.STYLES.index("elderly")])), (12.0, E("A")), (14.0, E("A", "RELEASE"))]
    drive(s, script, 16.0, 30.0)
    motion, contacts, feet = s.take_motion()
    s.cancel()
    from rigmind.backend.locomotion.cleanup import pin_feet

    clean = pin_feet(motion, predicted=contacts, feet=feet)
    probs = classifier.window_probs(style_classifier.frame_features(features.compute_features(clean)))
    starts = list(range(0, clean.num_frames - style_classifier.WINDOW + 1, style_classifier.HOP))
    if starts[-1] != clean.num_frames - style_classifier.WINDOW:
        starts.append(clean.num_frames - style_classifier.WINDOW)
    top = [classifier.styles[int(k)] for k in probs.argmax(1)]
    ie, inn = classifier.styles.index("elderly"), classifier.styles.index("normal")
    print()
    print("Style switch normal → elderly at 8.0 s (key 2, blended over 0.5 s), 16 s take, classifier windows of 2 s:")
    print()
    print("| window (s) | top style | p(normal) | p(elderly) |")
    print("|---|---|---|---|")
    for st, t, p in zip(starts, top, probs):
        print(f"| {st / 30:.1f}–{(st + style_classifier.WINDOW) / 30:.1f} | {t} | {p[inn]:.2f} | {p[ie]:.2f} |")
    before = [t for st, t in zip(starts, top) if st + style_classifier.WINDOW <= 8 * 30]
    after = [t for st, t in zip(starts, top) if st >= 9 * 30]
    print()
    print(f"windows wholly before the switch: {before.count('normal')}/{len(before)} normal; "
          f"wholly after (from 9 s): {after.count('elderly')}/{len(after)} elderly")
    return before, after


def part4(data, ctl):
    """A real-time loop like the modal operator's, with 30 ms of extra work
    per tick standing in for a slow machine (viewport drawing included)."""
    arm = load_rig("mannequin", data)
    s = drive_scene.DriveSession(arm, controller=ctl)
    s.handle(E("W"))
    rate = drive_input.TickRate(30.0)
    wall0 = last = time.perf_counter()
    next_tick = wall0
    ticks = 0
    rates = []
    while time.perf_counter() - wall0 < 4.0:
        now = time.perf_counter()
        if now < next_tick:
            time.sleep(next_tick - now)
            continue
        now = time.perf_counter()
        dt, last = now - last, now
        t0 = time.perf_counter()
        s.tick(dt)
        time.sleep(0.030)  # the slow machine
        rate.update(time.perf_counter() - t0)
        rates.append(rate.rate)
        ticks += 1
        next_tick = now + rate.interval
    wall = time.perf_counter() - wall0
    s.cancel()
    print()
    print(f"Slow machine (30 ms extra per tick, scene 30 fps): {ticks} ticks in {wall:.2f} s wall = "
          f"{ticks / wall:.1f} Hz (TickRate settled at {rates[-1]:.1f} Hz); game time {s.game_time:.2f} s, "
          f"controller frames {s.steps} (= {s.steps / 30:.2f} s): behind the wall clock by {wall - s.game_time:.2f} s")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    ap.add_argument("--cache", default=str(features.DEFAULT_CACHE_DIR))
    args = ap.parse_args()
    data = Path(args.data)
    features.build_cache(data, args.cache)
    mocap = [c for c in features.load_cache(args.cache, split="validation", mirrored=False, styles=drive_input.STYLES) if c.labels.get("gait") == "walk"]
    mocap_skate = float(np.mean([metrics.foot_skate(c.to_motion())["skate_cm_per_frame"] for c in mocap]))
    print(f"validation mocap: {len(mocap)} walking clips, mean foot skate {mocap_skate:.2f} cm/frame")
    ctl = controllers.load_controller("neural")
    part1_2(data, ctl, mocap_skate)
    part3(data, ctl, cached_classifier(args.cache, 0))
    part4(data, ctl)


if __name__ == "__main__":
    main()
