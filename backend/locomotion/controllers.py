"""The locomotion controllers a walk runs on: which one, loaded once per session.

:func:`load_controller` builds the neural controller (its weights in
``models/`` or a user folder) or the motion-matching baseline (the Bandai
Namco clips in the data folder) and keeps it: building the motion-matching
database reads ~100 BVH files, loading the neural model imports
torch/onnxruntime. Controllers are stateful (``reset`` / ``step``), so
:data:`GENERATE_LOCK` lets one generation (a walk, a Drive session) use them
at a time.

Pure Python (no bpy).
"""

from __future__ import annotations

import threading
from pathlib import Path

from .. import options, paths
from ..bone_mapping import match_preset
from ..errors import UserError
from .gaits import controller_gait

#: Where the trained neural controller's weights are looked for by default.
MODELS_DIR = paths.MODELS_DIR
NEURAL_FILES = ("locomotion.onnx", "locomotion.pt")
KINDS = options.CONTROLLER_KINDS
#: Held while a controller is stepped (a walk being generated, a Drive
#: session): controllers keep their state between steps.
GENERATE_LOCK = threading.Lock()

# Built controllers, keyed on what they were built from.
_CONTROLLERS: dict = {}
_CONTROLLERS_LOCK = threading.Lock()


class ControllerError(UserError):
    """No locomotion controller can be made; the message names the fix."""


def neural_weights(models_dir=None):
    """The neural controller's weights file (``.onnx`` before ``.pt``) in
    ``models_dir`` (default: the package's ``models/``), or None."""
    folder = Path(models_dir) if models_dir else MODELS_DIR
    for name in NEURAL_FILES:
        p = folder / name
        if p.is_file():
            return p
    return None


def default_data_dir() -> Path:
    """``$RIGMIND_DATA``, else ``../shared/data`` next to the package."""
    return paths.data_dir()


def _no_model_fix(models_dir) -> str:
    folder = Path(models_dir) if models_dir else MODELS_DIR
    return (
        f"no trained locomotion model in {folder} (locomotion.onnx or locomotion.pt): train one with "
        "`rigmind train locomotion` (or set Locomotion Weights Folder in the add-on preferences)"
    )


def load_controller(kind: str = "auto", data_dir=None, *, engine: str = None, models_dir=None, styles=None, gait=None):
    """A locomotion controller with the ``reset`` / ``step`` API, cached per session.

    ``kind``:
      - ``"neural"``: the trained ``LocomotionController`` (weights
        ``locomotion.onnx`` / ``.pt`` in ``models_dir``, default the
        package's ``models/``; ``engine`` "onnxruntime" or "torch", default
        from the file found);
      - ``"motion_matching"``: the motion-matching baseline built from the
        Bandai Namco locomotion clips in ``data_dir`` (default
        ``$RIGMIND_DATA`` or ``../shared/data``), only the ``styles`` and
        ``gait`` ("walk"/"run") asked for when given (smaller database,
        built in ~1 s; the gait can only be chosen this way: the neural
        model picks it from the speed);
      - ``"auto"``: the neural controller when its weights exist, else the
        motion-matching fallback when the data exists, else a
        :class:`ControllerError` naming both fixes.
    """
    if kind not in KINDS:
        raise ControllerError(f"controller must be one of {', '.join(KINDS)}, got {kind!r}")
    if kind in ("auto", "neural"):
        weights = neural_weights(models_dir)
        if weights is not None:
            return _neural(weights, engine)
        if kind == "neural":
            raise ControllerError(_no_model_fix(models_dir) + ", or use the motion-matching controller")
    data = Path(data_dir) if data_dir else default_data_dir()
    folder = data / "bandai_namco_d2_locomotion" / "bvh"
    if not folder.is_dir():
        if kind == "auto":
            raise ControllerError(
                _no_model_fix(models_dir) + f"; the motion-matching fallback needs the Bandai Namco locomotion data "
                f"at {folder} (set RIGMIND_DATA or --data to the folder that holds bandai_namco_d2_locomotion)"
            )
        raise ControllerError(
            f"the motion-matching controller needs the Bandai Namco locomotion data at {folder}: "
            "set RIGMIND_DATA or --data to the folder that holds bandai_namco_d2_locomotion"
        )
    return _motion_matching(data, styles, gait)


def load_chosen(choice, style, gait: str):
    """:func:`load_controller` for a request's
    :class:`~rigmind.backend.requests.walk.ControllerChoice`, with only the
    ``style`` and ``gait`` walked (the motion-matching database's clips)."""
    return load_controller(choice.kind, choice.data_dir, engine=choice.engine, models_dir=choice.models_dir,
                           styles=(style,), gait=controller_gait(gait))


def _neural(weights: Path, engine):
    eng = engine or ("onnxruntime" if weights.suffix == ".onnx" else "torch")
    if eng == "onnxruntime" and weights.suffix == ".pt" and not weights.with_suffix(".onnx").is_file():
        eng = "torch"  # only the checkpoint exists: ONNX Runtime has nothing to run
    if eng == "torch" and weights.suffix == ".onnx" and not weights.with_suffix(".pt").is_file():
        eng = "onnxruntime"
    key = ("neural", str(weights.resolve()), eng)
    with _CONTROLLERS_LOCK:
        if key not in _CONTROLLERS:
            # Imported here: the module pulls in the model I/O (and torch / onnxruntime on load).
            from .controller import LocomotionController

            _CONTROLLERS[key] = LocomotionController.load(weights, engine=eng)
        return _CONTROLLERS[key]


def _motion_matching(data: Path, styles, gait):
    from . import dataset
    from . import features
    from .motion_matching import MotionMatchingController

    styles = tuple(sorted(set(styles))) if styles else None
    key = ("motion_matching", str(data.resolve()), styles, gait)
    with _CONTROLLERS_LOCK:
        if key not in _CONTROLLERS:
            clips = [
                c for c in dataset.list_clips(data, datasets=("d2",))
                if (styles is None or c.style_key in styles) and (gait is None or c.gait == gait)
            ]
            if not clips:
                raise ControllerError(f"no Bandai Namco locomotion clips for style {styles} / gait {gait} under {data}")
            # d2 has turns both ways, so no mirrored copies are needed.
            feats = [features.compute_features(features.load_clip(c), c.labels()) for c in clips]
            _CONTROLLERS[key] = MotionMatchingController.build(feats)
        return _CONTROLLERS[key]


def clear_controller_cache() -> None:
    with _CONTROLLERS_LOCK:
        _CONTROLLERS.clear()


def controller_fps(controller) -> float:
    """The controller's frame rate (frames per second; 30 when it says none)."""
    fps = getattr(controller, "fps", None)
    if fps is None and hasattr(controller, "db"):
        fps = controller.db.fps
    return float(fps or 30.0)


def controller_skeleton(controller):
    """The skeleton (Bandai's) the controller's poses are on."""
    src = getattr(controller, "skeleton", None)
    if src is None and hasattr(controller, "db"):
        src = controller.db.skeleton
    if src is None:
        raise ValueError("the controller exposes no skeleton to measure its legs on")
    return src


def bandai_bone_map(skeleton):
    """The canonical bone mapping (``bone_mapping.BoneMap``) of the
    controller's Bandai skeleton: the retarget's source mapping of a walk."""
    return match_preset(skeleton, "bandai_namco")


def controller_leg_length(controller) -> float:
    """The controller skeleton's (Bandai's) mean hip-to-ankle leg length (m)."""
    from ..retarget import joint_indices, leg_length

    src = controller_skeleton(controller)
    return float(leg_length(src, joint_indices(dict(bandai_bone_map(src).bones), src, "source")))


__all__ = [
    "MODELS_DIR", "NEURAL_FILES", "KINDS", "GENERATE_LOCK", "ControllerError", "neural_weights", "default_data_dir",
    "load_controller", "load_chosen", "clear_controller_cache", "controller_fps", "controller_skeleton",
    "bandai_bone_map", "controller_leg_length",
]
