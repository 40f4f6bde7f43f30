"""Write a FaceAnimation as JSON or as a Live Link Face-style CSV.

The CSV has the columns the iPhone Live Link Face app records (Timecode,
BlendShapeCount, 52 blendshapes with a capitalised first letter in the
app's order, then head and eye rotations, here 0), so the same curves drive
Unreal's Live Link / MetaHuman pipelines or any tool that reads those files.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

# Live Link Face column order (differs from Apple's enum order: JawRight
# before JawLeft, MouthRight before MouthLeft).
LIVE_LINK_ORDER = [
    "eyeBlinkLeft", "eyeLookDownLeft", "eyeLookInLeft", "eyeLookOutLeft", "eyeLookUpLeft", "eyeSquintLeft",
    "eyeWideLeft", "eyeBlinkRight", "eyeLookDownRight", "eyeLookInRight", "eyeLookOutRight", "eyeLookUpRight",
    "eyeSquintRight", "eyeWideRight", "jawForward", "jawRight", "jawLeft", "jawOpen", "mouthClose", "mouthFunnel",
    "mouthPucker", "mouthRight", "mouthLeft", "mouthSmileLeft", "mouthSmileRight", "mouthFrownLeft",
    "mouthFrownRight", "mouthDimpleLeft", "mouthDimpleRight", "mouthStretchLeft", "mouthStretchRight",
    "mouthRollLower", "mouthRollUpper", "mouthShrugLower", "mouthShrugUpper", "mouthPressLeft", "mouthPressRight",
    "mouthLowerDownLeft", "mouthLowerDownRight", "mouthUpperUpLeft", "mouthUpperUpRight", "browDownLeft",
    "browDownRight", "browInnerUp", "browOuterUpLeft", "browOuterUpRight", "cheekPuff", "cheekSquintLeft",
    "cheekSquintRight", "noseSneerLeft", "noseSneerRight", "tongueOut",
]
EXTRA_COLUMNS = ["HeadYaw", "HeadPitch", "HeadRoll", "LeftEyeYaw", "LeftEyePitch", "LeftEyeRoll",
                 "RightEyeYaw", "RightEyePitch", "RightEyeRoll"]


def timecode(frame: int, fps: float) -> str:
    """``HH:MM:SS:FF.mmm`` (frame within the second, then the sub-frame in thousandths)."""
    t = frame / fps
    whole = int(np.floor(t + 1e-9))
    ff = frame - int(round(whole * fps))
    h, m, s = whole // 3600, (whole // 60) % 60, whole % 60
    return f"{h:02d}:{m:02d}:{s:02d}:{ff:02d}.000"


def write_csv(anim, path) -> Path:
    path = Path(path)
    col = {n: i for i, n in enumerate(anim.names)}
    head = ["Timecode", "BlendShapeCount"] + [n[0].upper() + n[1:] for n in LIVE_LINK_ORDER] + EXTRA_COLUMNS
    count = len(LIVE_LINK_ORDER) + len(EXTRA_COLUMNS)
    w = np.asarray(anim.weights)
    lines = [",".join(head)]
    order = [col[n] for n in LIVE_LINK_ORDER]
    for f in range(len(w)):
        vals = ",".join(f"{v:.4f}" for v in w[f, order])
        lines.append(f"{timecode(f, anim.fps)},{count},{vals}," + ",".join(["0"] * len(EXTRA_COLUMNS)))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_json(anim, path) -> Path:
    path = Path(path)
    path.write_text(json.dumps(anim.to_dict()), encoding="utf-8")
    return path


def write_animation(anim, path) -> Path:
    """``.json`` or ``.csv`` by suffix."""
    suffix = Path(path).suffix.lower()
    if suffix == ".json":
        return write_json(anim, path)
    if suffix == ".csv":
        return write_csv(anim, path)
    raise ValueError(f"{path}: face curves are written as .json or .csv")
