"""backend.locomotion model / train / controller: the MANN locomotion model on
a handful of real Bandai clips (skipped without shared/data).

A tiny model is trained here for a few steps (seconds): these tests check
the plumbing (checkpoint format, determinism, torch == onnxruntime, stable
long rollouts), not motion quality, which needs the real training run.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
import torch

from rigmind.backend.model_files import checkpoint
from rigmind.backend.locomotion import dataset
from rigmind.backend.locomotion import features
from rigmind.backend.locomotion import model as M
from rigmind.backend.locomotion import vector_layout
from rigmind.backend.locomotion import train
from rigmind.backend.locomotion.controller import LocomotionController, quats_from_6d
from rigmind.backend.locomotion.motion_matching import Control

from conftest import data_file

# 8 train clips (d2 walk/turns/run in two styles; d1 "old" -> elderly, a d1
# walk-back; a d1 "angry" clip that must be left out) and 2 validation clips.
D2 = "bandai_namco_d2_locomotion/bvh/"
D1 = "bandai_namco_d1_locomotion/bvh/"
CLIPS = [
    D2 + "dataset-2_walk_normal_001.bvh.gz",
    D2 + "dataset-2_walk-turn-left_normal_001.bvh.gz",
    D2 + "dataset-2_walk-turn-right_normal_001.bvh.gz",
    D2 + "dataset-2_run_normal_001.bvh.gz",
    D2 + "dataset-2_walk_elderly_001.bvh.gz",
    D1 + "dataset-1_walk_old_001.bvh.gz",
    D1 + "dataset-1_walk-back_normal_001.bvh.gz",
    D1 + "dataset-1_walk_angry_001.bvh.gz",
    D2 + "dataset-2_walk_normal_004.bvh.gz",  # validation
    D2 + "dataset-2_run_normal_003.bvh.gz",  # validation
]
TINY = {"hidden": 32, "experts": 2, "gating_hidden": 8}
TRAIN_KW = dict(steps=6, batch=16, window=6, threads=1, minutes=1.0, model=TINY)


@pytest.fixture(autouse=True)
def _torch_threads():
    """The torch engine sets torch's (process-wide) thread count: restore it."""
    n = torch.get_num_threads()
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """Cache of the 10 clips and a tiny model trained for 6 steps (+ ONNX)."""
    names = [data_file(c).name for c in CLIPS]
    data = data_file(CLIPS[0]).parents[2]
    root = tmp_path_factory.mktemp("locomotion_model")
    cache = root / "cache"
    features.build_cache(data, cache, clips=names)
    pt = root / "tiny.pt"
    summary = train.train_locomotion(data, pt, train.TrainConfig(seed=0, **TRAIN_KW), cache_dir=cache, clips=names, verbose=False)
    onnx_path = train.export_onnx(pt)
    return {"root": root, "data": data, "cache": cache, "names": names, "pt": pt, "onnx": onnx_path, "summary": summary}


def _controls(n, seed=0, hold=(20, 90)):
    """Random piecewise-constant controls: speed 0-4 m/s in any direction,
    sometimes facing away from the motion (strafe / walk back), sometimes a
    style change."""
    rng = np.random.default_rng(seed)
    out, style = [], None
    while len(out) < n:
        ang = rng.uniform(-np.pi, np.pi)
        speed = rng.choice([0.0, rng.uniform(0.5, 1.8), rng.uniform(2.0, 4.0)])
        vel = (speed * np.sin(ang), -speed * np.cos(ang))
        facing = None if rng.random() < 0.6 else tuple(features.facing_from_yaw(rng.uniform(-np.pi, np.pi)))
        if rng.random() < 0.3:
            style = str(rng.choice(vector_layout.STYLES))
        out += [Control(velocity=vel, facing=facing, style=style)] * int(rng.integers(*hold))
    return out[:n]


# --- layout ------------------------------------------------------------------------------


def test_io_layout_roundtrip():
    rng = np.random.default_rng(1)
    parts = dict(
        joint_pos=rng.normal(size=(5, 22, 3)), joint_vel=rng.normal(size=(5, 22, 3)), rot6d=rng.normal(size=(5, 22, 6)),
        traj_pos=rng.normal(size=(5, 7, 2)), traj_dir=rng.normal(size=(5, 7, 2)),
        style=rng.random((5, 7)), contacts=rng.random((5, 4)), root_vel=rng.normal(size=(5, 3)),
    )
    x = vector_layout.pack_input(**parts)
    assert x.shape == (5, vector_layout.INPUT_SIZE) == (5, 294)
    back = vector_layout.unpack_input(x)
    for k, v in parts.items():
        want = v[:, 1:] if k in ("joint_pos", "joint_vel", "rot6d") else v  # joint 0 is dropped
        np.testing.assert_array_equal(back[k], want)
    # The same functions on torch tensors (training's feedback path).
    xt = vector_layout.pack_input(**{k: torch.as_tensor(v) for k, v in parts.items()})
    np.testing.assert_array_equal(xt.numpy(), x)
    y = rng.normal(size=(5, vector_layout.OUTPUT_SIZE))
    out = vector_layout.unpack_output(y)
    y2 = vector_layout.pack_output(out["joint_pos"], out["joint_vel"], out["rot6d"], out["root_delta"], out["contacts"],
                        out["future_pos"], out["future_dir"])
    np.testing.assert_array_equal(y2, y)
    fb = vector_layout.feedback_input(x, y, 30.0)
    np.testing.assert_array_equal(fb[:, vector_layout.IN["pose"]], y[:, vector_layout.OUT["pose"]])
    np.testing.assert_array_equal(fb[:, vector_layout.IN["traj"]], x[:, vector_layout.IN["traj"]])
    np.testing.assert_allclose(vector_layout.feedback_input(torch.as_tensor(x), torch.as_tensor(y), 30.0).numpy(), fb, atol=1e-12)
    # Gating sees contacts, 5 joint velocities and the root velocity.
    assert vector_layout.GATING_SIZE == 22
    # Styles: names, d1 names mapped, blends normalised.
    np.testing.assert_array_equal(vector_layout.style_vector("old"), vector_layout.style_vector("elderly"))
    v = vector_layout.style_vector({"normal": 1.0, "exhausted": 3.0})
    assert v[vector_layout.STYLES.index("exhausted")] == pytest.approx(0.75)
    with pytest.raises(KeyError):
        vector_layout.style_vector("angry")


def test_quats_from_6d_matches_features():
    rng = np.random.default_rng(2)
    d6 = rng.normal(size=(2000, 6))
    np.testing.assert_allclose(quats_from_6d(d6), features.quat_from_6d(d6), atol=1e-12)


def test_clip_arrays_root_velocity_is_consistent(data_dir):
    """The root-velocity input of frame t+1 equals the feedback of the root
    delta target of frame t (what the controller computes at run time)."""
    path = data_file(CLIPS[1])
    cf = features.compute_features(features.load_clip(path), dataset.parse_name(path))
    x, y = vector_layout.clip_arrays(cf)
    assert x.shape == (cf.num_frames, vector_layout.INPUT_SIZE) and y.shape == (cf.num_frames, vector_layout.OUTPUT_SIZE)
    rv = vector_layout.root_velocity_from_delta(y[:-1, vector_layout.OUT["root_delta"]].astype(np.float64), cf.fps)
    np.testing.assert_allclose(x[1:, vector_layout.IN["root_vel"]], rv, atol=1e-4)
    # Targets are the next frame's pose and future trajectory.
    np.testing.assert_array_equal(y[:-1, vector_layout.OUT["pose"]], x[1:, vector_layout.IN["pose"]])
    fut = vector_layout.unpack_output(y[:-1])["future_pos"]
    np.testing.assert_allclose(fut, cf.traj_pos[1:, list(vector_layout.FUTURE)], atol=1e-6)
    # A turning-left clip turns left (CCW, positive yaw).
    assert y[:-1, vector_layout.OUT["root_delta"]][:, 2].sum() > 1.0


# --- model ---------------------------------------------------------------------------------


def test_real_config_size_and_blend_modes():
    cfg = M.make_config()
    n = M.parameter_count(cfg)
    model = M.build_model(cfg)
    assert n == sum(p.numel() for p in model.parameters()) + 4 * vector_layout.INPUT_SIZE + 2 * vector_layout.OUTPUT_SIZE
    size_mb = 4 * n / 1e6
    print(f"\nreal config: {n} parameters, {size_mb:.2f} MB float32")
    assert size_mb <= 10.0
    # "mix" (training) and "blend" (MANN's weight blending, ONNX) are the same function.
    x = torch.randn(8, vector_layout.INPUT_SIZE)
    with torch.no_grad():
        a = model.eval().set_mode("mix")(x)
        b = model.set_mode("blend")(x)
    torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
    # Different seeds differ, the same seed repeats.
    assert torch.equal(M.build_model(cfg, 3).layers[0].weight, M.build_model(cfg, 3).layers[0].weight)
    assert not torch.equal(M.build_model(cfg, 3).layers[0].weight, M.build_model(cfg, 4).layers[0].weight)


# --- training --------------------------------------------------------------------------------


def test_training_writes_loadable_checkpoint_and_log(tiny):
    import json

    blob = torch.load(tiny["pt"], map_location="cpu", weights_only=True)
    assert (blob["format"], blob["version"], blob["kind"]) == ("rigmind-checkpoint", 1, "locomotion")
    assert blob["metadata"]["train_config"]["seed"] == 0 and blob["metadata"]["written"]["date"]
    ck = train.load_checkpoint(tiny["pt"])
    assert ck["config"]["hidden"] == 32
    assert {"x_mean", "x_std", "y_mean", "y_std", "x_lo", "x_hi"} <= set(ck["state_dict"])
    assert ck["skeleton"]["names"] == list(features.BANDAI_NAMES)
    assert {"normal", "elderly"} <= set(ck["start_poses"])
    assert ck["training"]["steps"] == 6 and ck["training"]["stopped"] == "steps"
    log = json.loads((tiny["pt"].with_suffix(".log.json")).read_text())
    assert log["epochs"] and all(np.isfinite([e["train_loss"], e["val_loss"], e["wall_s"]]).all() for e in log["epochs"])
    # The d1 "angry" clip has no d2 style: left out. 7 train clips + mirrors.
    assert log["train_clips"] == 14 and log["validation_clips"] == 2
    assert tiny["onnx"].exists()


def test_training_is_deterministic(tiny):
    again = tiny["root"] / "again.pt"
    train.train_locomotion(tiny["data"], again, train.TrainConfig(seed=0, **TRAIN_KW), cache_dir=tiny["cache"],
                        clips=tiny["names"], verbose=False)
    a = torch.load(tiny["pt"], weights_only=True)["weights"]
    b = torch.load(again, weights_only=True)["weights"]
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]), k
    other = tiny["root"] / "other.pt"
    train.train_locomotion(tiny["data"], other, train.TrainConfig(seed=1, **TRAIN_KW), cache_dir=tiny["cache"],
                        clips=tiny["names"], verbose=False)
    c = torch.load(other, weights_only=True)["weights"]
    assert not torch.equal(a["layers.0.weight"], c["layers.0.weight"])


# --- controller --------------------------------------------------------------------------------


def test_torch_and_onnxruntime_agree_over_rollout(tiny):
    controls = _controls(300, seed=3)
    # The network on every frame (no idle stand, which shows a blend instead).
    ct = LocomotionController.load(tiny["pt"], engine="torch", idle_stand=False)
    co = LocomotionController.load(tiny["onnx"], engine="onnxruntime", idle_stand=False)
    ct.reset(style="normal")
    co.reset(style="normal")
    worst_same_input, worst_free = 0.0, 0.0
    for c in controls:
        ct.step(c)
        co.step(c)
        # The ONNX graph on the torch rollout's exact input, and the two free-running rollouts.
        y_ort = co.engine(ct.last_input)
        worst_same_input = max(worst_same_input, float(np.abs(y_ort - ct.last_output).max()))
        worst_free = max(worst_free, float(np.abs(co.last_output - ct.last_output).max()))
    print(f"\ntorch vs onnxruntime over 300 frames: same input {worst_same_input:.2e}, free-running {worst_free:.2e}")
    assert worst_same_input < 1e-4
    assert worst_free < 1e-4
    np.testing.assert_allclose(co.root_pos, ct.root_pos, atol=1e-4)


def test_controller_is_deterministic_and_follows_api(tiny):
    controls = _controls(120, seed=4)
    runs = []
    for _ in range(2):
        c = LocomotionController.load(tiny["onnx"], engine="onnxruntime")
        c.reset(position=(1.0, 2.0), yaw=0.5, style={"normal": 0.5, "elderly": 0.5})
        runs.append(c.run(controls))
    a, b = runs
    assert a.num_frames == 120 and a.skeleton.names == list(features.BANDAI_NAMES)
    np.testing.assert_array_equal(a.rotations, b.rotations)
    np.testing.assert_array_equal(a.root_positions, b.root_positions)
    assert np.allclose(a.root_positions[:, 2], 0.0)
    # One repeated control with frames=, and reset from a Motion frame.
    c = LocomotionController.load(tiny["pt"], engine="torch")
    clip = features.load_clip(data_file(CLIPS[0]))
    c.reset(pose=clip.slice(40, 43), style="normal")
    m = c.run(Control(velocity=(0.0, -1.0)), frames=10)
    assert m.num_frames == 10 and np.isfinite(m.rotations).all()
    c.reset(pose=clip.slice(40, 41))
    assert np.isfinite(c.step().rotations).all()


def test_long_rollout_has_no_nan(tiny):
    c = LocomotionController.load(tiny["onnx"], engine="onnxruntime")
    c.reset()
    t = time.perf_counter()
    m = c.run(_controls(2000, seed=5))
    dt = (time.perf_counter() - t) / 2000
    print(f"\ntiny model, onnxruntime: {dt * 1e3:.3f} ms per controller step")
    assert np.isfinite(m.rotations).all() and np.isfinite(m.root_positions).all()
    assert np.isfinite(m.translations).all()
    q = np.linalg.norm(m.rotations, axis=-1)
    np.testing.assert_allclose(q, 1.0, atol=1e-9)


def test_real_config_step_timing(tmp_path):
    """Untrained real-config model: ms per controller step, torch vs
    onnxruntime, batch 1, 1 thread (printed, not asserted: target 0.5 ms)."""
    cfg = M.make_config()
    model = M.build_model(cfg).eval()
    skeleton = {"names": list(features.BANDAI_NAMES), "parents": [-1, 0, 1, 2, 3, 4, 3, 6, 7, 8, 3, 10, 11, 12, 1, 14, 15, 16, 1, 18, 19, 20],
                "offsets": np.full((22, 3), 0.1).tolist(), "source": "synthetic"}
    pose = np.zeros(vector_layout.POSE_SIZE + vector_layout.CONTACT_SIZE, dtype=np.float32)
    pose[vector_layout.POSE["rot6d"]] = np.tile([1, 0, 0, 0, 1, 0], vector_layout.J)  # identity rotations
    ck = train.make_checkpoint(model, skeleton, {"normal": torch.from_numpy(pose)}, {"seed": 0})
    pt = tmp_path / "real.pt"
    checkpoint.save(pt, "locomotion", **ck)
    onnx_path = train.export_onnx(pt)
    prev = torch.get_num_threads()
    try:
        times = {}
        for engine in ("torch", "onnxruntime"):
            c = LocomotionController.load(pt, engine=engine, threads=1)
            c.reset()
            controls = _controls(300, seed=6)
            for k in range(30):
                c.step(controls[k])
            t0 = time.perf_counter()
            for k in range(30, 300):
                c.step(controls[k])
            step_ms = (time.perf_counter() - t0) / 270 * 1e3
            x = c.last_input
            t0 = time.perf_counter()
            for _ in range(300):
                c.engine(x)
            net_ms = (time.perf_counter() - t0) / 300 * 1e3
            times[engine] = (step_ms, net_ms)
        print("\nreal config, batch 1, 1 thread: " + ", ".join(
            f"{e}: {s:.3f} ms/step ({n:.3f} ms network)" for e, (s, n) in times.items()))
    finally:
        torch.set_num_threads(prev)
    assert onnx_path.stat().st_size < 10e6


def test_main_train_parses_and_exports(monkeypatch, tmp_path):
    """The CLI hook: arguments reach train_locomotion, then ONNX export runs."""
    seen = {}

    def fake_train(data, out, config, **kw):
        seen.update(data=data, out=out, seed=config.seed, minutes=config.minutes, threads=config.threads, **kw)
        return {"out_path": str(out)}

    monkeypatch.setattr(train, "train_locomotion", fake_train)
    monkeypatch.setattr(train, "export_onnx", lambda pt: seen.setdefault("exported", pt) and pt.with_suffix(".onnx"))
    out = tmp_path / "m.pt"
    assert train.main_train(["--out", str(out), "--seed", "3", "--minutes", "1.5", "--threads", "1"]) == 0
    assert seen["out"] == out and seen["seed"] == 3 and seen["minutes"] == 1.5 and seen["threads"] == 1
    assert seen["data"] == dataset.DEFAULT_DATA_DIR and seen["exported"] == out


def test_export_onnx_records_the_new_graph(tiny, tmp_path):
    """Retraining into a folder with a manifest (as ``models/`` has) re-exports
    the ONNX graph and records its hash, as the gesture and face exports do:
    a stale entry from the previous graph would make the new file fail its
    own manifest check at load."""
    from rigmind.backend.model_files import manifest

    pt = tmp_path / "locomotion.pt"
    pt.write_bytes(tiny["pt"].read_bytes())
    manifest.write_manifest(tmp_path, {"locomotion.pt": manifest.file_sha256(pt), "locomotion.onnx": "0" * 64})
    onnx_path = train.export_onnx(pt)
    assert manifest.read_manifest(tmp_path)["locomotion.onnx"] == manifest.file_sha256(onnx_path)
    assert manifest.verify(onnx_path) == onnx_path
    assert not onnx_path.with_name(onnx_path.name + ".tmp").exists()
