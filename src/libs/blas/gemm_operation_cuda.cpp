#include "libs/blas/gemm_operation_cuda.hpp"

#include <fmt/format.h>

namespace accel {
namespace blas {

Result<std::unique_ptr<CublasLtState>> CublasLtState::open(CudaTarget& target) {
  const blas::Options& options = target.blas_options();
  int device = 0;
  ACCEL_RETURN_IF_ERROR(target.check(cudaGetDevice(&device), "asking for the current device"));
  void* workspace = nullptr;
  if (options.workspace_bytes != 0) {
    ACCEL_RETURN_IF_ERROR(
        target.check(cudaMallocFromPoolAsync(&workspace, options.workspace_bytes, target.pool(), target.stream()),
                     fmt::format("allocating the {}-byte GEMM workspace", options.workspace_bytes)));
  }
  return std::unique_ptr<CublasLtState>(
      new CublasLtState(device, target.stream(), workspace, options.workspace_bytes, options.plan_cache_capacity));
}

Result<CublasLtGemm*> CublasLtState::gemm() {
  if (gemm_ == nullptr) {
    // cuBLASLt's first call is made once per process: not a second time at once while the start-up makes it. Its
    // status is not this GEMM's to answer: a library that failed to load fails create() below, saying why.
    static_cast<void>(CublasLtStartup::run_or_wait(device_));
    ACCEL_ASSIGN_OR_RETURN(gemm_, CublasLtGemm::create(plan_capacity_, workspace_, workspace_bytes_));
  }
  return gemm_.get();
}

CublasLtGemm* CublasLtState::gemm_if_ready() {
  if (!ready()) {
    if (++graph_asks_ == kAsksBeforeStartup) startup_ = CublasLtStartup::begin(device_);
    return nullptr;
  }
  Result<CublasLtGemm*> made = gemm();
  return made.ok() ? *made : nullptr;
}

CublasLtState::~CublasLtState() {
  gemm_.reset();
  if (workspace_ != nullptr) cudaFreeAsync(workspace_, stream_);
}

}  // namespace blas

Result<CudaOperation<Gemm>::Plan> CudaOperation<Gemm>::plan(const Gemm&, const GemmGeometry& geometry,
                                                            CudaTarget& target) {
  // An empty C is a defined no-op on every device; cuBLASLt itself refuses m = 0 or n = 0.
  if (Operation<Gemm>::is_empty(geometry)) return Plan{};
  ACCEL_RETURN_IF_ERROR(blas::check_cublaslt_support(geometry, target.compute_capability()));
  ACCEL_ASSIGN_OR_RETURN(blas::CublasLtState * state, target.stream_state<blas::CublasLtState>());
  ACCEL_ASSIGN_OR_RETURN(blas::CublasLtGemm * gemm, state->gemm());
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<const blas::CublasLtGemm::Plan> plan, gemm->plan(geometry));
  return Plan{.gemm = gemm, .plan = std::move(plan)};
}

Status CudaOperation<Gemm>::run(const Gemm& request, const GemmGeometry& geometry, const Plan& plan,
                                std::span<const BufferView> views, CudaRun& run) {
  if (plan.plan == nullptr) return Status();
  return launch_status(run.target,
                       plan.gemm->run(*plan.plan, geometry, Operation<Gemm>::addresses(views), request.alpha,
                                      request.beta, run.target.stream()),
                       "cuBLASLt");
}

void CudaOperation<Gemm>::describe(CudaTarget& target, LibraryReport& report) {
  report.report(blas::cublaslt_library());
  if (blas::CublasLtState* state = target.existing_stream_state<blas::CublasLtState>(); state && state->existing_gemm())
    report.report(state->existing_gemm()->stats());
}

}  // namespace accel
