"""The option lists, defined once: the CLI's ``choices``, the Blender
enum items (``blender_addon/properties.py``: labels and tooltips on top of
these identifiers, in this order) and the backend's checks import them
from here; so do the option ranges (:data:`RANGES`).

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

#: Gaits a walk can take: a style's walk and run (from its own clips), and
#: the crouched sneak (the walk slowed and lowered, backend/locomotion/actions).
GAITS = ("walk", "run", "crouch")

#: How a path walk starts: standing, or lying face up / face down and getting up.
START_POSES = ("standing", "lying-up", "lying-down")

#: What `--action` can ask for along a path.
ACTIONS = ("jump", "crouch")

#: Lip-sync without a transcript: the learned model, word recognition, or
#: the phone-table baseline.
FACE_METHODS = ("model", "words", "table")

#: Emotions a face and a gesture take can be given, each with a weight 0..1
#: (``backend/emotion``); neutral is all weights 0.
EMOTIONS = ("happy", "sad", "angry", "surprised", "afraid", "disgusted")

#: Gesture styles: the Bandai Namco gesture datasets' labels (dataset 1's
#: fifteen, then dataset 2's four others), learned from their styled clips.
GESTURE_STYLES = (
    "active", "angry", "childish", "chimpira", "feminine", "giant", "happy", "masculinity", "musical",
    "normal", "not-confident", "old", "proud", "sad", "tired", "elderly", "exhausted", "masculine", "youthful",
)

#: Three-point tracking: the learned model, or the IK baseline (backend/tracking).
TRACK_METHODS = ("model", "baseline")

#: Which axis points up in a tracker CSV file.
TRACKER_UP_AXES = ("Z", "Y")

#: How tracker positions go onto the rig: "rig", where this rig's head and
#: hands go (the hips travel their path 1:1, the hands are put on them);
#: "performer", another body's, scaled onto the rig as a retarget scales a clip.
TRACK_PLACEMENTS = ("rig", "performer")

#: Inference engines for the gesture and face models.
RUNTIMES = ("onnxruntime", "torch")

#: Target conventions of an export (``operators.export.PRESETS``).
EXPORT_PRESETS = ("generic", "unreal", "unity")

#: Formats the Blender Export button writes (the CLI picks by extension).
EXPORT_FORMATS = ("BVH", "FBX", "GLB")

#: Lower-body source of a gesture take: the model's idle, or the rig's action.
GESTURE_BASES = ("idle", "keep_legs")

#: The documented range of every numeric option: option → (lowest, highest,
#: unit), inclusive on both ends. The CLI and batch check values against it
#: (``backend/limits.py``: ``check``, ``check_options``) and the add-on's
#: properties take their hard limits from it (``properties.hard_range``).
RANGES = {
    "speed": (0.1, 8.0, "m/s"),
    "amount": (0.0, 1.0, ""),
    "smile": (0.0, 1.0, ""),
    "fps": (1.0, 240.0, "frames per second"),
    "samples": (1, 4096, "samples"),
    "resolution": (16, 8192, "pixels a side"),
    # Blender's own frame limits (scene frame_start/frame_end: 0 … 1048574).
    "frame": (0, 1048574, ""),
    "start_frame": (0, 1048574, ""),
    "seed": (0, 2**32 - 1, ""),
    "workers": (1, 256, ""),
    # walk --cycle: seconds of steady walking searched for the loop.
    "cycle_seconds": (1.0, 60.0, "s"),
    # walk --path: the longest take, and the path itself.
    "path_seconds": (1.0, 3600.0, "s"),
    # A jump's hips apex above their standing height, and the hips' travel
    # from take-off to touch-down: what people do from a walk or a standstill
    # (a standing vertical jump lifts the hips 0.3-0.6 m; a standing broad
    # jump covers 1.5-2.5 m; the DeepMimic clip: 0.25 m, and 1.07 m for the whole jump).
    "jump_height": (0.1, 0.7, "m"),
    "jump_length": (0.0, 2.5, "m"),
    # An emotion's weight, and the times of a timed one (the take's seconds).
    "emotion_weight": (0.0, 1.0, ""),
    "emotion_time": (0.0, 4 * 3600.0, "s"),
    # rigmind train MODEL: a run's length and width, and its loss weights.
    "train_steps": (1, 10**8, "steps"),
    # The locomotion trainer's --steps 0: as many steps as fit in --minutes.
    "budget_steps": (0, 10**8, "steps"),
    "train_threads": (1, 256, "threads"),
    "train_batch": (1, 65536, "samples"),
    "train_minutes": (0.1, 7 * 24 * 60.0, "minutes"),
    "train_seconds": (1.0, 7 * 24 * 3600.0, "s"),
    "train_synth": (0, 10**6, "utterances"),
    "loss_weight": (0.0, 100.0, ""),
    "share": (0.0, 1.0, ""),
    # The gesture trainer's time warp of what its posterior reads (a window is 64 frames).
    "encoder_jitter": (0.0, 16.0, "frames"),
    # rigmind eval MODEL: seeds per take, held-out voices (0: all), seconds of
    # each voice (0: whole), clips and run length of a smoke test, timing steps.
    "eval_seeds": (1, 1000, "seeds"),
    "eval_voices": (0, 1000, "voices"),
    "eval_seconds": (0.0, 3600.0, "s"),
    "eval_clips": (1, 10**6, "clips"),
    "eval_run_seconds": (0.1, 3600.0, "s"),
    "timing_steps": (1, 10**6, "steps"),
}

__all__ = [
    "ROOT_MODES", "CONTROLLER_KINDS", "STYLES", "GAITS", "FACE_METHODS", "RUNTIMES", "EXPORT_PRESETS",
    "EXPORT_FORMATS", "GESTURE_BASES", "RANGES", "START_POSES", "ACTIONS",
    "EMOTIONS", "GESTURE_STYLES", "TRACK_METHODS", "TRACKER_UP_AXES",
]
