// matmul_bias_activation on the CPU. Tall products (the encoder's, thousands of tokens) are OpenBLAS's SGEMM, cut
// into row blocks, one per thread of the OpenMP team, each block's GEMM followed by its bias and activation while
// the block is still in cache. A few rows (one query) are a product SGEMM does badly: it packs the whole weight
// matrix for every call, three passes over memory for a few multiplications per weight. There each thread takes
// a block of output columns and reads its weights once, in the layout they are stored in.
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "graph/kernels/cpu_kernels.hpp"
#include "graph/kernels/cpu_vector_math.hpp"

namespace accel::graph::cpu {
namespace {

// Fewer rows than this per thread and the blocks' GEMMs run below OpenBLAS's efficient sizes.
constexpr std::int64_t kRowsPerBlock = 64;
// Up to this many rows the weights are read straight from memory (see above); x stays in L1 or L2.
constexpr std::int64_t kSkinnyRows = 32;
// Output columns per task of the skinny product: a few KiB of weights, enough to spread over the team.
constexpr std::int64_t kSkinnyColumns = 16;

// Eight floats as one value: GCC and Clang lower its arithmetic to whatever vectors the function's clone has.
using Floats8 = float __attribute__((vector_size(32)));

// By reference: a vector returned by value would change the ABI between the clones.
void load8(Floats8& v, const float* p) { std::memcpy(&v, p, sizeof v); }

// y[:, begin:end] = x W^T for W stored [n, k]: tiles of 2 rows of x by 4 rows of W, eight partial sums each along
// k, so every weight loaded meets two rows and every load of x four weight rows, with eight independent chains.
ACCEL_CPU_VECTOR_CLONES
void skinny_columns_transposed(const float* x, const float* w, std::int64_t rows, std::int64_t k, std::int64_t n,
                               std::int64_t begin, std::int64_t end, float* y) {
  constexpr std::int64_t kTileRows = 2, kTileColumns = 4;
  const std::int64_t vector_end = k - k % 8;
  for (std::int64_t j = begin; j < end; j += kTileColumns) {
    const std::int64_t columns = std::min(kTileColumns, end - j);
    const float* w_rows[kTileColumns];  // a short tile repeats its last row; those sums are not stored
    for (std::int64_t t = 0; t < kTileColumns; ++t) w_rows[t] = w + (j + std::min(t, columns - 1)) * k;
    for (std::int64_t r = 0; r < rows; r += kTileRows) {
      const std::int64_t tile_rows = std::min(kTileRows, rows - r);
      const float* x_rows[kTileRows] = {x + r * k, x + (r + tile_rows - 1) * k};
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
          y[(r + i) * n + j + t] = sum;
        }
    }
  }
}

// y[:, begin:end] = x W for W stored [k, n]: each weight row's slice is added into every row of y.
ACCEL_CPU_VECTOR_CLONES
void skinny_columns(const float* x, const float* w, std::int64_t rows, std::int64_t k, std::int64_t n,
                    std::int64_t begin, std::int64_t end, float* y) {
  for (std::int64_t r = 0; r < rows; ++r) std::fill(y + r * n + begin, y + r * n + end, 0.0f);
  for (std::int64_t c = 0; c < k; ++c) {
    const float* w_slice = w + c * n;
    for (std::int64_t r = 0; r < rows; ++r) {
      const float a = x[r * k + c];
      float* y_row = y + r * n;
#pragma omp simd
      for (std::int64_t j = begin; j < end; ++j) y_row[j] += a * w_slice[j];
    }
  }
}

void skinny_matmul(const float* x, const float* w, bool transpose_w, const float* bias, std::int64_t rows,
                   std::int64_t k, std::int64_t n, Activation activation, float* y) {
  const std::int64_t tasks = (n + kSkinnyColumns - 1) / kSkinnyColumns;
#pragma omp parallel for schedule(static) if (rows * k * n >= (std::int64_t{1} << 16))
  for (std::int64_t task = 0; task < tasks; ++task) {
    const std::int64_t begin = task * kSkinnyColumns, end = std::min(n, begin + kSkinnyColumns);
    if (transpose_w) {
      skinny_columns_transposed(x, w, rows, k, n, begin, end, y);
    } else {
      skinny_columns(x, w, rows, k, n, begin, end, y);
    }
    if (!bias && activation == Activation::identity) continue;
    for (std::int64_t r = 0; r < rows; ++r)
      bias_activate_row(y + r * n + begin, bias ? bias + begin : nullptr, end - begin, activation);
  }
}

void gemm_rows(const float* x, const float* w, bool transpose_w, std::int64_t rows, std::int64_t k, std::int64_t n,
               float* y) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, transpose_w ? CblasTrans : CblasNoTrans, static_cast<blasint>(rows),
              static_cast<blasint>(n), static_cast<blasint>(k), 1.0f, x, static_cast<blasint>(k), w,
              static_cast<blasint>(transpose_w ? k : n), 0.0f, y, static_cast<blasint>(n));
}

void epilogue_rows(const float* bias, Activation activation, std::int64_t rows, std::int64_t n, float* y) {
  if (!bias && activation == Activation::identity) return;
  for (std::int64_t r = 0; r < rows; ++r) bias_activate_row(y + r * n, bias, n, activation);
}

}  // namespace

void matmul_bias_activation(const float* x, const float* w, bool transpose_w, const float* bias, std::int64_t rows,
                            std::int64_t k, std::int64_t n, Activation activation, float* y) {
  if (rows == 0 || n == 0) return;
  if (k == 0) {
    std::fill_n(y, rows * n, 0.0f);
    bias_activation(y, bias, rows, n, activation, y);
    return;
  }
  if (rows <= kSkinnyRows) {
    skinny_matmul(x, w, transpose_w, bias, rows, k, n, activation, y);
    return;
  }
  const std::int64_t threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  if (threads > 1 && rows >= threads * kRowsPerBlock) {
    const std::int64_t block = (rows + threads - 1) / threads;
#pragma omp parallel for schedule(static, 1)
    for (std::int64_t b = 0; b < threads; ++b) {
      const std::int64_t begin = b * block, count = std::min(block, rows - begin);
      if (count <= 0) continue;
      gemm_rows(x + begin * k, w, transpose_w, count, k, n, y + begin * n);
      epilogue_rows(bias, activation, count, n, y + begin * n);
    }
    return;
  }
  gemm_rows(x, w, transpose_w, rows, k, n, y);
  bias_activation(y, bias, rows, n, activation, y);
}

}  // namespace accel::graph::cpu
