// cuBLASLt spends 100–130 ms of a process's first call on one-time set-up, whichever call it is (a heuristic query,
// an algorithm check or a matmul with a stored algorithm: bench/device/cuda_startup_bench.cpp on the H100), besides
// the library's load. A CUDA device starts both when it opens, on a thread of its own (CudaOperation<Gemm>::
// start_with_context), so that neither its opener nor its first GEMM pays for them on the caller's path (issue 42:
// 145–484 ms); the compiled graphs run their own matmul kernel until they are over (graph/cuda/cuda_steps.cpp).
//
// They run once per process (OneTimeStart): a GEMM that needs cuBLASLt while they run waits for them rather than
// making cuBLASLt's first call a second time at once, and one that finds them not begun makes them itself.
#pragma once

#include <thread>

#include "accel/core/status.hpp"

namespace accel::blas {

class CublasLtStartup {
 public:
  // Starts the load and first call on a thread of its own, with `device` current on it, unless this process has
  // begun them already (then the thread is not joinable). The thread is the caller's: destroying it waits for them.
  [[nodiscard]] static std::jthread begin(int device);
  // Their status once they are over: made here (on `device`, the caller's current device) if nothing began them,
  // waited for while they run on another thread. A failure to load shows again, with its reason, on the call that
  // needs cuBLASLt.
  [[nodiscard]] static Status run_or_wait(int device);
  // Whether they are over (from this thread or any other), so that the next call costs what a call costs.
  [[nodiscard]] static bool done() noexcept;
  // Whether they have begun and are not over. While they run, a stream capture on another thread may be invalidated
  // by what they do on the device (docs/PERFORMANCE.md §66), so the compiled graphs do not capture meanwhile.
  [[nodiscard]] static bool running() noexcept;
};

}  // namespace accel::blas
