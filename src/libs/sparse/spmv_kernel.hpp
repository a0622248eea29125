// y = alpha A x + beta y for a CSR matrix with short rows, as a kernel of our own: cuSPARSE's SpMV took 18.5 µs on
// the H100 for a 1 M-row matrix of 1.07 M entries whose arrays move in about 6 µs (docs/PERFORMANCE.md, section 26).
// A group of `lanes` threads sums each row (lanes a power of two up to 32, chosen from the mean row length); a row
// longer than 16 lanes' worth is summed by a warp instead, and one of more than 1024 entries by its whole block, so
// that a long row never holds up a group for hundreds of steps. A row of more than kSplitRowsAbove entries (a graph's
// hub) is cut into chunks, each summed by a block of a first kernel into a partial sum that the product then adds up in
// order: summed by one block, a hub of 524,288 entries made a product of 8 M entries 7.3x slower than cuSPARSE's
// (docs/PERFORMANCE.md, section 27). Every sum is taken in one fixed order, so the result is the same on every run (no
// atomics), and a row never reads y when beta is 0. The structure was checked first (structure.hpp), which also says
// how long the longest row is. Plain C++17 and CUDA types: nvcc compiles the kernel's file as C++17.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace accel::sparse {

// Rows longer than kSplitRowsAbove are summed in chunks of kChunkEntries, which a split row is longer than. Smaller
// chunks (2048 to 512 entries), or splitting rows from 1024 or 2048 entries on, made the Zipf product of section 27
// 1.6-50 % slower.
constexpr std::int64_t kSplitRowsAbove = 8192;
constexpr std::int64_t kChunkEntries = 8192;
static_assert(kChunkEntries <= kSplitRowsAbove);

struct CsrProduct {
  bool wide = false;  // i64 offsets and columns, else i32
  bool f64 = false;   // f64 values, x and y, else f32
  int lanes = 1;      // threads per row: 1, 2, 4, 8, 16 or 32
  std::int64_t rows = 0;
  std::int64_t nnz = 0;
  std::uint64_t longest = 0;  // entries of the longest row (StructureReport::longest)
  void* partials = nullptr;   // csr_product_partials_bytes(nnz) of device memory, used where longest > kSplitRowsAbove
  const void* offsets = nullptr;
  const void* columns = nullptr;
  const void* values = nullptr;
  const void* x = nullptr;
  void* y = nullptr;
  double alpha = 1;
  double beta = 0;
};

// The threads per row for a matrix of `nnz` entries over `rows` rows: the smallest power of two at least half its mean
// row length, at most 32. Measured on the H100, section 26 of docs/PERFORMANCE.md.
[[nodiscard]] int csr_product_lanes(std::int64_t rows, std::int64_t nnz) noexcept;

// The scratch memory a product of `nnz` entries may need for its long rows' partial sums.
[[nodiscard]] std::uint64_t csr_product_partials_bytes(std::int64_t nnz) noexcept;

// Enqueues the product on `stream`; the launch's error, if any.
[[nodiscard]] cudaError_t launch_csr_product(const CsrProduct& product, cudaStream_t stream);

}  // namespace accel::sparse
