"""The stage a headless render puts a character on when the scene has none of
its own: a camera that frames the character and follows it, three-point
lighting that follows it too, a ground with a shadow catcher and a neutral
world.

Nothing the user made is moved or replaced: a user's camera is used as it is,
lights and ground are added only to a scene without lights, and everything
added here carries :data:`STAGE_TAG` so a later render re-aims it.

Units: metres; Blender's frame (Z up, characters face -Y).
"""

from __future__ import annotations

import math

import bpy
import numpy as np

#: Custom property on every object this module created.
STAGE_TAG = "rigmind_stage"
#: Kept for files made before the stage module: cameras RigMind created then.
AUTO_CAMERA_TAG = "rigmind_auto_camera"

CAMERA_LENS_MM = 50.0
#: From the character towards the camera: in front (-Y), a little to the
#: character's left (+X) and above.
TOWARD_CAMERA = np.array([0.35, -1.0, 0.15])


def _ours(obj) -> bool:
    return obj is not None and bool(obj.get(STAGE_TAG) or obj.get(AUTO_CAMERA_TAG))


def _deformed_meshes(objects, arms):
    return [o for o in objects if o.type == "MESH" and (o.parent in arms or any(
        m.type == "ARMATURE" and m.object in arms for m in o.modifiers))]


def frame_bounds(objects, frame=None) -> tuple:
    """World-space axis-aligned bounds ``(min, max)`` [3] of what will be on
    screen at ``frame`` (default: the current one): the evaluated (posed,
    deformed) meshes; an armature with no mesh counts by its bone heads
    (never tails: glTF imports give leaf bones metre-long tails)."""
    return _bounds_now(objects) if frame is None else frames_bounds(objects, [frame])[0]


def frames_bounds(objects, frames) -> list:
    """:func:`frame_bounds` at each of ``frames``, the scene's current frame
    set back once at the end (not after each)."""
    scene = bpy.context.scene
    saved = scene.frame_current
    out = []
    for f in frames:
        scene.frame_set(int(f))          # even the current one: evaluates the animation
        out.append(_bounds_now(objects))
    scene.frame_set(saved)
    return out


def _bounds_now(objects) -> tuple:
    """:func:`frame_bounds` at the frame the scene is on."""
    scene = bpy.context.scene
    dg = bpy.context.evaluated_depsgraph_get()
    arms = [o for o in objects if o.type == "ARMATURE" and len(o.data.bones)]
    meshes = [o for o in objects if o.type == "MESH"] + [
        m for m in _deformed_meshes(scene.objects, arms) if m not in objects and m.visible_get()]
    pts = []
    for ob in meshes:
        ev = ob.evaluated_get(dg)
        mw = np.array(ev.matrix_world)
        corners = np.array([list(c) for c in ev.bound_box])
        pts.append(corners @ mw[:3, :3].T + mw[:3, 3])
    skinned = {m.parent for m in meshes} | {mod.object for m in meshes for mod in m.modifiers
                                            if mod.type == "ARMATURE"}
    for ob in arms:
        if ob in skinned:
            continue
        mw = np.array(ob.matrix_world)
        heads = np.array([list(pb.head) for pb in ob.pose.bones])
        pts.append(heads @ mw[:3, :3].T + mw[:3, 3])
    if not pts:
        return np.zeros(3), np.ones(3)
    a = np.concatenate(pts)
    return a.min(axis=0), a.max(axis=0)


def _look_at(obj, direction) -> None:
    from mathutils import Vector

    obj.rotation_euler = Vector(np.asarray(direction, float).tolist()).to_track_quat("-Z", "Y").to_euler()


def _camera(scene):
    cam = scene.camera
    if cam is not None and _ours(cam):
        return cam
    data = bpy.data.cameras.new("RigMind Camera")
    data.lens = CAMERA_LENS_MM
    cam = bpy.data.objects.new("RigMind Camera", data)
    cam[STAGE_TAG] = True
    cam[AUTO_CAMERA_TAG] = True
    scene.collection.objects.link(cam)
    scene.camera = cam
    return cam


def _fov(cam, resolution) -> tuple:
    """(horizontal, vertical) field of view in radians for an image of
    ``resolution`` (x, y) pixels; the sensor width spans the longer side of
    the image (Blender's AUTO sensor fit)."""
    aspect = resolution[0] / max(resolution[1], 1)
    half = math.atan(cam.data.sensor_width / (2 * cam.data.lens))
    if aspect >= 1:
        return 2 * half, 2 * math.atan(math.tan(half) / aspect)
    return 2 * math.atan(math.tan(half) * aspect), 2 * half


def _fit_distance(cam, resolution, extent, toward, margin) -> float:
    """Distance from a box's centre along ``toward`` (unit, towards the
    camera) at which the box of size
    ``extent`` [3] fits the image with ``margin`` (1.2: 20 % to spare)."""
    fov_w, fov_h = _fov(cam, resolution)
    m = np.array(cam.rotation_euler.to_matrix())   # columns: camera X (right), Y (up), Z (back)
    corners = np.array([[sx, sy, sz] for sx in (-.5, .5) for sy in (-.5, .5) for sz in (-.5, .5)]) * extent
    x, y, depth = corners @ m[:, 0], corners @ m[:, 1], corners @ toward
    need = np.maximum(margin * np.abs(x) / math.tan(fov_w / 2), margin * np.abs(y) / math.tan(fov_h / 2))
    return float(np.max(depth + need))


def place_camera(boxes, frames, resolution, *, margin: float = 1.15) -> None:
    """Aim RigMind's camera at the character whose bounds at ``frames`` are
    ``boxes`` [(min, max)]: the distance frames the largest extent the
    character takes (its pose, not its path), and over several frames the
    camera is keyed to follow the character's centre at a constant offset,
    so a walk stays in frame. A user's camera is left alone."""
    scene = bpy.context.scene
    if scene.camera is not None and not _ours(scene.camera):
        return
    lo = np.array([b[0] for b in boxes])
    hi = np.array([b[1] for b in boxes])
    extent = (hi - lo).max(axis=0)
    centres = (lo + hi) / 2
    cam = _camera(scene)
    cam.animation_data_clear()
    toward = TOWARD_CAMERA / np.linalg.norm(TOWARD_CAMERA)
    _look_at(cam, -toward)
    dist = _fit_distance(cam, resolution, np.maximum(extent, 0.3), toward, margin)
    if len(frames) == 1:
        cam.location = (centres[0] + toward * dist).tolist()
        return
    key_locations(cam, frames, centres + toward * dist)


def key_locations(obj, frames, locations) -> None:
    """Key ``obj``'s location at each of ``frames`` (scene frames) to the
    matching row of ``locations [n, 3]`` (metres, world): the stage's
    camera and lights following the character."""
    for f, loc in zip(frames, np.asarray(locations, float)):
        obj.location = loc.tolist()
        obj.keyframe_insert("location", frame=int(f))


def add_lights(bounds, centres=None, frames=None) -> None:
    """Key, fill and rim area lights around ``bounds`` (sizes and powers
    scale with the character's height), unless the scene has lights of its
    own; RigMind's lights from an earlier render are moved, never doubled.

    With ``centres`` [n, 2] (the character's XY centre at each of ``frames``)
    the lights are keyed to follow it at a constant offset, as the camera
    is: area lights fall off with distance, and lights left at the middle of
    a walk's path lit its end at half the brightness of its start (measured
    on the demo's walk)."""
    scene = bpy.context.scene
    if any(o.type == "LIGHT" and not _ours(o) for o in scene.objects):
        return
    lo, hi = bounds
    centre = (lo + hi) / 2
    h = max(hi[2] - lo[2], 0.5)
    follow = centres is not None and frames is not None and len(frames) > 1
    # (name, direction from the character, power W per m^2 of height^2, size as a fraction of the height)
    rig = (("Key", (-1.0, -1.2, 1.3), 60.0, 0.5),
           ("Fill", (1.3, -1.0, 0.4), 15.0, 0.9),
           ("Rim", (0.4, 1.4, 1.2), 30.0, 0.4))
    for name, direction, power, size in rig:
        d = np.array(direction, float)
        d /= np.linalg.norm(d)
        obj = scene.objects.get(f"RigMind {name} Light")
        if obj is None or not _ours(obj):
            obj = bpy.data.objects.new(f"RigMind {name} Light", bpy.data.lights.new(f"RigMind {name}", "AREA"))
            obj[STAGE_TAG] = True
            scene.collection.objects.link(obj)
        light = obj.data
        light.energy = power * h * h
        light.size = size * h
        # Only the key light casts a shadow: one shadow on the ground, which
        # keeps the shadow catcher small (fill and rim shadows reach far).
        light.use_shadow = name == "Key"
        _look_at(obj, -d)
        obj.animation_data_clear()      # keys from an earlier render would override the new place
        if not follow:
            obj.location = (centre + d * 2.2 * h).tolist()
            continue
        xy = np.asarray(centres, float)[:, :2]
        key_locations(obj, frames, np.c_[xy, np.full(len(xy), centre[2])] + d * 2.2 * h)


def add_ground(bounds) -> None:
    """A shadow catcher under the feet: in Cycles it shows only the shadows,
    over the world colour, so its edge is invisible and it need only cover
    where the key light's shadow falls (the character's bounds over the
    rendered frames plus 0.9 of its height): every pixel of ground costs as
    much to render as one of the character. Other engines show it as a grey
    floor. RigMind's ground from an earlier render is re-fitted, never doubled."""
    scene = bpy.context.scene
    lo, hi = bounds
    height = max(float(hi[2] - lo[2]), 0.5)
    hx, hy = (float(v) for v in np.maximum((hi[:2] - lo[:2]) / 2 + 0.9 * height, 1.0))
    quad = [(-hx, -hy, 0.0), (hx, -hy, 0.0), (hx, hy, 0.0), (-hx, hy, 0.0)]
    centre = (lo + hi) / 2
    obj = next((o for o in scene.objects if _ours(o) and o.type == "MESH"), None)
    if obj is None:
        me = bpy.data.meshes.new("RigMind Ground")
        me.from_pydata(quad, [], [(0, 1, 2, 3)])
        obj = bpy.data.objects.new("RigMind Ground", me)
        obj[STAGE_TAG] = True
        obj.is_shadow_catcher = True
        me.materials.append(_ground_material())
        scene.collection.objects.link(obj)
    else:
        obj.data.vertices.foreach_set("co", np.array(quad, np.float32).ravel())
        obj.data.update()
    obj.location = (float(centre[0]), float(centre[1]), float(lo[2]))


def _ground_material():
    mat = bpy.data.materials.new("RigMind Ground")
    mat.diffuse_color = (0.42, 0.42, 0.43, 1.0)
    bsdf = mat.node_tree.nodes.get("Principled BSDF") if mat.node_tree else None
    if bsdf is not None:
        bsdf.inputs["Base Color"].default_value = (0.42, 0.42, 0.43, 1.0)
        bsdf.inputs["Roughness"].default_value = 0.8
    return mat


def show_ground(visible: bool) -> None:
    """Show or hide RigMind's ground in renders (it doubles a Cycles frame's
    cost; the demo's MP4s leave it out)."""
    for o in bpy.context.scene.objects:
        if _ours(o) and o.type == "MESH":
            o.hide_render = not visible


def neutral_world() -> None:
    """A soft grey world (a little ambient light), unless the scene has one."""
    scene = bpy.context.scene
    if scene.world is not None and not scene.world.get(STAGE_TAG):
        return
    world = scene.world or bpy.data.worlds.new("RigMind World")
    world[STAGE_TAG] = True
    world.color = (0.36, 0.37, 0.39)
    if world.node_tree is not None:
        bg = world.node_tree.nodes.get("Background")
        if bg is not None:
            bg.inputs["Color"].default_value = (0.36, 0.37, 0.39, 1.0)
            bg.inputs["Strength"].default_value = 0.35
    scene.world = world


def set_stage(targets, frames=None, resolution=None) -> None:
    """Camera (framing and following ``targets`` over ``frames`` in an image
    of ``resolution`` (x, y) pixels, default the scene's), lights, ground and
    world for a render of ``targets``; see the module docstring for what is
    never touched."""
    scene = bpy.context.scene
    resolution = resolution or (scene.render.resolution_x, scene.render.resolution_y)
    targets = [o for o in targets if not _ours(o)]          # never frame our own ground
    frames = list(frames) if frames else [scene.frame_current]
    users_camera = scene.camera is not None and not _ours(scene.camera)
    had_lights = any(o.type == "LIGHT" and not _ours(o) for o in scene.objects)
    boxes = frames_bounds(targets, frames)
    bounds = (np.min([b[0] for b in boxes], axis=0), np.max([b[1] for b in boxes], axis=0))
    place_camera(boxes, frames, resolution)
    pose_height = max(float(b[1][2] - b[0][2]) for b in boxes)
    # Sized by one pose (not the path) and, over several frames, following
    # the character's centre: a walk is lit the same from start to end.
    centres = [(b[0] + b[1]) / 2 for b in boxes]
    add_lights((np.array([*bounds[0][:2], bounds[0][2]]), np.array([*bounds[1][:2], bounds[0][2] + pose_height])),
               centres, frames)
    if not users_camera and not had_lights:
        add_ground(bounds)
    neutral_world()
