"""Speech audio front end: loading any common file to mono 16 kHz, voice
activity, and per-frame features for the gesture and face models."""

from .loading import AudioClip, AudioError, load_audio, SAMPLE_RATE  # noqa: F401
