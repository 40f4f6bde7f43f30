"""Weight files are read as plain weights only (``weights_only=True``): a
crafted pickle cannot run code, and a bad file is one line naming it that
never suggests ``weights_only=False`` (issue #17)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch
from conftest import CodePayload

from rigmind.backend.locomotion import style_classifier


def _tiny(seed=0) -> style_classifier.StyleClassifier:
    torch.manual_seed(seed)
    net = style_classifier._build_net(5, 2)
    info = {"seed": np.int64(seed), "window_counts": np.array([3, 4]), "note": "tiny"}
    return style_classifier.StyleClassifier(net, ("normal", "elderly"), np.arange(5.0), np.ones(5), 30, 10, info)


def test_style_classifier_round_trip(tmp_path):
    a = _tiny()
    a.save(tmp_path / "c.pt")
    b = style_classifier.StyleClassifier.load(tmp_path / "c.pt")
    assert b.styles == a.styles and (b.window, b.hop) == (30, 10)
    np.testing.assert_array_equal(b.mean, a.mean)
    assert b.info == {"seed": 0, "window_counts": [3, 4], "note": "tiny"}
    x = np.random.default_rng(0).normal(size=(40, 5))
    np.testing.assert_allclose(b.window_probs(x), a.window_probs(x))


@pytest.mark.parametrize("kind", ["pickle", "corrupt", "empty"])
def test_bad_classifier_file_is_one_safe_line(tmp_path, kind):
    path = tmp_path / "style_classifier_seed0.pt"
    marker = tmp_path / "code_ran"
    if kind == "pickle":
        torch.save({"state": CodePayload(marker), "styles": ["a"], "mean": [0.0]}, path, pickle_module=pickle)
    elif kind == "corrupt":
        path.write_bytes(b"PK\x03\x04 this is not a zip archive" * 10)
    else:
        path.write_bytes(b"")
    with pytest.raises(ValueError) as e:
        style_classifier.StyleClassifier.load(path)
    msg = str(e.value)
    assert "\n" not in msg and str(path) in msg and "weights_only" not in msg
    assert not marker.exists(), "loading a weight file must never run code"
