"""``rigmind eval gesture --styles`` (backend/gesture/style_eval.py) on a real voice."""

import json

from conftest import data_file

from rigmind.backend.gesture import style_eval
from rigmind.backend.gesture.eval import main_eval


def test_sad_hands_slower_and_lower_than_happy_on_a_held_out_voice():
    from rigmind.backend.gesture.generate import get_model

    feats = style_eval.voice_features(data_file("speech_multilingual/silero_en.wav"), seconds=4.0)
    rows = {r["emotion"]: r for r in style_eval.emotion_hands(get_model(), feats, "silero_en")}
    assert rows["neutral"]["speed_ratio"] == 1.0
    assert rows["happy"]["speed_ratio"] >= 1.1
    assert rows["sad"]["speed_ratio"] <= 0.9
    assert rows["sad"]["wrist_height"] < rows["happy"]["wrist_height"]


def test_main_eval_styles_writes_the_summary_json(tmp_path, data_dir):
    data = data_dir
    data_file("beat2_speech_gesture_sample/2_scott_0_1_1.npz")
    out = tmp_path / "styles.json"
    assert main_eval(["--styles", "--seconds", "3", "--voices", "1", "--data", str(data), "--json", str(out)]) == 0
    res = json.loads(out.read_text())
    assert {"voices", "emotion", "classifier", "clip", "summary"} <= set(res)
    assert len(res["voices"]) == 1 and {r["emotion"] for r in res["emotion"]} == set(style_eval.EMOTIONS)
    assert set(res["summary"]["classifier_accuracy"]) == set(res["classifier"]["generated"])
    assert {"with", "without"} <= set(res["clip"][0])
