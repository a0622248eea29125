// FFTs on the GPU through the accel device actor, side by side with the raw cuFFT calls a user would write (same
// process, same GPU, same sizes and layouts, a stream of its own). Two parts:
//   plan  plan creation: a request's first run on a fresh device (plan built) against its cached runs, the build
//         time accel's cache measured, and cufftCreate + cufftMakePlanMany64 (cufftXtMakePlanMany in f16) called
//         directly (first and median);
//   exec  execution: one-at-a-time latency (median) and pipelined time per FFT, accel against raw cuFFT
//         (cufftExec*, cufftXtExec in f16), for 1-D 4096 x 1024 c2c in f32 and f16, 2-D 1024^2 r2c f32, 3-D 128^3
//         c2c f64, 64 x 2^20 c2c f32, 256 x 2^16 c2c in f32 and f16, and 256 x 64 c2c f32.
// Prints CSV rows: part,case,variant,metric,value.
//   fft_bench [plan,exec]
#include <cuda_runtime.h>
#include <cufft.h>
#include <cufftXt.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/libs/fft/fft.hpp"
#include "common/csv_report.hpp"
#include "common/cuda_checks.hpp"
#include "common/exit_now.hpp"
#include "common/open_gpu.hpp"

namespace {

using namespace accel;
using Clock = std::chrono::steady_clock;
using bench::micros;
using bench::percentile;
using bench::require;
using bench::row;

using bench::check_cuda;
void check_cufft(cufftResult r, const char* what) { bench::check_library(r, CUFFT_SUCCESS, "cuFFT", what); }

struct Case {
  std::string name;
  FftShape shape;
};

std::vector<Case> cases() {
  return {
      {"1d 4096 x1024 c2c f32", {.n = {4096}, .batch = 1024}},
      {"1d 4096 x1024 c2c f16", {.precision = DType::f16, .n = {4096}, .batch = 1024}},
      {"1d 2^16 x256 c2c f32", {.n = {1 << 16}, .batch = 256}},
      {"1d 2^16 x256 c2c f16", {.precision = DType::f16, .n = {1 << 16}, .batch = 256}},
      {"2d 1024^2 r2c f32", {.type = FftType::r2c, .rank = 2, .n = {1024, 1024}}},
      {"3d 128^3 c2c f64", {.precision = DType::f64, .rank = 3, .n = {128, 128, 128}}},
      {"1d 2^20 x64 c2c f32", {.n = {1 << 20}, .batch = 64}},
      {"1d 256 x64 c2c f32", {.n = {256}, .batch = 64}},
  };
}

FftGeometry geometry_of(const FftShape& shape) { return require(plan_fft_geometry(shape, false), "geometry"); }

cufftType cufft_type(const FftGeometry& g) {
  const bool f64 = g.real_type == DType::f64;
  switch (g.shape.type) {
    case FftType::r2c: return f64 ? CUFFT_D2Z : CUFFT_R2C;
    case FftType::c2r: return f64 ? CUFFT_Z2D : CUFFT_C2R;
    case FftType::c2c: break;
  }
  return f64 ? CUFFT_Z2Z : CUFFT_C2C;
}

bool half(const FftGeometry& g) { return g.real_type == DType::f16; }
cudaDataType half_type(DType side) { return side == DType::f16 ? CUDA_R_16F : CUDA_C_16F; }

// cufftCreate + cufftMakePlanMany64 (cufftXtMakePlanMany in f16) with the geometry's layouts, as accel calls them;
// the work area size out.
cufftHandle make_plan(const FftGeometry& g, std::size_t* work) {
  const FftShape& s = g.shape;
  long long n[3], in_embed[3], out_embed[3];
  for (int d = 0; d < 3; ++d) {
    n[d] = s.n[d];
    in_embed[d] = s.input.embed[d];
    out_embed[d] = s.output.embed[d];
  }
  cufftHandle plan = 0;
  check_cufft(cufftCreate(&plan), "cufftCreate");
  check_cufft(cufftSetAutoAllocation(plan, 0), "cufftSetAutoAllocation");
  if (half(g)) {
    check_cufft(cufftXtMakePlanMany(plan, s.rank, n, in_embed, s.input.stride, s.input.distance,
                                    half_type(g.input_type), out_embed, s.output.stride, s.output.distance,
                                    half_type(g.output_type), s.batch, work, CUDA_C_16F),
                "cufftXtMakePlanMany");
    return plan;
  }
  check_cufft(cufftMakePlanMany64(plan, s.rank, n, in_embed, s.input.stride, s.input.distance, out_embed,
                                  s.output.stride, s.output.distance, cufft_type(g), s.batch, work),
              "cufftMakePlanMany64");
  return plan;
}

// The input of `g`: its real parts, uniform in [-1, 1).
std::vector<std::byte> random_input(const FftGeometry& g, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> uniform(-1, 1);
  const std::size_t width = size_of(g.real_type);
  const std::uint64_t scalars = g.input_extent * size_of(g.input_type) / width;
  std::vector<std::byte> bytes(scalars * width);
  for (std::uint64_t i = 0; i < scalars; ++i) {
    const double v = uniform(rng);
    const float f = static_cast<float>(v);
    const Half h = to_half(f);
    std::memcpy(bytes.data() + i * width,
                g.real_type == DType::f64 ? static_cast<const void*>(&v)
                : half(g)                 ? static_cast<const void*>(&h)
                                          : static_cast<const void*>(&f),
                width);
  }
  return bytes;
}

// The raw library call: one cuFFT plan on a stream of its own, set up once.
struct DirectFft {
  FftGeometry g;
  cudaStream_t stream{};
  cufftHandle plan{};
  void *in{}, *out{}, *work{};

  DirectFft(const FftGeometry& geometry, const std::vector<std::byte>& input) : g(geometry) {
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    check_cuda(cudaMalloc(&in, input.size()), "malloc in");
    check_cuda(cudaMalloc(&out, g.output_extent * size_of(g.output_type)), "malloc out");
    check_cuda(cudaMemcpy(in, input.data(), input.size(), cudaMemcpyHostToDevice), "copy in");
    std::size_t work_bytes = 0;
    plan = make_plan(g, &work_bytes);
    check_cuda(cudaMalloc(&work, std::max<std::size_t>(work_bytes, 1)), "malloc work");
    check_cufft(cufftSetWorkArea(plan, work), "cufftSetWorkArea");
    check_cufft(cufftSetStream(plan, stream), "cufftSetStream");
  }
  ~DirectFft() {
    cudaStreamSynchronize(stream);
    cufftDestroy(plan);
    cudaFree(in);
    cudaFree(out);
    cudaFree(work);
    cudaStreamDestroy(stream);
  }
  void enqueue() {
    if (half(g)) {
      check_cufft(cufftXtExec(plan, in, out, CUFFT_FORWARD), "exec");
      return;
    }
    switch (cufft_type(g)) {
      case CUFFT_C2C:
        check_cufft(cufftExecC2C(plan, static_cast<cufftComplex*>(in), static_cast<cufftComplex*>(out), CUFFT_FORWARD),
                    "exec");
        return;
      case CUFFT_Z2Z:
        check_cufft(cufftExecZ2Z(plan, static_cast<cufftDoubleComplex*>(in), static_cast<cufftDoubleComplex*>(out),
                                 CUFFT_FORWARD),
                    "exec");
        return;
      case CUFFT_R2C:
        check_cufft(cufftExecR2C(plan, static_cast<cufftReal*>(in), static_cast<cufftComplex*>(out)), "exec");
        return;
      default: accel::bench::exit_now(2);  // the cases above are all this benchmark runs
    }
  }
  void sync() { check_cuda(cudaStreamSynchronize(stream), "sync"); }
};

// The same transform as an accel request on `device`.
struct AccelFft {
  Device device;
  Fft fft;
  AccelFft(Device d, const FftGeometry& g, const std::vector<std::byte>& input) : device(std::move(d)) {
    fft.shape = g.shape;
    fft.input = require(device.ask(Allocate{.dtype = g.input_type, .count = g.input_extent}).wait(), "alloc in");
    fft.output = require(device.ask(Allocate{.dtype = g.output_type, .count = g.output_extent}).wait(), "alloc out");
    require(device.ask(CopyToDevice{.source = {input.data(), g.input_extent, g.input_type}, .destination = fft.input})
                .wait(),
            "upload");
  }
  ~AccelFft() {
    (void)device.free(fft.input).wait();
    (void)device.free(fft.output).wait();
  }
};

void plan_part(System& system, std::mt19937_64& rng) {
  for (const Case& c : cases()) {
    const FftGeometry g = geometry_of(c.shape);
    const auto input = random_input(g, rng);
    {
      // A fresh device: its stream's plan cache starts empty, so the first request builds.
      Device device = require(Device::open(system, {.kind = DeviceKind::cuda}), "open");
      AccelFft accel(device, g, input);
      const auto t0 = Clock::now();
      require(device.ask(accel.fft).wait(), "first fft");
      const double first = micros(Clock::now() - t0);
      std::vector<double> cached;
      for (int i = 0; i < 50; ++i) {
        const auto t = Clock::now();
        require(device.ask(accel.fft).wait(), "cached fft");
        cached.push_back(micros(Clock::now() - t));
      }
      const DeviceInfo info = require(device.info().wait(), "info");
      const CacheStats* plans = info.cache("cufft-plans");
      row("plan", c.name, "accel", "first_request_us", first);
      row("plan", c.name, "accel", "cached_request_median_us", percentile(cached, 0.5));
      row("plan", c.name, "accel", "plan_build_us", plans != nullptr ? static_cast<double>(plans->build_micros) : -1);
      row("plan", c.name, "accel", "plan_cache_hits", plans != nullptr ? static_cast<double>(plans->hits) : -1);
    }
    std::vector<double> direct;
    for (int i = 0; i < 11; ++i) {
      std::size_t work = 0;
      const auto t = Clock::now();
      const cufftHandle plan = make_plan(g, &work);
      direct.push_back(micros(Clock::now() - t));
      cufftDestroy(plan);
    }
    row("plan", c.name, "cufft", "plan_first_us", direct.front());
    row("plan", c.name, "cufft", "plan_median_us", percentile(direct, 0.5));
  }
}

void exec_part(Device device, std::mt19937_64& rng) {
  for (const Case& c : cases()) {
    const FftGeometry g = geometry_of(c.shape);
    const auto input = random_input(g, rng);
    // Enough repetitions for about a second of GPU work on the large cases, a few thousand on the small one.
    const double points = static_cast<double>(g.transform_size) * static_cast<double>(g.shape.batch);
    const int reps = points >= (1 << 24) ? 50 : points >= (1 << 20) ? 300 : 3000;
    std::vector<double> accel_latency, direct_latency, accel_each, direct_each;
    {
      AccelFft accel(device, g, input);
      for (int i = 0; i < 20; ++i) require(device.ask(accel.fft).wait(), "warm-up");
      for (int i = 0; i < std::min(reps, 1000); ++i) {
        const auto t = Clock::now();
        require(device.ask(accel.fft).wait(), "fft");
        accel_latency.push_back(micros(Clock::now() - t));
      }
      for (int trial = 0; trial < 5; ++trial) {
        std::vector<Future<Done>> futures;
        futures.reserve(reps);
        const auto t = Clock::now();
        for (int i = 0; i < reps; ++i) futures.push_back(device.ask(accel.fft));
        for (Future<Done>& f : futures) require(f.wait(), "pipelined fft");
        accel_each.push_back(micros(Clock::now() - t) / reps);
      }
    }
    {
      DirectFft direct(g, input);
      for (int i = 0; i < 20; ++i) direct.enqueue();
      direct.sync();
      for (int i = 0; i < std::min(reps, 1000); ++i) {
        const auto t = Clock::now();
        direct.enqueue();
        direct.sync();
        direct_latency.push_back(micros(Clock::now() - t));
      }
      for (int trial = 0; trial < 5; ++trial) {
        const auto t = Clock::now();
        for (int i = 0; i < reps; ++i) direct.enqueue();
        direct.sync();
        direct_each.push_back(micros(Clock::now() - t) / reps);
      }
    }
    row("exec", c.name, "accel", "latency_median_us", percentile(accel_latency, 0.5));
    row("exec", c.name, "cufft", "latency_median_us", percentile(direct_latency, 0.5));
    row("exec", c.name, "accel", "pipelined_us_per_fft", percentile(accel_each, 0.5));
    row("exec", c.name, "cufft", "pipelined_us_per_fft", percentile(direct_each, 0.5));
    row("exec", c.name, "accel_vs_cufft", "pipelined_speed_ratio",
        percentile(direct_each, 0.5) / percentile(accel_each, 0.5));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string parts = argc > 1 ? argv[1] : "plan,exec";
  System system;
  const Device device = bench::open_gpu_or_skip(system, "fft_bench");
  std::mt19937_64 rng(42);
  fmt::print("part,case,variant,metric,value\n");
  if (parts.find("plan") != std::string::npos) plan_part(system, rng);
  if (parts.find("exec") != std::string::npos) exec_part(device, rng);
  return 0;
}
