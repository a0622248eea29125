// The harness of blas_bench (bench/libs/blas/blas_bench.cpp and blas_bench_routines.cpp): the raw cuBLAS caller, the
// problem's buffers on both sides, and the timing of one accel request beside one raw cuBLAS call (see
// blas_bench.cpp for what is timed and the JSON lines printed).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "accel/device/device.hpp"
#include "common/csv_report.hpp"
#include "common/cuda_checks.hpp"

namespace accel::bench::blas_bench {

inline void check_blas(cublasStatus_t s, const char* what) { check_library(s, CUBLAS_STATUS_SUCCESS, "cuBLAS", what); }

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
  Raw(const Raw&) = delete;
  Raw& operator=(const Raw&) = delete;
  void sync() const { check_cuda(cudaStreamSynchronize(stream), "sync"); }
};

// The raw handle in device pointer mode (scalar results written on the GPU, as accel writes them) while it lives.
class DevicePointerMode {
 public:
  explicit DevicePointerMode(cublasHandle_t handle) : handle_(handle) {
    check_blas(cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_DEVICE), "pointer mode");
  }
  ~DevicePointerMode() { cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_HOST); }
  DevicePointerMode(const DevicePointerMode&) = delete;
  DevicePointerMode& operator=(const DevicePointerMode&) = delete;

 private:
  cublasHandle_t handle_;
};

class Problem {
 public:
  Problem(Device device, Raw& raw, std::mt19937_64& rng) : device_(std::move(device)), raw_(raw), rng_(rng) {}
  // The accel buffers freed (the raw ones go with Raw).
  ~Problem() {
    for (const BufferHandle& b : buffers_) require(device_.ask(Free{.buffer = b}).wait(), "free");
  }
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;

  // `count` elements, uniform in [-1, 1) (or the identity's, for an n x n `identity`), on both sides.
  template <class T>
  Operand<T> operand(std::uint64_t count, std::int64_t identity = 0) {
    std::vector<T> host(count);
    std::uniform_real_distribution<double> uniform(-1, 1);
    for (std::uint64_t i = 0; i < count; ++i)
      host[i] = element<T>(identity ? (i % static_cast<std::uint64_t>(identity + 1) == 0 ? 1 : 0) : uniform(rng_));
    Operand<T> out;
    out.accel = require(device_.ask(Allocate{.dtype = dtype_of<T>(), .count = count}).wait(), "allocate");
    buffers_.push_back(out.accel);
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
    const auto t0 = std::chrono::steady_clock::now();
    raw_once();
    const double one_us = std::max(1.0, micros(std::chrono::steady_clock::now() - t0));
    const int reps = static_cast<int>(std::clamp(250000.0 / one_us, 20.0, 3000.0));

    // Each variant's calls back to back, as PyTorch's peer makes them: calls interleaved with the raw ones would
    // leave the device actor idle for a raw call's round trip each time, long enough for it to sleep (its mailbox
    // spins 50 µs), and time a caller that waits between requests instead.
    std::vector<double> accel_us, raw_us;
    for (int i = 0; i < reps; ++i) {
      const auto a0 = std::chrono::steady_clock::now();
      accel_once();
      accel_us.push_back(micros(std::chrono::steady_clock::now() - a0));
    }
    for (int i = 0; i < reps; ++i) {
      const auto r0 = std::chrono::steady_clock::now();
      raw_once();
      raw_us.push_back(micros(std::chrono::steady_clock::now() - r0));
    }
    std::vector<double> accel_each, raw_each;
    for (int trial = 0; trial < 5; ++trial) {
      std::vector<Future<Done>> futures;
      futures.reserve(reps);
      const auto p0 = std::chrono::steady_clock::now();
      for (int i = 0; i < reps; ++i) futures.push_back(device_.ask(request));
      for (Future<Done>& f : futures) require(f.wait(), routine.c_str());
      const auto p1 = std::chrono::steady_clock::now();
      for (int i = 0; i < reps; ++i) enqueue();
      raw_.sync();
      accel_each.push_back(micros(p1 - p0) / reps);
      raw_each.push_back(micros(std::chrono::steady_clock::now() - p1) / reps);
    }
    print(routine, dtype, n, batch, "accel", percentile(accel_us, 0.5), percentile(accel_each, 0.5), reps);
    print(routine, dtype, n, batch, "cublas", percentile(raw_us, 0.5), percentile(raw_each, 0.5), reps);
  }

  [[nodiscard]] const Raw& raw() const { return raw_; }

 private:
  // `value` as a T: rounded to nearest for f16 and bf16, as the requests' own conversions round.
  template <class T>
  static T element(double value) {
    if constexpr (std::is_same_v<T, Half>) {
      return to_half(static_cast<float>(value));
    } else if constexpr (std::is_same_v<T, BFloat16>) {
      return to_bfloat16(static_cast<float>(value));
    } else {
      return static_cast<T>(value);
    }
  }

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
  std::vector<BufferHandle> buffers_;
};

// The routines added in issue 47's second part (blas_bench_routines.cpp): copy, swap, rot, iamin (over n² elements),
// ger, trsv, symv (n x n), symm, trmm, geam (n x n), f32.
inline constexpr std::string_view kAddedRoutines = "copy,swap,rot,iamin,ger,trsv,symv,symm,trmm,geam";

// Runs `routine` at size n if it is one of kAddedRoutines; false if it is not.
bool run_added_routine(Problem& p, std::string_view routine, std::int64_t n);

// The f16 and bf16 routines (blas_bench_narrow.cpp): axpy16, dot16 (over n² elements), gemv16 (n x n), each at f16
// and bf16.
inline constexpr std::string_view kNarrowRoutines = "axpy16,dot16,asum16,gemv16,gemv16t";

// Runs `routine` at size n if it is one of kNarrowRoutines; false if it is not.
bool run_narrow_routine(Problem& p, std::string_view routine, std::int64_t n);

}  // namespace accel::bench::blas_bench
