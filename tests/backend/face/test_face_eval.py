"""backend/face/eval.read_lj_metadata: the LJSpeech metadata.csv that
``rigmind eval face`` reads (the one CSV RigMind reads but --path @FILE)."""

from __future__ import annotations

import pytest

from rigmind.backend.errors import UserError
from rigmind.backend.face.eval import LJMetadataError, read_lj_metadata


def test_rows_are_the_id_and_the_normalised_transcript(tmp_path):
    path = tmp_path / "metadata.csv"
    path.write_text("LJ001-0001|Mr. Smith, 2 pm|Mister Smith, two p m\r\nshort|line\n\nLJ001-0002|a|b|c\n",
                    encoding="utf-8")
    assert read_lj_metadata(path) == [("LJ001-0001", "Mister Smith, two p m"), ("LJ001-0002", "b")]


@pytest.mark.parametrize("make", [
    # the fuzz kind of input: the file saved as Latin-1 ("£" is one byte 0xA3), which raised UnicodeDecodeError
    lambda d: (d / "metadata.csv").write_bytes("LJ002-0004|Mr. Jones paid £4|four pounds\n".encode("latin-1")),
    lambda d: (d / "metadata.csv").write_bytes("LJ001-0001|a|b\n".encode("utf-16")),
    lambda d: None,  # missing
])
def test_a_file_that_is_not_utf8_text_is_one_line(tmp_path, make):
    make(tmp_path)
    with pytest.raises(LJMetadataError) as e:
        read_lj_metadata(tmp_path / "metadata.csv")
    assert isinstance(e.value, UserError) and "\n" not in str(e.value) and "--data" in str(e.value)
