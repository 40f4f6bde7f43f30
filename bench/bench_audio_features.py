"""Time the audio front end: 60 s of speech → speech features at 30 fps
(log-mel, onset, energy, pitch, voicing, voice activity), in one process.

"first" is the first call (imports, the VAD's ONNX session, librosa's JIT
caches where used); "warm" is the median of later calls with any per-clip
cache cleared, i.e. the work itself. Runs with any checkout's interpreter:

    /work/main/.venv/bin/python bench/bench_audio_features.py SPEECH.wav
    .venv/bin/python bench/bench_audio_features.py SPEECH.wav
"""

import json
import statistics
import sys
import time

t0 = time.perf_counter()
from rigmind.backend.audio import load_audio  # noqa: E402
from rigmind.backend.audio import features as F  # noqa: E402


def main():
    clip = load_audio(sys.argv[1])
    t = time.perf_counter()
    F.speech_features(clip, 30.0)
    first = time.perf_counter() - t
    warm = []
    for _ in range(5):
        getattr(F, "_CACHE", {}).clear()
        t = time.perf_counter()
        F.speech_features(clip, 30.0)
        warm.append(time.perf_counter() - t)
    print("RESULT " + json.dumps({"seconds_of_audio": clip.seconds, "first_call_s": first,
                                  "warm_median_s": statistics.median(warm), "warm_min_s": min(warm),
                                  "librosa_imported": "librosa" in sys.modules,
                                  "process_s": time.perf_counter() - t0}))


if __name__ == "__main__":
    main()
