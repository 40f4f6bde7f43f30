"""Add-on preferences (Edit ▸ Preferences ▸ Add-ons ▸ RigMind)."""

import bpy
from bpy.props import EnumProperty, StringProperty

# Blender finds an add-on's preferences by the add-on's module name, which is
# `rigmind` when the package is imported from the venv and
# `bl_ext.<repo>.rigmind` when installed as an extension. This module sits one
# level below the package root, so drop the last component of our package.
ADDON_ID = __package__.rsplit(".", 1)[0]


class RigMindPreferences(bpy.types.AddonPreferences):
    bl_idname = ADDON_ID

    inference_engine: EnumProperty(
        name="Inference Engine",
        description="Runtime that evaluates the neural models",
        items=(
            ("torch", "PyTorch", "Run the models with PyTorch"),
            ("onnxruntime", "ONNX Runtime", "Run the exported ONNX models with ONNX Runtime"),
        ),
        default="torch",
    )
    device: EnumProperty(
        name="Device",
        description="Where the models run",
        items=(
            ("cpu", "CPU", "Run on the CPU"),
            ("cuda", "CUDA", "Run on an NVIDIA GPU through CUDA"),
        ),
        default="cpu",
    )
    models_dir: StringProperty(
        name="Models Folder",
        description="Folder with model weights; leave empty to use the models bundled with RigMind",
        subtype="DIR_PATH",
        default="",
    )

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.prop(self, "inference_engine")
        layout.prop(self, "device")
        layout.prop(self, "models_dir")


def get_preferences(context=None):
    """The RigMind preferences, or None when the add-on is not enabled (e.g.
    the package's classes were registered by hand without an add-on entry)."""
    context = context or bpy.context
    addon = context.preferences.addons.get(ADDON_ID)
    return addon.preferences if addon is not None else None


CLASSES = (RigMindPreferences,)
