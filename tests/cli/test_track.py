"""``rigmind track``: bad tracker files are one line and exit 2 (nothing
written); a clip's own head and wrists, and a tracker CSV, become a body on
the mannequin (in-process ``cli.main`` on the real bpy)."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import data_file
from rigmind import cli
from rigmind.backend.tracking import trackers as T

CMU_131_01 = "cmu_131_start_walk_stop/131_01.bvh"


@pytest.fixture(scope="module")
def mannequin(tmp_path_factory):
    out = tmp_path_factory.mktemp("rig") / "mannequin.blend"
    assert cli.main(["mannequin", "--out", str(out)]) == 0
    return out


def _take(n=60, fps=30.0):
    t = np.arange(n) / fps
    pos = np.zeros((n, 3, 3))
    pos[:, 0] = (0.0, 0.0, 1.65)
    pos[:, 1] = (0.25, -0.1, 0.95)
    pos[:, 2] = (-0.25, -0.1, 0.95)
    pos[:, :, 0] += 0.4 * t[:, None]  # walking slowly along +X
    q = np.zeros((n, 3, 4))
    q[..., 0] = 1.0
    return T.TrackerTake(t, pos, q)


def _csv_lines(tmp_path):
    return T.tracker_csv_text(_take()).splitlines()


def _with_cell(lines, row, col, value):
    cells = lines[row].split(",")
    cells[T.CSV_COLUMNS.index(col)] = value
    return lines[:row] + [",".join(cells)] + lines[row + 1:]


def _bad_files(tmp_path):
    lines = _csv_lines(tmp_path)
    header = lines[0].split(",")
    drop = [k for k, c in enumerate(header) if c in ("rhand_z", "head_qw")]
    missing = [",".join(c for k, c in enumerate(ln.split(",")) if k not in drop) for ln in lines]
    far = _with_cell(lines, 9, "lhand_y", "5.0")
    back = _with_cell(lines, 20, "time", "0.1")
    return {
        "nan": (_with_cell(lines, 5, "head_x", "NaN"), "is not a finite number"),
        "missing columns": (missing, "missing columns head_qw, rhand_z"),
        "time backwards": (back, "time goes backwards at line 21"),
        "5 m apart": (far, "the head and left hand trackers are 5."),
        "empty": ([], "empty"),
    }


@pytest.mark.parametrize("case", ["nan", "missing columns", "time backwards", "5 m apart", "empty"])
def test_bad_tracker_file_is_one_line_exit_2(tmp_path, capsys, mannequin, case):
    lines, expect = _bad_files(tmp_path)[case]
    src = tmp_path / "bad.csv"
    src.write_text("\n".join(lines) + ("\n" if lines else ""))
    out = tmp_path / "t.bvh"
    code = cli.main(["track", "--trackers", str(src), "--rig", str(mannequin), "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1 and err.startswith("rigmind track: ") and expect in err, err
    assert not out.exists()


@pytest.mark.parametrize("args,expect", [
    (["--trackers", "{tmp}/none.csv"], "no such file"),
    (["--trackers-from", "{tmp}/none.bvh"], "no such file"),
    (["--trackers-from", "{tmp}/clip.csv"], "--trackers-from reads a clip"),
    (["--trackers", "{tmp}/t.csv", "--fps", "0"], "--fps must be between 1 and 240"),
])
def test_missing_inputs_are_one_line(tmp_path, capsys, mannequin, args, expect):
    T.write_tracker_csv(tmp_path / "clip.csv", _take())
    T.write_tracker_csv(tmp_path / "t.csv", _take())
    argv = ["track", *(a.format(tmp=tmp_path) for a in args), "--rig", str(mannequin), "--out", str(tmp_path / "o.bvh")]
    code = cli.main(argv)
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and expect in err, err


def test_trackers_from_cmu_clip_onto_mannequin(tmp_path, capsys, mannequin):
    from rigmind.backend.bvh import read_bvh

    out = tmp_path / "t.bvh"
    code = cli.main(["track", "--trackers-from", str(data_file(CMU_131_01)), "--rig", str(mannequin),
                     "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "trackers 131_01: 994 samples" in captured.out
    m = read_bvh(out)
    # 8.28 s of 120 fps capture, at the model's 30 fps.
    assert m.fps == pytest.approx(30.0) and m.num_frames == 249
    head = m.world_positions()[:, m.skeleton.index("Head")]
    assert np.all(np.isfinite(head))
    assert np.ptp(head[:, :2], axis=0).max() > 2.0  # the subject walks several metres


def test_placement_puts_the_hands_on_a_csvs_trackers_or_scales_them(tmp_path, capsys, mannequin):
    """A tracker file's positions are where the rig's hands go (the default,
    ``--placement rig``); ``--placement performer`` scales another body's
    onto the rig as a retarget does, and its hands miss the file's places."""
    from rigmind.backend.bvh import read_bvh
    from rigmind.backend.requests.track import TrackRequest
    from rigmind.backend.errors import UserError

    take = _take()
    take.positions[:, 1, [0, 1, 2]] += (-0.05, -0.05, 0.05)  # the hands a little in, forward and up: within reach
    take.positions[:, 2, [0, 1, 2]] += (0.05, -0.05, 0.05)
    src = T.write_tracker_csv(tmp_path / "walk.csv", take)
    miss = {}
    for placement in ("rig", "performer"):
        out = tmp_path / f"{placement}.bvh"
        assert cli.main(["track", "--trackers", str(src), "--rig", str(mannequin), "--placement", placement,
                         "--out", str(out)]) == 0, capsys.readouterr().err
        m = read_bvh(out)
        p = m.world_positions()
        hands = p[:, [m.skeleton.index("LeftHand"), m.skeleton.index("RightHand")]]
        miss[placement] = np.linalg.norm(hands - take.positions[:len(hands), 1:], axis=-1)
    assert np.median(miss["rig"]) < 0.005
    assert np.median(miss["performer"]) > np.median(miss["rig"]) + 0.02
    with pytest.raises(UserError, match="--placement 'sideways'"):
        TrackRequest(trackers=str(src), placement="sideways")


def test_tracker_csv_onto_mannequin_blend(tmp_path, capsys, mannequin):
    import bpy

    src = T.write_tracker_csv(tmp_path / "walk.csv", _take())
    out = tmp_path / "t.blend"
    code = cli.main(["track", "--trackers", str(src), "--rig", str(mannequin), "--method", "baseline",
                     "--start-frame", "11", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    bpy.ops.wm.open_mainfile(filepath=str(out))
    arm = bpy.data.objects["RigMind Mannequin"]
    action = arm.animation_data.action
    assert action.name == "RigMind Track · walk"
    assert tuple(round(f) for f in action.frame_range) == (11, 11 + 59)


def test_batch_track_folder(tmp_path, mannequin, blender_in_subprocess):
    import json
    import subprocess
    import sys
    from pathlib import Path

    folder = tmp_path / "in"
    folder.mkdir()
    T.write_tracker_csv(folder / "walk.csv", _take())
    (folder / "broken.csv").write_text("time,head_x\n0,1\n")
    out = tmp_path / "out"
    # The batch's worker processes need a process of their own (the installed command, as a user runs it).
    r = subprocess.run([str(Path(sys.executable).with_name("rigmind")), "batch", "track", "--trackers-dir", str(folder),
                        "--rig", str(mannequin), "--out-dir", str(out), "--format", "bvh", "--method", "baseline",
                        "--workers", "1"], capture_output=True, text=True, timeout=300)
    assert (out / "batch_report.json").is_file(), r.stderr
    report = json.loads((out / "batch_report.json").read_text())
    status = {it["name"]: it for it in report["items"]}
    assert r.returncode == 1 and report["kind"] == "track"
    assert status["walk"]["status"] == "done" and (out / "walk.bvh").stat().st_size > 10_000
    assert status["broken"]["status"] == "failed" and "missing columns head_y" in status["broken"]["error"]
