// Timing a plan's candidate algorithms. cuBLASLt's heuristic ranks its algorithms by a model of the GPU, and for
// the encoders' narrow products (k = 384-1,536 against 16,384 rows) its first choice was up to 15 % slower than
// another it offered (docs/PERFORMANCE.md §60). So the run that CublasLtGemm::Timing picks runs every candidate on
// the run's own operands and keeps the fastest, as cuDNN's autotuner and PyTorch's TunableOp do.
//
// Each candidate is timed as a CUDA graph of back-to-back launches, entered while the same graph runs before it, so
// no host time lies between its kernels: what a recorded chain or a compiled graph's replay pays. Launched one by one
// from the host, candidates of 7-9 µs on the GPU (256³ f32) all timed 9.4-12 µs, the host's launch rate; the one picked
// by that noise cost 1.2 µs more a GEMM in a recorded chain than another timed level with it (PERFORMANCE.md §90).
//
// Only a run that may repeat itself is timed: beta = 0 (D = epilogue(alpha A B), so running it again writes the
// same D), or a C apart from D (a residual read, never written); with beta != 0 and D over C each run would add to D
// again. And a stream not capturing a graph (timing waits for the GPU). The real run follows with the chosen algorithm,
// so what the caller receives is one run's output.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "libs/blas/cublaslt_gemm.hpp"
#include "libs/blas/cublaslt_plan.hpp"
#include "operation/cuda_status.hpp"

namespace accel::blas {
namespace {

// A measurement should span at least this much GPU time, so the events' resolution (~0.5 µs) stays small.
constexpr float kMeasureMicroseconds = 50.0f;
constexpr int kMostRepeats = 20;
// A product this slow is timed once per candidate: its own length dwarfs the noise, and more rounds would stall
// the stream's first request for too long.
constexpr float kOneRoundMicroseconds = 2000.0f;
constexpr int kRounds = 3;
// A product this slow keeps the heuristic's choice untimed: timing its candidates would hold the first request for
// dozens of its own lengths, and for the large products (4,096³ and up) the heuristic's choice was within 1-10 % of
// the best.
constexpr float kLongestTimedMicroseconds = 3000.0f;
// Another candidate replaces the heuristic's choice only when it is clearly faster, not by noise.
constexpr double kSwitchBelow = 0.98;

class EventPair {
 public:
  EventPair() = default;
  ~EventPair() {
    if (start_ != nullptr) cudaEventDestroy(start_);
    if (stop_ != nullptr) cudaEventDestroy(stop_);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;

  Status create() {
    ACCEL_RETURN_IF_ERROR(cuda_status(cudaEventCreate(&start_), "creating an event to time cuBLASLt's algorithms"));
    return cuda_status(cudaEventCreate(&stop_), "creating an event to time cuBLASLt's algorithms");
  }
  cudaEvent_t start() const { return start_; }
  cudaEvent_t stop() const { return stop_; }

 private:
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

// `repeats` launches of one candidate, captured on the stream into an executable graph.
class CandidateGraph {
 public:
  CandidateGraph() = default;
  ~CandidateGraph() {
    if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
  }
  CandidateGraph(CandidateGraph&& other) noexcept : exec_(std::exchange(other.exec_, nullptr)) {}
  CandidateGraph& operator=(CandidateGraph&&) = delete;
  CandidateGraph(const CandidateGraph&) = delete;
  CandidateGraph& operator=(const CandidateGraph&) = delete;

  template <class Launch>
  Status capture(cudaStream_t stream, int repeats, const Launch& launch) {
    ACCEL_RETURN_IF_ERROR(cuda_status(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
                                      "capturing a cuBLASLt algorithm to time it"));
    cublasStatus_t launched = CUBLAS_STATUS_SUCCESS;
    for (int r = 0; r < repeats && launched == CUBLAS_STATUS_SUCCESS; ++r) launched = launch();
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
    Status status = cublas_status(launched, "cublasLtMatmul (captured to time it)");
    if (status.ok()) status = cuda_status(ended, "capturing a cuBLASLt algorithm to time it");
    if (status.ok()) status = cuda_status(cudaGraphInstantiate(&exec_, graph, 0), "instantiating a timing graph");
    if (status.ok()) status = cuda_status(cudaGraphUpload(exec_, stream), "uploading a timing graph");
    if (graph != nullptr) cudaGraphDestroy(graph);
    return status;
  }
  [[nodiscard]] cudaGraphExec_t exec() const { return exec_; }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace

Status CublasLtGemm::time_candidates(const Plan& plan, const LtOperands& ops, cudaStream_t stream) const {
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  ACCEL_RETURN_IF_ERROR(cuda_status(cudaStreamIsCapturing(stream, &capturing),
                                    "asking whether the stream captures before timing cuBLASLt's algorithms"));
  if (capturing != cudaStreamCaptureStatusNone) return Status();  // a later uncaptured run times it

  const auto launch = [&](const cublasLtMatmulAlgo_t& algo) { return matmul(plan, ops, algo, stream); };
  EventPair events;
  ACCEL_RETURN_IF_ERROR(events.create());
  // The GPU time between the events around `enqueue`, over `repeats`.
  const auto elapsed = [&](const auto& enqueue, int repeats) -> Result<float> {
    ACCEL_RETURN_IF_ERROR(cuda_status(cudaEventRecord(events.start(), stream), "timing cuBLASLt's algorithms"));
    ACCEL_RETURN_IF_ERROR(enqueue());
    ACCEL_RETURN_IF_ERROR(cuda_status(cudaEventRecord(events.stop(), stream), "timing cuBLASLt's algorithms"));
    ACCEL_RETURN_IF_ERROR(cuda_status(cudaEventSynchronize(events.stop()), "waiting for a timed cuBLASLt algorithm"));
    float milliseconds = 0;
    ACCEL_RETURN_IF_ERROR(cuda_status(cudaEventElapsedTime(&milliseconds, events.start(), events.stop()),
                                      "timing cuBLASLt's algorithms"));
    return milliseconds * 1000.0f / static_cast<float>(repeats);
  };
  // One launch of `algo`, timed.
  const auto once = [&](const cublasLtMatmulAlgo_t& algo) {
    return elapsed([&] { return cublas_status(launch(algo), "cublasLtMatmul"); }, 1);
  };
  const auto launch_graph = [&](const CandidateGraph& graph) {
    return cuda_status(cudaGraphLaunch(graph.exec(), stream), "launching a timing graph");
  };

  // Each candidate runs once untimed (its first launch may load its kernel's module); one cuBLASLt refuses for
  // these operands drops out. The heuristic's choice goes first: a product that long keeps it untimed.
  std::vector<const cublasLtMatmulAlgo_t*> runnable;
  float first = 0;
  if (launch(plan.candidates.front()) == CUBLAS_STATUS_SUCCESS) {
    runnable.push_back(&plan.candidates.front());
    ACCEL_ASSIGN_OR_RETURN(first, once(plan.candidates.front()));
    if (first >= kLongestTimedMicroseconds) {
      plan.timed = true;
      return Status();
    }
  }
  for (std::size_t i = 1; i < plan.candidates.size(); ++i)
    if (launch(plan.candidates[i]) == CUBLAS_STATUS_SUCCESS) runnable.push_back(&plan.candidates[i]);
  if (runnable.empty()) return cublas_status(launch(plan.candidates.front()), "cublasLtMatmul");
  if (runnable.front() != &plan.candidates.front()) {
    ACCEL_ASSIGN_OR_RETURN(first, once(*runnable.front()));
  }
  const int repeats =
      std::clamp(static_cast<int>(std::ceil(kMeasureMicroseconds / std::max(first, 0.1f))), 1, kMostRepeats);
  const int rounds = first >= kOneRoundMicroseconds ? 1 : kRounds;
  std::vector<CandidateGraph> graphs(runnable.size());
  for (std::size_t i = 0; i < runnable.size(); ++i) {
    if (!graphs[i].capture(stream, repeats, [&] { return launch(*runnable[i]); }).ok()) {
      // Timing is only a choice between algorithms that all work: the heuristic's stays, and the run that follows
      // reports any error of the stream's.
      (void)cudaGetLastError();
      plan.timed = true;
      return Status();
    }
  }
  // Rounds interleave the candidates, so a clock that drifts during the timing favours none of them. A short graph
  // is launched once untimed first, so the GPU is still busy with it while the host enqueues the timed one.
  std::vector<float> best(runnable.size(), std::numeric_limits<float>::infinity());
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t i = 0; i < runnable.size(); ++i) {
      if (repeats > 1) ACCEL_RETURN_IF_ERROR(launch_graph(graphs[i]));
      ACCEL_ASSIGN_OR_RETURN(const float microseconds, elapsed([&] { return launch_graph(graphs[i]); }, repeats));
      best[i] = std::min(best[i], microseconds);
    }
  }
  const auto fastest = static_cast<std::size_t>(std::min_element(best.begin(), best.end()) - best.begin());
  const bool heuristic_ran = runnable.front() == &plan.candidates.front();
  const bool clearly_faster = !heuristic_ran || best[fastest] < kSwitchBelow * best.front();
  plan.algo = clearly_faster ? *runnable[fastest] : plan.candidates.front();
  plan.timed = true;
  return Status();
}

}  // namespace accel::blas
