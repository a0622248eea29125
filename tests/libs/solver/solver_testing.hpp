// What the solver tests share, on the CPU device and on CUDA: random inputs, a run of each factorisation and its
// solve on a device, and the residuals that check them in double precision (complex double for c64 and c128). A
// result is right when it reproduces its input (P A = L U, A = L Lᴴ, A V = V Λ, op(A) X = B): pivots and eigenvector
// signs may differ between libraries, residuals do not.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/libs/solver/dense.hpp"
#include "operation/complex_dtypes.hpp"
#include "testing/status_matchers.hpp"

namespace accel::solver::testing {

// Where a batch of column-major matrices lies: rows x cols, leading dimension ld, `stride` apart.
struct Layout {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t ld = 0;
  std::int64_t batch = 1;
  std::int64_t stride = 0;

  // Packed plus `pad` rows and `pad` elements between matrices.
  static Layout padded(std::int64_t rows, std::int64_t cols, std::int64_t batch, std::int64_t pad) {
    const std::int64_t ld = std::max<std::int64_t>(rows, 1) + pad;
    return {rows, cols, ld, batch, ld * cols + pad};
  }
  [[nodiscard]] std::size_t size() const {
    return static_cast<std::size_t>(std::max<std::int64_t>((batch - 1) * stride + ld * cols, 1));
  }
  [[nodiscard]] std::size_t at(std::int64_t b, std::int64_t i, std::int64_t j) const {
    return static_cast<std::size_t>(b * stride + j * ld + i);
  }
};

// The real type of an element (float of std::complex<float>; whether it is complex: accel::kComplex), and what the
// checks compute it in: double, or std::complex<double>.
template <class T>
using Real = part_t<T>;
template <class T>
using Wide = std::conditional_t<kComplex<T>, std::complex<double>, double>;

// The conjugate, which std::conj would make complex for a real argument.
template <class S>
S conjugate(S v) {
  if constexpr (kComplex<S>) {
    return std::conj(v);
  } else {
    return v;
  }
}

// A matrix in double, column-major and packed; complex ones in std::complex<double>.
using Dense = std::vector<double>;

template <class T>
std::vector<Wide<T>> matrix(const std::vector<T>& data, const Layout& l, std::int64_t b) {
  std::vector<Wide<T>> out(static_cast<std::size_t>(l.rows * l.cols));
  for (std::int64_t j = 0; j < l.cols; ++j)
    for (std::int64_t i = 0; i < l.rows; ++i) out[j * l.rows + i] = static_cast<Wide<T>>(data[l.at(b, i, j)]);
  return out;
}

template <class T>
double tolerance(std::int64_t n) {
  return 30.0 * static_cast<double>(std::max<std::int64_t>(n, 1)) * std::numeric_limits<Real<T>>::epsilon();
}

// Uniform in [-1, 1] (each part, for complex elements), padding included (what lies there must survive untouched;
// the tests check the matrices).
template <class T>
std::vector<T> random_matrices(const Layout& l, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<T> out(l.size());
  for (T& v : out) {
    if constexpr (kComplex<T>) {
      const double re = uniform(rng);
      v = T(static_cast<Real<T>>(re), static_cast<Real<T>>(uniform(rng)));
    } else {
      v = static_cast<T>(uniform(rng));
    }
  }
  return out;
}

// Random matrices with 2n added to the diagonal: strictly diagonally dominant (each row's other n - 1 elements are
// at most √2 each), so well conditioned, with no pivoting needed.
template <class T>
std::vector<T> random_dominant(const Layout& l, std::mt19937_64& rng) {
  std::vector<T> out = random_matrices<T>(l, rng);
  for (std::int64_t b = 0; b < l.batch; ++b)
    for (std::int64_t i = 0; i < l.rows; ++i) out[l.at(b, i, i)] += static_cast<Real<T>>(2 * l.rows);
  return out;
}

// Symmetric (Hermitian for complex, both triangles, a real diagonal), or positive definite as well: M Mᴴ / n + I (the
// issue's B Bᴴ + n I scaled by 1/n), well conditioned.
template <class T>
std::vector<T> random_symmetric(const Layout& l, std::mt19937_64& rng, bool positive_definite) {
  std::vector<T> out = random_matrices<T>(l, rng);
  const std::int64_t n = l.rows;
  for (std::int64_t b = 0; b < l.batch; ++b) {
    const std::vector<Wide<T>> m = matrix(out, l, b);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i <= j; ++i) {
        Wide<T> v = m[j * n + i];
        if (positive_definite) {
          v = i == j ? 1.0 : 0.0;
          for (std::int64_t p = 0; p < n; ++p) v += m[p * n + i] * conjugate(m[p * n + j]) / static_cast<double>(n);
        }
        if (i == j) v = std::real(v);
        out[l.at(b, i, j)] = static_cast<T>(v);
        out[l.at(b, j, i)] = static_cast<T>(conjugate(v));
      }
  }
  return out;
}

template <class S>
double norm(const std::vector<S>& a) {
  double sum = 0;
  for (const S& v : a) sum += std::norm(v);
  return std::sqrt(sum);
}

// ‖P A − L U‖ / ‖A‖ for LAPACK's packed factors and 1-based pivots.
template <class S>
double lu_residual(std::vector<S> a, const std::vector<S>& lu, const std::int32_t* ipiv, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t p = ipiv[i] - 1;
    if (p < i || p >= n) return INFINITY;
    for (std::int64_t j = 0; j < n; ++j) std::swap(a[j * n + i], a[j * n + p]);
  }
  std::vector<S> diff = a;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) {
      S sum = 0;
      for (std::int64_t p = 0; p <= std::min(i, j); ++p) sum += (p == i ? S(1) : lu[p * n + i]) * lu[j * n + p];
      diff[j * n + i] -= sum;
    }
  return norm(diff) / std::max(norm(a), 1e-300);
}

// ‖A − L Lᴴ‖ / ‖A‖ (lower) or ‖A − Uᴴ U‖ / ‖A‖ (upper; L = Uᴴ), reading only the factor's triangle (ᴴ is ᵀ for real
// matrices).
template <class S>
double cholesky_residual(const std::vector<S>& a, const std::vector<S>& f, std::int64_t n, Fill fill) {
  auto l = [&](std::int64_t i, std::int64_t j) {  // L(i, j), i >= j
    return fill == Fill::lower ? f[j * n + i] : conjugate(f[i * n + j]);
  };
  std::vector<S> diff = a;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) {
      S sum = 0;
      for (std::int64_t p = 0; p <= std::min(i, j); ++p) sum += l(i, p) * conjugate(l(j, p));
      diff[j * n + i] -= sum;
    }
  return norm(diff) / std::max(norm(a), 1e-300);
}

// max(‖A V − V Λ‖ / ‖A‖, ‖Vᴴ V − I‖ / √n), and whether the values ascend.
template <class S>
double eigen_residual(const std::vector<S>& a, const std::vector<S>& v, const Dense& w, std::int64_t n) {
  for (std::int64_t i = 1; i < n; ++i)
    if (w[i] < w[i - 1]) return INFINITY;
  std::vector<S> av(static_cast<std::size_t>(n * n)), gram(static_cast<std::size_t>(n * n));
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) {
      S sum = -v[j * n + i] * w[j], dot = i == j ? -1.0 : 0.0;
      for (std::int64_t p = 0; p < n; ++p) {
        sum += a[p * n + i] * v[j * n + p];
        dot += conjugate(v[i * n + p]) * v[j * n + p];
      }
      av[j * n + i] = sum;
      gram[j * n + i] = dot;
    }
  return std::max(norm(av) / std::max(norm(a), 1e-300), norm(gram) / std::sqrt(std::max<double>(n, 1)));
}

// ‖op(A) X − B‖ / (‖A‖ ‖X‖ + ‖B‖): the solve's backward error, whatever A's condition. op(A) is A or Aᵀ (not
// conjugated, for complex A too).
template <class S>
double solve_residual(const std::vector<S>& a, const std::vector<S>& x, const std::vector<S>& b, std::int64_t n,
                      std::int64_t nrhs, bool transpose) {
  std::vector<S> diff = b;
  for (std::int64_t j = 0; j < nrhs; ++j)
    for (std::int64_t i = 0; i < n; ++i) {
      S sum = 0;
      for (std::int64_t p = 0; p < n; ++p) sum += (transpose ? a[i * n + p] : a[p * n + i]) * x[j * n + p];
      diff[j * n + i] -= sum;
    }
  return norm(diff) / std::max(norm(a) * norm(x) + norm(b), 1e-300);
}

// ‖Qᴴ Q − I‖ / √cols for a rows x cols Q.
template <class S>
double orthonormality(const std::vector<S>& q, std::int64_t rows, std::int64_t cols) {
  std::vector<S> gram(static_cast<std::size_t>(cols * cols));
  for (std::int64_t j = 0; j < cols; ++j)
    for (std::int64_t i = 0; i < cols; ++i) {
      S dot = i == j ? -1.0 : 0.0;
      for (std::int64_t p = 0; p < rows; ++p) dot += conjugate(q[i * rows + p]) * q[j * rows + p];
      gram[j * cols + i] = dot;
    }
  return norm(gram) / std::sqrt(std::max<double>(cols, 1));
}

// max(‖A − Q R‖ / ‖A‖, orthonormality of Q) for m x n A, m x k Q and the k x n upper trapezoid of `r` (m x n, as
// Geqrf left it).
template <class S>
double qr_residual(const std::vector<S>& a, const std::vector<S>& q, const std::vector<S>& r, std::int64_t m,
                   std::int64_t n, std::int64_t k) {
  std::vector<S> diff = a;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t p = 0; p <= std::min(j, k - 1); ++p) diff[j * m + i] -= q[p * m + i] * r[j * m + p];
  return std::max(norm(diff) / std::max(norm(a), 1e-300), orthonormality(q, m, k));
}

// ‖A − U Σ Vᵀ‖ / ‖A‖ for m x n A, U of at least k = min(m, n) columns, and Vᵀ (Vᴴ, for complex A) of v_rows >= k
// rows.
template <class S>
double svd_reconstruction(const std::vector<S>& a, const std::vector<S>& u, const Dense& s, const std::vector<S>& vt,
                          std::int64_t m, std::int64_t n, std::int64_t v_rows) {
  const std::int64_t k = std::min(m, n);
  std::vector<S> diff = a;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t p = 0; p < k; ++p) diff[j * m + i] -= u[p * m + i] * s[p] * vt[j * v_rows + p];
  return norm(diff) / std::max(norm(a), 1e-300);
}

// max(‖A − U Σ Vᵀ‖ / ‖A‖, orthonormality of U's columns and Vᵀ's rows) for m x n A, m x u_cols U, v_rows x n Vᵀ
// (Vᴴ for complex A; both at least k = min(m, n)), and whether the values are non-negative and descend.
template <class S>
double svd_residual(const std::vector<S>& a, const std::vector<S>& u, const Dense& s, const std::vector<S>& vt,
                    std::int64_t m, std::int64_t n, std::int64_t u_cols, std::int64_t v_rows) {
  const std::int64_t k = std::min(m, n);
  for (std::int64_t i = 0; i < k; ++i)
    if (s[i] < 0 || (i > 0 && s[i] > s[i - 1])) return INFINITY;
  std::vector<S> v(static_cast<std::size_t>(n * v_rows));
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < v_rows; ++i) v[i * n + j] = conjugate(vt[j * v_rows + i]);
  return std::max(
      {svd_reconstruction(a, u, s, vt, m, n, v_rows), orthonormality(u, m, u_cols), orthonormality(v, n, v_rows)});
}

template <class T>
Buffer<T> upload(Device& device, const std::vector<T>& host) {
  Result<Buffer<T>> buffer = device.allocate<T>(host.size()).wait();
  EXPECT_THAT(buffer, accel::testing::IsOk());
  if (!buffer.ok()) return {};
  EXPECT_THAT(device.upload(std::span<const T>(host), *buffer).wait(), accel::testing::IsOk());
  return *buffer;
}

template <class T>
std::vector<T> download(Device& device, const Buffer<T>& buffer) {
  std::vector<T> host(buffer.size());
  EXPECT_THAT(device.download(buffer, std::span<T>(host)).wait(), accel::testing::IsOk());
  return host;
}

}  // namespace accel::solver::testing
