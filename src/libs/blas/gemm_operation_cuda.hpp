// Gemm on a CUDA stream: cuBLASLt, with the stream's plan cache and GEMM workspace (CublasLtState); GEMMs small
// enough that their time is their launch on a kernel of ours (blas_kernels.hpp's launch_small_gemm).
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <thread>

#include "libs/blas/blas_kernels.hpp"
#include "libs/blas/cublaslt_gemm.hpp"
#include "libs/blas/cublaslt_startup.hpp"
#include "libs/blas/gemm_operation.hpp"
#include "operation/cuda_operation.hpp"

namespace accel {

namespace blas {
// What cuBLASLt keeps per stream: its handle and plan cache, and the workspace its GEMMs use. The handle is made on
// the stream's first GEMM, so that opening the state never waits for the library. cuBLASLt's loading and one-time
// start-up run on a thread of their own (CublasLtStartup), begun when the device opens (start_with_context below);
// where nothing began them (a context opened before that existed never does), the compiled graphs begin them once
// they have asked for cuBLASLt kAsksBeforeStartup times.
class CublasLtState final : public TargetState {
 public:
  static Result<std::unique_ptr<CublasLtState>> open(CudaTarget& target);
  ~CublasLtState() override;
  CublasLtState(const CublasLtState&) = delete;
  CublasLtState& operator=(const CublasLtState&) = delete;

  // The stream's GEMM object, made on the first call, which waits for cuBLASLt's start-up while it runs on its
  // thread (or makes it, if nothing began it); unavailable where the library cannot be loaded.
  [[nodiscard]] Result<CublasLtGemm*> gemm();
  // The GEMM object if cuBLASLt's start-up is over and it loaded, else null, without waiting: the compiled graphs
  // keep their own matmul meanwhile, and for good where cuBLASLt cannot be loaded.
  [[nodiscard]] CublasLtGemm* gemm_if_ready();
  // The GEMM object if one was made; never makes one.
  [[nodiscard]] const CublasLtGemm* existing_gemm() const noexcept { return gemm_.get(); }
  // Whether cuBLASLt's start-up is over, so that a call now costs only itself.
  [[nodiscard]] static bool ready() noexcept { return CublasLtStartup::done(); }
  // Whether that start-up is running now (CublasLtStartup::running).
  [[nodiscard]] static bool starting() noexcept { return CublasLtStartup::running(); }
  static constexpr int kAsksBeforeStartup = 3;

 private:
  CublasLtState(int device, cudaStream_t stream, void* workspace, std::size_t workspace_bytes,
                std::size_t plan_capacity)
      : device_(device),
        stream_(stream),
        workspace_(workspace),
        workspace_bytes_(workspace_bytes),
        plan_capacity_(plan_capacity) {}
  int device_;
  int graph_asks_ = 0;  // gemm_if_ready calls while cuBLASLt was not ready
  cudaStream_t stream_;
  void* workspace_;
  std::size_t workspace_bytes_;
  std::size_t plan_capacity_;
  std::unique_ptr<CublasLtGemm> gemm_;
  std::jthread startup_;  // not joinable unless this state began cuBLASLt's start-up
};
}  // namespace blas

template <>
struct CudaOperation<Gemm> {
  // The stream's cuBLASLt state and its plan for the shape, found once; or the small kernel's launch, its operands
  // still to be filled in; a null plan and no launch for an empty GEMM, which launches nothing.
  struct Plan {
    blas::CublasLtGemm* gemm = nullptr;
    std::shared_ptr<const blas::CublasLtGemm::Plan> plan;
    std::optional<blas::SmallGemmLaunch> small;
  };

  static Result<Plan> plan(const Gemm& request, const GemmGeometry& geometry, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan&) { return 0; }  // cuBLASLt uses the state's own workspace
  static Status run(const Gemm& request, const GemmGeometry& geometry, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  // Recorded small products side by side, each reading the one before's C as op(B) or as op(A), run as one launch (a
  // recording's links, operation/cuda_operation.hpp; blas::launch_small_gemm_chain): a link is a product's launch.
  using Link = blas::SmallGemmLaunch;
  static std::optional<Link> link(const Gemm& request, const GemmGeometry& geometry, const Plan& plan,
                                  std::span<const BufferView> views);
  static Status run_linked(std::span<const Link> links, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report);
  // cuBLASLt's load and first call, begun as the device opens so that its first GEMM does not pay for them.
  static std::jthread start_with_context(int ordinal) { return blas::CublasLtStartup::begin(ordinal); }
};

}  // namespace accel
