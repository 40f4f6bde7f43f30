"""backend.locomotion: split, features, contacts, mirroring, cache, motion
matching on real Bandai Namco clips (a handful; skipped without shared/data)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from rigmind.backend import rotations
from rigmind.backend.locomotion import dataset
from rigmind.backend.locomotion import features
from rigmind.backend.locomotion import motion_matching

from conftest import data_file

D2 = "bandai_namco_d2_locomotion/bvh/"
D1 = "bandai_namco_d1_locomotion/bvh/"
WALK = D2 + "dataset-2_walk_normal_001.bvh.gz"
TURN_L = D2 + "dataset-2_walk-turn-left_normal_001.bvh.gz"
TURN_R = D2 + "dataset-2_walk-turn-right_normal_001.bvh.gz"


def _clip(rel):
    path = data_file(rel)
    return features.load_clip(path), dataset.parse_name(path)


@pytest.fixture(scope="module")
def walk():
    m, info = _clip(WALK)
    return m, features.compute_features(m, info)


# --- labels and split ------------------------------------------------------------------


def test_parse_names():
    c = dataset.parse_name("dataset-1_walk-back_not-confident_002.bvh.gz")
    assert (c.dataset, c.content, c.style, c.take, c.gait) == ("d1", "walk-back", "not-confident", 2, "walk")
    assert c.style_shared is None and c.style_key == "not-confident"
    c = dataset.parse_name("dataset-1_dash_masculinity_001.bvh.gz")
    assert (c.gait, c.style_shared, c.style_key) == ("run", "masculine", "masculine")
    c = dataset.parse_name("dataset-2_walk-turn-right_elderly_031.bvh.gz")
    assert (c.dataset, c.content, c.style, c.gait) == ("d2", "walk-turn-right", "elderly", "walk")
    with pytest.raises(ValueError):
        dataset.parse_name("dataset-2_bow_normal_001.bvh.gz")
    assert len(dataset.STYLE_VOCAB) == 15 and len(set(dataset.STYLE_VOCAB)) == 15


def test_split_properties(data_dir):
    clips = dataset.list_clips(data_dir)
    if not clips:
        pytest.skip(f"no Bandai locomotion clips under {data_dir}")
    split = dataset.load_split()
    train, val = set(split["train"]), set(split["validation"])
    assert not train & val
    assert train | val == {c.file for c in clips}
    total, held, content_held = Counter(), Counter(), Counter()
    for c in clips:
        total[c.dataset, c.style] += 1
        if c.file in val:
            held[c.dataset, c.style] += 1
            content_held[c.dataset, c.style, c.content] += 1
    assert len(total) == 7 + 15
    for key, n in total.items():
        assert held[key] >= 0.1 * n, key
    # d2 has >= 17 files per (style, content): every one is held out.
    for c in clips:
        if c.dataset == "d2":
            assert content_held["d2", c.style, c.content] >= 1
    assert {c.content for c in clips if c.file in val and c.dataset == "d1"} == set(dataset.D1_CONTENTS)
    # Deterministic: recomputing gives the committed split; another seed differs.
    again = dataset.split_clips(clips, seed=split["seed"])
    assert again["validation"] == split["validation"] and again["train"] == split["train"]
    assert dataset.split_clips(clips, seed=split["seed"] + 1)["validation"] != split["validation"]


# --- features ----------------------------------------------------------------------------


def test_feature_shapes_and_roundtrip(walk):
    m, f = walk
    n, j = m.num_frames, len(m.skeleton)
    assert f.fps == 30.0
    shapes = {
        "root_pos": (n, 2), "facing": (n, 2), "yaw": (n,), "joint_pos": (n, j, 3), "joint_vel": (n, j, 3),
        "rot6d": (n, j, 6), "traj_pos": (n, 7, 2), "traj_dir": (n, 7, 2), "root_vel": (n, 2),
        "root_ang_vel": (n,), "contacts": (n, 4),
    }
    for k, s in shapes.items():
        a = getattr(f, k)
        assert a.shape == s, k
        assert np.all(np.isfinite(a)), k
    np.testing.assert_allclose(np.linalg.norm(f.facing, axis=1), 1.0, atol=1e-9)
    # Root space: the current trajectory sample is the origin facing -Y.
    np.testing.assert_allclose(f.traj_pos[:, 3], 0.0, atol=1e-9)
    np.testing.assert_allclose(f.traj_dir[:, 3], [[0.0, -1.0]] * n, atol=1e-9)
    # Rebuilding the world pose from the features (joint 0 becomes the character root).
    np.testing.assert_allclose(f.to_motion().world_positions()[:, 1:], m.world_positions()[:, 1:], atol=1e-6)


def test_facing_matches_walking_direction(walk):
    _, f = walk
    n = f.num_frames
    disp = f.root_pos[10:] - f.root_pos[:-10]  # over 1/3 s, centred on frame i + 5
    cos = np.sum(disp * f.facing[5:-5], axis=1) / np.linalg.norm(disp, axis=1)
    mid = cos[n // 4 : 3 * n // 4]
    assert mid.mean() > 0.9 and mid.min() > 0.8
    # This take walks toward -Y; the root-space velocity is then forward (-Y).
    assert f.facing[n // 2, 1] < -0.9
    assert f.root_vel[n // 4 : 3 * n // 4, 1].mean() < -0.9


def test_contacts_alternate_during_walk(walk):
    _, f = walk
    left = f.contacts[:, :2].max(axis=1) > 0
    right = f.contacts[:, 2:].max(axis=1) > 0
    assert not np.any(~left & ~right)  # walking: always a foot down
    single = np.where(left & ~right, 1, np.where(right & ~left, 2, 0))
    seq = [s for s in single if s]
    phases = [s for i, s in enumerate(seq) if i == 0 or s != seq[i - 1]]
    assert len(phases) >= 8  # 9 s of walking: many steps
    assert all(a != b for a, b in zip(phases, phases[1:]))


def test_mirror_is_an_involution_and_swaps_turns():
    m, info = _clip(TURN_L)
    mm = features.mirror_motion(m)
    back = features.mirror_motion(mm)
    np.testing.assert_allclose(rotations.canonical(back.rotations), rotations.canonical(m.rotations), atol=1e-6)
    np.testing.assert_allclose(back.translations, m.translations, atol=1e-6)
    np.testing.assert_allclose(back.root_positions, m.root_positions, atol=1e-6)
    # World positions are reflected (X -> -X) with left and right swapped.
    perm = features.mirror_pairs(m.skeleton.names)
    assert m.skeleton.names[perm[m.skeleton.index("Foot_L")]] == "Foot_R"
    np.testing.assert_allclose(mm.world_positions(), m.world_positions()[:, perm] * [-1.0, 1.0, 1.0], atol=1e-6)

    turn_l = features.compute_features(m, info)
    turn_l_mirrored = features.compute_features(mm, info)
    mr, info_r = _clip(TURN_R)
    turn_r = features.compute_features(mr, info_r)
    assert turn_l.root_ang_vel.mean() > 0.2  # a left turn is counter clockwise seen from above (Z up)
    assert turn_r.root_ang_vel.mean() < -0.2
    assert turn_l_mirrored.root_ang_vel.mean() < -0.2
    np.testing.assert_allclose(turn_l_mirrored.root_ang_vel, -turn_l.root_ang_vel, atol=1e-6)
    # Mirrored contacts: left and right columns swap.
    np.testing.assert_array_equal(turn_l_mirrored.contacts, turn_l.contacts[:, [2, 3, 0, 1]])
    # The data-driven reflection estimate agrees with the Bandai table on a straight walk.
    w, _ = _clip(WALK)
    np.testing.assert_array_equal(features.estimate_reflections(w), features.mirror_reflections(w))


def test_cache_is_incremental(data_dir, tmp_path):
    split = dataset.split_of(dataset.load_split())
    first_of = lambda which, prefix: next(f for f, s in sorted(split.items()) if s == which and f.startswith(prefix))
    names = [
        first_of("train", "dataset-2_walk_normal_"),
        first_of("train", "dataset-1_walk-left_"),
        first_of("validation", "dataset-1_"),
    ]
    for n in names:
        data_file((D1 if n.startswith("dataset-1") else D2) + n)
    first = features.build_cache(data_dir, tmp_path, clips=names)
    assert first["built"] == 3 and first["skipped"] == 0
    files = sorted(p.name for p in tmp_path.glob("*.npz"))
    mirrors = [f for f in files if f.endswith("_mirror.npz")]
    assert len(files) == 3 + len(mirrors)
    assert len(mirrors) == sum(split[n] == "train" for n in names) == 2
    stamp = {p.name: p.stat().st_mtime_ns for p in tmp_path.glob("*.npz")}
    second = features.build_cache(data_dir, tmp_path, clips=names)
    assert second["built"] == 0 and second["skipped"] == 3
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.glob("*.npz")} == stamp
    # A deleted file is rebuilt, nothing else.
    (tmp_path / mirrors[0]).unlink()
    third = features.build_cache(data_dir, tmp_path, clips=names)
    assert third["built"] == 1 and (tmp_path / mirrors[0]).exists()

    loaded = features.load_cache(tmp_path, split="train")
    assert len(loaded) == 4 and sum(c.mirrored for c in loaded) == 2
    walk_cached = next(c for c in loaded if c.name == names[0].split(".")[0] and not c.mirrored)
    assert walk_cached.joint_pos.dtype == np.float32
    m, info = _clip(D2 + names[0])
    ref = features.compute_features(m, info)
    np.testing.assert_allclose(walk_cached.joint_pos, ref.joint_pos, atol=1e-5)
    assert walk_cached.labels["style_key"] == "normal" and walk_cached.labels["split"] == "train"


# --- motion matching ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_db():
    rels = [
        WALK,
        TURN_L,
        TURN_R,
        D2 + "dataset-2_run_normal_001.bvh.gz",
        D2 + "dataset-2_walk_elderly_003.bvh.gz",
        D2 + "dataset-2_walk-turn-left_elderly_001.bvh.gz",
    ]
    clips = []
    for rel in rels:
        m, info = _clip(rel)
        clips.append(features.compute_features(m, info))
        mf = features.compute_features(features.mirror_motion(m), dict(info.labels(), mirrored=True))
        mf.mirrored = True
        clips.append(mf)
    return clips


def test_spring_trajectory_reaches_goal():
    s = motion_matching.SpringTrajectory()
    pos, yaw = s.predict((1.0, 0.0), np.pi / 2, [0.5, 1.0, 5.0])
    assert np.all(np.diff(pos[:, 0]) > 0) and abs(pos[-1, 1]) < 1e-9
    assert abs(yaw[-1] - np.pi / 2) < 1e-3
    for _ in range(150):
        s.update((1.0, 0.0), np.pi / 2, 1 / 30)
    np.testing.assert_allclose(s.vel, [1.0, 0.0], atol=1e-3)


def test_motion_matching(tiny_db):
    ctl = motion_matching.MotionMatchingController.build(tiny_db)
    db = ctl.db
    assert db.features.shape == (sum(c.num_frames for c in tiny_db), 27)
    assert set(db.styles) == {"normal", "elderly"}

    # Follows a straight command: 1.2 m/s toward +X (the clips mostly walk along +-Y).
    ctl.reset()
    out = ctl.run(motion_matching.Control(velocity=(1.2, 0.0)), frames=150)
    assert np.all(np.isfinite(out.rotations)) and np.all(np.isfinite(out.translations))
    d = out.root_positions[-1, :2] - out.root_positions[45, :2]
    assert d[0] / np.linalg.norm(d) > 0.9
    assert 0.7 < np.linalg.norm(d) / ((150 - 46) / 30) < 1.8
    facing = features.character_root(out.world_positions(), out.skeleton.names)[1]
    assert facing[-30:, 0].mean() > 0.9
    assert ctl.num_searches >= 150 // ctl.search_interval

    # Deterministic: the same commands give the same clip.
    ctl.reset()
    again = ctl.run(motion_matching.Control(velocity=(1.2, 0.0)), frames=150)
    np.testing.assert_array_equal(again.rotations, out.rotations)
    np.testing.assert_array_equal(again.root_positions, out.root_positions)

    # Style restriction, also when the style changes mid-way; brute force agrees with the KD-tree.
    ctl.reset(style="elderly")
    brute = motion_matching.MotionMatchingController(db, motion_matching.MatchingConfig(method="brute"))
    brute.reset(style="elderly")
    controls = [motion_matching.Control(velocity=(0.0, 1.0), style="elderly")] * 60 + [motion_matching.Control(velocity=(0.0, 1.0), style="normal")] * 60
    a = ctl.run(controls)
    b = brute.run(controls)
    np.testing.assert_allclose(a.root_positions, b.root_positions, atol=1e-9)
    styles = [db.styles[db.style_of[f]] for f, _ in ctl.history]
    assert set(styles[:60]) == {"elderly"}
    assert set(styles[61:]) == {"normal"}  # the first "normal" step already searches
    d = a.root_positions[-1, :2] - a.root_positions[30, :2]
    assert d[1] / np.linalg.norm(d) > 0.9


def test_motion_matching_pose_is_continuous(tiny_db):
    """Inertialization hides the jumps: no joint moves more than a sprint's
    worth in one frame."""
    ctl = motion_matching.MotionMatchingController.build(tiny_db)
    ctl.reset()
    controls = [motion_matching.Control(velocity=(0.0, -1.3))] * 40 + [motion_matching.Control(velocity=(1.3, 0.0))] * 60
    p = ctl.run(controls).world_positions()
    step = np.linalg.norm(np.diff(p[5:, 1:], axis=0), axis=-1) * 30.0  # m/s
    assert step.max() < 9.0
    assert ctl.num_transitions >= 2
