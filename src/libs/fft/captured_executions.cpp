#include "libs/fft/captured_executions.hpp"

#include <algorithm>

#include "operation/cuda_status.hpp"

namespace accel::fft {

CacheStats CaptureCounters::stats() const {
  CacheStats s{.name = "cufft-graphs"};
  s.hits = launches.load(std::memory_order_relaxed);
  s.misses = plain.load(std::memory_order_relaxed);
  s.builds = captures.load(std::memory_order_relaxed);
  s.build_failures = capture_failures.load(std::memory_order_relaxed);
  s.evictions = evictions.load(std::memory_order_relaxed);
  s.entries = graphs.load(std::memory_order_relaxed);
  return s;
}

CapturedExecutions::~CapturedExecutions() {
  for (Captured& c : captured_) {
    if (c.graph == nullptr) continue;
    (void)cudaGraphExecDestroy(c.graph);
    counters_->graphs.fetch_sub(1, std::memory_order_relaxed);
  }
}

Status CapturedExecutions::run(const ExecutionKey& key, const Execution& execution) {
  // Inside another capture (a recording's, device/run_recorded.hpp) the execution is captured there: a capture
  // cannot begin another, and the outer graph is what is launched again.
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream_, &capturing) == cudaSuccess && capturing != cudaStreamCaptureStatusNone) {
    return execution.enqueue();
  }
  for (Captured& c : captured_) {
    if (c.graph != nullptr && c.key == key) return launch(c);
  }
  auto recent = std::find_if(recent_plain_.begin(), recent_plain_.end(), [&](const Recent& r) { return r.key == key; });
  if (capture_refused_ || recent == recent_plain_.end() || recent->runs < kRunsBeforeCapture) {
    if (recent != recent_plain_.end()) {
      ++recent->runs;
    } else {
      recent_plain_[next_plain_] = Recent{.key = key, .runs = 1};
      next_plain_ = (next_plain_ + 1) % kRecentPlain;
    }
    counters_->plain.fetch_add(1, std::memory_order_relaxed);
    return execution.enqueue();
  }
  recent->runs = 0;
  cudaGraphExec_t graph = capture(execution);
  if (graph == nullptr) {
    capture_refused_ = true;
    counters_->capture_failures.fetch_add(1, std::memory_order_relaxed);
    counters_->plain.fetch_add(1, std::memory_order_relaxed);
    return execution.enqueue();
  }
  counters_->captures.fetch_add(1, std::memory_order_relaxed);
  Captured& slot = slot_for_new();
  slot = Captured{.key = key, .graph = graph};
  counters_->graphs.fetch_add(1, std::memory_order_relaxed);
  return launch(slot);
}

Status CapturedExecutions::launch(Captured& captured) {
  captured.last_launch = ++launches_;
  counters_->launches.fetch_add(1, std::memory_order_relaxed);
  return cuda_status(cudaGraphLaunch(captured.graph, stream_), "launching cuFFT's captured execution");
}

cudaGraphExec_t CapturedExecutions::capture(const Execution& execution) {
  // Thread-local: other threads' calls are not part of the capture and are not refused because of it.
  if (cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  const Status enqueued = execution.enqueue();
  cudaGraph_t captured = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream_, &captured);
  cudaGraphExec_t graph = nullptr;
  if (enqueued.ok() && ended == cudaSuccess && cudaGraphInstantiate(&graph, captured, 0) != cudaSuccess) {
    graph = nullptr;
  }
  if (captured != nullptr) (void)cudaGraphDestroy(captured);
  if (graph == nullptr) (void)cudaGetLastError();  // a refused capture is not the next call's error
  return graph;
}

CapturedExecutions::Captured& CapturedExecutions::slot_for_new() {
  Captured* oldest = &captured_[0];
  for (Captured& c : captured_) {
    if (c.graph == nullptr) return c;
    if (c.last_launch < oldest->last_launch) oldest = &c;
  }
  (void)cudaGraphExecDestroy(oldest->graph);  // freed when it finishes, if in flight
  counters_->graphs.fetch_sub(1, std::memory_order_relaxed);
  counters_->evictions.fetch_add(1, std::memory_order_relaxed);
  oldest->graph = nullptr;
  return *oldest;
}

}  // namespace accel::fft
