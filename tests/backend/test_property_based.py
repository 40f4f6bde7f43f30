"""Property tests (issue #17 item 7): rotation conversions round-trip, a BVH
written and read back is the same motion, and the bone mapping does not
depend on what meaningless names the bones carry.

Inputs are drawn by hypothesis as seeds for NumPy generators (a batch of
rotations per example), so each example tests many values cheaply.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies

from support.humanoid_generator import make_humanoid, make_renamed_humanoid
from rigmind.backend import rotations
from rigmind.backend.bone_mapping import NotHumanoidError, auto_map, load_humanoid
from rigmind.backend.bvh import dumps_bvh, loads_bvh
from rigmind.backend.motion import Motion
from rigmind.backend.skeleton import Skeleton

PROPS = settings(max_examples=60, deadline=None, database=None, derandomize=True)
seeds = strategies.integers(0, 2**32 - 1)
REQUIRED = load_humanoid()["required"]
ORDERS = ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"]


def _quats(rng, n=64):
    q = rng.normal(size=(n, 4))
    q[: n // 8] = [1.0, 0.0, 0.0, 0.0]  # identities among them
    q[n // 8: n // 4, 1:] *= 1e-9  # nearly identities
    return rotations.normalize(q)


def _same_rotation(a, b, tol=1e-6):
    return np.all(rotations.angle_between(a, b) < tol)


@PROPS
@given(seed=seeds)
def test_matrix_round_trip(seed):
    q = _quats(np.random.default_rng(seed))
    back = rotations.from_matrix(rotations.to_matrix(q))
    assert _same_rotation(q, back)
    m = rotations.to_matrix(q)
    np.testing.assert_allclose(m @ np.swapaxes(m, -1, -2), np.broadcast_to(np.eye(3), m.shape), atol=1e-12)
    np.testing.assert_allclose(np.linalg.det(m), 1.0, atol=1e-12)


@PROPS
@given(seed=seeds)
def test_axis_angle_round_trip(seed):
    q = _quats(np.random.default_rng(seed))
    aa = rotations.to_axis_angle(q)
    assert np.all(np.linalg.norm(aa, axis=-1) <= np.pi + 1e-9)
    assert _same_rotation(q, rotations.from_axis_angle(aa))


@PROPS
@given(seed=seeds, order=strategies.sampled_from(ORDERS), intrinsic=strategies.booleans())
def test_euler_round_trip(seed, order, intrinsic):
    q = _quats(np.random.default_rng(seed))
    back = rotations.from_euler(rotations.to_euler(q, order, intrinsic), order, intrinsic)
    assert _same_rotation(q, back, tol=1e-6)


@PROPS
@given(seed=seeds)
def test_6d_round_trip_and_group_laws(seed):
    rng = np.random.default_rng(seed)
    q, p, r = _quats(rng), _quats(rng), _quats(rng)
    assert _same_rotation(q, rotations.from_6d(rotations.to_6d(q)))
    assert _same_rotation(rotations.mul(q, rotations.inv(q)), rotations.identity((len(q),)))
    assert _same_rotation(rotations.mul(rotations.mul(q, p), r), rotations.mul(q, rotations.mul(p, r)))
    v = rng.normal(size=(len(q), 3))
    np.testing.assert_allclose(rotations.rotate(q, v), np.einsum("nij,nj->ni", rotations.to_matrix(q), v), atol=1e-12)


@PROPS
@given(seed=seeds, frames=strategies.integers(1, 12), fps=strategies.sampled_from([24.0, 25.0, 30.0, 60.0, 120.0]),
       order=strategies.sampled_from(ORDERS))
def test_bvh_round_trip(seed, frames, fps, order):
    """dumps_bvh -> loads_bvh: the same joints in the same places at every
    frame (world positions within 0.1 mm), the same frame rate and count."""
    rng = np.random.default_rng(seed)
    skel, _ = make_humanoid(rng)
    # BVH has no rest rotations: write the skeleton with identity rest.
    skel = Skeleton(skel.names, skel.parents, skel.offsets, None, skel.tails, {})
    rot = rotations.normalize(rng.normal(size=(frames, len(skel), 4)))
    root = rng.uniform(-3, 3, size=(frames, 3))
    m = Motion(skel, rot, root, fps)
    back = loads_bvh(dumps_bvh(m, order=order), units="cm", up="Y")
    assert back.skeleton.names == m.skeleton.names and back.num_frames == frames
    assert abs(back.fps - fps) < 1e-6
    np.testing.assert_allclose(back.world_positions(), m.world_positions(), atol=1e-4)


def _meaningless(rng, n):
    ids = rng.permutation(10**6)[:n]
    return [f"b{int(i):06d}" for i in ids]


@settings(max_examples=25, deadline=None, database=None, derandomize=True)
@given(seed=seeds)
def test_bone_mapping_ignores_meaningless_names(seed):
    """A rig whose bone names mean nothing is mapped from its structure
    alone: two different random namings give the same bones for every joint."""
    rng = np.random.default_rng(seed)
    skel, truth = make_renamed_humanoid(rng, scramble=True)
    a, b = _meaningless(rng, len(skel)), _meaningless(rng, len(skel))
    maps = []
    for names in (a, b):
        s = Skeleton(names, skel.parents, skel.offsets, skel.rest_rotations, skel.tails, {})
        try:
            m = auto_map(s)
        except NotHumanoidError as e:
            maps.append(("refused", str(e).replace(names[0], "?")))
            continue
        maps.append({j: names.index(bone) for j, bone in m.bones.items()})
    assert maps[0] == maps[1]


@settings(max_examples=25, deadline=None, database=None, derandomize=True)
@given(seed=seeds)
def test_bone_mapping_under_random_renames_finds_every_required_joint(seed):
    """Renamed in a random rig dialect (case, separators, side markers,
    prefixes, synonyms), every required joint maps to the right bone."""
    skel, truth = make_renamed_humanoid(np.random.default_rng(seed))
    m = auto_map(skel)
    for joint in REQUIRED:
        assert truth[m.bones[joint]] == joint, (joint, m.bones[joint])
