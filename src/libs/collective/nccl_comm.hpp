// One rank's NCCL communicator on a CUDA device, and the device's table of them (a context state: with isolated
// devices it lives in the worker, like every family's state).
//
// No NCCL call may hold a thread forever waiting for a peer, so every call that can wait for one goes through a
// non-blocking communicator (ncclConfig_t::blocking = 0): joining the world, connecting a first send/recv, a
// finalisation. They return ncclInProgress and are polled until done, up to the communicator's timeout. But a
// non-blocking communicator also launches every collective from a new thread of NCCL's own, which cost 60 us a
// collective on the H200s (docs/PERFORMANCE.md), twice what PyTorch's blocking ones take. So each rank holds two
// communicators of one world: `safe`, non-blocking, made first, and `fast`, a blocking one split from it
// (ncclCommSplit, asking NCCL to share safe's resources with splitShare). NCCL_RUNTIME_CONNECT=0 makes NCCL connect
// the collectives' channels while the world is joined, so a collective on `fast` only enqueues its kernels and
// never waits for a peer on the host; the price is memory: the pair took 1672 MiB of each H200 in a world of two.
// Groups with sends or receives, whose connections NCCL makes on their first use, go to `safe`. A communicator made
// with InitComm::blocking_collectives = false has no `fast` and runs everything on `safe`: 928 MiB instead of 1670
// on each H200 of a world of two, and 83-115 us a small all-reduce instead of 16-22 (docs/PERFORMANCE.md §49).
//
// Every launched collective is followed by an event; a watchdog thread per device polls ncclCommGetAsyncError and
// the oldest unfinished collective of each communicator. On an NCCL error, or when that collective has not finished
// `timeout` after it became the oldest, the watchdog marks every pending collective failed and then aborts both
// communicators, whose kernels then end; their completion (CudaRun::check_result) reads the mark and answers with
// the cause. Marking before aborting is what keeps a collective that ended because of the abort from passing for
// one that finished.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>

#include "accel/libs/collective/collective.hpp"
#include "operation/cuda_operation.hpp"

namespace accel::collective {

[[nodiscard]] Status nccl_status(ncclResult_t result, std::string_view what, ncclComm_t comm = nullptr);
[[nodiscard]] Result<ncclDataType_t> to_nccl(DType dtype);
[[nodiscard]] ncclRedOp_t to_nccl(ReduceOp op) noexcept;

// A collective launched and not yet seen finished by the watchdog.
struct Pending {
  cudaEvent_t done = nullptr;
  std::chrono::steady_clock::time_point since;  // launched, or became the oldest
  std::atomic<bool> failed{false};
  Status failure;  // written before `failed` is set
};

class NcclComm {
 public:
  using Clock = std::chrono::steady_clock;
  // `split`: collectives on a blocking communicator split from the non-blocking one (InitComm::blocking_collectives).
  NcclComm(Comm comm, int device, std::chrono::milliseconds timeout, bool split)
      : comm_(comm), device_(device), timeout_(timeout), split_(split) {}
  ~NcclComm();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  // Joins the world (ncclCommInitRankConfig, non-blocking) and waits for it, calling keep_alive while it does.
  [[nodiscard]] Status init(const UniqueId& id, CudaTarget& target);
  // Calls `launch` (the NCCL calls of one request, on the stream) under the communicator's lock, on `safe` where
  // the request sends or receives, else on `fast`; waits out an ncclInProgress, records the completion event and
  // sets run.check_result to answer with the pending outcome.
  template <class Launch>
  [[nodiscard]] Status run(std::string_view request, CudaRun& run, bool point_to_point, Launch&& launch) {
    std::unique_lock lock(mutex_);
    ACCEL_RETURN_IF_ERROR(usable(request));
    ncclComm_t comm = point_to_point || !split_ ? safe_ : fast_;
    ACCEL_RETURN_IF_ERROR(settle(lock, comm, launch(comm), request, run.target));
    return track(run);
  }
  // Finalises and destroys it (or forgets an aborted one).
  [[nodiscard]] Status destroy(CudaTarget& target);
  // The watchdog's round: retires finished collectives, aborts on an NCCL error or a timeout.
  void watch();
  // OK while it can take collectives; stale_handle naming the abort's cause after.
  [[nodiscard]] Status usable(std::string_view request) const;
  [[nodiscard]] const Comm& comm() const noexcept { return comm_; }

 private:
  // Waits while `result` is ncclInProgress (as `comm` reports it, once NCCL has written the handle); a timeout
  // aborts.
  Status settle(std::unique_lock<std::mutex>& lock, ncclComm_t& comm, ncclResult_t result, std::string_view what,
                CudaTarget& target);
  Status track(CudaRun& run);
  // With the lock held: marks the pending collectives failed with `cause`, then aborts.
  void abort_locked(const Status& cause);

  const Comm comm_;
  const int device_;
  const std::chrono::milliseconds timeout_;
  const bool split_;
  mutable std::mutex mutex_;
  ncclComm_t safe_ = nullptr;  // non-blocking
  ncclComm_t fast_ = nullptr;  // blocking, split from safe_; null unless split_
  Status failure_;             // why it was aborted
  std::deque<std::shared_ptr<Pending>> pending_;
  std::vector<cudaEvent_t> spare_events_;
};

// The communicators of one CUDA device (context), by id, and their watchdog.
class NcclComms final : public TargetState {
 public:
  static Result<std::unique_ptr<NcclComms>> open(CudaTarget& target);
  ~NcclComms() override;

  [[nodiscard]] Status init(const InitComm& request, CudaTarget& target);
  [[nodiscard]] Status destroy(const Comm& comm, CudaTarget& target);
  [[nodiscard]] Result<std::shared_ptr<NcclComm>> find(std::string_view request, const Comm& comm);

 private:
  explicit NcclComms(int device);
  void watch_loop();

  const int device_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::map<std::uint64_t, std::shared_ptr<NcclComm>> comms_;
  std::thread watchdog_;
};

}  // namespace accel::collective
