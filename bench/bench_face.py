"""Time the face issue's speed figure: 60 s of speech → 52 ARKit curves
(loading, features + voice activity, the learned model, co-articulation,
blinks/brows), and the same through the Rhubarb-style table path.

    .venv/bin/python bench/bench_face.py [--data ../shared/data] [--threads 2]

Audio: the first 60 s of BEAT2 take 2_scott_0_2_2.wav (real speech).
"""

import argparse
import os
import statistics
import time
from pathlib import Path



def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    from rigmind.backend.audio.loading import clip_from_array, load_audio
    from rigmind.backend.face.generate import generate_face
    from rigmind.backend.face.model import load_default_model

    src = load_audio(args.data / "beat2_speech_gesture_sample" / "2_scott_0_2_2.wav")
    clip = clip_from_array(src.samples[: 60 * 16000], 16000)
    model = load_default_model()
    generate_face(clip, method="model", model=model)     # warm-up (model load, VAD session)
    for method in ("model", "words", "table"):
        times = []
        for _ in range(args.repeats):
            t = time.perf_counter()
            anim = generate_face(clip, method=method, model=model)
            times.append(time.perf_counter() - t)
        print(f"{method}: 60 s of speech -> {anim.weights.shape} curves in {statistics.median(times):.2f} s median "
              f"(min {min(times):.2f}, {args.threads} threads, {os.cpu_count()} cores)")
    t = time.perf_counter()
    from rigmind.backend.audio.features import speech_features

    speech_features(clip, 100.0)
    print(f"  of which features + VAD: {time.perf_counter() - t:.2f} s")


if __name__ == "__main__":
    main()
