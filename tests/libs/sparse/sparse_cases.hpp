// Runs of the sparse requests on a device against references in double that share no code with the CPU device's
// Eigen sparse module (a loop over the entries for SpMV, Eigen's dense module otherwise): what the CPU test asserts
// on the CPU device and the GPU test on CUDA devices, beside the CPU's results.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <type_traits>

#include "sparse_testing.hpp"

namespace accel::sparse::testing {

template <class T>
double tolerance(std::int64_t terms) {
  const double eps =
      std::is_same_v<T, float> ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
  return 8.0 * eps * std::sqrt(static_cast<double>(std::max<std::int64_t>(terms, 1)));
}

struct Outcome {
  Status status;
  Reference out;
};

// y = alpha op(A) x + beta y on `device`.
template <class I, class T>
Outcome run_spmv(Device& device, const Entries& e, Format format, Transpose op, double alpha, double beta,
                 const std::vector<T>& x, const std::vector<T>& y, Structure structure = Structure::checked_each_use) {
  DeviceMatrix<I, T> a = upload_matrix<I, T>(device, e, format, structure);
  Buffer<T> dx = upload(device, x), dy = upload(device, y);
  Outcome out;
  out.status =
      device.ask(SpMV{.op = op, .alpha = alpha, .beta = beta, .a = a.matrix, .x = dx, .y = dy}).wait().status();
  const std::vector<T> result = download(device, dy);
  out.out = to_reference(result, static_cast<std::int64_t>(y.size()), 1, static_cast<std::int64_t>(y.size()),
                         MatrixOrder::column_major);
  return out;
}

// alpha op(A) x + beta y as one column, summed entry by entry in double (a plain loop over the entries, not Eigen's
// sparse product, which is the CPU device's own path; nor a dense op(A), which for a hub test's matrices would take
// billions of cells). With `magnitude`, |alpha| |op(A)| |x| + |beta| |y| instead: what rounding scales with.
template <class T>
Reference spmv_loop(const Entries& e, Transpose op, double alpha, double beta, const std::vector<T>& x,
                    const std::vector<T>& y, bool magnitude) {
  const bool transposed = op != Transpose::none;
  const auto size = static_cast<Eigen::Index>(y.size());
  Reference out = Reference::Zero(size, 1);
  auto measure = [&](double v) { return magnitude ? std::abs(v) : v; };
  for (std::size_t p = 0; p < e.row.size(); ++p) {
    const std::int64_t r = transposed ? e.col[p] : e.row[p], c = transposed ? e.row[p] : e.col[p];
    out(r, 0) += measure(e.value[p]) * measure(to_double(x[static_cast<std::size_t>(c)]));
  }
  for (Eigen::Index i = 0; i < size; ++i) {
    out(i, 0) = measure(alpha) * out(i, 0) + measure(beta) * measure(to_double(y[static_cast<std::size_t>(i)]));
  }
  return out;
}

template <class T>
Reference spmv_reference(const Entries& e, Transpose op, double alpha, double beta, const std::vector<T>& x,
                         const std::vector<T>& y) {
  return spmv_loop(e, op, alpha, beta, x, y, /*magnitude=*/false);
}

// The error of `out` against spmv_reference, relative to |alpha| |op(A)| |x| + |beta| |y|: what rounding scales
// with, so that a result that cancels to near zero (a 1 x 1 case with beta y ~ -alpha a x) is not held to the
// precision of its own tiny size. Infinite when an output is not finite.
template <class T>
double spmv_error(const Reference& out, const Entries& e, Transpose op, double alpha, double beta,
                  const std::vector<T>& x, const std::vector<T>& y) {
  if (!out.allFinite()) return INFINITY;
  const Reference magnitude = spmv_loop(e, op, alpha, beta, x, y, /*magnitude=*/true);
  return (out - spmv_reference(e, op, alpha, beta, x, y)).norm() / std::max(magnitude.norm(), 1e-30);
}

// C = alpha op(A) op(B) + beta C, B and C in `order`; n columns of C.
template <class I, class T>
Outcome run_spmm(Device& device, const Entries& e, Format format, Transpose op_a, Transpose op_b, MatrixOrder order,
                 std::int64_t n, double alpha, double beta, const std::vector<T>& b, const std::vector<T>& c) {
  DeviceMatrix<I, T> a = upload_matrix<I, T>(device, e, format);
  const std::int64_t m = op_a == Transpose::none ? e.rows : e.cols, k = op_a == Transpose::none ? e.cols : e.rows;
  const std::int64_t b_rows = op_b == Transpose::none ? k : n, b_cols = op_b == Transpose::none ? n : k;
  Buffer<T> db = upload(device, b), dc = upload(device, c);
  Outcome out;
  out.status = device
                   .ask(SpMM{.op_a = op_a,
                             .op_b = op_b,
                             .alpha = alpha,
                             .beta = beta,
                             .a = a.matrix,
                             .b = {.order = order, .rows = b_rows, .cols = b_cols, .data = db},
                             .c = {.order = order, .rows = m, .cols = n, .data = dc}})
                   .wait()
                   .status();
  out.out = to_reference(download(device, dc), m, n, order == MatrixOrder::column_major ? m : n, order);
  return out;
}

template <class T>
Reference spmm_reference(const Entries& e, Transpose op_a, Transpose op_b, MatrixOrder order, std::int64_t n,
                         double alpha, double beta, const std::vector<T>& b, const std::vector<T>& c) {
  const Reference a = op_a == Transpose::none ? e.dense() : Reference(e.dense().transpose());
  const std::int64_t m = a.rows(), k = a.cols();
  const std::int64_t b_rows = op_b == Transpose::none ? k : n, b_cols = op_b == Transpose::none ? n : k;
  const Reference rb = to_reference(b, b_rows, b_cols, order == MatrixOrder::column_major ? b_rows : b_cols, order);
  const Reference rc = to_reference(c, m, n, order == MatrixOrder::column_major ? m : n, order);
  return alpha * a * (op_b == Transpose::none ? rb : Reference(rb.transpose())) + beta * rc;
}

// op(A) y = alpha x on `device`, A's `fill` triangle read.
template <class I, class T>
Outcome run_spsv(Device& device, const Entries& e, Transpose op, Fill fill, Diagonal diagonal, double alpha,
                 const std::vector<T>& x, Structure structure = Structure::checked_each_use) {
  DeviceMatrix<I, T> a = upload_matrix<I, T>(device, e, Format::csr, structure);
  Buffer<T> dx = upload(device, x), dy = upload(device, std::vector<T>(x.size()));
  Outcome out;
  out.status =
      device.ask(SpSV{.op = op, .fill = fill, .diagonal = diagonal, .alpha = alpha, .a = a.matrix, .x = dx, .y = dy})
          .wait()
          .status();
  const auto n = static_cast<std::int64_t>(x.size());
  out.out = to_reference(download(device, dy), n, 1, n, MatrixOrder::column_major);
  return out;
}

template <class T>
Reference spsv_reference(const Entries& e, Transpose op, Fill fill, Diagonal diagonal, double alpha,
                         const std::vector<T>& x) {
  Reference a = e.dense();
  a = fill == Fill::lower ? Reference(a.triangularView<Eigen::Lower>()) : Reference(a.triangularView<Eigen::Upper>());
  if (diagonal == Diagonal::unit) a.diagonal().setOnes();
  if (op == Transpose::transpose) a.transposeInPlace();
  const auto n = static_cast<std::int64_t>(x.size());
  return a.lu().solve(alpha * to_reference(x, n, 1, n, MatrixOrder::column_major));
}

}  // namespace accel::sparse::testing
