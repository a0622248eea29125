// The dense solver requests on the CPU: LAPACKE over OpenBLAS, column-major. Each runs every matrix of a request
// validated and resolved (its Operation's validate and operands), writes the infos when the request has an info
// buffer, and returns the batch's status (dense_info.hpp). LU and Cholesky take c64 and c128 as well (LAPACK's C and
// Z routines); the others f32 and f64 only, as their requests' validation says.
#pragma once

#include <cstdint>

#include "accel/core/library_version.hpp"
#include "accel/libs/solver/dense.hpp"

namespace accel::solver {

[[nodiscard]] Status lapacke_getrf(const Getrf& request, void* a, std::int32_t* ipiv, std::int32_t* info);
[[nodiscard]] Status lapacke_getrs(const Getrs& request, const void* a, const std::int32_t* ipiv, void* b);
[[nodiscard]] Status lapacke_potrf(const Potrf& request, void* a, std::int32_t* info);
[[nodiscard]] Status lapacke_potrs(const Potrs& request, const void* a, void* b);
[[nodiscard]] Status lapacke_syevd(const Syevd& request, void* a, void* w, std::int32_t* info);
[[nodiscard]] Status lapacke_geqrf(const Geqrf& request, void* a, void* tau);
[[nodiscard]] Status lapacke_orgqr(const Orgqr& request, void* a, const void* tau);
[[nodiscard]] Status lapacke_ormqr(const Ormqr& request, const void* a, const void* tau, void* c);
[[nodiscard]] Status lapacke_gels(const Gels& request, void* a, void* b, std::int32_t* info);
// u and vt may be null when their job is none.
[[nodiscard]] Status lapacke_gesvd(const Gesvd& request, void* a, void* s, void* u, void* vt, std::int32_t* info);
// LAPACK's gesvd, V transposed from its Vᵀ; the tolerance and sweeps are not LAPACK's to take.
[[nodiscard]] Status lapacke_gesvdj(const Gesvdj& request, void* a, void* s, void* u, void* v, std::int32_t* info);

// {"LAPACK", "3.11.0"}: the version LAPACKE's library reports.
[[nodiscard]] LibraryVersion lapack_library();

}  // namespace accel::solver
