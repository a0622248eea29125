// Pooling, run as 3-D like the convolutions: missing spatial dims have extent 1 and a window of 1.
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <limits>

#include "dnn/cpu/kernels.hpp"

namespace accel::dnn::cpu {
namespace {

using Extents = std::array<std::int64_t, 3>;

struct PoolGeometry {
  std::int64_t planes = 0;  // N * C
  Extents input{1, 1, 1}, output{1, 1, 1}, window{1, 1, 1}, stride{1, 1, 1}, pre_padding{};
};

Result<PoolGeometry> geometry(const PoolingNode& node, DenseDims x, DenseDims out) {
  const std::size_t rank = node.spatial_rank;
  if (rank < 1 || rank > 3 || x.size() != rank + 2 || out.size() != rank + 2 || x[0] != out[0] || x[1] != out[1]) {
    return invalid_argument(
        fmt::format("pooling: {}-D pooling of [{}] cannot give [{}]", rank, fmt::join(x, ", "), fmt::join(out, ", ")));
  }
  PoolGeometry g{.planes = x[0] * x[1]};
  for (std::size_t i = 0; i < rank; ++i) {
    g.input[i] = x[i + 2];
    g.output[i] = out[i + 2];
    g.window[i] = node.window[i];
    g.stride[i] = node.stride[i];
    g.pre_padding[i] = node.pre_padding[i];
    const std::int64_t room = g.input[i] + node.pre_padding[i] + node.post_padding[i] - g.window[i];
    if (g.window[i] < 1 || g.stride[i] < 1 || node.pre_padding[i] < 0 || node.post_padding[i] < 0 || room < 0 ||
        room / g.stride[i] + 1 != g.output[i]) {
      return invalid_argument(
          fmt::format("pooling: spatial dim {}: window {}, stride {} and padding {}/{} over {} do not give {}", i,
                      g.window[i], g.stride[i], node.pre_padding[i], node.post_padding[i], g.input[i], g.output[i]));
    }
  }
  return g;
}

// One output element: the window at `start` (in input coordinates, possibly in the padding) over one plane.
double pool_window(PoolingMode mode, const PoolGeometry& g, const double* plane, const Extents& start) {
  double max = -std::numeric_limits<double>::infinity();
  double sum = 0;
  std::int64_t inside = 0;
  for (std::int64_t i0 = start[0]; i0 < start[0] + g.window[0]; ++i0)
    for (std::int64_t i1 = start[1]; i1 < start[1] + g.window[1]; ++i1)
      for (std::int64_t i2 = start[2]; i2 < start[2] + g.window[2]; ++i2) {
        if (i0 < 0 || i0 >= g.input[0] || i1 < 0 || i1 >= g.input[1] || i2 < 0 || i2 >= g.input[2]) continue;
        const double v = plane[(i0 * g.input[1] + i1) * g.input[2] + i2];
        max = std::fmax(max, v);
        sum += v;
        ++inside;
      }
  switch (mode) {
    // Padding is not an element, so it never wins a max. (Validation keeps padding smaller than the window,
    // so every window holds at least one element.)
    case PoolingMode::max: return max;
    case PoolingMode::average_include_padding:
      return sum / static_cast<double>(g.window[0] * g.window[1] * g.window[2]);
    case PoolingMode::average_exclude_padding: return sum / static_cast<double>(inside);
  }
  return max;
}

}  // namespace

Result<DenseTensor> pooling(const PoolingNode& node, const DenseTensor& x, DenseDims out_dims) {
  ACCEL_ASSIGN_OR_RETURN(const PoolGeometry g, geometry(node, x.dims, out_dims));
  DenseTensor out{.dims = {out_dims.begin(), out_dims.end()}, .values = std::vector<double>(volume(out_dims))};
  const std::int64_t plane_size = g.input[0] * g.input[1] * g.input[2];
  std::size_t next = 0;
  for (std::int64_t p = 0; p < g.planes; ++p) {
    const double* plane = x.values.data() + p * plane_size;
    for (std::int64_t o0 = 0; o0 < g.output[0]; ++o0)
      for (std::int64_t o1 = 0; o1 < g.output[1]; ++o1)
        for (std::int64_t o2 = 0; o2 < g.output[2]; ++o2) {
          const Extents start{o0 * g.stride[0] - g.pre_padding[0], o1 * g.stride[1] - g.pre_padding[1],
                              o2 * g.stride[2] - g.pre_padding[2]};
          out.values[next++] = pool_window(node.mode, g, plane, start);
        }
  }
  return out;
}

}  // namespace accel::dnn::cpu
