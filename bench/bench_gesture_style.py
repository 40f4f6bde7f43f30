"""Emotion and style for the body (issue #29): what they do, measured.

    .venv/bin/python bench/bench_gesture_style.py [--parts emotion,classifier,clip,viewer] [--data ../shared/data]

Writes bench/results/gesture_style.md (and .json beside it). Parts:

- emotion: whole ``rigmind gesture --rig R --out X.bvh [--emotion E:1]``
  processes on held-out voices (speech_multilingual, LJSpeech) and two rigs
  (the mannequin of ``rigmind mannequin``, the Ready Player Me avatar);
  from each exported BVH the mean wrist speed (m/s) and median wrist height
  (m above the lower ankle's 1st percentile), ratios to the neutral take;
- classifier: the style classifier (trained on REAL Bandai clips only,
  ``models/gesture_styles.npz``) on (a) the held-out real clips and (b)
  generated takes, ``--style S`` on each held-out voice, per style;
- clip: ``--style-clip`` speakers (held-out Bandai clips read from their BVH
  files, and the BEAT2 take's held-out last 20 % with fingers): the 1-D
  Wasserstein distances of the take's distributions to the speaker's,
  with and without the clip;
- viewer: standing skate, longest frozen stretch and seam periodicity
  (``backend/gesture/viewer_metrics.py``, as ``rigmind eval gesture
  --viewer`` samples them) on the baked rigs, neutral vs emotions/styles.

Never tuned on these voices: the style layer's settings were chosen on the
validation voices (``alignment_eval.VALIDATION_VOICES``: the BEAT2
speech-only wavs 2_scott_0_2_2 … 0_5_5 and LJ001-0010/15/21/25).
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]

from rigmind.backend import paths  # noqa: E402

from rigmind.backend.gesture import style_eval  # noqa: E402

VOICES = list(style_eval.HELDOUT_VOICES)
RESULTS = REPO / "bench" / "results" / "gesture_style.md"


def _clip_wav(src, seconds, out):
    import soundfile as sf

    x, sr = sf.read(src, dtype="float32")
    sf.write(out, x[: int(seconds * sr)], sr)
    return out


def _bvh_hands(path):
    """Mean wrist speed (m/s) and median wrist height (m above the floor) of an exported BVH."""
    from rigmind.backend.bone_mapping import auto_map
    from rigmind.backend.bvh import read_bvh

    m = read_bvh(path)
    bones = auto_map(m.skeleton).bones
    ix = [m.skeleton.names.index(bones[c]) for c in ("hand_l", "hand_r")]
    feet = [m.skeleton.names.index(bones[c]) for c in ("foot_l", "foot_r")]
    return style_eval.hand_stats(m.world_positions(), ix, feet, m.fps)


def part_emotion(data, tmp, voices, seconds):
    env = dict(os.environ)  # the rigmind package as this process imports it (PYTHONPATH)
    py = sys.executable
    mannequin = tmp / "m.blend"
    subprocess.run([py, "-m", "rigmind", "mannequin", "--out", str(mannequin)], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    rigs = {"mannequin": mannequin, "rpm": data / "character_rpm_arkit/brunette-t.glb"}
    rows = []
    for rig, rig_path in rigs.items():
        for v in voices:
            wav = _clip_wav(data / v, seconds, tmp / Path(v).name)
            base = None
            for emo in ("neutral", "happy", "sad", "angry"):
                out = tmp / f"{rig}_{Path(v).stem}_{emo}.bvh"
                cmd = [py, "-m", "rigmind", "gesture", "--audio", str(wav), "--rig", str(rig_path), "--out", str(out),
                       "--force"] + ([] if emo == "neutral" else ["--emotion", f"{emo}:1"])
                subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
                speed, height = _bvh_hands(out)
                base = base or (speed, height)
                rows.append({"rig": rig, "voice": Path(v).name, "emotion": emo, "wrist_speed": speed,
                             "wrist_height": height, "speed_ratio": speed / base[0],
                             "height_diff_cm": 100 * (height - base[1])})
                print(json.dumps(rows[-1]), flush=True)
    return rows


def part_classifier(data, voices):
    from rigmind.backend.gesture.generate import get_model

    clf, real = style_eval.load_classifier()
    model = get_model()
    gen, neutral = {}, []
    for v in voices:
        n, calls = style_eval.classify_voice(model, clf, style_eval.voice_features(data / v))
        neutral.append(n)
        for s, c in calls.items():
            gen.setdefault(s, []).append(c)
        print(v, "done", flush=True)
    return {"real": real, "generated": gen, "neutral": neutral, "voices": voices}


def part_clip(data, voices):
    from rigmind.backend.gesture.generate import get_model

    model = get_model()
    rows = []
    for name, clip in style_eval.speakers(data).items():
        for v in voices:
            rows.append({"speaker": name, "voice": Path(v).name,
                         **style_eval.clip_distances(model, style_eval.voice_features(data / v), clip)})
            print(json.dumps(rows[-1]), flush=True)
    return rows


VIEWER_TAKES = (("neutral", (), ""), ("happy:1", ("happy:1",), ""), ("sad:1", ("sad:1",), ""),
                ("angry:1", ("angry:1",), ""), ("surprised:1", ("surprised:1",), ""),
                ("afraid:1", ("afraid:1",), ""), ("disgusted:1", ("disgusted:1",), ""),
                ("--style old", (), "old"), ("--style active", (), "active"), ("--style sad", (), "sad"))
#: Other seeds of the neutral take: how far the seam measures move with the seed alone.
NEUTRAL_SEEDS = (1, 2)


def part_viewer(data, tmp, seconds):
    import torch

    from rigmind.backend.emotion.timeline import parse_emotions
    from rigmind.backend.gesture import viewer_metrics
    from rigmind.backend.requests.gesture import GestureRequest
    from rigmind.evaluation.gesture_viewer import load_rig, sample
    from rigmind.operators import gesture_scene
    from rigmind.operators.retarget_scene import target_mapping

    torch.set_num_threads(1)
    rows = []
    for rig in ("mannequin", "rpm"):
        for v in ("speech_multilingual/silero_en.wav", "speech_multilingual/silero_de.wav"):
            wav = _clip_wav(data / v, seconds, tmp / ("viewer_" + Path(v).name))
            takes = [(label, emo, style, 0) for label, emo, style in VIEWER_TAKES]
            takes += [(f"neutral, seed {k}", (), "", k) for k in NEUTRAL_SEEDS]
            for label, emo, style, seed in takes:
                arm, _ = load_rig(rig, data)
                tgt = target_mapping(arm)
                res = gesture_scene.generate_gesture_on_rig(arm, GestureRequest(
                    audio_path=wav, seed=seed, start_frame=1, emotion=parse_emotions(list(emo)), style=style))
                _, pos = sample(arm, tgt, 1, res.frames)
                allj = np.stack([pos[c] for c in pos], axis=1)
                ank = np.stack([pos["foot_l"], pos["foot_r"]], axis=1)
                up = [c for c in ("spine", "spine1", "spine2", "chest", "neck", "head", "shoulder_l", "shoulder_r",
                                  "upperarm_l", "upperarm_r", "lowerarm_l", "lowerarm_r", "hand_l", "hand_r") if c in pos]
                upper = np.stack([pos[c] for c in up], axis=1)
                rows.append({"rig": rig, "voice": Path(v).name, "take": label,
                             "skate_cm_per_frame": viewer_metrics.standing_foot_skate(ank),
                             "frozen_frames": viewer_metrics.longest_frozen_stretch(allj),
                             "seam32": viewer_metrics.seam_periodicity(upper, 32),
                             "seam32_off": viewer_metrics.off_stride_periodicity(upper, 32)})
                print(json.dumps(rows[-1]), flush=True)
    return rows


def markdown(res: dict) -> str:
    L = ["# Emotion and style for the body (issue #29)", "",
         f"`{res['command']}` — {res['machine']}, {res['date']}.", ""]
    if "emotion" in res:
        rows = res["emotion"]
        L += ["## Emotions: hand speed and height from exported BVH files", "",
              f"Whole `rigmind gesture --rig R --out X.bvh [--emotion E:1]` processes, first {res['seconds']:g} s "
              "of each held-out voice; mean wrist speed and median wrist height above the floor read back from the "
              "BVH (auto-mapped hand bones). Ratio / difference to the same voice's neutral take.", ""] + style_eval.emotion_markdown(rows)
    if "classifier" in res:
        c = res["classifier"]
        L += ["## Style classifier", "",
              "Trained on the real Bandai clips' training split only; (a) the held-out real clips "
              "(d1: the `guide` content, one clip per style; d2: every 5th clip); (b) generated takes, "
              f"`--style S` on each of {len(c['voices'])} held-out voices "
              f"({', '.join(Path(v).name for v in c['voices'])}), seed 0.", ""] + style_eval.classifier_markdown(c)
        L += ["Read with care: the layer moves a take into exactly the statistics this classifier reads (trunk "
              "posture, energy, sharpness, trunk share), so a high score on generated takes says the layer reaches "
              "each style's measured statistics, not that a person would name the style. On the held-out REAL "
              "clips the d1 styles (one `guide` clip each, a content the classifier never saw) are often "
              "missed: " + ", ".join(s for s, v in c["real"].items() if v[0] < 0.5) + ".", ""]
    if "clip" in res:
        rows = res["clip"]
        L += ["## Style clip: distance of the take's distributions to the speaker's", "",
              "1-D Wasserstein distances (wrist height rel. shoulders, forward, lateral: cm; finger PCA "
              "coefficients: radians-ish units of the basis) and the mean wrist speed's difference (%), mean over "
              "the held-out voices, without → with `--style-clip`.", ""] + style_eval.clip_markdown(rows)
    if "viewer" in res:
        rows = res["viewer"]
        L += ["## Gesture as seen: neutral vs emotion/style", "",
              f"Baked rigs sampled as `rigmind eval gesture --viewer` does, first {res['seconds']:g} s of silero_en "
              "and silero_de; worst of the two voices.", "",
              "| rig | take | skate cm/frame | longest frozen (frames) | seam 32 | off-stride (27-37) | seam 32 above it |",
              "|---|---|---|---|---|---|---|"]
        for rig in dict.fromkeys(r["rig"] for r in rows):
            for label, _, _ in VIEWER_TAKES:
                rr = [r for r in rows if r["rig"] == rig and r["take"] == label]
                if not rr:
                    continue
                off = [r.get("seam32_off", float("nan")) for r in rr]
                L.append(f"| {rig} | {label} | {max(r['skate_cm_per_frame'] for r in rr):.3f} | "
                         f"{max(r['frozen_frames'] for r in rr)} | {max(r['seam32'] for r in rr):.2f} | "
                         f"{max(off):.2f} | {max(r['seam32'] - o for r, o in zip(rr, off)):+.2f} |")
        seeded = [r for r in rows if r["take"].startswith("neutral, seed")]
        rows = [r for r in rows if not r["take"].startswith("neutral, seed")]
        for r in rows + seeded:
            r["seam32_above"] = r["seam32"] - r.get("seam32_off", float("nan"))
        worst = {k: max(r[k] - next(n[k] for n in rows if n["rig"] == r["rig"] and n["voice"] == r["voice"]
                                      and n["take"] == "neutral") for r in rows)
                 for k in ("skate_cm_per_frame", "frozen_frames", "seam32", "seam32_above")}
        L += ["", f"Largest rise over the same rig and voice's neutral take: skate {worst['skate_cm_per_frame']:+.3f} "
              f"cm/frame, frozen {worst['frozen_frames']:+d} frames, seam 32 {worst['seam32']:+.2f}, seam 32 above "
              f"its off-stride floor {worst['seam32_above']:+.2f}. The seam measure is a worst-phase ÷ mean "
              "ratio, above 1 for any motion; `off-stride` is the same ratio at the periods 27-37 other than the "
              "window stride (`viewer_metrics.off_stride_periodicity`), where no joins repeat: a seam is the "
              "stride's reading above it. Calm takes (sad, old) raise both alike (fewer, larger movements)."]
        if seeded:
            spread = {}
            for r in seeded + [r for r in rows if r["take"] == "neutral"]:
                spread.setdefault((r["rig"], r["voice"]), []).append(r)
            L += ["", "The neutral take at seeds 0, " + ", ".join(str(k) for k in NEUTRAL_SEEDS)
                  + " (the seed alone), per rig and voice: "
                  + "; ".join(f"{rig} {Path(v).stem} seam 32 {min(x['seam32'] for x in rr):.2f}-"
                              f"{max(x['seam32'] for x in rr):.2f}, above the floor "
                              f"{min(x['seam32_above'] for x in rr):+.2f} to {max(x['seam32_above'] for x in rr):+.2f}"
                              for (rig, v), rr in spread.items()) + "."]
        L += [""]
    return "\n".join(L)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=paths.data_dir())
    ap.add_argument("--parts", default="emotion,classifier,clip,viewer")
    ap.add_argument("--seconds", type=float, default=20.0, help="seconds of each voice for the rig parts")
    ap.add_argument("--emotion-voices", type=int, default=4)
    a = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    json_path = RESULTS.with_suffix(".json")
    res = json.loads(json_path.read_text()) if json_path.exists() else {}
    tmp = Path(tempfile.mkdtemp(prefix="rigmind-style-"))
    parts = a.parts.split(",")
    t0 = time.time()
    if "emotion" in parts:
        res["emotion"] = part_emotion(a.data, tmp, VOICES[: a.emotion_voices], a.seconds)
    if "classifier" in parts:
        res["classifier"] = part_classifier(a.data, VOICES)
    if "clip" in parts:
        res["clip"] = part_clip(a.data, VOICES[:4] + VOICES[6:8])
    if "viewer" in parts:
        res["viewer"] = part_viewer(a.data, tmp, a.seconds)
    res.update(command="python bench/bench_gesture_style.py " + " ".join(argv or sys.argv[1:]),
               machine=f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
               date=datetime.now(timezone.utc).strftime("%Y-%m-%d"), seconds=a.seconds)
    print(f"{time.time() - t0:.0f} s")
    json_path.write_text(json.dumps(res, indent=1))
    RESULTS.write_text(markdown(res) + "\n")
    print(RESULTS.read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
