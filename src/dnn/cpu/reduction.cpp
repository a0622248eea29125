#include <cmath>
#include <limits>

#include "dnn/cpu/kernels.hpp"

namespace accel::dnn::cpu {
namespace {

double identity_of(ReductionMode mode) {
  switch (mode) {
    case ReductionMode::mul: return 1.0;
    case ReductionMode::min: return std::numeric_limits<double>::infinity();
    case ReductionMode::max: return -std::numeric_limits<double>::infinity();
    default: return 0.0;
  }
}

double accumulate(ReductionMode mode, double acc, double x) {
  switch (mode) {
    case ReductionMode::add:
    case ReductionMode::mean: return acc + x;
    case ReductionMode::mul: return acc * x;
    // fmin/fmax, as the pointwise min and max.
    case ReductionMode::min: return std::fmin(acc, x);
    case ReductionMode::max: return std::fmax(acc, x);
    case ReductionMode::norm1: return acc + std::abs(x);
    case ReductionMode::norm2: return acc + x * x;
  }
  return acc;
}

}  // namespace

Result<DenseTensor> reduction(const ReductionNode& node, const DenseTensor& x, DenseDims out_dims) {
  // Reading out as if broadcast to x's dims maps every element of x onto the output element it reduces into.
  ACCEL_ASSIGN_OR_RETURN(const std::vector<std::int64_t> out_strides, broadcast_strides(out_dims, x.dims));
  DenseTensor out{.dims = {out_dims.begin(), out_dims.end()},
                  .values = std::vector<double>(volume(out_dims), identity_of(node.mode))};
  std::size_t next = 0;
  for_each_index<1>(x.dims, {out_strides}, [&](const auto& at) {
    double& acc = out.values[at[0]];
    acc = accumulate(node.mode, acc, x.values[next++]);
  });
  if (node.mode == ReductionMode::mean) {
    const double count = static_cast<double>(volume(x.dims) / volume(out_dims));
    for (double& v : out.values) v /= count;
  } else if (node.mode == ReductionMode::norm2) {
    for (double& v : out.values) v = std::sqrt(v);
  }
  return out;
}

}  // namespace accel::dnn::cpu
