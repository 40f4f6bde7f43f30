"""Fuzzing the file readers (issue #17 item 7, issue #27 item 6), short
version for CI: 300 generated inputs each through the BVH reader, the SMPL-X
npz reader, the audio loader, ``rigmind walk``'s --path (text and @FILE) and
--pause reading, a spreadsheet's CSV points file, the batch walk manifest,
the glTF reference check and the face eval's LJSpeech metadata.csv; nothing
may escape but the documented error types (BVHError, SMPLXFileError,
AudioError, a UserError). The full run (10^4 each) is
``bench/fuzz_inputs.py``; its totals are in bench/results/robustness.md."""

from __future__ import annotations

import io
import shutil

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings

from support import fuzz_inputs as F

CI = settings(max_examples=300, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.fixture(scope="module")
def folder():
    path = F.scratch_folder()
    yield path
    shutil.rmtree(path, ignore_errors=True)


@CI
@given(text=F.bvh_texts())
def test_bvh_reader_only_raises_bvherror(text):
    F.check_bvh(text)


def test_npz_reader_only_raises_smplxfileerror(folder):
    @CI
    @given(data=F.npz_bytes())
    def run(data):
        F.check_npz(data, folder)

    run()


def test_audio_loader_only_raises_audioerror(folder):
    @CI
    @given(item=F.audio_files())
    def run(item):
        F.check_audio(item, folder)

    run()


def _version_flipped_npz() -> bytes:
    """The full run's failure (bench/fuzz_inputs.py, seed 17): one byte of the
    zip header changed so that zipfile raised NotImplementedError ("zip file
    version 24.4") instead of BadZipFile."""
    buf = io.BytesIO()
    np.savez(buf, poses=np.zeros((1, 165), np.float32))
    data = bytearray(buf.getvalue())
    central = data.rindex(b"PK\x01\x02")
    data[central + 6] = 244  # "version needed to extract": 24.4
    return bytes(data)


def test_npz_with_an_unknown_zip_version_is_refused(folder):
    assert F.check_npz(_version_flipped_npz(), folder) == "refused"


def _fuzz(strategy, check, folder, **overrides):
    @settings(CI, **overrides)
    @given(x=strategy)
    def run(x):
        check(x, folder)

    run()


def test_walk_path_reading_only_raises_usererror(folder):
    _fuzz(F.walk_path_args(), F.check_walk_path, folder)


def test_walk_pause_reading_only_raises_usererror(folder):
    _fuzz(F.walk_pause_args(), F.check_walk_path, folder)


def test_csv_points_file_only_raises_usererror(folder):
    _fuzz(F.csv_point_files(), F.check_csv_points, folder)


def test_gltf_reference_check_only_raises_gltfreferenceerror(folder):
    _fuzz(F.gltf_files(), F.check_gltf, folder)


def test_lj_metadata_reader_only_raises_ljmetadataerror(folder):
    _fuzz(F.lj_metadata_files(), F.check_lj_metadata, folder)


@pytest.mark.filterwarnings("ignore:Generating overly large repr")  # a failing input may be 100 kB of JSON
def test_walk_manifest_reader_only_raises_batcherror(folder):
    _fuzz(F.walk_manifests(), F.check_walk_manifest, folder, phases=[Phase.explicit, Phase.generate])


# What the fuzzing found in batch.walk_items, each in its smallest form (the full run,
# bench/fuzz_inputs.py --readers manifest --seed 17, found the first four and the empty point;
# the booleans came from the generator, the objects by hand): each is now a one-line refusal.
_NESTED = "[" * 50_000 + "]" * 50_000
WALK_MANIFEST_BUGS = [
    pytest.param('[{"name": "a", "path": "0,0;3,0", "style": ' + _NESTED + "}]", id="nested-50000-deep"),
    pytest.param('[{"name": "a", "path": "0,0;3,0", "speed": ' + "1" * 5000 + "}]", id="integer-of-5000-digits"),
    pytest.param('[{"name": "a", "path": [[' + "1" * 400 + ", 0], [3, 0]]}]", id="coordinate-of-400-digits"),
    pytest.param('[{"name": "a", "path": ["12", "34"]}]', id="points-as-strings"),
    pytest.param('[{"name": "a", "path": [[true, false], [3, 0]]}]', id="booleans-as-coordinates"),
    pytest.param('[{"name": "a", "path": [[0, 0], [3, 0], []]}]', id="an-empty-point"),
    pytest.param('[{"name": "a", "path": [{"3": 1}, {"0": 2}]}]', id="points-as-objects"),
    pytest.param('[{"name": "a", "path": [[0, 0, 1, 2], [3, 0]]}]', id="a-point-of-four-numbers"),
]


@pytest.mark.parametrize("text", WALK_MANIFEST_BUGS)
def test_walk_manifest_bad_entry_is_a_batcherror(tmp_path, text):
    from rigmind import batch
    from rigmind.backend.errors import UserError

    path = tmp_path / "walks.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UserError):
        batch.walk_items(path)
