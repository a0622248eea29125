#include "libs/blas/cublas_state.hpp"

#include <fmt/format.h>

#include <cctype>
#include <string>

#include "libs/blas/cublaslt_library.hpp"  // cublas_status

namespace accel::blas {

CublasState::~CublasState() { api_.cublasDestroy_v2(handle_); }

Result<std::unique_ptr<CublasState>> CublasState::open(CudaTarget& target) {
  ACCEL_ASSIGN_OR_RETURN(const CublasApi* api, cublas_api());
  cublasHandle_t handle = nullptr;
  ACCEL_RETURN_IF_ERROR(cublas_status(api->cublasCreate_v2(&handle), "cublasCreate"));
  if (Status bound = cublas_status(api->cublasSetStream_v2(handle, target.stream()), "cublasSetStream"); !bound.ok()) {
    api->cublasDestroy_v2(handle);
    return bound;
  }
  return std::unique_ptr<CublasState>(new CublasState(*api, handle));
}

Result<CublasPlan> plan_cublas(CudaTarget& target) {
  ACCEL_ASSIGN_OR_RETURN(CublasState * state, target.stream_state<CublasState>());
  return CublasPlan{.api = &state->api(), .handle = state->handle()};
}

Status set_pointer_mode(const CublasPlan& plan, CudaRun& run, cublasPointerMode_t mode) {
  return cublas_launched(run, plan.api->cublasSetPointerMode_v2(plan.handle, mode), "cublasSetPointerMode");
}

Status cublas_launched(CudaRun& run, cublasStatus_t status, std::string_view what) {
  return launch_status(run.target, cublas_status(status, what), "cuBLAS");
}

Status cublas_launched(CudaRun& run, cublasStatus_t status, RoutineName routine) {
  if (status == CUBLAS_STATUS_SUCCESS) return Status();
  const std::string name =
      routine.index ? fmt::format("cublasI{}{}", static_cast<char>(std::tolower(routine.letter)), routine.name)
                    : fmt::format("cublas{}{}", routine.letter, routine.name);
  return cublas_launched(run, status, name);
}

void CublasOperation::describe(CudaTarget&, LibraryReport& report) { report.report(cublas_library()); }

}  // namespace accel::blas
