"""bf16 buffers to and from NumPy through ml_dtypes' bfloat16 (NumPy has none of its own): uploads, downloads, copies
converting other values, a recording's host copies, BLAS on bf16 against float64 within one rounding, and the error
that names ml_dtypes where it is missing."""

import sys

import ml_dtypes
import numpy as np
import pytest

import accel

BF16 = ml_dtypes.bfloat16
ULP = 2.0 ** -7   # one unit in the last place of a bfloat16 relative to its value, at its widest


def bits(array):
    return np.asarray(array).view(np.uint16)


def test_a_bfloat16_array_goes_up_and_comes_back_bit_for_bit(device, rng):
    values = (rng.standard_normal((7, 33)) * 1e3).astype(BF16)
    values.flat[:4] = [np.inf, -np.inf, 0.0, -0.0]
    buffer = device.upload(values)
    assert buffer.dtype == "bfloat16" and buffer.shape == (7, 33)
    back = buffer.numpy()
    assert back.dtype == BF16 and back.shape == (7, 33)
    np.testing.assert_array_equal(bits(back), bits(values))


def test_other_values_are_rounded_to_bfloat16_on_the_way_in(device, rng):
    wanted = rng.uniform(-4, 4, 41)
    named = device.upload(wanted, dtype="bfloat16")
    as_type = device.upload(wanted.tolist(), dtype=BF16)
    for buffer in (named, as_type):
        assert buffer.dtype == "bfloat16"
        np.testing.assert_array_equal(bits(buffer.numpy()), bits(wanted.astype(BF16)))
    named.copy_from(np.arange(41, dtype=np.float32)).result()
    np.testing.assert_array_equal(named.numpy().astype(np.float32), np.arange(41, dtype=np.float32))


def test_axpy_on_bfloat16_rounds_once(device, rng):
    x0, y0 = rng.uniform(-1, 1, 513).astype(BF16), rng.uniform(-1, 1, 513).astype(BF16)
    x, y = device.upload(x0), device.upload(y0)
    device.axpy(x, y, alpha=-1.5).result()
    want = y0.astype(np.float64) - 1.5 * x0.astype(np.float64)
    got = y.numpy().astype(np.float64)
    np.testing.assert_array_less(np.abs(got - want), ULP * np.abs(want) + 1e-6)


def test_a_recordings_host_copies_take_bfloat16_arrays(device, rng):
    x_host = rng.standard_normal(16).astype(BF16)
    y_host = np.zeros(16, BF16)
    x = device.allocate((16,), "bfloat16")
    recording = accel.Recording(device)
    recording.upload(x_host, x)
    with recording:
        device.scal(x, 2.0)
    recording.download(x, y_host)
    recording.launch().result()
    np.testing.assert_array_equal(bits(y_host), bits((x_host.astype(np.float32) * 2).astype(BF16)))


def test_without_ml_dtypes_the_error_names_it(device, monkeypatch):
    buffer = device.allocate((3,), "bfloat16")
    monkeypatch.setitem(sys.modules, "ml_dtypes", None)   # `import ml_dtypes` raises ImportError
    with pytest.raises(accel.NotSupported, match="ml_dtypes"):
        buffer.numpy()
    with pytest.raises(accel.NotSupported, match="ml_dtypes"):
        buffer.copy_from([1.0, 2.0, 3.0])
