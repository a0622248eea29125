// cuBLASLt spends 100–130 ms of a process's first call on one-time set-up, whichever call it is (a heuristic query,
// an algorithm check or a matmul with a stored algorithm: bench/device/cuda_startup_bench.cpp on the H100). A
// CublasLtStartup makes that first call on a thread of its own, so that work able to do without cuBLASLt meanwhile
// (the compiled graphs' own matmul kernel, graph/cuda/cuda_steps.cpp) need not wait for it.
#pragma once

#include <memory>
#include <thread>

namespace accel::blas {

class CublasLtStartup {
 public:
  // Starts the thread, with `device` current on it, unless this process has begun one already (then null).
  [[nodiscard]] static std::unique_ptr<CublasLtStartup> begin(int device);
  // Joins the thread.
  ~CublasLtStartup();
  CublasLtStartup(const CublasLtStartup&) = delete;
  CublasLtStartup& operator=(const CublasLtStartup&) = delete;

  // Whether cuBLASLt's first call in this process has returned (from this thread or any other), so that the next
  // one costs what a call costs.
  [[nodiscard]] static bool done() noexcept;

 private:
  explicit CublasLtStartup(int device);
  std::thread thread_;
};

}  // namespace accel::blas
