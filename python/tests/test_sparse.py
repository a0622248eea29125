"""The sparse requests from Python (SpMV, SpMM, SpSV, conversions, SDDMM, SpGEMM, dense to CSR) against NumPy's dense
products, on the CPU. Sparse operands are dicts of accel::sparse::Matrix's members, made by accel.sparse.csr() etc."""

import itertools

import numpy as np
import pytest

import accel
from accel import sparse

DTYPES = [("float32", 1e-5), ("float64", 1e-12)]


def random_sparse(rng, shape, dtype, density=0.3):
    values = rng.standard_normal(shape) * (rng.random(shape) < density)
    return values.astype(dtype)


def csr_arrays(matrix, index="int32"):
    rows, columns = np.nonzero(matrix)
    offsets = np.searchsorted(rows, np.arange(matrix.shape[0] + 1)).astype(index)
    return offsets, columns.astype(index), matrix[rows, columns]


def upload_csr(device, matrix, index="int32", **members):
    offsets, columns, values = csr_arrays(matrix, index)
    return sparse.csr(device.upload(offsets), device.upload(columns), device.upload(values), matrix.shape, **members)


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
@pytest.mark.parametrize("op, index", list(itertools.product(["none", "transpose"], ["int32", "int64"])))
def test_spmv_matches_numpy(device, rng, dtype, tolerance, op, index):
    a0 = random_sparse(rng, (9, 7), dtype)
    op_a = a0.T if op == "transpose" else a0
    x0, y0 = rng.standard_normal(op_a.shape[1]).astype(dtype), rng.standard_normal(op_a.shape[0]).astype(dtype)
    y = device.upload(y0)
    device.spmv(a=upload_csr(device, a0, index), x=device.upload(x0), y=y, op=op, alpha=2.0, beta=-0.5).result()
    np.testing.assert_allclose(y.numpy(), 2.0 * op_a @ x0 - 0.5 * y0, rtol=tolerance * 10, atol=tolerance * 10)


def dense_operand(device, matrix, order, dtype):
    """A dense operand holding `matrix` in `order` (column-major: the buffer holds matrix.T)."""
    stored = matrix if order == "row_major" else matrix.T
    return sparse.dense(device.upload(np.ascontiguousarray(stored, dtype)), order=order)


def read_dense(operand):
    data = operand["data"].numpy()
    return data if operand["order"] == "row_major" else data.T


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
@pytest.mark.parametrize("op_a, op_b, order", list(itertools.product(
    ["none", "transpose"], ["none", "transpose"], ["row_major", "column_major"])))
def test_spmm_matches_numpy(device, rng, dtype, tolerance, op_a, op_b, order):
    a0 = random_sparse(rng, (8, 11), dtype)
    op = a0.T if op_a == "transpose" else a0
    b0 = rng.standard_normal((op.shape[1], 5)).astype(dtype)  # op(B)
    b = dense_operand(device, b0.T if op_b == "transpose" else b0, order, dtype)
    c = dense_operand(device, np.zeros((op.shape[0], 5)), order, dtype)
    device.spmm(a=upload_csr(device, a0), b=b, c=c, op_a=op_a, op_b=op_b).result()
    np.testing.assert_allclose(read_dense(c), op @ b0, rtol=tolerance * 10, atol=tolerance * 10)


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
def test_blocked_ell_spmm_matches_numpy(device, rng, dtype, tolerance):
    block, rows, cols, ell_cols = 2, 6, 8, 4  # each block row holds 2 blocks; -1 pads
    column_blocks = np.array([[0, 3], [2, -1], [1, 2]], np.int32)
    values = rng.standard_normal((rows, ell_cols)).astype(dtype)
    values[2:4, 2:4] = 0  # a padding block's values are zero
    a0 = np.zeros((rows, cols), dtype)
    for block_row, slots in enumerate(column_blocks):
        for slot, column_block in enumerate(slots):
            if column_block >= 0:
                a0[block_row * block:(block_row + 1) * block, column_block * block:(column_block + 1) * block] = \
                    values[block_row * block:(block_row + 1) * block, slot * block:(slot + 1) * block]
    a = sparse.blocked_ell(device.upload(column_blocks), device.upload(values), (rows, cols), block)
    b0 = rng.standard_normal((cols, 3)).astype(dtype)
    c = dense_operand(device, np.zeros((rows, 3)), "row_major", dtype)
    device.spmm(a=a, b=dense_operand(device, b0, "row_major", dtype), c=c).result()
    np.testing.assert_allclose(read_dense(c), a0 @ b0, rtol=tolerance * 10, atol=tolerance * 10)


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
@pytest.mark.parametrize("fill, op, diagonal", list(itertools.product(
    ["lower", "upper"], ["none", "transpose"], ["non_unit", "unit"])))
def test_spsv_solves_like_numpy(device, rng, dtype, tolerance, fill, op, diagonal):
    n = 9
    triangle = np.tril if fill == "lower" else np.triu
    a0 = (triangle(random_sparse(rng, (n, n), dtype, 0.4)) + 4 * np.eye(n)).astype(dtype)
    t = a0.copy()
    if diagonal == "unit":
        np.fill_diagonal(t, 1)
    op_t = t.T if op == "transpose" else t
    x0 = rng.standard_normal(n).astype(dtype)
    y = device.allocate((n,), dtype)
    device.spsv(a=upload_csr(device, a0), x=device.upload(x0), y=y, fill=accel.Fill(fill), op=op,
                diagonal=diagonal, alpha=3.0).result()
    np.testing.assert_allclose(op_t @ y.numpy(), 3.0 * x0, rtol=tolerance * 100, atol=tolerance * 100)


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
def test_conversions_round_trip(device, rng, dtype, tolerance):
    a0 = random_sparse(rng, (6, 10), dtype)
    offsets, columns, values = csr_arrays(a0)
    csr = sparse.csr(device.upload(offsets), device.upload(columns), device.upload(values), a0.shape)
    rows = device.allocate((values.size,), "int32")
    device.csr_to_coo(csr=csr, rows=rows).result()
    np.testing.assert_array_equal(rows.numpy(), np.nonzero(a0)[0])
    coo = sparse.coo(rows, csr["indices"], csr["values"], a0.shape)
    back = device.allocate((a0.shape[0] + 1,), "int32")
    device.coo_to_csr(coo=coo, offsets=back).result()
    np.testing.assert_array_equal(back.numpy(), offsets)
    for matrix in (csr, coo):
        out = device.allocate(a0.shape, dtype)
        device.to_dense(a=matrix, out=sparse.dense(out)).result()
        np.testing.assert_array_equal(out.numpy(), a0)
    t_offsets, t_rows, t_values = csr_arrays(np.ascontiguousarray(a0.T))  # CSC of a0 is the CSR of a0ᵀ
    csc = sparse.csc(device.upload(t_offsets), device.upload(t_rows), device.upload(t_values), a0.shape)
    out = device.allocate(a0.shape, dtype)
    device.to_dense(a=csc, out=sparse.dense(out)).result()
    np.testing.assert_array_equal(out.numpy(), a0)


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
@pytest.mark.parametrize("op_a, op_b", list(itertools.product(["none", "transpose"], ["none", "transpose"])))
def test_sddmm_samples_the_product(device, rng, dtype, tolerance, op_a, op_b):
    m, k, n = 7, 5, 9
    pattern = random_sparse(rng, (m, n), dtype, 0.4)
    a0, b0 = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype)  # op(A), op(B)
    a = dense_operand(device, a0.T if op_a == "transpose" else a0, "row_major", dtype)
    b = dense_operand(device, b0.T if op_b == "transpose" else b0, "row_major", dtype)
    c = upload_csr(device, pattern)
    device.sddmm(a=a, b=b, c=c, op_a=op_a, op_b=op_b, alpha=2.0, beta=1.0).result()
    rows, columns = np.nonzero(pattern)
    expected = 2.0 * (a0 @ b0)[rows, columns] + pattern[rows, columns]
    np.testing.assert_allclose(c["values"].numpy(), expected, rtol=tolerance * 10, atol=tolerance * 10)


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
def test_spgemm_in_two_steps_matches_numpy(device, rng, dtype, tolerance):
    a0, b0 = random_sparse(rng, (8, 6), dtype), random_sparse(rng, (6, 7), dtype)
    a, b = upload_csr(device, a0), upload_csr(device, b0)
    offsets = device.allocate((9,), "int32")
    device.spgemm_count(a=a, b=b, c_offsets=offsets).result()
    nnz = int(offsets.numpy()[-1])
    c = sparse.csr(offsets, device.allocate((nnz,), "int32"), device.allocate((nnz,), dtype), (8, 7))
    device.spgemm(a=a, b=b, c=c, alpha=0.5).result()
    dense = device.allocate((8, 7), dtype)
    device.to_dense(a=c, out=sparse.dense(dense)).result()
    np.testing.assert_allclose(dense.numpy(), 0.5 * a0 @ b0, rtol=tolerance * 10, atol=tolerance * 10)


@pytest.mark.parametrize("dtype, tolerance", DTYPES)
def test_dense_to_csr_in_two_steps(device, rng, dtype, tolerance):
    a0 = random_sparse(rng, (7, 9), dtype)
    a = sparse.dense(device.upload(a0))
    offsets = device.allocate((8,), "int64")
    device.dense_to_csr_count(a, offsets).result()
    nnz = int(offsets.numpy()[-1])
    out = sparse.csr(offsets, device.allocate((nnz,), "int64"), device.allocate((nnz,), dtype), a0.shape)
    device.dense_to_csr(a=a, out=out).result()
    expected_offsets, expected_columns, expected_values = csr_arrays(a0, "int64")
    np.testing.assert_array_equal(offsets.numpy(), expected_offsets)
    np.testing.assert_array_equal(out["indices"].numpy(), expected_columns)
    np.testing.assert_array_equal(out["values"].numpy(), expected_values)


def test_bad_matrices_raise_the_right_category(device, rng):
    a0 = random_sparse(rng, (4, 4), "float32", 0.6) + np.eye(4, dtype=np.float32)
    x, y = device.upload(np.ones(4, np.float32)), device.allocate((4,), "float32")
    with pytest.raises(accel.InvalidArgument, match="spmv: argument 'a' must be a dict of its fields"):
        device.spmv(a=x, x=x, y=y)
    with pytest.raises(accel.InvalidArgument, match="spmv: argument 'a': no argument 'rowz'"):
        device.spmv(a={"rowz": 4}, x=x, y=y)
    offsets, columns, values = csr_arrays(a0)
    offsets[2] = offsets[3] + 1  # offsets decrease at row 3
    malformed = sparse.csr(device.upload(offsets), device.upload(columns), device.upload(values), a0.shape)
    with pytest.raises(accel.FailedPrecondition, match="^failed_precondition: sparse::SpMV: a is malformed"):
        device.spmv(a=malformed, x=x, y=y).result()
    too_many = upload_csr(device, a0, nnz=100)
    with pytest.raises(accel.InvalidArgument, match="sparse::SpMV"):
        device.spmv(a=too_many, x=x, y=y).result()


def test_the_new_families_cross_to_an_isolated_worker(rng):
    # The requests travel through the worker's channel: SpGemm, whose three matrices fill a channel slot, included.
    with accel.Device.open("cpu", isolation="worker_process") as device:
        a0 = random_sparse(rng, (6, 6), "float64", 0.5)
        a = upload_csr(device, a0)
        offsets = device.allocate((7,), "int32")
        device.spgemm_count(a=a, b=a, c_offsets=offsets).result(timeout=60)
        nnz = int(offsets.numpy()[-1])
        c = sparse.csr(offsets, device.allocate((nnz,), "int32"), device.allocate((nnz,), "float64"), (6, 6))
        device.spgemm(a=a, b=a, c=c).result(timeout=60)
        dense = device.allocate((6, 6), "float64")
        device.to_dense(a=c, out=sparse.dense(dense)).result(timeout=60)
        np.testing.assert_allclose(dense.numpy(), a0 @ a0, rtol=1e-12, atol=1e-12)
        lu, x = device.upload((a0 + 6 * np.eye(6)).T), device.upload(np.ones(6))
        ipiv = device.allocate((6,), "int32")
        device.getrf(lu, ipiv).result(timeout=60)
        device.getrs(lu, ipiv, x).result(timeout=60)
        np.testing.assert_allclose((a0 + 6 * np.eye(6)) @ x.numpy(), np.ones(6), rtol=1e-12, atol=1e-12)
        y = device.upload(np.zeros(6))
        device.axpy(x, y, alpha=2.0, incx=-1).result(timeout=60)
        np.testing.assert_allclose(y.numpy(), 2 * x.numpy()[::-1])
