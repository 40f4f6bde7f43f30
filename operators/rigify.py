"""Retargeting onto a generated Rigify rig: keys go on the FK CONTROLS.

In a generated Rigify rig the deform bones (``DEF-``) follow ``ORG-`` bones
by constraints, which follow the controls through ``MCH-`` bones. Keying
``DEF-`` bones would not move the rig, so the canonical pose is written on the
FK controls (``presets/bone_maps/rigify_fk.json``: ``torso`` for the root
motion and pelvis, ``spine_fk.002/.003``, ``neck``, ``head``, ``shoulder.L``,
``upper_arm_fk.L`` ...) while the body is still *measured* on the ``DEF-``
bones (the rig's auto mapping, ``rigify_def``): the hips joint the source's
hips are put on is ``DEF-spine``'s head (the pelvis), not the ``torso``
control's pivot.

The controls' parents are mostly constraint-driven ``MCH-``/``ORG-`` bones
(a finger control hangs from ``DEF-hand.L`` through a palm bone, the upper
arm from ``MCH-upper_arm_parent.L``), so the armature's bone tree says little
about what a control really follows. :func:`prepare` therefore sets the
switches that make the FK chain a plain hierarchy (IK/FK = 1 i.e. FK, neck
and head follow = 1, FK limb follow = 0), then *probes* the evaluated rig:
it poses the mapped controls at random, lets Blender evaluate constraints and
drivers, and finds for every control the control (or the armature) its
parent bone moves rigidly with. That gives a small "control skeleton" whose
rest is the evaluated zero pose; the backend retargets onto it like onto any
rig, and :meth:`RigifyPlan.to_bone_locals` turns the result back into local
transforms relative to the real parent bones for ``scene_io.write_motion``.
"""

from __future__ import annotations

import numpy as np

from ..backend import rotations
from ..backend.bone_mapping import BoneMapping, NotHumanoidError, load_humanoid, match_preset
from ..backend.motion import Motion
from ..backend.skeleton import Skeleton
from . import scene_io

#: Bones a generated Rigify human rig always has (besides the ``rig_id``
#: custom property Rigify puts on the armature data).
SIGNATURE = ("torso", "upper_arm_fk.L", "upper_arm_fk.R", "thigh_fk.L", "thigh_fk.R")
#: ``property -> value`` set (and keyed) on every pose bone that has it.
#: IK_FK drives the influence of the ORG bones' Copy Transforms from the IK
#: chain as ``1 - IK_FK`` (rigify/rigs/limbs/limb_rigs.py), so 1.0 is FK.
#: neck/head follow = 1 make MCH-ROT-neck/head inherit the chest/neck
#: rotation (their Copy Rotation from the torso gets influence 0), so the
#: FK spine-neck-head is one chain; FK_limb_follow = 0 keeps the arm/leg FK
#: chains following the shoulder/hips (not the root).
SWITCHES = {"IK_FK": 1.0, "neck_follow": 1.0, "head_follow": 1.0, "FK_limb_follow": 0.0}
#: Unmapped controls that bend the body if posed: keyed at rest so a pose
#: left on them (or another action's) does not distort the retarget.
REST_CONTROLS = ("hips", "chest", "spine_fk", "spine_fk.001")
_PROBE_TOL = 1e-3  # metres / matrix units: a rigid follower agrees to ~1e-6


def is_rigify(arm_obj) -> bool:
    """A generated Rigify rig: ``rig_id`` on the armature data and the
    torso/FK limb controls."""
    if arm_obj is None or arm_obj.type != "ARMATURE" or "rig_id" not in arm_obj.data:
        return False
    return all(n in arm_obj.data.bones for n in SIGNATURE)


def _deform_like(name: str) -> bool:
    return name.startswith(("DEF-", "ORG-", "MCH-"))


def control_mapping(arm_obj, skel: Skeleton, tgt_map=None) -> BoneMapping:
    """The mapping keys are written on: ``tgt_map`` itself when it already
    names controls (a user's own control mapping), else the rigify_fk preset."""
    bones = dict(getattr(tgt_map, "bones", tgt_map) or {})
    if bones and not any(_deform_like(b) for b in bones.values()):
        return tgt_map if isinstance(tgt_map, BoneMapping) else BoneMapping(bones=bones, preset="user")
    try:
        return match_preset(skel, "rigify_fk")
    except NotHumanoidError as e:
        raise scene_io.SceneError(
            f"'{arm_obj.name}' looks like a generated Rigify rig but its FK controls do not match "
            f"RigMind's rigify_fk preset ({e}): map the controls by hand"
        ) from None


def measure_hips_bone(skel: Skeleton, tgt_map=None):
    """The bone whose head is the pelvis: the DEF- hips of the measurement
    mapping (``tgt_map`` when it names deform bones, else rigify_def)."""
    bones = dict(getattr(tgt_map, "bones", tgt_map) or {})
    if bones.get("hips", "").startswith("DEF-"):
        return bones["hips"]
    try:
        return match_preset(skel, "rigify_def").bones["hips"]
    except (NotHumanoidError, KeyError):
        return None


# --- switches ---------------------------------------------------------------------


def set_switches(arm_obj) -> list:
    """Set :data:`SWITCHES` on the pose bones that have them; returns
    ``[(bone, property, value)]`` for keying."""
    out = []
    for pb in arm_obj.pose.bones:
        for prop, value in SWITCHES.items():
            if prop in pb.keys():
                pb[prop] = type(pb[prop])(value) if isinstance(pb[prop], (int, float)) else value
                out.append((pb.name, prop, float(value)))
    return out


def key_switches(arm_obj, action, switches: list, frame: float) -> None:
    """One CONSTANT key per switch in ``action`` (the retarget's new action),
    so the FK setting travels with the motion and other actions keep theirs."""
    import bpy

    if not switches:
        return
    slot = arm_obj.animation_data.action_slot
    cb = action.layers[0].strips[0].channelbag(slot, ensure=True)
    specs = [
        (f'pose.bones["{bpy.utils.escape_identifier(b)}"]["{p}"]', 0, b, np.array([v]))
        for b, p, v in switches
    ]
    scene_io.write_curves(cb, specs, np.array([float(frame)]), "CONSTANT")


# --- probing the evaluated rig ------------------------------------------------------


class _Pose:
    """Save/restore the basis transforms of some pose bones, and evaluate the
    rig with the active action and NLA switched off (they would override the
    probe poses)."""

    _CH = ("location", "rotation_quaternion", "rotation_euler", "rotation_axis_angle", "scale")

    def __init__(self, arm_obj, names):
        self.obj, self.names = arm_obj, list(names)

    def __enter__(self):
        self.saved = {n: [tuple(getattr(self.obj.pose.bones[n], c)) for c in self._CH] for n in self.names}
        ad = self.obj.animation_data
        self.anim = None
        if ad is not None:
            self.anim = (ad.action, ad.action_slot if ad.action is not None else None, ad.use_nla)
            ad.action = None
            ad.use_nla = False
        return self

    def __exit__(self, *exc):
        for n, vals in self.saved.items():
            pb = self.obj.pose.bones[n]
            for c, v in zip(self._CH, vals):
                setattr(pb, c, v)
        if self.anim is not None:
            ad = self.obj.animation_data
            action, slot, use_nla = self.anim
            ad.action = action
            if slot is not None:
                ad.action_slot = slot
            ad.use_nla = use_nla
        self.evaluate()
        return False

    def set(self, basis: dict):
        """``basis``: bone -> 4x4 (identity for missing bones of ``names``)."""
        from mathutils import Matrix

        for n in self.names:
            m = basis.get(n)
            self.obj.pose.bones[n].matrix_basis = Matrix(np.eye(4) if m is None else m)

    def evaluate(self) -> np.ndarray:
        """Armature-space 4x4 pose matrices of all pose bones (pose.bones order)."""
        import bpy

        bpy.context.view_layer.update()
        buf = np.empty(len(self.obj.pose.bones) * 16)
        self.obj.pose.bones.foreach_get("matrix", buf)
        return buf.reshape(-1, 4, 4).transpose(0, 2, 1)


def _random_basis(rng, names, translated=()):
    """Random rotations (0.3-0.8 rad) for ``names``; random offsets (5 cm)
    only for ``translated``: the retarget moves only the root controls, and
    moving a limb control would stretch Rigify's chains, which no key does."""
    out = {}
    for n in names:
        axis = rng.normal(size=3)
        m = np.eye(4)
        m[:3, :3] = rotations.to_matrix(rotations.from_axis_angle(axis / np.linalg.norm(axis) * rng.uniform(0.3, 0.8)))
        if n in translated:
            m[:3, 3] = rng.uniform(-0.05, 0.05, 3)
        out[n] = m
    return out


# --- the plan ---------------------------------------------------------------------


class RigifyPlan:
    """What :func:`prepare` found: ``skeleton`` (the control skeleton in
    armature space, rest = the evaluated zero pose), ``mapping`` (canonical
    -> control), ``switches`` (set, to key), ``warnings`` (controls that
    follow no single control rigidly)."""

    def __init__(self, skeleton, mapping, switches, actual_parent, parent_rel, pivot_offset, warnings):
        self.skeleton = skeleton
        self.mapping = mapping
        self.switches = switches
        self._actual_parent = actual_parent  # [J] followed joint; -1 the armature (constant), -2 no parent bone
        self._parent_rel = parent_rel  # [J, 4, 4] effective parent frame -> real parent bone
        self._pivot = pivot_offset  # (joint, [3]) bone head in the joint's frame, for the hips
        self.warnings = warnings

    def to_bone_locals(self, motion: Motion) -> Motion:
        """Motion on the control skeleton (armature space) -> the same
        controls with local transforms relative to their REAL parent bones
        (incl. rest, as ``scene_io.write_motion`` expects), assuming each
        real parent sits where the probe found it relative to the control it
        follows."""
        W, P = motion.world()
        j, d = self._pivot
        if j is not None:
            P = P.copy()
            P[:, j] = P[:, j] + rotations.rotate(W[:, j], d)  # joint (pelvis) -> the control's own head
        F, J = W.shape[:2]
        rot = np.empty_like(W)
        trans = np.empty_like(P)
        for c in range(J):
            e = self._actual_parent[c]
            if e == -2:  # no parent bone: armature space
                rot[:, c], trans[:, c] = W[:, c], P[:, c]
                continue
            K = self._parent_rel[c]
            if e == -1:
                pr = np.broadcast_to(rotations.from_matrix(K[:3, :3]), (F, 4))
                pp = np.broadcast_to(K[:3, 3], (F, 3))
            else:
                pr = rotations.mul(W[:, e], rotations.from_matrix(K[:3, :3]))
                pp = P[:, e] + rotations.rotate(W[:, e], K[:3, 3])
            inv = rotations.inv(pr)
            rot[:, c] = rotations.mul(inv, W[:, c])
            trans[:, c] = rotations.rotate(inv, P[:, c] - pp)
        sk = self.skeleton
        return Motion(sk, rotations.make_continuous(rotations.normalize(rot)), trans[:, 0].copy(), motion.fps, trans,
                      list(motion.shape_names), motion.shape_weights, motion.name)


def prepare(arm_obj, tgt_map=None, root_bone=None) -> RigifyPlan:
    """Set the FK switches and build the control skeleton (see the module doc)."""
    full = scene_io.read_skeleton(arm_obj)
    cmap = control_mapping(arm_obj, full, tgt_map)
    switches = set_switches(arm_obj)
    mapped = [b for b in cmap.bones.values() if b in arm_obj.pose.bones]
    extra = [b for b in REST_CONTROLS if b in arm_obj.pose.bones and b not in mapped]
    if root_bone and root_bone in arm_obj.pose.bones and root_bone not in mapped:
        extra.append(root_bone)
    controls = set(mapped) | set(extra)
    # The probe moves the mapped controls (and the root bone); the rest
    # controls stay at rest in every evaluation, as they will be keyed.
    moved = list(mapped) + ([root_bone] if root_bone in extra else [])
    pb_index = {pb.name: i for i, pb in enumerate(arm_obj.pose.bones)}
    rng = np.random.default_rng(0)
    with _Pose(arm_obj, sorted(controls)) as pose:
        pose.set({})
        zero = pose.evaluate()
        probes = []
        for _ in range(2):
            pose.set(_random_basis(rng, moved, {cmap.bones["hips"], root_bone}))
            probes.append(pose.evaluate())
    eff, warnings = _effective_parents(arm_obj, cmap, controls, root_bone, pb_index, zero, probes)
    # Start from the hips control so that its top ancestor (the torso or the
    # root bone) becomes joint 0, the root a Motion's root_positions are for.
    hips_ctrl = cmap.bones["hips"]
    order = _parents_first(eff, [hips_ctrl] + sorted(controls, key=lambda x: pb_index[x]))
    idx = {n: i for i, n in enumerate(order)}
    skel, pivot = _control_skeleton(arm_obj, full, tgt_map, hips_ctrl, order, eff, zero, pb_index)

    # Real parent frame relative to the effective parent's frame, from the
    # zero pose (-2: the control has no parent bone at all).
    actual, rel = np.full(len(order), -2), np.tile(np.eye(4), (len(order), 1, 1))
    for i, n in enumerate(order):
        e, k = eff[n]
        if k is None:
            continue
        # relative to the effective parent's BONE frame (to_bone_locals moves
        # the hips joint back from the pelvis to its bone head first)
        actual[i] = idx[e] if e is not None else -1
        rel[i] = k
    return RigifyPlan(skel, {c: b for c, b in cmap.bones.items() if b in idx}, switches, actual, rel, pivot, warnings)


def _follow_candidates(arm_obj, cmap, controls, root_bone, name) -> list:
    """Controls that ``name`` may follow, nearest first: its bone ancestors
    that are controls, then its humanoid ancestors' controls, the root bone,
    and None (the armature)."""
    hum_parents = load_humanoid()["parents"]
    canon_of = {b: c for c, b in cmap.bones.items()}
    out = []
    b = arm_obj.data.bones[name].parent
    while b is not None:
        if b.name in controls:
            out.append(b.name)
        b = b.parent
    c = hum_parents.get(canon_of.get(name))
    while c is not None:
        if c in cmap.bones and cmap.bones[c] in controls and cmap.bones[c] not in out:
            out.append(cmap.bones[c])
        c = hum_parents.get(c)
    if root_bone in controls and root_bone != name and root_bone not in out:
        out.append(root_bone)
    return out + [None]


def _effective_parents(arm_obj, cmap, controls, root_bone, pb_index, zero, probes) -> tuple:
    """For each control, the control it rigidly follows in the probe poses
    (its effective parent) and its parent bone's frame relative to it in the
    zero pose: ``{name: (parent or None, 4x4 or None)}``, plus warnings."""

    def mat(m, name):
        return np.eye(4) if name is None else m[pb_index[name]]

    eff, warnings = {}, []
    for name in controls:
        parent = arm_obj.data.bones[name].parent
        if parent is None:
            eff[name] = (None, None)
            continue
        best = None
        for e in _follow_candidates(arm_obj, cmap, controls, root_bone, name):
            if e == name:
                continue
            k0 = np.linalg.inv(mat(zero, e)) @ zero[pb_index[parent.name]]
            err = max(np.abs(np.linalg.inv(mat(m, e)) @ m[pb_index[parent.name]] - k0).max() for m in probes)
            if best is None or err < best[0] - 1e-9:
                best = (err, e, k0)
            if err < _PROBE_TOL:
                break
        if best[0] >= _PROBE_TOL:
            warnings.append(f"{name} follows no single control (closest {best[1] or 'armature'}, "
                            f"error {best[0]:.3g}); its keys may be off")
        eff[name] = (best[1], best[2])
    return eff, warnings


def _parents_first(eff, starts) -> list:
    """The controls ordered parents before children (depth first from
    ``starts``); a cycle would mean contradicting candidates."""
    order, state = [], {}

    def visit(n):
        if state.get(n) == 1:
            raise scene_io.SceneError(f"Rigify controls: cyclic follow relation at '{n}'")
        if state.get(n) == 2:
            return
        state[n] = 1
        if eff[n][0] is not None:
            visit(eff[n][0])
        state[n] = 2
        order.append(n)

    for n in starts:
        visit(n)
    return order


def _control_skeleton(arm_obj, full, tgt_map, hips_ctrl, order, eff, zero, pb_index) -> tuple:
    """The control skeleton (joint frames = the evaluated zero pose; the hips
    joint sits on the pelvis) and the hips pivot ``(joint, offset)``."""
    idx = {n: i for i, n in enumerate(order)}
    M0 = np.stack([zero[pb_index[n]] for n in order])
    rot0 = rotations.from_matrix(M0[:, :3, :3])
    pos0 = M0[:, :3, 3].copy()
    pivot = (None, np.zeros(3))
    hb = measure_hips_bone(full, tgt_map)
    if hb is not None and hb in pb_index:
        j = idx[hips_ctrl]
        pelvis = zero[pb_index[hb]][:3, 3]
        pivot = (j, rotations.rotate(rotations.inv(rot0[j]), pos0[j] - pelvis))
        pos0[j] = pelvis
    parents = np.array([idx[eff[n][0]] if eff[n][0] is not None else -1 for n in order])
    offsets = np.empty((len(order), 3))
    rests = np.empty((len(order), 4))
    for i, p in enumerate(parents):
        if p < 0:
            offsets[i], rests[i] = pos0[i], rot0[i]
        else:
            inv = rotations.inv(rot0[p])
            offsets[i] = rotations.rotate(inv, pos0[i] - pos0[p])
            rests[i] = rotations.mul(inv, rot0[i])
    tails = np.zeros((len(order), 3))
    tails[:, 1] = [arm_obj.data.bones[n].length for n in order]
    skel = Skeleton(order, parents, offsets, rests, tails, dict(full.meta, name=f"{arm_obj.name} (Rigify controls)"))
    return skel, pivot
