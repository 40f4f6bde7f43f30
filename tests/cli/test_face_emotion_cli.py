"""``rigmind face --emotion``: a CSV with the emotion in it, and every bad
entry refused with exit 2 and one line (the problem and the fix)."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from conftest import data_file

from test_cli import run

LJ = "speech_english_ljspeech/wavs/LJ001-0003.wav"


def _column(path, name):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return np.array([float(r[name]) for r in rows])


def test_face_emotion_csv_smiles(tmp_path):
    wav = data_file(LJ)
    for name, extra in (("neutral", []), ("happy", ["--emotion", "happy:1"])):
        r = run("face", "--audio", wav, "--out", tmp_path / f"{name}.csv", *extra)
        assert r.returncode == 0, r.stderr
    d = _column(tmp_path / "happy.csv", "MouthSmileLeft").mean() - _column(tmp_path / "neutral.csv", "MouthSmileLeft").mean()
    assert d >= 0.2


@pytest.mark.parametrize("entry, expect", [
    ("joyful:1", "unknown emotion 'joyful'"),
    ("happy:2", "between 0 and 1"),
    ("happy:1@-1-3", "time range"),
    ("happy:-0.5", "between 0 and 1"),
    ("happy@-2-3", "time range"),
])
def test_bad_emotion_is_one_line(tmp_path, entry, expect):
    r = run("face", "--audio", data_file(LJ), "--out", tmp_path / "f.csv", "--emotion", entry)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and expect in lines[0], r.stderr
    assert not (tmp_path / "f.csv").exists()


def test_overlapping_ranges_are_one_line(tmp_path):
    r = run("face", "--audio", data_file(LJ), "--out", tmp_path / "f.csv",
            "--emotion", "happy:1@0-4", "--emotion", "sad:1@3-6")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "overlap" in r.stderr, r.stderr


def test_emotion_after_the_audio_is_one_line(tmp_path):
    r = run("face", "--audio", data_file(LJ), "--out", tmp_path / "f.csv", "--emotion", "sad:1@60-70")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "after the audio ends" in lines[0] and " s long" in lines[0], r.stderr


def test_batch_face_takes_the_emotion(tmp_path):
    audio = tmp_path / "in"
    audio.mkdir()
    (audio / "line.wav").write_bytes(data_file(LJ).read_bytes())
    for name, extra in (("neutral", []), ("sad", ["--emotion", "sad:1"])):
        r = run("batch", "face", "--audio-dir", audio, "--out-dir", tmp_path / name, "--workers", "1", *extra)
        assert r.returncode == 0, r.stderr
    brow = [_column(tmp_path / n / "line.csv", "BrowInnerUp").mean() for n in ("neutral", "sad")]
    assert brow[1] >= brow[0] + 0.2
