"""backend/filters.py equals the scipy.ndimage functions it replaces at run time."""

import numpy as np
import pytest

ndi = pytest.importorskip("scipy.ndimage")


@pytest.mark.parametrize("mode", ["reflect", "nearest", "wrap"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gaussian_filter1d(mode, dtype):
    from rigmind.backend.filters import gaussian_filter1d

    rng = np.random.default_rng(0)
    for shape, axis, sigma in (((50,), -1, 1.0), ((40, 3), 0, 2.5), ((7, 30), 1, 7.5), ((5,), 0, 3.0)):
        x = rng.standard_normal(shape).astype(dtype)
        a = gaussian_filter1d(x, sigma, axis=axis, mode=mode)
        b = ndi.gaussian_filter1d(x, sigma, axis=axis, mode=mode)
        assert a.dtype == b.dtype and a.shape == b.shape
        assert np.abs(a - b).max() < (1e-5 if dtype == np.float32 else 1e-12)


def test_binary_closing_and_distance():
    from rigmind.backend.filters import binary_closing_1d, distance_to_zero_1d

    rng = np.random.default_rng(1)
    for _ in range(100):
        on = rng.random(60) > 0.5
        for size in (1, 3, 5, 9):
            assert np.array_equal(binary_closing_1d(on, size), ndi.binary_closing(on, structure=np.ones(size)))
        s = np.pad(on, 1)
        assert np.array_equal(distance_to_zero_1d(s), ndi.distance_transform_edt(s))


def test_running_mean_is_a_centred_box_with_edge_ends():
    from rigmind.backend.filters import running_mean

    rng = np.random.default_rng(2)
    x = rng.normal(size=(40, 3))
    for n in (1, 2, 5, 15, 16):
        lo, hi = n // 2, n - 1 - n // 2
        want = np.stack([x[np.clip(np.arange(i - lo, i + hi + 1), 0, len(x) - 1)].mean(axis=0) for i in range(len(x))])
        got = running_mean(x, n)
        assert got.shape == x.shape and np.abs(got - want).max() < 1e-12
    assert np.abs(running_mean(x.T, 5, axis=1) - running_mean(x, 5).T).max() < 1e-12


@pytest.mark.parametrize("n, sigma", [(1, 2.0), (2, 1.0), (3, 3e5), (5, 3.0), (5, 1e4), (60, 15.0), (61, 15.0)])
def test_gaussian_filter1d_wider_than_the_signal(n, sigma):
    """Taps past the edge of a short signal are folded into the edge tap
    (nearest mode): the same values as scipy, for any sigma."""
    from rigmind.backend.filters import gaussian_filter1d

    x = np.random.default_rng(3).standard_normal((n, 2))
    a = gaussian_filter1d(x, sigma, axis=0, mode="nearest")
    b = ndi.gaussian_filter1d(x, sigma, axis=0, mode="nearest")
    assert np.abs(a - b).max() < 1e-12


def test_a_path_micrometres_long_smooths_its_heading_like_scipy():
    # The fuzz run's (walk --pause on --path "0,0;0,0.0000011"): Path2D's heading filter had
    # sigma 0.3 m / 1.1 um = 2.7e5 samples, a loop of 2.2 million taps over 2 samples.
    from rigmind.backend.locomotion.path_follow import Path2D

    for pts in ([[0, 0], [0, 0.0000011]], [[0, 0], [1e-6, 0], [2.1e-6, 0]]):
        path = Path2D(pts)
        sigma = max(0.3 / path.ds, 1e-3)
        d = np.diff(path.xy, axis=0)
        heading = np.unwrap(np.arctan2(d[:, 1], d[:, 0]))
        heading = np.concatenate([heading, heading[-1:]])
        assert np.abs(path.heading - ndi.gaussian_filter1d(heading, sigma, mode="nearest")).max() < 1e-12
