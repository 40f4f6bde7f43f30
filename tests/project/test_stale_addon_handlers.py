"""Test isolation: Rigify's load_post handler outlives Rigify.

Blender 5.0.1's ``read_factory_settings`` disables Rigify but leaves its
persistent ``versioning_5_0`` load_post handler registered; the next file
load then prints an AttributeError traceback. A command test that ran after
a Rigify test failed on that traceback in its stderr (test-order dependent).
conftest's autouse fixture drops such handlers between tests.
"""

from __future__ import annotations

from support import rig_factory
from conftest import drop_stale_addon_handlers


def _blend_with_an_armature(bpy, path) -> str:
    """A saved .blend holding one armature object (Rigify's handler walks them)."""
    arm = bpy.data.objects.new("Rig", bpy.data.armatures.new("Rig"))
    bpy.context.scene.collection.objects.link(arm)
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    return str(path)


def test_rigify_handler_left_by_a_factory_reset_is_dropped(bpy_clean, capfd, tmp_path):
    bpy = bpy_clean
    blend = _blend_with_an_armature(bpy, tmp_path / "rig.blend")
    rig_factory._enable_rigify()
    bpy.ops.wm.read_factory_settings(use_empty=True)
    modules = [h.__module__ for h in bpy.app.handlers.load_post]
    assert any(m.startswith("rigify.") for m in modules), modules  # Blender's bug; if it is fixed, this test may go
    assert drop_stale_addon_handlers() >= 1
    assert not any(h.__module__.startswith("rigify.") for h in bpy.app.handlers.load_post)
    capfd.readouterr()
    bpy.ops.wm.open_mainfile(filepath=blend)
    assert "Traceback" not in capfd.readouterr().err
