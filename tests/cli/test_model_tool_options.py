"""``rigmind train MODEL`` and ``rigmind eval MODEL`` refuse numbers outside
the range table before they read any data or write anything, and a data
folder without what they read: one line, exit 2 (backend/limits.py
``check_model_tool_options``)."""

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


EVAL_BAD = [
    ("gesture", ["--seeds", "0"], "--seeds must be between 1 and 1000"),
    ("gesture", ["--styles", "--seconds", "-1"], "--seconds must be between 0 and 3600 s"),
    ("gesture", ["--amount", "1.5"], "--amount must be between 0 and 1"),
    ("face", ["--emotion", "--voices", "-1"], "--voices must be between 0 and 1000"),
    ("locomotion", ["--max-clips", "-1"], "--max-clips must be between 1 and"),
    ("locomotion", ["--timing-steps", "0"], "--timing-steps must be between 1 and"),
    # A data folder without what the evaluation reads.
    ("face", [], "lacks speech_english_ljspeech"),
    ("gesture", ["--styles"], "none of the evaluation's voices"),
    ("gesture", ["--alignment"], "the real capture the gain is set against"),
    ("locomotion", [], "no locomotion clips under"),
    ("locomotion", ["--model", "/nonexistent/walk.pt"], "--model /nonexistent/walk.pt: no such file"),
]


@pytest.mark.parametrize("model, args, expect", EVAL_BAD, ids=[f"{m}{''.join(a[:1])}{len(a)}" for m, a, _ in EVAL_BAD])
def test_eval_refuses_bad_numbers_and_missing_data_in_one_line(tmp_path, capsys, model, args, expect):
    data = tmp_path / "data"
    data.mkdir()
    out = tmp_path / "report.md"
    extra = ["--out", str(out)] if model in ("face", "locomotion") else []
    rc = main(["eval", model, "--data", str(data), *extra, *args])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("rigmind eval: ") and expect in err[0], err
    assert not out.exists()


def test_eval_locomotion_refuses_a_model_that_does_not_load(tmp_path, capsys):
    junk = tmp_path / "walk.onnx"
    junk.write_bytes(b"not a model")
    out = tmp_path / "report.md"
    rc = main(["eval", "locomotion", "--data", str(tmp_path), "--out", str(out), "--model", str(junk)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith(f"rigmind eval: --model {junk}: "), err
    assert "or --no-neural" in err[0] and not out.exists()


def test_every_train_option_has_a_range():
    for name in limits.MODEL_TOOL_OPTIONS.values():
        lo, hi, _ = limits.RANGES[name]
        assert lo < hi
    assert limits.RANGES["budget_steps"][0] == 0   # locomotion: --steps 0 trains for --minutes


def test_train_locomotion_refuses_a_folder_without_clips_whatever_the_cache_holds(tmp_path, capsys):
    data = tmp_path / "data"
    data.mkdir()
    rc = main(["train", "locomotion", "--data", str(data), "--out", str(tmp_path / "w.pt")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "no locomotion clips under" in err[0], err
    assert not (tmp_path / "w.pt").exists()


def test_missing_gesture_weights_are_the_users_to_fix(tmp_path):
    from rigmind.backend.errors import UserError
    from rigmind.backend.gesture.generate import GestureModel

    with pytest.raises(UserError, match="not found — train them"):
        GestureModel.load(tmp_path / "gesture.pt", runtime="torch")


@pytest.mark.parametrize("argv, expect", [
    (["train", "gesture", "--out", "{folder}"], "is a folder; give a file name, e.g. {folder}/take.pt"),
    (["train", "track", "--out", "{file}/w.pt"], "is a file, not a folder"),
    (["train", "locomotion", "--out", "{folder}"], "is a folder"),
    (["eval", "face", "--out", "{folder}"], "is a folder; give a file name, e.g. {folder}/take.md"),
    (["eval", "gesture", "--json", "{file}/r.json"], "is a file, not a folder"),
], ids=["train-gesture-folder", "train-track-under-a-file", "train-locomotion-folder", "eval-face-folder",
        "eval-gesture-under-a-file"])
def test_an_output_that_cannot_be_written_is_refused_before_any_work(tmp_path, capsys, argv, expect):
    folder, file = tmp_path / "out", tmp_path / "a-file"
    folder.mkdir()
    file.write_text("x")
    subs = {"folder": str(folder), "file": str(file)}
    rc = main([a.format(**subs) for a in argv] + ["--data", str(tmp_path / "no-data")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and expect.format(**subs) in err[0], err
    assert not any(folder.iterdir())
