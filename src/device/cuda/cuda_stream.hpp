// One stream of a CUDA device: the state of one device actor. It owns a CUDA stream, its scratch workspace and the
// families' per-stream state (cuBLASLt handle and plans, cuDNN handle); memory, buffers and the families'
// per-context state belong to the device's CudaContext, shared by all its streams.
//
// Every request follows one shape: validate (nothing is launched before the request is known good) -> plan ->
// order after the buffers' earlier users -> enqueue on the stream -> mark its completion (one event a burst of
// requests, Note [Bursts]) -> reply when the event completes (CompletionQueue), with the work's real status. Library
// requests take that shape through their operation contract (enqueue_operation, Note [The operation contract] in
// operation/operation.hpp).
#pragma once

#include <cuda_runtime.h>

#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "accel/device/protocol.hpp"
#include "device/cuda/buffer_use.hpp"
#include "device/cuda/cuda_context.hpp"
#include "device/cuda/library_operations_cuda.hpp"
#include "device/cuda/recorded_graphs.hpp"
#include "device/device_shared.hpp"
#include "device/operation_handlers.hpp"
#include "device/request_errors.hpp"
#include "operation/cuda_operation.hpp"

namespace accel::device::cuda {

class CudaStream;
using CudaStreamBase = OperationHandlers<CudaStream, DeviceProtocol::Handler, LibraryRequests>;

class CudaStream final : public CudaStreamBase, public CudaTarget {
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
  // An export orders the consumer's stream after the buffer's users by an event, on the GPU; an adopted buffer's
  // memory is external (its Free waits for this stream's work on it, since the owner frees it next).
  Result<SharedMemory> handle(ShareMemory& request) override;
  Result<ExportedBuffer> handle(ExportBuffer& request) override;
  Result<BufferHandle> handle(ImportBuffer& request) override;
  // The fence is an event recorded now; the wait is enqueued on the GPU. Neither waits for GPU work.
  Result<Fence> handle(RecordFence& request) override;
  Result<Done> handle(WaitFence& request) override;
  Result<Done> handle(JoinOrders& request) override;

  // -- answered when the GPU work has finished -------------------------------------------------
  // handle() waits on the actor's thread (the blocking strategy); dispatch() defers the reply.
  Result<Done> handle(CopyToDevice& request) override { return wait_for(enqueue(request)); }
  Result<Done> handle(CopyToHost& request) override { return wait_for(enqueue(request)); }
  Result<Done> handle(CopyOnDevice& request) override { return wait_for(enqueue(request)); }
  Result<Done> handle(InjectFault& request) override { return wait_for(enqueue(request)); }
  Status dispatch(CopyToDevice& request, Promise<Done>& reply) override { return complete_later(request, reply); }
  Status dispatch(CopyToHost& request, Promise<Done>& reply) override { return complete_later(request, reply); }
  Status dispatch(CopyOnDevice& request, Promise<Done>& reply) override { return complete_later(request, reply); }
  Status dispatch(InjectFault& request, Promise<Done>& reply) override { return complete_later(request, reply); }
  // Recorded steps: captured into one CUDA graph, kept per recording and launched again (cuda_recorded.cpp).
  Result<Done> handle(RunRecorded& request) override { return wait_for(enqueue(request)); }
  Status dispatch(RunRecorded& request, Promise<Done>& reply) override { return complete_later(request, reply); }

  // Any deferred reply of the device's streams keeps this stream's thread awake: the device's next request
  // usually follows the answer.
  [[nodiscard]] bool owes_replies() const noexcept override {
    return !held_.empty() || context_->completions().owes_replies();
  }
  // The burst of requests the stream has taken one after another is over: this thread watches their work while it
  // waits for the next request (Note [Watching one's own work]), or their replies go to the completion queue.
  void mailbox_empty() override { (void)answer_held(Watch::here); }  // a failure has answered the replies already
  void look_after_replies() override { watched_.answer_finished(); }
  void hand_over_replies() override { watched_.hand_over(); }

  // -- library requests (OperationHandlers) ------------------------------------------------------
  template <class Request>
  Result<Done> handle_operation(Request& request) {
    return wait_for(enqueue(request));
  }
  // A request whose contract links steps takes the requests of its type queued right behind it along, to run as few
  // launches as their links allow (Note [Linked bursts], linked_requests.hpp).
  template <class Request>
  Status dispatch_operation(Request& request, Promise<Done>& reply) {
    if constexpr (LinksSteps<Request>) {
      if (context_->completions().strategy() != CompletionStrategy::blocking) return dispatch_linked(request, reply);
    }
    return complete_later(request, reply);
  }

  // -- CudaTarget: what the families see of this stream ----------------------------------------
  std::string_view device_name() const noexcept override { return shared_->name; }
  const blas::Options& blas_options() const noexcept override { return context_->options().blas; }
  const dnn::Options& dnn_options() const noexcept override { return context_->options().dnn; }
  const jit::Options& jit_options() const noexcept override { return context_->options().jit; }
  const graph::Options& graph_options() const noexcept override { return context_->options().graph; }
  int compute_capability() const noexcept override { return context_->compute_capability(); }
  std::string_view gpu_name() const noexcept override { return context_->gpu_name(); }
  cudaStream_t stream() const noexcept override { return stream_; }
  cudaMemPool_t pool() const noexcept override { return context_->pool(); }
  Status check(cudaError_t error, std::string_view what) override { return context_->check(error, what); }
  Result<void*> workspace(std::uint64_t bytes) override;
  void keep_alive() override {
    if (shared_->keep_alive) shared_->keep_alive();
  }
  // Runs inside enqueue's run step, with the buffers' lock held.
  Result<bool> adopt(const BufferHandle& buffer, std::uint64_t write_version, void* memory,
                     std::uint64_t bytes) override {
    return context_->adopt(stream_, buffer, write_version, memory, bytes);
  }

  using Use = BufferUse;

 protected:
  TargetStates& context_states() noexcept override { return context_->states(); }
  TargetStates& stream_states() noexcept override { return states_; }

 private:
  CudaStream(std::shared_ptr<DeviceShared> shared, std::shared_ptr<CudaContext> context);

  Result<Submitted> enqueue(CopyToDevice& request);
  Result<Submitted> enqueue(CopyToHost& request);
  Result<Submitted> enqueue(CopyOnDevice& request);
  // A CopyOnDevice whose source is another in-process CUDA device's buffer (peer_copy.cpp).
  Result<Submitted> enqueue_from_peer(CopyOnDevice& request);
  Result<Submitted> enqueue(InjectFault& request);
  Result<Submitted> enqueue(RunRecorded& request);
  // RunRecorded's launch of the graph kept for its recording, `workspace_bytes` of workspace, with every step checked
  // but none planned (cuda_recorded.cpp); nothing, having done nothing, unless the graph was captured over the same
  // addresses and every step passes its checks.
  Result<std::optional<Submitted>> launch_kept(RunRecorded& request, std::uint64_t workspace_bytes);
  // The same launch with no step checked again, when the steps name the buffers the last checked launch found, at
  // the same addresses: only the buffers' generations and host memory's pinning are checked.
  Result<std::optional<Submitted>> launch_checked(RunRecorded& request, std::uint64_t workspace_bytes);
  // With the buffers' lock held: every buffer of the steps checked (stale_handle naming the step otherwise), and the
  // memory each resolves to, in step order.
  Result<std::vector<const void*>> recorded_addresses(RunRecorded& request);
  // A kept graph's launch, ordered after the earlier users of `uses`.
  Result<Submitted> launch_ordered(cudaGraphExec_t exec, std::span<const Use> uses);
  // A library request, through its operation contract: validate -> plan -> resolve -> order -> workspace -> run;
  // its errors name it (request_errors.hpp).
  template <class Request>
  Result<Submitted> enqueue(Request& request);
  template <class Request>
  Result<Submitted> enqueue_unnamed(Request& request);
  // A library request validated and planned, and the buffers it uses, before any is resolved.
  template <class Request>
  struct PreparedRequest {
    typename Operation<Request>::Checked checked;
    typename CudaOperation<Request>::Plan plan;
    PinnedBlock host_result;
    std::uint64_t host_result_bytes = 0;
    Operands operands;
    std::vector<Use> uses;
  };
  template <class Request>
  Result<PreparedRequest<Request>> prepare(const Request& request);
  // With the buffers' lock held and the operands resolved and ordered: its workspace, then its run step.
  template <class Request>
  Result<Submitted> run_prepared(const Request& request, PreparedRequest<Request>& prepared,
                                 std::span<const BufferView> views, std::uint64_t write_version);
  // `request` and the requests of its type queued right behind it, each answered through its own reply
  // (linked_requests.hpp).
  template <class Request>
  Status dispatch_linked(Request& request, Promise<Done>& reply);
  // Each of `requests` as enqueue() would, in order, but for the runs of consecutive ones whose contract links
  // them, each run by one run_linked; one completion mark for them all.
  template <class Request>
  std::vector<Result<Submitted>> enqueue_linked(std::span<Request* const> requests);

  // With the buffers' lock held and every operand validated: orders the work after the buffers' earlier
  // users, runs `work` (which enqueues and returns what completion needs), marks its completion (Note [Bursts]).
  // The buffers written get `write_version` (CudaContext::new_write_version()).
  template <class Work>
  Result<Submitted> ordered(std::initializer_list<Use> uses, Work&& work) {
    return ordered(std::span<const Use>(uses.begin(), uses.size()), context_->new_write_version(),
                   std::forward<Work>(work));
  }
  template <class Work>
  Result<Submitted> ordered(std::span<const Use> uses, std::uint64_t write_version, Work&& work);
  // ordered()'s halves, with the buffers' lock held: the uses ordered after the buffers' earlier users and the written
  // ones given `write_version`, before the work; their ordering state given the work's completion `mark`, after it.
  Status order_before_work(std::span<const Use> uses, std::uint64_t write_version);
  void order_after_work(std::span<const Use> uses, const EventRef& mark);
  // With the buffers' lock held and the device healthy: `operands` resolved to their views, whose versions are stamped.
  Result<std::vector<BufferView>> resolve_locked(const Operands& operands);

  // Note [Bursts]: under the poller, a request's reply is held until the stream's mailbox is empty (or
  // kMostHeldReplies are held), and the requests taken meanwhile share one completion event, recorded once as the
  // burst ends: one event record and one completion query a burst, not a request. Their buffers' ordering holds the
  // same mark, which another stream that must wait for it records itself, under the buffers lock (Event). That is
  // safe because every capture on a stream (RunRecorded, cuFFT's captured executions, compiled graphs, cuBLASLt's
  // timing) happens in a run step, under the same lock: a mark recorded into a capturing stream would join the graph.
  template <class Request>
  Status complete_later(Request& request, Promise<Done>& reply) {
    if (context_->completions().strategy() == CompletionStrategy::blocking)
      return Handles<Request>::dispatch(request, reply);
    Result<Submitted> submitted = enqueue(request);
    if (!submitted.ok()) {
      reply.set(submitted.status());
      return submitted.status();
    }
    held_.push_back(DeferredReply{std::move(*submitted), std::move(reply)});
    return answer_held_if_due();
  }
  static constexpr std::size_t kMostHeldReplies = 32;
  // The held replies answered now unless the burst may go on: under the poller, until kMostHeldReplies are held.
  Status answer_held_if_due() {
    if (context_->completions().strategy() != CompletionStrategy::poller || held_.size() >= kMostHeldReplies)
      return answer_held();
    return Status();
  }
  // With the buffers' lock held: the event a request's work completes with (Note [Bursts]).
  Result<EventRef> completion_mark();
  // Note [Watching one's own work]: under the poller, the replies of the burst that ends as the mailbox empties are
  // watched by this stream's own thread while it waits for the next request (Protocol's look_after_replies): it
  // launched the work, so it answers it with no other thread between the GPU and the caller, and the completion
  // thread makes no CUDA call beside its next launch (PERFORMANCE.md §112: a second thread in the driver costs a
  // graph's launch 0.3-1.3 µs). What is unanswered when a request comes or the thread goes to sleep goes to the
  // completion queue (hand_over_replies), so a long request never holds back an earlier one's reply.
  enum class Watch : bool { queue, here };
  // Records the burst's mark, then hands the held replies to the completion queue, or to `watched_` (or answers them
  // with the error).
  Status answer_held(Watch watch = Watch::queue);
  Result<Done> wait_for(Result<Submitted> submitted);
  // With the buffers' lock held: a large pageable upload through two pinned blocks in turn. Returns the block
  // the last chunk is read from, to be given back when the work completes.
  Result<PinnedBlock> upload_in_chunks(std::byte* to, const std::byte* from, std::size_t bytes);

  Status free_locked(const BufferHandle& handle);
  void collect_released();

  std::shared_ptr<DeviceShared> shared_;
  std::shared_ptr<CudaContext> context_;
  const std::uint32_t id_;  // in the context, for the fences it records
  cudaStream_t stream_ = nullptr;
  TargetStates states_;
  RecordedGraphs recorded_;  // RunRecorded's kept graphs
  void* scratch_ = nullptr;
  std::uint64_t scratch_bytes_ = 0;
  EventRef open_mark_;                // the current burst's, until recorded (Note [Bursts])
  DoneWords::Lease done_word_;        // written after each burst's work (poller only; done_words.hpp)
  std::vector<DeferredReply> held_;   // the current burst's replies
  CompletionQueue::Watched watched_;  // the work this thread watches while it waits (Note [Watching one's own work])
};

// The buffers of `operands`, each once (as written if any of its uses writes); absent ones left out.
[[nodiscard]] std::vector<CudaStream::Use> uses_of(const Operands& operands);

template <class Request>
Result<Submitted> CudaStream::enqueue(Request& request) {
  return named_for(Request::kName, enqueue_unnamed(request));
}

template <class Request>
Result<CudaStream::PreparedRequest<Request>> CudaStream::prepare(const Request& request) {
  using Op = Operation<Request>;
  using CudaOp = CudaOperation<Request>;
  ACCEL_ASSIGN_OR_RETURN(typename Op::Checked checked, Op::validate(request));
  ACCEL_RETURN_IF_ERROR(context_->check_healthy());
  ACCEL_ASSIGN_OR_RETURN(typename CudaOp::Plan plan, CudaOp::plan(request, checked, *this));
  PreparedRequest<Request> prepared{.checked = std::move(checked), .plan = std::move(plan)};
  if constexpr (HasHostResult<Request>) {
    prepared.host_result_bytes = CudaOp::host_result_bytes(prepared.plan);
    if (prepared.host_result_bytes != 0) {
      ACCEL_ASSIGN_OR_RETURN(prepared.host_result, context_->pinned().take(prepared.host_result_bytes));
    }
  }
  Op::operands(request, prepared.checked, prepared.operands);
  prepared.uses = uses_of(prepared.operands);
  return prepared;
}

template <class Request>
Result<Submitted> CudaStream::run_prepared(const Request& request, PreparedRequest<Request>& prepared,
                                           std::span<const BufferView> views, std::uint64_t write_version) {
  using CudaOp = CudaOperation<Request>;
  const std::uint64_t bytes = CudaOp::workspace_bytes(prepared.plan);
  CudaRun run{.target = *this,
              .host_result = {prepared.host_result.data(), prepared.host_result_bytes},
              .write_version = write_version};
  if (bytes != 0) {
    ACCEL_ASSIGN_OR_RETURN(run.workspace, workspace(bytes));
    run.workspace_bytes = bytes;
  }
  ACCEL_RETURN_IF_ERROR(CudaOp::run(request, prepared.checked, prepared.plan, views, run));
  // The host result is given back once the work has finished, whether or not the run used it.
  return Submitted{.staging = std::move(prepared.host_result),
                   .host_bytes = prepared.host_result_bytes,
                   .check = std::move(run.check_result)};
}

template <class Request>
Result<Submitted> CudaStream::enqueue_unnamed(Request& request) {
  ACCEL_ASSIGN_OR_RETURN(PreparedRequest<Request> prepared, prepare(request));
  std::lock_guard lock(context_->buffers_mutex());
  ACCEL_ASSIGN_OR_RETURN(std::vector<BufferView> views, resolve_locked(prepared.operands));
  const std::uint64_t write_version = context_->new_write_version();
  return ordered(std::span<const Use>(prepared.uses), write_version,
                 [&]() { return run_prepared(request, prepared, views, write_version); });
}

template <class Work>
Result<Submitted> CudaStream::ordered(std::span<const Use> uses, std::uint64_t write_version, Work&& work) {
  ACCEL_RETURN_IF_ERROR(order_before_work(uses, write_version));
  ACCEL_ASSIGN_OR_RETURN(Submitted submitted, work());
  ACCEL_ASSIGN_OR_RETURN(submitted.event, completion_mark());
  order_after_work(uses, submitted.event);
  return submitted;
}

}  // namespace accel::device::cuda

#include "device/cuda/linked_requests.hpp"  // IWYU pragma: keep (CudaStream's linked bursts)
