#include <fmt/format.h>

#include "dnn/cpu/dense_gemm.hpp"
#include "dnn/cpu/kernels.hpp"

namespace accel::dnn::cpu {

Result<DenseTensor> matmul(const DenseTensor& a, const DenseTensor& b, DenseDims out_dims) {
  const std::size_t rank = out_dims.size();
  if (rank < 2 || a.dims.size() != rank || b.dims.size() != rank) {
    return invalid_argument(fmt::format("matmul: a, b and out need the same rank, at least 2 (got {}, {} and {})",
                                        a.dims.size(), b.dims.size(), rank));
  }
  const std::int64_t m = out_dims[rank - 2], n = out_dims[rank - 1], k = a.dims[rank - 1];
  if (a.dims[rank - 2] != m || b.dims[rank - 2] != k || b.dims[rank - 1] != n) {
    return invalid_argument(fmt::format("matmul: [{}] x [{}] does not give [{}]", fmt::join(a.dims, ", "),
                                        fmt::join(b.dims, ", "), fmt::join(out_dims, ", ")));
  }
  // Walk the batch dims; each step is one GEMM between the matrices the batch index selects.
  const DenseDims batch = out_dims.first(rank - 2);
  ACCEL_ASSIGN_OR_RETURN(std::vector<std::int64_t> a_strides,
                         broadcast_strides(DenseDims(a.dims).first(rank - 2), batch));
  ACCEL_ASSIGN_OR_RETURN(std::vector<std::int64_t> b_strides,
                         broadcast_strides(DenseDims(b.dims).first(rank - 2), batch));
  for (std::int64_t& s : a_strides) s *= m * k;
  for (std::int64_t& s : b_strides) s *= k * n;
  DenseTensor out{.dims = {out_dims.begin(), out_dims.end()}, .values = std::vector<double>(volume(out_dims))};
  double* c = out.values.data();
  for_each_index<2>(batch, {a_strides, b_strides}, [&](const auto& at) {
    gemm(Side::as_stored, Side::as_stored, m, n, k, a.values.data() + at[0], b.values.data() + at[1], c, false);
    c += m * n;
  });
  return out;
}

}  // namespace accel::dnn::cpu
