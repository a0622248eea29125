#include "libs/blas/cublaslt_startup.hpp"

#include <cuda_runtime.h>

#include "libs/blas/cublaslt_gemm.hpp"
#include "operation/cuda_status.hpp"
#include "operation/one_time_start.hpp"

namespace accel::blas {
namespace {

OneTimeStart& startup() {
  static OneTimeStart once;
  return once;
}

// A first call as the compiled graphs make them: a small f16 GEMM with a bias epilogue, planned (heuristic query)
// on a handle of its own, which loads the library and makes its one-time set-up.
Status first_call(int device) {
  if (cudaError_t error = cudaSetDevice(device); error != cudaSuccess)
    return cuda_status(error, "cudaSetDevice for cuBLASLt's start-up");
  ACCEL_ASSIGN_OR_RETURN(std::unique_ptr<CublasLtGemm> gemm, CublasLtGemm::create(1, nullptr, 0));
  const GemmShape shape{.transpose_b = Transpose::transpose,
                        .m = 64,
                        .n = 64,
                        .k = 64,
                        .input_type = DType::f16,
                        .output_type = DType::f16,
                        .epilogue = Epilogue{.bias = BiasVector::per_column}};
  ACCEL_ASSIGN_OR_RETURN(GemmGeometry geometry, plan_gemm_geometry(shape));
  return gemm->plan(geometry).status();
}

}  // namespace

std::jthread CublasLtStartup::begin(int device) {
  return startup().begin([device] { return first_call(device); });
}

Status CublasLtStartup::run_or_wait(int device) {
  return startup().run_or_wait([device] { return first_call(device); });
}

bool CublasLtStartup::done() noexcept { return startup().finished(); }

}  // namespace accel::blas
