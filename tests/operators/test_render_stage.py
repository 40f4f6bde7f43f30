"""The render stage (#15 item 7): a camera that frames the character and
follows it, three-point light, a ground with a shadow catcher; the user's
camera never moves. Measured by projecting the evaluated meshes into the
camera, on the mannequin and on X Bot (whose glTF leaf bones have metre-long
tails: framing from bone tails made it tiny)."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import data_file


def _projected(bpy, objects, frame):
    """Normalised camera coordinates [N, 2] of the evaluated meshes' bounding-box corners."""
    from bpy_extras.object_utils import world_to_camera_view
    from mathutils import Vector

    scene = bpy.context.scene
    scene.frame_set(frame)
    dg = bpy.context.evaluated_depsgraph_get()
    pts = []
    for ob in objects:
        if ob.type != "MESH":
            continue
        ev = ob.evaluated_get(dg)
        mw = ev.matrix_world
        for c in ev.bound_box:
            v = world_to_camera_view(scene, scene.camera.evaluated_get(dg), mw @ Vector(c))
            pts.append((v.x, v.y))
    return np.array(pts)


def _characters(bpy):
    return [o for o in bpy.context.scene.objects if o.type in ("ARMATURE", "MESH")]


def test_camera_follows_a_walking_character(bpy_clean):
    from rigmind.operators import mannequin, render_stage

    bpy = bpy_clean
    arm = mannequin.build_mannequin()["armature"]
    arm.location = (0.0, 0.0, 0.0)
    arm.keyframe_insert("location", frame=1)
    arm.location = (6.0, -3.0, 0.0)            # walks 6.7 m, far out of any fixed frame
    arm.keyframe_insert("location", frame=60)
    scene = bpy.context.scene
    scene.render.resolution_x, scene.render.resolution_y = 320, 240
    targets = _characters(bpy)
    render_stage.set_stage(targets, [1, 20, 40, 60], (320, 240))
    for f in (1, 10, 30, 50, 60):
        uv = _projected(bpy, targets, f)
        assert uv.min() >= -0.01 and uv.max() <= 1.01, f"frame {f}: character leaves the image {uv.min(0)} {uv.max(0)}"
        centre = (uv.min(0) + uv.max(0)) / 2
        assert np.all(np.abs(centre - 0.5) < 0.12), f"frame {f}: not centred ({centre})"
        height = uv[:, 1].max() - uv[:, 1].min()
        assert height > 0.6, f"frame {f}: the character fills only {height:.2f} of the height"


def _character_luminance(bpy, path, frame) -> float:
    """Render ``frame`` with Cycles (transparent film: the alpha is the
    character's mask) and return the mean luminance of its pixels."""
    scene = bpy.context.scene
    scene.frame_set(frame)
    scene.render.filepath = str(path)
    bpy.ops.render.render(write_still=True)
    img = bpy.data.images.load(str(path))
    px = np.array(img.pixels[:]).reshape(-1, 4)
    bpy.data.images.remove(img)
    mask = px[:, 3] > 0.9
    assert mask.sum() > 200, f"frame {frame}: the character is not in the image"
    return float((px[mask, :3] @ np.array([0.2126, 0.7152, 0.0722])).mean())


def test_a_walk_stays_lit_as_it_moves(bpy_clean, tmp_path):
    """The lights follow the character like the camera: 8 m from its start,
    it is as bright as at the start and in the middle (lights left at the
    middle of the path made the demo's walk end at 0.55 of its start)."""
    from rigmind.operators import mannequin, render_stage

    bpy = bpy_clean
    arm = mannequin.build_mannequin()["armature"]
    arm.location = (0.0, 0.0, 0.0)
    arm.keyframe_insert("location", frame=1)
    arm.location = (0.0, -8.0, 0.0)
    arm.keyframe_insert("location", frame=60)
    scene = bpy.context.scene
    scene.render.engine = "CYCLES"
    scene.cycles.device, scene.cycles.samples, scene.cycles.use_denoising = "CPU", 8, False
    scene.render.resolution_x, scene.render.resolution_y, scene.render.resolution_percentage = 160, 120, 100
    scene.render.film_transparent = True
    scene.render.image_settings.file_format, scene.render.image_settings.color_mode = "PNG", "RGBA"
    render_stage.set_stage(_characters(bpy), np.linspace(1, 60, 12).round().astype(int).tolist(), (160, 120))
    render_stage.show_ground(False)
    lum = {f: _character_luminance(bpy, tmp_path / f"f{f}.png", f) for f in (1, 30, 60)}
    for f in (1, 60):
        assert 0.7 <= lum[f] / lum[30] <= 1.4, f"frame {f} vs the middle: {lum}"
    assert 0.7 <= lum[60] / lum[1] <= 1.4, lum


def test_three_point_light_ground_with_shadow_catcher(bpy_clean):
    from rigmind.operators import mannequin, render_stage

    bpy = bpy_clean
    mannequin.build_mannequin()
    render_stage.set_stage(_characters(bpy), None, (480, 640))
    scene = bpy.context.scene
    lights = sorted(o.name for o in scene.objects if o.type == "LIGHT")
    assert lights == ["RigMind Fill Light", "RigMind Key Light", "RigMind Rim Light"]
    key = scene.objects["RigMind Key Light"].data.energy
    assert key > scene.objects["RigMind Rim Light"].data.energy > scene.objects["RigMind Fill Light"].data.energy
    ground = scene.objects["RigMind Ground"]
    assert ground.is_shadow_catcher
    assert abs(ground.location.z) < 0.01                  # under the feet (the mannequin stands on Z = 0)
    # Rendering again (the ground is in the scene now) frames the same way and adds nothing twice.
    before = tuple(scene.camera.location)
    render_stage.set_stage(_characters(bpy), None, (480, 640))
    assert tuple(scene.camera.location) == pytest.approx(before, abs=1e-4)
    assert sum(o.type == "CAMERA" for o in scene.objects) == 1
    assert sum(o.type == "LIGHT" for o in scene.objects) == 3
    assert sum(o.name.startswith("RigMind Ground") for o in scene.objects) == 1


def test_users_camera_and_lights_are_left_alone(bpy_clean):
    from rigmind.operators import mannequin, render_stage

    bpy = bpy_clean
    mannequin.build_mannequin()
    scene = bpy.context.scene
    cam = bpy.data.objects.new("My Camera", bpy.data.cameras.new("My Camera"))
    scene.collection.objects.link(cam)
    cam.location = (1.0, -7.0, 1.2)
    scene.camera = cam
    sun = bpy.data.objects.new("My Sun", bpy.data.lights.new("My Sun", "SUN"))
    scene.collection.objects.link(sun)
    render_stage.set_stage(_characters(bpy), [1, 10], (320, 240))
    assert scene.camera == cam and tuple(cam.location) == pytest.approx((1.0, -7.0, 1.2))
    assert cam.animation_data is None
    assert [o.name for o in scene.objects if o.type == "LIGHT"] == ["My Sun"]
    assert "RigMind Ground" not in scene.objects


def test_xbot_is_framed_by_its_mesh_not_its_bone_tails(bpy_clean):
    from rigmind.operators import render_stage, rig_files

    bpy = bpy_clean
    rig_files.load_rig_file(data_file("characters/Xbot.glb"))
    targets = [o for o in _characters(bpy) if o.type == "ARMATURE" or o.visible_get()]
    scene = bpy.context.scene
    scene.render.resolution_x, scene.render.resolution_y = 480, 640
    render_stage.set_stage(targets, None, (480, 640))
    uv = _projected(bpy, [o for o in targets if o.type == "MESH"], bpy.context.scene.frame_current)
    assert uv.min() >= -0.01 and uv.max() <= 1.01
    fill = max(np.ptp(uv[:, 0]), np.ptp(uv[:, 1]))      # the side that binds (T-pose: the arm span)
    assert fill > 0.75, f"X Bot fills only {fill:.2f} of the image"


def test_mannequin_limbs_are_one_surface_through_elbow_and_knee(bpy_clean):
    """No seam where two capsules would meet: the vertices of the upper and
    lower limb belong to one connected surface."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    from rigmind.operators import mannequin

    body = mannequin.build_mannequin()["body"]
    me = body.data
    e = np.empty(len(me.edges) * 2, np.int64)
    me.edges.foreach_get("vertices", e)
    e = e.reshape(-1, 2)
    n = len(me.vertices)
    _, label = connected_components(coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(n, n)), directed=False)

    def owned(bone):
        g = body.vertex_groups[bone].index
        return {v.index for v in me.vertices for x in v.groups if x.group == g and x.weight > 0.9}

    for pre in ("Left", "Right"):
        for upper, lower in (("Arm", "ForeArm"), ("UpLeg", "Leg")):
            a = {label[i] for i in owned(pre + upper)}
            b = {label[i] for i in owned(pre + lower)}
            assert len(a) == 1 and a == b, f"{pre}{upper}/{pre}{lower} are separate pieces"
