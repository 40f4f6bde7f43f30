"""Time the gesture issue's speed and memory figures.

1. 60 s of speech → keyframes on a rig, in one process after Blender and
   torch are imported (cold: the first call, which loads the model; warm:
   a second call), split into audio load + features, model, and scene
   (retarget + keys). The rig is the X Bot (65 bones) when present, else the
   mannequin (55 bones).
2. A 10-minute file (the 60 s speech tiled) through the backend in a fresh
   process: peak RSS (ru_maxrss), and the seam periodicity and mean
   upper-body acceleration of minute 1 against minute 9 (issue #13).

    .venv/bin/python bench/bench_gesture.py [--data ../shared/data]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="rigmind-bench-"))

import bpy  # noqa: E402,F401
import numpy as np  # noqa: E402
import soundfile as sf  # noqa: E402
import torch  # noqa: E402

from bench_rig import load_bench_rig  # noqa: E402
from rigmind.backend import paths  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def speech_60s(data: Path, out: Path) -> Path:
    wav = data / "beat2_speech_gesture_sample" / "2_scott_0_2_2.wav"
    if wav.exists():
        x, sr = sf.read(wav, dtype="float32")
        x = x[: 60 * sr]
    else:  # no data: synthesised speech
        from rigmind.backend.face.espeak import synthesize

        s = synthesize("We keep going, every day, and we make it better. " * 12, "en-us")
        x, sr = np.resize(s.samples, 60 * s.sample_rate), s.sample_rate
    sf.write(out, x, sr)
    return out


def one_run(arm, wav):
    from rigmind.backend.audio import load_audio
    from rigmind.backend.audio.features import speech_features
    from rigmind.backend.gesture.generate import gesture_from_features, get_model
    from rigmind.backend.requests.retarget import RetargetRequest
    from rigmind.operators import gesture_scene

    t0 = time.perf_counter()
    model = get_model()
    t1 = time.perf_counter()
    clip = load_audio(wav)
    feats = speech_features(clip, 30.0)
    t2 = time.perf_counter()
    motion = gesture_from_features(model, feats, seed=0).motion  # model, decoding, feet, hands
    t3 = time.perf_counter()
    from rigmind.operators.retarget_scene import retarget_onto

    retarget_onto(arm, motion, gesture_scene.smplx_source_map(), RetargetRequest(action_name="bench", set_scene_fps=True))
    t4 = time.perf_counter()
    return {"model_load": t1 - t0, "audio_features": t2 - t1, "model": t3 - t2, "scene": t4 - t3, "total": t4 - t0}


def rss_10min(wav: Path) -> dict:
    long = wav.with_name("speech_10min.wav")
    x, sr = sf.read(wav, dtype="float32")
    sf.write(long, np.tile(x, 10), sr)
    code = ("import resource,time,torch; torch.set_num_threads(2)\n"
            "from rigmind.backend.audio import load_audio\n"
            "from rigmind.backend.gesture.generate import generate_gesture, STRIDE\n"
            "from rigmind.backend.gesture import representation as G, viewer_metrics as VM\n"
            "from rigmind.backend.smplx_motion import smplx_joint_names\n"
            f"t=time.perf_counter(); c=load_audio({str(long)!r}); r=generate_gesture(c)\n"
            "dt=time.perf_counter()-t; rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            "n=list(smplx_joint_names()); P=r.motion.world_positions()[:, [n.index(j) for j in G.UPPER]]\n"
            "m1, m9 = P[0:1800], P[8 * 1800:9 * 1800]\n"
            "print(r.motion.num_frames, dt, rss, VM.seam_periodicity(m1, STRIDE), VM.seam_periodicity(m9, STRIDE),"
            " VM.acceleration(m1).mean(), VM.acceleration(m9).mean())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    return {"frames": int(out[0]), "seconds": float(out[1]), "peak_rss_mb": int(out[2]) / 1024,
            "seam_minute_1": float(out[3]), "seam_minute_9": float(out[4]),
            "mean_accel_minute_1_mm_per_frame2": 1000 * float(out[5]),
            "mean_accel_minute_9_mm_per_frame2": 1000 * float(out[6])}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=paths.data_dir(), help="the shared data ($RIGMIND_DATA, else ../shared/data)")
    args = ap.parse_args()
    torch.set_num_threads(2)
    tmp = Path(tempfile.mkdtemp())
    wav = speech_60s(args.data, tmp / "speech_60s.wav")
    arm = load_bench_rig(args.data)
    rig_name = arm.name
    cold = one_run(arm, wav)
    warm = one_run(arm, wav)
    mem = rss_10min(wav)
    res = {"rig": rig_name, "bones": len(arm.data.bones), "cold": cold, "warm": warm, "ten_minutes": mem,
           "threads": torch.get_num_threads(), "cpus": os.cpu_count()}
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
