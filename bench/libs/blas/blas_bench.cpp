// BLAS levels 1-3 beyond GEMM on the GPU through the accel device actor, beside the raw cuBLAS call a user would write
// (same process, same GPU, same inputs, a handle on a stream of its own); the PyTorch peer is
// bench/peers/torch_blas.py, run in the same call. Routines and shapes (n from the sizes argument):
//   gemv          y = A x, n x n column-major A, f32 (torch.mv)
//   gemv_batched  1000 x (32 x 32) and 64 x (256 x 256), f32, one gemvStridedBatched (torch.matmul of a batch)
//   trsm          L X = B, n x n lower-triangular L and n x n B, left, f32 and f64 (torch.linalg.solve_triangular);
//                 L is the identity so that solving in place again and again leaves B as it was (cuBLAS's time does
//                 not depend on the values)
//   syrk          C = A Aᵀ, lower triangle, n x n C and A, f32 (PyTorch has no syrk: its peer is torch.mm(A, A.T))
//   dot           xᵀ y over n² elements, f32, the result written on the device (torch.dot)
// What is timed: latency is one call's round trip (accel: the request until its future is ready; cuBLAS: the call and
// cudaStreamSynchronize), the median of many; pipelined is the time per call of a run of calls and one wait (accel:
// the futures of every call), the median of five runs. One JSON line per routine, dtype, shape and variant:
//   {"bench":"blas","routine":"gemv","dtype":"f32","n":1024,"batch":1,"variant":"accel","latency_us":…,
//    "pipelined_us":…,"reps":…}
// Usage: blas_bench [routines, default gemv,gemv_batched,trsm,syrk,dot] [sizes, default 256,1024,4096]
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/libs/blas/level1.hpp"
#include "accel/libs/blas/level2.hpp"
#include "accel/libs/blas/level3.hpp"
#include "common/csv_report.hpp"
#include "common/cuda_checks.hpp"

namespace {

using namespace accel;
using Clock = std::chrono::steady_clock;
using bench::check_cuda;
using bench::micros;
using bench::percentile;
using bench::require;

void check_blas(cublasStatus_t s, const char* what) { bench::check_library(s, CUBLAS_STATUS_SUCCESS, "cuBLAS", what); }

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

// One buffer of the problem, on the accel device and in the raw caller's memory, with the same contents.
template <class T>
struct Operand {
  BufferHandle accel;
  T* raw = nullptr;
};

// The raw caller: a cuBLAS handle on a stream of its own, as a user would set it up once.
struct Raw {
  cudaStream_t stream{};
  cublasHandle_t handle{};
  std::vector<void*> allocations;

  Raw() {
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    check_blas(cublasCreate(&handle), "cublasCreate");
    check_blas(cublasSetStream(handle, stream), "cublasSetStream");
  }
  ~Raw() {
    cudaStreamSynchronize(stream);
    for (void* p : allocations) cudaFree(p);
    cublasDestroy(handle);
    cudaStreamDestroy(stream);
  }
  void sync() const { check_cuda(cudaStreamSynchronize(stream), "sync"); }
};

class Problem {
 public:
  Problem(Device device, Raw& raw, std::mt19937_64& rng) : device_(std::move(device)), raw_(raw), rng_(rng) {}

  // `count` elements, uniform in [-1, 1) (or the identity's, for an n x n `identity`), on both sides.
  template <class T>
  Operand<T> operand(std::uint64_t count, std::int64_t identity = 0) {
    std::vector<T> host(count);
    std::uniform_real_distribution<double> uniform(-1, 1);
    for (std::uint64_t i = 0; i < count; ++i)
      host[i] = identity ? T(i % static_cast<std::uint64_t>(identity + 1) == 0 ? 1 : 0) : static_cast<T>(uniform(rng_));
    Operand<T> out;
    out.accel = require(device_.ask(Allocate{.dtype = dtype_of<T>(), .count = count}).wait(), "allocate");
    require(
        device_.ask(CopyToDevice{.source = HostSource::of(std::span<const T>(host)), .destination = out.accel}).wait(),
        "upload");
    check_cuda(cudaMalloc(&out.raw, count * sizeof(T)), "cudaMalloc");
    raw_.allocations.push_back(out.raw);
    check_cuda(cudaMemcpy(out.raw, host.data(), count * sizeof(T), cudaMemcpyHostToDevice), "copy");
    return out;
  }

  // Times `request` through accel and `enqueue` (one raw cuBLAS call on the raw stream), printing both.
  template <class Request>
  void measure(const std::string& routine, DType dtype, std::int64_t n, std::int64_t batch, const Request& request,
               const std::function<void()>& enqueue) {
    auto accel_once = [&] { require(device_.ask(request).wait(), routine.c_str()); };
    auto raw_once = [&] {
      enqueue();
      raw_.sync();
    };
    accel_once();
    raw_once();
    // As many calls as fit in about a quarter of a second, at least 20 and at most 3000.
    const auto t0 = Clock::now();
    raw_once();
    const double one_us = std::max(1.0, micros(Clock::now() - t0));
    const int reps = static_cast<int>(std::clamp(250000.0 / one_us, 20.0, 3000.0));

    std::vector<double> accel_us, raw_us;
    for (int i = 0; i < reps; ++i) {
      const auto a0 = Clock::now();
      accel_once();
      const auto a1 = Clock::now();
      raw_once();
      raw_us.push_back(micros(Clock::now() - a1));
      accel_us.push_back(micros(a1 - a0));
    }
    std::vector<double> accel_each, raw_each;
    for (int trial = 0; trial < 5; ++trial) {
      std::vector<Future<Done>> futures;
      futures.reserve(reps);
      const auto p0 = Clock::now();
      for (int i = 0; i < reps; ++i) futures.push_back(device_.ask(request));
      for (Future<Done>& f : futures) require(f.wait(), routine.c_str());
      const auto p1 = Clock::now();
      for (int i = 0; i < reps; ++i) enqueue();
      raw_.sync();
      accel_each.push_back(micros(p1 - p0) / reps);
      raw_each.push_back(micros(Clock::now() - p1) / reps);
    }
    print(routine, dtype, n, batch, "accel", percentile(accel_us, 0.5), percentile(accel_each, 0.5), reps);
    print(routine, dtype, n, batch, "cublas", percentile(raw_us, 0.5), percentile(raw_each, 0.5), reps);
  }

  [[nodiscard]] const Raw& raw() const { return raw_; }

 private:
  static void print(const std::string& routine, DType dtype, std::int64_t n, std::int64_t batch, const char* variant,
                    double latency, double pipelined, int reps) {
    fmt::print(
        "{{\"bench\":\"blas\",\"routine\":\"{}\",\"dtype\":\"{}\",\"n\":{},\"batch\":{},\"variant\":\"{}\","
        "\"latency_us\":{:.2f},\"pipelined_us\":{:.2f},\"reps\":{}}}\n",
        routine, to_string(dtype), n, batch, variant, latency, pipelined, reps);
    std::fflush(stdout);
  }

  Device device_;
  Raw& raw_;
  std::mt19937_64& rng_;
};

void gemv(Problem& p, std::int64_t n, std::int64_t batch) {
  const std::uint64_t square = static_cast<std::uint64_t>(n * n * batch),
                      vector = static_cast<std::uint64_t>(n * batch);
  Operand<float> a = p.operand<float>(square), x = p.operand<float>(vector), y = p.operand<float>(vector);
  const blas::Gemv request{
      .dtype = DType::f32, .m = n, .n = n, .batch = batch, .a = a.accel, .x = x.accel, .y = y.accel};
  const cublasHandle_t h = p.raw().handle;
  const int size = static_cast<int>(n);
  const float one = 1, zero = 0;
  p.measure(batch == 1 ? "gemv" : "gemv_batched", DType::f32, n, batch, request, [=] {
    if (batch == 1) {
      check_blas(cublasSgemv(h, CUBLAS_OP_N, size, size, &one, a.raw, size, x.raw, 1, &zero, y.raw, 1), "gemv");
    } else {
      check_blas(cublasSgemvStridedBatched(h, CUBLAS_OP_N, size, size, &one, a.raw, size, n * n, x.raw, 1, n, &zero,
                                           y.raw, 1, n, static_cast<int>(batch)),
                 "gemvStridedBatched");
    }
  });
}

template <class T>
void trsm(Problem& p, std::int64_t n) {
  Operand<T> a = p.operand<T>(static_cast<std::uint64_t>(n * n), n),
             b = p.operand<T>(static_cast<std::uint64_t>(n * n));
  const blas::Trsm request{.dtype = dtype_of<T>(), .m = n, .n = n, .a = a.accel, .b = b.accel};
  const cublasHandle_t h = p.raw().handle;
  const int size = static_cast<int>(n);
  p.measure("trsm", dtype_of<T>(), n, 1, request, [=] {
    const T one = 1;
    if constexpr (std::is_same_v<T, double>) {
      check_blas(cublasDtrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, size, size,
                             &one, a.raw, size, b.raw, size),
                 "trsm");
    } else {
      check_blas(cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, size, size,
                             &one, a.raw, size, b.raw, size),
                 "trsm");
    }
  });
}

void syrk(Problem& p, std::int64_t n) {
  Operand<float> a = p.operand<float>(static_cast<std::uint64_t>(n * n)),
                 c = p.operand<float>(static_cast<std::uint64_t>(n * n));
  const blas::Syrk request{.dtype = DType::f32, .n = n, .k = n, .a = a.accel, .c = c.accel};
  const cublasHandle_t h = p.raw().handle;
  const int size = static_cast<int>(n);
  p.measure("syrk", DType::f32, n, 1, request, [=] {
    const float one = 1, zero = 0;
    check_blas(cublasSsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, size, size, &one, a.raw, size, &zero, c.raw, size),
               "syrk");
  });
}

void dot(Problem& p, std::int64_t n) {
  const std::uint64_t count = static_cast<std::uint64_t>(n * n);
  Operand<float> x = p.operand<float>(count), y = p.operand<float>(count), result = p.operand<float>(1);
  const blas::Dot request{.dtype = DType::f32, .n = n * n, .x = x.accel, .y = y.accel, .result = result.accel};
  const cublasHandle_t h = p.raw().handle;
  check_blas(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE), "pointer mode");
  p.measure("dot", DType::f32, n * n, 1, request,
            [=] { check_blas(cublasSdot(h, static_cast<int>(n * n), x.raw, 1, y.raw, 1, result.raw), "dot"); });
  check_blas(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST), "pointer mode");
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> routines = split(argc > 1 ? argv[1] : "gemv,gemv_batched,trsm,syrk,dot");
  const std::vector<std::string> sizes = split(argc > 2 ? argv[2] : "256,1024,4096");
  System system;
  Result<Device> device = Device::open(system, {.kind = DeviceKind::cuda});
  if (!device.ok()) {
    fmt::print(stderr, "blas_bench needs a GPU: {}\n", device.status().to_string());
    return 77;
  }
  std::mt19937_64 rng(42);
  for (const std::string& r : routines) {
    Raw raw;  // each routine's buffers freed when it is done
    Problem p(*device, raw, rng);
    if (r == "gemv_batched") {
      gemv(p, 32, 1000);
      gemv(p, 256, 64);
      continue;
    }
    for (const std::string& size : sizes) {
      const std::int64_t n = std::stoll(size);
      if (r == "gemv") gemv(p, n, 1);
      if (r == "trsm") {
        trsm<float>(p, n);
        trsm<double>(p, n);
      }
      if (r == "syrk") syrk(p, n);
      if (r == "dot") dot(p, n);
    }
  }
  return 0;
}
