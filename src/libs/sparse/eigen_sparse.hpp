// The sparse requests on the CPU device: Eigen's sparse module over the caller's host arrays (mapped, not copied,
// for CSR and CSC; COO is assembled into a CSR first, as Eigen has no COO type). The requests were validated and
// their structures checked (structure.hpp) before these run.
#pragma once

#include <span>

#include "accel/core/library_version.hpp"
#include "accel/libs/sparse/sparse.hpp"
#include "operation/operation.hpp"

namespace accel::sparse {

// `views` hold A's offsets, indices and values, then the dense operands in the request's order.
[[nodiscard]] Status eigen_spmv(const SpMV& r, std::span<const BufferView> views);
[[nodiscard]] Status eigen_spmm(const SpMM& r, std::span<const BufferView> views);
// The diagonal of a non-unit A must be stored in every row: Eigen divides by the last entry it reads.
[[nodiscard]] Status eigen_spsv(const SpSV& r, std::span<const BufferView> views);
[[nodiscard]] Status eigen_to_dense(const ToDense& r, std::span<const BufferView> views);

[[nodiscard]] LibraryVersion eigen_library();

}  // namespace accel::sparse
