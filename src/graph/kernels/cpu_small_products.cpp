#include "graph/kernels/cpu_small_products.hpp"

#include <algorithm>
#include <cstring>

#include "core/vector_versions.hpp"

namespace accel::graph::cpu {
namespace {

// Eight floats as one value: GCC and Clang lower its arithmetic to whatever vectors the function's copy has.
using Floats8 = float __attribute__((vector_size(32)));

// By reference: a vector returned by value would change the ABI between the copies.
void load8(Floats8& v, const float* p) { std::memcpy(&v, p, sizeof v); }

// Tiles of 2 rows of x by 4 rows of w, eight partial sums each along k: every w load meets two rows of x and every
// x load four rows of w, in eight independent chains.
ACCEL_VECTOR_BODY void dot_products_body(const float* x, std::int64_t x_stride, const float* w, std::int64_t w_stride,
                                         std::int64_t rows, std::int64_t k, std::int64_t begin, std::int64_t end,
                                         float* y, std::int64_t y_stride) {
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

// Columns of a combined_rows tile: two Floats8 a row.
constexpr std::int64_t kTileColumns = 16;

// Rows [0, kRows) of y's columns [0, 16) = x's rows times w's (c < k), each sum in registers over c in order: every
// load of w's 16 floats meets kRows rows of x. Always inlined, so that its vectors are lowered at the width of the
// copy that calls it (a function of its own is lowered at the baseline's before it could be inlined).
template <int kRows>
[[gnu::always_inline]] inline void combined_tile(const float* x, std::int64_t x_stride, const float* w,
                                                 std::int64_t w_stride, std::int64_t k, float* y,
                                                 std::int64_t y_stride) {
  Floats8 low[kRows] = {}, high[kRows] = {};
  for (std::int64_t c = 0; c < k; ++c) {
    Floats8 w_low, w_high;
    load8(w_low, w + c * w_stride);
    load8(w_high, w + c * w_stride + 8);
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      const float a = x[r * x_stride + c];
      low[r] += a * w_low;
      high[r] += a * w_high;
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
    std::memcpy(y + r * y_stride, &low[r], sizeof low[r]);
    std::memcpy(y + r * y_stride + 8, &high[r], sizeof high[r]);
  }
}

// Each row of w's columns [begin, end) is added, scaled, into every row of y's, which stay in L1 or L2: the same sums
// in the same order as the tiles, for columns past the last whole tile and for CPUs the tiles do not pay on.
[[gnu::always_inline]] inline void combined_row_by_row(const float* x, std::int64_t x_stride, const float* w,
                                                       std::int64_t w_stride, std::int64_t rows, std::int64_t k,
                                                       std::int64_t begin, std::int64_t end, float* y,
                                                       std::int64_t y_stride) {
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

template <int kRows>
[[gnu::always_inline]] inline void combined_tiles(const float* x, std::int64_t x_stride, const float* w,
                                                  std::int64_t w_stride, std::int64_t k, std::int64_t begin,
                                                  std::int64_t end, float* y, std::int64_t y_stride) {
  std::int64_t j = begin;
  for (; j + kTileColumns <= end; j += kTileColumns)
    combined_tile<kRows>(x, x_stride, w + j, w_stride, k, y + j, y_stride);
  if (j < end) combined_row_by_row(x, x_stride, w, w_stride, kRows, k, j, end, y, y_stride);
}

// The tiles pay where the copy running is AVX2's or AVX-512's. Compiled for the x86-64 baseline, GCC builds each
// broadcast of x through memory and the tiles ran several times slower than a row at a time (PERFORMANCE.md §95).
bool tiles_pay() { return detail::cpu_vector_level() != detail::CpuVectorLevel::baseline; }

// Tiles of 6 rows of y by 16 columns, twelve sums in vector registers (AVX2's sixteen hold them with w's two loads and
// x's broadcast): all-MiniLM-L6-v2's attention ran 3.8 times as fast as row at a time (cpu_steps_bench, PERFORMANCE.md
// §95), with the same sums in the same order.
ACCEL_VECTOR_BODY void combined_rows_body(const float* x, std::int64_t x_stride, const float* w, std::int64_t w_stride,
                                          std::int64_t rows, std::int64_t k, std::int64_t begin, std::int64_t end,
                                          float* y, std::int64_t y_stride) {
  if (!tiles_pay()) {
    combined_row_by_row(x, x_stride, w, w_stride, rows, k, begin, end, y, y_stride);
    return;
  }
  constexpr int kTileRows = 6;
  std::int64_t r = 0;
  for (; r + kTileRows <= rows; r += kTileRows)
    combined_tiles<kTileRows>(x + r * x_stride, x_stride, w, w_stride, k, begin, end, y + r * y_stride, y_stride);
  const float* x_rest = x + r * x_stride;
  float* y_rest = y + r * y_stride;
  switch (rows - r) {
    case 5: combined_tiles<5>(x_rest, x_stride, w, w_stride, k, begin, end, y_rest, y_stride); break;
    case 4: combined_tiles<4>(x_rest, x_stride, w, w_stride, k, begin, end, y_rest, y_stride); break;
    case 3: combined_tiles<3>(x_rest, x_stride, w, w_stride, k, begin, end, y_rest, y_stride); break;
    case 2: combined_tiles<2>(x_rest, x_stride, w, w_stride, k, begin, end, y_rest, y_stride); break;
    case 1: combined_tiles<1>(x_rest, x_stride, w, w_stride, k, begin, end, y_rest, y_stride); break;
    default: break;
  }
}

}  // namespace

void dot_products(const float* x, std::int64_t x_stride, const float* w, std::int64_t w_stride, std::int64_t rows,
                  std::int64_t k, std::int64_t begin, std::int64_t end, float* y, std::int64_t y_stride) {
  detail::at_cpu_vector_width<dot_products_body>(x, x_stride, w, w_stride, rows, k, begin, end, y, y_stride);
}

void combined_rows(const float* x, std::int64_t x_stride, const float* w, std::int64_t w_stride, std::int64_t rows,
                   std::int64_t k, std::int64_t begin, std::int64_t end, float* y, std::int64_t y_stride) {
  detail::at_cpu_vector_width<combined_rows_body>(x, x_stride, w, w_stride, rows, k, begin, end, y, y_stride);
}

}  // namespace accel::graph::cpu
