"""Scene <-> backend arrays: read an armature's rest skeleton, write a Motion
as a NEW action (Blender 5.0 slotted actions), write shape-key curves.

Data flows one way: scene -> backend arrays -> model -> arrays -> scene.
Everything here is in *armature space* (the armature object's local frame:
metres, Z-up for a Blender-native rig). The object's own transform (e.g. the
90° X rotation and 0.01 scale of FBX/glTF imports) is left alone and recorded
in ``Skeleton.meta["object_matrix"]``.

Keys are written with ``keyframe_points.add`` + ``foreach_set`` (one call per
curve, never per key), the user's previous action is kept (fake user + a muted
NLA track), and every generation gets its own action named after what made it.
"""

from __future__ import annotations

import numpy as np

from ..backend import rotations
from ..backend.motion import Motion
from ..backend.skeleton import Skeleton
from ..backend.errors import UserError

# Blender's FCurve interpolation enum as foreach_set ints.
INTERPOLATION = {"CONSTANT": 0, "LINEAR": 1, "BEZIER": 2}


class SceneError(UserError):
    """A problem with the user's scene that they can fix; the message says how."""


def scene_fps(scene) -> float:
    """The scene's frame rate (frames per second, ``fps / fps_base``)."""
    return scene.render.fps / scene.render.fps_base


def _np_matrix(m) -> np.ndarray:
    return np.array([list(row) for row in m], dtype=np.float64)


# --- reading ----------------------------------------------------------------------


def bone_order(armature_data) -> list:
    """Bone names with every parent before its children (Blender keeps creation
    order, which need not be topological after edits)."""
    order, seen = [], set()

    def visit(b):
        if b.name in seen:
            return
        if b.parent is not None:
            visit(b.parent)
        seen.add(b.name)
        order.append(b.name)

    for b in armature_data.bones:
        visit(b)
    return order


def read_skeleton(arm_obj) -> Skeleton:
    """The rest skeleton of an armature object, in armature space.

    Joint = bone head; joint frame = the bone's rest matrix (``matrix_local``:
    Y along the bone, roll about it). ``offsets``/``rest_rotations`` are each
    bone's rest transform relative to its parent bone (so a pose bone's
    ``rotation_quaternion`` is ``inv(rest_rotations[j]) * local[j]``); roots
    are relative to the armature object. ``tails[j] = (0, length, 0)``.
    """
    if arm_obj is None or arm_obj.type != "ARMATURE":
        kind = "nothing" if arm_obj is None else f"a {arm_obj.type.lower()} ('{arm_obj.name}')"
        raise SceneError(f"RigMind needs an armature but got {kind}: select the character's armature (its skeleton)")
    data = arm_obj.data
    if len(data.bones) == 0:
        raise SceneError(f"armature '{arm_obj.name}' has no bones: add a skeleton or pick another armature")
    names = bone_order(data)
    index = {n: i for i, n in enumerate(names)}
    n = len(names)
    # One foreach_get per property (bone order = data.bones order, then
    # permuted to ``names``); foreach_get flattens each 4x4 column by column.
    order = np.array([data.bones.find(name) for name in names])
    buf = np.empty(n * 16, np.float32)
    data.bones.foreach_get("matrix_local", buf)
    mats = buf.reshape(n, 4, 4).transpose(0, 2, 1)[order].astype(np.float64)
    lens = np.empty(n, np.float32)
    data.bones.foreach_get("length", lens)
    lengths = lens[order].astype(np.float64)
    parents = np.array([index[data.bones[name].parent.name] if data.bones[name].parent is not None else -1
                        for name in names], dtype=np.int64)
    rel = mats.copy()
    has_parent = parents >= 0
    rel[has_parent] = np.linalg.inv(mats[parents[has_parent]]) @ mats[has_parent]
    offsets = rel[:, :3, 3]
    rest_rot = rotations.from_matrix(rel[:, :3, :3])
    tails = np.zeros((n, 3))
    tails[:, 1] = lengths
    meta = {
        "armature": arm_obj.name,
        "object_matrix": _np_matrix(arm_obj.matrix_world),
        "rotation_modes": {pb.name: pb.rotation_mode for pb in arm_obj.pose.bones},
    }
    return Skeleton(names, parents, offsets, rest_rot, tails, meta)


# --- building ---------------------------------------------------------------------


def build_armature(skeleton: Skeleton, name: str = "Armature", collection=None):
    """A new armature object whose bone heads sit at the skeleton's rest joint
    positions (armature space = world at creation). Bones point at their child
    (or along the end site / parent direction for leaves), so the armature
    looks like the character; its rest *orientations* differ from the
    skeleton's, so put motion on it with ``motion.with_rest(read_skeleton(obj))``.
    Bones are created in skeleton order, so that order reads back unchanged.
    """
    import bpy

    rot_w, pos_w = skeleton.rest_world()
    dirs = np.zeros((len(skeleton), 3))
    lengths = np.zeros(len(skeleton))
    for j in range(len(skeleton)):
        kids = skeleton.children(j)
        far = [pos_w[c] - pos_w[j] for c in kids if np.linalg.norm(pos_w[c] - pos_w[j]) > 1e-3]
        if len(kids) == 1 and far:
            d = far[0]
        elif far:
            # Several children (hips, chest): point at the one most in line
            # with the incoming bone, e.g. the spine rather than a leg.
            incoming = pos_w[j] - pos_w[skeleton.parents[j]] if skeleton.parents[j] >= 0 else np.array([0.0, 0.0, 1.0])
            scores = [np.dot(f / np.linalg.norm(f), incoming / max(np.linalg.norm(incoming), 1e-9)) for f in far]
            d = far[int(np.argmax(scores))]
        elif np.linalg.norm(skeleton.tails[j]) > 1e-3:
            d = rotations.rotate(rot_w[j], skeleton.tails[j])
        elif skeleton.parents[j] >= 0 and np.linalg.norm(pos_w[j] - pos_w[skeleton.parents[j]]) > 1e-3:
            d = (pos_w[j] - pos_w[skeleton.parents[j]]) * 0.35
        else:
            d = np.array([0.0, 0.0, 0.1])
        lengths[j] = max(np.linalg.norm(d), 0.01)
        dirs[j] = d / np.linalg.norm(d)

    arm_data = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, arm_data)
    (collection or bpy.context.scene.collection).objects.link(obj)
    view_layer = bpy.context.view_layer
    prev_active = view_layer.objects.active
    view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    try:
        ebones = []
        for j, jname in enumerate(skeleton.names):
            eb = arm_data.edit_bones.new(jname)
            eb.head = pos_w[j].tolist()
            eb.tail = (pos_w[j] + dirs[j] * lengths[j]).tolist()
            eb.use_connect = False
            if skeleton.parents[j] >= 0:
                eb.parent = ebones[skeleton.parents[j]]
            ebones.append(eb)
    finally:
        bpy.ops.object.mode_set(mode="OBJECT")
        if prev_active is not None:
            view_layer.objects.active = prev_active
    for pb in obj.pose.bones:
        pb.rotation_mode = "QUATERNION"
    return obj


# --- writing ----------------------------------------------------------------------


#: The one NLA track per animated datablock where RigMind parks the actions it replaced.
HISTORY_TRACK = "RigMind history"


def unique_name(base: str, taken) -> str:
    """``base``, or ``base #2``, ``base #3`` … whichever is not in ``taken``:
    names made unique before Blender would, whose ``.001`` suffix eats a
    trailing number ("amount 0.70" would become "amount 0.001")."""
    taken = set(taken)
    if base not in taken:
        return base
    k = 2
    while f"{base} #{k}" in taken:
        k += 1
    return f"{base} #{k}"


def cover_frames(scene, first: float, last: float, *, grow: bool = True) -> None:
    """``grow`` (a user's scene): grow the scene's frame range to cover
    frames ``first..last``, never shrink it. Else (a scene made for the
    take: scripts, the CLI) the range becomes exactly the take's."""
    first, last = int(np.floor(first + 1e-6)), int(np.ceil(last - 1e-6))
    if grow:
        first, last = min(int(scene.frame_start), first), max(int(scene.frame_end), last)
    scene.frame_start, scene.frame_end = first, last


def _history_track(ad):
    for track in ad.nla_tracks:
        if track.name == HISTORY_TRACK:
            return track
    track = ad.nla_tracks.new()
    track.name = HISTORY_TRACK
    track.mute = True
    return track


def _keep_previous_action(id_data, label: str = "") -> None:
    """Never lose the user's animation: give the current action a fake user and
    park it as a strip on the muted "RigMind history" NLA track (one track per
    datablock, one strip per replaced action; unmute or copy a strip to layer
    it back). A strip goes at its action's own frames, or after the last strip
    when that place is taken (strips on one track cannot overlap)."""
    ad = id_data.animation_data
    if ad is None or ad.action is None:
        return
    old = ad.action
    old.use_fake_user = True
    track = _history_track(ad)
    if any(st.action == old for st in track.strips):
        return
    start = int(np.floor(old.frame_range[0]))
    length = max(float(old.frame_range[1] - old.frame_range[0]), 1.0)
    ends = [st.frame_end for st in track.strips]
    if any(st.frame_start <= start + length and st.frame_end >= start for st in track.strips):
        start = int(np.ceil(max(ends))) + 10
    names = [st.name for t in ad.nla_tracks for st in t.strips]
    try:
        strip = track.strips.new(unique_name(old.name, names), start, old)
        if ad.action_slot is not None and hasattr(strip, "action_slot"):
            strip.action_slot = ad.action_slot
    except RuntimeError:
        pass  # the fake user alone keeps it
    track.mute = True


def new_action(id_data, action_name: str, id_type: str, keep_previous: bool):
    import bpy

    if keep_previous:
        _keep_previous_action(id_data)
    action = bpy.data.actions.new(unique_name(action_name, bpy.data.actions.keys()))
    slot = action.slots.new(id_type=id_type, name=id_data.name)
    layer = action.layers.new("RigMind")
    strip = layer.strips.new(type="KEYFRAME")
    channelbag = strip.channelbag(slot, ensure=True)
    ad = id_data.animation_data or id_data.animation_data_create()
    ad.action = action
    ad.action_slot = slot
    return action, channelbag


def write_curves(channelbag, specs, frames: np.ndarray, interpolation: str) -> None:
    """``specs``: list of (data_path, index, group, values[F])."""
    n = len(frames)
    co = np.empty(2 * n, dtype=np.float32)
    co[0::2] = frames
    interp = np.full(n, INTERPOLATION[interpolation], dtype=np.int8)
    for data_path, index, group, values in specs:
        fc = channelbag.fcurves.new(data_path, index=index, group_name=group)
        co[1::2] = values
        kps = fc.keyframe_points
        kps.add(n)
        kps.foreach_set("co", co)
        kps.foreach_set("interpolation", interp)
        if interpolation == "BEZIER":
            kps.foreach_set("handle_left", co)
            kps.foreach_set("handle_right", co)
        fc.update()


def _euler_unwrap(e: np.ndarray) -> np.ndarray:
    return np.unwrap(e, axis=0)


def _checked_rig(arm_obj, motion: Motion) -> Skeleton:
    """The armature's skeleton; SceneError if the motion has no frames or
    animates bones the armature lacks."""
    if motion.num_frames == 0:
        raise SceneError(f"the motion '{motion.name}' has no frames (Frames: 0): nothing to put on '{arm_obj.name}'")
    rig = read_skeleton(arm_obj)
    missing = [n for n in motion.skeleton.names if n not in rig.names]
    if missing:
        raise SceneError(
            f"armature '{arm_obj.name}' lacks bones {missing[:6]}{'…' if len(missing) > 6 else ''} "
            "that the motion animates: retarget the motion onto this rig first"
        )
    return rig


def _pose_basis(motion: Motion, rig: Skeleton):
    """Pose-bone basis of each motion joint in turn: yields ``(j, rotation
    [F, 4] continuous quaternions, location [F, 3] metres in the bone's rest
    frame, moving: a root, or a joint whose location leaves rest by more than
    1e-6 m)``. One joint at a time: the whole clip's ``[F, J, ...]``
    temporaries were several times the take (0.5 GB at 100 000 frames);
    the products are elementwise, so each joint's numbers are the same."""
    sk = motion.skeleton
    rig_idx = np.array([rig.index(n) for n in sk.names])
    rest_rot = rig.rest_rotations[rig_idx]  # [J, 4]
    rest_off = rig.offsets[rig_idx]  # [J, 3]
    for j, p in enumerate(sk.parents):
        # Motion.local_translations' column j, without the [F, J, 3] copy.
        if j == 0:
            local_t = motion.root_positions
        elif motion.translations is not None:
            local_t = motion.translations[:, j]
        else:
            local_t = np.broadcast_to(sk.offsets[j], (motion.num_frames, 3))
        # Pose-bone basis = rest^-1 * local (rotation); location in the bone's rest frame.
        inv_rest = rotations.inv(rest_rot[j])
        basis_rot = rotations.make_continuous(rotations.mul(inv_rest, motion.rotations[:, j]))
        basis_loc = rotations.rotate(inv_rest, local_t - rest_off[j])
        moving = p < 0 or bool(np.max(np.abs(basis_loc)) > 1e-6)
        yield j, basis_rot, basis_loc, moving


def _rotation_specs(base: str, bone: str, mode: str, rot: np.ndarray) -> list:
    """Curve specs ``(data_path, index, group, values [F])`` of one pose
    bone's rotation ``rot [F, 4]`` in its ``rotation_mode``."""
    if mode == "QUATERNION":
        return [(base + ".rotation_quaternion", i, bone, rot[:, i]) for i in range(4)]
    if mode == "AXIS_ANGLE":
        aa = rotations.to_axis_angle(rot)
        ang = np.linalg.norm(aa, axis=-1)
        axis = np.where(ang[:, None] > 1e-9, aa / np.maximum(ang, 1e-12)[:, None], [0.0, 1.0, 0.0])
        vals = np.concatenate([ang[:, None], axis], axis=-1)
        return [(base + ".rotation_axis_angle", i, bone, vals[:, i]) for i in range(4)]
    # Blender's Euler mode "ZXY" applies Z first (extrinsic ZXY) and
    # stores the angles as (x, y, z) whatever the order.
    e = rotations.to_euler(rot, mode, intrinsic=False)
    xyz = np.empty_like(e)
    xyz[:, ["XYZ".index(a) for a in mode]] = e
    xyz = _euler_unwrap(xyz)
    return [(base + ".rotation_euler", i, bone, xyz[:, i]) for i in range(3)]


class ArrayTake:
    """A take kept as the values its keys would hold, not as keys: for an
    output made from those values alone (a BVH:
    ``export.write_array_take_bvh``), where Blender's ~72 bytes a key would
    be most of the memory (1.6 GB for 100 000 frames on a 55-bone rig, and
    reading them back for the file copies them again).

    ``name``: the action it stands for, named as :func:`new_action` would
    name it; ``frames [F]``: its scene frames, consecutive whole frames
    (:func:`array_take_blocker`); ``curves``: ``{(data_path, index): values
    [F] float32}``, each value rounded as a key stores it (Blender keeps a
    key's frame and value as 32-bit floats), so what is sampled from it is
    what sampling the keys gives. Duck-types the ``name`` and
    ``frame_range`` of an ``Action``."""

    def __init__(self, name: str, frames: np.ndarray):
        self.name = name
        self.frames = np.asarray(frames, dtype=np.float32)
        self.curves = {}

    @property
    def frame_range(self) -> tuple:
        return float(self.frames[0]), float(self.frames[-1])

    def add(self, specs, frames: np.ndarray) -> None:
        """:func:`write_curves`' ``specs`` at ``frames``, which must be the take's."""
        if not np.array_equal(np.asarray(frames, dtype=np.float32), self.frames):
            raise ValueError(f"curves for frames {frames[0]}..{frames[-1]} added to the take of "
                             f"{self.frame_range[0]:g}..{self.frame_range[1]:g}")
        for data_path, index, _group, values in specs:
            self.curves[(data_path, index)] = np.asarray(values, dtype=np.float32)

    def remove(self, data_path_prefix: str) -> None:
        """Drop the curves whose data path starts with ``data_path_prefix``."""
        for key in [k for k in self.curves if k[0].startswith(data_path_prefix)]:
            del self.curves[key]


def pose_blocker(arm_obj, data_paths) -> str | None:
    """Why the armature's evaluated pose would not be exactly the product of
    its rest pose and the curves on ``data_paths`` (the action's, or a take's
    not yet keyed; None: there are none), None when it would. Constraints,
    drivers, NLA layers, object animation, a parent object or bone scale
    each move the bones beyond their curves."""
    ad = arm_obj.animation_data
    if ad is not None and ad.action_influence != 1.0:
        return "action influence below 1"
    if ad is not None and any(not t.mute and len(t.strips) for t in ad.nla_tracks):
        return "NLA tracks play under the action"
    if (ad is not None and len(ad.drivers)) or (arm_obj.data.animation_data is not None
                                                and len(arm_obj.data.animation_data.drivers)):
        return "drivers"
    if arm_obj.parent is not None:
        return "parented armature"
    if any(len(pb.constraints) for pb in arm_obj.pose.bones) or len(arm_obj.constraints):
        return "constraints"
    if data_paths is None:
        return "no curves for the armature's slot"
    for data_path in data_paths:
        if not data_path.startswith("pose.bones["):
            return f"object curve {data_path}"
        if data_path.endswith(".scale"):
            return "animated bone scale"
    if any(abs(s - 1.0) > 1e-9 for pb in arm_obj.pose.bones for s in pb.scale):
        return "bone scale"
    for b in arm_obj.data.bones:
        if not b.use_inherit_rotation or b.inherit_scale != "FULL" or not b.use_local_location:
            return f"bone '{b.name}' does not inherit its parent fully"
    return None


def array_take_blocker(arm_obj, frames: np.ndarray, object_curves: bool) -> str | None:
    """Why a take on ``frames`` cannot be an :class:`ArrayTake` (None when it
    can): only where sampling its keys would read them straight back
    (``take_sampling``'s fast path): one key on every whole scene frame of
    its range, at least two frames (a one-frame action's range is two
    frames long), and nothing but the pose bones' curves moving the bones."""
    f32 = np.asarray(frames, dtype=np.float32)
    if len(f32) < 2:
        return "one frame"
    if not np.array_equal(f32, f32[0] + np.arange(len(f32), dtype=np.float32)) or f32[0] != np.round(f32[0]):
        return "keys between scene frames"
    return pose_blocker(arm_obj, ["location"] if object_curves else [])


def _scene_frames(arm_obj, motion: Motion, frame_start: int, set_scene_fps: bool) -> tuple:
    """The armature's skeleton (checked against the motion) and the scene
    frames ``[F]`` the motion's frames land on (the scene switched to the
    motion's rate first with ``set_scene_fps``)."""
    import bpy

    rig = _checked_rig(arm_obj, motion)
    scene = bpy.context.scene
    if set_scene_fps:
        fps = float(motion.fps)
        scene.render.fps = int(round(fps))
        scene.render.fps_base = scene.render.fps / fps
    return rig, frame_start + np.arange(motion.num_frames) * (scene_fps(scene) / motion.fps)


def _put_motion(arm_obj, motion: Motion, rig: Skeleton, frames, put, object_locations) -> None:
    """The take's curves handed to ``put(specs, frames)`` one bone at a time
    (the same curves in the same order as one call for all): the take is
    then never held twice, nor the whole clip's basis temporaries."""
    import bpy

    sk = motion.skeleton
    for j, basis_rot, basis_loc, moving in _pose_basis(motion, rig):
        bone = sk.names[j]
        base = f'pose.bones["{bpy.utils.escape_identifier(bone)}"]'
        specs = _rotation_specs(base, bone, arm_obj.pose.bones[bone].rotation_mode, basis_rot)
        if moving:
            specs += [(base + ".location", i, bone, basis_loc[:, i]) for i in range(3)]
        put(specs, frames)
    if object_locations is not None:
        locs = np.asarray(object_locations, dtype=np.float64).reshape(motion.num_frames, 3)
        put([("location", i, "Object Transforms", locs[:, i]) for i in range(3)], frames)


def write_motion(
    arm_obj,
    motion: Motion,
    action_name: str | None = None,
    *,
    frame_start: int = 1,
    keep_previous: bool = True,
    set_scene_range=True,
    set_scene_fps: bool = False,
    interpolation: str = "LINEAR",
    object_locations=None,
):
    """Write ``motion`` onto ``arm_obj`` as a new action and assign it.

    ``motion.skeleton`` must share bone names with the armature and have the
    armature's rest orientations (``motion.with_rest(read_skeleton(arm_obj))``);
    joints the armature lacks are an error, bones the motion lacks are left
    unkeyed. Frame ``f`` of the motion lands at scene frame
    ``frame_start + f * scene_fps / motion.fps`` (so timing is right at any
    scene fps); ``set_scene_fps`` switches the scene to the motion's rate
    instead. ``set_scene_range``: True sets the scene's frame range to the
    take's, "grow" only grows it to cover the take (a user's scene), False
    leaves it. Pose bones keep their rotation mode (quaternion, any Euler order,
    axis-angle). ``object_locations [F, 3]`` (world metres) keys the armature
    object's own location in the same action (root motion on the object).
    Returns the new ``bpy.types.Action``.
    """
    import bpy

    rig, frames = _scene_frames(arm_obj, motion, frame_start, set_scene_fps)
    action, cb = new_action(arm_obj, action_name or motion.name or "RigMind Motion", "OBJECT", keep_previous)
    _put_motion(arm_obj, motion, rig, frames, lambda specs, f: write_curves(cb, specs, f, interpolation),
                object_locations)
    if set_scene_range:
        cover_frames(bpy.context.scene, frames[0], frames[-1], grow=set_scene_range == "grow")
    if motion.shape_weights is not None and motion.shape_names:
        action["rigmind_shape_names"] = list(motion.shape_names)
    return action


def motion_array_take(arm_obj, motion: Motion, action_name: str | None = None, *, frame_start: int = 1,
                      set_scene_range=True, set_scene_fps: bool = False, object_locations=None):
    """What :func:`write_motion` would key, as an :class:`ArrayTake` named as
    its action would be, where :func:`array_take_blocker` allows it; else
    None (key it with :func:`write_motion`). The scene's rate and range
    change as they would; no action is made, the armature keeps its own."""
    import bpy

    rig, frames = _scene_frames(arm_obj, motion, frame_start, set_scene_fps)
    if array_take_blocker(arm_obj, frames, object_locations is not None) is not None:
        return None
    name = action_name or motion.name or "RigMind Motion"
    take = ArrayTake(unique_name(name, bpy.data.actions.keys()), frames)
    _put_motion(arm_obj, motion, rig, frames, take.add, object_locations)
    if set_scene_range:
        cover_frames(bpy.context.scene, frames[0], frames[-1], grow=set_scene_range == "grow")
    return take


def share_action(id_data, action, *, keep_previous: bool = True):
    """Animate ``id_data`` with ``action``'s first slot, the one its other
    users play (Blender 5.0 and 5.2 let datablocks of one type share a
    slot): the same curves evaluated the same, without a copy of every key.
    For datablocks whose animated properties are named alike (shape-key
    sets of the same names). The previous action is kept as by
    :func:`new_action`. Returns ``action``."""
    if keep_previous:
        _keep_previous_action(id_data)
    ad = id_data.animation_data or id_data.animation_data_create()
    ad.action = action
    ad.action_slot = action.slots[0]
    return action


def write_shape_keys(
    mesh_obj,
    names: list,
    weights: np.ndarray,
    fps: float,
    action_name: str,
    *,
    frame_start: int = 1,
    keep_previous: bool = True,
    interpolation: str = "LINEAR",
):
    """Shape-key curves ``weights [F, K]`` (0..1) for ``names`` onto the mesh's
    Key datablock (shape-key animation belongs to the Key, id type KEY).
    Names the mesh lacks are skipped; returns ``(action, written, skipped)``."""
    import bpy

    key = mesh_obj.data.shape_keys if mesh_obj.type == "MESH" else None
    if key is None:
        raise SceneError(f"object '{mesh_obj.name}' has no shape keys: pick a face mesh with shape keys")
    weights = np.asarray(weights, dtype=np.float64).reshape(-1, len(names))
    scene = bpy.context.scene
    frames = frame_start + np.arange(len(weights)) * (scene_fps(scene) / fps)
    action, cb = new_action(key, action_name, "KEY", keep_previous)
    specs, written, skipped = [], [], []
    for k, name in enumerate(names):
        if name not in key.key_blocks:
            skipped.append(name)
            continue
        path = f'key_blocks["{bpy.utils.escape_identifier(name)}"].value'
        specs.append((path, 0, "Shape Keys", weights[:, k]))
        written.append(name)
    write_curves(cb, specs, frames, interpolation)
    return action, written, skipped
