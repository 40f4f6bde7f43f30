"""The idle stance the locomotion controller stands in.

The training clips (Bandai d1/d2 locomotion) have almost no idle frames: the
stillest two-feet-down frame of a style is often mid-stride (active: ankles
0.48 m apart front to back, a knee bent 54 degrees). :func:`idle_stance`
synthesises a standing pose from a style's own frame instead: the upper body
keeps the style's posture (spine, neck, head and shoulders, the pelvis'
and the spine's forward tilt), with the pelvis' and the chest's twist and the
sideways lean of the stride taken out; the arms hang as in the reference
standing frame (a style's frame is mid-swing); the legs are re-solved with two-bone IK so the ankles stand side by
side about hip width apart (:data:`STANCE_WIDTH`, measured between the ankle
joints), toes turned out :data:`TOE_OUT`, knees bent only
:data:`KNEE_FLEX`, the pelvis lowered or raised to what those legs reach,
and each foot flat on the floor as in a reference standing frame (the
"normal" style's, frame 0 of ``walk_normal_001``: its feet are flat at the
ankle height a planted foot has in the data).

Units: metres, radians. Blender Z-up, the character faces -Y at yaw 0 (its
left is +X). Works on one-frame :class:`~..motion.Motion` of the Bandai
skeleton.
"""

from __future__ import annotations

import numpy as np

from .. import rotations
from ..ik import two_bone_ik
from ..motion import Motion

#: Ankle-to-ankle distance (m, Bandai skeleton: its hip joints are 0.13 m
#: apart, a 1.68 m body) of the standing pose: about the width of the hips
#: measured on the outside, as people stand at rest.
STANCE_WIDTH = 0.22
#: Each foot's toes turned out from the facing (rad).
TOE_OUT = np.radians(7.0)
#: Knee flexion of the standing legs (rad, 0 = straight): relaxed, not
#: locked, and short of the foot cleanup's reach limit (``ik.MAX_REACH``,
#: 99.9 % of the leg: about 5 degrees), past which it lets a planted foot go.
KNEE_FLEX = np.radians(3.0)

_LEGS = (("UpperLeg_L", "LowerLeg_L", "Foot_L", "Toes_L", 1.0), ("UpperLeg_R", "LowerLeg_R", "Foot_R", "Toes_R", -1.0))


def _yaw_q(angle) -> np.ndarray:
    return rotations.from_axis_angle(np.asarray([0.0, 0.0, float(angle)]))


def _horizontal_angle(v) -> float:
    """Angle (rad) of the horizontal part of ``v`` from +X, counter clockwise."""
    return float(np.arctan2(v[1], v[0]))


def _set_world(rot: np.ndarray, parents, world: np.ndarray, j: int, q_world: np.ndarray) -> None:
    """Make joint ``j``'s world rotation ``q_world`` by changing its local one
    (``world`` is the current FK; its children are not updated)."""
    p = parents[j]
    rot[j] = rotations.mul(rotations.inv(world[p]), q_world) if p >= 0 else q_world


class _Pose:
    """One frame being edited: local ``rot [J, 4]`` and ``trans [J, 3]`` of
    ``skeleton``, joint indices by name (``idx``), and the character's
    ``yaw`` (rad, joint 0's, about +Z)."""

    def __init__(self, pose: Motion):
        self.skeleton = pose.skeleton
        self.fps = pose.fps
        self.parents = pose.skeleton.parents
        self.idx = {n: i for i, n in enumerate(pose.skeleton.names)}
        self.rot = pose.rotations[0].copy()
        self.trans = pose.local_translations()[0].copy()
        self.yaw = 2.0 * np.arctan2(self.rot[0, 3], self.rot[0, 0])  # joint 0: a yaw about +Z
        self.facing_angle = self.yaw - 0.5 * np.pi  # the facing -Y at yaw 0, as an angle from +X

    def fk(self):
        """World rotations ``[J, 4]`` and positions ``[J, 3]`` of the current frame."""
        m = Motion(self.skeleton, self.rot[None], self.trans[None, 0], self.fps, self.trans[None])
        w, p = m.world()
        return w[0], p[0]

    def set_world(self, world: np.ndarray, j: int, q_world: np.ndarray) -> None:
        _set_world(self.rot, self.parents, world, j, q_world)

    def left(self) -> np.ndarray:
        """The character's left (unit, world)."""
        return rotations.rotate(_yaw_q(self.yaw), np.array([1.0, 0.0, 0.0]))


def _square_upper_body(st: _Pose) -> None:
    """Take the stride out of the pelvis and the chest: their twist and
    sideways lean, keeping their forward tilt."""
    idx = st.idx
    # Pelvis: take out the stride's twist and roll (the hip joints' line
    # horizontal, square to the facing), keep its forward tilt.
    world, pos = st.fk()
    hips = idx["Hips"]
    lateral = pos[idx["UpperLeg_L"]] - pos[idx["UpperLeg_R"]]
    st.set_world(world, hips, rotations.mul(rotations.between_vectors(lateral, st.left()), world[hips]))
    # Chest: the counter-twist of the stride taken out too (a yaw at the spine
    # that squares the shoulders' line to the facing).
    world, pos = st.fk()
    spine = idx["Spine"]
    shoulders = pos[idx["UpperArm_L"]] - pos[idx["UpperArm_R"]]
    twist = st.facing_angle + 0.5 * np.pi - _horizontal_angle(shoulders)
    twist = (twist + np.pi) % (2.0 * np.pi) - np.pi
    st.set_world(world, spine, rotations.mul(_yaw_q(twist), world[spine]))
    # ... and its sideways lean (a mid-stride frame leans over the planted
    # foot): the spine's line from the hips to the neck kept in the
    # character's sagittal plane, its forward lean kept.
    world, pos = st.fk()
    up = pos[idx["Neck"]] - pos[idx["Spine"]]
    side = st.left()
    upright = up - np.dot(up, side) * side
    st.set_world(world, spine, rotations.mul(rotations.between_vectors(up, upright), world[spine]))


def _hang_arms(st: _Pose, reference: Motion, ref_world: np.ndarray) -> None:
    """Arms hanging as in the reference standing frame. The style's frame is
    mid-stride, its arms mid-swing (active: one upper arm 76 degrees from
    hanging, the other hand held up by the face), and a stance that keeps
    them holds the swing still. The upper arms' world rotations are the
    reference's turned to this pose's facing (so they hang, whatever the
    chest's lean), the forearms and hands bend as the reference's."""
    ref_yaw = 2.0 * np.arctan2(reference.rotations[0, 0, 3], reference.rotations[0, 0, 0])
    turn_q = _yaw_q(st.yaw - ref_yaw)
    for side in ("L", "R"):
        world, pos = st.fk()
        ua = st.idx[f"UpperArm_{side}"]
        st.set_world(world, ua, rotations.mul(turn_q, ref_world[ua]))
        for j in (f"LowerArm_{side}", f"Hand_{side}"):
            st.rot[st.idx[j]] = reference.rotations[0, st.idx[j]]


def _set_pelvis_height(st: _Pose, ref_pos: np.ndarray, width: float, knee_flex: float) -> list:
    """Raise or lower the pelvis so the hip joints are as high as legs bent
    ``knee_flex`` reach to ankles at the reference height, ``width`` apart.
    Returns the two ankle targets (world, m)."""
    idx = st.idx
    world, pos = st.fk()
    centre = 0.5 * (pos[idx["UpperLeg_L"]] + pos[idx["UpperLeg_R"]])
    side = st.left()
    targets, lift = [], []
    for hip, knee, ankle, _toe, sign in _LEGS:
        l1 = np.linalg.norm(pos[idx[knee]] - pos[idx[hip]])
        l2 = np.linalg.norm(pos[idx[ankle]] - pos[idx[knee]])
        reach = np.sqrt(l1 * l1 + l2 * l2 + 2.0 * l1 * l2 * np.cos(knee_flex))
        t = centre + sign * 0.5 * width * side
        t[2] = ref_pos[idx[ankle]][2]
        d_xy = np.linalg.norm((t - pos[idx[hip]])[:2])
        lift.append(t[2] + np.sqrt(max(reach * reach - d_xy * d_xy, 0.0)) - pos[idx[hip]][2])
        targets.append(t)
    st.trans[idx["Hips"], 2] += float(np.mean(lift))
    return targets


def _stand_legs(st: _Pose, reference: Motion, ref_world, ref_pos, targets, toe_out: float) -> None:
    """Two-bone IK of each leg to its ankle target, the knee bending toward
    the toes; each foot flat as in the reference, turned to the facing and
    out by ``toe_out``."""
    idx, rot = st.idx, st.rot
    for (hip, knee, ankle, toe, sign), t in zip(_LEGS, targets):
        world, pos = st.fk()
        h, k, a = idx[hip], idx[knee], idx[ankle]
        toe_dir = rotations.rotate(_yaw_q(st.facing_angle + sign * toe_out), np.array([1.0, 0.0, 0.0]))
        pole = 0.5 * (pos[h] + t) + 0.5 * toe_dir
        q_root, q_mid, _ = two_bone_ik(pos[h], pos[k], pos[a], t, pole)
        new_h = rotations.mul(q_root, world[h])
        new_k = rotations.mul(q_mid, world[k])
        st.set_world(world, h, new_h)
        rot[k] = rotations.mul(rotations.inv(new_h), new_k)
        # Foot flat as in the reference, turned to the facing, then out.
        f_ref = ref_world[a]
        ref_toe = ref_pos[idx[toe]] - ref_pos[a]
        turn = st.facing_angle + sign * toe_out - _horizontal_angle(ref_toe)
        rot[a] = rotations.mul(rotations.inv(new_k), rotations.mul(_yaw_q(turn), f_ref))
        rot[idx[toe]] = reference.rotations[0, idx[toe]]


def idle_stance(pose: Motion, reference: Motion, *, width: float = STANCE_WIDTH, toe_out: float = TOE_OUT,
                knee_flex: float = KNEE_FLEX) -> Motion:
    """A standing pose (one frame, world space) built from ``pose``'s upper
    body (see the module docstring). ``reference``: a one-frame standing pose
    whose feet are flat on the floor; its foot and toe orientations (turned
    to face the character's way, then out by ``toe_out``) and its ankle
    height are used. Both are on the Bandai skeleton with joint 0 the
    character root (yaw about +Z); the result keeps ``pose``'s root.
    ``width`` (m): ankle to ankle; ``toe_out``, ``knee_flex`` (rad)."""
    st = _Pose(pose)
    _square_upper_body(st)
    # Reference feet: flat, at the data's planted ankle height.
    ref_world, ref_pos = reference.world()
    ref_world, ref_pos = ref_world[0], ref_pos[0]
    _hang_arms(st, reference, ref_world)
    targets = _set_pelvis_height(st, ref_pos, width, knee_flex)
    _stand_legs(st, reference, ref_world, ref_pos, targets, toe_out)
    out_trans = st.trans[None].copy()
    return Motion(st.skeleton, rotations.normalize(st.rot)[None], pose.root_positions.copy(), pose.fps, out_trans, name=pose.name)


#: Duration (s) of one settling step into the stance, and the foot's lift
#: (m) at its middle; a foot closer than :data:`STEP_MIN` (m) to its place
#: in the stance does not step (it is put there while the other steps).
STEP_SECONDS = 0.4
STEP_LIFT = 0.07
STEP_MIN = 0.015


def settle_steps(start_feet: np.ndarray, stance_feet: np.ndarray, frames: int, fps: float,
                 lifted=None) -> tuple:
    """The feet's way into the stance: each foot that is not already at its
    place steps there (lifts, travels, lands) while the other one stays
    planted, one after the other, so no foot slides across the floor.

    Args:
        start_feet: ``[4, 3]`` world positions (m) of ``Foot_L, Toes_L,
            Foot_R, Toes_R`` where the feet are as the settle begins.
        stance_feet: ``[4, 3]`` the same in the standing pose.
        frames: frames of the settle (the feet are at the stance by the end
            of the steps; the rest holds).
        lifted: optional ``[2]`` bools, a foot that is up already steps first.

    Returns:
        ``(feet [frames, 4, 3], contacts [frames, 4])``: where the feet are
        (the same joint order) and whether each joint is planted (0/1).
    """
    start = np.asarray(start_feet, dtype=np.float64).reshape(2, 2, 3)  # [side, ankle/toe, xyz]
    end = np.asarray(stance_feet, dtype=np.float64).reshape(2, 2, 3)
    step_n = max(int(round(STEP_SECONDS * fps)), 2)
    far = np.linalg.norm((end - start)[:, :, :2], axis=-1).max(axis=1)  # [2]
    order = sorted(range(2), key=lambda i: (not (lifted is not None and lifted[i]), -far[i]))
    steppers = [i for i in order if far[i] > STEP_MIN]
    feet = np.repeat(start[None], frames, 0)
    contacts = np.ones((frames, 2, 2))
    t0 = 0
    for side in range(2):
        if side not in steppers:
            # Close enough: eased onto its place over the first step.
            u = np.clip(np.arange(1, frames + 1) / step_n, 0.0, 1.0)
            w = (u * u * (3.0 - 2.0 * u))[:, None, None]
            feet[:, side] = start[side] + w * (end[side] - start[side])
    for side in steppers:
        k = np.arange(frames) - t0
        u = np.clip((k + 1) / step_n, 0.0, 1.0)
        w = u**3 * (10.0 - 15.0 * u + 6.0 * u * u)  # zero speed at lift-off and touch-down
        feet[:, side] = start[side] + w[:, None, None] * (end[side] - start[side])
        feet[:, side, :, 2] += (STEP_LIFT * np.sin(np.pi * u) ** 2)[:, None]
        contacts[(k >= 0) & (k < step_n - 1), side] = 0.0
        t0 += step_n
    return feet.reshape(frames, 4, 3), contacts.reshape(frames, 4)


def settle_frames(start_feet, stance_feet, fps: float) -> int:
    """Frames :func:`settle_steps` needs to put the feet in the stance."""
    start = np.asarray(start_feet, dtype=np.float64).reshape(2, 2, 3)
    end = np.asarray(stance_feet, dtype=np.float64).reshape(2, 2, 3)
    far = np.linalg.norm((end - start)[:, :, :2], axis=-1).max(axis=1)
    return max(int(np.sum(far > STEP_MIN)), 1) * max(int(round(STEP_SECONDS * fps)), 2)


def stance_measures(world_pos: np.ndarray, names) -> dict:
    """What a standing pose looks like, from joint positions ``[J, 3]`` (m,
    Z up) of the Bandai skeleton: ``ankle_distance`` (m, horizontal, ankle
    to ankle), ``knee_flex`` (rad, the larger of the two; 0 = straight) and
    ``hips_height`` (m)."""
    names = list(names)
    p = np.asarray(world_pos, dtype=np.float64)
    flex = []
    for hip, knee, ankle, _, _ in _LEGS:
        u = p[names.index(knee)] - p[names.index(hip)]
        v = p[names.index(ankle)] - p[names.index(knee)]
        flex.append(np.arccos(np.clip(np.dot(u, v) / (np.linalg.norm(u) * np.linalg.norm(v)), -1.0, 1.0)))
    d = p[names.index("Foot_L")] - p[names.index("Foot_R")]
    return {"ankle_distance": float(np.hypot(d[0], d[1])), "knee_flex": float(max(flex)),
            "hips_height": float(p[names.index("Hips")][2])}


__all__ = ["idle_stance", "stance_measures", "settle_steps", "settle_frames", "STANCE_WIDTH", "TOE_OUT", "KNEE_FLEX"]
