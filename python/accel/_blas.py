"""Python defaults over BLAS levels 1-3 (src/python/requests_blas.cpp and requests_blas_more.cpp bind them as in
C++): the dtype from the first operand, vector lengths and matrix sizes from the buffers' shapes (matrices are
column-major: _shapes.py) where the caller leaves them out. Every keyword of the C++ request struct is still
accepted and wins."""

from . import _shapes


def _vectors(kwargs, x):
    kwargs.setdefault("dtype", x.dtype)
    kwargs.setdefault("n", _shapes.vector_length(x, kwargs.get("incx", 1)))
    return kwargs


def _scale(kwargs, alpha):
    """A Python complex alpha as the request's alpha and alpha_imag (complex64/complex128 vectors)."""
    if isinstance(alpha, complex):
        kwargs.setdefault("alpha_imag", alpha.imag)
        alpha = alpha.real
    kwargs["alpha"] = alpha
    return kwargs


def axpy(self, x, y, alpha=1.0, **kwargs):
    """y = alpha x + y (accel::blas::Axpy); n from x and incx unless given; alpha may be complex for complex
    vectors. Returns an accel.Future."""
    return axpy.__wrapped__(self, x=x, y=y, **_scale(_vectors(kwargs, x), alpha))


def scal(self, x, alpha, **kwargs):
    """x = alpha x, in place (accel::blas::Scal); alpha may be complex for complex vectors. Returns an
    accel.Future."""
    return scal.__wrapped__(self, x=x, **_scale(_vectors(kwargs, x), alpha))


def dot(self, x, y, result, **kwargs):
    """result[0] = xᵀ y (accel::blas::Dot), or xᴴ y for complex vectors given conjugate=True: `result` is a buffer
    of one element of x's dtype. Returns an accel.Future."""
    return dot.__wrapped__(self, x=x, y=y, result=result, **_vectors(kwargs, x))


def nrm2(self, x, result, **kwargs):
    """result[0] = ‖x‖₂ (accel::blas::Nrm2): real (float32 for complex64 x). Returns an accel.Future."""
    return nrm2.__wrapped__(self, x=x, result=result, **_vectors(kwargs, x))


def asum(self, x, result, **kwargs):
    """result[0] = Σ |x_i| (accel::blas::Asum), Σ |Re x_i| + |Im x_i| for complex x, real (float32 for complex64
    x). Returns an accel.Future."""
    return asum.__wrapped__(self, x=x, result=result, **_vectors(kwargs, x))


def iamax(self, x, result, **kwargs):
    """result[0] = the 1-based index of the first largest |x_i| (accel::blas::Iamax): `result` is one int32.
    Returns an accel.Future."""
    return iamax.__wrapped__(self, x=x, result=result, **_vectors(kwargs, x))


def gemv(self, a, x, y, **kwargs):
    """y = alpha op(A) x + beta y (accel::blas::Gemv); m, n and batch from A's buffer, shaped ([batch,] n, m)
    (column-major m x n: upload ``A.T``). Returns an accel.Future."""
    batch, rows, columns = _shapes.matrices(a, "gemv")
    kwargs.setdefault("dtype", a.dtype)
    kwargs.setdefault("m", rows)
    kwargs.setdefault("n", columns)
    kwargs.setdefault("batch", batch)
    return gemv.__wrapped__(self, a=a, x=x, y=y, **kwargs)


def trsm(self, a, b, **kwargs):
    """Solves op(A) X = alpha B (side left) or X op(A) = alpha B (side right) for X, which replaces B
    (accel::blas::Trsm); m, n and batch from B's buffer, shaped ([batch,] n, m) (column-major m x n). Returns an
    accel.Future."""
    batch, rows, columns = _shapes.matrices(b, "trsm")
    kwargs.setdefault("dtype", a.dtype)
    kwargs.setdefault("m", rows)
    kwargs.setdefault("n", columns)
    kwargs.setdefault("batch", batch)
    return trsm.__wrapped__(self, a=a, b=b, **kwargs)


def syrk(self, a, c, **kwargs):
    """C = alpha op(A) op(A)ᵀ + beta C, the `fill` triangle of C written (accel::blas::Syrk); n and batch from C's
    buffer, k from A's (op(A) is n x k). Returns an accel.Future."""
    batch, order, _ = _shapes.matrices(c, "syrk")
    _, rows_a, columns_a = _shapes.matrices(a, "syrk")
    kwargs.setdefault("dtype", a.dtype)
    kwargs.setdefault("n", order)
    kwargs.setdefault("k", rows_a if kwargs.get("transpose", "none") == "transpose" else columns_a)
    kwargs.setdefault("batch", batch)
    return syrk.__wrapped__(self, a=a, c=c, **kwargs)


def iamin(self, x, result, **kwargs):
    """result[0] = the 1-based index of the first smallest |x_i| (accel::blas::Iamin): `result` is one int32.
    Returns an accel.Future."""
    return iamin.__wrapped__(self, x=x, result=result, **_vectors(kwargs, x))


def copy(self, x, y, **kwargs):
    """y = x (accel::blas::Copy); n from x and incx unless given. Returns an accel.Future."""
    return copy.__wrapped__(self, x=x, y=y, **_vectors(kwargs, x))


def swap(self, x, y, **kwargs):
    """Exchanges x and y (accel::blas::Swap); n from x and incx unless given. Returns an accel.Future."""
    return swap.__wrapped__(self, x=x, y=y, **_vectors(kwargs, x))


def rot(self, x, y, c, s, **kwargs):
    """x_i, y_i = c x_i + s y_i, c y_i - s x_i (accel::blas::Rot); n from x and incx unless given. Returns an
    accel.Future."""
    return rot.__wrapped__(self, x=x, y=y, c=c, s=s, **_vectors(kwargs, x))


def _sizes(kwargs, buffer, what, dtype_from, names=("m", "n")):
    """dtype from `dtype_from`; the sizes `names` (rows, then columns) and batch from `buffer`'s matrices."""
    batch, rows, columns = _shapes.matrices(buffer, what)
    kwargs.setdefault("dtype", dtype_from.dtype)
    for name, value in zip(names, (rows, columns)):
        kwargs.setdefault(name, value)
    kwargs.setdefault("batch", batch)
    return kwargs


def ger(self, a, x, y, alpha=1.0, **kwargs):
    """A = alpha x yᵀ + A (accel::blas::Ger); m, n and batch from A's buffer, shaped ([batch,] n, m) (column-major
    m x n). Returns an accel.Future."""
    return ger.__wrapped__(self, a=a, x=x, y=y, alpha=alpha, **_sizes(kwargs, a, "ger", a))


def trsv(self, a, x, **kwargs):
    """Solves op(A) x = b for x, which replaces b (accel::blas::Trsv); n and batch from A's buffer, shaped
    ([batch,] n, n). Returns an accel.Future."""
    return trsv.__wrapped__(self, a=a, x=x, **_sizes(kwargs, a, "trsv", a, ("n",)))


def symv(self, a, x, y, **kwargs):
    """y = alpha A x + beta y, A symmetric with its `fill` triangle read (accel::blas::Symv); n and batch from A's
    buffer, shaped ([batch,] n, n). Returns an accel.Future."""
    return symv.__wrapped__(self, a=a, x=x, y=y, **_sizes(kwargs, a, "symv", a, ("n",)))


def symm(self, a, b, c, **kwargs):
    """C = alpha A B + beta C (side left) or alpha B A + beta C (side right), A symmetric with its `fill` triangle
    read (accel::blas::Symm); m, n and batch from C's buffer, shaped ([batch,] n, m) (column-major m x n). Returns an
    accel.Future."""
    return symm.__wrapped__(self, a=a, b=b, c=c, **_sizes(kwargs, c, "symm", a))


def trmm(self, a, b, **kwargs):
    """B = alpha op(A) B (side left) or alpha B op(A) (side right), A triangular, in place (accel::blas::Trmm); m, n
    and batch from B's buffer, shaped ([batch,] n, m) (column-major m x n). Returns an accel.Future."""
    return trmm.__wrapped__(self, a=a, b=b, **_sizes(kwargs, b, "trmm", a))


def geam(self, a, b, c, **kwargs):
    """C = alpha op(A) + beta op(B) (accel::blas::Geam); m, n and batch from C's buffer, shaped ([batch,] n, m)
    (column-major m x n). Returns an accel.Future."""
    return geam.__wrapped__(self, a=a, b=b, c=c, **_sizes(kwargs, c, "geam", a))


_shapes.install(axpy, scal, dot, nrm2, asum, iamax, gemv, trsm, syrk, iamin, copy, swap, rot, ger, trsv, symv, symm,
                trmm, geam)
