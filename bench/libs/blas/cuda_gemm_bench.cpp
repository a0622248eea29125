// GEMM on the GPU through the accel device actor, side by side with the raw cuBLASLt call a user would
// write (same process, same GPU, same inputs) — the PyTorch peer is bench/peers/torch_gemm.py. Four parts:
//   small    64³, 256³, 1024³ bf16, 64³ and 128³ f32: one-at-a-time latency (median, p99) and pipelined time per GEMM;
//   large    4096³ and 8192³ in bf16, f16, tf32 and fp8 e4m3: TFLOP/s;
//   notify   the three completion strategies: round trip of a tiny copy and of a ~0.3 ms GEMM, vs direct.
//   encoder  the products of the encoders and Qwen3-0.6B's decoder at a batch's rows (x Wᵀ, f16/bf16): TFLOP/s,
//            where accel's plans run the candidate cuBLASLt timed fastest and the direct call its heuristic's first.
// Prints CSV rows: part,case,variant,metric,value.
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/libs/blas/gemm.hpp"
#include "common/csv_report.hpp"
#include "common/cuda_checks.hpp"
#include "common/direct_gemm.hpp"
#include "common/open_gpu.hpp"

namespace {

using namespace accel;
using Clock = std::chrono::steady_clock;

using bench::check_cuda;
using bench::check_lt;
using bench::DirectGemm;
using bench::micros;
using bench::percentile;
using bench::random_elements;
using bench::require;
using bench::row;

// The problem in the benchmark's terms: row-major C(m×n) = A(m×k) · op(B), op(B) = B (k×n) or, for fp8 and a
// model's weights, Bᵀ with B stored n×k (the layout cuBLASLt's fp8 kernels take, and nn.Linear's).
struct Problem {
  std::string name;
  std::int64_t m, n, k;
  DType input, output;
  GemmCompute compute = GemmCompute::standard;
  bool weights = false;  // B is a weight matrix stored n×k
  [[nodiscard]] bool fp8() const { return input == DType::fp8_e4m3; }
  [[nodiscard]] bool b_transposed() const { return fp8() || weights; }
  [[nodiscard]] GemmShape shape() const {
    return {.transpose_b = b_transposed() ? Transpose::transpose : Transpose::none,
            .m = m,
            .n = n,
            .k = k,
            .input_type = input,
            .output_type = output,
            .compute = compute};
  }
  [[nodiscard]] bench::DirectGemmShape direct() const {
    return {
        .m = m, .n = n, .k = k, .input = input, .output = output, .compute = compute, .b_transposed = b_transposed()};
  }
  [[nodiscard]] double flops() const {
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  }
};

struct ActorGemm {
  Device device;
  Gemm gemm;
  ActorGemm(Device dev, const Problem& p, const std::vector<std::byte>& a_host, const std::vector<std::byte>& b_host)
      : device(std::move(dev)) {
    gemm.shape = p.shape();
    gemm.a =
        require(device.ask(Allocate{.dtype = p.input, .count = static_cast<std::uint64_t>(p.m * p.k)}).wait(), "a");
    gemm.b =
        require(device.ask(Allocate{.dtype = p.input, .count = static_cast<std::uint64_t>(p.k * p.n)}).wait(), "b");
    gemm.c =
        require(device.ask(Allocate{.dtype = p.output, .count = static_cast<std::uint64_t>(p.m * p.n)}).wait(), "c");
    require(device.ask(CopyToDevice{.source = {a_host.data(), gemm.a.count, p.input}, .destination = gemm.a}).wait(),
            "up a");
    require(device.ask(CopyToDevice{.source = {b_host.data(), gemm.b.count, p.input}, .destination = gemm.b}).wait(),
            "up b");
  }
  ~ActorGemm() {
    for (const BufferHandle& h : {gemm.a, gemm.b, gemm.c}) (void)device.free(h).wait();
  }
};

void small_gemms(Device device, std::mt19937_64& rng) {
  // bf16 on cuBLASLt at every size; f32 at 64³ and 128³ on accel's small kernel (blas::small_gemm).
  const std::pair<std::int64_t, DType> cases[] = {
      {64, DType::bf16}, {256, DType::bf16}, {1024, DType::bf16}, {64, DType::f32}, {128, DType::f32}};
  for (const auto& [size, dtype] : cases) {
    const Problem p{fmt::format("{}^3 {}", size, to_string(dtype)), size, size, size, dtype, dtype};
    const auto a = random_elements(p.input, p.m * p.k, rng), b = random_elements(p.input, p.k * p.n, rng);
    ActorGemm actor(device, p, a, b);
    DirectGemm direct(p.direct(), a, b);
    constexpr int kWarm = 200, kReps = 3000, kPipelined = 3000;
    std::vector<double> actor_us, direct_us;
    for (int i = 0; i < kWarm + kReps; ++i) {
      auto t0 = Clock::now();
      require(device.gemm(actor.gemm).wait(), "gemm");
      auto t1 = Clock::now();
      direct.enqueue();
      direct.sync();
      auto t2 = Clock::now();
      if (i >= kWarm) {
        actor_us.push_back(micros(t1 - t0));
        direct_us.push_back(micros(t2 - t1));
      }
    }
    row("small", p.name, "accel", "latency_median_us", percentile(actor_us, 0.5));
    row("small", p.name, "accel", "latency_p99_us", percentile(actor_us, 0.99));
    row("small", p.name, "cublaslt", "latency_median_us", percentile(direct_us, 0.5));
    row("small", p.name, "cublaslt", "latency_p99_us", percentile(direct_us, 0.99));

    std::vector<double> actor_each, direct_each;
    for (int trial = 0; trial < 5; ++trial) {
      std::vector<Future<Done>> futures;
      futures.reserve(kPipelined);
      auto t0 = Clock::now();
      for (int i = 0; i < kPipelined; ++i) futures.push_back(device.gemm(actor.gemm));
      for (Future<Done>& f : futures) require(f.wait(), "pipelined gemm");
      auto t1 = Clock::now();
      for (int i = 0; i < kPipelined; ++i) direct.enqueue();
      direct.sync();
      auto t2 = Clock::now();
      actor_each.push_back(micros(t1 - t0) / kPipelined);
      direct_each.push_back(micros(t2 - t1) / kPipelined);
    }
    row("small", p.name, "accel", "pipelined_us_per_gemm", percentile(actor_each, 0.5));
    row("small", p.name, "cublaslt", "pipelined_us_per_gemm", percentile(direct_each, 0.5));

    // The same GEMMs spread round-robin over four streams of the device (four actors enqueueing in
    // parallel), each writing its own C: what the actor model gives a caller with independent work.
    std::vector<std::unique_ptr<ActorGemm>> lanes;
    for (int lane = 0; lane < 4; ++lane) {
      Device stream = lane == 0 ? device : require(device.open_stream(), "open_stream");
      lanes.push_back(std::make_unique<ActorGemm>(stream, p, a, b));
    }
    std::vector<double> spread_each;
    for (int trial = 0; trial < 6; ++trial) {
      std::vector<Future<Done>> futures;
      futures.reserve(kPipelined);
      auto t0 = Clock::now();
      for (int i = 0; i < kPipelined; ++i) {
        ActorGemm& lane = *lanes[i % lanes.size()];
        futures.push_back(lane.device.gemm(lane.gemm));
      }
      for (Future<Done>& f : futures) require(f.wait(), "pipelined gemm");
      if (trial > 0) spread_each.push_back(micros(Clock::now() - t0) / kPipelined);
    }
    row("small", p.name, "accel_4_streams", "pipelined_us_per_gemm", percentile(spread_each, 0.5));
  }
}

// Throughput of each problem, pipelined: through the device actor and as the direct call, median of 5 trials.
void throughput(const char* part, Device device, const std::vector<Problem>& problems, std::mt19937_64& rng) {
  for (const Problem& p : problems) {
    const auto a = random_elements(p.input, p.m * p.k, rng), b = random_elements(p.input, p.k * p.n, rng);
    const int reps = std::clamp(static_cast<int>(2e12 / p.flops()), 20, 400);  // ~2 ms of work or more a trial
    std::vector<double> actor_tflops, direct_tflops;
    {
      ActorGemm actor(device, p, a, b);
      for (int i = 0; i < 5; ++i) require(device.gemm(actor.gemm).wait(), "warm-up");
      for (int trial = 0; trial < 5; ++trial) {
        std::vector<Future<Done>> futures;
        auto t0 = Clock::now();
        for (int i = 0; i < reps; ++i) futures.push_back(device.gemm(actor.gemm));
        for (Future<Done>& f : futures) require(f.wait(), "gemm");
        actor_tflops.push_back(p.flops() * reps / (micros(Clock::now() - t0) * 1e6));
      }
    }
    {
      DirectGemm direct(p.direct(), a, b);
      for (int i = 0; i < 5; ++i) direct.enqueue();
      direct.sync();
      for (int trial = 0; trial < 5; ++trial) {
        auto t0 = Clock::now();
        for (int i = 0; i < reps; ++i) direct.enqueue();
        direct.sync();
        direct_tflops.push_back(p.flops() * reps / (micros(Clock::now() - t0) * 1e6));
      }
    }
    row(part, p.name, "accel", "tflops", percentile(actor_tflops, 0.5));
    row(part, p.name, "cublaslt", "tflops", percentile(direct_tflops, 0.5));
  }
}

void large_gemms(Device device, std::mt19937_64& rng) {
  std::vector<Problem> problems;
  for (std::int64_t size : {4096, 8192}) {
    for (const auto& [label, input, output, compute] :
         {std::tuple{"bf16", DType::bf16, DType::bf16, GemmCompute::standard},
          std::tuple{"f16", DType::f16, DType::f16, GemmCompute::standard},
          std::tuple{"tf32", DType::f32, DType::f32, GemmCompute::tf32},
          std::tuple{"fp8_e4m3", DType::fp8_e4m3, DType::bf16, GemmCompute::standard}}) {
      problems.push_back({fmt::format("{}^3 {}", size, label), size, size, size, input, output, compute});
    }
  }
  throughput("large", std::move(device), problems, rng);
}

// (rows, out features, in features) of all-MiniLM-L6-v2 and a 12 × 768 BERT at 16,384 rows (f16), Qwen3-0.6B at
// 4,096 (bf16): q, k and v stacked, the attention's output, the FFN's or gated MLP's two products.
void encoder_gemms(Device device, std::mt19937_64& rng) {
  std::vector<Problem> problems;
  const auto add = [&](const char* model, DType dtype, std::int64_t m, std::int64_t n, std::int64_t k) {
    problems.push_back({.name = fmt::format("{} {}x{}x{}", model, m, n, k),
                        .m = m,
                        .n = n,
                        .k = k,
                        .input = dtype,
                        .output = dtype,
                        .weights = true});
  };
  for (const auto& [n, k] : {std::pair{1152, 384}, {384, 384}, {1536, 384}, {384, 1536}})
    add("minilm", DType::f16, 16384, n, k);
  for (const auto& [n, k] : {std::pair{2304, 768}, {768, 768}, {3072, 768}, {768, 3072}})
    add("bert", DType::f16, 16384, n, k);
  for (const auto& [n, k] : {std::pair{4096, 1024}, {1024, 2048}, {6144, 1024}, {1024, 3072}})
    add("qwen3", DType::bf16, 4096, n, k);
  throughput("encoder", std::move(device), problems, rng);
}

void notification(System& system, std::mt19937_64& rng) {
  const Problem p{"2048^3 f32", 2048, 2048, 2048, DType::f32, DType::f32};
  const auto a = random_elements(p.input, p.m * p.k, rng), b = random_elements(p.input, p.k * p.n, rng);
  constexpr int kWarm = 100, kReps = 2000;
  for (CompletionStrategy strategy :
       {CompletionStrategy::poller, CompletionStrategy::host_callback, CompletionStrategy::blocking}) {
    Device device = require(Device::open(system, {.kind = DeviceKind::cuda, .completion = strategy}), "open");
    const BufferHandle x = require(device.ask(Allocate{.count = 64}).wait(), "x");
    const BufferHandle y = require(device.ask(Allocate{.count = 64}).wait(), "y");
    std::vector<double> tiny, long_gemm;
    for (int i = 0; i < kWarm + kReps; ++i) {
      auto t0 = Clock::now();
      require(device.ask(CopyOnDevice{.source = x, .destination = y, .count = 64}).wait(), "copy");
      if (i >= kWarm) tiny.push_back(micros(Clock::now() - t0));
    }
    ActorGemm actor(device, p, a, b);
    for (int i = 0; i < 20 + 300; ++i) {
      auto t0 = Clock::now();
      require(device.gemm(actor.gemm).wait(), "gemm");
      if (i >= 20) long_gemm.push_back(micros(Clock::now() - t0));
    }
    const std::string variant(to_string(strategy));
    row("notify", "copy 256 B", variant, "round_trip_median_us", percentile(tiny, 0.5));
    row("notify", "copy 256 B", variant, "round_trip_p99_us", percentile(tiny, 0.99));
    row("notify", p.name, variant, "round_trip_median_us", percentile(long_gemm, 0.5));
    row("notify", p.name, variant, "round_trip_p99_us", percentile(long_gemm, 0.99));
  }
  // The floor: the same work issued directly, then cudaStreamSynchronize.
  cudaStream_t stream{};
  void *x{}, *y{};
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  check_cuda(cudaMalloc(&x, 256), "x");
  check_cuda(cudaMalloc(&y, 256), "y");
  std::vector<double> tiny, long_gemm;
  for (int i = 0; i < kWarm + kReps; ++i) {
    auto t0 = Clock::now();
    check_cuda(cudaMemcpyAsync(y, x, 256, cudaMemcpyDeviceToDevice, stream), "copy");
    check_cuda(cudaStreamSynchronize(stream), "sync");
    if (i >= kWarm) tiny.push_back(micros(Clock::now() - t0));
  }
  {
    DirectGemm direct(p.direct(), a, b);
    for (int i = 0; i < 20 + 300; ++i) {
      auto t0 = Clock::now();
      direct.enqueue();
      direct.sync();
      if (i >= 20) long_gemm.push_back(micros(Clock::now() - t0));
    }
  }
  row("notify", "copy 256 B", "direct_sync", "round_trip_median_us", percentile(tiny, 0.5));
  row("notify", "copy 256 B", "direct_sync", "round_trip_p99_us", percentile(tiny, 0.99));
  row("notify", p.name, "direct_sync", "round_trip_median_us", percentile(long_gemm, 0.5));
  row("notify", p.name, "direct_sync", "round_trip_p99_us", percentile(long_gemm, 0.99));
  cudaFree(x);
  cudaFree(y);
  cudaStreamDestroy(stream);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string parts = argc > 1 ? argv[1] : "small,large,encoder,notify";
  System system;
  const Device device = bench::open_gpu_or_skip(system, "cuda_gemm_bench");
  std::mt19937_64 rng(42);
  fmt::print("part,case,variant,metric,value\n");
  if (parts.find("small") != std::string::npos) small_gemms(device, rng);
  if (parts.find("large") != std::string::npos) large_gemms(device, rng);
  if (parts.find("encoder") != std::string::npos) encoder_gemms(device, rng);
  if (parts.find("notify") != std::string::npos) notification(system, rng);
  return 0;
}
