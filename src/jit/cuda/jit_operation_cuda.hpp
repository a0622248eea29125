// The JIT family on a CUDA stream: the kernels and modules loaded into the device's context (JitState, shared by
// its streams), launched with resolved operands. A CUTLASS request whose kernel is still compiling may be
// answered by a library (cuBLASLt, cuDNN) that computes the same thing: its plan says which.
#pragma once

#include <memory>
#include <optional>
#include <variant>

#include "dnn/cudnn/cudnn_operation.hpp"
#include "jit/cuda/jit_kernels.hpp"
#include "jit/jit_operation.hpp"
#include "libs/blas/gemm_operation_cuda.hpp"
#include "operation/cuda_operation.hpp"

namespace accel {

namespace jit {

class JitState final : public TargetState {
 public:
  static Result<std::unique_ptr<JitState>> open(CudaTarget& target);
  explicit JitState(std::unique_ptr<JitKernels> kernels) : kernels_(std::move(kernels)) {}
  [[nodiscard]] JitKernels& kernels() noexcept { return *kernels_; }
  [[nodiscard]] const JitKernels& kernels() const noexcept { return *kernels_; }

 private:
  std::unique_ptr<JitKernels> kernels_;
};

struct KernelPlan {
  std::shared_ptr<const LoadedProgram> program;  // keeps `kernel` loaded
  const LoadedKernel* kernel = nullptr;
};

// A loaded CUTLASS module, or (while it compiles, if the request allows) the library request that answers.
struct LibraryGemm {
  GemmGeometry geometry;
  CudaOperation<Gemm>::Plan plan;
};
struct LibraryConvPlan {
  dnn::CheckedGraph checked;
  dnn::cudnn::CudnnGraphOperation::Plan plan;
};
template <class Library>
using ModuleOr = std::variant<std::shared_ptr<const CutlassModule>, Library>;

void describe_jit(CudaTarget& target, LibraryReport& report);

}  // namespace jit

template <>
struct CudaOperation<LaunchKernel> {
  using Plan = jit::KernelPlan;
  // The program compiled (or found) and loaded, its kernel found, the arguments' count and sizes checked
  // against the kernel's parameters.
  static Result<Plan> plan(const LaunchKernel& request, const Operation<LaunchKernel>::Checked&, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan&) { return 0; }
  static Status run(const LaunchKernel& request, const Operation<LaunchKernel>::Checked&, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report) { jit::describe_jit(target, report); }
};

template <>
struct CudaOperation<CutlassGemm> {
  using Plan = jit::ModuleOr<jit::LibraryGemm>;
  static Result<Plan> plan(const CutlassGemm& request, const jit::CutlassGemmGeometry& geometry, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan&) { return 0; }  // the module says, given its arguments
  static Status run(const CutlassGemm& request, const jit::CutlassGemmGeometry& geometry, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
};

template <>
struct CudaOperation<CutlassGroupedGemm> {
  using Plan = std::shared_ptr<const jit::CutlassModule>;
  static Result<Plan> plan(const CutlassGroupedGemm& request, const std::vector<jit::CutlassGemmGeometry>& groups,
                           CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan&) { return 0; }
  static Status run(const CutlassGroupedGemm& request, const std::vector<jit::CutlassGemmGeometry>& groups,
                    const Plan& plan, std::span<const BufferView> views, CudaRun& run);
};

template <>
struct CudaOperation<CutlassConv> {
  using Plan = jit::ModuleOr<jit::LibraryConvPlan>;
  static Result<Plan> plan(const CutlassConv& request, const jit::ConvExtents& extents, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan& plan);
  static Status run(const CutlassConv& request, const jit::ConvExtents& extents, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
};

}  // namespace accel
