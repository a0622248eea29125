// The f32 small-GEMM kernel accel runs where a GEMM's time is its launch (launch_small_gemm), against the raw cuBLASLt
// call a user would write (its heuristic's first choice), on the same inputs in the same process, at shapes inside
// and outside the bounds accel gives it (small_gemm: "taken"). Two figures a case: µs a GEMM in a CUDA graph of 20
// launches, replayed (what a recorded chain pays), and a launch waited on at once (median of 1,000). The largest
// difference from cuBLASLt's C is printed too. Then chains of 20 products X_{i+1} = W X_i / n (what a recording of
// them runs: launch_small_gemm_chain; one W, read once, and a W each), µs a product in a graph of one chain's launch
// against a graph of the 20 launches, and whether the two left the same last X bit for bit. Prints CSV rows:
// part,case,variant,metric,value.
//
//   small_gemm_bench
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
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
using bench::DirectGemm;
using Clock = std::chrono::steady_clock;

constexpr int kGraphLaunches = 20;
constexpr int kReplays = 200;
constexpr int kLatencyRuns = 1000;

void row(const std::string& name, const std::string& variant, const char* metric, double value) {
  bench::row("small_kernel", name, variant, metric, value);
}

// µs a launch of `enqueue`, captured `launches` times into one graph and replayed back to back; divided by `per`.
template <class Enqueue>
double graph_us(cudaStream_t stream, Enqueue&& enqueue, int launches = kGraphLaunches, int per = kGraphLaunches) {
  cudaGraph_t graph{};
  cudaGraphExec_t exec{};
  check_cuda(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "begin capture");
  for (int i = 0; i < launches; ++i) enqueue();
  check_cuda(cudaStreamEndCapture(stream, &graph), "end capture");
  check_cuda(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
  const double us =
      bench::median_us_per_call(stream, kReplays, "graph launch", [&] { return cudaGraphLaunch(exec, stream); });
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  return us / per;
}

// The median µs of one launch waited on at once.
template <class Enqueue>
double latency_us(cudaStream_t stream, Enqueue&& enqueue) {
  std::vector<double> each;
  for (int i = 0; i < kLatencyRuns + 100; ++i) {
    const auto t0 = Clock::now();
    enqueue();
    check_cuda(cudaStreamSynchronize(stream), "sync");
    if (i >= 100) each.push_back(bench::micros(Clock::now() - t0));
  }
  return bench::percentile(each, 0.5);
}

std::vector<float> download(const void* c, std::int64_t count) {
  std::vector<float> out(count);
  check_cuda(cudaMemcpy(out.data(), c, out.size() * sizeof(float), cudaMemcpyDeviceToHost), "download");
  return out;
}

// C = A B over packed row-major matrices.
blas::SmallGemmLaunch row_major(const void* a, const void* b, void* c, std::int64_t m, std::int64_t n, std::int64_t k) {
  return {.a = a,
          .b = b,
          .c = c,
          .m = m,
          .n = n,
          .k = k,
          .a_row = k,
          .a_col = 1,
          .b_row = n,
          .b_col = 1,
          .c_row = n,
          .c_col = 1};
}

void run_case(std::int64_t m, std::int64_t n, std::int64_t k, std::mt19937_64& rng) {
  constexpr DType dtype = DType::f32;
  const std::string name = fmt::format("{}x{}x{} {}", m, n, k, to_string(dtype));
  const bench::DirectGemmShape shape{.m = m, .n = n, .k = k, .input = dtype, .output = dtype};
  DirectGemm direct(shape, bench::random_elements(dtype, m * k, rng), bench::random_elements(dtype, k * n, rng));
  void* ours_c = nullptr;
  check_cuda(cudaMalloc(&ours_c, m * n * size_of(dtype)), "malloc");
  const blas::SmallGemmLaunch launch = row_major(direct.a, direct.b, ours_c, m, n, k);
  auto ours = [&launch, &direct] { check_cuda(blas::launch_small_gemm(launch, direct.stream), "small gemm"); };
  auto library = [&direct] { direct.enqueue(); };
  row(name, "ours", "taken", blas::small_gemm(m, n, k, 1) ? 1 : 0);
  row(name, "cublaslt", "graph_us_per_gemm", graph_us(direct.stream, library));
  row(name, "ours", "graph_us_per_gemm", graph_us(direct.stream, ours));
  row(name, "cublaslt", "latency_us", latency_us(direct.stream, library));
  row(name, "ours", "latency_us", latency_us(direct.stream, ours));
  direct.sync();
  const std::vector<float> expected = download(direct.c, m * n), got = download(ours_c, m * n);
  double largest = 0, scale = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    largest = std::max(largest, static_cast<double>(std::fabs(expected[i] - got[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(expected[i])));
  }
  row(name, "ours", "max_difference_over_max", scale > 0 ? largest / scale : largest);
  check_cuda(cudaFree(ours_c), "free");
}

// X_{i+1} = W X_i / n over kGraphLaunches products of n x n (one W, or W_i a product: a chain of distinct A's): the
// chain's launch against the products launched.
void run_chain(std::int64_t n, bool one_w, std::mt19937_64& rng) {
  const std::string name =
      fmt::format("chain of {} {}x{}x{} f32{}", kGraphLaunches, n, n, n, one_w ? ", one W" : ", a W each");
  const std::size_t bytes = static_cast<std::size_t>(n * n) * sizeof(float);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<void*> matrices(2 * kGraphLaunches + 1);  // X_0 ... X_20, then W_0 ... W_19
  for (void*& m : matrices) {
    check_cuda(cudaMalloc(&m, bytes), "malloc");
    std::vector<float> values(static_cast<std::size_t>(n * n));
    for (float& v : values) v = uniform(rng);
    check_cuda(cudaMemcpy(m, values.data(), bytes, cudaMemcpyHostToDevice), "upload");
  }
  std::vector<blas::SmallGemmLaunch> chain;
  for (int i = 0; i < kGraphLaunches; ++i) {
    void* w = matrices[kGraphLaunches + 1 + (one_w ? 0 : i)];
    chain.push_back(row_major(w, matrices[i], matrices[i + 1], n, n, n));
    chain.back().alpha = 1.0 / static_cast<double>(n);
  }
  cudaStream_t stream{};
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  check_cuda(blas::allow_small_gemm_chains(), "allow chains");
  auto launched = [&] {
    for (const blas::SmallGemmLaunch& l : chain) check_cuda(blas::launch_small_gemm(l, stream), "small gemm");
  };
  auto chained = [&] {
    check_cuda(blas::launch_small_gemm_chain(chain.data(), kGraphLaunches, stream), "small gemm chain");
  };
  launched();
  check_cuda(cudaStreamSynchronize(stream), "sync");
  const std::vector<float> one_by_one = download(matrices[kGraphLaunches], n * n);
  chained();
  check_cuda(cudaStreamSynchronize(stream), "sync");
  row(name, "chain", "equal_to_launches", download(matrices[kGraphLaunches], n * n) == one_by_one ? 1 : 0);
  row(name, "launches", "graph_us_per_gemm", graph_us(stream, launched, 1));
  row(name, "chain", "graph_us_per_gemm", graph_us(stream, chained, 1));
  check_cuda(cudaStreamDestroy(stream), "stream destroy");
  for (void* m : matrices) check_cuda(cudaFree(m), "free");
}

}  // namespace

int main() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    fmt::print(stderr, "small_gemm_bench needs a GPU\n");
    return 77;
  }
  std::mt19937_64 rng(42);
  const std::int64_t shapes[][3] = {{8, 8, 8},       {16, 16, 16},    {32, 32, 32},    {64, 64, 64},   {96, 80, 128},
                                    {128, 128, 64},  {128, 128, 128}, {128, 128, 192}, {64, 64, 256},  {160, 160, 64},
                                    {192, 192, 192}, {256, 256, 256}, {512, 512, 32},  {1024, 64, 32}, {32, 32, 1024},
                                    {512, 64, 64},   {1024, 64, 64},  {2048, 64, 64},  {64, 512, 64},  {64, 2048, 64},
                                    {512, 128, 128}, {1024, 128, 128}};
  fmt::print("part,case,variant,metric,value\n");
  for (const auto& s : shapes) run_case(s[0], s[1], s[2], rng);
  for (const std::int64_t n : {16, 32, 64})
    for (const bool one_w : {true, false}) run_chain(n, one_w, rng);
  return 0;
}
