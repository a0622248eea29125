// Matrix products too small or too short for SGEMM, read in place with strides: the matmul of a few rows (one
// query: SGEMM would pack the whole weight matrix on every call) and attention's two products per head (many tiny
// SGEMM calls from every thread of the team contend in OpenBLAS's buffer allocator). Each is compiled for
// AVX-512, AVX2 and the baseline (core/vector_versions.hpp).
#pragma once

#include <cstdint>

namespace accel::graph::cpu {

// y[r][j] = x[r] . w[j] for rows r < rows and columns j in [begin, end): x rows and w rows are k long.
void dot_products(const float* x, std::int64_t x_stride, const float* w, std::int64_t w_stride, std::int64_t rows,
                  std::int64_t k, std::int64_t begin, std::int64_t end, float* y, std::int64_t y_stride);

// y[r][j] = sum over c < k of x[r][c] w[c][j], for rows r < rows and columns j in [begin, end).
void combined_rows(const float* x, std::int64_t x_stride, const float* w, std::int64_t w_stride, std::int64_t rows,
                   std::int64_t k, std::int64_t begin, std::int64_t end, float* y, std::int64_t y_stride);

}  // namespace accel::graph::cpu
