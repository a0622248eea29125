// Runs of the solver requests on a device, checked by their residuals (solver_testing.hpp): what the CPU test
// asserts on the CPU device and the GPU test on CUDA devices, in process and isolated, beside the CPU's.
#pragma once

#include <cmath>
#include <vector>

#include "solver_testing.hpp"

namespace accel::solver::testing {

// The elements as doubles, for relative_error: a complex element as its real and imaginary parts, which leaves the
// norms it compares as they are.
template <class T>
std::vector<double> doubles(const std::vector<T>& v) {
  if constexpr (kComplex<T>) {
    std::vector<double> out;
    out.reserve(2 * v.size());
    for (const T& z : v) {
      out.push_back(z.real());
      out.push_back(z.imag());
    }
    return out;
  } else {
    return {v.begin(), v.end()};
  }
}

// Whether every element of `after` outside the matrices of `l` is as in `before`.
template <class T>
bool padding_intact(const std::vector<T>& before, const std::vector<T>& after, const Layout& l) {
  std::vector<bool> inside(before.size(), false);
  for (std::int64_t b = 0; b < l.batch; ++b)
    for (std::int64_t j = 0; j < l.cols; ++j)
      for (std::int64_t i = 0; i < l.rows; ++i) inside[l.at(b, i, j)] = true;
  for (std::size_t i = 0; i < before.size(); ++i)
    if (!inside[i] && before[i] != after[i]) return false;
  return true;
}

// The largest residual of the batch.
template <class F>
double worst(std::int64_t batch, F&& residual) {
  double out = 0;
  for (std::int64_t b = 0; b < batch; ++b) {
    const double r = residual(b);
    out = std::isnan(r) ? INFINITY : std::max(out, r);
  }
  return out;
}

template <class T>
struct FactorResult {
  Status factor;
  Status solve;  // OK and not run when the factorisation failed
  double factor_residual = INFINITY;
  double solve_residual = INFINITY;
  bool padding_intact = false;
  bool other_triangle_intact = true;  // Cholesky's: the triangle that `fill` does not name, as it was
  std::vector<std::int32_t> info;
  std::vector<T> x;
};

// A factorisation and its solve that both succeeded on one device: their residuals within tolerance<T>(n) and
// nothing written outside the matrices. A failed one is fatal to this check only: callers wrap it in
// ASSERT_NO_FATAL_FAILURE to stop there too.
template <class T>
void expect_factored_and_solved(const FactorResult<T>& r, std::int64_t n) {
  ASSERT_THAT(r.factor, accel::testing::IsOk());
  ASSERT_THAT(r.solve, accel::testing::IsOk());
  EXPECT_LE(r.factor_residual, tolerance<T>(n));
  EXPECT_LE(r.solve_residual, tolerance<T>(n));
  EXPECT_TRUE(r.padding_intact);
}

// Getrf of the batch `a`, then (if it succeeded) Getrs of `b` with its factors.
template <class T>
FactorResult<T> run_lu(Device& device, const Layout& la, const std::vector<T>& a, const Layout& lb,
                       const std::vector<T>& b, Transpose transpose = Transpose::none) {
  FactorResult<T> out;
  const std::int64_t n = la.rows;
  Buffer<T> da = upload(device, a), db = upload(device, b);
  Buffer<std::int32_t> ipiv = upload(device, std::vector<std::int32_t>(static_cast<std::size_t>(n * la.batch + 1)));
  Buffer<std::int32_t> info = upload(device, std::vector<std::int32_t>(static_cast<std::size_t>(la.batch), -7));
  out.factor = device
                   .ask(Getrf{.dtype = dtype_of<T>(),
                              .n = n,
                              .lda = la.ld,
                              .batch = la.batch,
                              .stride_a = la.stride,
                              .a = da,
                              .ipiv = ipiv,
                              .info = info})
                   .wait()
                   .status();
  out.info = download(device, info);
  const std::vector<T> lu = download(device, da);
  const std::vector<std::int32_t> pivots = download(device, ipiv);
  out.padding_intact = padding_intact(a, lu, la);
  if (!out.factor.ok()) return out;
  out.factor_residual = worst(la.batch, [&](std::int64_t i) {
    return lu_residual(matrix(a, la, i), matrix(lu, la, i), pivots.data() + i * n, n);
  });
  out.solve = device
                  .ask(Getrs{.dtype = dtype_of<T>(),
                             .transpose = transpose,
                             .n = n,
                             .nrhs = lb.cols,
                             .lda = la.ld,
                             .ldb = lb.ld,
                             .batch = la.batch,
                             .stride_a = la.stride,
                             .stride_b = lb.stride,
                             .a = da,
                             .ipiv = ipiv,
                             .b = db})
                  .wait()
                  .status();
  out.x = download(device, db);
  out.padding_intact = out.padding_intact && padding_intact(b, out.x, lb);
  out.solve_residual = worst(la.batch, [&](std::int64_t i) {
    return solve_residual(matrix(a, la, i), matrix(out.x, lb, i), matrix(b, lb, i), n, lb.cols,
                          transpose == Transpose::transpose);
  });
  return out;
}

// Potrf of the batch `a`, then (if it succeeded) Potrs of `b` with its factor.
template <class T>
FactorResult<T> run_cholesky(Device& device, Fill fill, const Layout& la, const std::vector<T>& a, const Layout& lb,
                             const std::vector<T>& b) {
  FactorResult<T> out;
  const std::int64_t n = la.rows;
  Buffer<T> da = upload(device, a), db = upload(device, b);
  Buffer<std::int32_t> info = upload(device, std::vector<std::int32_t>(static_cast<std::size_t>(la.batch), -7));
  out.factor = device
                   .ask(Potrf{.dtype = dtype_of<T>(),
                              .fill = fill,
                              .n = n,
                              .lda = la.ld,
                              .batch = la.batch,
                              .stride_a = la.stride,
                              .a = da,
                              .info = info})
                   .wait()
                   .status();
  out.info = download(device, info);
  const std::vector<T> f = download(device, da);
  out.padding_intact = padding_intact(a, f, la);
  for (std::int64_t m = 0; m < la.batch; ++m)
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i) {
        const bool other = fill == Fill::lower ? i < j : i > j;
        if (other && f[la.at(m, i, j)] != a[la.at(m, i, j)]) out.other_triangle_intact = false;
      }
  if (!out.factor.ok()) return out;
  out.factor_residual =
      worst(la.batch, [&](std::int64_t i) { return cholesky_residual(matrix(a, la, i), matrix(f, la, i), n, fill); });
  out.solve = device
                  .ask(Potrs{.dtype = dtype_of<T>(),
                             .fill = fill,
                             .n = n,
                             .nrhs = lb.cols,
                             .lda = la.ld,
                             .ldb = lb.ld,
                             .batch = la.batch,
                             .stride_a = la.stride,
                             .stride_b = lb.stride,
                             .a = da,
                             .b = db})
                  .wait()
                  .status();
  out.x = download(device, db);
  out.padding_intact = out.padding_intact && padding_intact(b, out.x, lb);
  out.solve_residual = worst(la.batch, [&](std::int64_t i) {
    return solve_residual(matrix(a, la, i), matrix(out.x, lb, i), matrix(b, lb, i), n, lb.cols, false);
  });
  return out;
}

template <class T>
struct EigenResult {
  Status status;
  double residual = INFINITY;  // of the vectors, when asked for
  bool padding_intact = false;
  std::vector<Real<T>> w;  // real, of a Hermitian matrix too
  std::vector<std::int32_t> info;
};

template <class T>
EigenResult<T> run_eigen(Device& device, EigenJob job, Fill fill, const Layout& la, const std::vector<T>& a) {
  EigenResult<T> out;
  const std::int64_t n = la.rows;
  Buffer<T> da = upload(device, a);
  Buffer<Real<T>> w = upload(device, std::vector<Real<T>>(static_cast<std::size_t>(n * la.batch + 1)));
  Buffer<std::int32_t> info = upload(device, std::vector<std::int32_t>(static_cast<std::size_t>(la.batch), -7));
  out.status = device
                   .ask(Syevd{.dtype = dtype_of<T>(),
                              .job = job,
                              .fill = fill,
                              .n = n,
                              .lda = la.ld,
                              .batch = la.batch,
                              .stride_a = la.stride,
                              .a = da,
                              .w = w,
                              .info = info})
                   .wait()
                   .status();
  out.info = download(device, info);
  out.w = download(device, w);
  const std::vector<T> v = download(device, da);
  out.padding_intact = padding_intact(a, v, la);
  if (!out.status.ok() || job == EigenJob::values) return out;
  const Layout lw{.rows = n, .cols = 1, .ld = std::max<std::int64_t>(n, 1), .batch = la.batch, .stride = n};
  out.residual = worst(la.batch, [&](std::int64_t i) {
    return eigen_residual(matrix(a, la, i), matrix(v, la, i), matrix(out.w, lw, i), n);
  });
  return out;
}

template <class T>
struct DecompositionResult {
  Status first;   // Geqrf, or Gesvd
  Status second;  // Orgqr; OK and not run when the first failed, or for an SVD
  double residual = INFINITY;
  double reconstruction = INFINITY;    // ‖A − U Σ Vᵀ‖ / ‖A‖ alone, of a Gesvdj
  double v_orthonormality = INFINITY;  // of a Gesvdj's V
  bool padding_intact = false;
  std::vector<Real<T>> values;  // the singular values
  std::vector<T> factors;       // A as a Geqrf left it
  std::vector<T> tau;           // a Geqrf's scalars
  std::vector<T> q;             // the buffer after the Orgqr
  std::vector<std::int32_t> info;
};

// Geqrf of the batch `a`, then Orgqr of its min(m, n) reflectors into Q (m x min(m, n)) in the same buffer.
template <class T>
DecompositionResult<T> run_qr(Device& device, const Layout& la, const std::vector<T>& a) {
  DecompositionResult<T> out;
  const std::int64_t m = la.rows, n = la.cols, k = std::min(m, n);
  Buffer<T> da = upload(device, a), tau = upload(device, std::vector<T>(static_cast<std::size_t>(k * la.batch + 1)));
  out.first = device
                  .ask(Geqrf{.dtype = dtype_of<T>(),
                             .m = m,
                             .n = n,
                             .lda = la.ld,
                             .batch = la.batch,
                             .stride_a = la.stride,
                             .a = da,
                             .tau = tau})
                  .wait()
                  .status();
  const std::vector<T> r = download(device, da);
  out.padding_intact = padding_intact(a, r, la);
  if (!out.first.ok()) return out;
  out.factors = r;
  out.tau = download(device, tau);
  out.second = device
                   .ask(Orgqr{.dtype = dtype_of<T>(),
                              .m = m,
                              .n = k,
                              .k = k,
                              .lda = la.ld,
                              .batch = la.batch,
                              .stride_a = la.stride,
                              .a = da,
                              .tau = tau})
                   .wait()
                   .status();
  const std::vector<T> q = download(device, da);
  out.padding_intact = out.padding_intact && padding_intact(a, q, la);
  out.q = q;
  const Layout lq{.rows = m, .cols = k, .ld = la.ld, .batch = la.batch, .stride = la.stride};
  out.residual = worst(la.batch, [&](std::int64_t i) {
    return qr_residual(matrix(a, la, i), matrix(q, lq, i), matrix(r, la, i), m, n, k);
  });
  return out;
}

// Gesvd of the batch `a`, with U and Vᵀ when asked (padded by one row and one element between matrices).
template <class T>
DecompositionResult<T> run_svd(Device& device, SvdJob job_u, SvdJob job_vt, const Layout& la, const std::vector<T>& a) {
  DecompositionResult<T> out;
  const std::int64_t m = la.rows, n = la.cols, k = std::min(m, n);
  const std::int64_t u_cols = job_u == SvdJob::full ? m : k, v_rows = job_vt == SvdJob::full ? n : k;
  const Layout lu = Layout::padded(m, u_cols, la.batch, 1), lv = Layout::padded(v_rows, n, la.batch, 1);
  const std::vector<T> u0(lu.size(), T(7)), v0(lv.size(), T(7));
  Buffer<T> da = upload(device, a);
  Buffer<Real<T>> s = upload(device, std::vector<Real<T>>(static_cast<std::size_t>(k * la.batch + 1)));
  Buffer<T> du = upload(device, u0), dv = upload(device, v0);
  Buffer<std::int32_t> info = upload(device, std::vector<std::int32_t>(static_cast<std::size_t>(la.batch), -7));
  Gesvd request{.dtype = dtype_of<T>(),
                .job_u = job_u,
                .job_vt = job_vt,
                .m = m,
                .n = n,
                .lda = la.ld,
                .ldu = lu.ld,
                .ldvt = lv.ld,
                .batch = la.batch,
                .stride_a = la.stride,
                .stride_u = lu.stride,
                .stride_vt = lv.stride,
                .a = da,
                .s = s,
                .info = info};
  if (job_u != SvdJob::none) request.u = du;
  if (job_vt != SvdJob::none) request.vt = dv;
  out.first = device.ask(request).wait().status();
  out.info = download(device, info);
  out.values = download(device, s);
  const std::vector<T> u = download(device, du), vt = download(device, dv);
  out.padding_intact = padding_intact(u0, u, lu) && padding_intact(v0, vt, lv);
  if (!out.first.ok() || job_u == SvdJob::none || job_vt == SvdJob::none) return out;
  const Layout ls{.rows = k, .cols = 1, .ld = std::max<std::int64_t>(k, 1), .batch = la.batch, .stride = k};
  out.residual = worst(la.batch, [&](std::int64_t i) {
    return svd_residual(matrix(a, la, i), matrix(u, lu, i), matrix(out.values, ls, i), matrix(vt, lv, i), m, n, u_cols,
                        v_rows);
  });
  return out;
}

// How a Gesvdj is asked: its job and stopping rule, and the padding of U and V (rows, and elements between
// matrices; 0 packs them, as gesvdjBatched takes them).
struct JacobiCase {
  SvdJob job = SvdJob::thin;
  std::int32_t max_sweeps = 100;
  double tolerance = 0;
  std::int64_t pad = 1;
};

// Gesvdj of the batch `a`; the residual of A = U Σ Vᴴ with V conjugated and transposed, when the vectors were asked
// for.
template <class T>
DecompositionResult<T> run_gesvdj(Device& device, const Layout& la, const std::vector<T>& a, const JacobiCase& c = {}) {
  DecompositionResult<T> out;
  const std::int64_t m = la.rows, n = la.cols, k = std::min(m, n);
  const std::int64_t u_cols = c.job == SvdJob::full ? m : k, v_cols = c.job == SvdJob::full ? n : k;
  const Layout lu = Layout::padded(m, u_cols, la.batch, c.pad), lv = Layout::padded(n, v_cols, la.batch, c.pad);
  const std::vector<T> u0(lu.size(), T(7)), v0(lv.size(), T(7));
  Buffer<T> da = upload(device, a);
  Buffer<Real<T>> s = upload(device, std::vector<Real<T>>(static_cast<std::size_t>(k * la.batch + 1)));
  Buffer<T> du = upload(device, u0), dv = upload(device, v0);
  Buffer<std::int32_t> info = upload(device, std::vector<std::int32_t>(static_cast<std::size_t>(la.batch), -7));
  Gesvdj request{.dtype = dtype_of<T>(),
                 .job = c.job,
                 .max_sweeps = c.max_sweeps,
                 .tolerance = c.tolerance,
                 .m = m,
                 .n = n,
                 .lda = la.ld,
                 .ldu = lu.ld,
                 .ldv = lv.ld,
                 .batch = la.batch,
                 .stride_a = la.stride,
                 .stride_u = lu.stride,
                 .stride_v = lv.stride,
                 .a = da,
                 .s = s,
                 .info = info};
  if (c.job != SvdJob::none) {
    request.u = du;
    request.v = dv;
  }
  out.first = device.ask(request).wait().status();
  out.info = download(device, info);
  out.values = download(device, s);
  const std::vector<T> u = download(device, du), v = download(device, dv);
  out.padding_intact = padding_intact(u0, u, lu) && padding_intact(v0, v, lv);
  if (!out.first.ok() || c.job == SvdJob::none) return out;
  const Layout ls{.rows = k, .cols = 1, .ld = std::max<std::int64_t>(k, 1), .batch = la.batch, .stride = k};
  auto vt = [&](std::int64_t i) {  // Vᴴ
    const std::vector<Wide<T>> vi = matrix(v, lv, i);
    std::vector<Wide<T>> t(vi.size());
    for (std::int64_t col = 0; col < v_cols; ++col)
      for (std::int64_t row = 0; row < n; ++row) t[row * v_cols + col] = conjugate(vi[col * n + row]);
    return t;
  };
  out.residual = worst(la.batch, [&](std::int64_t i) {
    return svd_residual(matrix(a, la, i), matrix(u, lu, i), matrix(out.values, ls, i), vt(i), m, n, u_cols, v_cols);
  });
  out.reconstruction = worst(la.batch, [&](std::int64_t i) {
    return svd_reconstruction(matrix(a, la, i), matrix(u, lu, i), matrix(out.values, ls, i), vt(i), m, n, v_cols);
  });
  out.v_orthonormality = worst(la.batch, [&](std::int64_t i) { return orthonormality(matrix(v, lv, i), n, v_cols); });
  return out;
}

}  // namespace accel::solver::testing
