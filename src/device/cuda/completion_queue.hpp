// Completion of GPU work: the reply to a request is sent when its event has completed, with the work's real
// status. One interface, three strategies (CompletionStrategy):
//   poller         a thread per device queries the oldest pending event of each stream, spinning while work is
//                  pending and for a short while after, then sleeping until new work is deferred;
//   host_callback  cudaLaunchHostFunc replies from CUDA's callback thread; the same thread as the poller
//                  watches, at low frequency, for errors that mean the callback will never come;
//   blocking       the caller waits for the event before it goes on (wait()).
// A sticky error seen by any of them poisons the device, and every pending reply is answered context_lost.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <span>
#include <string>

#include "accel/core/future.hpp"
#include "accel/device/requests.hpp"
#include "device/cuda/cuda_resources.hpp"
#include "device/cuda/health.hpp"
#include "operation/cuda_operation.hpp"

namespace accel::device::cuda {

// Enqueued GPU work: the event that completes with it, and what the host does once it has.
struct Submitted {
  EventRef event;
  PinnedBlock staging;               // given back after completion
  void* host_destination = nullptr;  // on success, staging is copied here (a copy to pageable memory)
  std::size_t host_bytes = 0;        // of staging: copied to host_destination, or read by check
  // When set, what the work left in staging decides its status (a library's device-side result, see CudaRun).
  HostResultCheck check;
};

// A request's reply, given when its work has finished.
struct DeferredReply {
  Submitted work;
  Promise<Done> reply;
};

class CompletionQueue {
 public:
  CompletionQueue(CompletionStrategy strategy, std::shared_ptr<Health> health, std::string device_name);
  CompletionQueue(const CompletionQueue&) = delete;
  CompletionQueue& operator=(const CompletionQueue&) = delete;
  // Waits for the pending work to finish and answers it, then ends the thread.
  ~CompletionQueue();

  [[nodiscard]] CompletionStrategy strategy() const noexcept { return strategy_; }

  // poller / host_callback: answers each reply when its work has finished (its event recorded already), taking
  // them all at once. Never blocks on the GPU.
  [[nodiscard]] Status defer(cudaStream_t stream, std::span<DeferredReply> replies);

  // Whether deferred work is still to be answered.
  [[nodiscard]] bool owes_replies() const noexcept;

  // Any strategy: waits on the calling thread for `work`, then finishes it.
  [[nodiscard]] Result<Done> wait(Submitted work);

 private:
  struct State;
  const CompletionStrategy strategy_;
  std::shared_ptr<State> state_;
};

}  // namespace accel::device::cuda
