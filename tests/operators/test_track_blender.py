"""Track Body in Blender: three animated empties (head, left hand, right
hand) → a new action on the mannequin, and live mode posing it tick by tick
(real bpy; operators through bpy.ops as the panel calls them)."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import call_as_panel

FRAMES = 60  # 2 s at 30 fps


def _walking_trackers(bpy, fps=30):
    """Three empties keyed over frames 1..FRAMES: a person walking along +X at 0.5 m/s, head 1.6 m up."""
    names = ("Head", "HandL", "HandR")
    objs = []
    for name in names:
        ob = bpy.data.objects.new(name, None)
        bpy.context.scene.collection.objects.link(ob)
        objs.append(ob)
    for f in range(1, FRAMES + 1):
        t = (f - 1) / fps
        x = 0.5 * t
        swing = 0.15 * np.sin(2 * np.pi * t)
        places = ((x, 0.0, 1.6 + 0.02 * np.sin(4 * np.pi * t)), (x + swing, 0.22, 0.85), (x - swing, -0.22, 0.85))
        for ob, p in zip(objs, places):
            ob.location = p
            ob.keyframe_insert("location", frame=f)
    return objs


@pytest.fixture
def scene(registered):
    bpy = registered
    bpy.ops.rigmind.add_mannequin()
    sc = bpy.context.scene
    sc.render.fps, sc.frame_start, sc.frame_end = 30, 1, FRAMES
    arm = sc.rigmind.target_armature
    arm.pose.bones["Hips"].location = (0.0, 0.0, 0.0)
    arm.pose.bones["Hips"].keyframe_insert("location", frame=1)
    arm.animation_data.action.name = "Prior"
    objs = _walking_trackers(bpy)
    s = sc.rigmind
    s.track_head, s.track_hand_l, s.track_hand_r = objs
    return bpy, arm, objs


def _hips_world(bpy, arm, frame):
    bpy.context.scene.frame_set(frame)
    return np.array(arm.matrix_world @ arm.pose.bones["Hips"].head)


def test_track_body_bakes_a_new_action(scene):
    bpy, arm, objs = scene
    assert call_as_panel("rigmind.track_body", method="baseline") == {"FINISHED"}
    action = arm.animation_data.action
    assert action.name == "RigMind Track · Head"
    assert "Prior" in bpy.data.actions  # the rig's own action is kept
    assert tuple(round(f) for f in action.frame_range) == (1, FRAMES)
    # The body walks with the trackers: the hips travel along +X (0.5 m/s for ~2 s).
    a, b = _hips_world(bpy, arm, 1), _hips_world(bpy, arm, FRAMES)
    assert 0.4 < b[0] - a[0] < 1.6 and abs(b[1] - a[1]) < 0.4


def test_track_body_model_method(scene):
    bpy, arm, _ = scene
    assert call_as_panel("rigmind.track_body") == {"FINISHED"}
    head = arm.pose.bones["Head"]
    bpy.context.scene.frame_set(30)
    z = (arm.matrix_world @ head.head)[2]
    assert 1.2 < z < 2.0  # a standing body's head, not a heap on the floor


def _hands_within_reach(objs) -> None:
    """Re-key the hand empties within reach of a body facing -Y (its left
    at +X) walking along +X, swinging forward and back."""
    for f in range(1, FRAMES + 1):
        t = (f - 1) / 30.0
        swing = 0.12 * np.sin(2 * np.pi * t)
        for ob, side in ((objs[1], 1.0), (objs[2], -1.0)):
            ob.location = (0.5 * t + side * 0.22, -0.05 - side * swing, 0.95)
            ob.keyframe_insert("location", frame=f)


def _hand_misses(arm, objs) -> list:
    """Metres from the rig's hand bones to their trackers, as the scene is now."""
    return [float(np.linalg.norm(np.array(arm.matrix_world @ arm.pose.bones[bone].head)
                                 - np.array(ob.matrix_world.translation)))
            for ob, bone in zip(objs[1:], ("LeftHand", "RightHand"))]


def test_track_body_puts_the_rigs_hands_on_its_trackers(scene):
    """Empties placed for the rig: the baked hands sit on them (the retarget
    alone placed them relative to the rig's own shoulders, 6-8 cm off)."""
    bpy, arm, objs = scene
    _hands_within_reach(objs)
    assert call_as_panel("rigmind.track_body") == {"FINISHED"}
    miss = []
    for f in range(1, FRAMES + 1, 3):
        bpy.context.scene.frame_set(f)
        miss += _hand_misses(arm, objs)
    miss = np.array(miss)
    # on them wherever the arm reaches (the backward swing is at the arm's length in a few frames)
    assert np.median(miss) < 0.001 and np.mean(miss < 0.01) > 0.8 and miss.max() < 0.06, np.round(miss, 3)


def test_missing_tracker_is_one_error_line(scene):
    bpy, arm, _ = scene
    bpy.context.scene.rigmind.track_hand_r = None
    with pytest.raises(RuntimeError, match="pick the right hand tracker object"):
        call_as_panel("rigmind.track_body")
    assert arm.animation_data.action.name == "Prior"


def test_live_tick_poses_the_rig_and_close_restores(scene):
    from rigmind.operators.track_live import TrackLiveSession

    bpy, arm, objs = scene
    sc = bpy.context.scene
    sc.frame_set(1)
    before = {pb.name: tuple(pb.rotation_quaternion) for pb in arm.pose.bones}
    session = TrackLiveSession(arm, objs)
    assert arm.animation_data.action is None  # the action is off while live
    for f in range(2, 31):
        sc.frame_set(f)
        out = session.tick(1 / 30)
        assert set(out) >= {"read", "track", "map", "write", "total"}
    bpy.context.view_layer.update()
    hips = np.array(arm.matrix_world @ arm.pose.bones["Hips"].head)
    head = np.array(arm.matrix_world @ arm.pose.bones["Head"].head)
    # The body stands under the head tracker as it walks (0.5 m/s for 1 s).
    assert abs(hips[0] - objs[0].location[0]) < 0.5 and 1.2 < head[2] < 2.0
    assert any(abs(np.dot(tuple(arm.pose.bones[n].rotation_quaternion), before[n])) < 0.999
               for n in ("LeftArm", "RightArm", "LeftUpLeg", "Spine"))
    session.close()
    assert arm.animation_data.action.name == "Prior"
    assert all(np.allclose(tuple(pb.rotation_quaternion), before[pb.name], atol=1e-6) for pb in arm.pose.bones)


def test_performer_placement_scales_the_trackers_onto_the_rig(scene):
    """Placement "performer": another body's trackers, scaled onto the rig as
    a retarget scales them; the hands are not pulled onto them."""
    bpy, arm, objs = scene
    _hands_within_reach(objs)
    assert call_as_panel("rigmind.track_body", placement="performer") == {"FINISHED"}
    miss = []
    for f in range(1, FRAMES + 1, 3):
        bpy.context.scene.frame_set(f)
        miss += _hand_misses(arm, objs)
    assert np.median(miss) > 0.02


def _live_frames(bpy, arm, objs, measure) -> list:
    """Track Live over frames 2..FRAMES from frame 1, ``measure()`` taken
    after each tick; the session closed after."""
    from rigmind.operators.track_live import TrackLiveSession

    sc = bpy.context.scene
    sc.frame_set(1)
    session = TrackLiveSession(arm, objs)
    out = []
    try:
        for f in range(2, FRAMES + 1):
            sc.frame_set(f)
            session.tick(1 / 30)
            bpy.context.view_layer.update()
            out.append(measure())
    finally:
        session.close()
    return out


def test_live_puts_the_rigs_hands_on_its_trackers(scene):
    """Track Live as Track Body bakes: the hands on the empties each tick."""
    bpy, arm, objs = scene
    _hands_within_reach(objs)
    miss = np.concatenate(_live_frames(bpy, arm, objs, lambda: _hand_misses(arm, objs)))
    assert np.median(miss) < 0.001 and np.mean(miss < 0.01) > 0.8 and miss.max() < 0.06, np.round(miss, 3)


def test_closing_the_job_early_writes_nothing(scene):
    """What Esc does in the modal operator: the job closed while the body is made."""
    from rigmind.backend.requests.track import TrackRequest
    from rigmind.operators import track_scene

    bpy, arm, objs = scene
    take = track_scene.read_object_take(objs)
    assert take.num_samples == FRAMES and bpy.context.scene.frame_current == 1
    job = track_scene.track_job(arm, take, TrackRequest(method="baseline", set_scene_fps=False, scene_range="grow"))
    next(job)
    job.close()
    assert arm.animation_data.action.name == "Prior"
    assert not [a for a in bpy.data.actions if a.name.startswith("RigMind Track")]


def _tracker_armature(bpy):
    """An armature with bones Head, HandL, HandR at a standing person's tracker
    places, its object walking along +X at 0.5 m/s over frames 1..FRAMES."""
    data = bpy.data.armatures.new("TrackerRig")
    ob = bpy.data.objects.new("TrackerRig", data)
    bpy.context.scene.collection.objects.link(ob)
    bpy.context.view_layer.objects.active = ob
    bpy.ops.object.mode_set(mode="EDIT")
    for name, head in (("Head", (0, 0, 1.6)), ("HandL", (0, 0.22, 0.85)), ("HandR", (0, -0.22, 0.85))):
        b = data.edit_bones.new(name)
        b.head, b.tail = head, (head[0], head[1] - 0.1, head[2])  # pointing forward (-Y)
    bpy.ops.object.mode_set(mode="OBJECT")
    for f in (1, FRAMES):
        ob.location = (0.5 * (f - 1) / 30, 0, 0)
        ob.keyframe_insert("location", frame=f)
    return ob


def test_bones_as_trackers(scene):
    from rigmind.operators import track_scene

    bpy, arm, _ = scene
    rig = _tracker_armature(bpy)
    bones = ("Head", "HandL", "HandR")
    take = track_scene.read_object_take([rig] * 3, bones=bones)
    assert take.num_samples == FRAMES
    assert np.allclose(take.positions[0], [(0, 0, 1.6), (0, 0.22, 0.85), (0, -0.22, 0.85)], atol=1e-5)
    assert take.positions[-1, 0, 0] == pytest.approx(0.5 * (FRAMES - 1) / 30, abs=1e-5)
    assert call_as_panel("rigmind.track_body", method="baseline", head="TrackerRig", hand_l="TrackerRig",
                         hand_r="TrackerRig", head_bone="Head", hand_l_bone="HandL", hand_r_bone="HandR") == {"FINISHED"}
    assert arm.animation_data.action.name == "RigMind Track · TrackerRig"
    with pytest.raises(RuntimeError, match="names bone 'Nose', which 'TrackerRig' does not have"):
        call_as_panel("rigmind.track_body", head="TrackerRig", hand_l="TrackerRig", hand_r="TrackerRig",
                      head_bone="Nose", hand_l_bone="HandL", hand_r_bone="HandR")



def _trackers_at_the_rigs_height(bpy, arm, objs) -> None:
    """Re-key the three empties where this rig can put its head and hands:
    the head 2 cm under the rig's rest head, each hand 0.42 m below its
    shoulder and 0.1 m in front of it (the rig faces -Y), all walking along
    +X at 0.5 m/s."""
    rest = {b.name: np.array(arm.matrix_world @ b.head_local) for b in arm.data.bones}
    places = (rest["Head"] + (0.0, 0.0, -0.02), rest["LeftArm"] + (0.0, -0.1, -0.42),
              rest["RightArm"] + (0.0, -0.1, -0.42))
    for f in range(1, FRAMES + 1):
        x = 0.5 * (f - 1) / 30.0
        for ob, p in zip(objs, places):
            ob.location = tuple(p + (x, 0.0, 0.0))
            ob.keyframe_insert("location", frame=f)


def test_bake_and_live_put_the_rigs_head_on_its_tracker(scene):
    """Trackers the rig can reach: Track Body and Track Live put its head bone
    on the head empty (the retarget alone left it a few centimetres off, the
    rig's trunk carrying the tracked body's angles over other lengths), the
    hands staying on theirs."""
    bpy, arm, objs = scene
    _trackers_at_the_rigs_height(bpy, arm, objs)
    sc = bpy.context.scene

    def head_miss():
        return float(np.linalg.norm(np.array(arm.matrix_world @ arm.pose.bones["Head"].head)
                                    - np.array(objs[0].matrix_world.translation)))

    assert call_as_panel("rigmind.track_body") == {"FINISHED"}
    baked, hands = [], []
    for f in range(1, FRAMES + 1, 3):
        sc.frame_set(f)
        baked.append(head_miss())
        hands += _hand_misses(arm, objs)
    ticks = _live_frames(bpy, arm, objs, lambda: (head_miss(), _hand_misses(arm, objs)))
    live = [h for h, _ in ticks]
    hands += [m for _, pair in ticks for m in pair]
    assert np.median(baked) < 0.005 and max(baked) < 0.02, np.round(baked, 3)
    assert np.median(live) < 0.005 and max(live) < 0.02, np.round(live, 3)
    assert np.median(hands) < 0.001 and max(hands) < 0.02, np.round(hands, 3)
