"""Sparse matrices as accel's sparse requests take them (accel::sparse::Matrix and DenseMatrix: a dict of the C++
struct's members), made from accel buffers with the sizes and types read from them:

    a = accel.sparse.csr(offsets, columns, values, shape=(rows, cols))    # index dtype from offsets, nnz from values
    device.spmv(a=a, x=x, y=y).result()                                   # y = A x
    device.spmm(a=a, b=accel.sparse.dense(b), c=accel.sparse.dense(c))    # row-major B and C, sizes from their shapes

Every member of the C++ struct can be given or overridden by keyword (``structure="fixed"``, ``nnz=...``).
"""

from . import _shapes


def _matrix(format, offsets, indices, values, shape, members):
    rows, cols = shape
    made = {"format": format, "index": indices.dtype, "dtype": values.dtype, "rows": rows, "cols": cols,
            "nnz": values.size, "offsets": offsets, "indices": indices, "values": values}
    made.update(members)
    return made


def csr(offsets, indices, values, shape, **members):
    """CSR: rows + 1 row offsets, the column of each entry (sorted within a row), nnz values."""
    return _matrix("csr", offsets, indices, values, shape, members)


def csc(offsets, indices, values, shape, **members):
    """CSC: cols + 1 column offsets, the row of each entry, nnz values (the CSR of Aᵀ)."""
    return _matrix("csc", offsets, indices, values, shape, members)


def coo(rows, columns, values, shape, **members):
    """COO: the row of each entry (sorted), its column, its value."""
    return _matrix("coo", rows, columns, values, shape, members)


def blocked_ell(column_blocks, values, shape, block_size, **members):
    """Blocked-ELL (SpMM only): the column-block indices ((rows / bs) x (ell_cols / bs), -1 for padding) and the
    rows x ell_cols values, both row-major."""
    made = _matrix("blocked_ell", None, column_blocks, values, shape, members)
    made.setdefault("ell_block_size", block_size)
    return made


def dense(buffer, order="row_major", **members):
    """A dense operand over a buffer of shape (rows, cols) (row_major, NumPy's order) or (cols, rows)
    (column_major)."""
    if len(buffer.shape) == 1:
        rows, cols = buffer.shape[0], 1
    elif order == "row_major":
        rows, cols = buffer.shape[-2:]
    else:
        _, rows, cols = _shapes.matrices(buffer, "sparse.dense")
    made = {"order": order, "rows": rows, "cols": cols, "data": buffer}
    made.update(members)
    return made


def dense_to_csr_count(self, a, offsets, **kwargs):
    """The CSR row offsets of dense matrix `a` (accel::sparse::DenseToCsrCount); dtype from a's buffer, index from
    offsets'. Returns an accel.Future."""
    kwargs.setdefault("dtype", a["data"].dtype)
    kwargs.setdefault("index", offsets.dtype)
    return dense_to_csr_count.__wrapped__(self, a=a, offsets=offsets, **kwargs)


_shapes.install(dense_to_csr_count)
