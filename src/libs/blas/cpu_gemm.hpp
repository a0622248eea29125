// GEMM on the CPU through OpenBLAS: the embedded default without a GPU and the reference in GPU tests.
#pragma once

#include <string>

#include "accel/core/library_version.hpp"
#include "accel/libs/blas/gemm.hpp"
#include "libs/blas/gemm_operation.hpp"

namespace accel::blas {

// not_supported for dtypes OpenBLAS has no GEMM for (f16, bf16, fp8) and sizes beyond its 32-bit integers.
[[nodiscard]] Status check_cpu_gemm_support(const GemmGeometry& geometry);

// Runs a validated GEMM (plan_gemm_geometry + Operation<Gemm>::operands + check_cpu_gemm_support passed).
void run_cpu_gemm(const GemmGeometry& geometry, const GemmOperands& operands, double alpha, double beta);

[[nodiscard]] LibraryVersion cpu_blas_library();

}  // namespace accel::blas
