"""backend/locomotion/path_input.py: --path text, per-point speeds and
--path @FILE (#27: a long path from a file; the --help example)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rigmind.backend.errors import UserError
from rigmind.backend.locomotion import path_input


def test_the_help_example_with_per_point_speeds():
    p = path_input.parse_path("0,0;3,0,0.8;3,3")
    assert p.shape == (3, 3) and p[1, 2] == 0.8 and np.isnan(p[0, 2]) and np.isnan(p[2, 2])
    p = path_input.parse_path("0,0,1.0;3,0,0.8;3,3,1.2")
    assert np.array_equal(p[:, 2], [1.0, 0.8, 1.2])


def test_a_path_file_reads_like_the_text(tmp_path):
    text = "0,0;3,0,0.8;3,3;-1.25,4.5"
    f = tmp_path / "path.txt"
    f.write_text("# a path\n\n0,0\n3,0,0.8   # slower here\n3,3\n-1.25,4.5\n", encoding="utf-8")
    a, b = path_input.read_path_argument(text), path_input.read_path_argument(f"@{f}")
    assert np.array_equal(np.isnan(a), np.isnan(b)) and np.allclose(np.nan_to_num(a), np.nan_to_num(b))


def test_a_long_path_file_keeps_full_precision(tmp_path):
    t = np.linspace(0, 20 * np.pi, 9000)
    xy = np.c_[10 * np.cos(t / 10) * (1 + t / 100), 10 * np.sin(t / 10)]
    f = tmp_path / "long.txt"
    f.write_bytes(("\ufeff" + "\n".join(f"{x!r},{y!r}" for x, y in xy)).encode("utf-8"))
    p = path_input.read_path_argument(f"@{f}")
    assert p.shape == (9000, 2) and np.array_equal(p, xy)


@pytest.mark.parametrize("make, words", [
    (lambda d: d / "missing.txt", "no such file"),
    (lambda d: (d / "big.txt").write_text("0,0\n" * (path_input.MAX_PATH_FILE_BYTES // 4 + 1)) and d / "big.txt",
     "larger than"),
    (lambda d: (d / "bin.txt").write_bytes(b"\xff\xfe\x00garbage") and d / "bin.txt", "cannot be read as text"),
    (lambda d: (d / "words.txt").write_text("0,0\nnorth\n") and d / "words.txt", "point 2 'north'"),
    (lambda d: (d / "many.txt").write_text("\n".join(f"{i},0" for i in range(10_001))) and d / "many.txt",
     "up to 10000 points"),
])
def test_a_bad_path_file_is_one_line(tmp_path, make, words):
    with pytest.raises(UserError) as e:
        path_input.read_path_argument(f"@{make(tmp_path)}")
    assert words in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("value, words", [
    ("@" + "x" * 5000, "cannot be opened (File name too long)"),   # the fuzz run's: OSError out of Path.is_file
    ("@" + "a/" * 3000 + "p.txt", "cannot be opened (File name too long)"),
    ("@p\x00.txt", "no such file"),
])
def test_a_path_file_name_no_file_can_have_is_one_line(value, words):
    with pytest.raises(UserError) as e:
        path_input.read_path_argument(value)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_points_far_apart_parse_without_a_numpy_warning():
    # The fuzz run's: a point at -8.99e254 after one at -9.4 overflowed np.linalg.norm; numpy's
    # RuntimeWarning printed above `rigmind walk`'s one-line "the path reaches ... m" refusal.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = path_input.parse_path("-9.415688606028706,0.5,1.3;-8.991345804529634e+254,-1.76e254;1e308,0;-1e308,0")
    assert p.shape == (4, 3)
