// The streamed Gemv kernels (launch_streamed_gemv) at every split count of a few shapes, beside the split that
// streamed_gemv_split chooses: µs a Gemv back to back on one stream (the GPU's time: the host's two launches hide
// behind it) and one launch waited on at once, and y's largest difference from the chosen split's. What the split's
// bounds (kBlocksEnough, kBlocksWanted, the split floors) were chosen by (PERFORMANCE.md §99). Prints CSV rows:
// part,case,variant,metric,value.
//
//   streamed_gemv_bench
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/csv_report.hpp"
#include "common/cuda_timing.hpp"
#include "common/direct_gemm.hpp"
#include "libs/blas/blas_kernels.hpp"

namespace {

using namespace accel;
using bench::check_cuda;
using Clock = std::chrono::steady_clock;

constexpr int kReps = 200;
constexpr int kLatencyRuns = 500;

struct Shape {
  DType dtype;
  std::int64_t m, n;
  bool transpose;
};

// A split of `splits` parts as streamed_gemv_split lays one out; none where the rounding leaves fewer parts than asked,
// which another count in the sweep covers.
blas::StreamedGemvSplit split_of(const Shape& s, std::int64_t splits) {
  const std::int64_t per_load = blas::streamed_shape::kLoadBytes / static_cast<std::int64_t>(size_of(s.dtype));
  const std::int64_t length = s.transpose ? s.n : s.m, terms = s.transpose ? s.m : s.n;
  const blas::StreamedGemvSplit split =
      blas::split_sums(terms, splits, s.transpose ? per_load : 1, static_cast<std::uint64_t>(length) * sizeof(float));
  return split.splits == splits ? split : blas::StreamedGemvSplit{};
}

std::vector<float> download_y(const void* y, std::int64_t count, DType dtype) {
  std::vector<std::byte> bytes(static_cast<std::size_t>(count) * size_of(dtype));
  check_cuda(cudaMemcpy(bytes.data(), y, bytes.size(), cudaMemcpyDeviceToHost), "download y");
  std::vector<float> values(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::f32) {
      std::memcpy(&values[i], bytes.data() + i * 4, 4);
    } else if (dtype == DType::f16) {
      Half h;
      std::memcpy(&h, bytes.data() + i * 2, 2);
      values[i] = to_float(h);
    } else {
      BFloat16 b;
      std::memcpy(&b, bytes.data() + i * 2, 2);
      values[i] = to_float(b);
    }
  }
  return values;
}

void run_shape(const Shape& s, cudaStream_t stream, std::mt19937_64& rng) {
  const std::string name = fmt::format("{}x{} {}{}", s.m, s.n, to_string(s.dtype), s.transpose ? " transposed" : "");
  const std::int64_t rows_of_y = s.transpose ? s.n : s.m, length_of_x = s.transpose ? s.m : s.n;
  const std::vector<std::byte> a_host = bench::random_elements(s.dtype, static_cast<std::size_t>(s.m * s.n), rng);
  const std::vector<std::byte> x_host = bench::random_elements(s.dtype, static_cast<std::size_t>(length_of_x), rng);
  void *a = nullptr, *x = nullptr, *y = nullptr, *workspace = nullptr;
  check_cuda(cudaMalloc(&a, a_host.size()), "malloc A");
  check_cuda(cudaMalloc(&x, x_host.size()), "malloc x");
  check_cuda(cudaMalloc(&y, static_cast<std::size_t>(rows_of_y) * size_of(s.dtype)), "malloc y");
  check_cuda(cudaMemcpy(a, a_host.data(), a_host.size(), cudaMemcpyHostToDevice), "upload A");
  check_cuda(cudaMemcpy(x, x_host.data(), x_host.size(), cudaMemcpyHostToDevice), "upload x");
  blas::GemvLaunch launch;
  launch.element = s.dtype == DType::f32   ? blas::VectorElement::f32
                   : s.dtype == DType::f16 ? blas::VectorElement::f16
                                           : blas::VectorElement::bf16;
  launch.a = a;
  launch.lda = s.m;
  launch.x = x;
  launch.y = y;
  launch.transpose = s.transpose;
  launch.m = s.m;
  launch.n = s.n;
  const blas::StreamedGemvSplit chosen =
      blas::streamed_gemv_split(static_cast<std::int64_t>(size_of(s.dtype)), s.m, s.n, s.transpose, 1, s.m, 0);
  bench::row("streamed_gemv", name, "chosen", "splits", static_cast<double>(chosen.splits));
  const auto run = [&](const blas::StreamedGemvSplit& split) {
    return blas::launch_streamed_gemv(launch, split, workspace, stream);
  };
  const std::uint64_t most_workspace = static_cast<std::uint64_t>(256 * rows_of_y) * sizeof(float);
  check_cuda(cudaMalloc(&workspace, most_workspace), "malloc workspace");
  check_cuda(run(chosen), "streamed gemv");
  check_cuda(cudaStreamSynchronize(stream), "sync");
  const std::vector<float> reference = download_y(y, rows_of_y, s.dtype);
  const double bytes = static_cast<double>(a_host.size());
  for (std::int64_t splits = 1; splits <= 256; splits *= 2) {
    const blas::StreamedGemvSplit split = split_of(s, splits);
    if (split.splits == 0) continue;
    const std::string variant = fmt::format("splits={}", splits);
    const double gpu_us = bench::median_us_per_call(stream, kReps, "streamed gemv", [&] { return run(split); });
    std::vector<double> each;
    for (int i = 0; i < kLatencyRuns + 50; ++i) {
      const auto t0 = Clock::now();
      check_cuda(run(split), "streamed gemv");
      check_cuda(cudaStreamSynchronize(stream), "sync");
      if (i >= 50) each.push_back(bench::micros(Clock::now() - t0));
    }
    const std::vector<float> got = download_y(y, rows_of_y, s.dtype);
    double largest = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
      largest = std::max(largest, static_cast<double>(std::fabs(got[i] - reference[i])));
    bench::row("streamed_gemv", name, variant, "gpu_us", gpu_us);
    bench::row("streamed_gemv", name, variant, "tb_per_s", bytes / gpu_us * 1e-6);
    bench::row("streamed_gemv", name, variant, "latency_us", bench::percentile(each, 0.5));
    bench::row("streamed_gemv", name, variant, "max_diff_from_chosen", largest);
  }
  for (void* p : {a, x, y, workspace}) check_cuda(cudaFree(p), "free");
}

}  // namespace

int main() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    fmt::print(stderr, "streamed_gemv_bench needs a GPU\n");
    return 77;
  }
  cudaStream_t stream{};
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  std::mt19937_64 rng(20261205);
  fmt::print("part,case,variant,metric,value\n");
  for (const Shape& s : {Shape{DType::f16, 4096, 4096, false}, Shape{DType::f16, 4096, 4096, true},
                         Shape{DType::bf16, 8192, 8192, false}, Shape{DType::f32, 2048, 2048, false},
                         Shape{DType::f32, 2048, 2048, true}, Shape{DType::f32, 4096, 4096, false}})
    run_shape(s, stream, rng);
  check_cuda(cudaStreamDestroy(stream), "destroy stream");
  return 0;
}
