"""BLAS level 1 on complex vectors from Python (axpy and scal with a complex alpha, dot with and without conjugate,
nrm2 and asum into real results, iamax, copy, swap, rot) against NumPy, on the CPU."""

import numpy as np
import pytest

import accel

DTYPES = [("complex64", "float32", 2e-5), ("complex128", "float64", 1e-12)]


def strided(array, n, inc):
    """The BLAS vector of n elements stepping by `inc` through `array` (backwards from its end when negative)."""
    step = abs(inc)
    forward = array[:(n - 1) * step + 1:step] if n else array[:0]
    return forward if inc > 0 else forward[::-1]


def complex_storage(rng, n, inc, dtype):
    size = (n - 1) * abs(inc) + 1
    return (rng.standard_normal(size) + 1j * rng.standard_normal(size)).astype(dtype)


@pytest.mark.parametrize("dtype, real, tolerance", DTYPES)
@pytest.mark.parametrize("incx, incy", [(1, 1), (2, -3), (-1, 2)])
def test_axpy_with_a_complex_alpha_matches_numpy(device, rng, dtype, real, tolerance, incx, incy):
    n = 37
    x, y0 = complex_storage(rng, n, incx, dtype), complex_storage(rng, n, incy, dtype)
    y = device.upload(y0)
    device.axpy(device.upload(x), y, alpha=-1.5 + 0.25j, incx=incx, incy=incy).result()
    expected = y0.copy()
    strided(expected, n, incy)[:] = (-1.5 + 0.25j) * strided(x, n, incx) + strided(y0, n, incy)
    np.testing.assert_allclose(y.numpy(), expected, rtol=tolerance * 10, atol=tolerance * 10)


@pytest.mark.parametrize("dtype, real, tolerance", DTYPES)
@pytest.mark.parametrize("alpha", [0.25, 2 - 1j])
def test_scal_by_a_real_or_complex_alpha_matches_numpy(device, rng, dtype, real, tolerance, alpha):
    x0 = complex_storage(rng, 29, 3, dtype)
    x = device.upload(x0)
    device.scal(x, alpha, incx=3).result()
    expected = x0.copy()
    strided(expected, 29, 3)[:] *= alpha
    np.testing.assert_allclose(x.numpy(), expected, rtol=tolerance * 10, atol=tolerance * 10)


@pytest.mark.parametrize("dtype, real, tolerance", DTYPES)
@pytest.mark.parametrize("conjugate", [False, True])
def test_dot_with_and_without_conjugate_matches_numpy(device, rng, dtype, real, tolerance, conjugate):
    n = 41
    x, y = complex_storage(rng, n, 2, dtype), complex_storage(rng, n, -1, dtype)
    result = device.allocate((1,), dtype)
    device.dot(device.upload(x), device.upload(y), result, incx=2, incy=-1, conjugate=conjugate).result()
    xs = strided(x, n, 2).astype(np.complex128)
    expected = np.vdot(xs, strided(y, n, -1)) if conjugate else np.dot(xs, strided(y, n, -1))
    np.testing.assert_allclose(result.numpy()[0], expected, rtol=tolerance * 10, atol=tolerance * 10)


@pytest.mark.parametrize("dtype, real, tolerance", DTYPES)
def test_nrm2_asum_and_iamax_give_real_results_as_blas(device, rng, dtype, real, tolerance):
    x0 = complex_storage(rng, 50, 1, dtype)
    x = device.upload(x0)
    norm, total = device.allocate((1,), real), device.allocate((1,), real)
    index = device.allocate((1,), "int32")
    device.nrm2(x, norm).result()
    device.asum(x, total).result()
    device.iamax(x, index).result()
    magnitudes = np.abs(x0.real.astype(np.float64)) + np.abs(x0.imag)
    np.testing.assert_allclose(norm.numpy()[0], np.linalg.norm(x0.astype(np.complex128)), rtol=tolerance * 10)
    np.testing.assert_allclose(total.numpy()[0], magnitudes.sum(), rtol=tolerance * 10)
    assert index.numpy()[0] == np.argmax(magnitudes) + 1
    with pytest.raises(accel.InvalidArgument, match="operand 'result' holds " + ("c64" if real == "float32" else "c128")):
        device.nrm2(x, device.allocate((1,), dtype)).result()


@pytest.mark.parametrize("dtype, real, tolerance", DTYPES)
def test_copy_swap_and_rot_move_complex_vectors(device, rng, dtype, real, tolerance):
    x0, y0 = complex_storage(rng, 20, 1, dtype), complex_storage(rng, 20, 1, dtype)
    x, y = device.upload(x0), device.upload(y0)
    device.swap(x, y).result()
    np.testing.assert_array_equal(x.numpy(), y0)
    np.testing.assert_array_equal(y.numpy(), x0)
    device.copy(x, y).result()
    np.testing.assert_array_equal(y.numpy(), y0)
    x, y = device.upload(x0), device.upload(y0)
    device.rot(x, y, c=0.6, s=-0.8).result()
    np.testing.assert_allclose(x.numpy(), 0.6 * x0 - 0.8 * y0, rtol=tolerance * 10, atol=tolerance * 10)
    np.testing.assert_allclose(y.numpy(), 0.6 * y0 + 0.8 * x0, rtol=tolerance * 10, atol=tolerance * 10)


def test_an_imaginary_alpha_on_real_vectors_is_refused_by_name(device):
    x = device.upload(np.ones(4, dtype="float32"))
    with pytest.raises(accel.InvalidArgument, match="blas::Scal: alpha_imag = 1 needs a complex dtype"):
        device.scal(x, 2 + 1j).result()
