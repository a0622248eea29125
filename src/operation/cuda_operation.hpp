// The CUDA half of the operation contract (Note [The operation contract] in operation.hpp): what a family sees of
// one stream of a CUDA device, and the steps it writes for CUDA.
//
//   template <> struct CudaOperation<Gemm> {
//     using Plan = ...;                                   // what a run needs beyond the request; cached
//     static Result<Plan> plan(const Gemm&, const Checked&, CudaTarget&);   // support check, then the plan
//     static std::uint64_t workspace_bytes(const Plan&);  // scratch the run needs (0 for none)
//     static Status run(const Gemm&, const Checked&, const Plan&, std::span<const BufferView>, CudaRun&);
//     static void describe(CudaTarget&, LibraryReport&); // optional: library versions, cache statistics
//     static std::uint64_t host_result_bytes(const Plan&);  // optional: see CudaRun::host_result
//     static std::jthread start_with_context(int ordinal);  // optional: see below
//     using Link = ...;                                   // optional, with the two below: see below
//     static std::optional<Link> link(const Gemm&, const Checked&, const Plan&, std::span<const BufferView>);
//     static Status run_linked(std::span<const Link>, CudaRun&);
//   };
//
// plan() runs before any buffer is resolved, run() with the operands resolved and ordered, on the stream. A
// family keeps its plans in its own context or stream state (CudaTarget::context_state / stream_state), so
// nothing of it lives in the device tier.
//
// A family whose library costs much on its first use in a process (cuBLASLt: its load and one-time set-up, 100-500
// ms) may start that when a CUDA context opens: start_with_context is called on the opening thread once the context
// exists and must return at once, the work running on the thread it returns (not joinable when it started none),
// which the context joins when it closes. The family's first request must then wait for that work rather than race
// with it (blas::CublasLtStartup).
//
// A recording (RunRecorded) captures its steps' runs one after another into one CUDA graph, where each kernel that
// reads what the one before wrote costs about 0.7 µs on an H100 before it does anything (PERFORMANCE.md §106). A
// family that can do the work of several such steps in one launch declares a Link: the recording asks each step of a
// run of consecutive steps of that request type for its link, over its resolved views (none: the step runs alone),
// and captures one run_linked of two or more links in place of their runs. run_linked must leave what their runs
// would, each step seeing every earlier one's writes, and may launch as many times as it needs. Steps that need a
// workspace or leave a host result are not linked. A stream links a burst of such requests the same way: those of
// the type queued behind one it takes (Note [Linked bursts], device/cuda/linked_requests.hpp).
//
// Some libraries report on the device whether the work succeeded (cuSOLVER's devInfo: a singular matrix, one
// that is not positive definite); the request's status must say so, and the actor must not wait for the GPU to
// find out. Such a run copies that result, in stream order, into CudaRun::host_result and sets
// CudaRun::check_result, which reads it once the stream work has finished and gives the request its status.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <thread>
#include <vector>

#include "accel/dnn/options.hpp"
#include "accel/graph/options.hpp"
#include "accel/jit/options.hpp"
#include "accel/libs/blas/options.hpp"
#include "operation/cuda_status.hpp"
#include "operation/operation.hpp"

namespace accel {

template <class Request>
struct CudaOperation;  // specialised by each family that runs on CUDA

// State a family keeps per CUDA context or per stream (plan caches, library handles, loaded kernels). It is
// made on first use by `static Result<std::unique_ptr<State>> open(CudaTarget&)`.
class TargetState {
 public:
  virtual ~TargetState() = default;
};

// Type-indexed slots of TargetState, one per state type; made under a lock, read without one after that.
class TargetStates {
 public:
  template <class State>
  [[nodiscard]] static std::size_t index() {
    static const std::size_t kIndex = next_index();
    return kIndex;
  }
  // The state in `slot`, made by `open` the first time.
  template <class Open>
  Result<TargetState*> get(std::size_t slot, Open&& open) {
    std::lock_guard lock(mutex_);
    if (slot >= states_.size()) states_.resize(slot + 1);
    if (states_[slot] == nullptr) {
      Result<std::unique_ptr<TargetState>> made = open();
      if (!made.ok()) return made.status();
      states_[slot] = std::move(*made);
    }
    return states_[slot].get();
  }
  // The state in `slot` if it was made, else null.
  [[nodiscard]] TargetState* find(std::size_t slot) const {
    std::lock_guard lock(mutex_);
    return slot < states_.size() ? states_[slot].get() : nullptr;
  }
  // Destroys the states (they release their library handles).
  void clear() {
    std::lock_guard lock(mutex_);
    states_.clear();
  }
  // Forgets the states without destroying them: after a sticky fault the driver refuses to free anything.
  void abandon() {
    std::lock_guard lock(mutex_);
    for (auto& state : states_) (void)state.release();
    states_.clear();
  }

 private:
  static std::size_t next_index() {
    static std::atomic<std::size_t> next{0};
    return next.fetch_add(1, std::memory_order_relaxed);
  }
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<TargetState>> states_;
};

// One stream of a CUDA device as a family sees it, for planning.
class CudaTarget {
 public:
  virtual ~CudaTarget() = default;

  [[nodiscard]] virtual std::string_view device_name() const noexcept = 0;
  // The options of each family, as the device was opened with them.
  [[nodiscard]] virtual const blas::Options& blas_options() const noexcept = 0;
  [[nodiscard]] virtual const dnn::Options& dnn_options() const noexcept = 0;
  [[nodiscard]] virtual const jit::Options& jit_options() const noexcept = 0;
  [[nodiscard]] virtual const graph::Options& graph_options() const noexcept = 0;
  [[nodiscard]] virtual int compute_capability() const noexcept = 0;
  [[nodiscard]] virtual std::string_view gpu_name() const noexcept = 0;
  [[nodiscard]] virtual cudaStream_t stream() const noexcept = 0;
  [[nodiscard]] virtual cudaMemPool_t pool() const noexcept = 0;
  // A Status for a failed CUDA call; a sticky error poisons the device and the returned error says so.
  [[nodiscard]] virtual Status check(cudaError_t error, std::string_view what) = 0;
  // The stream's scratch memory, at least `bytes` of it; it only grows, and an older one is freed in stream order
  // after the work that used it.
  [[nodiscard]] virtual Result<void*> workspace(std::uint64_t bytes) = 0;
  // Called now and then by a step that waits long on purpose (a compile), so that an isolated worker's
  // supervisor does not take the wait for a hang.
  virtual void keep_alive() = 0;
  // Hands `memory` to `buffer` in place of the memory it has, so that a result a step made in memory of its own need
  // not be copied. `memory` must be `bytes` of this device's pool, allocated on this stream and written in its order;
  // `buffer` must be written by the running request (`write_version`, CudaRun) and used by no request before it
  // since it was allocated, so that no plan, analysis or captured graph holds its old address, and hold exactly
  // `bytes`. True when handed over: the buffer's old memory goes back to the pool in stream order, `memory` is the
  // buffer's, and the request's view of it is stale. False when `buffer` is not such a buffer: nothing changed and
  // `memory` is still the caller's.
  [[nodiscard]] virtual Result<bool> adopt(const BufferHandle& buffer, std::uint64_t write_version, void* memory,
                                           std::uint64_t bytes) = 0;

  // The family's state of this context (shared by its streams) or of this stream.
  template <class State>
  Result<State*> context_state() {
    return state_in<State>(context_states());
  }
  template <class State>
  Result<State*> stream_state() {
    return state_in<State>(stream_states());
  }
  // The same states if a request made them already, else null: what a report (describe) reads, since asking
  // a device what it holds must not open library handles it does not hold.
  template <class State>
  State* existing_context_state() {
    return static_cast<State*>(context_states().find(TargetStates::index<State>()));
  }
  template <class State>
  State* existing_stream_state() {
    return static_cast<State*>(stream_states().find(TargetStates::index<State>()));
  }

 protected:
  virtual TargetStates& context_states() noexcept = 0;
  virtual TargetStates& stream_states() noexcept = 0;

 private:
  template <class State>
  Result<State*> state_in(TargetStates& states) {
    ACCEL_ASSIGN_OR_RETURN(TargetState * state,
                           states.get(TargetStates::index<State>(), [&]() -> Result<std::unique_ptr<TargetState>> {
                             ACCEL_ASSIGN_OR_RETURN(std::unique_ptr<State> made, State::open(*this));
                             return std::unique_ptr<TargetState>(std::move(made));
                           }));
    return static_cast<State*>(state);
  }
};

// Decides a request's status from what its run copied into CudaRun::host_result, once the stream work has
// finished. It runs on the completion thread (or CUDA's callback thread): no CUDA calls, nothing that blocks.
using HostResultCheck = std::function<Status(std::span<const std::byte> host_result)>;

// Whether a family links consecutive steps of its request type (see above).
template <class Request>
concept LinksSteps = requires {
  typename CudaOperation<Request>::Link;
};

// Whether a family's runs leave a result for the host to check (host_result_bytes(plan) of page-locked memory).
template <class Request>
concept HasHostResult = requires(const typename CudaOperation<Request>::Plan& plan) {
  { CudaOperation<Request>::host_result_bytes(plan) } -> std::same_as<std::uint64_t>;
};

// The target while a run is enqueued: the stream's workspace, already reserved for the plan's needs.
struct CudaRun {
  CudaTarget& target;
  void* workspace = nullptr;
  std::uint64_t workspace_bytes = 0;
  // Page-locked host memory, host_result_bytes(plan) of it (empty for families without the step), that the run
  // may copy into in stream order; when it does, it sets check_result.
  std::span<std::byte> host_result;
  HostResultCheck check_result;
  // The version (BufferView::version) that the buffers this request writes will have after it; 0 if not tracked.
  std::uint64_t write_version = 0;
};

// A failed library launch may hide a sticky error of earlier work; that one decides what the device does.
[[nodiscard]] inline Status launch_status(CudaTarget& target, Status launched, std::string_view library) {
  if (launched.ok()) return launched;
  if (cudaError_t pending = cudaPeekAtLastError(); is_sticky(pending)) return target.check(pending, library);
  return launched;
}

}  // namespace accel
