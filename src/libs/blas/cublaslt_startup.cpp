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
// on a handle of its own, which loads the library and makes its one-time set-up. The handle is kept for the process,
// never destroyed: cublasLtDestroy synchronises the device, which invalidates a stream capture another thread has in
// progress, as the graphs' first captures are while this runs (a model's load failed so in about one start in three
// for a 12 x 768 encoder on the H200; 400 destroys invalidated 6 of 3,000 concurrent captures, creates and heuristic
// queries none: docs/PERFORMANCE.md §66).
Status first_call(int device) {
  if (cudaError_t error = cudaSetDevice(device); error != cudaSuccess)
    return cuda_status(error, "cudaSetDevice for cuBLASLt's start-up");
  ACCEL_ASSIGN_OR_RETURN(std::unique_ptr<CublasLtGemm> gemm, CublasLtGemm::create(1, nullptr, 0));
  static CublasLtGemm* const kept = gemm.release();  // first_call runs once a process (OneTimeStart)
  const GemmShape shape{.transpose_b = Transpose::transpose,
                        .m = 64,
                        .n = 64,
                        .k = 64,
                        .input_type = DType::f16,
                        .output_type = DType::f16,
                        .epilogue = Epilogue{.bias = BiasVector::per_column}};
  ACCEL_ASSIGN_OR_RETURN(GemmGeometry geometry, plan_gemm_geometry(shape));
  return kept->plan(geometry).status();
}

}  // namespace

std::jthread CublasLtStartup::begin(int device) {
  return startup().begin([device] { return first_call(device); });
}

Status CublasLtStartup::run_or_wait(int device) {
  return startup().run_or_wait([device] { return first_call(device); });
}

bool CublasLtStartup::done() noexcept { return startup().finished(); }

bool CublasLtStartup::running() noexcept { return startup().running(); }

}  // namespace accel::blas
