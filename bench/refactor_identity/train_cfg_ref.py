"""Issue #16: the trainers' knob lists -> frozen configs change no weight.

    python bench/refactor_identity/train_cfg_ref.py OUT.pt [REFERENCE.pt]

Tiny trainings of the gesture model (3 steps on one BEAT2 take), the face
network (30 steps on synthesised speech), the gesture motion encoder (40
steps on 4 clips) and the style classifier (2 option sets), each through
the knob-list API (old tree) or the config API (new tree), whichever the
imported code has; every tensor is saved, and with REFERENCE compared
with ``torch.equal``.
"""
import inspect, sys, tempfile
from pathlib import Path

import numpy as np
import torch

from rigmind.backend.paths import data_dir


def call(fn, cfg_name, module, args, kw, extra=None):
    """``fn(*args, **kw)`` (knob list) or ``fn(*args, config=Cfg(**kw))``."""
    extra = extra or {}
    if "config" in inspect.signature(fn).parameters:
        return fn(*args, config=getattr(module, cfg_name)(**kw), **extra)
    return fn(*args, **kw, **extra)


def sd(m):
    return {k: v.detach().clone() for k, v in m.state_dict().items()}


res = {}
tmp = Path(tempfile.mkdtemp())
from rigmind.backend.gesture import train as GT

npz = data_dir() / "beat2_speech_gesture_sample"
call(GT.train_gesture, "GestureTrainConfig", GT, (npz, tmp / "g.pt"),
     dict(steps=3, seed=11, threads=1, with_unpaired=False), dict(log=lambda *a: None))
res["gesture"] = torch.load(tmp / "g.pt", weights_only=True)["state_dict"]

from rigmind.backend.face import train as FTR

rng = np.random.default_rng(5)
torch.manual_seed(5)
words = FTR.synthesis_words()
items = [(x.astype(np.float16), lab, jaw, 1.0) for x, lab, jaw, _p, _c in (FTR.synth_item(rng, words) for _ in range(6))]
fn = FTR.train_network
if "config" in inspect.signature(fn).parameters:
    net, curve = fn(items, len(items), rng, FTR.FaceTrainConfig(steps=30, hidden=32), log=lambda *a: None)
else:
    net, curve = fn(items, len(items), 30, rng, hidden=32, log=lambda *a: None)
res["face"] = sd(net)
res["face_curve"] = curve
# the whole `rigmind train face` path (synthesis, seeds, threads, the written weights)
FTR.main_train(["--steps", "4", "--synth", "4", "--seed", "2", "--data", str(tmp / "none"), "--out", str(tmp / "f.pt")])
blob = torch.load(tmp / "f.pt", weights_only=True)
res["face_main"] = dict(blob.get("state", blob.get("weights", {})))

from rigmind.backend.gesture import motion_encoder as ME

g = np.random.default_rng(0)
clips = [np.cumsum(g.normal(0, 0.01, (200, 22, 3)), axis=0) + g.normal(0, 0.3, (1, 22, 3)) for _ in range(4)]
enc, stats = call(ME.train_encoder, "EncoderTrainConfig", ME, (clips,), dict(steps=40, seed=3))
res["encoder"] = sd(enc)
res["encoder_stats"] = repr(stats)

from rigmind.backend.locomotion import eval as E, features as FT, style_classifier as SC

cache = Path("/tmp/rigmind_identity_cache")
train_i, val_i = E._select_clips(data_dir(), E.QUICK_STYLES, 20)
if not cache.exists():
    FT.build_cache(data_dir(), cache, clips=train_i + val_i)
train = E._load_stems(cache, train_i, mirrored=True)
few = [c for st in ("normal", "elderly") for c in [c for c in train if c.labels["style_key"] == st][:6]]
for tag, clips_, kw in [("sc_few", few, dict(seed=3, epochs=3, styles=("normal", "elderly"))),
                        ("sc_nod1", train, dict(seed=1, epochs=1, include_d1=False, batch_size=64, lr=1e-3))]:
    m = call(SC.train_style_classifier, "StyleTrainConfig", SC, (clips_,), kw)
    res[tag] = sd(m.net)
    res[tag + "_meta"] = repr((m.styles, m.mean.tolist(), m.std.tolist(), m.info, m.window, m.hop))

torch.save(res, sys.argv[1])
if len(sys.argv) > 2:
    ref = torch.load(sys.argv[2], weights_only=False)
    bad = []
    for k, v in ref.items():
        if isinstance(v, dict) and all(torch.is_tensor(t) for t in v.values()):
            if v.keys() != res[k].keys() or not all(torch.equal(v[n], res[k][n]) for n in v):
                bad.append(k)
        elif v != res[k]:
            bad.append(k)
    print("IDENTICAL" if not bad else f"DIFFERENT: {bad}", {k: len(v) for k, v in res.items() if isinstance(v, dict)})
