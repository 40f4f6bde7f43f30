"""Preferences ▸ Runtime offers only what can run where RigMind runs: PyTorch
only where torch is importable (the shipped extension has none); a saved
PyTorch choice without torch falls back to ONNX Runtime, and the model
operators still run."""

from __future__ import annotations

import importlib.util

import pytest

_real_find_spec = importlib.util.find_spec


def _without_torch(monkeypatch):
    """Make torch unfindable, as inside the shipped extension (the rest of the
    import system is untouched)."""
    def find_spec(name, *args, **kwargs):
        if name == "torch" or name.startswith("torch."):
            return None
        return _real_find_spec(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


@pytest.fixture
def prefs(registered):
    """The add-on's real preferences (an add-on entry for the package, as
    Blender makes when the extension is enabled)."""
    bpy = registered
    from rigmind.blender_addon import preferences

    entry = bpy.context.preferences.addons.new()
    entry.module = preferences.ADDON_ID
    try:
        yield preferences.get_preferences()
    finally:
        bpy.context.preferences.addons.remove(entry)


def _offered(preferences):
    return [i[0] for i in preferences.runtime_items(None, None)]


def test_pytorch_offered_where_torch_is_installed(prefs):
    from rigmind.blender_addon import preferences

    assert _real_find_spec("torch") is not None  # the dev venv has the training extras
    assert _offered(preferences) == ["torch", "onnxruntime"]
    assert prefs.inference_engine == "onnxruntime"  # the default
    prefs.inference_engine = "torch"
    assert preferences.effective_runtime(prefs) == "torch"


def test_no_pytorch_item_without_torch(prefs, monkeypatch):
    from rigmind.blender_addon import preferences

    _without_torch(monkeypatch)
    assert _offered(preferences) == ["onnxruntime"]
    with pytest.raises(TypeError, match="torch"):
        prefs.inference_engine = "torch"  # Blender itself refuses an item not offered


def test_saved_pytorch_without_torch_falls_back_to_onnx(prefs, monkeypatch):
    from rigmind.blender_addon import preferences
    from rigmind.operators.blender_ops import _runtime

    import bpy

    prefs.inference_engine = "torch"  # saved while torch was installed
    _without_torch(monkeypatch)
    assert preferences.effective_runtime(prefs) == "onnxruntime"
    assert preferences.controller_options(bpy.context)["engine"] == "onnxruntime"
    assert _runtime(bpy.context) is None  # ONNX Runtime for gesture and face
    assert prefs.inference_engine == "onnxruntime"  # the stale choice is healed
    assert preferences.effective_runtime(None) == "onnxruntime"


def test_model_operator_runs_with_a_stale_pytorch_choice(prefs, monkeypatch):
    import bpy

    from rigmind.backend.locomotion import controllers

    if controllers.neural_weights() is None:
        pytest.skip("no trained locomotion model in models/")
    prefs.inference_engine = "torch"
    _without_torch(monkeypatch)
    assert bpy.ops.rigmind.add_mannequin() == {"FINISHED"}
    arm = bpy.context.scene.rigmind.target_armature
    assert bpy.ops.rigmind.bake_walk_cycle(armature=arm.name, controller="neural") == {"FINISHED"}
    assert arm.animation_data.action.name.startswith("RigMind Walk")
