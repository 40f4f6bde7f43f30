"""``rigmind gesture --style / --style-clip`` refusals (issue #29): one line, exit 2."""

from __future__ import annotations

import numpy as np
import pytest

from test_cli import run

SNAKE_BVH = """HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Tail1
  {
    OFFSET 0 0 10
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 0 10
    }
  }
}
MOTION
Frames: 40
Frame Time: 0.0333333
""" + "".join(f"0 0 0 0 0 0 0 {i} 0\n" for i in range(40))


@pytest.fixture
def speech(tmp_path):
    import soundfile as sf

    t = np.arange(16000) / 16000.0
    path = tmp_path / "a.wav"
    sf.write(path, (0.2 * np.sin(2 * np.pi * 180 * t) * (np.sin(2 * np.pi * 3 * t) > 0)).astype(np.float32), 16000)
    return path


def _one_line_error(r):
    assert r.returncode == 2, r.stdout + r.stderr
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1, r.stderr
    return lines[0]


def test_unknown_style_exits_2_with_one_line(speech, tmp_path):
    line = _one_line_error(run("gesture", "--audio", speech, "--out", tmp_path / "x.npz", "--style", "wobbly"))
    assert "unknown gesture style 'wobbly'" in line


@pytest.mark.bpy  # the style clip is read as `rigmind retarget` reads clips
def test_non_humanoid_style_clip_exits_2_with_one_line(speech, tmp_path):
    clip = tmp_path / "snake.bvh"
    clip.write_text(SNAKE_BVH)
    line = _one_line_error(run("gesture", "--audio", speech, "--out", tmp_path / "x.npz", "--style-clip", clip))
    assert "not a humanoid" in line
    assert not (tmp_path / "x.npz").exists()
