#include "libs/solver/dense_info.hpp"

#include <fmt/format.h>

#include <cstring>
#include <string>

namespace accel::solver {
namespace {

std::string_view request_name(Routine routine) {
  switch (routine) {
    case Routine::getrf: return "solver::Getrf";
    case Routine::getrs: return "solver::Getrs";
    case Routine::potrf: return "solver::Potrf";
    case Routine::potrs: return "solver::Potrs";
    case Routine::syevd: return "solver::Syevd";
    case Routine::geqrf: return "solver::Geqrf";
    case Routine::orgqr: return "solver::Orgqr";
    case Routine::ormqr: return "solver::Ormqr";
    case Routine::gels: return "solver::Gels";
    case Routine::gesvd: return "solver::Gesvd";
    case Routine::gesvdj: return "solver::Gesvdj";
  }
  return "solver";
}

// What a positive info means, in LAPACK's words (its indices are 1-based).
std::string failure(Routine routine, std::int32_t info) {
  switch (routine) {
    case Routine::getrf: return fmt::format("U({0},{0}) is exactly zero: the matrix is singular", info);
    case Routine::potrf:
      return fmt::format("the leading minor of order {} is not positive definite: the matrix is not positive definite",
                         info);
    case Routine::gels:
      return fmt::format("R({0},{0}) is exactly zero: A is rank deficient, so the least squares solution is not unique",
                         info);
    case Routine::syevd: return fmt::format("the eigenvalue algorithm did not converge (info {})", info);
    case Routine::gesvd:
      return fmt::format("{} superdiagonals of an intermediate bidiagonal form did not converge to zero", info);
    case Routine::gesvdj:
      return fmt::format("the Jacobi sweeps did not converge to the tolerance within max_sweeps (info {})", info);
    case Routine::getrs:
    case Routine::potrs:
    case Routine::geqrf:
    case Routine::orgqr:
    case Routine::ormqr: break;
  }
  return fmt::format("the routine failed (info {})", info);
}

}  // namespace

std::string error_prefix(Routine routine, std::int64_t index, std::int64_t batch) {
  if (batch == 1) return std::string(request_name(routine));
  return fmt::format("{} (matrix {} of the batch of {}, from 0)", request_name(routine), index, batch);
}

Status info_status(Routine routine, std::int32_t info, std::int64_t index, std::int64_t batch, Source source) {
  if (info == 0) return Status();
  if (info < 0) {
    return Status(Code::internal,
                  fmt::format("{}: the library refused argument {}, which the request's validation should have refused",
                              error_prefix(routine, index, batch), -info),
                  source, info);
  }
  return Status(Code::failed_precondition,
                fmt::format("{}: {}", error_prefix(routine, index, batch), failure(routine, info)), source, info);
}

Status batch_status(Routine routine, std::span<const std::byte> infos, Source source) {
  const std::size_t batch = infos.size() / sizeof(std::int32_t);
  for (std::size_t i = 0; i < batch; ++i) {
    std::int32_t info = 0;
    std::memcpy(&info, infos.data() + i * sizeof info, sizeof info);
    if (info != 0)
      return info_status(routine, info, static_cast<std::int64_t>(i), static_cast<std::int64_t>(batch), source);
  }
  return Status();
}

Status bad_pivot(std::int64_t n, std::int64_t batch, std::int64_t index, std::int32_t value) {
  return invalid_argument(fmt::format("{}: ipiv[{}] = {} is not a row of A (1 to {}): pass Getrf's pivots",
                                      error_prefix(Routine::getrs, index / n, batch), index, value, n));
}

}  // namespace accel::solver
