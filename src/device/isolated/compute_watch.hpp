// A CPU worker's heartbeat while a request computes. The serving thread stamps the heartbeat between requests, but a
// request may compute for longer than WorkerOptions::heartbeat_timeout (a graph of many steps, or one library call
// with no point inside it to stamp from: an OpenBLAS GEMM, a LAPACK factorisation, an FFTW transform), and the
// supervisor would kill a healthy worker and fail its request. A hung worker waits (a deadlock, a thread stopped for
// good) and uses no processor time; a computing one uses it. So a thread of the worker looks at the process's
// processor time once an interval and stamps the heartbeat for it while that time grew by a quarter of the interval
// or more. The price: a worker spinning for ever is not found. Only CPU workers run one: a CUDA worker's long calls
// wait on the GPU, using no processor time, and stamp through keep_alive where they may be long (JIT compiles,
// NCCL's set-up).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace accel::device::isolated {

class ComputeWatch {
 public:
  // Looks every `interval` (at least 1 ms) and stamps `heartbeat_ns` (CLOCK_MONOTONIC) while the process computes.
  ComputeWatch(std::atomic<std::int64_t>& heartbeat_ns, std::chrono::milliseconds interval);
  ComputeWatch(const ComputeWatch&) = delete;
  ComputeWatch& operator=(const ComputeWatch&) = delete;
  ~ComputeWatch();  // stops the thread and joins it

  // The processor time of every thread of this process, in ns.
  [[nodiscard]] static std::int64_t process_cpu_ns() noexcept;

 private:
  void watch(std::chrono::milliseconds interval);

  std::atomic<std::int64_t>& heartbeat_ns_;
  std::mutex mutex_;
  std::condition_variable stop_requested_;
  bool stopping_ = false;  // guarded by mutex_
  std::thread thread_;
};

}  // namespace accel::device::isolated
