"""SMPL-X motion files (EMAGE / BEAT2 .npz): reading into Blender's frame,
writing back, the rest template and clear errors for bad files.

The real take is BEAT2 speaker 2 "scott" (``2_scott_0_1_1.npz``, 1906 frames
at 30 fps); tests that need it skip with the reason when it is absent.
"""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

from rigmind.backend import axes
from rigmind.backend import rotations
from rigmind.backend.motion import Motion
from rigmind.backend.skeleton import Skeleton
from rigmind.backend.smplx_motion import (
    SMPLXFileError,
    approx_rest_positions,
    read_smplx_npz,
    smplx_extras,
    smplx_joint_names,
    smplx_parents,
    smplx_rest_skeleton,
    write_smplx_npz,
)
from rigmind.presets import load_preset

from conftest import data_file

BEAT2 = "beat2_speech_gesture_sample/2_scott_0_1_1.npz"


@pytest.fixture(scope="module")
def beat2():
    path = data_file(BEAT2)
    with np.load(path) as d:
        raw = {k: d[k] for k in d.files}
    return path, raw, read_smplx_npz(path)


def _rotation_error(a_aa, b_aa) -> float:
    """Largest angle (radians) between two sets of axis-angle rotations."""
    return float(rotations.angle_between(rotations.from_axis_angle(a_aa), rotations.from_axis_angle(b_aa)).max())


def _synthetic_file(path, t=12, seed=0, **overrides):
    rng = np.random.default_rng(seed)
    arrays = dict(
        poses=rng.normal(0, 0.4, (t, 165)).astype(np.float32),
        trans=rng.normal(0, 0.2, (t, 3)) + (0, 1.3, 0),
        betas=rng.normal(0, 1, 300).astype(np.float32),
        expressions=rng.normal(0, 0.5, (t, 100)),
        mocap_frame_rate=np.int32(30),
        model=np.array("smplx2020"),
        gender=np.array("neutral"),
    )
    arrays.update(overrides)
    arrays = {k: v for k, v in arrays.items() if v is not None}
    np.savez(path, **arrays)
    return arrays


# --- the real BEAT2 take -----------------------------------------------------------


def test_beat2_reads_as_55_joint_clip(beat2):
    path, raw, m = beat2
    assert m.num_frames == 1906 and m.fps == 30.0
    assert len(m.skeleton) == 55
    assert m.skeleton.names == load_preset("smplx_skeleton")["names"]
    assert np.array_equal(m.skeleton.parents, load_preset("smplx_skeleton")["parents"])
    # SMPL-X rest frames are world-aligned: identity rest, conjugation keeps it so
    assert np.allclose(m.skeleton.rest_rotations, rotations.identity((55,)))
    ex = smplx_extras(m)
    assert ex is m.skeleton.meta["smplx"]
    assert ex["betas"].shape == (300,) and np.allclose(ex["betas"], raw["betas"])
    assert ex["expressions"].shape == (1906, 100) and np.array_equal(ex["expressions"], raw["expressions"])
    assert ex["gender"] == "neutral" and ex["model"] == "smplx2020"
    assert ex["rest_source"] == "approx_template"
    # pelvis world position = trans + rest pelvis, in Blender axes
    pelvis_yup = approx_rest_positions()[0]
    assert np.allclose(m.root_positions, axes.positions_yup_to_blender(raw["trans"] + pelvis_yup), atol=1e-12)


def test_beat2_rotations_are_the_files(beat2):
    _, raw, m = beat2
    back = axes.quats_blender_to_yup(m.rotations)
    assert _rotation_error(rotations.to_axis_angle(back), raw["poses"].reshape(-1, 55, 3).astype(np.float64)) < 1e-6


def test_beat2_is_z_up_and_faces_minus_y(beat2):
    _, _, m = beat2
    n = {name: i for i, name in enumerate(m.skeleton.names)}
    pos = m.world_positions()
    head, pelvis = pos[:, n["head"], 2], pos[:, n["pelvis"], 2]
    feet = pos[:, [n["left_ankle"], n["right_ankle"], n["left_foot"], n["right_foot"]], 2]
    assert np.all(head > pelvis)
    assert np.all(pelvis[:, None] > feet)
    height = head - feet.min(axis=1)
    # Standing speaker: ~1.46 m head joint to toes on most frames (approximate
    # template); a few frames lean/crouch down to ~1.25 m.
    assert 1.4 <= np.median(height) <= 2.0
    assert np.mean((height >= 1.4) & (height <= 2.0)) > 0.9
    assert height.min() > 1.1
    # trans puts the feet on the floor (z ~ 0) with the template's leg length
    assert -0.05 < np.median(feet.min(axis=1)) < 0.1
    # forward = (left hip - right hip) x up; the character's left is +X
    lateral = pos[:, n["left_hip"]] - pos[:, n["right_hip"]]
    fwd = np.cross(lateral, [0.0, 0.0, 1.0])[:, :2]
    fwd /= np.linalg.norm(fwd, axis=1, keepdims=True)
    mean_fwd = fwd.mean(axis=0)
    assert mean_fwd[1] < -0.9  # observed: (0.05, -0.985)
    assert np.all(fwd[:, 1] < -0.5)  # never turns away by more than 60 degrees
    assert np.mean(pos[:, n["left_shoulder"], 0] > pos[:, n["right_shoulder"], 0]) > 0.99


def test_beat2_round_trip(beat2, tmp_path):
    path, raw, m = beat2
    out = write_smplx_npz(tmp_path / "rt.npz", m)
    with np.load(out) as d:
        got = {k: d[k] for k in d.files}
    assert got["poses"].shape == (1906, 165) and got["poses"].dtype == np.float32
    assert got["trans"].shape == (1906, 3)
    assert _rotation_error(got["poses"].reshape(-1, 55, 3), raw["poses"].reshape(-1, 55, 3)) < 1e-5
    # BEAT2's rotation vectors all have angles < pi, so the vectors themselves match
    assert np.abs(got["poses"] - raw["poses"]).max() < 1e-5
    assert np.abs(got["trans"] - raw["trans"]).max() < 1e-9
    assert np.array_equal(got["expressions"], raw["expressions"])
    assert np.array_equal(got["betas"], raw["betas"])
    assert int(got["mocap_frame_rate"]) == 30
    assert str(got["model"]) == "smplx2020" and str(got["gender"]) == "neutral"
    m2 = read_smplx_npz(out)
    assert np.abs(m2.world_positions() - m.world_positions()).max() < 1e-6


def test_beat2_write_from_blender_style_rest(beat2, tmp_path):
    """A clip on bones with non-identity rest orientations (same joint
    positions) is converted back to SMPL-X's world-aligned rest frames."""
    _, raw, m = beat2
    m = m.slice(0, 120)
    rng = np.random.default_rng(1)
    rest_world = rotations.normalize(rng.normal(size=(55, 4)))
    _, rest_pos = m.skeleton.rest_world()
    sk = m.skeleton
    local_rest, offsets = np.empty((55, 4)), np.empty((55, 3))
    for j, p in enumerate(sk.parents):
        if p < 0:
            local_rest[j], offsets[j] = rest_world[j], rest_pos[j]
        else:
            local_rest[j] = rotations.mul(rotations.inv(rest_world[p]), rest_world[j])
            offsets[j] = rotations.rotate(rotations.inv(rest_world[p]), rest_pos[j] - rest_pos[p])
    target = Skeleton(list(sk.names), sk.parents.copy(), offsets, local_rest, None, dict(sk.meta))
    bones = m.with_rest(target)
    assert np.abs(bones.world_positions() - m.world_positions()).max() < 1e-9
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # expressions are 1906 frames, the slice 120
        out = write_smplx_npz(tmp_path / "bones.npz", bones)
    with np.load(out) as d:
        assert _rotation_error(d["poses"].reshape(-1, 55, 3), raw["poses"][:120].reshape(-1, 55, 3)) < 1e-5
        assert np.abs(d["trans"] - raw["trans"][:120]).max() < 1e-9
    assert np.abs(read_smplx_npz(out).world_positions() - m.world_positions()).max() < 1e-6


# --- synthetic files ----------------------------------------------------------------


def test_round_trip_synthetic(tmp_path):
    src = _synthetic_file(tmp_path / "a.npz", t=15)
    m = read_smplx_npz(tmp_path / "a.npz")
    out = write_smplx_npz(tmp_path / "b.smplx", m)  # a non-.npz name is kept as given
    assert out.name == "b.smplx" and out.is_file()
    with np.load(out) as d:
        # random vectors may exceed pi: compare rotations, not vectors
        assert _rotation_error(d["poses"].reshape(-1, 55, 3), src["poses"].reshape(-1, 55, 3)) < 1e-5
        assert np.abs(d["trans"] - src["trans"]).max() < 1e-9
        assert np.array_equal(d["expressions"], src["expressions"])
    assert np.abs(read_smplx_npz(out).world_positions() - m.world_positions()).max() < 1e-6


def test_accepts_t_55_3_and_defaults(tmp_path):
    rng = np.random.default_rng(2)
    poses = rng.normal(0, 0.3, (7, 55, 3))
    np.savez(tmp_path / "min.npz", poses=poses, trans=np.zeros((7, 3)))
    m = read_smplx_npz(tmp_path / "min.npz")
    assert m.num_frames == 7 and m.fps == 30.0
    ex = smplx_extras(m)
    assert ex["expressions"] is None and ex["betas"].size == 0
    out = write_smplx_npz(tmp_path / "out.npz", m)
    with np.load(out) as d:
        assert d["betas"].shape == (300,) and not d["betas"].any()
        assert d["expressions"].shape == (7, 100) and not d["expressions"].any()
        assert str(d["model"]) == "smplx2020" and str(d["gender"]) == "neutral"
        assert _rotation_error(d["poses"].reshape(7, 55, 3), poses) < 1e-5


def test_fps_keys(tmp_path):
    _synthetic_file(tmp_path / "a.npz", mocap_frame_rate=None, mocap_framerate=np.float64(120.0))
    m = read_smplx_npz(tmp_path / "a.npz")
    assert m.fps == 120.0
    with np.load(write_smplx_npz(tmp_path / "b.npz", m)) as d:
        assert d["mocap_frame_rate"].dtype == np.int32 and int(d["mocap_frame_rate"]) == 120


def test_write_warns_when_expressions_do_not_fit(tmp_path):
    _synthetic_file(tmp_path / "a.npz", t=10)
    m = read_smplx_npz(tmp_path / "a.npz").slice(0, 4)
    with pytest.warns(UserWarning, match="expressions"):
        out = write_smplx_npz(tmp_path / "b.npz", m)
    with np.load(out) as d:
        assert d["expressions"].shape == (4, 100) and not d["expressions"].any()


# --- errors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "overrides, match",
    [
        (dict(poses=None), "missing key 'poses'"),
        (dict(trans=None), "missing key 'trans'"),
        (dict(poses=np.zeros((12, 156), np.float32)), r"'poses' has shape \(12, 156\)"),
        (dict(poses=np.zeros((12, 55, 4))), r"'poses' has shape"),
        (dict(poses=np.zeros((0, 165))), "no frames"),
        (dict(trans=np.zeros((11, 3))), r"'trans' has shape \(11, 3\)"),
        (dict(poses=np.where(np.arange(165) == 7, np.nan, 0.0)[None].repeat(12, 0)), "'poses' has NaN"),
        (dict(trans=np.full((12, 3), np.inf)), "'trans' has NaN/inf"),
        (dict(expressions=np.zeros((5, 100))), "'expressions' has shape"),
        (dict(mocap_frame_rate=np.float64(-30)), "positive frame rate"),
        (dict(poses=np.array([["a"] * 165] * 12)), "not numeric"),
    ],
)
def test_bad_files_give_clear_errors(tmp_path, overrides, match):
    _synthetic_file(tmp_path / "bad.npz", **overrides)
    with pytest.raises(SMPLXFileError, match=match) as ei:
        read_smplx_npz(tmp_path / "bad.npz")
    assert isinstance(ei.value, ValueError)
    assert "bad.npz" in str(ei.value)


def test_not_an_npz(tmp_path):
    (tmp_path / "x.npz").write_text("poses,trans\n1,2\n")
    with pytest.raises(SMPLXFileError, match="not a readable .npz"):
        read_smplx_npz(tmp_path / "x.npz")
    np.save(tmp_path / "single.npy", np.zeros((3, 165)))
    with pytest.raises(SMPLXFileError, match="single array"):
        read_smplx_npz(tmp_path / "single.npy")
    with pytest.raises(FileNotFoundError):
        read_smplx_npz(tmp_path / "absent.npz")


def test_pickled_field_is_refused(tmp_path):
    np.savez(tmp_path / "p.npz", poses=np.array([object()] * 3, dtype=object), trans=np.zeros((3, 3)))
    with pytest.raises(SMPLXFileError, match="pickled"):
        read_smplx_npz(tmp_path / "p.npz")


def test_write_rejects_other_skeletons(tmp_path):
    sk = Skeleton(["hips", "spine"], [-1, 0], [[0, 0, 1], [0, 0, 0.1]])
    m = Motion(sk, rotations.identity((3, 2)), np.zeros((3, 3)))
    with pytest.raises(SMPLXFileError, match="55-joint SMPL-X skeleton"):
        write_smplx_npz(tmp_path / "x.npz", m)
    assert not (tmp_path / "x.npz").exists()


# --- rest skeleton ----------------------------------------------------------------------


def test_approx_template_is_a_plausible_neutral_body():
    sk = smplx_rest_skeleton()
    assert sk.names == smplx_joint_names() and np.array_equal(sk.parents, smplx_parents())
    assert sk.meta["smplx"]["rest_source"] == "approx_template"
    n = {name: i for i, name in enumerate(sk.names)}
    pos = sk.rest_positions()  # Blender frame: Z up, faces -Y, left = +X
    assert np.allclose(pos, axes.positions_yup_to_blender(approx_rest_positions()))
    assert -0.40 < pos[n["pelvis"], 2] < -0.30  # SMPL-X: pelvis ~0.35 m below the model origin
    assert 1.4 < pos[n["head"], 2] - pos[n["left_foot"], 2] < 1.6
    for name in sk.names:  # mirror symmetric
        if name.startswith("left_"):
            r = pos[n["right_" + name[5:]]]
            assert np.allclose(pos[n[name]], r * (-1, 1, 1)) and pos[n[name], 0] > r[0]
    assert pos[n["left_foot"], 1] < pos[n["left_ankle"], 1]  # toes point forward (-Y)
    assert pos[n["left_eye_smplhf"], 1] < pos[n["head"], 1]
    wrist = pos[n["left_wrist"]]
    assert pos[n["left_thumb3"], 1] < wrist[1] - 0.04  # thumb points forward...
    assert pos[n["left_thumb3"], 0] > wrist[0]  # ...and along the hand
    tip = pos[n["left_middle3"]] + sk.tails[n["left_middle3"]]
    assert 0.16 < tip[0] - wrist[0] < 0.21  # hand length
    for j in range(len(sk)):
        assert np.linalg.norm(sk.tails[j]) > 0.005, sk.names[j]


def test_model_path_that_does_not_load_falls_back(tmp_path):
    with pytest.warns(UserWarning, match="approximate template"):
        sk = smplx_rest_skeleton(np.ones(10), model_path=tmp_path / "nowhere")
    assert sk.meta["smplx"]["rest_source"] == "approx_template"
    assert np.allclose(sk.rest_positions(), axes.positions_yup_to_blender(approx_rest_positions()))


def test_model_path_uses_the_smplx_package(tmp_path):
    """A synthetic SMPL-X model file (random mesh, 10 shape + 10 expression
    components) whose joint regressor picks known vertices: the exact rest
    joints must be J_regressor (v_template + shapedirs @ betas)."""
    pytest.importorskip("torch")
    pytest.importorskip("smplx")
    rng = np.random.default_rng(0)
    nv = 10475  # smplx's vertex selectors index up to ~9929
    joints = approx_rest_positions() + rng.normal(0, 0.01, (55, 3))
    v_template = rng.normal(0, 0.3, (nv, 3)).astype(np.float32)
    v_template[:55] = joints
    j_regressor = np.zeros((55, nv), np.float32)
    j_regressor[np.arange(55), np.arange(55)] = 1.0
    shapedirs = rng.normal(0, 0.01, (nv, 3, 20)).astype(np.float32)
    parents = smplx_parents()
    folder = tmp_path / "models" / "smplx"
    folder.mkdir(parents=True)
    np.savez_compressed(
        folder / "SMPLX_NEUTRAL_2020.npz",
        v_template=v_template,
        f=np.zeros((16, 3), np.int64),
        shapedirs=shapedirs,
        posedirs=np.zeros((nv, 3, 486), np.float32),
        J_regressor=j_regressor,
        kintree_table=np.stack([np.where(parents < 0, 4294967295, parents), np.arange(55)]).astype(np.int64),
        weights=np.eye(55, dtype=np.float32)[np.zeros(nv, int)],
        hands_componentsl=np.eye(45),
        hands_componentsr=np.eye(45),
        hands_meanl=np.ones(45),
        hands_meanr=np.ones(45),
        lmk_faces_idx=np.zeros(51, np.int64),
        lmk_bary_coords=np.full((51, 3), 1 / 3),
    )
    betas = rng.normal(0, 1, 300)
    expect = joints + np.einsum("vck,k->vc", shapedirs[:55, :, :10], betas[:10])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback would warn
        sk = smplx_rest_skeleton(betas, model_path=tmp_path / "models", up="Y")
    assert sk.meta["smplx"]["rest_source"] == "model"
    assert np.abs(sk.rest_positions() - expect).max() < 1e-6
    assert np.allclose(sk.rest_rotations, rotations.identity((55,)))


# --- bounded reads (#27): a hostile .npz is refused before anything is allocated ---------------


def _npz_with_member(path, name: str, member: bytes, compress: bool = False):
    import zipfile

    trans = io.BytesIO()
    np.save(trans, np.zeros((5, 3)))
    mode = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(path, "w", mode) as z:
        z.writestr(name, member)
        z.writestr("trans.npy", trans.getvalue())
    return path


def _npy_header(shape, dtype="<f4") -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": dtype, "fortran_order": False, "shape": shape})
    return buf.getvalue()


def test_a_header_asking_for_gigabytes_is_refused_before_allocating(tmp_path):
    """The header claims (50 000 000, 165) float32 (30.7 GiB); the member holds 1 kB."""
    f = _npz_with_member(tmp_path / "liar.npz", "poses.npy", _npy_header((50_000_000, 165)) + bytes(1024))
    with pytest.raises(SMPLXFileError, match=r"claims shape \(50000000, 165\)") as e:
        read_smplx_npz(f)
    assert "\n" not in str(e.value)


def test_a_header_claiming_more_than_its_member_holds_is_refused(tmp_path):
    f = _npz_with_member(tmp_path / "short.npz", "poses.npy", _npy_header((100, 165)) + bytes(4 * 165 * 10))
    with pytest.raises(SMPLXFileError, match="lies about its contents"):
        read_smplx_npz(f)


def test_a_zip_bomb_member_is_refused_from_the_directory(tmp_path, monkeypatch):
    """A member that inflates past the limit is refused before it is inflated."""
    import tracemalloc

    from rigmind.backend import smplx_motion

    monkeypatch.setattr(smplx_motion, "MAX_ARRAY_BYTES", 8 * 1024 * 1024)
    rows = 16 * 1024 * 1024 // (4 * 165)
    f = _npz_with_member(tmp_path / "bomb.npz", "poses.npy", _npy_header((rows, 165)) + bytes(4 * 165 * rows),
                         compress=True)
    assert f.stat().st_size < 200_000
    tracemalloc.start()
    try:
        with pytest.raises(SMPLXFileError, match="inflates to 16 MB"):
            read_smplx_npz(f)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * 1024 * 1024, peak
