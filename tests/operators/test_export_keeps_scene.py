"""Export Character leaves the user's scene as it was: frame range, current
frame, selection (the exact set) and active object are the same before and
after every format, through the real operator, also when the export fails."""

from __future__ import annotations

import pytest

from conftest import call_as_panel


def _state(bpy):
    scene, layer = bpy.context.scene, bpy.context.view_layer
    return {
        "frames": (scene.frame_start, scene.frame_end, scene.frame_current),
        "selected": sorted(o.name for o in layer.objects if o.select_get()),
        "active": layer.objects.active.name if layer.objects.active else None,
    }


@pytest.fixture
def user_scene(registered):
    """A mannequin with a baked walk cycle in a user's scene: range 1-250 (the
    take is far shorter), frame 77, a camera and a cube besides the character."""
    bpy = registered
    assert bpy.ops.rigmind.add_mannequin() == {"FINISHED"}
    arm = bpy.context.scene.rigmind.target_armature
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 250
    assert bpy.ops.rigmind.bake_walk_cycle(armature=arm.name, controller="neural") == {"FINISHED"}
    first, last = arm.animation_data.action.frame_range
    assert last - first < 100  # a take shorter than the scene: the range an export used to shrink to
    bpy.ops.object.camera_add(location=(0.0, -6.0, 1.5))
    bpy.context.active_object.name = "User Camera"
    bpy.ops.mesh.primitive_cube_add(location=(3.0, 0.0, 0.5))
    bpy.context.active_object.name = "User Cube"
    scene.frame_set(77)
    return bpy, arm


def _select(bpy, names, active):
    layer = bpy.context.view_layer
    for ob in layer.objects:
        ob.select_set(ob.name in names)
    layer.objects.active = bpy.data.objects[active] if active else None


# (selected, active): another object selected with a third one active; the
# character and the camera selected with the camera active; nothing at all.
SELECTIONS = [
    (("User Camera",), "User Cube"),
    (("User Camera", "Mannequin"), "User Camera"),
    ((), None),
]


@pytest.mark.parametrize("fmt", ["BVH", "FBX", "GLB"])
@pytest.mark.parametrize("selected, active", SELECTIONS, ids=["camera+cube-active", "arm+camera", "none"])
def test_export_operator_keeps_range_frame_selection_active(user_scene, tmp_path, fmt, selected, active):
    bpy, arm = user_scene
    selected = tuple(arm.name if n == "Mannequin" else n for n in selected)
    _select(bpy, selected, active)
    before = _state(bpy)
    assert before["frames"] == (1, 250, 77)
    out = tmp_path / f"take.{fmt.lower()}"
    assert bpy.ops.rigmind.export(armature=arm.name, format=fmt, filepath=str(out)) == {"FINISHED"}
    assert out.stat().st_size > 1000
    assert _state(bpy) == before


@pytest.mark.parametrize("suffix", [".gltf", ".blend"])
def test_export_character_keeps_the_scene_for_gltf_and_blend(user_scene, tmp_path, suffix):
    from rigmind.operators import export

    bpy, arm = user_scene
    _select(bpy, ("User Camera",), "User Cube")
    before = _state(bpy)
    export.export_character(arm, tmp_path / f"take{suffix}")
    assert (tmp_path / f"take{suffix}").is_file()
    assert _state(bpy) == before


def test_the_file_still_holds_the_take_not_the_scene_range(user_scene, tmp_path):
    """The scene keeps 1-250, the GLB holds the take's own frames."""
    import json
    import struct

    bpy, arm = user_scene
    first, last = arm.animation_data.action.frame_range
    out = tmp_path / "take.glb"
    assert bpy.ops.rigmind.export(armature=arm.name, format="GLB", filepath=str(out)) == {"FINISHED"}
    data = out.read_bytes()
    n = struct.unpack_from("<I", data, 12)[0]
    gltf = json.loads(data[20:20 + n])
    anim = gltf["animations"][0]
    times = gltf["accessors"][anim["samplers"][0]["input"]]
    fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base
    assert times["max"][0] - times["min"][0] == pytest.approx((round(last) - round(first)) / fps, abs=1e-3)


@pytest.mark.parametrize("fmt", ["BVH", "FBX", "GLB"])
def test_a_failed_export_still_restores_the_scene(user_scene, tmp_path, monkeypatch, fmt):
    from rigmind.operators import export

    bpy, arm = user_scene
    monkeypatch.setenv("RIGMIND_LOG_DIR", str(tmp_path / "logs"))
    _select(bpy, ("User Camera",), "User Cube")
    before = _state(bpy)

    def broken(*args, **kwargs):
        bpy.context.scene.frame_set(5)  # an exporter that had stepped the scene before failing
        raise RuntimeError("the exporter broke")

    monkeypatch.setattr(export, "write_take_bvh" if fmt == "BVH" else "_run_exporter", broken)
    with pytest.raises(RuntimeError, match="the exporter broke"):
        bpy.ops.rigmind.export(armature=arm.name, format=fmt, filepath=str(tmp_path / f"x.{fmt.lower()}"))
    assert _state(bpy) == before
    assert not list(tmp_path.glob("x.*"))


def test_export_as_panel_keeps_the_scene(user_scene, tmp_path):
    bpy, arm = user_scene
    s = bpy.context.scene.rigmind
    s.export_format, s.export_path = "FBX", str(tmp_path / "panel")
    _select(bpy, ("User Cube",), "User Camera")
    before = _state(bpy)
    assert call_as_panel("rigmind.export") == {"FINISHED"}
    assert _state(bpy) == before
