// cuFFT's execution of one plan over one set of addresses in one direction, captured once as a CUDA graph and launched
// from then on. On the H100 a 256 x 64 c2c f32 transform costs the host 2.0 µs as a graph launch against 4.1-4.4 µs
// through cufftExecC2C, and its latency falls from 10.4-10.8 to 7.8-8.0 µs (docs/PERFORMANCE.md, section 26).
//
// A capture costs the host 60 µs (18 to capture, 42-45 to instantiate; 400 µs for the first in a process), which
// about 26 graph launches win back, so an execution is captured on its fourth run among the last four executions that
// ran plainly: a caller who passes new buffers each time, or repeats a transform two or three times, pays for no
// capture, and one that alternates between buffers (a ping-pong) gets graphs.
// A plan keeps a few graphs, the least recently launched giving way, and they die with it: a graph holds the plan's own
// device memory (twiddle factors), so it must never outlive the plan. Replaying a graph is the execution it captured:
// the plan (one geometry), the operand addresses, the work area and the direction are all fixed by its key
// (ExecutionKey), and the contents it reads are read at launch. Where a capture fails, the plan executes plainly from
// then on (counted as a build failure). Only the plan's stream's thread runs a plan; the counters are read by device
// reports from any thread.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>

#include "accel/core/cache_stats.hpp"
#include "accel/core/result.hpp"

namespace accel::fft {

// What a stream's plans did with their executions: "cufft-graphs", hits the graph launches, misses the plain
// executions, builds the captures.
struct CaptureCounters {
  std::atomic<std::uint64_t> launches{0};
  std::atomic<std::uint64_t> plain{0};
  std::atomic<std::uint64_t> captures{0};
  std::atomic<std::uint64_t> capture_failures{0};
  std::atomic<std::uint64_t> evictions{0};
  std::atomic<std::uint64_t> graphs{0};  // held now

  [[nodiscard]] CacheStats stats() const;
};

// What an execution of one plan captures besides the plan: its addresses and its direction (cuFFT takes the
// direction at execution, so one plan serves both, cufft_plans.hpp).
struct ExecutionKey {
  void* input = nullptr;
  void* output = nullptr;
  void* work = nullptr;  // null when the plan takes none
  int direction = 0;
  friend bool operator==(const ExecutionKey&, const ExecutionKey&) = default;
};

class CapturedExecutions {
 public:
  // Enqueues one execution on the stream; what a plan passes to run().
  class Execution {
   public:
    virtual ~Execution() = default;
    [[nodiscard]] virtual Status enqueue() const = 0;
  };

  CapturedExecutions(cudaStream_t stream, std::shared_ptr<CaptureCounters> counters) noexcept
      : stream_(stream), counters_(std::move(counters)) {}
  // Destroys the graphs; one still in flight is freed when it finishes.
  ~CapturedExecutions();
  CapturedExecutions(const CapturedExecutions&) = delete;
  CapturedExecutions& operator=(const CapturedExecutions&) = delete;

  // Runs `execution`, described by `key`, on the stream: its graph launched, or captured and launched, or enqueued.
  [[nodiscard]] Status run(const ExecutionKey& key, const Execution& execution);

 private:
  struct Captured {
    ExecutionKey key;
    cudaGraphExec_t graph = nullptr;
    std::uint64_t last_launch = 0;
  };
  static constexpr std::size_t kGraphsPerPlan = 4;
  static constexpr std::size_t kRecentPlain = 4;
  static constexpr int kRunsBeforeCapture = 3;

  Status launch(Captured& captured);
  // One execution captured into a graph, nothing enqueued; null where cuFFT or CUDA refused any step of it (the
  // execution then runs plainly, and gives its own error if it has one).
  cudaGraphExec_t capture(const Execution& execution);
  Captured& slot_for_new();

  cudaStream_t stream_;
  std::shared_ptr<CaptureCounters> counters_;
  std::array<Captured, kGraphsPerPlan> captured_{};
  // The last executions that ran plainly and how often each did, the oldest overwritten first; an unused entry
  // (null addresses) matches none.
  struct Recent {
    ExecutionKey key;
    int runs = 0;
  };
  std::array<Recent, kRecentPlain> recent_plain_{};
  std::size_t next_plain_ = 0;
  bool capture_refused_ = false;
  std::uint64_t launches_ = 0;
};

}  // namespace accel::fft
