"""The dense solver requests from Python (LU, Cholesky, eigen, QR, SVD, least squares) against NumPy, on the CPU.

Matrices are column-major: a NumPy matrix A goes in as device.upload(A.T) and comes back as buffer.numpy().T."""

import itertools

import numpy as np
import pytest

import accel

DTYPES = [("float32", 1e-4), ("float64", 1e-10), ("complex64", 1e-4), ("complex128", 1e-10)]
REAL = {"float32": "float32", "float64": "float64", "complex64": "float32", "complex128": "float64"}


def random_matrix(rng, shape, dtype):
    values = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    return values.astype(dtype)


def positive_definite(rng, n, dtype):
    m = random_matrix(rng, (n, n), dtype)
    return (m @ m.conj().T + n * np.eye(n)).astype(dtype)


def column_major(device, matrix):
    return device.upload(np.swapaxes(matrix, -1, -2))


def matrix_of(buffer):
    return np.swapaxes(buffer.numpy(), -1, -2)


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
@pytest.mark.parametrize("transpose", ["none", "transpose"])
def test_getrf_getrs_solve_like_numpy(device, rng, dtype, tolerance, transpose):
    n, nrhs = 7, 3
    a0 = random_matrix(rng, (n, n), dtype) + n * np.eye(n, dtype=dtype)
    b0 = random_matrix(rng, (n, nrhs), dtype)
    a, b = column_major(device, a0), column_major(device, b0)
    ipiv, info = device.allocate((n,), "int32"), device.allocate((1,), "int32")
    device.getrf(a, ipiv, info).result()
    device.getrs(a, ipiv, b, transpose=transpose).result()
    op_a = a0.T if transpose == "transpose" else a0  # Aᵀ, not Aᴴ, for complex A too
    np.testing.assert_allclose(matrix_of(b), np.linalg.solve(op_a, b0), rtol=tolerance * 10, atol=tolerance * 10)
    assert info.numpy()[0] == 0 and 1 <= ipiv.numpy().min() and ipiv.numpy().max() <= n


def test_batched_lu_takes_the_batch_from_the_buffer(device, rng):
    a0 = rng.standard_normal((4, 5, 5)) + 5 * np.eye(5)
    b0 = rng.standard_normal((4, 5, 2))
    a, b = column_major(device, a0), column_major(device, b0)
    ipiv = device.allocate((4, 5), "int32")
    device.getrf(a, ipiv).result()
    device.getrs(a, ipiv, b).result()
    np.testing.assert_allclose(matrix_of(b), np.linalg.solve(a0, b0), rtol=1e-10, atol=1e-10)


def test_a_singular_matrix_fails_with_failed_precondition(device):
    a = device.upload(np.zeros((3, 3)))
    with pytest.raises(accel.FailedPrecondition, match="solver::Getrf: .*exactly zero"):
        device.getrf(a, device.allocate((3,), "int32")).result()


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
@pytest.mark.parametrize("fill", ["lower", "upper"])
def test_potrf_potrs_match_numpy(device, rng, dtype, tolerance, fill):
    n, nrhs = 6, 2
    a0 = positive_definite(rng, n, dtype)
    b0 = random_matrix(rng, (n, nrhs), dtype)
    a, b = column_major(device, a0), column_major(device, b0)
    device.potrf(a, fill=fill).result()
    factor = matrix_of(a)
    if fill == "lower":
        lower = np.tril(factor)
        np.testing.assert_allclose(lower @ lower.conj().T, a0, rtol=tolerance * 10, atol=tolerance * 100)
    else:
        upper = np.triu(factor)
        np.testing.assert_allclose(upper.conj().T @ upper, a0, rtol=tolerance * 10, atol=tolerance * 100)
    device.potrs(a, b, fill=fill).result()
    np.testing.assert_allclose(matrix_of(b), np.linalg.solve(a0, b0), rtol=tolerance * 10, atol=tolerance * 10)


def test_a_matrix_not_positive_definite_fails_with_failed_precondition(device):
    a = device.upload(-np.eye(3))
    with pytest.raises(accel.FailedPrecondition, match="solver::Potrf"):
        device.potrf(a).result()


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
@pytest.mark.parametrize("fill", ["lower", "upper"])
def test_syevd_matches_numpy(device, rng, dtype, tolerance, fill):
    n = 7
    m = random_matrix(rng, (n, n), dtype)
    a0 = ((m + m.conj().T) / 2).astype(dtype)
    a, w = column_major(device, a0), device.allocate((n,), REAL[dtype])
    device.syevd(a, w, job=accel.EigenJob.values_and_vectors, fill=fill).result()
    values, vectors = w.numpy(), matrix_of(a)
    np.testing.assert_allclose(values, np.linalg.eigvalsh(a0), rtol=tolerance * 10, atol=tolerance * 10)
    np.testing.assert_allclose(a0 @ vectors, vectors * values, rtol=tolerance * 10, atol=tolerance * 100)


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
def test_geqrf_orgqr_make_q_and_r(device, rng, dtype, tolerance):
    m, n = 9, 5
    a0 = random_matrix(rng, (m, n), dtype)
    a, tau = column_major(device, a0), device.allocate((n,), dtype)
    device.geqrf(a, tau).result()
    r = np.triu(matrix_of(a)[:n])
    device.orgqr(a, tau).result()
    q = matrix_of(a)
    np.testing.assert_allclose(q @ r, a0, rtol=tolerance * 10, atol=tolerance * 10)
    np.testing.assert_allclose(q.conj().T @ q, np.eye(n), rtol=tolerance * 10, atol=tolerance * 10)


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
@pytest.mark.parametrize("side, transpose", list(itertools.product(["left", "right"], ["none", "transpose"])))
def test_ormqr_applies_q(device, rng, dtype, tolerance, side, transpose):
    order, k, other = 7, 4, 3
    a0 = random_matrix(rng, (order, k), dtype)
    a, tau = column_major(device, a0), device.allocate((k,), dtype)
    device.geqrf(a, tau).result()
    full = np.zeros((order, order), dtype)  # the full Q (order x order) by applying Q to the identity
    full[:, :k] = matrix_of(a)
    q_buffer = column_major(device, full)
    device.orgqr(q_buffer, tau, k=k).result()
    q = matrix_of(q_buffer)
    op_q = q.conj().T if transpose == "transpose" else q
    c0 = random_matrix(rng, (order, other) if side == "left" else (other, order), dtype)
    c = column_major(device, c0)
    device.ormqr(a, tau, c, side=side, transpose=transpose).result()
    expected = op_q @ c0 if side == "left" else c0 @ op_q
    np.testing.assert_allclose(matrix_of(c), expected, rtol=tolerance * 10, atol=tolerance * 10)


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
def test_gels_matches_numpy_lstsq(device, rng, dtype, tolerance):
    m, n, nrhs = 11, 4, 2
    a0, b0 = random_matrix(rng, (m, n), dtype), random_matrix(rng, (m, nrhs), dtype)
    b = column_major(device, b0)
    device.gels(column_major(device, a0), b).result()
    wide = np.result_type(a0.dtype, np.float64)
    expected = np.linalg.lstsq(a0.astype(wide), b0.astype(wide), rcond=None)[0]
    np.testing.assert_allclose(matrix_of(b)[:n], expected, rtol=tolerance * 100, atol=tolerance * 100)


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
@pytest.mark.parametrize("shape", [(9, 5), (4, 7)])
def test_gesvd_matches_numpy(device, rng, dtype, tolerance, shape):
    m, n = shape
    k = min(m, n)
    a0 = random_matrix(rng, shape, dtype)
    s, u, vt = device.allocate((k,), REAL[dtype]), device.allocate((k, m), dtype), device.allocate((n, k), dtype)
    device.gesvd(column_major(device, a0), s, u, vt).result()
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(a0, compute_uv=False), rtol=tolerance * 10,
                               atol=tolerance * 10)
    np.testing.assert_allclose(matrix_of(u) * s.numpy() @ matrix_of(vt), a0, rtol=tolerance * 10,
                               atol=tolerance * 10)
    values_only = device.allocate((k,), REAL[dtype])
    device.gesvd(column_major(device, a0), values_only).result()  # no u, vt: job_u and job_vt none
    np.testing.assert_allclose(values_only.numpy(), s.numpy(), rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
def test_gesvdj_matches_numpy(device, rng, dtype, tolerance):
    m, n = 6, 8
    a0 = random_matrix(rng, (m, n), dtype)
    s, u, v = device.allocate((m,), REAL[dtype]), device.allocate((m, m), dtype), device.allocate((m, n), dtype)  # U 6 x 6, V 8 x 6
    device.gesvdj(column_major(device, a0), s, u, v).result()
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(a0, compute_uv=False), rtol=tolerance * 10,
                               atol=tolerance * 10)
    np.testing.assert_allclose(matrix_of(u) * s.numpy() @ matrix_of(v).conj().T, a0, rtol=tolerance * 10,
                               atol=tolerance * 10)


def test_bad_arguments_raise_invalid_argument_with_the_cpp_message(device):
    a = device.upload(np.eye(4))
    ipiv = device.allocate((4,), "int32")
    with pytest.raises(accel.InvalidArgument,
                       match=r"^invalid_argument: solver::Getrf: lda = 2 is less than max\(1, 4\), the rows of a$"):
        device.getrf(a, ipiv, lda=2).result()
    with pytest.raises(accel.InvalidArgument, match="^invalid_argument: solver::Getrf: operand 'ipiv' holds f32 but the request"):
        device.getrf(a, device.allocate((4,), "float32")).result()
    with pytest.raises(accel.NotSupported, match="solver::Getrf: dtype f16 is not supported"):
        device.getrf(device.upload(np.eye(4, dtype=np.float16)), ipiv).result()
    with pytest.raises(accel.InvalidArgument, match="'job' must be one of 'values', 'values_and_vectors'"):
        device.syevd(a, device.allocate((4,)), job="vectors")
    with pytest.raises(accel.InvalidArgument, match="argument 'max_sweeps' must be an int"):
        device.gesvdj(a, device.allocate((4,)), max_sweeps=1.5)
