"""Fixtures of the CUDA tests (run by scripts/gpu-python-check): a CUDA device per test, closed after it; the tests
skip where accel has no CUDA device (a CPU-only build, or no GPU)."""

import pytest

import accel


@pytest.fixture
def cuda():
    try:
        opened = accel.Device.open("cuda")
    except accel.Error as error:
        pytest.skip(f"accel has no CUDA device here: {error}")
    yield opened
    opened.close()


@pytest.fixture
def rng():
    import numpy as np
    return np.random.default_rng(44)
