"""``rigmind train face``: train the audio → viseme/jaw network.

Data (all from ``--data``, default ../shared/data, plus eSpeak NG):
- 2000 synthesised utterances, about half US English (random CMU-dictionary
  words) and half seven other languages (random syllables), random
  voices/rates/pitches, heavy augmentation (noise, EQ, reverb, gain), with
  exact phoneme labels (eSpeak's vowel + r/l units split as in CMU, see
  ``split_ipa``);
- real English speech with pseudo-labels: pocketsphinx word recognition,
  then forced alignment of the recognised words (LJ001-0009..0032 — the
  eight transcribed clips LJ001-0001..0008 are never used: they are the
  evaluation set — and BEAT2 takes 2..5);
- the BEAT2 take 2_scott_0_1_1: its first 70 % with the speaker's real jaw
  rotation as the jaw target (the last 30 % is held out for evaluation).

Deterministic for a given ``--seed`` (one thread)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..audio.loading import clip_from_array, load_audio
from ..audio.features import speech_features
from .model import HIDDEN
from .visemes import arpabet_to_viseme, ipa_to_viseme, target_matrix, viseme_index, viseme_names
from .. import limits, paths

FPS = 100.0
BEAT_TRAIN_FRACTION = 0.7
JAW_SCALE_RAD = 0.08            # BEAT2 jaw angle (rad) that counts as jawOpen 1
# about half US English (the language of the real speech and of the CMU
# reference), the rest seven other languages with their own phonotactics
LANGS = ("en-us",) * 7 + ("de", "es", "fr", "it", "pt", "nl", "pl")
SYNTH = 2000                    # synthesised utterances (about 2 h of speech)
STEPS = 4000
VARIANTS = ("", "+f2", "+f3", "+m2", "+m3", "+f4")


def default_data() -> Path:
    return paths.data_dir()


# --- labels ------------------------------------------------------------------------


def frame_labels(segments: list, n: int, to_viseme) -> np.ndarray:
    """``[(start_s, end_s, phone)]`` → viseme index per 100 fps frame ``[n]`` (sil elsewhere)."""
    idx = viseme_index()
    out = np.zeros(n, np.int64)
    for s, e, p in segments:
        a, b = int(round(s * FPS)), int(round(e * FPS))
        out[max(a, 0):min(max(b, a + 1), n)] = idx[to_viseme(p)]
    return out


def jaw_from_labels(labels: np.ndarray, energy: np.ndarray) -> np.ndarray:
    """Phone-derived jaw target: the viseme's jawOpen, smoothed (~40 ms), scaled by loudness."""
    from scipy.ndimage import gaussian_filter1d

    from .coarticulation import loudness_gain

    j = target_matrix()[labels, 17]
    return np.clip(gaussian_filter1d(j, 4.0) * loudness_gain(energy), 0, 1).astype(np.float32)


# --- synthetic speech ----------------------------------------------------------------


def synthesis_words() -> list:
    """The English words random sentences are drawn from: CMU-dictionary
    words of 2..10 letters, sorted (so a seed gives the same sentences)."""
    from .sphinx import cmu_dictionary

    return sorted(w for w in cmu_dictionary() if w.isalpha() and 2 <= len(w) <= 10)


def _random_text(lang: str, rng: np.random.Generator, words: list) -> str:
    if lang.startswith("en"):
        return " ".join(rng.choice(words, size=int(rng.integers(4, 12))))
    cons, vows = list("bcdfghjklmnprstvzw") + ["ch", "sch", "qu", "ll", "rr"], list("aeiouy") + ["ei", "au", "ou"]
    out = []
    for _ in range(int(rng.integers(4, 10))):
        w = "".join(rng.choice(cons) + rng.choice(vows) + (rng.choice(cons) if rng.random() < 0.4 else "")
                    for _ in range(int(rng.integers(1, 4))))
        out.append(w)
    return " ".join(out) + rng.choice([".", ",", "?", "!"])


def augment(x: np.ndarray, sr: int, rng: np.random.Generator) -> np.ndarray:
    """Random EQ (low/high-pass), short reverb, background noise (10–40 dB SNR) and gain."""
    from scipy.signal import butter, fftconvolve, lfilter

    y = x.astype(np.float64)
    if rng.random() < 0.6:
        b, a = butter(2, rng.uniform(2500, 7000) / (sr / 2), "low")
        y = lfilter(b, a, y)
    if rng.random() < 0.5:
        b, a = butter(2, rng.uniform(80, 400) / (sr / 2), "high")
        y = lfilter(b, a, y)
    if rng.random() < 0.5:
        rt = rng.uniform(0.1, 0.5)
        n = int(rt * sr)
        ir = rng.normal(0, 1, n) * np.exp(-6.9 * np.arange(n) / n)
        ir[0] = 1.0 / rng.uniform(0.05, 0.3)
        y = fftconvolve(y, ir)[: len(y)]
    y /= np.abs(y).max() + 1e-9
    if rng.random() < 0.8:
        p = np.mean(y ** 2)
        noise = rng.normal(0, 1, len(y))
        if rng.random() < 0.5:
            noise = lfilter([1.0], [1.0, -0.95], noise)   # brown-ish
        noise *= np.sqrt(p / (np.mean(noise ** 2) + 1e-12) / 10 ** (rng.uniform(10, 40) / 10))
        y = y + noise
    return (y * rng.uniform(0.1, 0.9) / (np.abs(y).max() + 1e-9)).astype(np.float32)


_IPA_MARKS = "ˈˌ"
_R_COLOURED = ("ɹ", "ɚ", "l")


def split_ipa(phones: list, lang: str) -> list:
    """Make eSpeak's phone units match the CMU dictionary's (the reference of
    the viseme error rate): eSpeak writes some vowel + r/l sequences as one
    unit (``ɑːɹ`` in "car", ``ɔːɹ``, ``ɪɹ``, ``əl`` in "table", ``aɪɚ``, ``iə``)
    where CMU has two phones (AA R, AH L, …); those are split in time (vowel
    60 %, then the r/l/schwa). In US English ``ɜː`` ("bird") is r-coloured
    (CMU ER → RR) and becomes ``ɚ``. Diphthongs (aɪ, eɪ, oʊ) stay single, as in CMU."""
    out = []
    en_us = lang.startswith("en-us")
    for s, e, p in phones:
        q = "".join(c for c in p if c not in _IPA_MARKS).replace("ː", "")
        if en_us and q.startswith("ɜ"):
            q = "ɚ" + q[1:]
        tail = next((t for t in _R_COLOURED if len(q) > len(t) and q.endswith(t)), None)
        if tail is None and len(q) > 1 and q.endswith("ə") and q[:-1] not in ("", "ɚ"):
            tail = "ə"
        if tail is not None:
            m = s + 0.6 * (e - s)
            out += [(s, m, q[: -len(tail)]), (m, e, tail)]
        else:
            out.append((s, e, q if q else p))
    return out


def synth_item(rng: np.random.Generator, words: list, lang: str | None = None, aug: bool = True):
    """One synthesised utterance → (features [T, 69], labels [T], jaw [T], phones, clip)."""
    from .espeak import synthesize

    lang = lang or str(rng.choice(LANGS))
    voice = lang + str(rng.choice(VARIANTS))
    syn = synthesize(_random_text(lang, rng, words), voice, rate=int(rng.integers(120, 280)),
                     pitch=int(rng.integers(20, 80)), pitch_range=int(rng.integers(20, 90)))
    pad0, pad1 = int(rng.uniform(0.1, 0.6) * syn.sample_rate), int(rng.uniform(0.1, 0.6) * syn.sample_rate)
    x = np.concatenate([np.zeros(pad0, np.float32), syn.samples, np.zeros(pad1, np.float32)])
    phones = split_ipa([(s + pad0 / syn.sample_rate, e + pad0 / syn.sample_rate, p) for s, e, p in syn.phones],
                       lang)
    if aug:
        x = augment(x, syn.sample_rate, rng)
    clip = clip_from_array(x, syn.sample_rate)
    f = speech_features(clip, FPS, with_onsets=False)
    lab = frame_labels(phones, f.num_frames, ipa_to_viseme)
    return f.stacked(), lab, jaw_from_labels(lab, f.energy), phones, clip


# --- real speech pseudo-labels -------------------------------------------------------------


def pseudo_label(samples: np.ndarray, chunk_s: float = 15.0) -> list:
    """Recognise words (pocketsphinx with its English LM), then force-align
    them → ARPAbet phones ``[(start_s, end_s, phone)]``; long audio in
    fixed chunks (as when the committed weights' labels were made)."""
    from .sphinx import recognise_and_align

    return recognise_and_align(samples, chunk_s, pause_cut=False)


def real_items(data: Path, cache: Path, holdout=()) -> list:
    """(features, labels, jaw target, jaw weight) for the real training speech."""
    beat = data / "beat2_speech_gesture_sample"
    files = real_training_files(data, holdout)
    labels = json.loads(cache.read_text()) if cache.is_file() else {}
    items = []
    for p in files:
        clip = load_audio(p)
        if p.name not in labels:
            labels[p.name] = pseudo_label(clip.samples)
        f = speech_features(clip, FPS, with_onsets=False)
        lab = frame_labels(labels[p.name], f.num_frames, arpabet_to_viseme)
        items.append((f.stacked(), lab, jaw_from_labels(lab, f.energy), 0.3))
    # the paired take: real jaw on its training part
    wav, npz = beat / "2_scott_0_1_1.wav", beat / "2_scott_0_1_1.npz"
    if wav.is_file() and npz.is_file():
        clip = load_audio(wav)
        f = speech_features(clip, FPS, with_onsets=False)
        if wav.name not in labels:
            labels[wav.name] = pseudo_label(clip.samples)
        lab = frame_labels(labels[wav.name], f.num_frames, arpabet_to_viseme)
        jaw = beat_jaw(npz, f.num_frames)
        cut = int(BEAT_TRAIN_FRACTION * min(f.num_frames, len(jaw)))
        items.append((f.stacked()[:cut], lab[:cut], jaw[:cut], 3.0))
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(labels))
    return items


def beat_jaw(npz: Path, n: int | None = None, fps: float = FPS) -> np.ndarray:
    """BEAT2 SMPL-X jaw opening (joint 22 rotation angle) as a 0..1 target at ``fps``."""
    d = np.load(npz, allow_pickle=True)
    ang = np.linalg.norm(d["poses"][:, 66:69], axis=1)
    src = float(d["mocap_frame_rate"]) if "mocap_frame_rate" in d else 30.0
    m = int(np.floor(len(ang) / src * fps)) if n is None else n
    t = np.arange(m) / fps * src
    return np.clip(np.interp(t, np.arange(len(ang)), ang) / JAW_SCALE_RAD, 0, 1).astype(np.float32)


# --- training ------------------------------------------------------------------------------


def real_training_files(data: Path, holdout=()) -> list:
    """The real speech used for training: LJ001-0009..0032 (the transcribed
    evaluation clips LJ001-0001..0008 never) minus ``holdout`` stems, and BEAT2 takes 2..5."""
    lj = sorted((data / "speech_english_ljspeech" / "wavs").glob("LJ001-*.wav"))
    lj = [p for p in lj if int(p.stem.split("-")[1]) > 8 and p.stem not in set(holdout)]
    beat = data / "beat2_speech_gesture_sample"
    return lj + sorted(beat.glob("2_scott_0_[2-5]_*.wav"))


@dataclass(frozen=True)
class FaceTrainConfig:
    """One face network's training run (``rigmind train face``); the shipped
    model is the ensemble of seeds :data:`~.model.ENSEMBLE_SEEDS`."""

    #: Optimiser steps (one-cycle schedule).
    steps: int = STEPS
    #: Synthesised utterances (eSpeak, exact phone timing) before the real speech.
    synth: int = SYNTH
    #: Seed of the weights, the synthesis and the batch sampler.
    seed: int = 0
    #: Torch CPU threads.
    threads: int = 1
    #: LJ Speech stems kept out of training, for validation runs.
    holdout: tuple = ()
    #: Width of the dilated convolution stack.
    hidden: int = HIDDEN
    #: AdamW peak learning rate.
    lr: float = 2e-3
    #: Share of batch items drawn from real speech (it is rarer than the synthetic).
    real_share: float = 0.4
    #: Items per batch and their crop (frames at 100 Hz).
    batch: int = 16
    crop: int = 300
    #: Label smoothing of the viseme cross-entropy.
    smoothing: float = 0.05


def train_network(items: list, n_synth: int, rng: np.random.Generator, config: FaceTrainConfig = FaceTrainConfig(), *,
                  log=print, t0: float | None = None):
    """Train the network on ``items`` [(features, labels, jaw, jaw weight)]
    (the first ``n_synth`` synthesised) → (network, loss curve)."""
    import torch

    from .model import build_network

    cfg = config
    steps, lr, batch, crop = cfg.steps, cfg.lr, cfg.batch, cfg.crop
    t0 = time.time() if t0 is None else t0
    V = len(viseme_names())
    net = build_network(V, cfg.hidden)
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.1)
    real = np.arange(n_synth, len(items))
    curve = []
    for step in range(steps):
        xs, ys, js, jw = [], [], [], []
        for _ in range(batch):
            k = int(rng.choice(real)) if (len(real) and rng.random() < cfg.real_share) else int(rng.integers(n_synth))
            x, lab, jaw, wt = items[k]
            a = int(rng.integers(0, max(len(x) - crop, 0) + 1))
            xx = np.asarray(x[a:a + crop], np.float32)
            ll, jj = np.asarray(lab[a:a + crop], np.int64), np.asarray(jaw[a:a + crop], np.float32)
            pad = crop - len(xx)
            if pad:
                xx = np.pad(xx, ((0, pad), (0, 0)))
                ll = np.pad(ll, (0, pad), constant_values=-100)
                jj = np.pad(jj, (0, pad))
            # feature noise: robustness to the channel
            xx = xx + rng.normal(0, 0.02, xx.shape).astype(np.float32)
            xs.append(xx), ys.append(ll), js.append(jj), jw.append(wt)
        X = torch.from_numpy(np.stack(xs))
        Y = torch.from_numpy(np.stack(ys))
        J = torch.from_numpy(np.stack(js))
        JW = torch.tensor(jw, dtype=torch.float32)[:, None] * (Y >= 0)
        logits, jaw = net(X)
        ce = torch.nn.functional.cross_entropy(logits.reshape(-1, V), Y.reshape(-1), ignore_index=-100,
                                               label_smoothing=cfg.smoothing)
        jl = ((jaw - J) ** 2 * JW).sum() / JW.sum().clamp(min=1)
        loss = ce + 2.0 * jl
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 100 == 0 or step == steps - 1:
            curve.append({"step": step, "ce": round(ce.item(), 4), "jaw_mse": round(jl.item(), 5)})
            log(f"step {step}: ce {ce.item():.3f} jaw {jl.item():.4f} ({time.time() - t0:.0f} s)")
    return net, curve


def _train_items(data: Path, cfg: FaceTrainConfig, rng: np.random.Generator, t0: float) -> tuple:
    """Synthesised then real (items, n_synth, data seconds)."""
    words = synthesis_words()
    items = []
    for _ in range(cfg.synth):
        x, lab, jaw, _p, _c = synth_item(rng, words)
        items.append((x.astype(np.float16), lab, jaw, 1.0))
    n_synth = len(items)
    t_synth = time.time() - t0
    if Path(data).is_dir():
        items += real_items(Path(data), paths.user_cache_dir() / "face_pseudo_labels.json", cfg.holdout)
    t_data = time.time() - t0
    print(f"data: {n_synth} synthesised ({t_synth:.0f} s), {len(items) - n_synth} real; {t_data:.0f} s")
    return items, n_synth, t_data


def train_face(data: Path, out: Path = None, config: FaceTrainConfig = FaceTrainConfig()) -> Path:
    """Train one member on ``data`` and write ``out`` (default models/face.pt
    for seed 0, else models/face_seed{N}.pt) with its ``.log.json``; the
    ensemble's ONNX export is redone when all members are present."""
    import torch

    from .model import save_model, weights_path

    cfg = config
    torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    t0 = time.time()
    items, n_synth, t_data = _train_items(data, cfg, rng, t0)
    net, curve = train_network(items, n_synth, rng, cfg, log=lambda m: print(m, flush=True), t0=t0)
    elapsed = time.time() - t0
    meta = {"n_classes": len(viseme_names()), "hidden": cfg.hidden, "seed": cfg.seed, "steps": cfg.steps,
            "synth": n_synth, "real": len(items) - n_synth, "train_seconds": round(elapsed, 1)}
    if cfg.holdout:
        meta["holdout"] = ",".join(cfg.holdout)
    meta["train_config"] = dict(asdict(cfg), holdout=list(cfg.holdout))   # kept in the checkpoint's metadata
    out = out or weights_path(cfg.seed)
    save_model(net, meta, out, trained_on=str(data))
    log = dict(meta, data_seconds=round(t_data, 1), threads=cfg.threads, curve=curve,
               command="rigmind train face --data ../shared/data" + (f" --seed {cfg.seed}" if cfg.seed else "")
               + (f" --holdout {meta['holdout']}" if cfg.holdout else ""))
    Path(out).with_suffix(".log.json").write_text(json.dumps(log, indent=1))
    print(f"wrote {Path(out).resolve()} ({Path(out).stat().st_size / 1e6:.2f} MB) in {elapsed:.0f} s")
    from .model import ENSEMBLE_SEEDS, default_weights

    if Path(out).resolve() in [p.resolve() for p in default_weights()] and len(default_weights()) == len(ENSEMBLE_SEEDS):
        from .export_onnx import export_onnx

        # The ensemble's ONNX graph for inference, re-exported from the members now present.
        print(f"wrote {export_onnx()}")
    return Path(out)


def main_train(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="rigmind train face", description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=default_data())
    ap.add_argument("--steps", type=int, default=STEPS, help=f"training steps (default {STEPS})")
    ap.add_argument("--synth", type=int, default=SYNTH, help=f"synthesised utterances (default {SYNTH})")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None,
                    help="weights file (default models/face.pt for seed 0, else models/face_seed{N}.pt: "
                         "the shipped model is the ensemble of seeds 0, 1, 2)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--holdout", default="",
                    help="comma-separated LJ stems kept out of training, for validation runs "
                         "(e.g. LJ001-0025,...,LJ001-0032)")
    args = ap.parse_args(argv)
    limits.check_model_tool_options(args)
    limits.check_output_paths(args.out)
    holdout = tuple(h.strip() for h in args.holdout.split(",") if h.strip())
    if not real_training_files(args.data, holdout):
        # Allowed (tests train on synthesised speech alone), but a mistyped --data must not pass unnoticed.
        print(f"rigmind train face: warning: no real speech under {args.data} (speech_english_ljspeech/wavs, "
              "beat2_speech_gesture_sample): training on synthesised speech only", file=sys.stderr, flush=True)
    train_face(args.data, args.out, FaceTrainConfig(steps=args.steps, synth=args.synth, seed=args.seed,
                                                    threads=args.threads, holdout=holdout))
    return 0
