"""How the gesture decoder is run: a 60-s take's generation under three ONNX Runtime set-ups, in one process.

The beat search (``backend/gesture/beat_search.py``) runs the decoder about
five times per window: once for the take as first drawn, then once for
each of four candidate draws. Each run is one 64-frame window, ~1.5 ms of
convolutions, so how the runtime's threads wait between its operators and
between runs is a fair share of the time. Set-ups, taken in turn for
``--rounds`` rounds (the first round is left out of the medians):

- no spinning, one run after another: the session as it was (idle pool
  threads sleep);
- spinning within runs (``session.force_spinning_stop``: the pool threads
  stop spinning when a run ends), one run after another;
- spinning within runs, and a window's candidate draws decoded side by side
  on two one-thread sessions (``_OrtDecoder.many``, today's default).

The takes must come out identical (printed), since each set-up computes
the same convolutions.

    PYTHONPATH=/tmp/pkg .venv/bin/python bench/bench_gesture_decoder.py [--rounds 6]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import time
from pathlib import Path

import numpy as np

from rigmind.backend import paths
from rigmind.backend.audio.features import speech_features
from rigmind.backend.audio.loading import load_audio
from rigmind.backend.gesture.generate import FPS, generate_from_features, get_model
from rigmind.backend.model_files.loading import onnx_session

SECONDS = 60


def features_60s(data: Path):
    """The BEAT2 speech-only take 2_scott_0_2_2's first 60 s as speech features."""
    clip = load_audio(data / "beat2_speech_gesture_sample" / "2_scott_0_2_2.wav")
    return speech_features(dataclasses.replace(clip, samples=clip.samples[:SECONDS * clip.sample_rate]), FPS)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=paths.data_dir())
    ap.add_argument("--rounds", type=int, default=6)
    a = ap.parse_args(argv)
    feats = features_60s(a.data)
    model = get_model(runtime="onnxruntime")
    net = model.net
    spinning, lanes = net.session, net.many
    one_by_one = lambda inputs: [net(*args) for args in inputs]  # noqa: E731
    setups = {"no spinning, one after another": (onnx_session(net.path, "gesture model", threads=2), one_by_one),
              "spinning within runs, one after another": (spinning, one_by_one),
              "spinning within runs, candidates side by side (default)": (spinning, lanes)}
    seconds = {k: [] for k in setups}
    takes = {}
    for r in range(a.rounds):
        for name, (session, many) in setups.items():
            net.session, net.many = session, many
            t0 = time.perf_counter()
            poses = generate_from_features(model, feats, seed=r % 3)[0]
            seconds[name].append(time.perf_counter() - t0)
            takes.setdefault(r, []).append(poses)
    net.session, net.many = spinning, lanes
    print(f"{platform.machine()}, {os.cpu_count()} cores; {time.strftime('%Y-%m-%d %H:%M')}; "
          f"generation of a {SECONDS}-s take (seeds 0-2 in turn), {a.rounds} rounds, the first left out")
    base = float(np.median(seconds["no spinning, one after another"][1:]))
    for name, s in seconds.items():
        med = float(np.median(s[1:]))
        print(f"  {name}: median {med:.3f} s (min {min(s[1:]):.3f}), {med / base:.2f}x; runs "
              + ", ".join(f"{x:.3f}" for x in s))
    same = all(np.array_equal(t[0], other) for t in takes.values() for other in t[1:])
    print("  the same takes from every set-up:", same)
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
