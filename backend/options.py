"""The option lists, defined once: the CLI's ``choices``, the Blender
enum items (``blender_addon/properties.py``: labels and tooltips on top of
these identifiers, in this order) and the backend's checks import them
from here.

Pure Python with no imports, so ``rigmind --help`` stays fast.
"""

#: Where retargeting keys the clip's travel (root motion).
ROOT_MODES = ("hips", "in_place", "root_bone", "object")

#: The locomotion controllers: the trained model when present, else motion
#: matching ("auto"), or one of them.
CONTROLLER_KINDS = ("auto", "neural", "motion_matching")

#: Movement styles: the Bandai Namco dataset-2 labels, which are also the
#: locomotion model's style inputs in this order.
STYLES = ("active", "elderly", "exhausted", "feminine", "masculine", "normal", "youthful")

#: Gaits a style has clips (and its own speed) for.
GAITS = ("walk", "run")

#: Lip-sync without a transcript: the learned model, word recognition, or
#: the phone-table baseline.
FACE_METHODS = ("model", "words", "table")

#: Inference engines for the gesture and face models.
RUNTIMES = ("onnxruntime", "torch")

#: Target conventions of an export (``operators.export.PRESETS``).
EXPORT_PRESETS = ("generic", "unreal", "unity")

#: Formats the Blender Export button writes (the CLI picks by extension).
EXPORT_FORMATS = ("BVH", "FBX", "GLB")

#: Lower-body source of a gesture take: the model's idle, or the rig's action.
GESTURE_BASES = ("idle", "keep_legs")

__all__ = [
    "ROOT_MODES", "CONTROLLER_KINDS", "STYLES", "GAITS", "FACE_METHODS", "RUNTIMES", "EXPORT_PRESETS",
    "EXPORT_FORMATS", "GESTURE_BASES",
]
