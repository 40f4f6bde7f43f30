"""Issue #16 (one checkpoint format): what every model computes, hashed.

    python bench/refactor_identity/ckpt_ref.py OUT.json [STYLE_CLASSIFIER.pt]

Loads each committed model of the tree on PYTHONPATH (so an old commit's
tree reads its own old-layout models/ and this checkout reads the converted
ones) and SHA-256es every output array: the locomotion controller (torch and
ONNX Runtime) stepping a fixed control sequence, gesture generation on a
fixed speech clip (torch, ONNX Runtime and the default engine choice), face
generation (the same three), motion-encoder embeddings, the ONNX graphs, and a style
classifier's predictions on cached clips (one trained, saved and loaded
here; optionally one from a file). Also records which engine the
default (staleness-checked) choice picked."""
import dataclasses
import hashlib
import json
import sys

import numpy as np


def h(a) -> str:
    a = np.ascontiguousarray(a)
    return f"{a.dtype}{a.shape}:" + hashlib.sha256(a.tobytes()).hexdigest()[:20]


def locomotion(out):
    from rigmind.backend.locomotion.controller import LocomotionController
    from rigmind.backend.locomotion.motion_matching import Control

    controls = ([Control((0.0, 0.0))] * 10 + [Control((1.2, 0.0))] * 40 + [Control((0.5, 1.0), style="elderly")] * 40
                + [Control((0.0, -2.5), facing=(1.0, 0.0))] * 30 + [Control((0.0, 0.0))] * 20)
    for engine in ("torch", "onnxruntime"):
        c = LocomotionController.load(engine=engine)
        m = c.run(controls)
        out[f"loco/{engine}"] = [h(m.rotations), h(m.root_positions), h(m.translations)]
        out[f"loco/{engine}/meta"] = json.dumps({k: c_ for k, c_ in sorted(c.meta.items()) if k != "start_poses"},
                                                sort_keys=True, default=str)[:4000] if hasattr(c, "meta") else ""


def clip():
    from rigmind.backend.audio.loading import load_audio
    from rigmind.backend.paths import data_dir

    c = load_audio(data_dir() / "beat2_speech_gesture_sample" / "2_scott_0_1_1.wav")
    return dataclasses.replace(c, samples=c.samples[: 16000 * 12])


def gesture(out, speech):
    from rigmind.backend.gesture import generate as G

    for rt in ("torch", "onnxruntime", None):
        model = G.GestureModel.load(runtime=rt)
        r = G.generate_gesture(speech, model=model, seed=3, amount=0.6)
        out[f"gesture/{rt}"] = [model.net.name, h(r.poses), h(r.motion.rotations), h(r.motion.root_positions),
                                h(r.pulses), h(r.energy)]
        out[f"gesture/{rt}/info"] = json.dumps(model.info, sort_keys=True)


def face(out, speech):
    from rigmind.backend.face import generate as FG, model as FM

    for rt in ("torch", "onnxruntime", None):
        model = FM.load_default_model(rt)
        a = FG.generate_face(speech, model=model, seed=1)
        arrays = {k: v for k, v in sorted(vars(a).items()) if isinstance(v, np.ndarray)}
        out[f"face/{rt}"] = [model.runtime] + [f"{k}={h(v)}" for k, v in arrays.items()]
        out[f"face/{rt}/meta"] = json.dumps(model.meta, sort_keys=True)


def encoder(out):
    from rigmind.backend.gesture import eval as GE, motion_encoder as ME

    enc, stats = ME.load_encoder(GE.ENCODER_PATH)
    pos = np.random.default_rng(0).normal(scale=0.3, size=(300, ME.N_JOINTS, 3))
    out["encoder/embed"] = h(ME.embed(enc, pos))
    out["encoder/stats"] = json.dumps(stats, sort_keys=True)


def style_classifier(out, path=None):
    """A classifier trained here (deterministic: 1 epoch on 12 cached clips),
    saved and loaded by the tree's own code; and, when ``path`` is given, a
    file trained earlier (the old tree reads the old layout, this one its
    conversion)."""
    import tempfile
    from pathlib import Path

    from rigmind.backend.locomotion import features as FT, style_classifier as SC

    clips = FT.load_cache(FT.DEFAULT_CACHE_DIR, split="validation", mirrored=False, keys=SC.KEYS)
    train = [c for st in ("normal", "elderly") for c in [c for c in clips if c.labels["style_key"] == st][:6]]
    kw = dict(seed=0, epochs=1, styles=("normal", "elderly"))   # the knob list (old tree) or the config (new)
    models = {"trained": SC.train_style_classifier(train, SC.StyleTrainConfig(**kw)) if hasattr(SC, "StyleTrainConfig")
              else SC.train_style_classifier(train, **kw)}
    with tempfile.TemporaryDirectory() as t:
        models["trained"].save(Path(t) / "sc.pt")
        models["trained"] = SC.StyleClassifier.load(Path(t) / "sc.pt")
    if path:
        models["file"] = SC.StyleClassifier.load(path)
    for tag, model in models.items():
        out[f"sc/{tag}/probs"] = [c.name + "=" + h(model.window_probs(SC.frame_features(c))) for c in clips[:4]]
        out[f"sc/{tag}/fields"] = [list(model.styles), h(model.mean), h(model.std), model.window, model.hop,
                                   json.dumps(model.info, sort_keys=True, default=str)]


def onnx_graphs(out):
    """Each export's graph (not its metadata: the source-hash stamps change with the files)."""
    import onnx

    from rigmind.backend.paths import MODELS_DIR

    for f in ("face", "gesture", "locomotion"):
        g = onnx.load(str(MODELS_DIR / f"{f}.onnx")).graph.SerializeToString()
        out[f"onnx/{f}/graph"] = hashlib.sha256(g).hexdigest()


def main():
    out = {}
    onnx_graphs(out)
    speech = clip()
    locomotion(out)
    gesture(out, speech)
    face(out, speech)
    encoder(out)
    style_classifier(out, sys.argv[2] if len(sys.argv) > 2 else None)
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
