"""``rigmind train MODEL`` refuses numbers outside the range table before it
reads any data or writes any weights: one line, exit 2 (backend/limits.py
``check_train_options``)."""

from __future__ import annotations

import pytest

from rigmind.backend import limits
from rigmind.cli import main

BAD = [
    ("gesture", ["--steps", "0"], "--steps must be between 1 and"),
    ("gesture", ["--seed", "-1"], "--seed must be between 0 and"),
    ("gesture", ["--threads", "0"], "--threads must be between 1 and 256"),
    ("gesture", ["--beta", "-0.1"], "--beta must be between 0 and 100"),
    ("gesture", ["--prior-share", "1.5"], "--prior-share must be between 0 and 1"),
    ("gesture", ["--beat-weight", "nan"], "--beat-weight must be between 0 and 100"),
    ("gesture", ["--encoder-jitter", "-4"], "--encoder-jitter must be between 0 and 16 frames"),
    ("face", ["--steps", "-5"], "--steps must be between 1 and"),
    ("face", ["--synth", "-1"], "--synth must be between 0 and"),
    ("locomotion", ["--steps", "-1"], "--steps must be between 0 and"),
    ("locomotion", ["--minutes", "0"], "--minutes must be between 0.1 and"),
    ("locomotion", ["--batch", "0"], "--batch must be between 1 and"),
    ("track", ["--seconds", "0"], "--seconds must be between 1 and"),
    ("track", ["--threads", "1000"], "--threads must be between 1 and 256"),
]


@pytest.mark.parametrize("model, args, expect", BAD, ids=[f"{m}{a[0]}" for m, a, _ in BAD])
def test_train_refuses_out_of_range_numbers_before_any_work(tmp_path, capsys, model, args, expect):
    out = tmp_path / "weights.pt"
    rc = main(["train", model, "--data", str(tmp_path / "no-data"), "--out", str(out), *args])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith(f"rigmind train: {expect}"), err
    assert not any(tmp_path.iterdir())        # nothing written, the data folder never looked for


def test_every_train_option_has_a_range():
    for name in limits.TRAIN_OPTIONS.values():
        lo, hi, _ = limits.RANGES[name]
        assert lo < hi
    assert limits.RANGES["budget_steps"][0] == 0   # locomotion: --steps 0 trains for --minutes
