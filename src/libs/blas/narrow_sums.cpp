// EightSums' chunk sums (narrow_floats.hpp): term k goes to sum k % 8, written as eight lanes a step so that the
// compiler keeps the eight sums in vector registers (one AVX-512 register of doubles, two of AVX2); the same additions
// in the same order as one term at a time.
#include <cmath>
#include <cstdint>

#include "core/vector_versions.hpp"
#include "libs/blas/narrow_floats.hpp"

namespace accel::blas {
namespace {

// Adds term(k) to sum k % 8 for k < n.
template <class Term>
ACCEL_VECTOR_BODY void add_terms(EightSums& sums, std::int64_t n, Term term) {
  double lanes[8];
  for (int j = 0; j < 8; ++j) lanes[j] = sums.sums[j];
  std::int64_t k = 0;
  for (; k + 8 <= n; k += 8)
    for (int j = 0; j < 8; ++j) lanes[j] += term(k + j);
  for (int j = 0; k + j < n; ++j) lanes[j] += term(k + j);
  for (int j = 0; j < 8; ++j) sums.sums[j] = lanes[j];
}

ACCEL_VECTOR_BODY void add_products_body(EightSums& sums, const float* x, const float* y, std::int64_t n) {
  add_terms(sums, n, [&](std::int64_t k) { return static_cast<double>(x[k]) * y[k]; });
}

ACCEL_VECTOR_BODY void add_squares_body(EightSums& sums, const float* x, std::int64_t n) {
  add_terms(sums, n, [&](std::int64_t k) { return static_cast<double>(x[k]) * x[k]; });
}

ACCEL_VECTOR_BODY void add_magnitudes_body(EightSums& sums, const float* x, std::int64_t n) {
  add_terms(sums, n, [&](std::int64_t k) { return static_cast<double>(std::fabs(x[k])); });
}

}  // namespace

void add_products(EightSums& sums, const float* x, const float* y, std::int64_t n) {
  detail::at_cpu_vector_width<add_products_body>(sums, x, y, n);
}

void add_squares(EightSums& sums, const float* x, std::int64_t n) {
  detail::at_cpu_vector_width<add_squares_body>(sums, x, n);
}

void add_magnitudes(EightSums& sums, const float* x, std::int64_t n) {
  detail::at_cpu_vector_width<add_magnitudes_body>(sums, x, n);
}

}  // namespace accel::blas
