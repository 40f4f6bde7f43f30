"""Speech → gesture: load the trained model once, then generate any length.

Generation runs window by window (64 frames at 30 fps, the first 16 of each
given by the previous window, the next 5-27, 16 on average, cross-faded with it), so a
10-minute file costs the same memory as a 10-second one and there are no
seams (see :func:`generate_from_features`). Everything is seeded: the same audio,
seed and amount give the same motion.
"""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

from .. import options
from ..filters import gaussian_filter1d
from ..model_files.manifest import file_sha256
from . import beat_search
from . import controls
from . import dims
from . import latent_track
from . import representation
from .gesture_space import lift_hands, stress_envelope
from .speech_rhythm import settle_with_speech
from .standing import plant_feet
from ..errors import Cancelled, UserError
from .. import paths

FPS = 30.0
DEFAULT_WEIGHTS = paths.model_path("gesture.pt")
DEFAULT_ONNX = DEFAULT_WEIGHTS.with_suffix(".onnx")
FORMAT = "rigmind-gesture-cvae"
#: Inference engines. ONNX Runtime runs the decoder ~5x faster than torch
#: on 2 cores (bench/results/commands_and_performance.md) and spares a process the torch
#: import; it is the default whenever the export matches the weights
#: (:meth:`GestureModel.load`). Torch stays the training engine.
RUNTIMES = options.RUNTIMES


class GestureModelError(UserError):
    """The gesture weights are missing or are not a RigMind gesture model:
    the message names the file and the fix (train or export them)."""


class GestureCancelled(Cancelled):
    """Generation stopped because the caller's ``cancelled()`` turned True."""


class _TorchDecoder:
    """The torch network's ``decode`` on NumPy arrays."""

    name = "torch"

    def __init__(self, net):
        self.net = net

    def __call__(self, z, context, mask, finger_flag, cond) -> np.ndarray:
        import torch

        with torch.no_grad():
            y = self.net.decode(*(torch.from_numpy(np.ascontiguousarray(a)) for a in (z, context, mask, finger_flag, cond)))
        return y.numpy()

    def many(self, inputs) -> list:
        """Each of ``inputs`` (argument tuples of a call) decoded, in order."""
        return [self(*args) for args in inputs]


class _OrtDecoder:
    """The exported decoder (``models/gesture.onnx``) in ONNX Runtime."""

    name = "onnxruntime"

    def __init__(self, path, threads: int = 2):
        from ..model_files.loading import onnx_session

        self.path, self.threads = path, threads
        # Generation runs the decoder ~5 times per window, back to back, alone in the process.
        self.session = onnx_session(path, "gesture model", threads=threads, spin_within_runs=True)
        self.metadata = dict(self.session.get_modelmeta().custom_metadata_map)
        self._lanes = None
        self._lane = threading.local()

    def __call__(self, z, context, mask, finger_flag, cond) -> np.ndarray:
        return self._run(self.session, (z, context, mask, finger_flag, cond))

    @staticmethod
    def _run(session, args) -> np.ndarray:
        feeds = dict(zip(("z", "context", "mask", "finger_flag", "cond"), args))
        return session.run(None, {k: np.ascontiguousarray(v, np.float32) for k, v in feeds.items()})[0]

    def _lane_run(self, args) -> np.ndarray:
        from ..model_files.loading import onnx_session

        if getattr(self._lane, "session", None) is None:
            self._lane.session = onnx_session(self.path, "gesture model", threads=1)
        return self._run(self._lane.session, args)

    def many(self, inputs) -> list:
        """Each of ``inputs`` (argument tuples of a call) decoded, in order,
        side by side on ``threads`` one-thread sessions: a window's candidate
        draws are independent, and one small window does not keep two
        threads of one session busy (a 60-s take 0.58 s against 0.62 s
        decoded one after another, ``bench/bench_gesture_decoder.py``). The
        numbers are the main session's (its threads split the outputs, not
        the sums)."""
        if len(inputs) < 2 or self.threads < 2:
            return [self(*args) for args in inputs]
        if self._lanes is None:
            self._lanes = ThreadPoolExecutor(self.threads, thread_name_prefix="rigmind-gesture-decoder")
        return list(self._lanes.map(self._lane_run, inputs))


@dataclass
class GestureModel:
    """``net``: the decoder as a callable on NumPy arrays (``.name`` says the
    engine: "onnxruntime" or "torch")."""

    net: object
    mean: np.ndarray
    std: np.ndarray
    finger_basis: dict
    energy_map: dict
    beat_rate: float
    start_poses: np.ndarray
    info: dict

    @classmethod
    def load(cls, path=None, runtime: str = None) -> "GestureModel":
        """``runtime`` "onnxruntime" (reads ``path`` with the suffix ``.onnx``)
        or "torch" (reads the ``.pt`` checkpoint). None: ONNX Runtime when the
        ``.onnx`` beside the checkpoint was exported from it (its metadata
        holds the checkpoint's SHA-256), else torch, so freshly trained
        weights are never shadowed by a stale export."""
        path = Path(path or DEFAULT_WEIGHTS)
        if runtime not in RUNTIMES + (None,):
            raise ValueError(f"runtime must be one of {', '.join(RUNTIMES)}, got {runtime!r}")
        onnx_path = path.with_suffix(".onnx")
        dec = None
        if runtime == "onnxruntime" or (runtime is None and onnx_path.is_file()):
            if not onnx_path.exists():
                raise GestureModelError(f"gesture ONNX model {onnx_path} not found — export it with "
                                        "`python -m rigmind.backend.gesture.export_onnx`, or use the torch runtime")
            dec = _OrtDecoder(onnx_path)
            if runtime is None and not _export_matches(dec.metadata, path):
                dec = None  # exported from other weights than these: run the checkpoint
        if dec is not None:
            md = dec.metadata
            if md.get("rigmind_format") != FORMAT:
                raise GestureModelError(f"{onnx_path} is not a RigMind gesture model")
            a = {k: json.loads(md["rigmind_" + k]) for k in ("arrays", "scalars", "train")}
            arr = {k: np.asarray(v, dtype=np.float32) for k, v in a["arrays"].items()}
            return cls._from_arrays(dec, arr, a["scalars"]["rest_energy"], a["scalars"]["beat_rate"], a["train"])
        if not path.exists():
            raise GestureModelError(f"gesture weights {path} not found — train them with "
                                    "`rigmind train gesture --data ../shared/data`")
        return cls._from_checkpoint(path)

    @classmethod
    def _from_checkpoint(cls, path) -> "GestureModel":
        """The torch engine from a "gesture" checkpoint (:mod:`..checkpoint`)."""
        from ..model_files import checkpoint
        from ..model_files.loading import fitting
        from . import model as cvae

        ck = checkpoint.load(path, "gesture")
        with fitting(path, "gesture model"):
            net = cvae.GestureVAE(**ck.config)
            net.load_state_dict(ck.weights)
            net.eval()
            a = {k: v.numpy() for k, v in ck.arrays.items()}
            return cls._from_arrays(_TorchDecoder(net), a, float(a["rest_energy"]), float(a["beat_rate"]),
                                    dict(ck.metadata.get("training", {})))

    @classmethod
    def _from_arrays(cls, dec, a: dict, rest_energy: float, beat_rate: float, train: dict) -> "GestureModel":
        """The model on decoder ``dec`` from its named arrays (normalisation,
        finger basis, energy weights, start poses) and two numbers, as an
        ONNX export's metadata and a checkpoint both hold them."""
        fb = {"mean": a["finger_mean"], "components": a["finger_components"]}
        em = {"weights": a["energy_weights"], "rest_energy": rest_energy}
        return cls(dec, a["mean"], a["std"], fb, em, beat_rate, a["start_poses"], train)


@dataclass
class GestureResult:
    """``poses [T, POSE_DIM]`` (see representation), ``motion`` on the SMPL-X
    skeleton at 30 fps, the controls used (``pulses``, ``energy``, ``speech``
    ``[T]``) and the audio features' beat frames."""

    poses: np.ndarray
    motion: object
    pulses: np.ndarray
    energy: np.ndarray
    speech: np.ndarray
    fps: float = FPS


def _export_matches(metadata: dict, pt_path) -> bool:
    """True when an export's metadata names ``pt_path``'s SHA-256 (or the
    checkpoint itself is absent)."""
    pt_path = Path(pt_path)
    return not pt_path.is_file() or metadata.get("rigmind_source_sha256") == file_sha256(pt_path)


_MODEL_CACHE = {}
SILENT_SPREAD = 0.3        # latent spread without speech, relative to speech
SEAM_DECAY_FRAMES = 6.0    # time constant of the seam correction
OVERLAP = 16               # frames cross-faded between consecutive windows (at the mean advance)
STRIDE = dims.WINDOW - dims.CONTEXT - OVERLAP   # frames a window advances on average (32)
#: Strides a window's advance is drawn around (frames): joins at no fixed
#: period, so what a join leaves in the motion does not add up into a beat
#: at one period.
STRIDES = (STRIDE - dims.LATENT_STRIDE, STRIDE, STRIDE + dims.LATENT_STRIDE)
#: Added to the stride (frames): window starts leave the latent code grid and
#: its phase wanders from window to window through all 8 positions, so the
#: rhythm the decoder's 8-frame codes give a window's motion is spread over
#: every phase instead of adding up at multiples of 8 frames; a step of at
#: most 3 keeps neighbouring windows' code times close (:mod:`.latent_track`).
PHASE_STEPS = (-3, -2, -1, 0, 1, 2, 3)
ADVANCES = tuple(sorted(s + d for s in STRIDES for d in PHASE_STEPS))
PREROLL = 64               # frames decoded before the take (no speech), discarded


@dataclass(frozen=True)
class GeneratorConfig:
    """How the windows are laid: ``advances`` (frames; :data:`ADVANCES`;
    ``(STRIDE,)`` for the fixed stride of earlier versions, :data:`STRIDES`
    for their varied stride on the code grid)."""

    advances: tuple = ADVANCES
    search: beat_search.BeatSearchConfig = beat_search.BeatSearchConfig()


def _inertialize(last2: np.ndarray, new: np.ndarray) -> np.ndarray:
    """Remove the jump between the context's last frames ``[D, 2]`` and a new
    window's frames ``[D, N]``: the offset to the extrapolated next frame is
    subtracted with an exponential decay (inertialisation, as in game
    animation blending), so the join is C1-smooth and the window's own
    motion is kept after a few frames."""
    expected = 2 * last2[:, 1] - last2[:, 0]
    offset = new[:, 0] - expected
    decay = np.exp(-np.arange(new.shape[1]) / SEAM_DECAY_FRAMES)
    return new - offset[:, None] * decay[None, :]


def get_model(path=None, runtime: str = None) -> GestureModel:
    """The model at ``path`` (default ``models/gesture.pt``/``.onnx``) in
    ``runtime`` (default: see :meth:`GestureModel.load`), loaded once per process."""
    key = (str(path or DEFAULT_WEIGHTS), runtime)
    if key not in _MODEL_CACHE:
        _MODEL_CACHE[key] = GestureModel.load(path, runtime)
    return _MODEL_CACHE[key]


def window_starts(n_frames: int, seed: int, advances=None) -> np.ndarray:
    """Start frames ``[K]`` of the windows covering ``n_frames`` frames (the
    last window ending at or after ``n_frames + OVERLAP``): each advance
    drawn from ``advances`` (default :data:`ADVANCES`) by a generator of its
    own (``seed``), so the take's other draws are those of a fixed stride."""
    advances = ADVANCES if advances is None else tuple(int(a) for a in advances)
    if not advances or any(not 0 < a < dims.WINDOW - dims.CONTEXT for a in advances):
        raise ValueError(f"window advances must be 1 to {dims.WINDOW - dims.CONTEXT - 1} frames "
                         f"(each window overlaps the last), got {advances}")
    rng = np.random.default_rng([int(seed), 7])
    need = n_frames + OVERLAP - dims.WINDOW
    count = max(int(np.ceil(need / min(advances))) + 1, 1)
    starts = np.concatenate([[0], np.cumsum(rng.choice(advances, size=count))])
    last = int(np.searchsorted(starts, need)) if need > 0 else 0
    return starts[:last + 1]


def _crossfade(n: int) -> np.ndarray:
    """Weights ``[n]`` rising 0 → 1 with zero slope at both ends (smoothstep)."""
    u = (np.arange(n) + 1.0) / (n + 1.0)
    return u * u * (3.0 - 2.0 * u)


def generate_from_features(model: GestureModel, feats, *, amount: float = 0.5, seed: int = 0,
                           temperature: float = 1.0, progress=None, cancelled=None,
                           config: GeneratorConfig = GeneratorConfig()) -> np.ndarray:
    """Speech features (at 30 fps) → poses ``[T, POSE_DIM]``.

    Windows of ``WINDOW`` frames advance by :data:`ADVANCES` frames (drawn
    per window, :func:`window_starts`); each is conditioned on the
    ``CONTEXT`` frames before its new part, and its new frames that the
    previous window also decoded (5-27; ``OVERLAP`` at the mean advance) are
    cross-faded with that window's, so no frame is the first of a window
    without being faded in (a window's edge frames are its least certain:
    joining them butt-to-butt gave a hitch at every join, 5× the mean
    acceleration). The latent codes
    are drawn per 8 frames of the whole take, not per window, and each window
    reads them at its own code times (:mod:`.latent_track`; windows start off
    the code grid), so overlapping windows decode nearly the same codes at
    the same time and the cross-fade mixes two readings of one motion. The take is preceded by :data:`PREROLL`
    frames decoded without speech from the start pose: the start pose and
    the first window's settling happen before frame 0, so the body is already
    moving (idling) on the first frame."""
    rng = np.random.default_rng(seed)
    pulse, energy, speech, timing = controls.audio_controls(feats, model.energy_map, model.beat_rate, amount, rng)
    audio = feats.stacked()
    T = len(energy)
    W, Cx = dims.WINDOW, dims.CONTEXT
    P = PREROLL
    starts = window_starts(P + T, seed, config.advances)
    n_win = len(starts)
    total = int(starts[-1]) + W
    # The pre-roll's controls: no speech, the resting energy, the take's first audio frame.
    lead = lambda a, v: np.concatenate([np.broadcast_to(v, (P,) + a.shape[1:]), a])  # noqa: E731
    pad = lambda a: np.pad(a, [(0, total - len(a))] + [(0, 0)] * (a.ndim - 1), mode="edge")  # noqa: E731
    audio = audio[:T] if len(audio) >= T else np.pad(audio, ((0, T - len(audio)), (0, 0)), mode="edge")
    rest = np.float32(model.energy_map["rest_energy"])
    cond = np.zeros((dims.COND_DIM, total), np.float32)
    cond[0] = pad(lead(pulse, 0.0))
    cond[1] = pad(lead(energy, rest))
    cond[2] = 1.0
    cond[3] = pad(lead(speech, 0.0))
    cond[4: 4 + dims.AUDIO_DIM] = pad(lead(audio, audio[:1])).T
    cond[4 + dims.AUDIO_DIM + 0] = 1.0  # the paired speaker's domain: conversational gesture
    cond[-2:] = pad(lead(timing, np.float32(1.0))).T
    start = (model.start_poses[rng.integers(len(model.start_poses))] - model.mean) / model.std
    # The latent's spread is how much the body moves beyond what rhythm and
    # energy dictate: "amount" scales it, and without speech it shrinks
    # towards a calm idle (the decoder follows the energy control only weakly).
    L = dims.LATENT_STRIDE
    n_codes = -(-total // L)
    z_all = rng.standard_normal((dims.LATENT, n_codes)).astype(np.float32)
    spread = temperature * (0.6 + 0.8 * float(amount))
    talking = np.pad(cond[3], (0, n_codes * L - total), mode="edge").reshape(n_codes, L).mean(axis=1)
    talk = gaussian_filter1d(talking, W / L / 4, mode="nearest")
    scale = np.pad(spread * (SILENT_SPREAD + (1 - SILENT_SPREAD) * talk), latent_track.TAPS, mode="edge")
    z_all = latent_track.pad_codes(z_all, seed) * scale[None, :].astype(np.float32)
    mask = np.zeros((1, 1, W), np.float32)
    mask[..., :Cx] = 1
    fflag = np.ones((1, 1, W), np.float32)

    def decoded(k, out, variants):
        """Window ``k``'s new frames ``[D, W - Cx]`` from each of ``variants`` (padded
        codes, ``[D_z, N]`` each), joined to the frames of ``out`` before them."""
        a = int(starts[k])
        ctx = np.zeros((1, representation.POSE_DIM, W), np.float32)
        ctx[0, :, :Cx] = out[:, a:a + Cx]
        ys = model.net.many([(latent_track.read_codes(codes, a, W // L, L)[None], ctx, mask, fflag,
                              cond[None, :, a:a + W]) for codes in variants])
        news = []
        for y in ys:
            new = _inertialize(out[:, a + Cx - 2:a + Cx], y[0, :, Cx:])
            if k > 0:
                n_old = int(starts[k - 1]) + W - (a + Cx)    # frames the previous window decoded too
                fade = _crossfade(n_old)[None, :]
                new[:, :n_old] = (1 - fade) * out[:, a + Cx:a + Cx + n_old] + fade * new[:, :n_old]
            news.append(new)
        return news

    passes = 2 if config.search.candidates > 1 else 1

    def run(search=None, done=0):
        """Every window in turn → the normalised frames ``[D, total]``; ``search``
        picks each window's newest codes (:mod:`.beat_search`)."""
        out = np.zeros((representation.POSE_DIM, total), np.float32)
        out[:, :Cx] = start[:, None]
        codes = z_all.copy()
        for k in range(n_win):
            a = int(starts[k])
            if search is not None and k > 0:
                out[:, a + Cx:a + W] = search.best_window(partial(decoded, k, out), k, starts, codes, out)
            else:
                out[:, a + Cx:a + W] = decoded(k, out, [codes])[0]
            if progress:
                progress(done + k + 1, passes * n_win)
            if cancelled and cancelled():
                raise GestureCancelled("gesture generation cancelled")
        return out

    out = run()
    if passes > 1:
        # The take as drawn sets the speeds a beat is measured against; the search then redraws it.
        out = run(beat_search.WindowSearch(config.search, feats.onset_times, np.asarray(speech) > 0.5, out,
                                           lead=P, fps=FPS, scale=scale, seed=seed,
                                           normalisation=(model.mean, model.std)), done=n_win)
    poses = out.T[P:P + T] * model.std + model.mean
    return poses, pulse, energy, speech


def generate_gesture(clip, *, amount: float = 0.5, seed: int = 0, transcript: str = None, model=None,
                     progress=None, cancelled=None, runtime: str = None, body=None) -> GestureResult:
    """An ``AudioClip`` → :class:`GestureResult` (30 fps, one frame per 1/30 s
    of audio). ``transcript`` is accepted for API symmetry with the face model
    and not used: the gesture model listens to rhythm, loudness and voice
    activity, which text does not add to here. ``amount`` 0..1, checked once
    by the front end's request (``backend.requests.gesture``), not clipped
    here. ``runtime``: see :data:`RUNTIMES`. ``body``: the take's emotion,
    style and style clip (:class:`.style_layer.BodyStyle`; None: neutral)."""
    from ..audio.features import speech_features

    model = model or get_model(runtime=runtime)
    if model.net.name == "torch":
        import torch

        torch.set_num_threads(min(torch.get_num_threads(), 2))
    feats = speech_features(clip, FPS)
    return gesture_from_features(model, feats, amount=amount, seed=seed, progress=progress, cancelled=cancelled,
                                 body=body)


def gesture_from_features(model: GestureModel, feats, *, amount: float = 0.5, seed: int = 0, progress=None,
                          cancelled=None, body=None) -> GestureResult:
    """Speech features (30 fps) → :class:`GestureResult`: the model's poses,
    decoded, feet planted (:mod:`.standing`), hands lifted on stressed
    speech (:mod:`.gesture_space`; into a style clip's hand places when
    ``body`` has one) and moved by ``body``'s emotion/style layer
    (:mod:`.style_take`)."""
    from .style_take import hand_target, style_take

    res, stress = standing_gesture(model, feats, amount=amount, seed=seed, progress=progress, cancelled=cancelled)
    res.motion = lift_hands(res.motion, stress, amount, talking=res.speech, target=hand_target(body))
    res.motion = style_take(res.motion, body, model.finger_basis)
    return res


def standing_gesture(model: GestureModel, feats, *, amount: float = 0.5, seed: int = 0, progress=None,
                     cancelled=None):
    """The steps of :func:`gesture_from_features` before the hands are
    lifted: ``(GestureResult, stress [T] 0..1)``, the motion decoded, settled
    where the speech's onsets are sparse (:mod:`.speech_rhythm`) and with its
    feet planted, and the stress envelope the lift follows."""
    poses, pulse, energy, speech = generate_from_features(model, feats, amount=amount, seed=seed,
                                                          progress=progress, cancelled=cancelled)
    decoded = representation.decode(poses, FPS, model.finger_basis)
    # Steps follow the model's own weight shifts, not the settling's livelier pelvis.
    motion = plant_feet(settle_with_speech(decoded, feats.onset_times, talking=speech), steps_from=decoded)
    stress = stress_envelope(energy, pulse, speech, model.energy_map["rest_energy"], FPS)
    return GestureResult(poses, motion, pulse, energy, speech), stress
