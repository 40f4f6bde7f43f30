"""A batch worker: the rig and the models loaded once, then one take per call.

Runs in a worker process (``rigmind batch --engine local``) or a Ray actor
(``--engine ray``); the driver is :mod:`rigmind.batch`. A take returns its
output file's bytes (:class:`TakeResult`), never writes into the output
folder itself, so only the driver's atomic rename makes a file final.

Every take starts from the same scene: the rig is imported once and saved
to a scratch ``.blend``, which is reopened before each take (tens of
milliseconds, against seconds for re-importing a glTF/FBX). Together with
the seed taken from the take's name and a fixed thread count, a take's keys
are the same whatever worker or order made it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

# Needs a rig (a scene to write keys into) per kind and format.
_SCENE_FORMATS = {
    "gesture": ("fbx", "bvh", "glb", "blend"),
    "face": ("blend",),
    "walk": ("fbx", "bvh", "glb", "blend"),
    "track": ("fbx", "bvh", "glb", "blend"),
}


@dataclass
class TakeResult:
    """``payload``: the output file's bytes (empty when ``error``);
    ``seconds``: this take's work; ``worker``: which worker made it, with
    that worker's one-off ``startup_s`` (imports) and ``load_s`` (rig and
    models)."""

    name: str
    payload: bytes = b""
    seconds: float = 0.0
    error: str = ""
    worker: str = ""
    startup_s: float = 0.0
    load_s: float = 0.0
    setup_error: bool = False
    started_at: float = 0.0   # wall clock (time.time()) when the take began


def read_clip(config):
    """``config.style_clip`` read as ``rigmind gesture --style-clip`` reads it
    (:func:`.gesture_scene.read_style_clip`): its ``ClipStyle``, None without
    one. A clip that cannot be used (no such file, not a humanoid, damaged,
    an unknown type) is that command's one-line ``UserError``."""
    if not config.style_clip:
        return None
    from .gesture_scene import read_style_clip

    return read_style_clip(config.style_clip)


def _error_text(e: BaseException) -> str:
    """One line: a user-facing problem (a UserError names the fix) as it is,
    anything else marked as an internal error."""
    from ..backend.errors import UserError

    first = next((ln.strip() for ln in str(e).splitlines() if ln.strip()), "")
    if isinstance(e, UserError) and first:
        return first
    return f"internal error: {type(e).__name__}: {first}"


class TakeWorker:
    """Loads the rig (``config.rig``) and the models the batch needs, then
    makes takes with :meth:`run`."""

    def __init__(self, config, rig_path: str | None = None, scratch_root: str | None = None, clip=None):
        """``scratch_root``: the folder to keep this worker's scratch files in
        (the driver's, removed with the batch); None: the system's temp folder.
        ``clip``: ``config.style_clip`` as the driver read it (:func:`read_clip`);
        None: read here, once, where the config names one."""
        t0 = time.perf_counter()
        os.environ.setdefault("OMP_NUM_THREADS", str(config.threads))
        self.config = config
        self.worker = f"{os.uname().nodename}:{os.getpid()}"
        self.scratch = Path(tempfile.mkdtemp(prefix="rigmind-worker-", dir=scratch_root))
        needs_scene = config.fmt in _SCENE_FORMATS[config.kind]
        needs_torch = config.kind in ("gesture", "face") or needs_scene
        if needs_torch:
            import torch

            torch.set_num_threads(int(config.threads))
        if needs_scene:
            import bpy  # noqa: F401
        from ..backend.audio import load_audio  # noqa: F401
        t1 = time.perf_counter()
        self.pristine = None
        self.arm_name = self.mesh_name = None
        if needs_scene:
            self._load_rig(rig_path or config.rig)
        self._load_models()
        # Read at set-up, not per take: a clip that cannot be used fails the
        # batch once (the driver has normally read it already).
        self.clip = clip if clip is not None else read_clip(config)
        self.startup_s, self.load_s = t1 - t0, time.perf_counter() - t1

    # --- set-up ---------------------------------------------------------------

    def _load_rig(self, rig_path) -> None:
        import bpy

        from ..backend.errors import UserError
        from . import rig_files

        if not rig_path:
            raise UserError(f"batch {self.config.kind} --format {self.config.fmt} needs --rig RIG")
        rig_files.load_rig_file(rig_path)
        if self.config.kind in ("gesture", "walk", "track"):
            self.arm_name = rig_files.find_armature(self.config.armature).name
        if self.config.face or self.config.kind == "face":
            self.mesh_name = _face_mesh(bpy, self.config.face or "auto", rig_path).name
        self.pristine = self.scratch / "pristine.blend"
        bpy.ops.wm.save_as_mainfile(filepath=str(self.pristine), copy=True)

    def _load_models(self) -> None:
        kind = self.config.kind
        if kind == "gesture" and self.config.fmt != "csv":
            from ..backend.gesture.generate import get_model

            get_model()
        if kind == "face" or self.config.face or self.config.fmt == "csv":
            if self.config.face_method == "model":
                from ..backend.face.model import load_default_model

                load_default_model()
        if kind == "walk":
            from ..backend.locomotion.controllers import load_controller

            load_controller(self.config.controller, self.config.data)
        if kind == "track" and self.config.method == "model":
            from ..backend.tracking.engine import load_engine

            load_engine(None, "onnxruntime")

    def _reset_scene(self):
        import bpy

        from .rig_files import quiet_stdout

        with quiet_stdout():
            bpy.ops.wm.open_mainfile(filepath=str(self.pristine), load_ui=False)
        arm = bpy.data.objects.get(self.arm_name) if self.arm_name else None
        mesh = bpy.data.objects.get(self.mesh_name) if self.mesh_name else None
        return arm, mesh

    # --- takes ----------------------------------------------------------------

    def run(self, item, data: bytes | None = None) -> TakeResult:
        """Make ``item``'s take. ``data``: the speech file's bytes when the
        worker cannot read ``item.source`` itself (another Ray node)."""
        from ..backend.take_seeds import derive_seed

        t0 = time.perf_counter()
        out = self.scratch / f"take.{self.config.fmt}"
        result = TakeResult(item.name, worker=self.worker, startup_s=self.startup_s, load_s=self.load_s,
                            started_at=time.time())
        try:
            seed = derive_seed(item.name, self.config.base_seed)
            _seed_everything(seed)
            source = item.source
            if data is not None:
                source = self.scratch / ("input" + Path(item.source).suffix)
                source.write_bytes(data)
            getattr(self, f"_{self.config.kind}")(item, source, seed, out)
            result.payload = out.read_bytes()
        except Exception as e:  # noqa: BLE001 - one input's failure is reported, the batch goes on
            result.error = _error_text(e)
        finally:
            out.unlink(missing_ok=True)
        result.seconds = time.perf_counter() - t0
        return result

    def _face_curves(self, clip, item, seed):
        from ..backend.face.generate import generate_face, transcript_beside

        from ..backend.emotion.timeline import parse_emotions

        transcript = transcript_beside(item.source) if item.source else None
        return generate_face(clip, transcript=transcript, fps=30.0, seed=seed, method=self.config.face_method,
                             emotion=parse_emotions(list(self.config.emotion)))

    def _gesture(self, item, source, seed, out) -> None:
        from ..backend.audio import load_audio
        from ..backend.face.export import write_animation
        from ..backend.gesture.generate import generate_gesture

        cfg = self.config
        clip = load_audio(source)
        if cfg.fmt == "csv":
            anim = self._face_curves(clip, item, seed)
            write_animation(anim, out)
            return
        res = generate_gesture(clip, amount=cfg.amount, seed=seed, body=self._body())  # cfg: batch.check_settings
        if cfg.fmt == "npz":
            from .gesture_scene import write_npz

            write_npz(out, res)
            return
        import bpy

        from . import export, gesture_scene

        arm, mesh = self._reset_scene()
        face_anim = self._face_curves(clip, item, seed) if mesh is not None else None
        gesture_scene.apply(arm, clip, res, self._gesture_request(item, seed), face_mesh=mesh,
                            face_animation=face_anim)
        scene = bpy.context.scene
        rng = (scene.frame_start, scene.frame_end) if cfg.fmt == "blend" else None
        export.export_character(arm, out, frame_range=rng)

    def _body(self):
        """The batch's emotion, style and style clip (read at set-up)."""
        if not hasattr(self, "_body_style"):
            from ..backend.emotion.timeline import parse_emotions
            from ..backend.gesture.style_layer import BodyStyle, check_style

            cfg = self.config
            body = BodyStyle(parse_emotions(list(cfg.emotion)), check_style(cfg.style), self.clip)
            self._body_style = None if body.is_neutral else body
        return self._body_style

    def _gesture_request(self, item, seed: int):
        """The take as a ``GestureRequest``: the batch's settings, the take's
        seed, from frame 1; the action is named after the speech file, not
        the scratch copy, and only a .blend carries the sound strip."""
        from ..backend.emotion.timeline import parse_emotions
        from ..backend.requests.gesture import GestureRequest

        cfg = self.config
        return GestureRequest(audio_path=Path(item.source), amount=cfg.amount, seed=seed, start_frame=1, base=cfg.base,
                              face_mesh=cfg.face or "", face_method=cfg.face_method, add_sound=cfg.fmt == "blend",
                              emotion=parse_emotions(list(cfg.emotion)), style=cfg.style,
                              style_clip=Path(cfg.style_clip) if cfg.style_clip else None)

    def _face_request(self, item, seed: int, audio_path: str):
        """The take as a ``FaceRequest``: the batch's method, the take's
        seed, from frame 1, named after the take, without a sound strip.
        ``audio_path``: the speech as the worker read it."""
        from ..backend.emotion.timeline import parse_emotions
        from ..backend.requests.face import FaceRequest

        return FaceRequest(audio_path=audio_path, method=self.config.face_method, seed=seed, start_frame=1,
                           add_sound=False, action_name=f"RigMind Face · {item.name}",
                           emotion=parse_emotions(list(self.config.emotion)))

    def _face(self, item, source, seed, out) -> None:
        from ..backend.audio import load_audio
        from ..backend.face.export import write_animation

        clip = load_audio(source)
        if self.config.fmt != "blend":
            anim = self._face_curves(clip, item, seed)
            write_animation(anim, out)
            return
        import bpy

        from . import face_scene

        _, mesh = self._reset_scene()
        face_scene.write_face(mesh, self._face_curves(clip, item, seed), self._face_request(item, seed, clip.path))
        bpy.ops.wm.save_as_mainfile(filepath=str(out), copy=True)

    def _walk(self, item, source, seed, out) -> None:
        import bpy

        from ..backend.locomotion.controllers import load_chosen
        from . import export
        from . import locomotion_scene

        request = self._walk_request(item.params)
        arm, _ = self._reset_scene()
        ctl = load_chosen(request.controller, request.style, request.gait)
        locomotion_scene.walk_along_path(arm, request, controller=ctl)
        scene = bpy.context.scene
        rng = (scene.frame_start, scene.frame_end) if self.config.fmt == "blend" else None
        export.export_character(arm, out, frame_range=rng)

    def _walk_request(self, params: dict):
        """A walk manifest entry's ``params`` (path text, style, gait, speed)
        as a Walk Along Path request on the batch's controller."""
        from ..backend.errors import UserError
        from ..backend.locomotion.dataset import D2_STYLES
        from ..backend.locomotion.path_input import parse_path
        from ..backend.requests.walk import ControllerChoice, WalkPathRequest

        from ..backend.locomotion.actions.action_plan import parse_actions

        style, gait, speed = params.get("style", "normal"), params.get("gait", "walk"), params.get("speed")
        if style not in D2_STYLES:
            raise UserError(f"unknown style {style!r}; use one of {', '.join(D2_STYLES)}")
        return WalkPathRequest(points=parse_path(params["path"]), style=style, gait=gait,
                               speed=None if speed is None else float(speed),
                               actions=parse_actions(params.get("actions", ()), params.get("start", "standing")),
                               controller=ControllerChoice(kind=self.config.controller, data_dir=self.config.data))

    def _track(self, item, source, seed, out) -> None:
        """A tracker file's body on the rig, named after the file (not the
        scratch copy another Ray node reads)."""
        from ..backend.requests.track import TrackRequest
        from ..backend.tracking.trackers import read_tracker_csv
        from . import export, track_scene

        take = read_tracker_csv(source)
        arm, _ = self._reset_scene()
        request = TrackRequest(trackers=str(source), method=self.config.method, keyed=self.config.fmt != "bvh",
                               placement=self.config.placement)
        action, _, _ = track_scene.track_onto(arm, take, request, item.name)
        export.export_written(arm, action, out)

    def close(self) -> None:
        shutil.rmtree(self.scratch, ignore_errors=True)


def _face_mesh(bpy, face: str, rig_path):
    """The face mesh: an object name, or ``auto`` for the mesh with the most
    ARKit shape keys (the head, never the eyes or teeth)."""
    from ..backend.errors import UserError
    from .face_scene import pick_face_mesh

    meshes = [o for o in bpy.data.objects if o.type == "MESH" and o.data.shape_keys is not None]
    mesh = pick_face_mesh(face, meshes)
    if mesh is None or mesh.type != "MESH" or mesh.data.shape_keys is None:
        raise UserError(f"{rig_path} has no face mesh {face!r} with ARKit shape keys; meshes with shape keys: "
                        f"{', '.join(o.name for o in meshes) or 'none'}")
    return mesh


def _seed_everything(seed: int) -> None:
    import random
    import sys

    import numpy as np

    random.seed(seed)
    np.random.seed(seed % (2 ** 32))
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(seed)


# --- a worker process (--engine local) -------------------------------------------------

_WORKER: TakeWorker | None = None
_INIT_ERROR: str = ""


def _mute_stdout() -> None:
    """Blender's exporters and savers print progress on stdout (from C too);
    a worker has nothing to say there, the driver reports each take."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)


def init_process(config, parent_pid: int | None = None, scratch_root: str | None = None, clip=None) -> None:
    """Process-pool initializer: Ctrl-C is the driver's to handle (it stops
    the pool), the process ends with the driver ``parent_pid`` (see
    :func:`end_with_parent`), and a set-up failure is reported with each
    take, not as a crashed pool. ``scratch_root``, ``clip``: see :class:`TakeWorker`."""
    import signal

    global _WORKER, _INIT_ERROR
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if parent_pid is not None:
        end_with_parent(parent_pid)
    _mute_stdout()
    try:
        _WORKER = TakeWorker(config, scratch_root=scratch_root, clip=clip)
    except Exception as e:  # noqa: BLE001
        _INIT_ERROR = _error_text(e)


#: Seconds between two looks at the driver where the kernel cannot be asked
#: to end this process with it.
PARENT_POLL_S = 0.5
#: prctl(2) option: the signal this process gets when its parent dies.
_PR_SET_PDEATHSIG = 1


def end_with_parent(parent_pid: int) -> None:
    """End this worker as soon as the driver ``parent_pid`` is gone, however
    it went (kill -9 included): an orphan would go on loading and making
    takes nobody writes, and would hold the caller's stderr open, so a
    shell or a ``subprocess`` waiting for the batch's output would wait for
    it. On Linux the kernel sends SIGKILL (``PR_SET_PDEATHSIG``); elsewhere,
    or where that fails, a watchdog thread looks every
    :data:`PARENT_POLL_S` s."""
    if not _kill_with_parent():
        _start_parent_watchdog(parent_pid)
    # The driver may have died before prctl: then nobody will send the signal.
    if _parent_gone(parent_pid):
        os._exit(1)


def _kill_with_parent() -> bool:
    """Ask Linux for SIGKILL when the parent dies; False where it cannot.
    The kernel sends it when the parent *thread* that started this process
    ends: the pool's processes are started by the thread running the batch,
    which outlives them."""
    import signal
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _parent_gone(parent_pid: int) -> bool:
    """An orphan is adopted by another process (init, a subreaper), so its
    parent pid changes; on Windows, which adopts no orphans, multiprocessing's
    handle on the parent says it has ended."""
    import multiprocessing
    import sys

    if os.getppid() != parent_pid:
        return True
    if sys.platform != "win32":
        return False
    parent = multiprocessing.parent_process()
    return parent is not None and not parent.is_alive()


def _start_parent_watchdog(parent_pid: int) -> None:
    import threading

    def watch():
        while not _parent_gone(parent_pid):
            time.sleep(PARENT_POLL_S)
        os._exit(1)  # no clean-up: the driver that would want the results is gone

    threading.Thread(target=watch, name="rigmind-parent-watchdog", daemon=True).start()


def run_in_process(item) -> TakeResult:
    if _WORKER is None:
        return TakeResult(item.name, error=_INIT_ERROR, setup_error=True)
    return _WORKER.run(item)


# --- a Ray actor (--engine ray) --------------------------------------------------------


class RayTakeWorker:
    """The Ray actor: the rig arrives as bytes through the object store and is
    written to the actor's scratch folder, and the style clip as the driver
    read it, so nodes need no shared path."""

    def __init__(self, config, rig_bytes: bytes | None, rig_suffix: str, clip=None):
        _mute_stdout()
        rig_path = None
        if rig_bytes is not None:
            folder = Path(tempfile.mkdtemp(prefix="rigmind-rig-"))
            rig_path = folder / f"rig{rig_suffix}"
            rig_path.write_bytes(rig_bytes)
        self.worker = TakeWorker(config, str(rig_path) if rig_path else None, clip=clip)

    def run(self, item, data: bytes | None = None) -> TakeResult:
        return self.worker.run(item, data)

    def stats(self) -> dict:
        return {"worker": self.worker.worker, "startup_s": round(self.worker.startup_s, 3),
                "load_s": round(self.worker.load_s, 3)}
