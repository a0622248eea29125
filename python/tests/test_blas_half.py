"""BLAS level 1 and gemv on float16 from Python (axpy, scal, dot, nrm2, asum, iamax, iamin, copy, swap, rot, gemv)
against NumPy computing in float64 from the same float16 values, on the CPU: each result within one rounding to
float16.
(bfloat16 buffers take the same requests: test_bfloat16_numpy.py, through ml_dtypes' bfloat16.)"""

import numpy as np
import pytest

import accel

# One unit in the last place of a float16 relative to its value, at its widest.
ULP = 2.0 ** -10


def strided(array, n, inc):
    """The BLAS vector of n elements stepping by `inc` through `array` (backwards from its end when negative)."""
    step = abs(inc)
    forward = array[:(n - 1) * step + 1:step] if n else array[:0]
    return forward if inc > 0 else forward[::-1]


def half_storage(rng, n, inc):
    return rng.uniform(-1, 1, (n - 1) * abs(inc) + 1).astype(np.float16)


def assert_within_a_rounding(got, want):
    want = np.asarray(want, dtype=np.float64)
    np.testing.assert_array_less(np.abs(got.astype(np.float64) - want), ULP * np.abs(want) + 1e-6)


@pytest.mark.parametrize("incx, incy", [(1, 1), (2, -3), (-1, 2)])
def test_axpy_and_rot_round_once_to_float16(device, rng, incx, incy):
    n = 301
    x0, y0 = half_storage(rng, n, incx), half_storage(rng, n, incy)
    x, y = device.upload(x0), device.upload(y0)
    device.axpy(x, y, alpha=-1.5, incx=incx, incy=incy).result()
    expected = y0.astype(np.float64)
    strided(expected, n, incy)[:] += -1.5 * strided(x0, n, incx).astype(np.float64)
    assert_within_a_rounding(y.numpy(), expected)

    x, y = device.upload(x0), device.upload(y0)
    device.rot(x, y, c=0.6, s=-0.8, incx=incx, incy=incy).result()
    c, s = float(np.float16(0.6)), float(np.float16(-0.8))  # Rot takes c and s as the element type
    xs, ys = strided(x0, n, incx).astype(np.float64), strided(y0, n, incy).astype(np.float64)
    rotated_x, rotated_y = x0.astype(np.float64), y0.astype(np.float64)
    strided(rotated_x, n, incx)[:] = c * xs + s * ys
    strided(rotated_y, n, incy)[:] = c * ys - s * xs
    assert_within_a_rounding(x.numpy(), rotated_x)
    assert_within_a_rounding(y.numpy(), rotated_y)


def test_reductions_give_float16_results(device, rng):
    x0, y0 = half_storage(rng, 500, 1), half_storage(rng, 500, 1)
    x, y = device.upload(x0), device.upload(y0)
    dot, norm, total = (device.allocate((1,), "float16") for _ in range(3))
    largest, smallest = device.allocate((1,), "int32"), device.allocate((1,), "int32")
    device.dot(x, y, dot).result()
    device.nrm2(x, norm).result()
    device.asum(x, total).result()
    device.iamax(x, largest).result()
    device.iamin(x, smallest).result()
    wide = x0.astype(np.float64)
    assert_within_a_rounding(dot.numpy(), [np.dot(wide, y0.astype(np.float64))])
    assert_within_a_rounding(norm.numpy(), [np.linalg.norm(wide)])
    assert_within_a_rounding(total.numpy(), [np.abs(wide).sum()])
    assert largest.numpy()[0] == np.argmax(np.abs(wide)) + 1  # the first of equal magnitudes, as NumPy's argmax
    assert smallest.numpy()[0] == np.argmin(np.abs(wide)) + 1


def test_scal_copy_and_swap(device, rng):
    x0, y0 = half_storage(rng, 40, 1), half_storage(rng, 40, 1)
    x, y = device.upload(x0), device.upload(y0)
    device.swap(x, y).result()
    np.testing.assert_array_equal(x.numpy().view(np.uint16), y0.view(np.uint16))
    device.copy(x, y).result()
    np.testing.assert_array_equal(y.numpy().view(np.uint16), y0.view(np.uint16))
    device.scal(x, 0.25).result()
    assert_within_a_rounding(x.numpy(), 0.25 * y0.astype(np.float64))


@pytest.mark.parametrize("transpose", ["none", "transpose"])
def test_gemv_rounds_each_element_of_y_once(device, rng, transpose):
    m, n = 45, 31
    a = rng.uniform(-1, 1, (m, n)).astype(np.float16)
    op_a = (a.T if transpose == "transpose" else a).astype(np.float64)
    x = rng.uniform(-1, 1, op_a.shape[1]).astype(np.float16)
    y0 = rng.uniform(-1, 1, op_a.shape[0]).astype(np.float16)
    y = device.upload(y0)
    device.gemv(device.upload(a.T), device.upload(x), y, transpose=transpose, alpha=0.5, beta=-2.0).result()
    assert_within_a_rounding(y.numpy(), 0.5 * op_a @ x.astype(np.float64) - 2.0 * y0.astype(np.float64))


def test_a_float32_result_for_float16_vectors_is_refused_by_name(device):
    x = device.upload(np.ones(4, dtype=np.float16))
    with pytest.raises(accel.InvalidArgument, match="operand 'result' holds f32"):
        device.dot(x, x, device.allocate((1,), "float32")).result()
