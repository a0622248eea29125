// A process's one-time start-up of a vendor library — cuBLASLt's load and first call, 100-130 ms once per process
// (docs/PERFORMANCE.md) — begun ahead of need on a thread of its own, and waited for by whoever needs it meanwhile.
//
// The work runs exactly once, on whichever path reaches it first: begin() (a device that has just opened, the
// compiled graphs) starts it on a thread; run_or_wait() (the request that needs the library) runs it on the caller's
// thread if nothing began it, waits while it runs elsewhere, and answers its status at once after that. So the
// library's first call never runs twice at the same time, and no caller goes on before it has returned.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "accel/core/status.hpp"

namespace accel {

class OneTimeStart {
 public:
  using Work = std::function<Status()>;

  OneTimeStart() = default;
  OneTimeStart(const OneTimeStart&) = delete;
  OneTimeStart& operator=(const OneTimeStart&) = delete;

  // Starts `work` on a thread of its own unless it has begun already (here or in run_or_wait). The thread is the
  // caller's to keep, joined when it is destroyed (before this object is); not joinable when nothing was started.
  [[nodiscard]] std::jthread begin(Work work);
  // The work's status: it runs here if it has not begun; while it runs elsewhere, this waits for it to finish.
  [[nodiscard]] Status run_or_wait(const Work& work);
  // Whether the work has finished, without waiting or locking (a compiled graph asks on every run).
  [[nodiscard]] bool finished() const noexcept { return stage_.load(std::memory_order_acquire) == Stage::finished; }
  // Whether the work has begun and not finished, likewise.
  [[nodiscard]] bool running() const noexcept { return stage_.load(std::memory_order_acquire) == Stage::running; }

 private:
  enum class Stage { not_begun, running, finished };
  // Marks the work begun; false if it had begun already.
  bool claim();
  void finish(Status status);

  mutable std::mutex mutex_;
  std::condition_variable finished_cv_;
  std::atomic<Stage> stage_{Stage::not_begun};  // changed under mutex_; read without it by finished() and running()
  Status status_;                               // the work's, once finished
};

}  // namespace accel
