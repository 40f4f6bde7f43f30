"""Speech → ARKit-52 face animation (lip-sync, jaw, blinks, brows, smile).

``generate_face`` picks the viseme timeline from the best available source:

1. a transcript → pocketsphinx forced alignment (phones with exact words);
2. otherwise ``method="model"``: the learned audio → viseme networks
   (an ensemble of three, ``models/face.pt``, ``face_seed1.pt``,
   ``face_seed2.pt``; any language);
3. or ``method="table"``: pocketsphinx allphone recognition (the
   Rhubarb-style baseline).

The timeline goes through co-articulation (``coarticulation.py``), the jaw
follows loudness, every mouth shape is gated by voice activity, and the
non-verbal layer adds blinks, brows, squint and the smile.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...presets import arkit52_names
from .. import options
from ..audio import AudioClip, load_audio
from ..audio.features import speech_features
from . import coarticulation
from .emotion import blend_emotion, emotion_weights_for
from .nonverbal import nonverbal_curves, prominence
from .visemes import arpabet_to_viseme, viseme_names

ANALYSIS_FPS = 100.0
METHODS = options.FACE_METHODS


@dataclass
class FaceAnimation:
    """``weights [F, 52]`` float32 0..1 for ``names`` (the ARKit 52, canonical
    order) at ``fps``; ``jaw_rotation [F]`` radians (jaw-bone opening);
    ``visemes``: ``[(start_s, end_s, viseme)]``; ``phones``: the recognised or
    aligned ARPAbet phones (empty for the model); ``source``: "alignment",
    "model" or "allphone"; ``notes``: anything the user should know."""

    names: list
    weights: np.ndarray
    jaw_rotation: np.ndarray
    fps: float
    visemes: list = field(default_factory=list)
    phones: list = field(default_factory=list)
    source: str = ""
    notes: list = field(default_factory=list)

    @property
    def num_frames(self) -> int:
        return len(self.weights)

    def curve(self, name: str) -> np.ndarray:
        return self.weights[:, self.names.index(name)]

    def to_dict(self) -> dict:
        return {
            "format": "rigmind-face-1",
            "fps": self.fps,
            "names": list(self.names),
            "weights": np.round(self.weights, 4).tolist(),
            "jaw_rotation_radians": np.round(self.jaw_rotation, 4).tolist(),
            "visemes": [[round(a, 3), round(b, 3), v] for a, b, v in self.visemes],
            "phones": [[round(a, 3), round(b, 3), p] for a, b, p in self.phones],
            "source": self.source,
            "notes": list(self.notes),
        }


def transcript_beside(audio_path) -> str | None:
    """The text of ``NAME.txt`` next to ``NAME.wav`` (or any audio), if present."""
    if not audio_path:
        return None
    p = Path(audio_path).with_suffix(".txt")
    if p.is_file():
        text = p.read_text(encoding="utf-8", errors="replace").strip()
        return text or None
    return None


def at_frames(a: np.ndarray, n: int, fps: float) -> np.ndarray:
    """Sample a 100 fps array at ``n`` frames of ``fps`` (nearest analysis frame)."""
    idx = np.clip(np.round(np.arange(n) * ANALYSIS_FPS / fps).astype(int), 0, len(a) - 1)
    return a[idx]


def phones_to_visemes(phones: list) -> list:
    """ARPAbet ``[(s, e, phone)]`` → ``[(s, e, viseme)]`` with equal neighbours merged."""
    out = []
    for s, e, p in phones:
        v = arpabet_to_viseme(p)
        if out and out[-1][2] == v and abs(out[-1][1] - s) < 1e-6:
            out[-1] = (out[-1][0], e, v)
        else:
            out.append((s, e, v))
    return out


def generate_face(audio, *, transcript: str | None = None, fps: float = 30.0, seed: int = 0, smile: float = 0.0,
                  method: str = "model", model=None, runtime: str = None,
                  emotion=None) -> FaceAnimation:
    """``audio`` (an ``AudioClip`` or a file path) → ``FaceAnimation`` at ``fps``.

    ``transcript``: the spoken text (improves timing and p/b/m closures);
    ``seed``: blinks and gaze; ``smile`` 0..1; ``method`` (used when there
    is no transcript): "model" (the learned model: fast, any language),
    "words" (English word recognition, then forced alignment: ~3x fewer
    viseme errors on English, ~15x slower; falls back to the model where it
    recognises nothing) or "table" (phone recognition + table, the
    Rhubarb-style baseline); ``model``: a loaded ``FaceModel`` (default: the committed ensemble
    in ``runtime``, "onnxruntime" by default or "torch"); ``emotion``: an
    ``EmotionTimeline`` (None: neutral) blended over the take
    (``emotion.blend_emotion``)."""
    if method not in METHODS:
        raise ValueError(f"unknown face method {method!r}; use one of {', '.join(METHODS)}")
    clip = audio if isinstance(audio, AudioClip) else load_audio(audio)
    notes = []
    feats = speech_features(clip, ANALYSIS_FPS, with_onsets=False)
    n = max(int(np.ceil(clip.seconds * fps)), 1)
    emotion_w = emotion_weights_for(emotion, n, fps, clip.seconds)   # a bad range fails before the work
    # Voice activity on the output frames themselves (not resampled from the
    # 100 fps grid): "mouth at rest in non-speech" then holds frame by frame.
    from ..audio.features import speech_mask

    speech = np.zeros(n, bool) if clip.silent else speech_mask(clip.samples, fps, n)
    energy = at_frames(feats.energy, n, fps)
    phones, visemes, source, jaw_model = [], [], "", None

    if transcript and transcript.strip() and not clip.silent:
        from .sphinx import align_transcript

        phones = align_transcript(clip.samples, transcript) or []
        if phones:
            visemes, source = phones_to_visemes(phones), "alignment"
        else:
            notes.append("the transcript could not be aligned to the audio; generated without it")
    if not source and method == "words" and not clip.silent:
        from .sphinx import recognise_and_align

        phones = recognise_and_align(clip.samples)
        if phones:
            visemes, source = phones_to_visemes(phones), "recognition"
        else:
            notes.append("no English words were recognised; used the learned model")
    if method in ("model", "words"):
        from .model import load_default_model

        m = model if model is not None else load_default_model(runtime)
        if m is None:
            if not source:
                notes.append("no trained face model (models/face*.pt); used the phone-recognition table instead")
        elif not source or source == "recognition":
            post, jaw100 = m.predict_features(feats)
            # The jaw head learned the real speaker's jaw (BEAT2): recognised
            # words give the mouth shapes, the network still opens the jaw.
            jaw_model = at_frames(jaw100, n, fps)
            if not source:
                labels = m.decode(post)
                names = viseme_names()
                visemes = [(a, b, names[v]) for a, b, v in coarticulation.segments_from_labels(labels, ANALYSIS_FPS)]
                source = "model"
    if not source:
        from .sphinx import recognise_phones

        phones = [] if clip.silent else recognise_phones(clip.samples)
        visemes, source = phones_to_visemes(phones), "allphone"

    gate = coarticulation.speech_gate(speech, fps)
    mouth = coarticulation.curves_from_segments(visemes, n, fps, gain=coarticulation.loudness_gain(energy), gate=gate)
    if jaw_model is not None:
        j = arkit52_names().index("jawOpen")
        # The network's jaw head was trained on real jaw motion (BEAT2) and
        # phone-derived openness; averaging with the table keeps the seals.
        seal_free = mouth[:, j] > 0.02
        mouth[:, j] = np.where(seal_free, 0.5 * mouth[:, j] + 0.5 * np.clip(jaw_model, 0, 1) * gate,
                               mouth[:, j])
    face = nonverbal_curves(n, fps, pitch=at_frames(feats.pitch, n, fps), energy=energy, onset=at_frames(feats.onset, n, fps),
                            voiced=at_frames(feats.voiced, n, fps), speech=speech, seed=seed, smile=float(smile))
    weights = np.clip(np.maximum(mouth, face), 0.0, 1.0).astype(np.float32)
    if emotion_w is not None:
        stress = prominence(at_frames(feats.pitch, n, fps), energy, at_frames(feats.onset, n, fps), at_frames(feats.voiced, n, fps), speech)
        weights = blend_emotion(weights, emotion_w, fps, stress=stress, seed=seed)
    return FaceAnimation(arkit52_names(), weights, coarticulation.jaw_rotation(weights), float(fps), visemes, phones, source, notes)


def generate_face_for(audio, request) -> FaceAnimation:
    """:func:`generate_face` with what a
    :class:`~rigmind.backend.requests.face.FaceRequest` asks (its transcript,
    frame rate, seed, smile, emotion, lip-sync method and runtime;
    ``request.fps`` must be set)."""
    r = request
    return generate_face(audio, transcript=r.transcript, fps=r.fps, seed=r.seed, smile=r.smile, method=r.method,
                         runtime=r.runtime, emotion=r.emotion)
