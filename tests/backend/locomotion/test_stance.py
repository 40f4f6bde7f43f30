"""The idle stance (issue #12: "the standing pose is the mocap's idle
stance"): the synthesised standing pose of every style, the feet's settling
steps into it, and a stop on a path that ends in it with the feet still.

Backend only (no bpy); the committed neural weights are needed (skipped
without them). The rig-level checks are in test_locomotion_path_rig.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from rigmind.backend.locomotion import features
from rigmind.backend.locomotion import vector_layout
from rigmind.backend.locomotion.stance import (KNEE_FLEX, STANCE_WIDTH, settle_steps, stance_measures)


@pytest.fixture(scope="module")
def controller():
    from rigmind.backend.locomotion import controllers

    if controllers.neural_weights() is None:
        pytest.skip("no committed locomotion weights in models/ (train with `rigmind train locomotion`)")
    return controllers.load_controller("neural")


def _side_by_side(p, names):
    """(lateral, forward) ankle offsets (m) in the character's frame (faces -Y)."""
    d = p[names.index("Foot_L")] - p[names.index("Foot_R")]
    return d[0], d[1]


@pytest.mark.parametrize("style", vector_layout.STYLES)
def test_every_style_stands_hip_width_with_straight_knees(controller, style):
    """The stored start poses were mid-stride frames for most styles (active:
    ankles 0.48 m apart front to back, a knee at 54 degrees); the standing
    pose is now feet side by side about hip width, knees nearly straight,
    feet flat, the style's upper body kept."""
    controller.reset(position=(0.0, 0.0), yaw=0.0, style=style)
    pose = controller.pose()
    names = list(pose.skeleton.names)
    p = pose.world_positions()[0]
    m = stance_measures(p, names)
    lateral, forward = _side_by_side(p, names)
    hips_gap = abs(p[names.index("UpperLeg_L"), 0] - p[names.index("UpperLeg_R"), 0])
    assert abs(m["ankle_distance"] - STANCE_WIDTH) < 0.01, m
    assert lateral > 1.4 * hips_gap and abs(forward) < 0.01, (lateral, forward, hips_gap)
    assert np.degrees(m["knee_flex"]) < np.degrees(KNEE_FLEX) + 4.0, m
    # Feet flat: both ankles and both toes at the reference standing frame's heights.
    z = p[list(features.CONTACT_INDEX), 2]
    assert np.all(np.abs(z[[0, 2]] - 0.119) < 0.005) and np.all(z[[1, 3]] < 0.06), z
    # Toes turned out a little on both sides (left foot toward +X).
    toe_l = p[names.index("Toes_L")] - p[names.index("Foot_L")]
    toe_r = p[names.index("Toes_R")] - p[names.index("Foot_R")]
    assert toe_l[0] > 0 and toe_r[0] < 0
    # The style's upper body: the neck's and the head's local rotations are the start pose's.
    start = controller._start_motion(style)
    for j in ("Neck", "Head"):
        k = names.index(j)
        dot = abs(float(np.dot(pose.rotations[0, k], start.rotations[0, k])))
        assert dot > 0.999, (j, dot)
    # The arms hang as in the reference standing frame, not held mid-swing
    # (the active stance held one upper arm 76 degrees from hanging and the
    # other hand up by the face): upper arms within 25 degrees of straight
    # down, hands below the hips, elbows bent as the reference's.
    ref = controller._start_motion("normal")
    for side in ("L", "R"):
        sh, el, ha = (p[names.index(f"{j}_{side}")] for j in ("UpperArm", "LowerArm", "Hand"))
        hang = np.degrees(np.arccos(-(el - sh)[2] / np.linalg.norm(el - sh)))
        assert hang < 25.0 and ha[2] < p[names.index("Hips"), 2], (side, hang, ha[2])
        k = names.index(f"LowerArm_{side}")
        assert abs(float(np.dot(pose.rotations[0, k], ref.rotations[0, k]))) > 0.999


def test_settle_steps_move_one_foot_at_a_time():
    """Each foot steps into the stance while the other stays planted; the
    steps start and land at zero speed and end on the stance."""
    start = np.array([[0.1, -0.3, 0.12], [0.1, -0.4, 0.04], [-0.1, 0.1, 0.12], [-0.1, 0.0, 0.04]])
    end = np.array([[0.11, 0.0, 0.12], [0.12, -0.1, 0.04], [-0.11, 0.0, 0.12], [-0.12, -0.1, 0.04]])
    feet, contacts = settle_steps(start, end, 30, 30.0)
    assert np.allclose(feet[-1], end)
    # Never both ankles off the floor.
    assert np.all(contacts[:, 0] + contacts[:, 2] >= 1)
    # A planted ankle does not move.
    v = np.linalg.norm(np.diff(feet[:, [0, 2], :2], axis=0), axis=-1)
    planted = (contacts[1:, [0, 2]] > 0) & (contacts[:-1, [0, 2]] > 0)
    assert v[planted].max() < 1e-9
    # The stepping foot lifts off the floor.
    assert feet[:, 0, 2].max() > 0.15 and feet[:, 2, 2].max() > 0.15


def test_walk_along_path_ends_in_the_stance_with_the_feet_still(controller):
    """The path follower's stop, snapped to the path and cleaned as Walk
    Along Path cleans it: the last frame is the stance (hip-width, knees
    nearly straight) and the held frames have the feet still."""
    from rigmind.backend.locomotion.cleanup import pin_feet
    from rigmind.backend.locomotion.path_follow import follow_path, snap_to_path
    from rigmind.backend.locomotion import path_pin

    pts = np.array([[0.0, 0.0], [3.0, 0.0], [3.0, 2.0]])
    for style in ("active", "youthful"):
        res = snap_to_path(follow_path(controller, pts, speed=1.3, style=style), pts)
        m = pin_feet(res.motion, predicted=res.contacts, feet=res.feet, config=path_pin.path_pin_config(style))
        p = m.world_positions()
        names = list(m.skeleton.names)
        end = stance_measures(p[-1], names)
        assert abs(end["ankle_distance"] - STANCE_WIDTH) < 0.02, (style, end)
        assert np.degrees(end["knee_flex"]) < 8.0, (style, end)
        assert np.linalg.norm(p[-1, names.index("Hips"), :2] - pts[-1]) < 0.05
        held = p[-12:][:, list(features.CONTACT_INDEX)]
        speed = np.linalg.norm(np.diff(held[:, :, :2], axis=0), axis=-1) * m.fps
        assert speed.max() < 0.03, (style, speed.max())  # under 1 mm a frame
