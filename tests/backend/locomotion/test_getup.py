"""Get up (#28): a walk that starts lying face up or face down."""

import numpy as np
import pytest

from rigmind.backend import rotations
from rigmind.backend.errors import UserError
from rigmind.backend.locomotion.actions import getup
from rigmind.backend.locomotion.controllers import load_controller
from rigmind.backend.locomotion.path_follow import follow_path, snap_to_path

PATH = [[0, 0], [6, 0], [6, 5], [1, 5]]
#: Bandai's Chest bone: local +Z is the body's forward (the walk's first
#: frame faces +X along the path's first segment with it).
CHEST_FORWARD = np.array([0.0, 0.0, 1.0])
ARRAYS = ("target_xy", "arc", "root_xy", "error", "command", "stopping", "contacts", "feet", "paused")


@pytest.fixture(scope="module")
def walked():
    ctl = load_controller("auto", styles=["normal"], gait="walk")
    return snap_to_path(follow_path(ctl, PATH, style="normal"), PATH)


@pytest.fixture(scope="module", params=["lying-up", "lying-down"])
def got_up(request, walked):
    return request.param, getup.prepend_getup(walked, request.param)


def _steps(motion):
    """Largest joint displacement (m) per frame step ``[F - 1]``."""
    return np.linalg.norm(np.diff(motion.world_positions(), axis=0), axis=-1).max(axis=1)


def _names(motion):
    return list(motion.skeleton.names)


def test_starts_lying_on_the_floor(got_up, walked):
    start, out = got_up
    k = out.motion.num_frames - walked.motion.num_frames
    p = out.motion.world_positions()
    n = _names(out.motion)
    hips, head, neck = p[0, n.index("Hips")], p[0, n.index("Head")], p[0, n.index("Neck")]
    assert hips[2] < 0.35
    assert abs(head[2] - hips[2]) < 0.3
    trunk = neck - hips  # lying: the trunk within ~35 degrees of the floor
    assert trunk[2] / np.linalg.norm(trunk) < np.sin(np.radians(35))
    assert p[:k, :, 2].min() > -0.02
    chest_fwd = rotations.rotate(out.motion.world_rotations()[0, n.index("Chest")], CHEST_FORWARD)
    assert chest_fwd[2] > 0.5 if start == "lying-up" else chest_fwd[2] < -0.5


def test_stands_at_path_start_facing_first_segment(got_up, walked):
    _, out = got_up
    k = out.motion.num_frames - walked.motion.num_frames
    p = out.motion.world_positions()
    sk = out.motion.skeleton
    hips = _names(out.motion).index("Hips")
    assert np.linalg.norm(p[k - 1, hips, :2] - np.asarray(PATH[0])) < 0.05
    assert p[k - 1, hips, 2] > 0.85
    # Facing +X (the first segment): yaw 90 degrees (yaw 0 faces -Y).
    assert abs(np.degrees(getup.facing_yaw(p[k - 1], sk)) - 90.0) < 5.0


def test_smooth_hand_over(got_up, walked):
    _, out = got_up
    k = out.motion.num_frames - walked.motion.num_frames
    steps = _steps(out.motion)
    walk_p999 = np.percentile(_steps(walked.motion), 99.9)
    clip_p999 = np.percentile(steps[:k - 1], 99.9)
    n = int(round(getup.GetUpConfig().blend_seconds * out.motion.fps))
    assert steps[k - 3:k + n + 2].max() <= 1.5 * min(walk_p999, clip_p999)


def test_arrays_consistent_and_walk_unchanged(got_up, walked):
    _, out = got_up
    f = out.motion.num_frames
    k = f - walked.motion.num_frames
    for name in ARRAYS:
        assert len(getattr(out, name)) == f, name
        assert not np.isnan(np.asarray(getattr(out, name), dtype=np.float64)).any(), name
    assert not np.isnan(out.motion.world_positions()).any()
    assert out.contacts.shape == (f, 4) and out.feet.shape == (f, 4, 3)
    assert np.all(out.arc[:k] == 0) and not out.paused[:k].any() and not out.stopping[:k].any()
    assert out.stopped_at == walked.stopped_at + k
    n = int(round(getup.GetUpConfig().blend_seconds * out.motion.fps))
    np.testing.assert_allclose(out.error[k + n:], walked.error[n:])
    same = np.abs(np.sum(out.motion.rotations[k + n:] * walked.motion.rotations[n:], axis=-1))  # q and -q alike
    np.testing.assert_allclose(same, 1.0, atol=1e-9)
    assert out.end_distance <= 0.10


def test_feet_planted_when_standing_up(got_up, walked):
    from rigmind.backend.locomotion.cleanup import pin_feet
    from rigmind.backend.locomotion.path_pin import path_pin_config

    _, out = got_up
    k = out.motion.num_frames - walked.motion.num_frames
    n = int(round(getup.GetUpConfig().blend_seconds * out.motion.fps))
    c = out.contacts[k - 10:k + n] > 0.5
    # Some foot is down through most of the last of the get-up and the hand-over
    # (face up, the feet slide into the walk's stance for ~5 frames with neither planted).
    assert c.any(axis=1).mean() >= 0.75
    pinned = pin_feet(out.motion, predicted=out.contacts, feet=out.feet, config=path_pin_config("normal"))
    feet = getup.feet_positions(pinned)[k - 10:k + n]
    speed = np.linalg.norm(np.gradient(feet[..., :2], axis=0), axis=-1) * out.motion.fps
    assert np.median(speed[c]) < 0.1 and np.percentile(speed[c], 90) < 0.35


def test_standing_unchanged_and_unknown_refused(walked):
    assert getup.prepend_getup(walked, "standing") is walked
    with pytest.raises(UserError) as e:
        getup.prepend_getup(walked, "sitting")
    assert "\n" not in str(e.value) and "lying-up" in str(e.value)


def test_getup_clip_alone():
    from rigmind.backend.locomotion.controllers import controller_skeleton
    from rigmind.backend.locomotion.path_follow import standing_pose

    ctl = load_controller("auto", styles=["normal"], gait="walk")
    sk = controller_skeleton(ctl)
    m = getup.getup_clip(sk, "lying-down", heading=0.0, position=(2.0, 1.0),
                         reference=standing_pose(ctl, (0.0, 0.0), 0.0, "normal"))
    p = m.world_positions()
    hips = list(sk.names).index("Hips")
    assert np.linalg.norm(p[-1, hips, :2] - [2.0, 1.0]) < 1e-6
    assert abs(getup.facing_yaw(p[-1], sk)) < 1e-6
    assert p[:, :, 2].min() > -0.02
