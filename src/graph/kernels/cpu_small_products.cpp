#include "graph/kernels/cpu_small_products.hpp"

#include <algorithm>
#include <cstring>

#include "graph/kernels/cpu_vector_math.hpp"

namespace accel::graph::cpu {
namespace {

// Eight floats as one value: GCC and Clang lower its arithmetic to whatever vectors the function's clone has.
using Floats8 = float __attribute__((vector_size(32)));

// By reference: a vector returned by value would change the ABI between the clones.
void load8(Floats8& v, const float* p) { std::memcpy(&v, p, sizeof v); }

}  // namespace

// Tiles of 2 rows of x by 4 rows of w, eight partial sums each along k: every w load meets two rows of x and every
// x load four rows of w, in eight independent chains.
ACCEL_CPU_VECTOR_CLONES
void dot_products(const float* x, std::int64_t x_stride, const float* w, std::int64_t w_stride, std::int64_t rows,
                  std::int64_t k, std::int64_t begin, std::int64_t end, float* y, std::int64_t y_stride) {
  constexpr std::int64_t kTileRows = 2, kTileColumns = 4;
  const std::int64_t vector_end = k - k % 8;
  for (std::int64_t j = begin; j < end; j += kTileColumns) {
    const std::int64_t columns = std::min(kTileColumns, end - j);
    const float* w_rows[kTileColumns];  // a short tile repeats its last row; those sums are not stored
    for (std::int64_t t = 0; t < kTileColumns; ++t) w_rows[t] = w + (j + std::min(t, columns - 1)) * w_stride;
    for (std::int64_t r = 0; r < rows; r += kTileRows) {
      const std::int64_t tile_rows = std::min(kTileRows, rows - r);
      const float* x_rows[kTileRows] = {x + r * x_stride, x + (r + tile_rows - 1) * x_stride};
      Floats8 sums[kTileRows][kTileColumns] = {};
      for (std::int64_t c = 0; c < vector_end; c += 8) {
        Floats8 a0, a1, b;
        load8(a0, x_rows[0] + c);
        load8(a1, x_rows[1] + c);
        for (std::int64_t t = 0; t < kTileColumns; ++t) {
          load8(b, w_rows[t] + c);
          sums[0][t] += a0 * b;
          sums[1][t] += a1 * b;
        }
      }
      for (std::int64_t i = 0; i < tile_rows; ++i)
        for (std::int64_t t = 0; t < columns; ++t) {
          float sum = 0;
          for (int lane = 0; lane < 8; ++lane) sum += sums[i][t][lane];
          for (std::int64_t c = vector_end; c < k; ++c) sum += x_rows[i][c] * w_rows[t][c];
          y[(r + i) * y_stride + j + t] = sum;
        }
    }
  }
}

// Each row of w's slice is added, scaled, into every row of y's slice, which stays in L1 or L2.
ACCEL_CPU_VECTOR_CLONES
void combined_rows(const float* x, std::int64_t x_stride, const float* w, std::int64_t w_stride, std::int64_t rows,
                   std::int64_t k, std::int64_t begin, std::int64_t end, float* y, std::int64_t y_stride) {
  for (std::int64_t r = 0; r < rows; ++r) std::fill(y + r * y_stride + begin, y + r * y_stride + end, 0.0f);
  for (std::int64_t c = 0; c < k; ++c) {
    const float* w_slice = w + c * w_stride;
    for (std::int64_t r = 0; r < rows; ++r) {
      const float a = x[r * x_stride + c];
      float* y_row = y + r * y_stride;
#pragma omp simd
      for (std::int64_t j = begin; j < end; ++j) y_row[j] += a * w_slice[j];
    }
  }
}

}  // namespace accel::graph::cpu
