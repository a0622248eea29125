// Completion of GPU work: the reply to a request is sent when its event has completed, with the work's real
// status. One interface, three strategies (CompletionStrategy):
//   poller         a thread per device queries the oldest pending event of each stream, spinning while work is
//                  pending and for a short while after, then sleeping until new work is deferred; work with a done
//                  word (done_words.hpp) is seen finished by the word, its event queried only now and then;
//   host_callback  cudaLaunchHostFunc replies from CUDA's callback thread; the same thread as the poller
//                  watches, at low frequency, for errors that mean the callback will never come;
//   blocking       the caller waits for the event before it goes on (wait()).
// A sticky error seen by any of them poisons the device, and every pending reply is answered context_lost.
#pragma once

#include <cuda_runtime.h>

#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "accel/core/future.hpp"
#include "accel/device/requests.hpp"
#include "device/cuda/cuda_resources.hpp"
#include "device/cuda/done_words.hpp"
#include "device/cuda/health.hpp"
#include "operation/cuda_operation.hpp"

namespace accel::device::cuda {

// Enqueued GPU work: the event that completes with it, and what the host does once it has.
struct Submitted {
  EventRef event;
  DoneWord done;        // when set (poller only), seen reached before the event is queried (done_words.hpp)
  PinnedBlock staging;  // given back after completion
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
  struct Pending;  // a deferred reply and its work, answered once (completion_queue.cpp)
  using PendingQueue = std::deque<std::shared_ptr<Pending>>;  // one stream's, in submission (= completion) order

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

  // Whether deferred work is still to be answered, the work streams watch themselves included.
  [[nodiscard]] bool owes_replies() const noexcept;

  // Deferred work a stream's own thread watches while it waits for its next request (poller only, Note [Watching
  // one's own work] in cuda_stream.hpp): it answers what has finished, and hands the rest to the queue's thread
  // before it runs another request or sleeps. Owned and used by that thread alone.
  class Watched {
   public:
    explicit Watched(CompletionQueue& queue) : queue_(queue) {}
    Watched(const Watched&) = delete;
    Watched& operator=(const Watched&) = delete;
    ~Watched() { hand_over(); }

    // Takes over the replies to work on `stream` (always the same one), their work's event recorded already.
    void add(cudaStream_t stream, std::span<DeferredReply> replies);
    // Answers the replies whose work has finished, oldest first; never blocks on the GPU. A sticky error poisons the
    // device and answers every watched reply with it.
    void answer_finished();
    // The replies not answered yet go to the queue's thread.
    void hand_over();
    [[nodiscard]] bool empty() const noexcept { return pending_.empty(); }

   private:
    CompletionQueue& queue_;
    cudaStream_t stream_ = nullptr;
    PendingQueue pending_;
  };

  // Any strategy: waits on the calling thread for `work`, then finishes it.
  [[nodiscard]] Result<Done> wait(Submitted work);

 private:
  struct State;
  // Answers the finished work at the front of one stream's queue, in order; returns whether it answered any. A
  // query's failure that poisons the device is left in `lost`, the rest of the queue unanswered.
  static bool answer_front(PendingQueue& queue, CompletionStrategy strategy, std::string_view device_name,
                           Status& lost);
  // Answers every reply of `queue` not answered yet with `reply` (a poisoned device's), and empties it.
  static void fail_all(PendingQueue& queue, const Status& reply);
  // A reply and its work taken over, counted as owed.
  std::shared_ptr<Pending> pending_of(DeferredReply& deferred);
  // Gives `taken` (a range of std::shared_ptr<Pending>, moved from) to the queue's thread.
  template <class Pendings>
  void hand_to_thread(cudaStream_t stream, Pendings& taken);

  const CompletionStrategy strategy_;
  std::shared_ptr<State> state_;
};

}  // namespace accel::device::cuda
