"""backend.locomotion metrics, style classifier and the evaluation script.

Metric tests use synthetic motions (no data); the classifier and the
end-to-end ``eval --quick`` use a handful of real Bandai clips and skip
without ``../shared/data``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rigmind.backend.locomotion import dataset
from rigmind.backend.locomotion import features
from rigmind.backend.locomotion import metrics
from rigmind.backend.locomotion import motion_matching
from rigmind.backend.motion import Motion
from rigmind.backend.skeleton import Skeleton

FPS = 30.0
NAMES = ["Root", "Foot_L", "Toes_L", "Foot_R", "Toes_R"]


def _positions(frames: int) -> np.ndarray:
    return np.zeros((frames, len(NAMES), 3))


# --- foot skate ---------------------------------------------------------------------


def test_foot_sliding_on_the_floor_gives_its_speed():
    # One toe slides at 0.6 m/s on the floor (h = 0): weight 2 - 2^0 = 1, so the
    # skate is its displacement, 2 cm per frame, and every contact pair slides.
    f = 31
    p = _positions(f)
    p[:, 2, 0] = 0.6 * np.arange(f) / FPS
    p[:, [1, 3, 4], 2] = 1.0  # the other foot joints high in the air
    r = metrics.foot_skate(p, names=NAMES, fps=FPS, lift=0.0)
    assert r["skate_cm_per_frame"] == pytest.approx(2.0)
    assert r["sliding_fraction"] == pytest.approx(1.0)
    assert r["contact_fraction"] == pytest.approx(0.25)
    assert r["per_joint_cm_per_frame"]["Toes_L"] == pytest.approx(2.0)

    # At half the threshold height the weight is 2 - sqrt(2).
    p[:, 2, 2] = 0.5 * metrics.SKATE_HEIGHT
    r = metrics.foot_skate(p, names=NAMES, fps=FPS, lift=0.0)
    assert r["skate_cm_per_frame"] == pytest.approx(2.0 * (2.0 - math.sqrt(2.0)))

    # Slow sliding (0.5 cm per frame) is skate but not "sliding".
    p[:, 2, 2] = 0.0
    p[:, 2, 0] = 0.15 * np.arange(f) / FPS
    r = metrics.foot_skate(p, names=NAMES, fps=FPS, lift=0.0)
    assert r["skate_cm_per_frame"] == pytest.approx(0.5)
    assert r["sliding_fraction"] == 0.0

    # The distance is per 1/30 s frame: the same speed sampled at 60 fps scores the same.
    t = np.arange(61) / 60.0
    p60 = np.zeros((61, len(NAMES), 3))
    p60[:, 2, 0] = 0.6 * t
    p60[:, [1, 3, 4], 2] = 1.0
    assert metrics.foot_skate(p60, names=NAMES, fps=60.0, lift=0.0)["skate_cm_per_frame"] == pytest.approx(2.0)


def test_foot_in_the_air_or_planted_gives_no_skate():
    f = 30
    p = _positions(f)
    p[:, 1:, 2] = 0.05  # 5 cm > H above the floor, moving fast
    p[:, 1:, 1] = 2.0 * np.arange(f)[:, None] / FPS
    r = metrics.foot_skate(p, names=NAMES, fps=FPS, lift=0.0)
    assert r == {**r, "skate_cm_per_frame": 0.0, "sliding_fraction": 0.0, "contact_fraction": 0.0}
    p[:, 1:, 1] = 0.3  # planted: on the floor and still
    p[:, 1:, 2] = 0.0
    r = metrics.foot_skate(p, names=NAMES, fps=FPS, lift=0.0)
    assert r["skate_cm_per_frame"] == 0.0 and r["contact_fraction"] == 1.0


def test_foot_skate_planted_heights_and_floor():
    # Bandai names default to the planted heights of their joints: an ankle at
    # 11.74 cm is on the floor, one at 11.74 + 5 cm is not.
    f = 30
    p = _positions(f)
    p[:, 1:, 2] = [metrics.BANDAI_PLANTED_HEIGHT[n] for n in NAMES[1:]]
    p[:, 1, 0] = 0.6 * np.arange(f) / FPS
    r = metrics.foot_skate(p, names=NAMES, fps=FPS)
    assert r["per_joint_cm_per_frame"]["Foot_L"] == pytest.approx(2.0, rel=1e-3)
    # A floor 10 cm up (estimated per clip from the toes) gives the same numbers.
    q = p.copy()
    q[..., 2] += 0.10
    assert metrics.foot_skate(q, names=NAMES, fps=FPS)["contact_fraction"] == 0.0
    r2 = metrics.foot_skate(q, names=NAMES, fps=FPS, floor="clip")
    assert r2["skate_cm_per_frame"] == pytest.approx(r["skate_cm_per_frame"])
    assert metrics.foot_skate(q, names=NAMES, fps=FPS, floor=0.10)["skate_cm_per_frame"] == pytest.approx(r["skate_cm_per_frame"])


# --- trajectory ------------------------------------------------------------------------


def test_trajectory_error():
    path = np.array([[0.0, 0.0], [5.0, 0.0], [5.0, 5.0]])
    # A follower exactly on the path (both legs), ending at the end point.
    on = np.concatenate([np.stack([np.linspace(0, 5, 50), np.zeros(50)], 1), np.stack([np.full(50, 5.0), np.linspace(0, 5, 50)], 1)])
    assert tuple(metrics.trajectory_error(on, path)) == pytest.approx((0.0, 0.0, 0.0), abs=1e-9)
    # 10 cm to the side of the first leg, stopping 1 m short: mean = max = 10 cm.
    off = np.stack([np.linspace(0.5, 4.0, 40), np.full(40, 0.1)], 1)
    te = metrics.trajectory_error(off, path)
    assert te.mean_cm == pytest.approx(10.0) and te.max_cm == pytest.approx(10.0)
    assert te.final_cm == pytest.approx(100.0 * np.hypot(1.0, 4.9))
    # Distances go to the nearest segment, corners included.
    d = metrics.distance_to_polyline([[6.0, -1.0], [4.0, 2.0], [5.0, 7.0]], path)
    np.testing.assert_allclose(d, [math.sqrt(2.0), 1.0, 2.0])


# --- jitter -------------------------------------------------------------------------------


def _line_motion(pos_of_t, frames=40):
    """A 2-joint skeleton whose child joint follows ``pos_of_t`` (root fixed)."""
    sk = Skeleton(["root", "hand"], [-1, 0], np.zeros((2, 3)))
    t = np.arange(frames) / FPS
    trans = np.zeros((frames, 2, 3))
    trans[:, 1] = pos_of_t(t)
    rot = np.zeros((frames, 2, 4))
    rot[..., 0] = 1.0
    return Motion(sk, rot, np.zeros((frames, 3)), FPS, trans)


def test_jitter():
    const = _line_motion(lambda t: np.stack([1.3 * t, -0.4 * t, 0.2 + 0 * t], 1))
    assert metrics.jitter(const) == pytest.approx(0.0, abs=1e-6)
    # p(t) = a t^3: the third difference of a cubic is exact, jerk = 6a.
    a = np.array([0.5, -1.0, 2.0])
    cubic = _line_motion(lambda t: a[None] * t[:, None] ** 3)
    assert metrics.jitter(cubic) == pytest.approx(6.0 * np.linalg.norm(a), rel=1e-6)
    j = metrics.jerk(cubic)
    assert j.shape == (37, 1)
    # A single-frame spike of 1 cm on a still joint: third differences 1, 3, 3, 1 cm.
    p = np.zeros((20, 2, 3))
    p[10, 1, 2] = 0.01
    assert metrics.jerk(p, names=["a", "b"], fps=FPS).max() == pytest.approx(0.03 * FPS**3)
    assert metrics.jitter(p[:3], names=["a", "b"], fps=FPS) == 0.0


def test_ms_per_step_with_a_stub_controller():
    class Stub:
        resets = steps = 0

        def reset(self, **kw):
            self.resets += 1

        def step(self, control):
            self.steps += 1

    s = Stub()
    ms = metrics.ms_per_step(s, steps=50, warmup=5)
    assert ms >= 0.0 and s.resets == 1 and s.steps == 55


# --- real data: classifier and eval ------------------------------------------------------

D2 = "bandai_namco_d2_locomotion/bvh/"


@pytest.fixture(scope="module")
def small_set(data_dir, tmp_path_factory):
    """~20 d2 training clips of two styles (+ mirrors) and 4 validation walks,
    through a temporary feature cache."""
    from rigmind.backend.locomotion import eval

    if not (data_dir / D2).is_dir():
        pytest.skip(f"{data_dir / D2} is absent")
    cache = tmp_path_factory.mktemp("loco_cache")
    train_i, val_i = eval._select_clips(data_dir, eval.QUICK_STYLES, 20)
    features.build_cache(data_dir, cache, clips=train_i + val_i)
    train = eval._load_stems(cache, train_i, mirrored=True)
    val = eval._load_stems(cache, val_i, mirrored=False)
    return cache, train, val, train_i


def test_style_classifier_is_deterministic(small_set):
    from rigmind.backend.locomotion import style_classifier

    _, train, val, _ = small_set
    few = [c for st in ("normal", "elderly") for c in [c for c in train if c.labels["style_key"] == st][:6]]
    assert {c.labels["style_key"] for c in few} == set(["normal", "elderly"])
    cfg = style_classifier.StyleTrainConfig(seed=3, epochs=3, styles=("normal", "elderly"))
    a = style_classifier.train_style_classifier(few, cfg)
    b = style_classifier.train_style_classifier(few, cfg)
    for c in val:
        pa, pb = style_classifier.predict_style(a, c), style_classifier.predict_style(b, c)
        np.testing.assert_array_equal(pa, pb)
        assert pa.shape == (2,) and pa.sum() == pytest.approx(1.0)
    # A Motion goes through the same features as its cached clip.
    m = val[0].to_motion()
    np.testing.assert_allclose(style_classifier.predict_style(a, m), style_classifier.predict_style(a, val[0]), atol=1e-4)
    acc = style_classifier.evaluate_classifier(a, val)
    assert acc["clips"] == len(val) and 0.0 <= acc["clip_accuracy"] <= 1.0


def test_eval_quick_end_to_end(small_set, data_dir, tmp_path):
    from rigmind.backend.locomotion import eval
    from rigmind.backend.locomotion import style_classifier

    cache, train, val, train_i = small_set
    mm = motion_matching.MotionMatchingController.build(train)
    classifier = style_classifier.train_style_classifier(train, style_classifier.StyleTrainConfig(seed=0, epochs=2))
    result = eval.evaluate_locomotion(
        {"motion matching": mm},
        eval.EvalConfig(paths=eval.QUICK_PATHS, styles=eval.QUICK_STYLES, timing_steps=30, cleanup=False),
        eval.EvalReferences(data_dir=data_dir, classifier=classifier, mocap_clips=val,
                         train_clips=[c for c in train if not c.mirrored]),
    )
    names = [r["name"] for r in result["rows"]]
    assert names[0] == "motion matching" and names[-1].startswith("validation mocap")
    mmrow = result["rows"][0]
    assert mmrow["runs"] == len(eval.QUICK_PATHS) * len(eval.QUICK_STYLES)
    for k in ("skate_cm_per_frame", "sliding_fraction", "traj_mean_cm", "traj_max_cm", "traj_final_cm", "jitter_m_s3", "style_correct", "ms_per_step"):
        assert mmrow[k] is not None and np.isfinite(mmrow[k]), k
    # The baseline follows a straight line and an L within a stride.
    assert mmrow["traj_mean_cm"] < 30.0 and mmrow["traj_final_cm"] < 60.0
    md = eval.format_markdown(result, "rigmind eval locomotion --quick")
    table = [l for l in md.splitlines() if l.startswith("| ")]
    assert len(table) >= 3 and "nan" not in md.lower()
    assert "| motion matching |" in md and "n/a" in md  # mocap: no trajectory


def test_eval_cli_quick(small_set, data_dir, tmp_path, capsys):
    from rigmind.backend.locomotion import eval

    cache = small_set[0]
    out = tmp_path / "eval.md"
    rc = eval.main_eval(
        ["locomotion", "--data", str(data_dir), "--quick", "--max-clips", "20", "--cache", str(cache), "--out", str(out),
         "--no-neural", "--timing-steps", "30"]
    )
    assert rc == 0 and out.exists()
    md = out.read_text()
    assert md.startswith("# Locomotion evaluation") and "Command: `rigmind eval locomotion" in md
    assert "nan" not in md.lower() and "Machine:" in md and "Date:" in md
    assert eval.main_eval(["--data", str(tmp_path / "nowhere"), "--out", str(out)]) == 2


def test_fixed_paths():
    from rigmind.backend.locomotion import eval

    names = [p.name for p in eval.FIXED_PATHS]
    assert names == ["straight", "L-turn", "zig-zag", "circle", "S-curve", "stop-and-go"]
    by = {p.name: p for p in eval.FIXED_PATHS}
    assert by["straight"].length == pytest.approx(10.0)
    assert by["circle"].length == pytest.approx(4 * np.pi, rel=1e-3)
    np.testing.assert_allclose(by["circle"].points[-1], by["circle"].points[0], atol=1e-9)
    assert by["stop-and-go"].pauses == ((4.0, 1.5),) and by["stop-and-go"].length == pytest.approx(8.0)
    assert set(eval.QUICK_PATHS) <= set(names) and set(eval.QUICK_STYLES) <= set(dataset.D2_STYLES)


def test_eval_walks_pauses_with_follow_path(small_set):
    """The evaluation walks every path, stop-and-go included, with
    path_follow.follow_path: it stands at the pause and reaches the end."""
    from rigmind.backend.locomotion import eval

    mm = motion_matching.MotionMatchingController.build(small_set[1])
    spec = eval.PathSpec("stop", eval._polyline((0, 0), (5, 0)), pauses=((2.0, 1.5),))
    res = eval.follow(mm, spec, 1.0, "normal")
    assert res.follower == "path_follow.follow_path" and res.paused.any()
    root = res.motion.root_positions[:, :2]
    speed = np.linalg.norm(np.diff(root, axis=0), axis=1) * res.motion.fps
    assert speed[res.paused[1:]].min() < 0.05  # it stood there
    # On the pause point once the blend into the stance ends (the baseline's idle then creeps).
    assert np.linalg.norm(root[res.paused] - (2.0, 0.0), axis=1).min() < 0.01
    assert len(res.arc) == res.motion.num_frames
    te = metrics.trajectory_error(root, [[0, 0], [5, 0]])
    assert te.final_cm < 30.0 and te.mean_cm < 25.0