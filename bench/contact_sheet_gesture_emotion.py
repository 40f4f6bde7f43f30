"""Contact sheet of the body's emotions (issue #29): the same speech, seed and
frames on the Ready Player Me avatar, one row per take, top to bottom
neutral, happy:1, sad:1, angry:1 (columns = time). Cycles on the CPU.

    .venv/bin/python bench/contact_sheet_gesture_emotion.py --out bench/img [--seconds 8] [--every 40]
"""

import argparse
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="rigmind-sheets-"))

import bpy  # noqa: E402
import numpy as np  # noqa: E402
import soundfile as sf  # noqa: E402

from rigmind.backend import paths  # noqa: E402
from rigmind.evaluation.gesture_viewer import load_rig  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling script's camera and image helpers
from contact_sheets_gesture import _body_camera, _png, _save  # noqa: E402

TAKES = (("neutral", ()), ("happy", ("happy:1",)), ("sad", ("sad:1",)), ("angry", ("angry:1",)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=paths.data_dir())
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--every", type=int, default=40, help="frames between panels")
    ap.add_argument("--lang", default="silero_en.wav")
    args = ap.parse_args()
    from rigmind.backend.emotion.timeline import parse_emotions
    from rigmind.backend.requests.gesture import GestureRequest
    from rigmind.operators import gesture_scene
    from rigmind.operators.render import render

    args.out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp())
    x, sr = sf.read(args.data / "speech_multilingual" / args.lang, dtype="float32")
    wav = tmp / args.lang
    sf.write(wav, x[: int(args.seconds * sr)], sr)
    rows = []
    for label, emo in TAKES:
        arm, _ = load_rig("rpm", args.data)
        res = gesture_scene.generate_gesture_on_rig(arm, GestureRequest(audio_path=wav, seed=0,
                                                                        emotion=parse_emotions(list(emo))))
        scene = bpy.context.scene
        frames = list(range(args.every, res.frames + 1, args.every))
        panels = []
        for f in frames:
            scene.frame_set(f)
            if not panels:
                scene.camera = _body_camera(arm)
            panels.append(_png(render(tmp / f"{label}{f}.png", resolution=(200, 300), samples=4, targets=[arm])))
        rows.append(np.concatenate(panels, axis=1))
        print(label, "frames", frames, flush=True)
    out = args.out / f"gesture_emotions_rpm_{Path(args.lang).stem}.png"
    _save(np.concatenate(rows[::-1], axis=0), out)  # Blender images are stored bottom row first
    print("wrote", out)


if __name__ == "__main__":
    main()
