"""Issue #16 (one contact detector, one foot-lock/leg-IK module): behaviour
identical. SHA-256 of every output array of retarget.foot_contacts,
features.foot_contacts, compute_features' contacts, cleanup.stance_contacts
(6 clips x options; 240 fuzzed inputs with ties on a 5 mm grid and 0-3
frames), pin_feet (4 Bandai clips x 3 configs; 2 controller walks along a
path x predicted/detected contacts), plant_feet (2 gesture-model takes x 2
configs), the backend retarget (3 clips x same/scaled skeleton x 5 option
sets) and retarget_onto in Blender (5 rigs x Bandai walk / BEAT2 take x 3
root modes: result arrays and every action key).

    .venv/bin/python bench/refactor_identity/feet_ref.py --against 475cfc3
        (runs this script on that commit's tree and on this checkout, compares)
    .venv/bin/python bench/refactor_identity/feet_ref.py OUT.json [PART ...]
        (parts: contacts pin controller gesture retarget rigs; default all)
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="rigmind-ref-"))

import numpy as np  # noqa: E402

from rigmind.backend.bvh import read_bvh  # noqa: E402
from rigmind.backend.paths import data_dir  # noqa: E402

DATA = data_dir()
CLIPS = ["bandai_namco_d2_locomotion/bvh/dataset-2_walk_normal_001.bvh.gz",
         "bandai_namco_d2_locomotion/bvh/dataset-2_run_normal_001.bvh.gz",
         "bandai_namco_d1_locomotion/bvh/dataset-1_dash_active_001.bvh.gz",
         "bandai_namco_d1_locomotion/bvh/dataset-1_walk-back_angry_001.bvh.gz",
         "cmu_131_start_walk_stop/131_01.bvh", "games105_locomotion/idle.bvh"]
OUT: dict = {}


def put(key, value):
    """Hash an array (dtype, shape and bytes) or a plain value."""
    if isinstance(value, (np.ndarray, np.generic)) or (isinstance(value, (list, tuple)) and value
                                                          and isinstance(value[0], np.ndarray)):
        a = np.ascontiguousarray(value)
        h = hashlib.sha256(str((a.dtype.str, a.shape)).encode() + a.tobytes()).hexdigest()
        OUT[key] = h
    elif value is None or isinstance(value, (int, float, str, bool)):
        OUT[key] = repr(value)
    else:
        OUT[key] = repr(type(value))


def put_motion(key, m):
    put(key + ".rot", m.rotations)
    put(key + ".root", m.root_positions)
    put(key + ".world", m.world_positions())


def guarded(key, fn):
    try:
        fn()
    except Exception as e:  # the error is part of the behaviour
        OUT[key + ".error"] = f"{type(e).__name__}: {e}"


def clips():
    out = []
    for rel in CLIPS:
        p = DATA / rel
        if p.exists():
            out.append((Path(rel).name, read_bvh(p)))
    return out


def contacts_part(motions):
    from rigmind.backend import retarget as RT
    from rigmind.backend.locomotion import cleanup as CL
    from rigmind.backend.locomotion import features as FT

    rng = np.random.default_rng(0)
    for name, m in motions:
        pos = m.world_positions()
        names = list(m.skeleton.names)
        feet = [i for i, n in enumerate(names) if "foot" in n.lower() or "toe" in n.lower()][:4]
        for thr in [(0.025, 0.35), (0.05, 0.2), (0.01, 0.6)]:
            for leg in (0.8, 1.0):
                for f in (pos, pos[:1], pos[:2], pos[:7], pos[::-1]):
                    guarded(f"rt.fc.{name}.{thr}.{leg}.{len(f)}.{f is pos}",
                            lambda: put(f"rt.fc.{name}.{thr}.{leg}.{len(f)}.{f is pos}",
                                        RT.foot_contacts(f, feet, m.fps, leg, *thr)))
        if "Foot_L" not in names:
            continue
        for kw in [{}, dict(height=0.06, speed=0.5), dict(release=1.2), dict(joints=("Foot_R", "Toes_L"))]:
            for f in (pos, pos[:1], pos[:3], pos[::-1]):
                guarded(f"ft.fc.{name}.{kw}.{len(f)}.{f is pos}",
                        lambda: put(f"ft.fc.{name}.{kw}.{len(f)}.{f is pos}", FT.foot_contacts(f, names, m.fps, **kw)))
        pred = rng.random((len(pos), 4))
        for kw in [{}, dict(predicted=pred), dict(predicted=pred, max_gap=4, min_run=1, height=0.05),
                   dict(predicted=pred[:3])]:
            guarded(f"cl.sc.{name}.{list(kw)}.{kw.get('max_gap')}",
                    lambda: put(f"cl.sc.{name}.{list(kw)}.{kw.get('max_gap')}",
                                CL.stance_contacts(pos, names, m.fps, **kw)))
        feats = FT.compute_features(m)
        put(f"ft.cf.{name}.contacts", feats.contacts)
    fuzz_contacts(rng)
    try:
        from rigmind.backend.foot_contacts import hysteresis
    except ImportError:  # the old tree
        hysteresis = FT._hysteresis
    for n in (0, 1, 2, 5, 40):
        on = rng.random((n, 3)) < 0.3
        off = rng.random((n, 3)) < 0.3
        guarded(f"ft.hy.{n}", lambda: put(f"ft.hy.{n}", hysteresis(on, off & ~on, on[0] | ~off[0])))


def fuzz_contacts(rng):
    """Random walks on a coarse grid (ties at the thresholds happen), still
    stretches, and frame counts 0-3."""
    from rigmind.backend import retarget as RT
    from rigmind.backend.locomotion import cleanup as CL
    from rigmind.backend.locomotion import features as FT

    names = ["Hips", "Foot_L", "Toes_L", "Foot_R", "Toes_R"]
    for i in range(60):
        n = int(rng.integers(0, 4)) if i < 8 else int(rng.integers(5, 200))
        step = rng.normal(scale=rng.choice([0.002, 0.01, 0.03]), size=(n, 5, 3))
        step[rng.random((n, 5)) < 0.5] = 0.0
        pos = np.round(np.cumsum(step, axis=0) / 0.005) * 0.005
        pos[..., 2] = np.abs(pos[..., 2])
        fps = float(rng.choice([24.0, 30.0, 60.0]))
        guarded(f"fz.rt.{i}", lambda: put(f"fz.rt.{i}", RT.foot_contacts(pos, [1, 3, 4], fps, 1.0, 0.025, 0.15)))
        guarded(f"fz.rt2.{i}", lambda: put(f"fz.rt2.{i}", RT.foot_contacts(pos, [2], fps, 0.8)))
        guarded(f"fz.ft.{i}", lambda: put(f"fz.ft.{i}", FT.foot_contacts(pos, names, fps, height=0.02, speed=0.15)))
        guarded(f"fz.cl.{i}", lambda: put(f"fz.cl.{i}", CL.stance_contacts(pos, names, fps, rng.random((n, 4)),
                                                                            max_gap=int(rng.integers(0, 5)),
                                                                            min_run=int(rng.integers(0, 5)))))


def pin_part(motions):
    from rigmind.backend.locomotion import cleanup as CL

    for name, m in motions:
        if "Foot_L" not in m.skeleton.names:
            continue
        m = m.slice(0, min(m.num_frames, 600))
        for tag, cfg in [("default", CL.PinConfig()), ("clear", CL.PinConfig(swing_clearance=0.08)),
                         ("slide", CL.PinConfig(max_slide=1.0, release_reach=2.0, blend_seconds=0.3))]:
            guarded(f"pin.{name}.{tag}", lambda: put_motion(f"pin.{name}.{tag}", CL.pin_feet(m, config=cfg)))
        contacts = CL.stance_contacts(m.world_positions(), list(m.skeleton.names), m.fps)
        put(f"pin.{name}.floors", CL.foot_floors(m))
        put(f"pin.{name}.skate", CL.planted_skate(m, contacts))
        put(f"pin.{name}.skate_src", CL.planted_skate(CL.pin_feet(m), contacts, floors=CL.foot_floors(m)))
        put(f"pin.{name}.knees", CL.knee_angles(m))


def controller_part():
    from rigmind.backend.locomotion.cleanup import PinConfig, pin_feet
    from rigmind.backend.locomotion.path_follow import follow_path, snap_to_path
    from rigmind.operators import locomotion_scene as LS

    if LS.neural_weights() is None:
        OUT["controller"] = "no weights"
        return
    ctl = LS.load_controller("neural")
    pts = np.array([[0.0, 0.0], [3.0, 0.0], [3.0, 2.0]])
    for style in ("normal", "youthful"):
        res = snap_to_path(follow_path(ctl, pts, speed=1.3, style=style), pts)
        put_motion(f"ctl.{style}.raw", res.motion)
        for tag, kw in [("pred", dict(predicted=res.contacts, feet=res.feet)), ("det", {}),
                        ("pred08", dict(predicted=res.contacts, feet=res.feet, config=PinConfig(swing_clearance=0.08)))]:
            put_motion(f"ctl.{style}.{tag}", pin_feet(res.motion, **kw))


def gesture_part():
    from rigmind.backend.audio.features import speech_features
    from rigmind.backend.audio.loading import load_audio
    from rigmind.backend.gesture import generate as GG
    from rigmind.backend.gesture import standing as ST

    model = GG.get_model(runtime="torch")
    for w in sorted((DATA / "beat2_speech_gesture_sample").glob("*.wav"))[:2]:
        clip = load_audio(w)
        clip.samples = clip.samples[: clip.sample_rate * 15]
        feats = speech_features(clip, GG.FPS)
        poses = GG.generate_from_features(model, feats, seed=0)[0]
        raw = GG.G.decode(poses, GG.FPS, model.finger_basis)
        put_motion(f"gs.{w.name}.raw", raw)
        for tag, cfg in [("default", ST.StandingConfig()), ("near", ST.StandingConfig(step_distance=0.05))]:
            put_motion(f"gs.{w.name}.{tag}", ST.plant_feet(raw, cfg))


def retarget_backend_part(motions):
    from rigmind.backend import retarget as RT

    import rigmind  # the tests of the tree under test (the old tree's own under --against)

    sys.path.insert(0, str(Path(rigmind.__file__).resolve().parent / "tests"))
    from test_retarget import BANDAI, scaled  # noqa: E402

    for name, m in motions[:3]:
        m = m.slice(0, min(m.num_frames, 300))
        sk = m.skeleton
        for tag, tgt in [("same", sk), ("scaled", scaled(sk, 0.7))]:
            for opts in [{}, dict(root_mode="in_place"), dict(root_mode="object"), dict(ik=False),
                         dict(ground_height=0.02, hand_ik=False)]:
                key = f"rt.{name}.{tag}.{sorted(opts.items())}"
                guarded(key, lambda: _put_result(key, (RT.retarget(m, BANDAI, tgt, BANDAI, RT.RetargetConfig(**opts)) if hasattr(RT, "RetargetConfig") else RT.retarget(m, BANDAI, tgt, BANDAI, **opts))))


def _put_result(key, r):
    put_motion(key, r.motion)
    for f in ("root_motion", "contacts", "leg_scale", "reference_frame", "foot_levels", "rest_floor"):
        v = getattr(r, f)
        put(f"{key}.{f}", float(v) if isinstance(v, np.floating) else v)


def rigs_part():
    import bpy

    from rigmind.operators import retarget_scene

    import rigmind  # the tests of the tree under test (the old tree's own under --against)

    sys.path.insert(0, str(Path(rigmind.__file__).resolve().parent / "tests"))
    import rig_factory

    sources = [DATA / "bandai_namco_d2_locomotion/bvh/dataset-2_walk_normal_001.bvh.gz",
               DATA / "beat2_speech_gesture_sample/2_scott_0_1_1.npz"]
    want = ("mannequin", "mixamo_apose_prefixed", "smplx", "robot_expressive", "rpm_avatar")
    for rig_name, make in rig_factory.ALL_RIGS:
        if rig_name not in want:
            continue
        for src in sources:
            for opts in [{}, dict(root_mode="object"), dict(root_mode="in_place", ik=True)]:
                key = f"rig.{rig_name}.{src.name}.{sorted(opts.items())}"

                def run():
                    bpy.ops.wm.read_factory_settings(use_empty=True)
                    arm, _ = make()
                    motion, smap = retarget_scene.load_source(src)
                    clip = motion.slice(0, min(motion.num_frames, int(8 * motion.fps)))
                    action, _, result = retarget_scene.retarget_onto(arm, clip, smap, **opts)
                    _put_result(key, result)
                    keys = retarget_scene.action_quaternion_keys(action, arm)
                    put(key + ".keys", np.concatenate([keys[k].ravel() for k in sorted(keys)]))
                guarded(key, run)


def against(commit: str) -> int:
    """Run every part on ``commit``'s tree and on this checkout; 0 when identical."""
    import subprocess

    here = Path(__file__).resolve().parents[2]
    tmp = Path(tempfile.mkdtemp(prefix="rigmind-feet-"))
    (tmp / "old/rigmind").mkdir(parents=True)
    tar = subprocess.run(["git", "-C", str(here), "archive", commit], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tmp / "old/rigmind")], input=tar, check=True)
    env = dict(os.environ, RIGMIND_DATA=str(DATA))
    for tag, extra in (("old", {"PYTHONPATH": str(tmp / "old")}), ("new", {})):
        subprocess.run([sys.executable, __file__, str(tmp / f"{tag}.json")], env={**env, **extra}, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    a, b = (json.loads((tmp / f"{t}.json").read_text()) for t in ("old", "new"))
    diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    print(f"feet_ref vs {commit}: {len(a)} keys ({sum(k.endswith('.error') for k in a)} expected errors), "
          + ("identical" if not diff else f"DIFFERENT in {len(diff)}: " + ", ".join(diff[:8])))
    return 1 if diff else 0


def main():
    if sys.argv[1] == "--against":
        sys.exit(against(sys.argv[2]))
    motions = clips()
    parts = sys.argv[2:] or ["contacts", "pin", "controller", "gesture", "retarget", "rigs"]
    if "contacts" in parts:
        contacts_part(motions)
    if "pin" in parts:
        pin_part(motions)
    if "controller" in parts:
        guarded("controller", controller_part)
    if "gesture" in parts:
        guarded("gesture", gesture_part)
    if "retarget" in parts:
        guarded("retarget", lambda: retarget_backend_part(motions))
    if "rigs" in parts:
        guarded("rigs", rigs_part)
    Path(sys.argv[1]).write_text(json.dumps(OUT, indent=0, sort_keys=True))
    print(len(OUT), "keys;", sum(k.endswith(".error") for k in OUT), "errors")


if __name__ == "__main__":
    main()
