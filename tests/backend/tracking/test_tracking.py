"""Three-point tracking (issue #30): the committed model on trackers read from
a walk the committed walk controller makes (stand 1 s, walk 2.7 s at 1.2 m/s,
stand 2.3 s), so no mocap is needed; plus the take and config plumbing."""

from __future__ import annotations

import numpy as np
import pytest

from rigmind.backend import rotations
from rigmind.backend.locomotion.controllers import load_controller
from rigmind.backend.locomotion.motion_matching import Control
from rigmind.backend.motion import Motion
from rigmind.backend.tracking.body_from_trackers import TrackConfig, resample_take, track_body
from rigmind.backend.tracking.canonical import canonical_skeleton
from rigmind.backend.tracking.live import LiveTracker
from rigmind.backend.tracking.mocap_trackers import trackers_from_motion
from rigmind.backend.tracking.trackers import TrackerTake

WALK = (30, 110)  # frames (30 fps) in which the controller is asked to walk


@pytest.fixture(scope="module")
def walk():
    """A controller walk-and-stop on the canonical skeleton (30 fps, 180 frames)."""
    ctrl = load_controller("neural", engine="onnxruntime")
    ctrl.reset(position=(0.0, 0.0), yaw=0.0)
    rot, trans = [], []
    for f in range(180):
        m = ctrl.step(Control(velocity=(0.0, -1.2) if WALK[0] <= f < WALK[1] else (0.0, 0.0)))
        # joint 0 of a controller pose is the moving character root: fold it into the hips
        wr, wp = m.world()
        r = m.rotations[0].copy()
        t = m.local_translations()[0].copy()
        r[0], t[0] = (1.0, 0.0, 0.0, 0.0), 0.0
        r[1], t[1] = wr[0, 1], wp[0, 1]
        rot.append(r)
        trans.append(t)
    sk = canonical_skeleton()
    return Motion(sk, np.array(rot), np.zeros((180, 3)), 30.0, np.array(trans))


@pytest.fixture(scope="module")
def tracked(walk):
    return track_body(trackers_from_motion(walk))


def _hand_error(res):
    p = res.motion.world_positions()
    sk = res.motion.skeleton
    hands = p[:, [sk.index("Hand_L"), sk.index("Hand_R")]]
    return np.linalg.norm(hands - res.targets[:, 1:], axis=-1)


def test_shapes_and_skeleton(tracked, walk):
    m = tracked.motion
    assert m.num_frames == walk.num_frames and m.fps == 30.0
    assert m.skeleton.names == canonical_skeleton().names
    assert tracked.targets.shape == (m.num_frames, 3, 3) and tracked.contacts.shape == (m.num_frames, 2)
    assert np.all(np.isfinite(m.world_positions()))


def test_hands_on_targets(tracked):
    assert _hand_error(tracked).max() < 0.01


def test_head_turned_to_its_tracker(tracked):
    wr = tracked.motion.world_rotations()[:, tracked.motion.skeleton.index("Head")]
    ang = rotations.angle_between(wr, tracked.target_rotations[:, 0])
    assert np.degrees(ang).max() < 0.5


def test_head_on_its_tracker(tracked):
    """The body is moved onto the head tracker (the network's own head misses
    it by a centimetre or two, more in a crouch)."""
    p = tracked.motion.world_positions()[:, tracked.motion.skeleton.index("Head")]
    err = np.linalg.norm(p - tracked.targets[:, 0], axis=-1)
    assert np.median(err) < 0.001 and err.max() < 0.005


def test_a_head_tracker_out_of_reach_leaves_the_arms_as_they_were(walk, tracked):
    """A head tracker 0.3 m above where a body of this size can stand with
    its hands on their trackers: the head stays under it, and the arms are
    stretched no further than with the head left where the network put it."""
    from rigmind.backend.tracking.posing import PoseConfig

    take = trackers_from_motion(walk)
    raised = take.positions.copy()
    raised[:, 0, 2] += 0.3
    take = TrackerTake(take.times, raised, take.rotations)
    on = track_body(take, TrackConfig(scale=tracked.scale))
    off = track_body(take, TrackConfig(scale=tracked.scale, pose=PoseConfig(head_on_target=False)))
    head = on.motion.world_positions()[:, on.motion.skeleton.index("Head")]
    assert np.median(on.targets[:, 0, 2] - head[:, 2]) > 0.1
    assert on.arm_stretch_m.max() < off.arm_stretch_m.max() + 0.005
    assert _hand_error(on).max() < 0.01


def _foot_speed(res, name):
    p = res.motion.world_positions()[:, res.motion.skeleton.index(name), :2]
    return np.linalg.norm(np.diff(p, axis=0), axis=-1) * 30.0


def test_feet_planted_when_the_head_stands(tracked):
    # The controller's head is still from frame ~150; a finishing step may
    # take the next third of a second (as in mocap); from then on both feet hold.
    still = slice(160, 179)
    for foot in ("Foot_L", "Foot_R"):
        assert _foot_speed(tracked, foot)[still].max() < 0.05
    assert tracked.contacts[still].all()


def test_legs_step_when_the_head_travels(tracked):
    c = tracked.contacts[WALK[0] + 10:WALK[1]]
    downs = (c[1:] & ~c[:-1]).sum(axis=0)
    assert (downs >= 1).all(), downs  # both feet lift and land again
    speed = np.maximum(_foot_speed(tracked, "Foot_L"), _foot_speed(tracked, "Foot_R"))[WALK[0] + 10:WALK[1]]
    assert speed.max() > 1.5  # a swing foot moves faster than the body


def test_any_frame_rate_and_irregular_samples(walk):
    take = trackers_from_motion(walk)
    rng = np.random.default_rng(0)
    t = np.sort(rng.uniform(take.times[0], take.times[-1], 400))
    t[0], t[-1] = take.times[0], take.times[-1]
    i = np.clip(np.searchsorted(take.times, t) - 1, 0, len(take.times) - 2)
    a = (t - take.times[i]) / (take.times[i + 1] - take.times[i])
    pos = (1 - a)[:, None, None] * take.positions[i] + a[:, None, None] * take.positions[i + 1]
    rot = rotations.slerp(take.rotations[i], take.rotations[i + 1], np.broadcast_to(a[:, None], (len(t), 3)))
    res = track_body(TrackerTake(t, pos, rot), TrackConfig(fps=24.0))
    assert res.motion.fps == 24.0
    assert abs(res.motion.num_frames - int(take.duration * 24) - 1) <= 1
    assert _hand_error(res).max() < 0.01


def test_deterministic(walk):
    take = trackers_from_motion(walk.slice(0, 60))
    a, b = track_body(take), track_body(take)
    np.testing.assert_array_equal(a.motion.rotations, b.motion.rotations)
    np.testing.assert_array_equal(a.motion.translations, b.motion.translations)


def test_baseline_puts_hands_on_targets(walk):
    res = track_body(trackers_from_motion(walk.slice(0, 90)), TrackConfig(method="baseline"))
    assert res.motion.num_frames == 90
    assert _hand_error(res).max() < 0.01


def test_live_tracker_matches_targets(walk):
    take = trackers_from_motion(walk.slice(0, 60))
    live = LiveTracker()
    for f in range(take.num_samples):
        pose = live.step(take.positions[f], take.rotations[f], 1.0 / 30.0)
        assert pose.num_frames == 1
        p = pose.world_positions()[0]
        sk = pose.skeleton
        err = np.linalg.norm(p[[sk.index("Hand_L"), sk.index("Hand_R")]] - take.positions[f, 1:], axis=-1)
        assert err.max() < 0.01
        assert np.linalg.norm(p[sk.index("Head")] - take.positions[f, 0]) < 0.001


def test_live_step_world_is_the_step_pose_in_world_matrices(walk):
    """step_world (what Track Live maps onto the rig) is step's pose: its world
    rotations as matrices and the hips' world position, tick for tick."""
    take = trackers_from_motion(walk.slice(0, 40))
    a, b = LiveTracker(), LiveTracker()
    for f in range(take.num_samples):
        pose = a.step(take.positions[f], take.rotations[f], 1.0 / 30.0)
        world, hips = b.step_world(take.positions[f], take.rotations[f], 1.0 / 30.0)
        wr, wp = pose.world()
        np.testing.assert_allclose(world, rotations.to_matrix(wr[0]), atol=1e-9)
        np.testing.assert_allclose(hips, wp[0, pose.skeleton.index("Hips")], atol=1e-9)


def test_live_window_is_the_offline_window(walk):
    """The live tracker's input row (kept as matrices, built per tick) is the
    row window_inputs makes for the same history, on a grid and between it."""
    from rigmind.backend.tracking.features import window_inputs

    take = trackers_from_motion(walk.slice(0, 70))
    live = LiveTracker(scale=1.0)
    for f in range(take.num_samples):
        dt = 1.0 / 30.0 if f % 3 else 0.5 / 30.0  # some ticks between the 30 fps samples
        p, q = take.positions[f], take.rotations[f]
        live.step(p, q, dt)
        pos, rot = live.pos.copy(), live.rot.copy()
        pos[-1], rot[-1] = p, rotations.normalize(q) * np.sign(np.sum(rotations.normalize(q) * live.rot[-1], -1))[:, None]
        mats = live.mats.copy()
        mats[-1] = rotations.to_matrix(rot[-1])
        got = live._window(p, mats, live._heading(mats[-1, 0]))
        want = window_inputs(pos, rot, 30.0, [len(pos) - 1])
        np.testing.assert_allclose(got, want, atol=2e-5)


def test_live_retarget_apply_world_is_apply():
    """LiveRetarget.apply_world (given world matrices and the hips) gives apply's pose bones."""
    from rigmind.backend.live_retarget import LiveRetarget
    from rigmind.backend.tracking.canonical import CANONICAL_MAP

    sk = canonical_skeleton()
    rng = np.random.default_rng(3)
    f = 12
    rot = np.tile(sk.rest_rotations, (f, 1, 1))
    rot[:, 1:] = rotations.mul(rot[:, 1:], rotations.from_axis_angle(rng.normal(scale=0.2, size=(f, len(sk) - 1, 3))))
    trans = np.broadcast_to(sk.offsets, (f, len(sk), 3)).copy()
    trans[:, 1] += rng.normal(scale=0.05, size=(f, 3))
    clip = Motion(sk, rot, np.zeros((f, 3)), 30.0, trans)
    mapping = dict(CANONICAL_MAP)
    live = LiveRetarget.calibrate(clip, mapping, sk, mapping)
    for k in range(f):
        basis, loc = live.apply(clip, k)
        wr, wp = clip.slice(k, k + 1).world()
        b2, loc2 = live.apply_world(rotations.to_matrix(wr[0]), wp[0, sk.index("Hips")])
        np.testing.assert_allclose(np.abs(np.sum(basis * b2, -1)), 1.0, atol=1e-9)
        np.testing.assert_allclose(loc, loc2, atol=1e-9)


def test_resample_take_keeps_samples():
    t = np.array([0.0, 0.1, 0.2])
    pos = np.zeros((3, 3, 3))
    pos[:, 0, 0] = [0.0, 1.0, 2.0]
    rot = np.tile([1.0, 0.0, 0.0, 0.0], (3, 3, 1))
    times, p, _ = resample_take(TrackerTake(t, pos, rot), 30.0)
    assert len(times) == 7
    np.testing.assert_allclose(p[3, 0, 0], 1.0)


def test_take_checks_shapes_and_times():
    with pytest.raises(ValueError, match="increase"):
        TrackerTake(np.array([0.0, 0.0]), np.zeros((2, 3, 3)), np.tile([1.0, 0, 0, 0], (2, 3, 1)))
    with pytest.raises(ValueError, match=r"\[T, 3, 3\]"):
        TrackerTake(np.array([0.0]), np.zeros((1, 2, 3)), np.tile([1.0, 0, 0, 0], (1, 3, 1)))
    with pytest.raises(ValueError, match="method"):
        track_body(TrackerTake(np.array([0.0]), np.zeros((1, 3, 3)), np.tile([1.0, 0, 0, 0], (1, 3, 1))),
                   TrackConfig(method="nope"))


def test_trackers_from_a_foreign_skeleton(data_dir):
    from rigmind.backend.tracking.mocap_trackers import load_mocap

    path = data_dir / "cmu_131_start_walk_stop" / "131_01.bvh"
    if not path.is_file():
        pytest.skip(f"CMU 131 not in the data folder ({path})")
    m, mapping = load_mocap(path)
    take = trackers_from_motion(m.slice(0, 120), mapping)
    assert take.positions.shape == (120, 3, 3) and take.rotations.shape == (120, 3, 4)
    p = m.slice(0, 120).world_positions()
    np.testing.assert_allclose(take.positions[:, 0], p[:, m.skeleton.index(mapping["head"])])
    np.testing.assert_allclose(take.times[1], 1.0 / m.fps)


def test_foreign_head_tracker_faces_where_the_head_faces(data_dir):
    """The retargeted (leaf) head's roll is corrected: the tracker's heading
    follows the source head's own forward direction."""
    from rigmind.backend.tracking.evaluate import body_frames
    from rigmind.backend.tracking.features import heading_yaw
    from rigmind.backend.tracking.mocap_trackers import load_mocap

    path = data_dir / "cmu_131_start_walk_stop" / "131_01.bvh"
    if not path.is_file():
        pytest.skip(f"CMU 131 not in the data folder ({path})")
    m, mapping = load_mocap(path)
    m = m.slice(0, 240)
    sk = m.skeleton
    si = {k: sk.index(mapping[k]) for k in ("head", "upperleg_l", "upperleg_r")}
    rest_rot, rest_pos = sk.rest_world()
    fwd = -body_frames(rest_pos[None], si)[0, 1]
    w = m.world_rotations()[:, si["head"]]
    f = rotations.rotate(rotations.mul(w, rotations.inv(rest_rot[si["head"]])), np.broadcast_to(fwd, (len(w), 3)))
    src_yaw = np.arctan2(f[:, 0], -f[:, 1])
    yaw = heading_yaw(trackers_from_motion(m, mapping).rotations[:, 0])
    diff = np.degrees(np.abs(np.angle(np.exp(1j * (yaw - src_yaw)))))
    assert np.median(diff) < 10.0


def test_a_foreign_clip_on_the_canonical_skeleton_keeps_its_limbs_and_facing(data_dir):
    """Retargeted onto the standing canonical rest, CMU 131 keeps every limb's
    world direction and its pelvis's facing (onto the canonical BVH's own
    rest, whose body frame is meaningless, the pelvis came out 33 degrees
    turned)."""
    from rigmind.backend.tracking.canonical import CANONICAL_MAP, standing_skeleton
    from rigmind.backend.tracking.evaluate import LIMBS, body_frames
    from rigmind.backend.tracking.mocap_trackers import load_mocap, to_canonical

    path = data_dir / "cmu_131_start_walk_stop" / "131_01.bvh"
    if not path.is_file():
        pytest.skip(f"CMU 131 not in the data folder ({path})")
    m, mapping = load_mocap(path)
    m = m.slice(0, 240)
    canon = to_canonical(m, mapping, m.fps)
    assert canon.skeleton.names == canonical_skeleton().names
    np.testing.assert_allclose(canonical_skeleton().rest_rotations, np.tile([1.0, 0, 0, 0], (22, 1)))
    assert not np.allclose(standing_skeleton().rest_rotations, canonical_skeleton().rest_rotations)
    ps, pc = m.world_positions(), canon.world_positions()
    si = {k: m.skeleton.index(mapping[k]) for k in CANONICAL_MAP if k in mapping}
    ci = {k: canon.skeleton.index(v) for k, v in CANONICAL_MAP.items()}
    for a, b in LIMBS:
        va, vb = ps[:, si[b]] - ps[:, si[a]], pc[:, ci[b]] - pc[:, ci[a]]
        cos = np.sum(va * vb, -1) / np.linalg.norm(va, axis=-1) / np.linalg.norm(vb, axis=-1)
        assert np.degrees(np.arccos(np.clip(cos, -1, 1))).max() < 0.5, (a, b)
    fs, fc = body_frames(ps, si)[:, 1], body_frames(pc, ci)[:, 1]
    turn = np.degrees(np.arccos(np.clip(np.sum(fs * fc, -1), -1, 1)))
    assert turn.max() < 5.0


def test_calibration_maps_the_neutral_sample_to_standing_and_keeps_turns():
    from rigmind.backend.tracking.calibration import calibrate, standing_rotations
    from rigmind.backend.tracking.features import heading_yaw

    rng = np.random.default_rng(1)
    cal = rotations.normalize(rng.normal(size=(3, 4)))  # any device axes
    np.testing.assert_allclose(np.abs(rotations.dot(calibrate(cal, cal), standing_rotations())), 1.0, atol=1e-9)
    turn = np.array([np.cos(0.25), 0.0, 0.0, np.sin(0.25)])  # the user turns 0.5 rad to the left
    q = calibrate(rotations.mul(turn[None], cal), cal)
    d = heading_yaw(q[None, 0]) - heading_yaw(standing_rotations()[None, 0])
    assert abs(float(np.angle(np.exp(1j * d[0]))) - 0.5) < 1e-6


def test_a_future_window_model_runs_offline_and_the_live_tracker_refuses_it(walk, tmp_path):
    """A model trained on another window (here FUTURE_LAGS, untrained weights)
    is run with its own lags by track_body; the live tracker refuses it."""
    torch = pytest.importorskip("torch")
    from rigmind.backend.model_files import checkpoint
    from rigmind.backend.tracking import features
    from rigmind.backend.tracking.canonical import skeleton_to_dict
    from rigmind.backend.tracking.model import TrackNet
    from rigmind.backend.tracking.train import export_onnx

    lags = features.FUTURE_LAGS
    out = 9 + 6 * (len(canonical_skeleton()) - 2) + 2
    torch.manual_seed(0)
    net = TrackNet(len(lags) * features.PER_FRAME, out, hidden=16, layers=1)
    config = {"input_size": len(lags) * features.PER_FRAME, "output_size": out, "hidden": 16, "layers": 1,
              "lags": list(lags), "fps": 30.0}
    pt = checkpoint.save(tmp_path / "future.pt", "tracking", config=config, weights=net.state_dict(),
                         metadata={"skeleton": skeleton_to_dict(canonical_skeleton()),
                                   "training": {"head_height": 1.4}})
    onnx_path = export_onnx(pt)
    res = track_body(trackers_from_motion(walk.slice(0, 40)), TrackConfig(model_path=str(onnx_path)))
    assert res.motion.num_frames == 40 and np.isfinite(res.motion.rotations).all()
    with pytest.raises(ValueError, match="causal window"):
        LiveTracker(model_path=str(onnx_path))


def test_pin_feet_on_a_rig_of_other_proportions_keeps_planted_feet(tracked):
    """The tracked walk retargeted onto legs of other proportions (longer
    thighs, shorter shins, a wider pelvis) slides its planted feet;
    pin_feet_on (what Track Body does on the rig) plants them again.

    Scored while the tracker says a foot is planted (``planted_skate``): the
    plain foot skate also counts the toes swinging low past the floor, which
    no pinning touches and which moved by a fifth with millimetre changes
    of the tracked body on this rig, whose right leg reaches its locks only
    at full stretch."""
    from rigmind.backend.locomotion.cleanup import planted_skate
    from rigmind.backend.locomotion.metrics import foot_skate
    from rigmind.backend.retarget import RetargetConfig, retarget
    from rigmind.backend.tracking.canonical import CANONICAL_MAP
    from rigmind.backend.tracking.posing import pin_feet_on

    sk = canonical_skeleton()
    rig = sk.copy()
    for name, factor in (("LowerLeg_L", 1.2), ("LowerLeg_R", 1.2), ("Foot_L", 0.85), ("Foot_R", 0.85),
                         ("UpperLeg_L", 1.4), ("UpperLeg_R", 1.4)):
        rig.offsets[rig.index(name)] = rig.offsets[rig.index(name)] * factor
    on_rig = retarget(tracked.motion, dict(CANONICAL_MAP), rig, dict(CANONICAL_MAP),
                      RetargetConfig(ik=False, hand_ik=False)).motion
    feet = ("Foot_L", "Toes_L", "Foot_R", "Toes_R")
    planted = np.repeat(tracked.contacts, 2, axis=1)  # (foot, toe) of the left, then the right foot

    def skate(m):
        return planted_skate(m, planted, feet) * 100.0  # cm per frame

    pinned = pin_feet_on(on_rig, dict(CANONICAL_MAP), tracked.contact_prob)
    before, after, tracked_skate = skate(on_rig), skate(pinned), skate(tracked.motion)
    assert before > 2.0 * tracked_skate  # the proportions made the planted feet slide
    assert after < tracked_skate  # and they are planted again, as firmly as the tracked body's

    def plain(m):
        return foot_skate(m, list(feet), lift=[None] * 4, floor="clip")["skate_cm_per_frame"]

    assert plain(pinned) < plain(on_rig)
    # only the legs change
    legs = [sk.index(n) for n in ("UpperLeg_L", "LowerLeg_L", "Foot_L", "UpperLeg_R", "LowerLeg_R", "Foot_R")]
    others = [j for j in range(len(sk)) if j not in legs]
    np.testing.assert_allclose(pinned.rotations[:, others], on_rig.rotations[:, others])
    # a mapping without the legs' chains leaves the motion as it is
    assert pin_feet_on(on_rig, {"hips": "Hips"}, tracked.contact_prob) is on_rig


def _with_twist_bone(rig, bone: str, child: str, twist: str):
    """``rig`` with a bone ``twist`` halfway from ``bone`` to its child
    ``child`` (inserted right after ``bone``), ``child`` hanging from it."""
    from rigmind.backend.skeleton import Skeleton

    lo, end = rig.index(bone), rig.index(child)
    order = list(range(lo + 1)) + [-1] + list(range(lo + 1, len(rig)))
    new_index = {old: k for k, old in enumerate(order) if old >= 0}
    names = [rig.names[j] if j >= 0 else twist for j in order]
    parents = [new_index.get(int(rig.parents[j]), -1) if j >= 0 else new_index[lo] for j in order]
    parents[new_index[end]] = lo + 1
    offsets = np.array([rig.offsets[j] if j >= 0 else 0.5 * rig.offsets[end] for j in order])
    offsets[new_index[end]] = 0.5 * rig.offsets[end]
    tails = None if rig.tails is None else np.array([rig.tails[j] if j >= 0 else rig.tails[end] for j in order])
    return Skeleton(names, np.array(parents), offsets, None, tails)


def test_reach_hands_on_a_rig_of_other_proportions_puts_its_hands_on_the_trackers(tracked):
    """The tracked walk retargeted onto arms of other proportions (wider
    shoulders, a longer upper arm, a twist bone in the forearm) places its
    hands relative to its shoulders, off the trackers; reach_hands_on (what
    Track Body does on the rig for trackers placed for it) puts them on, the
    hands keeping their world rotation and nothing but the arms moving."""
    from rigmind.backend.retarget import RetargetConfig, retarget
    from rigmind.backend.tracking.canonical import CANONICAL_MAP
    from rigmind.backend.tracking.posing import reach_hands_on

    sk = canonical_skeleton()
    rig = sk.copy()
    for name, factor in (("UpperArm_L", 1.6), ("UpperArm_R", 1.6), ("LowerArm_L", 1.25), ("LowerArm_R", 1.25)):
        rig.offsets[rig.index(name)] = rig.offsets[rig.index(name)] * factor
    rig = _with_twist_bone(rig, "LowerArm_L", "Hand_L", "ForeTwist_L")
    on_rig = retarget(tracked.motion, dict(CANONICAL_MAP), rig, dict(CANONICAL_MAP),
                      RetargetConfig(ik=False, root_scale=1.0)).motion
    hands = [rig.index("Hand_L"), rig.index("Hand_R")]
    W0, P0 = on_rig.world()
    before = np.linalg.norm(P0[:, hands] - tracked.targets[:, 1:], axis=-1)
    reached = reach_hands_on(on_rig, dict(CANONICAL_MAP), tracked.targets[:, 1:])
    W1, P1 = reached.world()
    after = np.linalg.norm(P1[:, hands] - tracked.targets[:, 1:], axis=-1)
    assert np.median(before) > 0.03  # the proportions moved the hands off
    assert np.median(after) < 1e-4 and np.mean(after < 0.01) > 0.95
    np.testing.assert_allclose(np.abs(np.sum(W1[:, hands] * W0[:, hands], axis=-1)), 1.0, atol=1e-9)
    arms = [rig.index(n) for n in ("UpperArm_L", "LowerArm_L", "ForeTwist_L", "Hand_L", "UpperArm_R", "LowerArm_R",
                                   "Hand_R")]
    others = [j for j in range(len(rig)) if j not in arms]
    np.testing.assert_allclose(P1[:, others], P0[:, others], atol=1e-12)
    # arms that are not mapped chains are left as they are
    assert reach_hands_on(on_rig, {"hips": "Hips"}, tracked.targets[:, 1:]) is on_rig


def test_reach_head_on_a_rig_of_other_proportions_puts_its_head_on_the_tracker(tracked):
    """The tracked walk retargeted onto a longer trunk and shins, a twist
    bone in the left thigh (hips on the trackers' path, as Track Body does
    for trackers placed for the rig) has its head 3 cm off the head tracker;
    reach_head_on moves the rig onto it, the ankles staying where they were."""
    from rigmind.backend.retarget import RetargetConfig, retarget
    from rigmind.backend.tracking.canonical import CANONICAL_MAP
    from rigmind.backend.tracking.posing import reach_head_on

    rig = canonical_skeleton().copy()
    for name, factor in (("Chest", 1.4), ("Neck", 0.8), ("LowerLeg_L", 1.1), ("LowerLeg_R", 1.1)):
        rig.offsets[rig.index(name)] = rig.offsets[rig.index(name)] * factor
    rig = _with_twist_bone(rig, "UpperLeg_L", "LowerLeg_L", "ThighTwist_L")
    on_rig = retarget(tracked.motion, dict(CANONICAL_MAP), rig, dict(CANONICAL_MAP),
                      RetargetConfig(ik=False, hand_ik=False, root_scale=1.0)).motion
    moved = reach_head_on(on_rig, dict(CANONICAL_MAP), tracked.targets)
    head, feet = rig.index("Head"), [rig.index("Foot_L"), rig.index("Foot_R")]
    P0, P1 = on_rig.world_positions(), moved.world_positions()
    assert np.median(np.linalg.norm(P0[:, head] - tracked.targets[:, 0], axis=-1)) > 0.02
    err = np.linalg.norm(P1[:, head] - tracked.targets[:, 0], axis=-1)
    assert np.median(err) < 0.001 and err.max() < 0.005
    assert np.linalg.norm(P1[:, feet] - P0[:, feet], axis=-1).max() < 1e-6
    # without a mapped head the motion is left as it is
    assert reach_head_on(on_rig, {"hips": "Hips"}, tracked.targets) is on_rig


def test_joint_error_is_zero_for_the_targets_and_metres_for_a_moved_hips(walk):
    """The training's selection score: the targets' own poses score 0; hips
    lifted 0.1 m in every row (every joint but the fixed joint_Root moves
    with them) score 0.1 m on those joints."""
    pytest.importorskip("torch")
    from rigmind.backend.tracking.features import targets
    from rigmind.backend.tracking.train import TrainConfig, joint_error, train

    y = targets(walk)
    assert joint_error(y, y) == 0.0
    moved = y.copy()
    moved[:, 2] += 0.1  # hip_pos z, heading frame
    j = len(canonical_skeleton())
    assert joint_error(moved, y) == pytest.approx(0.1 * (j - 1) / j, abs=1e-6)
    with pytest.raises(ValueError, match="select"):
        train(TrainConfig(select="mpjpe"))
