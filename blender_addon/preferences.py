"""Add-on preferences (Edit ▸ Preferences ▸ Add-ons ▸ RigMind)."""

import importlib.util

import bpy
from bpy.props import EnumProperty, StringProperty

# Blender finds an add-on's preferences by the add-on's module name, which is
# `rigmind` when the package is imported from the venv and
# `bl_ext.<repo>.rigmind` when installed as an extension. This module sits one
# level below the package root, so drop the last component of our package.
ADDON_ID = __package__.rsplit(".", 1)[0]


#: The runtime every install has (the extension ships ONNX Runtime's wheel).
DEFAULT_RUNTIME = "onnxruntime"

# (identifier, name, description, number). The numbers are what a .blend or
# userpref stores, so they stay fixed whichever items are offered.
_RUNTIMES = (
    ("torch", "PyTorch", "Run the models with PyTorch (models/*.pt)", 1),
    ("onnxruntime", "ONNX Runtime", "Run the models' ONNX exports (models/*.onnx)", 0),
)


def torch_available() -> bool:
    """Whether PyTorch can be imported here (without importing it: ~2 s).
    The shipped extension has no torch; a venv with the training extras does."""
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):  # a broken or half-removed install
        return False


def available_runtimes() -> tuple:
    """The runtime identifiers that can run where RigMind runs."""
    return tuple(r[0] for r in _RUNTIMES if r[0] != "torch" or torch_available())


# Blender does not keep the strings of dynamic enum items alive: the list
# must outlive the call that returned it.
_ITEMS_ALIVE = []


def runtime_items(_self, _context):
    """Enum items of the Runtime preference: PyTorch only where torch is installed."""
    keep = available_runtimes()
    _ITEMS_ALIVE[:] = [r for r in _RUNTIMES if r[0] in keep]
    return _ITEMS_ALIVE


def effective_runtime(prefs) -> str:
    """The runtime to use for ``prefs`` (None: no preferences): the saved
    choice when it can run here, else ONNX Runtime (a preference saved as
    PyTorch reads as '' once torch is gone)."""
    value = getattr(prefs, "inference_engine", "") if prefs is not None else ""
    if value in available_runtimes():
        return value
    if prefs is not None:
        try:  # heal the stale choice once: each read of it logs an RNA warning
            prefs.inference_engine = DEFAULT_RUNTIME
        except (AttributeError, TypeError, RuntimeError):
            pass
    return DEFAULT_RUNTIME


class RigMindPreferences(bpy.types.AddonPreferences):
    bl_idname = ADDON_ID

    # Every model has an ONNX export (models/*.onnx). The default is the
    # faster runtime, the one the timings in bench/results/ were measured
    # with; it also spares Blender the torch import (~2 s on a first click).
    # A dynamic enum takes its default as the item's number.
    inference_engine: EnumProperty(
        name="Runtime",
        description="Runtime of the neural models: locomotion controller, gesture and face "
                    "(ONNX Runtime is the faster; PyTorch, offered where it is installed, runs the .pt weights)",
        items=runtime_items,
        default=dict((r[0], r[3]) for r in _RUNTIMES)[DEFAULT_RUNTIME],
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


def controller_options(context=None) -> dict:
    """The inference engine and models folder the preferences choose:
    ``{"engine": "onnxruntime" | "torch", "models_dir": absolute path}``
    (``models_dir`` only when set), for the locomotion controller and the
    other models' runtime; empty when the add-on is not enabled."""
    prefs = get_preferences(context)
    if prefs is None:
        return {}
    opts = {"engine": effective_runtime(prefs)}
    if prefs.models_dir:
        opts["models_dir"] = bpy.path.abspath(prefs.models_dir)
    return opts


CLASSES = (RigMindPreferences,)
