// How the GPU kernel benchmarks time a call: back to back on one stream between two CUDA events, so that the host's
// launch cost hides behind the GPU's work, per call, the median of several rounds after a warm-up.
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "common/csv_report.hpp"
#include "common/cuda_checks.hpp"

namespace accel::bench {

// Microseconds per call of `call` (which enqueues on `stream` and returns its launch's cudaError_t, checked as
// `what`): `reps` calls between two events, the median of 7 rounds, after 20 calls of warm-up.
template <class Call>
double median_us_per_call(cudaStream_t stream, int reps, const char* what, Call call) {
  cudaEvent_t start, stop;
  check_cuda(cudaEventCreate(&start), "cudaEventCreate");
  check_cuda(cudaEventCreate(&stop), "cudaEventCreate");
  for (int i = 0; i < 20; ++i) check_cuda(call(), what);
  std::vector<double> rounds;
  for (int round = 0; round < 7; ++round) {
    check_cuda(cudaEventRecord(start, stream), "cudaEventRecord");
    for (int i = 0; i < reps; ++i) check_cuda(call(), what);
    check_cuda(cudaEventRecord(stop, stream), "cudaEventRecord");
    check_cuda(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    rounds.push_back(ms * 1e3 / reps);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return percentile(rounds, 0.5);
}

}  // namespace accel::bench
