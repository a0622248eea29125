// matmul_bias_activation on the CPU. Tall products (the encoder's, thousands of tokens) are OpenBLAS's SGEMM, cut
// into row blocks, one per thread of the OpenMP team, each block's GEMM followed by its bias and activation while
// the block is still in cache. A few rows (one query) are a product SGEMM does badly: it packs the whole weight
// matrix for every call, three passes over memory for a few multiplications per weight. There each thread takes
// a block of output columns and reads its weights once, in the layout they are stored in.
#include <cblas.h>
#include <omp.h>

#include <algorithm>

#include "graph/kernels/cpu_kernels.hpp"
#include "graph/kernels/cpu_small_products.hpp"
#include "graph/kernels/cpu_vector_math.hpp"

namespace accel::graph::cpu {
namespace {

// Fewer rows than this per thread and the blocks' GEMMs run below OpenBLAS's efficient sizes.
constexpr std::int64_t kRowsPerBlock = 64;
// Up to this many rows the weights are read straight from memory (see above); x stays in L1 or L2.
constexpr std::int64_t kSkinnyRows = 32;
// Output columns per task of the skinny product: a few KiB of weights, enough to spread over the team.
constexpr std::int64_t kSkinnyColumns = 16;

void skinny_matmul(const float* x, const float* w, bool transpose_w, const float* bias, std::int64_t rows,
                   std::int64_t k, std::int64_t n, Activation activation, float* y) {
  const std::int64_t tasks = (n + kSkinnyColumns - 1) / kSkinnyColumns;
#pragma omp parallel for schedule(static) if (rows * k * n >= (std::int64_t{1} << 16))
  for (std::int64_t task = 0; task < tasks; ++task) {
    const std::int64_t begin = task * kSkinnyColumns, end = std::min(n, begin + kSkinnyColumns);
    if (transpose_w) {
      dot_products(x, k, w, k, rows, k, begin, end, y, n);
    } else {
      combined_rows(x, k, w, n, rows, k, begin, end, y, n);
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
