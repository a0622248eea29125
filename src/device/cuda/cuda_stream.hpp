// One stream of a CUDA device: the state of one device actor. It owns a CUDA stream, a cuBLASLt handle with its
// plan cache and workspace; memory and buffers belong to the device's CudaContext, shared by all its streams.
//
// Every request follows one shape: validate (nothing is launched before the request is known good) ->
// order after the buffers' earlier users -> enqueue on the stream -> record the completion event -> reply
// when the event completes (CompletionQueue), with the work's real status.
#pragma once

#include <cuda_runtime.h>

#include <cudnn.h>

#include <initializer_list>
#include <memory>
#include <span>

#include "accel/device/protocol.hpp"
#include "device/cuda/cuda_context.hpp"
#include "device/cuda/jit_kernels.hpp"
#include "device/device_shared.hpp"
#include "libs/blas/cublaslt_gemm.hpp"

namespace accel::device::cuda {

class CudaStream final : public DeviceProtocol::Handler {
 public:
  static Result<std::unique_ptr<CudaStream>> create(std::shared_ptr<DeviceShared> shared,
                                                    std::shared_ptr<CudaContext> context);
  ~CudaStream() override;
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;

  // -- answered at once (stream-ordered; no GPU work to wait for) ------------------------------
  Result<BufferHandle> handle(Allocate& request) override;
  Result<Done> handle(Free& request) override;
  Result<Done> handle(ResetContext& request) override;
  Result<DeviceInfo> handle(QueryDevice& request) override;

  // -- answered when the GPU work has finished -------------------------------------------------
  // handle() waits on the actor's thread (the blocking strategy); dispatch() defers the reply.
  Result<Done> handle(CopyToDevice& request) override { return wait_for(enqueue(request)); }
  Result<Done> handle(CopyToHost& request) override { return wait_for(enqueue(request)); }
  Result<Done> handle(CopyOnDevice& request) override { return wait_for(enqueue(request)); }
  Result<Done> handle(Gemm& request) override { return wait_for(enqueue(request)); }
  Result<Done> handle(ConvFwd& request) override { return wait_for(enqueue(request)); }
  Result<Done> handle(ConvBwdData& request) override { return wait_for(enqueue(request)); }
  Result<Done> handle(ConvBwdFilter& request) override { return wait_for(enqueue(request)); }
  Result<Done> handle(RunGraph& request) override { return wait_for(enqueue(request)); }
  Result<Done> handle(LaunchKernel& request) override { return wait_for(enqueue(request)); }
  Result<Done> handle(CutlassGemm& request) override { return wait_for(enqueue(request)); }
  Result<Done> handle(CutlassGroupedGemm& request) override { return wait_for(enqueue(request)); }
  Result<Done> handle(CutlassConv& request) override { return wait_for(enqueue(request)); }
  Result<Done> handle(InjectFault& request) override { return wait_for(enqueue(request)); }
  Status dispatch(CopyToDevice& request, Promise<Done>& reply) override { return complete_later(request, reply); }
  Status dispatch(CopyToHost& request, Promise<Done>& reply) override { return complete_later(request, reply); }
  Status dispatch(CopyOnDevice& request, Promise<Done>& reply) override { return complete_later(request, reply); }
  Status dispatch(Gemm& request, Promise<Done>& reply) override { return complete_later(request, reply); }
  Status dispatch(ConvFwd& request, Promise<Done>& reply) override { return complete_later(request, reply); }
  Status dispatch(ConvBwdData& request, Promise<Done>& reply) override { return complete_later(request, reply); }
  Status dispatch(ConvBwdFilter& request, Promise<Done>& reply) override { return complete_later(request, reply); }
  Status dispatch(RunGraph& request, Promise<Done>& reply) override { return complete_later(request, reply); }
  Status dispatch(LaunchKernel& request, Promise<Done>& reply) override { return complete_later(request, reply); }
  Status dispatch(CutlassGemm& request, Promise<Done>& reply) override { return complete_later(request, reply); }
  Status dispatch(CutlassGroupedGemm& request, Promise<Done>& reply) override { return complete_later(request, reply); }
  Status dispatch(CutlassConv& request, Promise<Done>& reply) override { return complete_later(request, reply); }
  Status dispatch(InjectFault& request, Promise<Done>& reply) override { return complete_later(request, reply); }

  // A buffer a request uses, and how.
  struct Use {
    BufferHandle buffer;
    Access access;
  };

 private:
  CudaStream(std::shared_ptr<DeviceShared> shared, std::shared_ptr<CudaContext> context);

  Result<Submitted> enqueue(CopyToDevice& request);
  Result<Submitted> enqueue(CopyToHost& request);
  Result<Submitted> enqueue(CopyOnDevice& request);
  Result<Submitted> enqueue(Gemm& request);
  Result<Submitted> enqueue(ConvFwd& request);
  Result<Submitted> enqueue(ConvBwdData& request);
  Result<Submitted> enqueue(ConvBwdFilter& request);
  Result<Submitted> enqueue(RunGraph& request);
  // Every cuDNN request: the plan of `key` (built from `graph()` on a miss), then the graph's bindings resolved,
  // ordered, executed.
  Result<Submitted> enqueue_graph(std::span<const std::byte> key, const dnn::cudnn::DnnPlans::GraphFactory& graph,
                                  std::span<const dnn::TensorBinding> bindings);
  Result<cudnnHandle_t> dnn_handle();
  // The stream's scratch memory for cuDNN plans and CUTLASS kernels; it only grows.
  Status reserve_workspace(std::uint64_t bytes);
  Result<Submitted> enqueue(LaunchKernel& request);
  Result<Submitted> enqueue(CutlassGemm& request);
  Result<Submitted> enqueue(CutlassGroupedGemm& request);
  Result<Submitted> enqueue(CutlassConv& request);
  // The module of `instance`; null when it is still compiling, the request asked for a library fallback and
  // `library_can_answer()` (asked only then, off the path of a loaded module) says a library can.
  template <class LibraryCanAnswer>
  Result<std::shared_ptr<const CutlassModule>> cutlass_module(const jit::cutlass::Instance& instance,
                                                              WhenCompiling when,
                                                              LibraryCanAnswer&& library_can_answer);
  // Runs `module` on `args` (its workspace reserved) after `uses`; the caller holds the buffers' lock.
  Result<Submitted> run_module(const CutlassModule& module, const void* args, std::span<const Use> uses);
  Result<Submitted> enqueue(InjectFault& request);

  // With the buffers' lock held and every operand validated: orders the work after the buffers' earlier
  // users, runs `work` (which enqueues and returns what completion needs), records the completion event.
  template <class Work>
  Result<Submitted> ordered(std::initializer_list<Use> uses, Work&& work) {
    return ordered(std::span<const Use>(uses.begin(), uses.size()), std::forward<Work>(work));
  }
  template <class Work>
  Result<Submitted> ordered(std::span<const Use> uses, Work&& work);

  template <class Request>
  Status complete_later(Request& request, Promise<Done>& reply) {
    if (context_->completions().strategy() == CompletionStrategy::blocking)
      return Handles<Request>::dispatch(request, reply);
    Result<Submitted> submitted = enqueue(request);
    if (!submitted.ok()) {
      reply.set(submitted.status());
      return submitted.status();
    }
    return context_->completions().defer(stream_, std::move(*submitted), std::move(reply));
  }
  Result<Done> wait_for(Result<Submitted> submitted);

  Status free_locked(const BufferHandle& handle);
  void collect_released();

  std::shared_ptr<DeviceShared> shared_;
  std::shared_ptr<CudaContext> context_;
  cudaStream_t stream_ = nullptr;
  void* workspace_ = nullptr;
  std::unique_ptr<blas::CublasLtGemm> gemm_;
  cudnnHandle_t dnn_ = nullptr;  // made on the first cuDNN request
  void* scratch_ = nullptr;
  std::uint64_t scratch_bytes_ = 0;
};

template <class Work>
Result<Submitted> CudaStream::ordered(std::span<const Use> uses, Work&& work) {
  for (const Use& use : uses) ACCEL_RETURN_IF_ERROR(context_->order_before(stream_, use.buffer, use.access));
  ACCEL_ASSIGN_OR_RETURN(Submitted submitted, work());
  ACCEL_ASSIGN_OR_RETURN(submitted.event, context_->record_event(stream_));
  for (const Use& use : uses) context_->order_after(stream_, use.buffer, use.access, submitted.event);
  return submitted;
}

}  // namespace accel::device::cuda
