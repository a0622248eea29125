// Random blocked-ELL matrices (sparse.hpp: Format::blocked_ell) and SpMM over them on a device, against a dense
// reference in double: what the CPU test asserts on the CPU device and the GPU test on CUDA beside the CPU's results.
#pragma once

#include <algorithm>
#include <numeric>

#include "sparse_cases.hpp"

namespace accel::sparse::testing {

// A blocked-ELL matrix on the host: `slots` column blocks per block row (distinct, sorted, some of them -1), values
// rows x slots·block row-major. A padding block's values are zero, as the format asks: cuSPARSE reads them.
struct BlockedEll {
  std::int64_t rows = 0, cols = 0;
  std::int32_t block = 1;
  std::int64_t slots = 0;
  std::vector<std::int64_t> blocks;
  std::vector<double> values;

  [[nodiscard]] std::int64_t ell_cols() const { return slots * block; }
  [[nodiscard]] Reference dense() const {
    Reference out = Reference::Zero(rows, cols);
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t s = 0; s < slots; ++s) {
        const std::int64_t b = blocks[static_cast<std::size_t>(i / block * slots + s)];
        if (b < 0) continue;
        for (std::int64_t c = 0; c < block; ++c)
          out(i, b * block + c) = values[static_cast<std::size_t>(i * ell_cols() + s * block + c)];
      }
    return out;
  }
};

// A (block_rows · block) x (block_cols · block) matrix; each slot is padding with probability `padding` (and every
// block of the last block row is, when there is more than one).
inline BlockedEll random_blocked_ell(std::int64_t block_rows, std::int64_t block_cols, std::int32_t block,
                                     std::int64_t slots, double padding, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> uniform(-1, 1), unit(0, 1);
  BlockedEll out{.rows = block_rows * block, .cols = block_cols * block, .block = block, .slots = slots};
  std::vector<std::int64_t> columns(static_cast<std::size_t>(block_cols));
  std::iota(columns.begin(), columns.end(), 0);
  for (std::int64_t r = 0; r < block_rows; ++r) {
    std::shuffle(columns.begin(), columns.end(), rng);
    std::vector<std::int64_t> chosen(columns.begin(), columns.begin() + slots);
    std::sort(chosen.begin(), chosen.end());
    for (std::int64_t& b : chosen)
      if (unit(rng) < padding || (block_rows > 1 && r == block_rows - 1)) b = -1;
    out.blocks.insert(out.blocks.end(), chosen.begin(), chosen.end());
  }
  out.values.resize(static_cast<std::size_t>(out.rows * out.ell_cols()));
  for (std::int64_t row = 0; row < out.rows; ++row)
    for (std::int64_t col = 0; col < out.ell_cols(); ++col)
      if (out.blocks[static_cast<std::size_t>(row / block * slots + col / block)] != -1)
        out.values[static_cast<std::size_t>(row * out.ell_cols() + col)] = uniform(rng);
  return out;
}

// C = alpha op(A) op(B) + beta C on `device`, A blocked ELL with `I` indices and `T` values (B, C of T).
template <class I, class T>
Outcome run_blocked_spmm(Device& device, const BlockedEll& e, Transpose op_a, Transpose op_b, MatrixOrder order,
                         std::int64_t n, double alpha, double beta, const std::vector<T>& b, const std::vector<T>& c,
                         Structure structure = Structure::checked_each_use) {
  std::vector<I> blocks(e.blocks.begin(), e.blocks.end());
  std::vector<T> values;
  for (double v : e.values) values.push_back(value_of<T>(v));
  const Buffer<I> d_blocks = upload(device, blocks);
  const Buffer<T> d_values = upload(device, values), db = upload(device, b), dc = upload(device, c);
  Matrix a = blocked_ell(e.rows, e.cols, e.block, e.ell_cols(), d_blocks, d_values, dtype_of<T>(), dtype_of<I>());
  a.structure = structure;
  const std::int64_t m = op_a == Transpose::none ? e.rows : e.cols, k = op_a == Transpose::none ? e.cols : e.rows;
  const std::int64_t b_rows = op_b == Transpose::none ? k : n, b_cols = op_b == Transpose::none ? n : k;
  Outcome out;
  out.status = device
                   .ask(SpMM{.op_a = op_a,
                             .op_b = op_b,
                             .alpha = alpha,
                             .beta = beta,
                             .a = a,
                             .b = {.order = order, .rows = b_rows, .cols = b_cols, .data = db},
                             .c = {.order = order, .rows = m, .cols = n, .data = dc}})
                   .wait()
                   .status();
  out.out = to_reference(download(device, dc), m, n, order == MatrixOrder::column_major ? m : n, order);
  return out;
}

// The same product in double from the dense form of A (and of B and C as the device holds them).
template <class T>
Reference blocked_spmm_reference(const BlockedEll& e, Transpose op_a, Transpose op_b, MatrixOrder order, std::int64_t n,
                                 double alpha, double beta, const std::vector<T>& b, const std::vector<T>& c) {
  BlockedEll rounded = e;
  for (double& v : rounded.values) v = to_double(value_of<T>(v));
  const Reference a = op_a == Transpose::none ? rounded.dense() : Reference(rounded.dense().transpose());
  const std::int64_t m = a.rows(), k = a.cols();
  const std::int64_t b_rows = op_b == Transpose::none ? k : n, b_cols = op_b == Transpose::none ? n : k;
  const Reference rb = to_reference(b, b_rows, b_cols, order == MatrixOrder::column_major ? b_rows : b_cols, order);
  const Reference rc = to_reference(c, m, n, order == MatrixOrder::column_major ? m : n, order);
  return alpha * a * (op_b == Transpose::none ? rb : Reference(rb.transpose())) + beta * rc;
}

}  // namespace accel::sparse::testing
