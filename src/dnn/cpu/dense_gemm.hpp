// Row-major double GEMM for the reference kernels: OpenBLAS keeps im2col convolutions and batched matmuls of
// medium shapes in milliseconds, and its double accumulation is as exact as the reference needs.
#pragma once

#include <cstdint>

namespace accel::dnn::cpu {

enum class Side : std::uint8_t { as_stored, transposed };

// c[m, n] = op(a)[m, k] * op(b)[k, n] (+ c[m, n] when `accumulate`). Each matrix is dense and row-major as
// stored: a is [m, k] or, transposed, [k, m]; b is [k, n] or [n, k]. m, n and k are positive (tensor dims are).
void gemm(Side a_side, Side b_side, std::int64_t m, std::int64_t n, std::int64_t k, const double* a, const double* b,
          double* c, bool accumulate);

}  // namespace accel::dnn::cpu
