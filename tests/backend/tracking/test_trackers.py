"""The tracker take's CSV file: a round trip, and every bad file refused
with one line that names the problem (backend/tracking/trackers.py)."""

from __future__ import annotations

import numpy as np
import pytest

from rigmind.backend import axes
from rigmind.backend.errors import UserError
from rigmind.backend.tracking import trackers as T


def standing_take(n: int = 40, fps: float = 30.0) -> T.TrackerTake:
    """A person 1.7 m tall swaying slightly: head over the origin, hands at the hips."""
    t = np.arange(n) / fps
    sway = 0.05 * np.sin(2 * np.pi * 0.5 * t)
    pos = np.zeros((n, 3, 3))
    pos[:, 0] = np.stack([sway, 0 * t, 1.65 + 0 * t], axis=-1)
    pos[:, 1] = np.stack([0.25 + sway, 0 * t, 0.9 + 0 * t], axis=-1)
    pos[:, 2] = np.stack([-0.25 + sway, 0 * t, 0.9 + 0 * t], axis=-1)
    ang = 0.3 * np.sin(t)
    q = np.zeros((n, 3, 4))
    q[..., 0] = np.cos(ang / 2)[:, None]
    q[..., 3] = np.sin(ang / 2)[:, None]
    return T.TrackerTake(t, pos, q)


def write_rows(path, header, rows):
    path.write_text(",".join(header) + "\n" + "\n".join(",".join(str(v) for v in r) for r in rows) + "\n")
    return path


def table(take):
    return np.concatenate([take.times[:, None],
                           np.concatenate([take.positions, take.rotations], -1).reshape(take.num_samples, -1)], 1)


def test_round_trip(tmp_path):
    take = standing_take()
    p = T.write_tracker_csv(tmp_path / "t.csv", take)
    back = T.read_tracker_csv(p)
    assert back.num_samples == take.num_samples
    assert np.abs(back.times - take.times).max() < 1e-6
    assert np.abs(back.positions - take.positions).max() < 1e-6
    assert np.abs(back.rotations - take.rotations).max() < 2e-6
    assert p.read_text().splitlines()[0] == ",".join(T.CSV_COLUMNS)


def test_columns_by_name_comments_and_extra_columns(tmp_path):
    take = standing_take(5)
    tab = table(take)
    order = np.arange(len(T.CSV_COLUMNS))[::-1]  # reversed columns, plus one the reader ignores
    header = [T.CSV_COLUMNS[k] for k in order] + ["confidence"]
    rows = [[*(f"{v:.6f}" for v in r[order]), "1"] for r in tab]
    p = tmp_path / "t.csv"
    p.write_text("# exported by a headset\n" + ",".join(header) + "\n" + "\n".join(",".join(r) for r in rows) + "\n")
    back = T.read_tracker_csv(p)
    assert np.abs(back.positions - take.positions).max() < 1e-6


def test_y_up_file(tmp_path):
    take = standing_take(5)
    yup = T.TrackerTake(take.times, axes.positions_blender_to_yup(take.positions),
                        axes.quats_blender_to_yup(take.rotations))
    back = T.read_tracker_csv(T.write_tracker_csv(tmp_path / "y.csv", yup), up="Y")
    assert np.abs(back.positions - take.positions).max() < 1e-5
    assert np.abs(np.abs(np.sum(back.rotations * take.rotations, -1)) - 1).max() < 1e-5


def _bad(tmp_path, edit):
    tab = table(standing_take())
    header = list(T.CSV_COLUMNS)
    header, tab = edit(header, tab)
    return write_rows(tmp_path / "bad.csv", header, tab)


def _set(row, col, value):
    def edit(header, tab):
        tab = tab.astype(object)
        tab[row, T.CSV_COLUMNS.index(col)] = value
        return header, tab
    return edit


def _far(header, tab):
    tab = tab.copy()
    tab[7, T.CSV_COLUMNS.index("rhand_x")] = 5.0  # the right hand 5 m to the side of the head
    return header, tab


def _backwards(header, tab):
    tab = tab.copy()
    tab[10, 0] = tab[8, 0]
    return header, tab


def _zero_quaternion(header, tab):
    tab = tab.copy()
    k = T.CSV_COLUMNS.index("rhand_qw")
    tab[3, k:k + 4] = 0.0
    return header, tab


def _drop(*cols):
    def edit(header, tab):
        keep = [k for k, c in enumerate(header) if c not in cols]
        return [header[k] for k in keep], tab[:, keep]
    return edit


BAD = [
    ("nan", _set(4, "head_z", "nan"), "position at line 6 is not a finite number"),
    ("inf quaternion", _set(2, "lhand_qx", "inf"), "quaternion at line 4 is not a finite number"),
    ("text", _set(3, "rhand_y", "abc"), "line 5, column rhand_y: 'abc' is not a number"),
    ("missing columns", _drop("lhand_qw", "time"), "missing columns time, lhand_qw"),
    ("time backwards", _backwards, "time goes backwards at line 12"),
    ("time repeats", _set(5, "time", repr(4 / 30)), "time repeats at line 7"),
    ("5 m apart", _far, "the head and right hand trackers are 5."),
    ("zero quaternion", _zero_quaternion, "the right hand's quaternion at line 5 has zero length"),
    ("one sample", lambda h, t: (h, t[:1]), "1 sample; give at least 2"),
    ("far away", _set(0, "head_x", "1e6"), "1e+06 m from the origin"),
]


@pytest.mark.parametrize("name,edit,expect", BAD, ids=[b[0] for b in BAD])
def test_bad_file_is_one_line(tmp_path, name, edit, expect):
    p = _bad(tmp_path, edit)
    with pytest.raises(UserError) as e:
        T.read_tracker_csv(p)
    msg = str(e.value)
    assert "\n" not in msg and expect in msg, msg
    assert str(p) in msg


@pytest.mark.parametrize("content,expect", [
    ("", "empty"),
    ("# only a comment\n\n", "empty"),
    (",".join(T.CSV_COLUMNS) + "\n", "a header but no samples"),
    (",".join(T.CSV_COLUMNS) + "\n0,1,2\n", "line 2 has 3 values, the header 22"),
    ("\xff\xfe not text", "not text"),
])
def test_bad_text_is_one_line(tmp_path, content, expect):
    p = tmp_path / "t.csv"
    p.write_bytes(content.encode("latin-1"))
    with pytest.raises(UserError) as e:
        T.read_tracker_csv(p)
    assert expect in str(e.value) and "\n" not in str(e.value)


def test_missing_file_and_limits(tmp_path, monkeypatch):
    with pytest.raises(UserError, match="no such file"):
        T.read_tracker_csv(tmp_path / "none.csv")
    p = T.write_tracker_csv(tmp_path / "t.csv", standing_take())
    monkeypatch.setattr(T, "MAX_FILE_BYTES", 1000)
    with pytest.raises(UserError, match="more than RigMind's"):
        T.read_tracker_csv(p)
    monkeypatch.setattr(T, "MAX_FILE_BYTES", 10**9)
    monkeypatch.setattr(T, "MAX_SAMPLES", 10)
    with pytest.raises(UserError, match="40 rows, more than RigMind's 10"):
        T.read_tracker_csv(p)


def test_check_take_on_arrays():
    take = standing_take()
    assert T.check_take(take) is take
    long = T.TrackerTake(take.times * 1e4, take.positions, take.rotations)
    with pytest.raises(UserError, match="long, more than RigMind's 3600 s"):
        T.check_take(long)
    pos = take.positions.copy()
    pos[3, 1] = np.nan
    with pytest.raises(UserError, match="position at sample 4"):
        T.check_take(T.TrackerTake(take.times, pos, take.rotations))
