"""BLAS levels 1-3 from Python (axpy, scal, dot, nrm2, asum, iamax, iamin, copy, swap, rot; gemv, ger, trsv, symv;
trsm, syrk, symm, trmm, geam) against NumPy, on the CPU.

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


def op_triangle(a, fill, transpose, diagonal):
    """op(T), T being the `fill` triangle of `a` (with ones on the diagonal if `diagonal` is unit)."""
    t = np.tril(a) if fill == "lower" else np.triu(a)
    if diagonal == "unit":
        np.fill_diagonal(t, 1)
    return t.T if transpose == "transpose" else t


def symmetric_from(a, fill):
    """The symmetric matrix of which `a`'s `fill` triangle is one half (the other triangle of `a` ignored)."""
    half = np.tril(a) if fill == "lower" else np.triu(a)
    return half + half.T - np.diag(np.diag(a))


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
@pytest.mark.parametrize("side, fill, transpose, diagonal", list(itertools.product(
    ["left", "right"], ["lower", "upper"], ["none", "transpose"], ["non_unit", "unit"])))
def test_trsm_matches_numpy(device, rng, dtype, tolerance, side, fill, transpose, diagonal):
    m, n = 9, 5
    a = triangular(rng, m if side == "left" else n, dtype)
    op_t = op_triangle(a, fill, transpose, diagonal)
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

@pytest.mark.parametrize("dtype, tolerance", DTYPES)
@pytest.mark.parametrize("incx, incy", [(1, 1), (2, -3), (-1, 2), (-2, -1)])
def test_copy_and_swap_match_numpy(device, rng, dtype, tolerance, incx, incy):
    n = 31
    x0, y0 = vector_storage(rng, n, incx, dtype), vector_storage(rng, n, incy, dtype)
    x, y = device.upload(x0), device.upload(y0)
    device.swap(x, y, incx=incx, incy=incy).result()
    swapped_x, swapped_y = x0.copy(), y0.copy()
    strided(swapped_x, n, incx)[:] = strided(y0, n, incy)
    strided(swapped_y, n, incy)[:] = strided(x0, n, incx)
    np.testing.assert_array_equal(x.numpy(), swapped_x)
    np.testing.assert_array_equal(y.numpy(), swapped_y)
    copied = device.upload(y0)
    device.copy(device.upload(x0), copied, incx=incx, incy=incy).result()
    expected = y0.copy()
    strided(expected, n, incy)[:] = strided(x0, n, incx)
    np.testing.assert_array_equal(copied.numpy(), expected)


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
@pytest.mark.parametrize("incx, incy", [(1, 1), (3, -2), (-1, -1)])
def test_rot_matches_numpy(device, rng, dtype, tolerance, incx, incy):
    n, c, s = 23, 0.6, 0.8
    x0, y0 = vector_storage(rng, n, incx, dtype), vector_storage(rng, n, incy, dtype)
    x, y = device.upload(x0), device.upload(y0)
    device.rot(x, y, c, s, incx=incx, incy=incy).result()
    expected_x, expected_y = x0.copy(), y0.copy()
    vx, vy = strided(x0, n, incx), strided(y0, n, incy)
    strided(expected_x, n, incx)[:] = c * vx + s * vy
    strided(expected_y, n, incy)[:] = c * vy - s * vx
    np.testing.assert_allclose(x.numpy(), expected_x, rtol=tolerance, atol=tolerance)
    np.testing.assert_allclose(y.numpy(), expected_y, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("incx", [1, 3])
def test_iamin_matches_numpy(device, rng, dtype, incx):
    n = 47
    x0 = vector_storage(rng, n, incx, dtype)
    index = device.allocate((1,), "int32")
    device.iamin(device.upload(x0), index, incx=incx).result()
    assert index.numpy()[0] == np.argmin(np.abs(strided(x0, n, incx))) + 1  # 1-based, as BLAS counts


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
@pytest.mark.parametrize("incx, incy", [(1, 1), (-2, 3), (2, -1)])
def test_ger_matches_numpy(device, rng, dtype, tolerance, incx, incy):
    m, n = 11, 7
    a0 = rng.standard_normal((m, n)).astype(dtype)
    x, y = vector_storage(rng, m, incx, dtype), vector_storage(rng, n, incy, dtype)
    a = device.upload(a0.T)
    device.ger(a, device.upload(x), device.upload(y), alpha=-0.5, incx=incx, incy=incy).result()
    expected = a0 - 0.5 * np.outer(strided(x, m, incx), strided(y, n, incy))
    np.testing.assert_allclose(a.numpy().T, expected, rtol=tolerance * 10, atol=tolerance * 10)


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
@pytest.mark.parametrize("fill, transpose, diagonal", list(itertools.product(
    ["lower", "upper"], ["none", "transpose"], ["non_unit", "unit"])))
@pytest.mark.parametrize("incx", [1, -2])
def test_trsv_matches_numpy(device, rng, dtype, tolerance, fill, transpose, diagonal, incx):
    n = 9
    a = triangular(rng, n, dtype)
    op_t = op_triangle(a, fill, transpose, diagonal)
    b0 = vector_storage(rng, n, incx, dtype)
    x = device.upload(b0)
    device.trsv(device.upload(a.T), x, fill=fill, transpose=transpose, diagonal=diagonal, incx=incx).result()
    solution = x.numpy()
    np.testing.assert_allclose(op_t @ strided(solution, n, incx), strided(b0, n, incx), rtol=tolerance * 100,
                               atol=tolerance * 100)
    between = np.ones_like(b0, dtype=bool)
    strided(between, n, incx)[:] = False
    np.testing.assert_array_equal(solution[between], b0[between])  # the gaps of the increment untouched


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
@pytest.mark.parametrize("fill", ["lower", "upper"])
@pytest.mark.parametrize("incx, incy", [(1, 1), (-2, 3)])
def test_symv_reads_only_its_triangle(device, rng, dtype, tolerance, fill, incx, incy):
    n = 13
    a = rng.standard_normal((n, n)).astype(dtype)  # not symmetric: the other triangle is noise
    symmetric = symmetric_from(a, fill)
    x = vector_storage(rng, n, incx, dtype)
    y0 = vector_storage(rng, n, incy, dtype)
    y = device.upload(y0)
    device.symv(device.upload(a.T), device.upload(x), y, fill=fill, alpha=1.5, beta=-0.5, incx=incx,
                incy=incy).result()
    expected = y0.copy()
    strided(expected, n, incy)[:] = 1.5 * symmetric @ strided(x, n, incx) - 0.5 * strided(y0, n, incy)
    np.testing.assert_allclose(y.numpy(), expected, rtol=tolerance * 10, atol=tolerance * 10)


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
@pytest.mark.parametrize("side, fill", list(itertools.product(["left", "right"], ["lower", "upper"])))
def test_symm_matches_numpy(device, rng, dtype, tolerance, side, fill):
    m, n = 9, 5
    order = m if side == "left" else n
    a = rng.standard_normal((order, order)).astype(dtype)
    symmetric = symmetric_from(a, fill)
    b = rng.standard_normal((m, n)).astype(dtype)
    c0 = rng.standard_normal((m, n)).astype(dtype)
    c = device.upload(c0.T)
    device.symm(device.upload(a.T), device.upload(b.T), c, side=side, fill=fill, alpha=2.0, beta=0.5).result()
    product = symmetric @ b if side == "left" else b @ symmetric
    np.testing.assert_allclose(c.numpy().T, 2.0 * product + 0.5 * c0, rtol=tolerance * 10, atol=tolerance * 10)


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
@pytest.mark.parametrize("side, fill, transpose, diagonal", list(itertools.product(
    ["left", "right"], ["lower", "upper"], ["none", "transpose"], ["non_unit", "unit"])))
def test_trmm_matches_numpy(device, rng, dtype, tolerance, side, fill, transpose, diagonal):
    m, n = 7, 11
    a = rng.standard_normal((m, m) if side == "left" else (n, n)).astype(dtype)
    op_t = op_triangle(a, fill, transpose, diagonal)
    b0 = rng.standard_normal((m, n)).astype(dtype)
    b = device.upload(b0.T)
    device.trmm(device.upload(a.T), b, side=side, fill=fill, transpose=transpose, diagonal=diagonal,
                alpha=-1.5).result()
    expected = -1.5 * (op_t @ b0 if side == "left" else b0 @ op_t)
    np.testing.assert_allclose(b.numpy().T, expected, rtol=tolerance * 10, atol=tolerance * 10)


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
@pytest.mark.parametrize("transpose_a, transpose_b", list(itertools.product(["none", "transpose"], repeat=2)))
def test_geam_matches_numpy(device, rng, dtype, tolerance, transpose_a, transpose_b):
    m, n = 5, 9
    a = rng.standard_normal((n, m) if transpose_a == "transpose" else (m, n)).astype(dtype)
    b = rng.standard_normal((n, m) if transpose_b == "transpose" else (m, n)).astype(dtype)
    c = device.allocate((n, m), dtype)  # column-major m x n
    device.geam(device.upload(a.T), device.upload(b.T), c, transpose_a=transpose_a, transpose_b=transpose_b,
                alpha=0.5, beta=-2.0).result()
    op_a = a.T if transpose_a == "transpose" else a
    op_b = b.T if transpose_b == "transpose" else b
    np.testing.assert_allclose(c.numpy().T, 0.5 * op_a - 2.0 * op_b, rtol=tolerance, atol=tolerance)


def test_batched_ger_and_trmm_take_the_batch_from_the_buffer(device, rng):
    a0 = rng.standard_normal((3, 4, 6))  # 3 matrices of 4 x 6 (NumPy's order)
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((3, 6))
    a = device.upload(np.swapaxes(a0, 1, 2))
    device.ger(a, device.upload(x), device.upload(y)).result()
    np.testing.assert_allclose(np.swapaxes(a.numpy(), 1, 2), a0 + np.einsum("bi,bj->bij", x, y), rtol=1e-12,
                               atol=1e-12)
    t = rng.standard_normal((3, 4, 4))
    b0 = rng.standard_normal((3, 4, 5))
    b = device.upload(np.swapaxes(b0, 1, 2))
    device.trmm(device.upload(np.swapaxes(t, 1, 2)), b, fill="upper").result()
    np.testing.assert_allclose(np.swapaxes(b.numpy(), 1, 2), np.triu(t) @ b0, rtol=1e-12, atol=1e-12)


def test_bad_arguments_fail_with_the_cpp_message(device):
    x = device.upload(np.ones(4, np.float32))
    with pytest.raises(accel.InvalidArgument, match="^invalid_argument: blas::Iamin: incx = -1 must be positive for "
                                                    "this routine"):
        device.iamin(x, device.allocate((1,), "int32"), incx=-1).result()
    with pytest.raises(accel.InvalidArgument, match="blas::Rot: incy = 0; it must not be 0"):
        device.rot(x, device.upload(np.ones(4, np.float32)), 1.0, 0.0, incy=0).result()
    a = device.allocate((3, 3), "float64")
    with pytest.raises(accel.InvalidArgument, match="blas::Trsv: batch = 0 must be at least 1"):
        device.trsv(a, device.allocate((3,), "float64"), batch=0).result()
    with pytest.raises(accel.InvalidArgument, match=r"blas::Geam: ldc = 2 is less than max\(1, 3\)"):
        device.geam(a, a, device.allocate((3, 3), "float64"), ldc=2).result()
    with pytest.raises(accel.InvalidArgument, match="'fill' must be one of 'lower', 'upper', not 'both'"):
        device.symm(a, a, a, fill="both")
