"""BLAS levels 1-3 from Python (axpy, scal, dot, nrm2, asum, iamax, gemv, trsm, syrk) against NumPy, on the CPU.

Matrices are column-major: a NumPy matrix A goes in as device.upload(A.T) and comes back as buffer.numpy().T."""

import itertools

import numpy as np
import pytest

import accel

DTYPES = [("float32", 2e-5), ("float64", 1e-12)]


def strided(array, n, inc):
    """The BLAS vector of n elements stepping by `inc` through `array` (backwards from its end when negative)."""
    step = abs(inc)
    forward = array[:(n - 1) * step + 1:step] if n else array[:0]
    return forward if inc > 0 else forward[::-1]


def vector_storage(rng, n, inc, dtype):
    return rng.standard_normal((n - 1) * abs(inc) + 1).astype(dtype)


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
@pytest.mark.parametrize("incx, incy", [(1, 1), (2, -3), (-1, 2), (-2, -1)])
def test_axpy_matches_numpy(device, rng, dtype, tolerance, incx, incy):
    n = 37
    x, y0 = vector_storage(rng, n, incx, dtype), vector_storage(rng, n, incy, dtype)
    y = device.upload(y0)
    device.axpy(device.upload(x), y, alpha=-1.5, incx=incx, incy=incy).result()
    expected = y0.copy()
    strided(expected, n, incy)[:] = -1.5 * strided(x, n, incx) + strided(y0, n, incy)
    np.testing.assert_allclose(y.numpy(), expected, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
@pytest.mark.parametrize("incx", [1, 3])
def test_scal_matches_numpy(device, rng, dtype, tolerance, incx):
    x0 = vector_storage(rng, 29, incx, dtype)
    x = device.upload(x0)
    device.scal(x, 0.25, incx=incx).result()
    expected = x0.copy()
    strided(expected, 29, incx)[:] *= 0.25
    np.testing.assert_allclose(x.numpy(), expected, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
@pytest.mark.parametrize("incx, incy", [(1, 1), (3, -2), (-1, -1)])
def test_dot_matches_numpy(device, rng, dtype, tolerance, incx, incy):
    n = 41
    x, y = vector_storage(rng, n, incx, dtype), vector_storage(rng, n, incy, dtype)
    result = device.allocate((1,), dtype)
    device.dot(device.upload(x), device.upload(y), result, incx=incx, incy=incy).result()
    expected = np.dot(strided(x, n, incx).astype(np.float64), strided(y, n, incy))
    np.testing.assert_allclose(result.numpy()[0], expected, rtol=tolerance * 10, atol=tolerance * 10)


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
@pytest.mark.parametrize("incx", [1, 2])
def test_nrm2_asum_iamax_match_numpy(device, rng, dtype, tolerance, incx):
    n = 53
    x0 = vector_storage(rng, n, incx, dtype)
    x = device.upload(x0)
    vector = strided(x0, n, incx).astype(np.float64)
    norm, total, index = device.allocate((1,), dtype), device.allocate((1,), dtype), device.allocate((1,), "int32")
    futures = [device.nrm2(x, norm, incx=incx), device.asum(x, total, incx=incx), device.iamax(x, index, incx=incx)]
    for future in futures:
        future.result()
    np.testing.assert_allclose(norm.numpy()[0], np.linalg.norm(vector), rtol=tolerance * 10)
    np.testing.assert_allclose(total.numpy()[0], np.abs(vector).sum(), rtol=tolerance * 10)
    assert index.numpy()[0] == np.argmax(np.abs(vector)) + 1  # 1-based, as BLAS counts


def test_level1_sizes_come_from_the_buffer_and_keywords_win(device):
    x = device.upload(np.arange(10, dtype=np.float64))
    y = device.upload(np.zeros(10))
    device.axpy(x, y, alpha=2.0, n=4).result()  # only the first 4
    np.testing.assert_array_equal(y.numpy(), [0, 2, 4, 6, 0, 0, 0, 0, 0, 0])
    device.axpy(x, y, incx=3, incy=3).result()  # x's 10 elements hold 4 at increment 3
    np.testing.assert_array_equal(y.numpy(), [0, 2, 4, 9, 0, 0, 6, 0, 0, 9])


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
@pytest.mark.parametrize("transpose", ["none", "transpose"])
@pytest.mark.parametrize("incx, incy", [(1, 1), (-2, 3)])
def test_gemv_matches_numpy(device, rng, dtype, tolerance, transpose, incx, incy):
    m, n = 11, 7
    a = rng.standard_normal((m, n)).astype(dtype)
    op_a = a.T if transpose == "transpose" else a
    x = vector_storage(rng, op_a.shape[1], incx, dtype)
    y0 = vector_storage(rng, op_a.shape[0], incy, dtype)
    y = device.upload(y0)
    device.gemv(device.upload(a.T), device.upload(x), y, transpose=transpose, incx=incx, incy=incy, alpha=0.5,
                beta=-2.0).result()
    expected = y0.copy()
    strided(expected, op_a.shape[0], incy)[:] = (0.5 * op_a @ strided(x, op_a.shape[1], incx)
                                                 - 2.0 * strided(y0, op_a.shape[0], incy))
    np.testing.assert_allclose(y.numpy(), expected, rtol=tolerance * 10, atol=tolerance * 10)


def test_batched_gemv_takes_the_batch_from_the_buffer(device, rng):
    a = rng.standard_normal((3, 5, 9))  # 3 matrices of 5 x 9 (NumPy's order)
    x = rng.standard_normal((3, 9))
    y = device.allocate((3, 5), "float64")
    device.gemv(device.upload(np.swapaxes(a, 1, 2)), device.upload(x), y).result()
    np.testing.assert_allclose(y.numpy(), np.einsum("bij,bj->bi", a, x), rtol=1e-12, atol=1e-12)


def triangular(rng, order, dtype):
    """A well-conditioned square matrix, random in both triangles (the triangle a request does not read is noise)."""
    return (rng.standard_normal((order, order)) + order * np.eye(order)).astype(dtype)


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
@pytest.mark.parametrize("side, fill, transpose, diagonal", list(itertools.product(
    ["left", "right"], ["lower", "upper"], ["none", "transpose"], ["non_unit", "unit"])))
def test_trsm_matches_numpy(device, rng, dtype, tolerance, side, fill, transpose, diagonal):
    m, n = 9, 5
    a = triangular(rng, m if side == "left" else n, dtype)
    t = np.tril(a) if fill == "lower" else np.triu(a)
    if diagonal == "unit":
        np.fill_diagonal(t, 1)
    op_t = t.T if transpose == "transpose" else t
    b0 = rng.standard_normal((m, n)).astype(dtype)
    b = device.upload(b0.T)
    device.trsm(device.upload(a.T), b, side=side, fill=fill, transpose=transpose, diagonal=diagonal,
                alpha=2.0).result()
    x = b.numpy().T
    product = op_t @ x if side == "left" else x @ op_t
    np.testing.assert_allclose(product, 2.0 * b0, rtol=tolerance * 100, atol=tolerance * 100)


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
@pytest.mark.parametrize("fill, transpose", list(itertools.product(["lower", "upper"], ["none", "transpose"])))
def test_syrk_writes_only_its_triangle(device, rng, dtype, tolerance, fill, transpose):
    n, k = 7, 5
    a = rng.standard_normal((k, n) if transpose == "transpose" else (n, k)).astype(dtype)
    op_a = a.T if transpose == "transpose" else a
    c0 = rng.standard_normal((n, n)).astype(dtype)
    c = device.upload(c0.T)
    device.syrk(device.upload(a.T), c, fill=fill, transpose=transpose, alpha=1.5, beta=0.5).result()
    result = c.numpy().T
    written = np.tril if fill == "lower" else np.triu
    untouched = (lambda matrix: np.triu(matrix, 1)) if fill == "lower" else (lambda matrix: np.tril(matrix, -1))
    np.testing.assert_allclose(written(result), written(1.5 * op_a @ op_a.T + 0.5 * c0), rtol=tolerance * 10,
                               atol=tolerance * 10)
    np.testing.assert_array_equal(untouched(result), untouched(c0))


def test_enums_are_accepted_as_python_enums(device, rng):
    a = triangular(rng, 4, np.float64)
    b0 = rng.standard_normal((4, 3))
    b = device.upload(b0.T)
    device.trsm(device.upload(a.T), b, side=accel.Side.left, fill=accel.Fill.upper,
                transpose=accel.Transpose.none, diagonal=accel.Diagonal.non_unit).result()
    np.testing.assert_allclose(np.triu(a) @ b.numpy().T, b0, rtol=1e-12, atol=1e-12)


def test_a_zero_increment_fails_with_the_cpp_message(device):
    x = device.upload(np.ones(4, np.float32))
    with pytest.raises(accel.InvalidArgument, match=r"^invalid_argument: blas::Axpy: incx = 0; it must not be 0"):
        device.axpy(x, device.upload(np.ones(4, np.float32)), incx=0, n=4).result()
    with pytest.raises(accel.InvalidArgument, match="blas::Scal: incx = -1 must be positive for this routine"):
        device.scal(x, 2.0, incx=-1).result()


def test_bad_arguments_are_refused_before_sending(device):
    a = device.allocate((3, 3), "float64")
    with pytest.raises(accel.InvalidArgument, match="'side' must be one of 'left', 'right', not 'middle'"):
        device.trsm(a, a, side="middle")
    with pytest.raises(accel.InvalidArgument, match="gemv: no argument 'trans'"):
        device.gemv(a, a, a, trans="transpose")
    with pytest.raises(accel.InvalidArgument, match="argument 'result' must be an accel.Buffer or None"):
        device.nrm2(a, result=1.0)


def test_an_operand_too_small_fails_the_future(device):
    a = device.allocate((3, 3), "float64")  # 3 x 3, but the request says 4 x 4
    with pytest.raises(accel.InvalidArgument, match=r"operand 'a': elements \[0, 0 \+ 16\) lie outside buffer"):
        device.syrk(a, device.allocate((4, 4), "float64"), k=4).result()
