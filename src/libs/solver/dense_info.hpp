// LAPACK's INFO as a request's status, the same on every device: a factorisation that fails on its input is a
// named error carrying LAPACK's index, never a silent NaN.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "accel/core/status.hpp"

namespace accel::solver {

enum class Routine : std::uint8_t { getrf, getrs, potrf, potrs, syevd, geqrf, orgqr, ormqr, gels, gesvd, gesvdj };

// How errors about matrix `index` of a batch of `batch` begin: "solver::Getrf", or "solver::Getrf (matrix 2 of the
// batch of 5, from 0)".
[[nodiscard]] std::string error_prefix(Routine routine, std::int64_t index, std::int64_t batch);

// The info of matrix `index` of a batch of `batch`: OK for 0; failed_precondition for a factorisation that failed
// on its input (> 0); internal for an argument the library refused (< 0), which validation should have refused.
// `source` is the library that reported it.
[[nodiscard]] Status info_status(Routine routine, std::int32_t info, std::int64_t index, std::int64_t batch,
                                 Source source);

// The status of a batch: that of its first matrix with a non-zero info. `infos` holds one i32 per matrix, as the
// library wrote them (bytes, since they may come straight from a device copy).
[[nodiscard]] Status batch_status(Routine routine, std::span<const std::byte> infos, Source source);

// Getrs's pivot `index` (of all the batch's, n per matrix) is `value`, outside 1..n: invalid_argument, the same on
// every device, since no library checks its pivots.
[[nodiscard]] Status bad_pivot(std::int64_t n, std::int64_t batch, std::int64_t index, std::int32_t value);

}  // namespace accel::solver
