"""Fixtures of accel's Python tests: a CPU device per test, closed after it."""

import pytest

import accel


@pytest.fixture
def device():
    opened = accel.Device.open("cpu")
    yield opened
    opened.close()


@pytest.fixture
def rng():
    import numpy as np
    return np.random.default_rng(44)
