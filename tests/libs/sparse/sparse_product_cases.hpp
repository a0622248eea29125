// Runs of SDDMM, the two-phase SpGEMM and the dense-to-CSR conversion on a device, and their references: what the
// CPU test asserts on the CPU device and the GPU test on CUDA devices, beside the CPU's results.
#pragma once

#include <set>

#include "sparse_cases.hpp"

namespace accel::sparse::testing {

// A dense operand rows x cols in `order`, packed, as host data.
template <class T>
std::vector<T> random_dense(std::int64_t rows, std::int64_t cols, std::mt19937_64& rng) {
  return random_vector<T>(static_cast<std::size_t>(rows * cols), rng);
}

inline std::int64_t packed_ld(std::int64_t rows, std::int64_t cols, MatrixOrder order) {
  return order == MatrixOrder::column_major ? rows : cols;
}

// C = alpha (op(A) op(B)) ∘ spy(C) + beta C on `device`, C's pattern that of `c`; the result as a dense matrix.
template <class I, class T>
Outcome run_sddmm(Device& device, const Entries& c, Transpose op_a, Transpose op_b, MatrixOrder order, std::int64_t k,
                  double alpha, double beta, const std::vector<T>& a, const std::vector<T>& b,
                  Structure structure = Structure::checked_each_use) {
  DeviceMatrix<I, T> dc = upload_matrix<I, T>(device, c, Format::csr, structure);
  const bool ta = op_a == Transpose::transpose, tb = op_b == Transpose::transpose;
  Buffer<T> da = upload(device, a), db = upload(device, b);
  Outcome out;
  out.status = device
                   .ask(SDDMM{.op_a = op_a,
                              .op_b = op_b,
                              .alpha = alpha,
                              .beta = beta,
                              .a = {.order = order, .rows = ta ? k : c.rows, .cols = ta ? c.rows : k, .data = da},
                              .b = {.order = order, .rows = tb ? c.cols : k, .cols = tb ? k : c.cols, .data = db},
                              .c = dc.matrix})
                   .wait()
                   .status();
  Entries result = c;
  const std::vector<T> values = download(device, dc.values);
  for (std::size_t p = 0; p < result.value.size(); ++p) result.value[p] = static_cast<double>(values[p]);
  out.out = result.dense();
  return out;
}

template <class T>
Reference sddmm_reference(const Entries& c, Transpose op_a, Transpose op_b, MatrixOrder order, std::int64_t k,
                          double alpha, double beta, const std::vector<T>& a, const std::vector<T>& b) {
  const bool ta = op_a == Transpose::transpose, tb = op_b == Transpose::transpose;
  const std::int64_t a_rows = ta ? k : c.rows, a_cols = ta ? c.rows : k;
  const std::int64_t b_rows = tb ? c.cols : k, b_cols = tb ? k : c.cols;
  Reference ra = to_reference(a, a_rows, a_cols, packed_ld(a_rows, a_cols, order), order);
  Reference rb = to_reference(b, b_rows, b_cols, packed_ld(b_rows, b_cols, order), order);
  if (ta) ra.transposeInPlace();
  if (tb) rb.transposeInPlace();
  const Reference product = ra * rb;
  Reference out = Reference::Zero(c.rows, c.cols);
  for (std::size_t p = 0; p < c.row.size(); ++p)
    out(c.row[p], c.col[p]) = alpha * product(c.row[p], c.col[p]) + beta * c.value[p];
  return out;
}

// A CSR result read back: its arrays, and its dense form.
template <class I>
struct Csr {
  Status count;  // of the counting request
  Status fill;   // of the filling request
  std::vector<I> offsets, indices;
  Reference dense;
};

template <class I, class T>
Reference dense_of(std::int64_t rows, std::int64_t cols, const std::vector<I>& offsets, const std::vector<I>& indices,
                   const std::vector<T>& values) {
  Reference out = Reference::Zero(rows, cols);
  for (std::int64_t i = 0; i < rows; ++i)
    for (I p = offsets[i]; p < offsets[i + 1]; ++p) out(i, indices[p]) += static_cast<double>(values[p]);
  return out;
}

// C = alpha A·B on `device`: SpGemmCount, then SpGemm into buffers of the counted nnz (`rounds` times, with new
// values of A scaled by the round, when `rounds` > 1: the result is that of the last).
template <class I, class T>
Csr<I> run_spgemm(Device& device, const Entries& a, const Entries& b, double alpha,
                  Structure structure = Structure::checked_each_use, int rounds = 1) {
  DeviceMatrix<I, T> da = upload_matrix<I, T>(device, a, Format::csr, structure);
  DeviceMatrix<I, T> db = upload_matrix<I, T>(device, b, Format::csr, structure);
  Buffer<I> offsets = upload(device, std::vector<I>(static_cast<std::size_t>(a.rows + 1)));
  Csr<I> out;
  out.count = device.ask(SpGemmCount{.a = da.matrix, .b = db.matrix, .c_offsets = offsets}).wait().status();
  if (!out.count.ok()) return out;
  out.offsets = download(device, offsets);
  const auto nnz = static_cast<std::size_t>(out.offsets.back());
  // As a caller makes them: new buffers of nnz entries, which a CUDA stream moves into its counted product.
  Buffer<I> indices = allocated<I>(device, nnz);
  Buffer<T> values = allocated<T>(device, nnz);
  const Matrix c{.index = dtype_of<I>(),
                 .dtype = dtype_of<T>(),
                 .rows = a.rows,
                 .cols = b.cols,
                 .nnz = static_cast<std::int64_t>(nnz),
                 .offsets = offsets,
                 .indices = indices,
                 .values = values};
  for (int round = 1; round <= rounds; ++round) {
    if (round > 1) {
      Entries scaled = a;
      for (double& v : scaled.value) v *= round;
      const std::vector<T> host = arrays<I, T>(scaled, Format::csr).values;
      EXPECT_THAT(device.upload(std::span<const T>(host), da.values).wait(), accel::testing::IsOk());
    }
    out.fill = device.ask(SpGemm{.alpha = alpha, .a = da.matrix, .b = db.matrix, .c = c}).wait().status();
    if (!out.fill.ok()) return out;
  }
  out.offsets = download(device, offsets);
  out.indices = download(device, indices);
  out.indices.resize(nnz);
  std::vector<T> host_values = download(device, values);
  out.dense = dense_of(a.rows, b.cols, out.offsets, out.indices, host_values);
  return out;
}

// The structure of A·B: for each row of A, the columns of the rows of B its entries name, sorted.
inline std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> product_structure(const Entries& a,
                                                                                         const Entries& b) {
  std::vector<std::set<std::int64_t>> b_rows(static_cast<std::size_t>(b.rows)),
      c_rows(static_cast<std::size_t>(a.rows));
  for (std::size_t p = 0; p < b.row.size(); ++p) b_rows[b.row[p]].insert(b.col[p]);
  for (std::size_t p = 0; p < a.row.size(); ++p)
    c_rows[a.row[p]].insert(b_rows[a.col[p]].begin(), b_rows[a.col[p]].end());
  std::vector<std::int64_t> offsets{0}, indices;
  for (const auto& row : c_rows) {
    indices.insert(indices.end(), row.begin(), row.end());
    offsets.push_back(static_cast<std::int64_t>(indices.size()));
  }
  return {offsets, indices};
}

template <class I>
std::vector<std::int64_t> widened(const std::vector<I>& v) {
  return {v.begin(), v.end()};
}

// The dense form of `e` as host data in `order`, then DenseToCsrCount and DenseToCsr on `device`.
template <class I, class T>
Csr<I> run_dense_to_csr(Device& device, const Entries& e, MatrixOrder order) {
  const Reference dense = e.dense();
  std::vector<T> host(static_cast<std::size_t>(std::max<std::int64_t>(e.rows * e.cols, 1)));
  const std::int64_t ld = packed_ld(e.rows, e.cols, order);
  for (std::int64_t i = 0; i < e.rows; ++i)
    for (std::int64_t j = 0; j < e.cols; ++j)
      host[order == MatrixOrder::column_major ? j * ld + i : i * ld + j] = static_cast<T>(dense(i, j));
  Buffer<T> a = upload(device, host);
  const DenseMatrix da{.order = order, .rows = e.rows, .cols = e.cols, .data = a};
  Buffer<I> offsets = upload(device, std::vector<I>(static_cast<std::size_t>(e.rows + 1)));
  Csr<I> out;
  out.count = device.ask(DenseToCsrCount{.a = da, .dtype = dtype_of<T>(), .index = dtype_of<I>(), .offsets = offsets})
                  .wait()
                  .status();
  if (!out.count.ok()) return out;
  const auto nnz = static_cast<std::size_t>(download(device, offsets).back());
  // As a caller makes them: new buffers of nnz entries, which a CUDA stream moves into its counted product.
  Buffer<I> indices = allocated<I>(device, nnz);
  Buffer<T> values = allocated<T>(device, nnz);
  out.fill = device
                 .ask(DenseToCsr{.a = da,
                                 .out = {.index = dtype_of<I>(),
                                         .dtype = dtype_of<T>(),
                                         .rows = e.rows,
                                         .cols = e.cols,
                                         .nnz = static_cast<std::int64_t>(nnz),
                                         .offsets = offsets,
                                         .indices = indices,
                                         .values = values}})
                 .wait()
                 .status();
  if (!out.fill.ok()) return out;
  out.offsets = download(device, offsets);
  out.indices = download(device, indices);
  out.indices.resize(nnz);
  out.dense = dense_of(e.rows, e.cols, out.offsets, out.indices, download(device, values));
  return out;
}

}  // namespace accel::sparse::testing
