"""``rigmind eval face --emotion``: the face emotions (issue #29) measured
against neutral on held-out voices, with the issue's acceptance thresholds.

Per voice and emotion (weight 1 over the whole take, ``generate_face``
in-process, 30 fps): the mean of (emotion − neutral) of the issue's
channels (:data:`CHECKS`), the JawOpen–loudness Pearson r (loudness: the
frame energy in dBFS the lip sync reads) and, on voices with a transcript
(forced alignment gives the p/b/m phones), the share of p/b/m phones with
the lips closed (:func:`.metrics.bilabial_closure`) and the mean
lip-opening weight (:data:`OPENERS`) on the frames the neutral take seals
(mouthClose ≥ 0.1).

Voices: the ``speech_multilingual`` files of
:data:`rigmind.backend.gesture.alignment_eval.HELDOUT_VOICES` (no
transcript) and :data:`LJ_CLIPS` with their transcripts. None was used to
design the expression targets (that was done on the BEAT2 takes
2_scott_0_2_2 … 0_5_5, the tuning voices there).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from . import metrics

#: LJSpeech clips with transcripts (only LJ001-0001 … 0008 have one; 0001-0004 are the lip-sync eval's VER set too).
LJ_CLIPS = ("LJ001-0005", "LJ001-0006", "LJ001-0007", "LJ001-0008")
EMOTIONS = ("happy", "sad", "angry", "surprised", "afraid", "disgusted")
#: emotion: [(channels, needed increase over neutral)], the issue's acceptance (0: not in the issue).
CHECKS = {
    "happy": [(("MouthSmileLeft", "MouthSmileRight"), 0.2)],
    "sad": [(("BrowInnerUp",), 0.2), (("MouthFrownLeft", "MouthFrownRight"), 0.1)],
    "angry": [(("BrowDownLeft", "BrowDownRight"), 0.2)],
    "surprised": [(("BrowOuterUpLeft", "BrowOuterUpRight"), 0.2), (("EyeWideLeft", "EyeWideRight"), 0.2)],
    "afraid": [(("BrowInnerUp",), 0.0), (("EyeWideLeft", "EyeWideRight"), 0.0)],
    "disgusted": [(("NoseSneerLeft", "NoseSneerRight"), 0.0)],
}
#: Largest allowed change of the JawOpen–loudness r from neutral's (the issue's).
JAW_R_TOLERANCE = 0.1
OPENERS = ("mouthUpperUpLeft", "mouthUpperUpRight", "mouthLowerDownLeft", "mouthLowerDownRight",
           "mouthStretchLeft", "mouthStretchRight", "mouthFunnel")
FPS = 30.0


def _camel(name: str) -> str:
    return name[0].lower() + name[1:]


def voices(data_dir, lj_text: dict) -> list:
    """``[(wav path, transcript or None)]``: the held-out voices above;
    ``lj_text``: ``{LJSpeech clip id: transcript}`` (``eval.read_lj_metadata``)."""
    from ..gesture.alignment_eval import HELDOUT_VOICES

    data_dir = Path(data_dir)
    out = [(data_dir / v, None) for v in sorted(HELDOUT_VOICES) if v.startswith("speech_multilingual/")]
    wavs = data_dir / "speech_english_ljspeech" / "wavs"
    return out + [(wavs / f"{c}.wav", lj_text[c]) for c in LJ_CLIPS if c in lj_text]


def evaluate_voice(wav, transcript=None, emotions=EMOTIONS, takes=None) -> dict:
    """One voice: ``{"voice", "delta": {emotion: {"A + B": mean increase}},
    "jaw_r": {emotion or "neutral": r}, "seal": {emotion: [closed, total]},
    "gap": {emotion: mean lip-opening weight on sealed frames or None}}``.
    ``takes``: ``{emotion or "neutral": (names, weights [T, 52], fps,
    phones)}`` already made (the bench's whole processes); None: made here
    with :func:`.generate.generate_face`."""
    from ..audio import load_audio
    from ..audio.features import speech_features
    from .generate import ANALYSIS_FPS, at_frames

    clip = load_audio(wav)
    if takes is None:
        from ..emotion.timeline import parse_emotions
        from .generate import generate_face

        takes = {}
        for e in ("neutral",) + tuple(emotions):
            a = generate_face(clip, transcript=transcript, fps=FPS,
                              emotion=None if e == "neutral" else parse_emotions([f"{e}:1"]))
            takes[e] = (a.names, a.weights, a.fps, a.phones)
    names, w0, fps, phones = takes["neutral"]
    w0 = np.asarray(w0)
    loud = at_frames(speech_features(clip, ANALYSIS_FPS, with_onsets=False).energy, len(w0), fps)
    sealed = w0[:, names.index("mouthClose")] >= 0.1
    out = {"voice": Path(wav).name, "transcript": bool(transcript), "delta": {}, "jaw_r": {}, "seal": {}, "gap": {}}
    for e, (_n, w, f, _p) in takes.items():
        w = np.asarray(w)
        out["jaw_r"][e] = float(metrics.pearson(w[:, names.index("jawOpen")], loud))
        if e != "neutral":
            out["delta"][e] = {}
            for chans, _need in CHECKS[e]:
                idx = [names.index(_camel(c)) for c in chans]
                out["delta"][e][" + ".join(chans)] = float(w[:, idx].mean() - w0[:, idx].mean())
        if transcript:
            c, t = metrics.bilabial_closure(w, names, f, [tuple(p) for p in phones])
            out["seal"][e] = [int(c), int(t)]
            out["gap"][e] = float(w[sealed][:, [names.index(o) for o in OPENERS]].mean()) if sealed.any() else None
    return out


def evaluate_emotions(data_dir, lj_text: dict, *, n_voices: int = None, emotions=EMOTIONS, log=print) -> dict:
    """:func:`evaluate_voice` on the first ``n_voices`` of :func:`voices`
    (None or 0: all): ``{"voices": [per voice], "emotions": [...]}``."""
    vs = voices(data_dir, lj_text)
    if n_voices:  # keep LJ clips in a short run: they carry the seal check
        vs = vs[: max(n_voices - 1, 1)] + [v for v in vs if v[1]][:1]
    rows = []
    for wav, text in vs:
        rows.append(evaluate_voice(wav, text, emotions))
        log(f"  {wav.name}: done")
    return {"voices": rows, "emotions": list(emotions)}


def summary(result: dict) -> dict:
    """Means over voices and pass/fail: ``{"checks": [{emotion, channels,
    mean, min, need, pass}], "jaw": {emotion: {r, max_change, pass}},
    "seal": {emotion: {closed, total, gap, pass}}, "all_pass": bool}``."""
    rows = result["voices"]
    checks = []
    for e in result["emotions"]:
        for chans, need in CHECKS[e]:
            key = " + ".join(chans)
            v = np.asarray([r["delta"][e][key] for r in rows])
            checks.append({"emotion": e, "channels": key, "mean": float(v.mean()), "min": float(v.min()),
                           "need": need, "pass": bool(v.mean() >= need) if need else None})
    r0 = np.asarray([r["jaw_r"]["neutral"] for r in rows])
    jaw, seal = {}, {}
    for e in ["neutral"] + list(result["emotions"]):
        r = np.asarray([x["jaw_r"][e] for x in rows])
        change = float(np.abs(r - r0).max())
        jaw[e] = {"r": float(r.mean()), "max_change": change, "pass": change <= JAW_R_TOLERANCE}
        c = sum(x["seal"][e][0] for x in rows if e in x["seal"])
        t = sum(x["seal"][e][1] for x in rows if e in x["seal"])
        c0 = sum(x["seal"]["neutral"][0] for x in rows if "neutral" in x["seal"])
        gaps = [x["gap"][e] for x in rows if x["gap"].get(e) is not None]
        seal[e] = {"closed": c, "total": t, "gap": float(np.mean(gaps)) if gaps else None, "pass": c >= c0}
    ok = all(c["pass"] is not False for c in checks) and all(j["pass"] for j in jaw.values()) and all(
        s["pass"] for s in seal.values())
    return {"checks": checks, "jaw": jaw, "seal": seal, "all_pass": ok}


def markdown(result: dict) -> str:
    """The two tables of ``bench/results/face_emotion.md``, with pass/fail."""
    s = summary(result)
    lines = ["| emotion | channels | mean increase over neutral (min over clips) | needed | pass |",
             "|---|---|---|---|---|"]
    for c in s["checks"]:
        ok = "—" if c["pass"] is None else ("yes" if c["pass"] else "NO")
        need = f"+{c['need']:.1f}" if c["need"] else "(not in the issue)"
        lines.append(f"| {c['emotion']} | {c['channels']} | {c['mean']:+.3f} ({c['min']:+.3f}) | {need} | {ok} |")
    lines += ["", "| emotion | JawOpen–loudness r (mean over clips) | largest change from neutral on a clip "
              f"(≤ {JAW_R_TOLERANCE}) | p/b/m closed (LJSpeech, transcript) | lip-opening weight on sealed frames "
              "| pass |", "|---|---|---|---|---|---|"]
    for e, j in s["jaw"].items():
        m = s["seal"][e]
        gap = "nan" if m["gap"] is None else f"{m['gap']:.4f}"
        ok = "yes" if j["pass"] and m["pass"] else "NO"
        lines.append(f"| {e} | {j['r']:.3f} | {j['max_change']:.3f} | "
                     f"{100 * m['closed'] / max(m['total'], 1):.1f} % ({m['closed']}/{m['total']}) | {gap} | {ok} |")
    names = ", ".join(r["voice"] for r in result["voices"])
    lines += ["", f"Voices: {names}. All acceptance checks: {'pass' if s['all_pass'] else 'FAIL'}."]
    return "\n".join(lines) + "\n"
