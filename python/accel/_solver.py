"""Python defaults over the dense solver requests (src/python/requests_solver.cpp binds them as in C++): the dtype
from A, sizes and batch from the buffers' shapes (matrices are column-major: _shapes.py), and, for the SVDs, no
vectors where no buffer is given for them. Every keyword of the C++ request struct is still accepted and wins."""

from . import _shapes


def _square(kwargs, a, what):
    """Sets dtype, n and batch from A's buffer; returns (batch, n)."""
    batch, rows, _ = _shapes.matrices(a, what)
    kwargs.setdefault("dtype", a.dtype)
    kwargs.setdefault("n", rows)
    kwargs.setdefault("batch", batch)
    return kwargs["batch"], kwargs["n"]


def _general(kwargs, a, what):
    """Sets dtype, m, n and batch from A's buffer; returns (batch, m, n)."""
    batch, rows, columns = _shapes.matrices(a, what)
    kwargs.setdefault("dtype", a.dtype)
    kwargs.setdefault("m", rows)
    kwargs.setdefault("n", columns)
    kwargs.setdefault("batch", batch)
    return kwargs["batch"], kwargs["m"], kwargs["n"]


def _columns(buffer, batch, rows):
    """The columns of each of `batch` packed matrices of `rows` rows in `buffer` (nrhs of a right-hand side)."""
    return buffer.size // (batch * rows) if batch * rows else 0


def getrf(self, a, ipiv, info=None, **kwargs):
    """P A = L U in place (accel::solver::Getrf); `ipiv`: int32, n per matrix; `info`: optional int32, one per
    matrix. n and batch from A's buffer, shaped ([batch,] n, n). Returns an accel.Future."""
    _square(kwargs, a, "getrf")
    return getrf.__wrapped__(self, a=a, ipiv=ipiv, info=info, **kwargs)


def getrs(self, a, ipiv, b, **kwargs):
    """Solves op(A) X = B with Getrf's factors and pivots; X replaces B (accel::solver::Getrs). n and batch from A,
    nrhs from B's size. Returns an accel.Future."""
    batch, n = _square(kwargs, a, "getrs")
    kwargs.setdefault("nrhs", _columns(b, batch, n))
    return getrs.__wrapped__(self, a=a, ipiv=ipiv, b=b, **kwargs)


def potrf(self, a, info=None, **kwargs):
    """Cholesky factorisation of the `fill` triangle of A, in place (accel::solver::Potrf). Returns an
    accel.Future."""
    _square(kwargs, a, "potrf")
    return potrf.__wrapped__(self, a=a, info=info, **kwargs)


def potrs(self, a, b, **kwargs):
    """Solves A X = B with Potrf's factor (the same fill); X replaces B (accel::solver::Potrs). Returns an
    accel.Future."""
    batch, n = _square(kwargs, a, "potrs")
    kwargs.setdefault("nrhs", _columns(b, batch, n))
    return potrs.__wrapped__(self, a=a, b=b, **kwargs)


def syevd(self, a, w, info=None, **kwargs):
    """Eigenvalues into `w` (ascending) and, with job="values_and_vectors", eigenvectors into A's columns
    (accel::solver::Syevd). Returns an accel.Future."""
    _square(kwargs, a, "syevd")
    return syevd.__wrapped__(self, a=a, w=w, info=info, **kwargs)


def geqrf(self, a, tau, **kwargs):
    """A = Q R in place, the reflectors' scalars into `tau` (accel::solver::Geqrf). m, n and batch from A's buffer,
    shaped ([batch,] n, m). Returns an accel.Future."""
    _general(kwargs, a, "geqrf")
    return geqrf.__wrapped__(self, a=a, tau=tau, **kwargs)


def orgqr(self, a, tau, **kwargs):
    """Q's first n columns from Geqrf's reflectors, into A (accel::solver::Orgqr); k from tau's size. Returns an
    accel.Future."""
    batch, _, _ = _general(kwargs, a, "orgqr")
    kwargs.setdefault("k", tau.size // batch if batch else 0)
    return orgqr.__wrapped__(self, a=a, tau=tau, **kwargs)


def ormqr(self, a, tau, c, **kwargs):
    """C replaced by op(Q) C (side left) or C op(Q) (side right), Q from Geqrf's reflectors in A and tau
    (accel::solver::Ormqr); m, n and batch from C's buffer, k from tau's size. Returns an accel.Future."""
    batch, rows, columns = _shapes.matrices(c, "ormqr")
    kwargs.setdefault("dtype", a.dtype)
    kwargs.setdefault("m", rows)
    kwargs.setdefault("n", columns)
    kwargs.setdefault("batch", batch)
    kwargs.setdefault("k", tau.size // kwargs["batch"] if kwargs["batch"] else 0)
    return ormqr.__wrapped__(self, a=a, tau=tau, c=c, **kwargs)


def gels(self, a, b, info=None, **kwargs):
    """Least squares min ‖A X − B‖ for tall A, X into B's first n rows (accel::solver::Gels); m, n and batch from
    A, nrhs from B's size. Returns an accel.Future."""
    batch, m, _ = _general(kwargs, a, "gels")
    kwargs.setdefault("nrhs", _columns(b, batch, m))
    return gels.__wrapped__(self, a=a, b=b, info=info, **kwargs)


def gesvd(self, a, s, u=None, vt=None, info=None, **kwargs):
    """A = U Σ Vᵀ (accel::solver::Gesvd): singular values into `s`; U into `u` and Vᵀ into `vt` (thin) where given,
    else not computed. A is destroyed. Returns an accel.Future."""
    _general(kwargs, a, "gesvd")
    kwargs.setdefault("job_u", "none" if u is None else "thin")
    kwargs.setdefault("job_vt", "none" if vt is None else "thin")
    return gesvd.__wrapped__(self, a=a, s=s, u=u, vt=vt, info=info, **kwargs)


def gesvdj(self, a, s, u=None, v=None, info=None, **kwargs):
    """A = U Σ Vᵀ by the Jacobi method (accel::solver::Gesvdj): singular values into `s`, U and V (not Vᵀ) into `u`
    and `v` (thin) where given, else not computed. A is destroyed. Returns an accel.Future."""
    _general(kwargs, a, "gesvdj")
    kwargs.setdefault("job", "none" if u is None and v is None else "thin")
    return gesvdj.__wrapped__(self, a=a, s=s, u=u, v=v, info=info, **kwargs)


_shapes.install(getrf, getrs, potrf, potrs, syevd, geqrf, orgqr, ormqr, gels, gesvd, gesvdj)
