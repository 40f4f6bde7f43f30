"""Export an animated character: BVH from arrays with RigMind's own writer,
FBX and glTF with Blender's exporters set to write one take, or a .blend.

The take is one action: the armature's active action, or the one named by
``take``. BVH is written from the armature's *evaluated* pose (what Blender
shows: action, constraints, drivers), sampled once per scene frame over the
take's keyed range, and converted to text in a few NumPy calls
(:func:`~..backend.bvh.write_bvh`), not one Python frame at a time. FBX and
glTF bake the same range from the active action only (no NLA strips, no other
actions, only the character's own objects), shape-key animation included.

Engine presets (``generic``, ``unreal``, ``unity``) pick the scale, axes,
leaf-bone, bake and root-motion settings each engine expects; see
:data:`PRESETS` and docs/export_render.md ("Presets") for the source of each.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from ..backend.errors import UserError

EXPORT_SUFFIXES = (".blend", ".bvh", ".fbx", ".glb", ".gltf")


class ExportError(UserError):
    pass


@dataclass(frozen=True)
class ExportPreset:
    """Settings for one target application.

    ``bvh_up``/``bvh_units``: the BVH file's up axis ("Y"/"Z") and length unit
    (a name in ``backend.bvh.UNITS``). ``fbx``: keyword arguments for
    ``bpy.ops.export_scene.fbx`` on top of the take-only settings.
    ``armature_name``: the name the armature object gets inside the file
    (None keeps the scene's name)."""

    name: str
    summary: str
    bvh_up: str = "Y"
    bvh_units: str = "cm"
    fbx: dict = field(default_factory=dict)
    armature_name: str | None = None


# The settings every FBX take shares: one baked take of the active action,
# a key on every frame (simplify 0: exact, no curve fitting), first and last
# frame keyed, no leaf bones (engines size bones from their children and an
# extra "_end" bone per chain would join the engine skeleton).
_FBX_TAKE = dict(
    use_selection=True,
    add_leaf_bones=False,
    primary_bone_axis="Y",
    secondary_bone_axis="X",
    armature_nodetype="NULL",
    bake_anim=True,
    bake_anim_use_all_bones=True,
    bake_anim_use_all_actions=False,
    bake_anim_use_nla_strips=False,
    bake_anim_force_startend_keying=True,
    bake_anim_step=1.0,
    bake_anim_simplify_factor=0.0,
    use_armature_deform_only=False,
    mesh_smooth_type="FACE",
)

def _fbx_axes(forward: str, up: str, scale_options: str) -> dict:
    """The per-preset FBX keywords: axes, and how scale goes into the file
    (always at unit scale: metres in the file's units)."""
    return dict(axis_forward=forward, axis_up=up, global_scale=1.0, apply_unit_scale=True,
                apply_scale_options=scale_options)


PRESETS = {p.name: p for p in (
    ExportPreset(
        "generic",
        "FBX with Blender's default axes (-Z forward, Y up) and unit scale (metres in the file's units); "
        "BVH Y-up in centimetres",
        fbx=_fbx_axes("-Z", "Y", "FBX_SCALE_NONE"),
    ),
    ExportPreset(
        "unreal",
        "Unreal Engine: centimetres and Z up (1 uu = 1 cm), the armature object written as 'Armature' so the "
        "importer does not add it as an extra root bone; root motion stays on the hips' track",
        fbx=_fbx_axes("-Y", "Z", "FBX_SCALE_UNITS"),
        armature_name="Armature",
    ),
    ExportPreset(
        "unity",
        "Unity: metres and Y up, every scale applied into the file (FBX_SCALE_ALL) so the imported root has "
        "scale 1; root motion stays on the hips' track (Humanoid 'Root Transform' is derived from it)",
        fbx=_fbx_axes("-Z", "Y", "FBX_SCALE_ALL"),
    ),
)}


def _select_only(objects) -> None:
    import bpy

    for ob in bpy.context.view_layer.objects:
        ob.select_set(False)
    for ob in objects:
        ob.select_set(True)
    if objects:
        bpy.context.view_layer.objects.active = objects[0]


def character_objects(armature) -> list:
    """The armature and the meshes it deforms or carries (body, head)."""
    import bpy

    out = [armature]
    for ob in bpy.data.objects:
        if ob.type != "MESH":
            continue
        if ob.parent == armature or any(
            m.type == "ARMATURE" and m.object == armature for m in ob.modifiers
        ):
            out.append(ob)
    return out


def action_frame_range(armature) -> tuple:
    ad = armature.animation_data
    if ad and ad.action:
        a, b = ad.action.frame_range
        return int(round(a)), int(round(b))
    import bpy

    return bpy.context.scene.frame_start, bpy.context.scene.frame_end


def choose_take(armature, take: str | None):
    """Make ``take`` (an action name) the armature's active action and return
    it; None keeps the active action. A name that is not an action of this
    rig's bones raises ExportError listing the ones that are."""
    import bpy

    if take is None:
        ad = armature.animation_data
        return ad.action if ad is not None else None
    action = bpy.data.actions.get(take)
    bone_names = {b.name for b in armature.data.bones}

    def fits(a):
        for layer in a.layers:
            for strip in layer.strips:
                for bag in strip.channelbags:
                    for fc in bag.fcurves:
                        if fc.data_path.startswith("pose.bones[") and fc.data_path.split('"')[1] in bone_names:
                            return True
        return False

    if action is None or not fits(action):
        names = [a.name for a in bpy.data.actions if fits(a)]
        what = "no action" if action is None else "an action that animates none of its bones"
        raise ExportError(f"--take {take!r} is {what} of '{armature.name}'; takes here: "
                          f"{', '.join(repr(n) for n in names) or 'none'}")
    ad = armature.animation_data or armature.animation_data_create()
    ad.action = action
    if action.slots and ad.action_slot is None:
        ad.action_slot = action.slots[0]
    return action


def bvh_safe_names(names) -> list:
    """Joint names a BVH reader tokenising on white space reads back whole:
    runs of white space and braces become ``_`` (``"Left Arm"`` →
    ``"Left_Arm"``), and a clash with another name gets ``_2``, ``_3``…
    Other characters (``mixamorig:Hips``) are kept as they are."""
    out, used = [], set()
    for n in names:
        safe = re.sub(r"[\s{}]+", "_", str(n)) or "_"
        base, k = safe, 2
        while safe in used:
            safe, k = f"{base}_{k}", k + 1
        used.add(safe)
        out.append(safe)
    return out


def evaluated_motion(armature, frame_range, *, allow_fast: bool = True):
    """The armature's evaluated pose over ``frame_range`` (inclusive scene
    frames) as a world-space Motion (metres, Blender Z-up) at the scene fps.

    When only the action moves the bones the pose is computed from its curves
    (:mod:`.take_sampling`, exact); otherwise the scene is stepped frame by
    frame, with meshes left out of the depsgraph while sampling: they cannot
    change the bones, and deforming them every frame costs ~20x the bones."""
    import bpy

    from . import scene_io, take_sampling
    from .retarget_scene import motion_from_action

    fps = scene_io.scene_fps(bpy.context.scene)
    if allow_fast and take_sampling.fast_path_blocker(armature) is None:
        return take_sampling.sample_take(armature, scene_io.read_skeleton(armature), frame_range, fps)

    hidden = [o for o in bpy.data.objects if o.type == "MESH" and not o.hide_viewport]
    for o in hidden:
        o.hide_viewport = True
    try:
        return motion_from_action(armature, frame_range, fps=fps)
    finally:
        for o in hidden:
            o.hide_viewport = False


def write_take_bvh(armature, path, frame_range, preset: ExportPreset) -> Path:
    return _write_motion_bvh(evaluated_motion(armature, frame_range), path, preset)


def write_array_take_bvh(armature, take, path, preset: str = "generic") -> Path:
    """The BVH that keying ``take`` (a ``scene_io.ArrayTake``) on
    ``armature`` and exporting it would write, byte for byte, made from its
    arrays: the take sampled as :func:`evaluated_motion` samples an action
    (``take_sampling.sample_take``, whose curve values are the keys' own
    32-bit floats either way), over the take's range at the scene's rate.
    The scene is not changed."""
    from . import scene_io, take_sampling

    if preset not in PRESETS:
        raise ExportError(f"unknown preset {preset!r}; use one of {', '.join(PRESETS)}")
    path = Path(path).resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    import bpy

    start, end = (int(round(f)) for f in take.frame_range)
    fps = scene_io.scene_fps(bpy.context.scene)
    m = take_sampling.sample_take(armature, scene_io.read_skeleton(armature), (start, end), fps, take=take)
    return _write_motion_bvh(m, path, PRESETS[preset])


def export_written(armature, take, path, *, frame_range=None) -> Path:
    """Export what a job wrote: ``take`` an ``Action`` (the armature's
    active one) through :func:`export_character`, or a
    ``scene_io.ArrayTake`` (a BVH asked for without keys) through
    :func:`write_array_take_bvh`."""
    from .scene_io import ArrayTake

    if isinstance(take, ArrayTake):
        if Path(path).suffix.lower() != ".bvh":
            raise ExportError(f"{path}: a take kept as arrays is written as .bvh only")
        return write_array_take_bvh(armature, take, path)
    return export_character(armature, path, frame_range=frame_range)


def _write_motion_bvh(m, path, preset: ExportPreset) -> Path:
    from ..backend.bvh import write_bvh
    from ..backend.motion import Motion

    sk = m.skeleton.copy()
    sk.names = bvh_safe_names(sk.names)
    m = Motion(sk, m.rotations, m.root_positions, m.fps, m.translations, name=m.name)
    # Bones that move (a hips under a ground-level root) keep their
    # translation as position channels; the others get rotations only.
    return write_bvh(path, m, up=preset.bvh_up, units=preset.bvh_units, position_channels="moving")


class _rest_meshes:
    """Spare Blender from deforming the meshes on every frame an exporter
    bakes: the meshes' Armature modifiers are off and each armature-only
    mesh shows only its basis shape (its shape-key values still animate and
    are what the exporters read). FBX and glTF export the mesh in its rest
    shape with its skin weights and shape keys from their own data either
    way; the bake steps the scene once per frame, and skinning and mixing 52
    shape keys on every step was most of its cost. (The shape-key pin is
    main's ``_deform_off`` from the batch work, commit 0219137.)"""

    def __init__(self, objects):
        self.mods = [m for o in objects if o.type == "MESH" for m in o.modifiers
                     if m.type == "ARMATURE" and m.show_viewport]
        self.pinned = [(o, o.show_only_shape_key, o.active_shape_key_index) for o in objects
                       if o.type == "MESH" and o.data.shape_keys is not None
                       and all(m.type == "ARMATURE" for m in o.modifiers)]

    def __enter__(self):
        for m in self.mods:
            m.show_viewport = False
        for o, _, _ in self.pinned:
            o.show_only_shape_key, o.active_shape_key_index = True, 0

    def __exit__(self, *exc):
        for m in self.mods:
            m.show_viewport = True
        for o, only, index in self.pinned:
            o.show_only_shape_key, o.active_shape_key_index = only, index


def export_character(armature, path, *, frame_range=None, take: str | None = None, preset: str = "generic",
                     with_mesh: bool = True) -> Path:
    """Write ``armature`` (and, ``with_mesh``, its meshes) to ``path``; the
    suffix picks the format. ``take``: the action to export (default the
    active one); ``frame_range``: inclusive scene frames (default the take's
    keyed range); ``preset``: a key of :data:`PRESETS`. BVH holds the
    skeleton and its evaluated motion; FBX and glTF carry meshes, shape keys
    and the animation. The scene's frame range, current frame, selection and
    active object are as before afterwards, also when the export fails
    (:mod:`.scene_keep`); ``take`` stays the active action. Returns the path
    written."""
    path = Path(path).resolve()
    suffix = path.suffix.lower()
    if suffix not in EXPORT_SUFFIXES:
        raise ExportError(f"{path}: unsupported export type {suffix or '(none)'}; use one of {' '.join(EXPORT_SUFFIXES)}")
    if preset not in PRESETS:
        raise ExportError(f"unknown preset {preset!r}; use one of {', '.join(PRESETS)}")
    pre = PRESETS[preset]
    path.parent.mkdir(parents=True, exist_ok=True)
    from .scene_keep import kept_frames_and_selection

    # The exporters read the scene range and the selection; the user's are put back after.
    with kept_frames_and_selection():
        return _export_take(armature, path, suffix, pre, frame_range, take, with_mesh)


def export_requested(armature, request, path=None) -> Path:
    """:func:`export_character` as an ``ExportRequest`` asks
    (``backend.requests.export``); ``path``: where to write instead of
    ``request.path`` (the front ends' temporary file, renamed when done)."""
    return export_character(armature, path if path is not None else request.path, frame_range=request.frame_range,
                            take=request.take, preset=request.preset, with_mesh=request.with_mesh)


def _export_take(armature, path, suffix, pre, frame_range, take, with_mesh) -> Path:
    import bpy

    choose_take(armature, take)
    scene = bpy.context.scene
    start, end = frame_range or action_frame_range(armature)
    if suffix == ".bvh":
        return write_take_bvh(armature, path, (start, end), pre)
    scene.frame_start, scene.frame_end = start, end
    if suffix == ".blend":
        bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
        return path
    objs = character_objects(armature) if with_mesh else [armature]
    _select_only(objs)
    saved_name = armature.name
    if suffix == ".fbx" and pre.armature_name and armature.name != pre.armature_name:
        other = bpy.data.objects.get(pre.armature_name)
        if other is not None:  # free the name for the duration of the export
            other.name = pre.armature_name + ".rigmind-export"
        armature.name = pre.armature_name
    try:
        with _rest_meshes(objs):
            _run_exporter(suffix, path, pre)
    finally:
        if armature.name != saved_name:
            armature.name = saved_name
        moved = bpy.data.objects.get((pre.armature_name or "") + ".rigmind-export")
        if moved is not None:
            moved.name = pre.armature_name
    return path


def _run_exporter(suffix, path, pre):
    import bpy

    if suffix == ".fbx":
        bpy.ops.export_scene.fbx(filepath=str(path), object_types={"ARMATURE", "MESH"}, **_FBX_TAKE, **pre.fbx)
        return
    bpy.ops.export_scene.gltf(
        filepath=str(path),
        export_format="GLB" if suffix == ".glb" else "GLTF_SEPARATE",
        use_selection=True,
        export_animations=True,
        # The active actions of the selected objects (the take and its face
        # curves) merged into one glTF animation, sampled on every frame of
        # the scene range.
        export_animation_mode="ACTIVE_ACTIONS",
        export_force_sampling=True,
        export_frame_range=True,
        export_frame_step=1,
        export_optimize_animation_size=False,
        export_morph=True,
        export_morph_animation=True,
        export_skins=True,
    )
