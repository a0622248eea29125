// Convolutions as im2col + GEMM per (sample, group). Every rank is run as 3-D, the missing spatial dims having
// extent 1, so one set of loops serves 1-, 2- and 3-D.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "dnn/cpu/dense_gemm.hpp"
#include "dnn/cpu/kernels.hpp"

namespace accel::dnn::cpu {
namespace {

using Extents = std::array<std::int64_t, 3>;

struct ConvGeometry {
  std::int64_t n = 0, c = 0, k = 0, groups = 0;
  Extents input{1, 1, 1}, filter{1, 1, 1}, output{1, 1, 1};
  Extents pre_padding{}, stride{1, 1, 1}, dilation{1, 1, 1};

  [[nodiscard]] std::int64_t c_per_group() const { return c / groups; }
  [[nodiscard]] std::int64_t k_per_group() const { return k / groups; }
  [[nodiscard]] std::int64_t input_volume() const { return input[0] * input[1] * input[2]; }
  [[nodiscard]] std::int64_t filter_volume() const { return filter[0] * filter[1] * filter[2]; }
  [[nodiscard]] std::int64_t output_volume() const { return output[0] * output[1] * output[2]; }
  // Rows of the im2col matrix of one group: one per (channel, filter tap).
  [[nodiscard]] std::int64_t column_rows() const { return c_per_group() * filter_volume(); }
};

Status mismatch(std::string_view what) { return invalid_argument(fmt::format("convolution: {}", what)); }

// x [N, C, in], w [K, C/groups, filter], y [N, K, out], whichever of them is the output.
Result<ConvGeometry> geometry(const ConvolutionNode& node, DenseDims x, DenseDims w, DenseDims y) {
  const std::size_t rank = node.spatial_rank;
  if (rank < 1 || rank > 3) return mismatch(fmt::format("spatial rank {} is outside 1..3", rank));
  if (x.size() != rank + 2 || w.size() != rank + 2 || y.size() != rank + 2) {
    return mismatch(fmt::format("x, w and y need rank {}", rank + 2));
  }
  ConvGeometry g{.n = x[0], .c = x[1], .k = w[0]};
  if (w[1] < 1 || g.c % w[1] != 0) return mismatch(fmt::format("C {} is not a multiple of w's dim 1 ({})", g.c, w[1]));
  g.groups = g.c / w[1];
  if (g.k % g.groups != 0) return mismatch(fmt::format("K {} is not a multiple of the {} groups", g.k, g.groups));
  if (y[0] != g.n || y[1] != g.k)
    return mismatch(fmt::format("y's N and K are {} and {}, not {} and {}", y[0], y[1], g.n, g.k));
  for (std::size_t i = 0; i < rank; ++i) {
    g.input[i] = x[i + 2];
    g.filter[i] = w[i + 2];
    g.output[i] = y[i + 2];
    g.pre_padding[i] = node.pre_padding[i];
    g.stride[i] = node.stride[i];
    g.dilation[i] = node.dilation[i];
    if (g.stride[i] < 1 || g.dilation[i] < 1 || node.pre_padding[i] < 0 || node.post_padding[i] < 0) {
      return mismatch(fmt::format("spatial dim {}: stride and dilation must be >= 1, padding >= 0", i));
    }
    const std::int64_t room =
        g.input[i] + node.pre_padding[i] + node.post_padding[i] - g.dilation[i] * (g.filter[i] - 1) - 1;
    if (room < 0 || room / g.stride[i] + 1 != g.output[i]) {
      return mismatch(fmt::format("spatial dim {}: input {} and filter {} do not give output {}", i, g.input[i],
                                  g.filter[i], g.output[i]));
    }
  }
  return g;
}

// Calls visit(column, pixel) for every element of one group's im2col matrix [channel * filter tap, output
// position] that reads the input, with `pixel` its offset in the group's input [channel, in]. Taps that land
// in the padding are skipped: they read 0.
template <class Visit>
void for_each_tap(const ConvGeometry& g, Visit&& visit) {
  const std::int64_t positions = g.output_volume();
  std::int64_t row = 0;
  for (std::int64_t c = 0; c < g.c_per_group(); ++c)
    for (std::int64_t f0 = 0; f0 < g.filter[0]; ++f0)
      for (std::int64_t f1 = 0; f1 < g.filter[1]; ++f1)
        for (std::int64_t f2 = 0; f2 < g.filter[2]; ++f2, ++row) {
          std::int64_t column = row * positions;
          for (std::int64_t o0 = 0; o0 < g.output[0]; ++o0) {
            const std::int64_t i0 = o0 * g.stride[0] - g.pre_padding[0] + f0 * g.dilation[0];
            for (std::int64_t o1 = 0; o1 < g.output[1]; ++o1) {
              const std::int64_t i1 = o1 * g.stride[1] - g.pre_padding[1] + f1 * g.dilation[1];
              for (std::int64_t o2 = 0; o2 < g.output[2]; ++o2, ++column) {
                const std::int64_t i2 = o2 * g.stride[2] - g.pre_padding[2] + f2 * g.dilation[2];
                if (i0 < 0 || i0 >= g.input[0] || i1 < 0 || i1 >= g.input[1] || i2 < 0 || i2 >= g.input[2]) continue;
                visit(column, ((c * g.input[0] + i0) * g.input[1] + i1) * g.input[2] + i2);
              }
            }
          }
        }
}

// Offsets of group `group` of sample `n` in x (and dx), y (and dy), and w (and dw).
std::int64_t x_offset(const ConvGeometry& g, std::int64_t n, std::int64_t group) {
  return (n * g.c + group * g.c_per_group()) * g.input_volume();
}
std::int64_t y_offset(const ConvGeometry& g, std::int64_t n, std::int64_t group) {
  return (n * g.k + group * g.k_per_group()) * g.output_volume();
}
std::int64_t w_offset(const ConvGeometry& g, std::int64_t group) { return group * g.k_per_group() * g.column_rows(); }

void im2col(const ConvGeometry& g, const double* x, std::vector<double>& columns) {
  std::fill(columns.begin(), columns.end(), 0.0);
  for_each_tap(g, [&](std::int64_t column, std::int64_t pixel) { columns[column] = x[pixel]; });
}

void forward(const ConvGeometry& g, const DenseTensor& x, const DenseTensor& w, DenseTensor& y) {
  std::vector<double> columns(g.column_rows() * g.output_volume());
  for (std::int64_t n = 0; n < g.n; ++n)
    for (std::int64_t group = 0; group < g.groups; ++group) {
      im2col(g, x.values.data() + x_offset(g, n, group), columns);
      gemm(Side::as_stored, Side::as_stored, g.k_per_group(), g.output_volume(), g.column_rows(),
           w.values.data() + w_offset(g, group), columns.data(), y.values.data() + y_offset(g, n, group), false);
    }
}

// The adjoint of forward in x: the columns' gradient is w^T dy, scattered back onto the pixels each read.
void backward_data(const ConvGeometry& g, const DenseTensor& dy, const DenseTensor& w, DenseTensor& dx) {
  std::vector<double> columns(g.column_rows() * g.output_volume());
  for (std::int64_t n = 0; n < g.n; ++n)
    for (std::int64_t group = 0; group < g.groups; ++group) {
      gemm(Side::transposed, Side::as_stored, g.column_rows(), g.output_volume(), g.k_per_group(),
           w.values.data() + w_offset(g, group), dy.values.data() + y_offset(g, n, group), columns.data(), false);
      double* pixels = dx.values.data() + x_offset(g, n, group);
      for_each_tap(g, [&](std::int64_t column, std::int64_t pixel) { pixels[pixel] += columns[column]; });
    }
}

// The adjoint of forward in w: dw = sum over samples of dy columns^T.
void backward_filter(const ConvGeometry& g, const DenseTensor& x, const DenseTensor& dy, DenseTensor& dw) {
  std::vector<double> columns(g.column_rows() * g.output_volume());
  for (std::int64_t n = 0; n < g.n; ++n)
    for (std::int64_t group = 0; group < g.groups; ++group) {
      im2col(g, x.values.data() + x_offset(g, n, group), columns);
      gemm(Side::as_stored, Side::transposed, g.k_per_group(), g.column_rows(), g.output_volume(),
           dy.values.data() + y_offset(g, n, group), columns.data(), dw.values.data() + w_offset(g, group), true);
    }
}

}  // namespace

Result<DenseTensor> convolution(const ConvolutionNode& node, const DenseTensor& a, const DenseTensor& b,
                                DenseDims out_dims) {
  DenseTensor out{.dims = {out_dims.begin(), out_dims.end()}, .values = std::vector<double>(volume(out_dims), 0.0)};
  switch (node.direction) {
    case ConvDirection::forward: {
      ACCEL_ASSIGN_OR_RETURN(ConvGeometry g, geometry(node, a.dims, b.dims, out_dims));
      forward(g, a, b, out);
      break;
    }
    case ConvDirection::backward_data: {
      ACCEL_ASSIGN_OR_RETURN(ConvGeometry g, geometry(node, out_dims, b.dims, a.dims));
      backward_data(g, a, b, out);
      break;
    }
    case ConvDirection::backward_filter: {
      ACCEL_ASSIGN_OR_RETURN(ConvGeometry g, geometry(node, a.dims, out_dims, b.dims));
      backward_filter(g, a, b, out);
      break;
    }
  }
  return out;
}

}  // namespace accel::dnn::cpu
