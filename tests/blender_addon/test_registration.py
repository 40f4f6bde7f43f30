"""In-process register()/unregister() of the add-on against the real bpy.

The package is imported as ``rigmind`` here (the venv layout); the extension
layout ``bl_ext.user_default.rigmind`` is covered by test_extension_install.py.
"""

from __future__ import annotations

import importlib.util
import re

import pytest
from conftest import REPO

bpy = pytest.importorskip("bpy")

import rigmind  # noqa: E402
from rigmind.blender_addon import panel, preferences, properties, registration  # noqa: E402

PANELS = ("VIEW3D_PT_rigmind", "VIEW3D_PT_rigmind_locomotion", "VIEW3D_PT_rigmind_speech",
          "VIEW3D_PT_rigmind_output")


def _handlers_snapshot():
    out = {}
    for name in dir(bpy.app.handlers):
        lst = getattr(bpy.app.handlers, name)
        if isinstance(lst, list):
            out[name] = list(lst)
    return out


def _rigmind_types():
    return sorted(n for n in dir(bpy.types) if "rigmind" in n.lower())


@pytest.fixture
def registered(bpy_clean):
    handlers = _handlers_snapshot()
    rigmind.register()
    try:
        yield handlers
    finally:
        rigmind.unregister()


def test_register_adds_panels_properties_and_preferences(registered):
    for name in PANELS:
        assert hasattr(bpy.types, name), name
    # Blender 5.0 lists registered PropertyGroup and AddonPreferences subclasses
    # nowhere in bpy.types (panels and operators it does), hence is_registered.
    assert properties.RigMindSceneProperties.is_registered
    assert preferences.RigMindPreferences.is_registered
    props = bpy.context.scene.rigmind
    assert isinstance(props, properties.RigMindSceneProperties)
    assert props.speed == pytest.approx(1.3)
    assert (props.style, props.gait, props.mode) == ("normal", "walk", "CYCLE")
    # Parent panel registered before its children, or Blender rejects them.
    regs = registration.registered_classes()
    assert regs.index(panel.VIEW3D_PT_rigmind) < regs.index(panel.VIEW3D_PT_rigmind_locomotion)


def test_preferences_bl_idname_is_the_package_root():
    # Imported as `rigmind` here; as an extension the same code yields
    # `bl_ext.user_default.rigmind` (checked in test_extension_install.py).
    assert preferences.RigMindPreferences.bl_idname == "rigmind" == rigmind.__name__


def test_unregister_leaves_nothing_behind(bpy_clean):
    before_types = _rigmind_types()
    handlers = _handlers_snapshot()
    rigmind.register()
    ours = registration.registered_classes()
    assert ours
    rigmind.unregister()
    assert registration.registered_classes() == ()
    # Compared with the state before, not with [], so that leftovers of other
    # test modules cannot fail this one.
    assert _rigmind_types() == before_types
    for cls in ours:
        assert not getattr(cls, "is_registered", False), cls
        name = cls.__name__
        if issubclass(cls, bpy.types.Operator):
            name = panel.operator_type_name(cls.bl_idname)
        assert not hasattr(bpy.types, name), name
    assert not hasattr(bpy.types.Scene, "rigmind")
    assert "rigmind" not in bpy.types.Scene.bl_rna.properties
    assert _handlers_snapshot() == handlers


def test_register_twice_then_unregister_is_clean(bpy_clean):
    before_types = _rigmind_types()
    rigmind.register()
    rigmind.register()
    rigmind.unregister()
    assert _rigmind_types() == before_types
    assert not hasattr(bpy.types.Scene, "rigmind")
    rigmind.unregister()  # a second unregister is harmless


def test_optional_operator_module_is_registered_when_present(registered):
    spec = importlib.util.find_spec("rigmind.operators.blender_ops")
    regs = registration.registered_classes()
    if spec is None:
        assert all(not issubclass(c, bpy.types.Operator) for c in regs)
        return
    from rigmind.operators import blender_ops

    for cls in blender_ops.CLASSES:
        assert cls in regs
        assert cls.bl_idname.startswith("rigmind."), cls.bl_idname


def _objects():
    data = bpy.data
    arm = data.objects.new("Arm", data.armatures.new("Arm"))
    plain = data.objects.new("Plain", data.meshes.new("Plain"))
    basis_only = data.objects.new("BasisOnly", data.meshes.new("BasisOnly"))
    basis_only.shape_key_add(name="Basis")
    face = data.objects.new("Face", data.meshes.new("Face"))
    face.shape_key_add(name="Basis")
    face.shape_key_add(name="jawOpen")
    curve = data.objects.new("Curve", data.curves.new("Curve", type="CURVE"))
    empty = data.objects.new("Empty", None)
    cam = data.objects.new("Cam", data.cameras.new("Cam"))
    return {"arm": arm, "plain": plain, "basis_only": basis_only, "face": face,
            "curve": curve, "empty": empty, "cam": cam}


def _offered(poll, objs):
    props = bpy.context.scene.rigmind
    return sorted(k for k, o in objs.items() if poll(props, o))


def test_pointer_polls_offer_only_fitting_objects(registered):
    objs = _objects()
    assert _offered(properties.poll_armature, objs) == ["arm"]
    assert _offered(properties.poll_face_mesh, objs) == ["face"]
    assert _offered(properties.poll_path_object, objs) == ["curve", "empty"]
    # The polls are the ones Blender holds for these properties.
    annotations = properties.RigMindSceneProperties.__annotations__
    assert annotations["target_armature"].keywords["poll"] is properties.poll_armature
    assert annotations["face_mesh"].keywords["poll"] is properties.poll_face_mesh
    assert annotations["path_object"].keywords["poll"] is properties.poll_path_object


def test_property_ranges_and_enums(registered):
    rna = properties.RigMindSceneProperties.bl_rna.properties
    # Hard limits from backend/limits.py, the CLI's table (tests/project/test_option_ranges.py checks every option).
    assert (rna["speed"].hard_min, rna["speed"].hard_max) == pytest.approx((0.1, 8.0))
    assert (rna["speed"].soft_min, rna["speed"].soft_max) == pytest.approx((0.2, 6.0))
    assert (rna["gesture_amount"].hard_min, rna["gesture_amount"].hard_max) == (0.0, 1.0)
    assert [i.identifier for i in rna["style"].enum_items] == list(properties.STYLES)
    assert [i.identifier for i in rna["gait"].enum_items] == ["walk", "run", "crouch"]
    assert [i.identifier for i in rna["path_start"].enum_items] == ["standing", "lying-up", "lying-down"]
    assert [i.identifier for i in rna["mode"].enum_items] == ["CYCLE", "PATH"]
    assert [i.identifier for i in rna["export_format"].enum_items] == ["BVH", "FBX", "GLB"]
    assert [i.identifier for i in rna["render_engine"].enum_items] == list(properties.RENDER_ENGINES)
    for name in ("audio_path", "export_path", "render_path"):
        assert rna[name].subtype == "FILE_PATH", name
    prefs = preferences.RigMindPreferences.bl_rna.properties
    # Its items are built where it runs (tests/blender_addon/test_preferences.py); the default is item number 0.
    assert [i[0] for i in preferences.runtime_items(None, None)] == ["torch", "onnxruntime"]
    numbers = {i[0]: i[3] for i in preferences.runtime_items(None, None)}
    default = preferences.RigMindPreferences.__annotations__["inference_engine"].keywords["default"]
    assert numbers["onnxruntime"] == default                      # the faster one, as benchmarked
    assert "device" not in prefs                                  # nothing would read it: CPU wheels only
    assert prefs["models_dir"].subtype == "DIR_PATH" and prefs["models_dir"].default == ""


def test_render_engine_map_names_real_engines(registered):
    scene = bpy.context.scene
    for engine in properties.RENDER_ENGINES.values():
        scene.render.engine = engine  # raises TypeError for an unknown engine
        assert scene.render.engine == engine


def test_panel_draws_only_existing_properties_and_icons(registered):
    rna = properties.RigMindSceneProperties.bl_rna.properties
    for group in (panel.CHARACTER_PROPS, panel.LOCOMOTION_PROPS, panel.SPEECH_PROPS,
                  panel.GENERATION_PROPS, panel.EXPORT_PROPS, panel.RENDER_PROPS, panel.EMOTION_PROPS):
        for name in group:
            assert name in rna, name
    source = (REPO / "blender_addon" / "panel.py").read_text()
    drawn = set(re.findall(r'\.prop\(props, "(\w+)"', source))
    assert drawn and drawn <= set(rna.keys())
    icons = {i.identifier for i in bpy.types.UILayout.bl_rna.functions["label"]
             .parameters["icon"].enum_items}
    used = set(re.findall(r'icon="(\w+)"', source)) - {"NONE"}
    assert used and used <= icons, used - icons


def test_buttons_follow_operator_registration(registered):
    idname = "rigmind.test_probe"

    class Probe(bpy.types.Operator):
        bl_idname = idname
        bl_label = "Probe"

        def execute(self, context):
            return {"FINISHED"}

    assert not panel.operator_available(idname)
    bpy.utils.register_class(Probe)
    try:
        assert panel.operator_available(idname)
    finally:
        bpy.utils.unregister_class(Probe)
    assert not panel.operator_available(idname)
    for key, op in panel.OPERATORS.items():
        assert panel.operator_type_name(op) == f"RIGMIND_OT_{key}"
