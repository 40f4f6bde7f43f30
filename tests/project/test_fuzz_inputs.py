"""Fuzzing the file readers (issue #17 item 7), short version for CI: a few
hundred generated inputs each through the BVH reader, the SMPL-X npz reader
and the audio loader; nothing may escape but the documented error types
(BVHError, SMPLXFileError, AudioError). The full run (10^4 each) is
``bench/fuzz_inputs.py``; its totals are in bench/results/robustness.md."""

from __future__ import annotations

import shutil

import io

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

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
