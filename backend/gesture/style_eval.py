"""``rigmind eval gesture --styles``: the body's emotions and styles (issue
#29) measured on held-out voices, in-process on the generated SMPL-X motion.

- Emotions: mean wrist speed (m/s) and median wrist height (m above the
  ankles' 1st percentile) of ``--emotion E:1`` takes, as ratio / difference
  to the same voice's neutral take (acceptance: happy ≥ 1.1× neutral's
  speed, sad ≤ 0.9×, sad hands lower than happy). ``bench/bench_gesture_style.py``
  measures the same with :func:`hand_stats` on BVH files exported to rigs.
- Classifier: the style classifier (trained on REAL Bandai clips only,
  ``models/gesture_styles.npz``) on ``--style S`` takes, per style
  (acceptance: ≥ 80 % each).
- Style clip: 1-D Wasserstein distances (:func:`.style_clip.distances`) of a
  take's distributions to a speaker's (:func:`speakers`: held-out Bandai
  clips read from their BVH files, the BEAT2 take's held-out last 20 %),
  without and with ``--style-clip``.

Voices: :data:`.alignment_eval.HELDOUT_VOICES` (never tuned on; the style
layer's settings were chosen on the BEAT2 speech-only takes
2_scott_0_2_2 … 0_5_5). Seed 0. Units: metres, seconds; Blender Z up.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np

from ..errors import UserError
from .alignment_eval import HELDOUT_VOICES

EMOTIONS = ("neutral", "happy", "sad", "angry")
#: emotion: (lowest, highest) speed ratio to neutral, the issue's acceptance.
SPEED_CHECKS = {"happy": (1.1, None), "sad": (None, 0.9)}
CLASSIFIER_NEED = 0.8
CLIP_KEYS = ("height_cm", "forward_cm", "lateral_cm", "speed_pct", "finger_pca")


def hand_stats(pos: np.ndarray, hands, feet, fps: float) -> tuple:
    """``(mean wrist speed m/s, median wrist height m above the floor)`` of
    world positions ``pos [T, J, 3]`` (Z up); ``hands``/``feet``: joint
    indices; the floor is the feet's 1st height percentile."""
    floor = np.percentile(pos[:, feet, 2], 1)
    w = pos[:, hands]
    speed = np.linalg.norm(np.diff(w, axis=0), axis=-1).mean() * fps
    return float(speed), float(np.median(w[..., 2]) - floor)


def voice_features(wav, seconds: float = None):
    """Speech features of a wav's first ``seconds`` (None: all) at the gesture rate."""
    from ..audio import load_audio
    from ..audio.features import speech_features
    from .generate import FPS

    clip = load_audio(wav)
    if seconds:
        clip.samples = clip.samples[: int(round(seconds * clip.sample_rate))]
    return speech_features(clip, FPS)


def emotion_hands(model, feats, voice: str = "") -> list:
    """Rows ``{voice, emotion, wrist_speed, wrist_height, speed_ratio,
    height_diff_cm}`` of :data:`EMOTIONS` at weight 1 on one voice."""
    from ..emotion.timeline import parse_emotions
    from .generate import gesture_from_features
    from .style_layer import BodyStyle

    rows, base = [], None
    for emo in EMOTIONS:
        body = None if emo == "neutral" else BodyStyle(emotion=parse_emotions([f"{emo}:1"]))
        m = gesture_from_features(model, feats, seed=0, body=body).motion
        names = m.skeleton.names
        speed, height = hand_stats(m.world_positions(), [names.index("left_wrist"), names.index("right_wrist")],
                                   [names.index("left_ankle"), names.index("right_ankle")], m.fps)
        base = base or (speed, height)
        rows.append({"voice": voice, "emotion": emo, "wrist_speed": speed, "wrist_height": height,
                     "speed_ratio": speed / base[0], "height_diff_cm": 100 * (height - base[1])})
    return rows


def load_classifier():
    """``(StyleClassifier, {style: (held-out real accuracy, clips)})`` from the committed file."""
    from .style_classifier import StyleClassifier
    from .style_layer import STYLE_FILE

    z = np.load(STYLE_FILE)
    real = {str(s): (float(a), int(n)) for s, a, n in zip(z["val_styles"], z["val_accuracy"], z["val_clips"])}
    return StyleClassifier.from_arrays(z), real


def classify_voice(model, clf, feats) -> tuple:
    """``(call on the neutral take, {style: call on its --style take})`` of one voice."""
    from ..options import GESTURE_STYLES
    from .generate import gesture_from_features
    from .style_layer import BodyStyle
    from .style_take import style_take

    base = gesture_from_features(model, feats, seed=0).motion
    neutral = clf.classify_motion(base.rotations, base.root_positions, 30.0)
    # = gesture_from_features(..., body=BodyStyle(style=s)): without a clip
    # the style is applied after the same lifted take.
    calls = {}
    for s in GESTURE_STYLES:
        m = style_take(base, BodyStyle(style=s))
        calls[s] = clf.classify_motion(m.rotations, m.root_positions, 30.0)
    return neutral, calls


def speakers(data, styles=("elderly", "active", "exhausted")) -> dict:
    """Style-clip speakers ``{label: ClipStyle}``: the longest held-out Bandai
    clip (dataset 2) of each style (read from its BVH file, as
    --style-clip reads it) and the BEAT2 take's held-out last 20 % (with fingers)."""
    from .. import rotations
    from ..bone_mapping import auto_map
    from ..bvh import read_bvh
    from ..smplx_motion import read_smplx_npz
    from .dataset import HOLDOUT
    from .representation import finger_index
    from .style_clip import clip_style, from_smplx
    from .style_data import find_styled, parse_name, split_of

    out = {}
    files = [f for f in find_styled(data) if split_of(*[parse_name(f.name)[i] for i in (0, 1, 3)]) == "validation"]
    for style in styles:
        fs = [f for f in files if parse_name(f.name)[2] == style and parse_name(f.name)[0] == 2]
        f = max(fs, key=lambda p: read_bvh(p).num_frames)
        m = read_bvh(f)
        out[f"Bandai {f.name.split('.')[0]}"] = clip_style(m, auto_map(m.skeleton).bones, f.name)
    real = read_smplx_npz(Path(data) / "beat2_speech_gesture_sample/2_scott_0_1_1.npz")
    cut = int(round(real.num_frames * (1 - HOLDOUT)))
    rot, root = real.rotations[cut:], real.root_positions[cut:]
    aa = rotations.to_axis_angle(rot[:, finger_index()]).reshape(len(rot), -1)
    out["BEAT2 2_scott_0_1_1 held-out 20 %"] = from_smplx(rot, root, real.fps, aa, "2_scott_0_1_1 tail")
    return out


def clip_distances(model, feats, clip) -> dict:
    """``{"without": distances, "with": distances}`` of one voice's take to ``clip``."""
    from .generate import gesture_from_features
    from .style_clip import distances
    from .style_layer import BodyStyle

    without = gesture_from_features(model, feats, seed=0).motion
    with_ = gesture_from_features(model, feats, seed=0, body=BodyStyle(clip=clip)).motion
    return {"without": distances(without, clip, model.finger_basis), "with": distances(with_, clip, model.finger_basis)}


def evaluate_styles(data_dir, *, voices=HELDOUT_VOICES, seconds: float = None, clip_voices: int = None,
                    log=print) -> dict:
    """All three parts on ``voices`` (paths under ``data_dir``; missing ones
    skipped), each cut to its first ``seconds`` (None: whole); the style clip
    on the first ``clip_voices`` of them (None: all)."""
    from .generate import get_model

    data_dir = Path(data_dir)
    given, voices = voices, [v for v in voices if (data_dir / v).is_file()]
    if not voices:
        raise UserError(f"{data_dir}: none of the evaluation's voices ({given[0]}, …); "
                        "pass --data with the shared data folder")
    model = get_model()
    clf, real = load_classifier()
    spk = speakers(data_dir)
    res = {"voices": voices, "seconds": seconds, "emotion": [],
           "classifier": {"real": real, "generated": {}, "neutral": [], "voices": voices}, "clip": []}
    for k, v in enumerate(voices):
        feats = voice_features(data_dir / v, seconds)
        res["emotion"] += emotion_hands(model, feats, Path(v).name)
        neutral, calls = classify_voice(model, clf, feats)
        res["classifier"]["neutral"].append(neutral)
        for s, c in calls.items():
            res["classifier"]["generated"].setdefault(s, []).append(c)
        if clip_voices is None or k < clip_voices:
            for name, clip in spk.items():
                res["clip"].append({"speaker": name, "voice": Path(v).name, **clip_distances(model, feats, clip)})
        log(f"  {v}: done")
    return res


def sad_below_happy(rows) -> bool:
    """Sad wrists below happy ones on every (rig, voice) of the emotion rows."""
    def key(r):
        return r.get("rig"), r["voice"]

    sad = {key(r): r["wrist_height"] for r in rows if r["emotion"] == "sad"}
    return all(sad[key(r)] < r["wrist_height"] for r in rows if r["emotion"] == "happy")


def summary(res: dict) -> dict:
    """Pass/fail of the issue's checks on :func:`evaluate_styles`'s result."""
    rows = res["emotion"]
    speed = {}
    for emo, (lo, hi) in SPEED_CHECKS.items():
        r = float(np.median([x["speed_ratio"] for x in rows if x["emotion"] == emo]))
        speed[emo] = {"median_ratio": r, "pass": (lo is None or r >= lo) and (hi is None or r <= hi)}
    acc = {s: float(np.mean([x == s for x in calls])) for s, calls in res["classifier"]["generated"].items()}
    return {"speed": speed, "sad_below_happy": sad_below_happy(rows), "classifier_accuracy": acc,
            "classifier_pass": all(a >= CLASSIFIER_NEED for a in acc.values())}


def emotion_markdown(rows) -> list:
    """The emotion table: per (rig,) emotion, speed ratio median (min-max), height."""
    L = ["| rig | emotion | speed ratio (median over voices, min-max) | median wrist height (m, mean) | "
         "height vs neutral (cm, mean) |", "|---|---|---|---|---|"]
    for rig in dict.fromkeys(r.get("rig", "SMPL-X") for r in rows):
        for emo in EMOTIONS:
            rr = [r for r in rows if r.get("rig", "SMPL-X") == rig and r["emotion"] == emo]
            s = [r["speed_ratio"] for r in rr]
            L.append(f"| {rig} | {emo} | {np.median(s):.2f} ({min(s):.2f}-{max(s):.2f}) | "
                     f"{np.mean([r['wrist_height'] for r in rr]):.3f} | "
                     f"{np.mean([r['height_diff_cm'] for r in rr]):+.1f} |")
    L += ["", f"Sad hands below happy hands on every rig and voice: {'yes' if sad_below_happy(rows) else 'NO'}.", ""]
    return L


def classifier_markdown(c: dict) -> list:
    """The classifier table: per style, real held-out and generated accuracy."""
    L = ["| style | real held-out clips | generated takes | most common call on generated |", "|---|---|---|---|"]
    for s, calls in c["generated"].items():
        acc = np.mean([x == s for x in calls])
        ra = c["real"].get(s)
        real = f"{ra[0]:.0%} of {ra[1]}" if ra else "-"
        L.append(f"| {s} | {real} | {acc:.0%} | {Counter(calls).most_common(1)[0][0]} |")
    gen_acc = [np.mean([x == s for x in calls]) for s, calls in c["generated"].items()]
    L += ["", f"Generated takes: {sum(a >= CLASSIFIER_NEED for a in gen_acc)} of {len(gen_acc)} styles at "
          f"{CLASSIFIER_NEED:.0%} or more; mean {np.mean(gen_acc):.0%}. The neutral takes (no style) are called: "
          f"{dict(Counter(c['neutral']))}.", ""]
    return L


def clip_markdown(rows) -> list:
    """The style-clip table: mean distance over voices, without → with."""
    L = ["| speaker | " + " | ".join(CLIP_KEYS) + " |", "|---|" + "---|" * len(CLIP_KEYS)]
    for sp in dict.fromkeys(r["speaker"] for r in rows):
        rr = [r for r in rows if r["speaker"] == sp]
        cells = []
        for k in CLIP_KEYS:
            if k not in rr[0]["with"]:
                cells.append("-")
                continue
            a, b = np.mean([r["without"][k] for r in rr]), np.mean([r["with"][k] for r in rr])
            cells.append(f"{a:.2f} → {b:.2f}")
        L.append(f"| {sp} | " + " | ".join(cells) + " |")
    L.append("")
    return L


def markdown(res: dict) -> str:
    s = summary(res)
    secs = "whole" if not res["seconds"] else f"first {res['seconds']:g} s of each"
    L = [f"**Body emotions** (SMPL-X motion in-process, {secs} voice: {', '.join(Path(v).name for v in res['voices'])}; "
         "seed 0)", ""] + emotion_markdown(res["emotion"])
    L += ["Acceptance: " + ", ".join(f"{e} speed ratio {v['median_ratio']:.2f} {'pass' if v['pass'] else 'FAIL'}"
                                     for e, v in s["speed"].items()) + ".", "",
          "**Style classifier** on `--style S` takes", ""] + classifier_markdown(res["classifier"])
    if res["clip"]:
        L += ["**Style clip**: distance of the take's distributions to the speaker's (without → with)", ""]
        L += clip_markdown(res["clip"])
    return "\n".join(L) + "\n"
