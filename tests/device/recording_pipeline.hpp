// What the recording tests and the recording benchmark share: a pipeline of capturable requests over buffers of one
// device. C = A B (A filled by Philox, B given), D += 0.5 C, D scaled, then the rows of D transformed (r2c) into E.
#pragma once

#include <complex>
#include <cstdint>
#include <span>
#include <vector>

#include "accel/device/recording.hpp"

namespace accel::testing {

struct RecordingPipeline {
  std::int64_t m = 0, n = 0, k = 0;
  Buffer<float> a, b, c, d;
  Buffer<std::complex<float>> e;

  // Allocates the buffers on `device` and uploads B and D (A and C are written by the pipeline).
  static Result<RecordingPipeline> make(const Device& device, std::int64_t m, std::int64_t n, std::int64_t k,
                                        const std::vector<float>& b, const std::vector<float>& d) {
    RecordingPipeline p{.m = m, .n = n, .k = k};
    ACCEL_ASSIGN_OR_RETURN(p.a, device.allocate<float>(m * k).wait());
    ACCEL_ASSIGN_OR_RETURN(p.b, device.allocate<float>(k * n).wait());
    ACCEL_ASSIGN_OR_RETURN(p.c, device.allocate<float>(m * n).wait());
    ACCEL_ASSIGN_OR_RETURN(p.d, device.allocate<float>(m * n).wait());
    ACCEL_ASSIGN_OR_RETURN(p.e, device.allocate<std::complex<float>>(m * (n / 2 + 1)).wait());
    ACCEL_RETURN_IF_ERROR(device.upload(std::span<const float>(b), p.b).wait().status());
    ACCEL_RETURN_IF_ERROR(device.upload(std::span<const float>(d), p.d).wait().status());
    return p;
  }

  [[nodiscard]] rand::Generate fill() const {
    return {.seed = 1234, .count = static_cast<std::uint64_t>(m * k), .output = a};
  }
  [[nodiscard]] Gemm gemm() const { return {.shape = {.m = m, .n = n, .k = k}, .a = a, .b = b, .c = c}; }
  [[nodiscard]] blas::Axpy axpy() const { return {.n = m * n, .alpha = 0.5, .x = c, .y = d}; }
  [[nodiscard]] blas::Scal scal() const { return {.n = m * n, .alpha = 0.25, .x = d}; }
  [[nodiscard]] Fft fft() const {
    return {.shape = {.type = FftType::r2c, .precision = DType::f32, .rank = 1, .n = {n, 0, 0}, .batch = m},
            .input = d,
            .output = e};
  }

  // The five requests sent one by one, each waited for; the first failure.
  [[nodiscard]] Status run_one_by_one(const Device& device) const {
    ACCEL_RETURN_IF_ERROR(device.ask(fill()).wait().status());
    ACCEL_RETURN_IF_ERROR(device.ask(gemm()).wait().status());
    ACCEL_RETURN_IF_ERROR(device.ask(axpy()).wait().status());
    ACCEL_RETURN_IF_ERROR(device.ask(scal()).wait().status());
    return device.ask(fft()).wait().status();
  }

  // The five requests recorded for `device`.
  [[nodiscard]] Result<Recording> record(const Device& device) const {
    Recording recording(device);
    ACCEL_RETURN_IF_ERROR(recording.record(fill()));
    ACCEL_RETURN_IF_ERROR(recording.record(gemm()));
    ACCEL_RETURN_IF_ERROR(recording.record(axpy()));
    ACCEL_RETURN_IF_ERROR(recording.record(scal()));
    ACCEL_RETURN_IF_ERROR(recording.record(fft()));
    return recording;
  }
};

}  // namespace accel::testing
