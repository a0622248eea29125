/// @file
/// The dense solver family's entry points: one function per request (accel/libs/solver/dense.hpp, LAPACK's names),
/// each sent to `device` and answered by its future, as Device::ask would.
///
/// @code
///   accel::solver::getrf(device, {.dtype = accel::DType::f64, .n = n, .a = a, .ipiv = pivots, .info = info});
///   accel::solver::getrs(device, {.dtype = accel::DType::f64, .n = n, .nrhs = 1, .a = a, .ipiv = pivots, .b = b})
///       .wait();  // b holds A⁻¹ b
/// @endcode
#pragma once

#include "accel/device/device.hpp"
#include "accel/libs/solver/requests.hpp"

namespace accel::solver {

/// P A = L U, in place: see Getrf.
inline Future<Done> getrf(const Device& device, Getrf request) { return device.ask(request); }
/// Solves op(A) X = B with Getrf's factors and pivots: see Getrs.
inline Future<Done> getrs(const Device& device, Getrs request) { return device.ask(request); }
/// Cholesky factorisation, in place: see Potrf.
inline Future<Done> potrf(const Device& device, Potrf request) { return device.ask(request); }
/// Solves A X = B with Potrf's factor: see Potrs.
inline Future<Done> potrs(const Device& device, Potrs request) { return device.ask(request); }
/// Eigenvalues and, when asked, eigenvectors of symmetric or Hermitian matrices: see Syevd.
inline Future<Done> syevd(const Device& device, Syevd request) { return device.ask(request); }
/// QR factorisation, in place: see Geqrf.
inline Future<Done> geqrf(const Device& device, Geqrf request) { return device.ask(request); }
/// The columns of Q from Geqrf's reflectors: see Orgqr.
inline Future<Done> orgqr(const Device& device, Orgqr request) { return device.ask(request); }
/// Singular values and vectors (QR iteration): see Gesvd.
inline Future<Done> gesvd(const Device& device, Gesvd request) { return device.ask(request); }
/// Singular values and vectors (Jacobi, to a tolerance): see Gesvdj.
inline Future<Done> gesvdj(const Device& device, Gesvdj request) { return device.ask(request); }
/// Applies Q from Geqrf's reflectors to a matrix: see Ormqr.
inline Future<Done> ormqr(const Device& device, Ormqr request) { return device.ask(request); }
/// Least squares (or minimum norm) solutions through QR: see Gels.
inline Future<Done> gels(const Device& device, Gels request) { return device.ask(request); }

}  // namespace accel::solver
