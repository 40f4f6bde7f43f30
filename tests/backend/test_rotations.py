"""backend.rotations against scipy.spatial.transform.Rotation.

scipy quaternions are (x, y, z, w); ours are (w, x, y, z). scipy's uppercase
Euler sequences ("ZXY") are intrinsic, lowercase ("zxy") extrinsic.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.spatial.transform import Rotation, Slerp

from rigmind.backend import rotations

N = 200
TAIT_BRYAN = ["".join(p) for p in itertools.permutations("XYZ")]


def to_scipy(q):
    return Rotation.from_quat(np.asarray(q)[..., [1, 2, 3, 0]])


def from_scipy(r):
    return r.as_quat()[..., [3, 0, 1, 2]]


def rand_quats(n=N, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def assert_same_rotation(a, b, atol=1e-9):
    """Equal up to the quaternion sign."""
    a = np.asarray(a).reshape(-1, 4)
    b = np.asarray(b).reshape(-1, 4)
    d = np.abs(np.sum(a * b, axis=-1))
    assert np.all(d > 1.0 - atol), f"worst |dot| {d.min()}"


def test_normalize_and_identity():
    q = rand_quats() * 3.0
    n = rotations.normalize(q)
    np.testing.assert_allclose(np.linalg.norm(n, axis=-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(rotations.normalize(np.zeros((2, 4))), rotations.identity((2,)))
    assert rotations.identity((3, 2)).shape == (3, 2, 4)
    assert np.array_equal(rotations.identity()[...], [1.0, 0.0, 0.0, 0.0])


def test_mul_inv_rotate_match_scipy():
    a, b = rand_quats(seed=1), rand_quats(seed=2)
    assert_same_rotation(rotations.mul(a, b), from_scipy(to_scipy(a) * to_scipy(b)))
    assert_same_rotation(rotations.inv(a), from_scipy(to_scipy(a).inv()))
    v = np.random.default_rng(3).normal(size=(N, 3))
    np.testing.assert_allclose(rotations.rotate(a, v), to_scipy(a).apply(v), atol=1e-12)
    # broadcasting: one quaternion against many vectors
    np.testing.assert_allclose(rotations.rotate(a[0], v), to_scipy(a[0]).apply(v), atol=1e-12)
    np.testing.assert_allclose(rotations.mul(a, rotations.inv(a)), rotations.identity((N,)), atol=1e-12)


def test_matrix_round_trip_and_scipy():
    q = rand_quats(seed=4)
    m = rotations.to_matrix(q)
    np.testing.assert_allclose(m, to_scipy(q).as_matrix(), atol=1e-12)
    back = rotations.from_matrix(m)
    assert np.all(back[..., 0] >= 0.0)
    assert_same_rotation(back, q, atol=1e-12)
    # near-180-degree rotations exercise the non-trace branches
    axes = np.random.default_rng(5).normal(size=(50, 3))
    axes /= np.linalg.norm(axes, axis=-1, keepdims=True)
    q180 = rotations.from_axis_angle(axes * (np.pi - 1e-7))
    assert_same_rotation(rotations.from_matrix(rotations.to_matrix(q180)), q180, atol=1e-12)
    # scaled matrices are orthonormalised
    assert_same_rotation(rotations.from_matrix(m * 2.5), q, atol=1e-12)
    # composition order: matrix of a*b is M(a) @ M(b)
    a, b = rand_quats(seed=6), rand_quats(seed=7)
    np.testing.assert_allclose(rotations.to_matrix(rotations.mul(a, b)), rotations.to_matrix(a) @ rotations.to_matrix(b), atol=1e-12)


def test_axis_angle_matches_scipy():
    q = rotations.canonical(rand_quats(seed=8))
    aa = rotations.to_axis_angle(q)
    np.testing.assert_allclose(aa, to_scipy(q).as_rotvec(), atol=1e-10)
    assert_same_rotation(rotations.from_axis_angle(aa), q, atol=1e-12)
    rv = np.random.default_rng(9).normal(size=(N, 3))
    assert_same_rotation(rotations.from_axis_angle(rv), from_scipy(Rotation.from_rotvec(rv)), atol=1e-12)
    tiny = np.array([[1e-10, -2e-10, 3e-11], [0.0, 0.0, 0.0]])
    assert_same_rotation(rotations.from_axis_angle(tiny), from_scipy(Rotation.from_rotvec(tiny)), atol=1e-15)
    np.testing.assert_allclose(rotations.to_axis_angle(rotations.from_axis_angle(tiny)), tiny, atol=1e-18)
    axis = rv / np.linalg.norm(rv, axis=-1, keepdims=True)
    ang = np.linspace(-3, 3, N)
    assert_same_rotation(rotations.from_axis_angle_pair(axis, ang), from_scipy(Rotation.from_rotvec(axis * ang[:, None])))


def test_canonical_dot_angle_between():
    q = rand_quats(seed=10)
    c = rotations.canonical(q)
    assert np.all(c[:, 0] >= 0)
    assert_same_rotation(c, q, atol=1e-15)
    a, b = rand_quats(seed=11), rand_quats(seed=12)
    np.testing.assert_allclose(rotations.dot(a, b), np.sum(a * b, -1))
    expect = (to_scipy(a).inv() * to_scipy(b)).magnitude()
    np.testing.assert_allclose(rotations.angle_between(a, b), expect, atol=1e-6)
    np.testing.assert_allclose(rotations.angle_between(a, -a), 0.0, atol=1e-6)


@pytest.mark.parametrize("order", TAIT_BRYAN)
def test_from_euler_matches_scipy(order):
    ang = np.random.default_rng(13).uniform(-np.pi, np.pi, size=(N, 3))
    assert_same_rotation(rotations.from_euler(ang, order, intrinsic=True), from_scipy(Rotation.from_euler(order, ang)), 1e-12)
    assert_same_rotation(
        rotations.from_euler(ang, order, intrinsic=False), from_scipy(Rotation.from_euler(order.lower(), ang)), 1e-12
    )
    # intrinsic order "ZXY" is the matrix product Rz @ Rx @ Ry
    m = np.eye(3)
    for k, axis in enumerate(order):
        m = m @ Rotation.from_euler(axis.lower(), ang[0, k]).as_matrix()
    np.testing.assert_allclose(rotations.to_matrix(rotations.from_euler(ang[0], order)), m, atol=1e-12)


@pytest.mark.parametrize("order", TAIT_BRYAN)
@pytest.mark.parametrize("intrinsic", [True, False])
def test_to_euler_round_trip_and_scipy(order, intrinsic):
    q = rand_quats(seed=14)
    e = rotations.to_euler(q, order, intrinsic=intrinsic)
    assert_same_rotation(rotations.from_euler(e, order, intrinsic=intrinsic), q, atol=1e-12)
    seq = order if intrinsic else order.lower()
    np.testing.assert_allclose(e, to_scipy(q).as_euler(seq), atol=1e-8)
    # middle angle in [-pi/2, pi/2], others in [-pi, pi]
    assert np.all(np.abs(e[:, 1]) <= np.pi / 2 + 1e-12)
    assert np.all(np.abs(e) <= np.pi + 1e-12)


@pytest.mark.parametrize("order", TAIT_BRYAN)
def test_to_euler_near_gimbal_lock(order):
    rng = np.random.default_rng(15)
    n = 64
    ang = rng.uniform(-np.pi, np.pi, size=(n, 3))
    # middle angle exactly at and just off +-90 degrees
    offs = np.array([0.0, 1e-12, 1e-9, 1e-7, 1e-5, -1e-9, -1e-6, 1e-3])
    ang[:, 1] = np.resize(np.pi / 2 - offs, n) * np.where(np.arange(n) % 2, 1.0, -1.0)
    for intrinsic in (True, False):
        q = rotations.from_euler(ang, order, intrinsic=intrinsic)
        e = rotations.to_euler(q, order, intrinsic=intrinsic)
        assert np.all(np.isfinite(e))
        back = rotations.from_euler(e, order, intrinsic=intrinsic)
        np.testing.assert_allclose(rotations.to_matrix(back), rotations.to_matrix(q), atol=5e-8)


def test_bad_euler_orders():
    with pytest.raises(ValueError):
        rotations.from_euler(np.zeros(3), "XXY")
    with pytest.raises(ValueError):
        rotations.from_euler(np.zeros(3), "XY")
    with pytest.raises(ValueError):
        rotations.to_euler(rotations.identity(), "ZXZ")


def test_6d_round_trip():
    q = rand_quats(seed=16)
    d6 = rotations.to_6d(q)
    assert d6.shape == (N, 6)
    m = to_scipy(q).as_matrix()
    np.testing.assert_allclose(d6, np.concatenate([m[:, :, 0], m[:, :, 1]], -1), atol=1e-12)
    assert_same_rotation(rotations.from_6d(d6), q, atol=1e-12)
    np.testing.assert_allclose(rotations.matrix_from_6d(rotations.matrix_to_6d(m)), m, atol=1e-12)
    # raw, non-orthonormal network output still gives a proper rotation
    noisy = d6 + np.random.default_rng(17).normal(scale=0.1, size=d6.shape)
    mm = rotations.matrix_from_6d(noisy)
    np.testing.assert_allclose(mm @ np.swapaxes(mm, -1, -2), np.broadcast_to(np.eye(3), mm.shape), atol=1e-12)
    np.testing.assert_allclose(np.linalg.det(mm), 1.0, atol=1e-12)
    # Gram-Schmidt keeps the first column's direction
    a = noisy[:, :3] / np.linalg.norm(noisy[:, :3], axis=-1, keepdims=True)
    np.testing.assert_allclose(mm[:, :, 0], a, atol=1e-12)


def test_from_6d_without_svd_matches_the_svd_path_and_keeps_degenerate_input_finite():
    d6 = np.random.default_rng(19).normal(size=(N, 6))
    d6[0] = 0.0                      # both columns zero
    d6[1, 3:] = 2.0 * d6[1, :3]      # parallel columns
    q = rotations.from_6d(d6)
    assert q.shape == (N, 4) and np.all(np.isfinite(q))
    np.testing.assert_allclose(np.linalg.norm(q, axis=-1), 1.0, atol=1e-12)
    assert_same_rotation(q, rotations.from_matrix(rotations.matrix_from_6d(d6)), atol=1e-12)


def test_make_continuous():
    rng = np.random.default_rng(18)
    # a smooth path of rotations with random sign flips on top
    t = np.linspace(0, 1, 100)
    axis = np.array([0.3, -0.5, 0.8])
    axis /= np.linalg.norm(axis)
    q = rotations.from_axis_angle(axis * (t[:, None] * 5.0))
    flips = np.where(rng.random(100) < 0.4, -1.0, 1.0)
    flipped = q * flips[:, None]
    c = rotations.make_continuous(flipped)
    assert np.all(np.sum(c[1:] * c[:-1], -1) > 0.0)
    assert_same_rotation(c, q, atol=1e-15)
    np.testing.assert_allclose(c[0], flipped[0])  # the first frame keeps its sign
    # along another axis, with joints on axis 0
    c2 = rotations.make_continuous(np.stack([flipped, -flipped], 0), axis=1)
    assert np.all(np.sum(c2[:, 1:] * c2[:, :-1], -1) > 0.0)
    assert rotations.make_continuous(q[:1]).shape == (1, 4)


def test_slerp_endpoints_midpoint_and_scipy():
    a, b = rand_quats(50, seed=19), rand_quats(50, seed=20)
    np.testing.assert_allclose(rotations.slerp(a, b, np.zeros(50)), a, atol=1e-12)
    assert_same_rotation(rotations.slerp(a, b, np.ones(50)), b, atol=1e-12)
    mid = rotations.slerp(a, b, np.full(50, 0.5))
    # the midpoint is half the relative rotation: equal angles to both ends
    np.testing.assert_allclose(rotations.angle_between(a, mid), rotations.angle_between(mid, b), atol=1e-6)
    np.testing.assert_allclose(rotations.angle_between(a, mid), 0.5 * rotations.angle_between(a, b), atol=1e-6)
    for i in range(5):
        s = Slerp([0.0, 1.0], to_scipy(np.stack([a[i], b[i]])))
        ts = np.array([0.1, 0.37, 0.5, 0.9])
        assert_same_rotation(rotations.slerp(a[i], b[i], ts), from_scipy(s(ts)), atol=1e-12)
    # the short way: b and -b give the same result
    assert_same_rotation(rotations.slerp(a, -b, np.full(50, 0.3)), rotations.slerp(a, b, np.full(50, 0.3)), atol=1e-12)
    # nearly equal inputs do not divide by zero
    near = rotations.normalize(a + 1e-9)
    assert np.all(np.isfinite(rotations.slerp(a, near, np.full(50, 0.5))))


def test_between_vectors():
    rng = np.random.default_rng(21)
    u = rng.normal(size=(N, 3))
    v = rng.normal(size=(N, 3)) * 3.0
    q = rotations.between_vectors(u, v)
    un = u / np.linalg.norm(u, axis=-1, keepdims=True)
    vn = v / np.linalg.norm(v, axis=-1, keepdims=True)
    np.testing.assert_allclose(rotations.rotate(q, un), vn, atol=1e-12)
    # shortest arc: the angle equals the angle between the vectors
    np.testing.assert_allclose(rotations.angle_between(q, rotations.identity((N,))), np.arccos(np.sum(un * vn, -1)), atol=1e-6)
    r, _ = Rotation.align_vectors(vn[:1], un[:1])
    assert_same_rotation(q[0], from_scipy(r), atol=1e-9)
    # identical vectors: identity
    assert_same_rotation(rotations.between_vectors(u, u * 2), rotations.identity((N,)), atol=1e-15)


def test_between_opposite_vectors():
    us = np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0], [-1.0, 0, 0], [0.3, -0.4, 0.5], [1.0, 1e-9, 0]])
    q = rotations.between_vectors(us, -us)
    un = us / np.linalg.norm(us, axis=-1, keepdims=True)
    np.testing.assert_allclose(rotations.rotate(q, un), -un, atol=1e-8)
    np.testing.assert_allclose(np.linalg.norm(q, axis=-1), 1.0, atol=1e-12)
    # a half turn about an axis perpendicular to u
    np.testing.assert_allclose(q[:, 0], 0.0, atol=1e-8)
    np.testing.assert_allclose(np.sum(q[:, 1:] * un, -1), 0.0, atol=1e-8)
    # single (unbatched) input
    q1 = rotations.between_vectors(np.array([0.0, 0.0, 1.0]), np.array([0.0, 0.0, -1.0]))
    np.testing.assert_allclose(rotations.rotate(q1, [0.0, 0.0, 1.0]), [0.0, 0.0, -1.0], atol=1e-12)


def test_matrix_between_vectors_is_between_vectors_as_a_matrix():
    rng = np.random.default_rng(22)
    u = rng.normal(size=(N, 3))
    v = rng.normal(size=(N, 3)) * 2.0
    v[:3] = u[:3] * 4.0  # the same direction
    v[3:6] = -u[3:6]  # opposite
    m = rotations.matrix_between_vectors(u, v)
    np.testing.assert_allclose(m, rotations.to_matrix(rotations.between_vectors(u, v)), atol=1e-9)
    np.testing.assert_allclose(m @ np.swapaxes(m, -1, -2), np.broadcast_to(np.eye(3), m.shape), atol=1e-9)
    assert rotations.matrix_between_vectors(np.array([0.0, 0, 1]), np.array([0.0, 1, 0])).shape == (3, 3)


def test_two_bone_ik_matrices_solve_as_two_bone_ik():
    from rigmind.backend import ik

    rng = np.random.default_rng(23)
    a, b, c, t, p = (rng.normal(size=(40, 3)) for _ in range(5))
    t[:5] = a[:5]  # targets on the root take the fallback
    q_up, q_low, reached = ik.two_bone_ik(a, b, c, t, p, soft=0.97)
    m_up, m_low, reached_m = ik.two_bone_ik_matrices(a, b, c, t, p, soft=0.97)
    np.testing.assert_allclose(m_up, rotations.to_matrix(q_up), atol=1e-9)
    np.testing.assert_allclose(m_low, rotations.to_matrix(q_low), atol=1e-9)
    np.testing.assert_array_equal(reached_m, reached)


def test_continuous_signs_block_by_block():
    """make_continuous_in_place (a block of frames at a time, the last
    frame's flip carried over) gives make_continuous's numbers exactly."""
    rng = np.random.default_rng(7)
    q = rotations.normalize(rng.normal(size=(50, 3, 4)))
    q *= np.where(rng.random((50, 3)) < 0.5, -1.0, 1.0)[..., None]
    expected = rotations.make_continuous(q)
    for block in (1, 7, 50, 64):
        assert np.array_equal(rotations.make_continuous_in_place(q.copy(), block=block), expected)


def test_normalize_continuous_in_place_is_the_same_numbers():
    """One joint at a time in place: bit for bit make_continuous(normalize(q))."""
    rng = np.random.default_rng(27)
    q = rng.normal(size=(997, 13, 4))
    q[5, 2] = 0.0  # a zero quaternion becomes identity either way
    want = rotations.make_continuous(rotations.normalize(q), axis=0)
    got = rotations.normalize_continuous_in_place(q.copy())
    assert got.tobytes() == want.tobytes()
    with pytest.raises(TypeError):
        rotations.normalize_continuous_in_place(q.astype(np.float32))


def test_world_matrices_is_motion_world():
    """The matrix FK of the live paths gives Motion.world's rotations and
    positions, for one frame and for leading frame axes."""
    from rigmind.backend.motion import Motion, world_matrices
    from rigmind.backend.skeleton import Skeleton

    rng = np.random.default_rng(5)
    parents = np.array([-1, 0, 1, 2, 1, 4, 0, 6, -1, 8])
    sk = Skeleton([f"j{i}" for i in range(10)], parents, rng.normal(size=(10, 3)))
    rot = rotations.normalize(rng.normal(size=(7, 10, 4)))
    m = Motion(sk, rot, rng.normal(size=(7, 3)), 30.0)
    wr, wp = m.world()
    lt = m.local_translations()
    W, P = world_matrices(parents, rotations.to_matrix(rot), lt)
    np.testing.assert_allclose(W, rotations.to_matrix(wr), atol=1e-12)
    np.testing.assert_allclose(P, wp, atol=1e-12)
    W1, P1 = world_matrices(parents, rotations.to_matrix(rot[3]), lt[3])
    np.testing.assert_allclose(P1, wp[3], atol=1e-12)
