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

    # Every model has an ONNX export (models/*.onnx). The default is the
    # faster runtime, the one the timings in bench/results/ were measured
    # with; it also spares Blender the torch import (~2 s on a first click).
    inference_engine: EnumProperty(
        name="Runtime",
        description="Runtime of the neural models: locomotion controller, gesture and face "
                    "(ONNX Runtime is the faster; PyTorch runs the .pt weights)",
        items=(
            ("torch", "PyTorch", "Run the models with PyTorch (models/*.pt)"),
            ("onnxruntime", "ONNX Runtime", "Run the models' ONNX exports (models/*.onnx)"),
        ),
        default="onnxruntime",
    )
    models_dir: StringProperty(
        name="Locomotion Weights Folder",
        description="Folder with your own locomotion weights (locomotion.onnx / locomotion.pt, from "
                    "`rigmind train locomotion`); leave empty to use the ones bundled with RigMind",
        subtype="DIR_PATH",
        default="",
    )

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.prop(self, "inference_engine")
        layout.prop(self, "models_dir")


def get_preferences(context=None):
    """The RigMind preferences, or None when the add-on is not enabled (e.g.
    the package's classes were registered by hand without an add-on entry)."""
    context = context or bpy.context
    addon = context.preferences.addons.get(ADDON_ID)
    return addon.preferences if addon is not None else None


CLASSES = (RigMindPreferences,)
