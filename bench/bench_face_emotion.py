"""Face emotion (#29) acceptance on held-out voices: whole ``rigmind face``
processes, neutral and each emotion at weight 1.

    PYTHONPATH=<folder holding rigmind> .venv/bin/python bench/bench_face_emotion.py [--data ../shared/data]

Voices: every ``speech_multilingual/*.wav`` (6 speakers, 5 languages, the
learned model, no transcript) and four LJSpeech clips with their transcripts
(forced alignment: the p/b/m phones for the seal check). None of them was
used to design the expression targets (that was done on the BEAT2 takes
2_scott_0_2_2 … 0_5_5). Per emotion: the mean over clips of (emotion −
neutral) for the issue's channels, the JawOpen–loudness Pearson r, and on
the LJSpeech clips the share of p/b/m phones with the lips closed
(``backend.face.metrics.bilabial_closure``) and the mean lip-opening weight
(mouthUpperUp/LowerDown/Stretch/Funnel) on sealed frames. Writes
``bench/results/face_emotion.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

SHEET = ("\n## Contact sheet\n\n`PYTHONPATH=<folder holding rigmind> .venv/bin/python bench/contact_sheet_face_emotion.py` "
         "renders the Ready Player Me avatar (Cycles, 256 px cells): [../img/face_emotion_sheet.png]"
         "(../img/face_emotion_sheet.png), rows neutral, happy, sad, angry, columns the widest vowel, a p/b/m seal "
         "and a pause of BEAT2 2_scott_0_2_2 (a tuning take); [../img/face_emotion_sheet_pause.png]"
         "(../img/face_emotion_sheet_pause.png), the pause enlarged. What it shows is in "
         "[docs/face.md](../../docs/face.md#emotion).\n")


def run_face(wav: Path, out: Path, emotion: str | None, transcript: str | None) -> dict:
    cmd = [sys.executable, "-m", "rigmind", "face", "--audio", str(wav), "--out", str(out)]
    if emotion:
        cmd += ["--emotion", f"{emotion}:1"]
    if transcript:
        cmd += ["--transcript", transcript]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {r.stderr.strip()}")
    return json.loads(out.read_text())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results" / "face_emotion.md")
    args = ap.parse_args()
    from rigmind.backend.face import emotion_eval
    from rigmind.backend.face.eval import read_lj_metadata

    clips = emotion_eval.voices(args.data, dict(read_lj_metadata(args.data / "speech_english_ljspeech" / "metadata.csv")))
    t0 = time.time()
    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench_face_emotion_{os.getpid()}"
    tmp.mkdir(parents=True, exist_ok=True)
    rows = []
    for wav, text in clips:
        res = {e: run_face(wav, tmp / f"{e}.json", None if e == "neutral" else e, text)
               for e in ("neutral",) + emotion_eval.EMOTIONS}
        takes = {e: (d["names"], d["weights"], d["fps"], d["phones"]) for e, d in res.items()}
        rows.append(emotion_eval.evaluate_voice(wav, text, takes=takes))
        print(f"  {wav.name}: done ({time.time() - t0:.0f} s)", flush=True)
    lines = [emotion_eval.markdown({"voices": rows, "emotions": list(emotion_eval.EMOTIONS)}).rstrip("\n")]
    cpu = "unknown CPU"
    try:
        cpu = next(ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    md = (f"# Face emotion\n\nWhat [docs/face.md](../../docs/face.md#emotion) quotes.\n\n"
          f"Command: `PYTHONPATH=<folder holding rigmind> .venv/bin/python bench/bench_face_emotion.py`\n"
          f"({cpu}, {os.cpu_count()} cores, {platform.system()}, Python {platform.python_version()}; {stamp}; "
          f"{time.time() - t0:.0f} s). Each number comes from whole `rigmind face --audio A [--emotion NAME:1] "
          f"--out A.json` processes on {len(clips)} held-out clips: {', '.join(p.name for p, _ in clips)} "
          f"(the LJSpeech ones with their transcripts).\n\n" + "\n".join(lines) + "\n\n"
          "- Loudness is the frame energy (dBFS) the lip sync itself reads. jawOpen and mouthClose are never "
          "written by the emotion blend, so the jaw and the seals are the neutral take's exactly.\n"
          "- Lip-opening weight: the mean of mouthUpperUp/LowerDown/Stretch (L, R) and mouthFunnel on the frames "
          "the neutral take seals (mouthClose ≥ 0.1, as the closure metric).\n"
          f"{SHEET}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(md, encoding="utf-8")
    print(md)


if __name__ == "__main__":
    main()
