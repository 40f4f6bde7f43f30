"""``rigmind eval face --emotion`` (backend/face/emotion_eval.py) on real voices."""

import json

from conftest import data_file

from rigmind.backend.face import emotion_eval
from rigmind.backend.face.eval import main_eval


def test_happy_smiles_and_keeps_the_jaw_on_a_held_out_voice():
    wav = data_file("speech_multilingual/silero_en.wav")
    row = emotion_eval.evaluate_voice(wav, None, emotions=("happy", "sad"))
    assert row["delta"]["happy"]["MouthSmileLeft + MouthSmileRight"] > 0.2
    assert row["delta"]["sad"]["BrowInnerUp"] > 0.2
    assert abs(row["jaw_r"]["happy"] - row["jaw_r"]["neutral"]) <= emotion_eval.JAW_R_TOLERANCE
    assert row["seal"] == {}  # no transcript: no p/b/m phones to check


def test_main_eval_emotion_writes_the_summary_json(tmp_path, data_dir):
    data = data_dir
    data_file("speech_english_ljspeech/metadata.csv")
    out = tmp_path / "emotion.json"
    assert main_eval(["--emotion", "--voices", "1", "--data", str(data), "--json", str(out)]) == 0
    res = json.loads(out.read_text())
    assert {"voices", "emotions", "summary"} <= set(res)
    assert [bool(v["transcript"]) for v in res["voices"]] == [False, True]  # a short run keeps a seal-check clip
    s = res["summary"]
    assert {"checks", "jaw", "seal", "all_pass"} <= set(s)
    assert {c["emotion"] for c in s["checks"]} == set(emotion_eval.EMOTIONS)
    assert s["seal"]["happy"]["total"] > 0
