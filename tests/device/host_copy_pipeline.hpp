// What the recording tests share for issue 47's pipeline with host copies: upload X (m × n) from host memory, an
// r2c FFT of its rows into E and the c2r FFT back into Y (n X), C = Y B (B n × n), C scaled by 1/n (elementwise),
// and C downloaded into host memory. The host memory is the caller's: pinned on a CUDA device, where a recording
// captures the copies as memcpy nodes.
#pragma once

#include <complex>
#include <cstdint>
#include <span>
#include <vector>

#include "accel/device/recording.hpp"

namespace accel::testing {

struct HostCopyPipeline {
  std::int64_t m = 0, n = 0;
  Buffer<float> x, y, b, c;
  Buffer<std::complex<float>> e;

  // Allocates the buffers on `device` and uploads B.
  static Result<HostCopyPipeline> make(const Device& device, std::int64_t m, std::int64_t n,
                                       const std::vector<float>& b) {
    HostCopyPipeline p{.m = m, .n = n};
    ACCEL_ASSIGN_OR_RETURN(p.x, device.allocate<float>(m * n).wait());
    ACCEL_ASSIGN_OR_RETURN(p.y, device.allocate<float>(m * n).wait());
    ACCEL_ASSIGN_OR_RETURN(p.b, device.allocate<float>(n * n).wait());
    ACCEL_ASSIGN_OR_RETURN(p.c, device.allocate<float>(m * n).wait());
    ACCEL_ASSIGN_OR_RETURN(p.e, device.allocate<std::complex<float>>(m * (n / 2 + 1)).wait());
    ACCEL_RETURN_IF_ERROR(device.upload(std::span<const float>(b), p.b).wait().status());
    return p;
  }

  [[nodiscard]] CopyToDevice upload(std::span<const float> host) const {
    return {.source = HostSource::of(host), .destination = x};
  }
  [[nodiscard]] Fft forward() const {
    return {.shape = {.type = FftType::r2c, .precision = DType::f32, .rank = 1, .n = {n, 0, 0}, .batch = m},
            .input = x,
            .output = e};
  }
  [[nodiscard]] Fft inverse() const {
    return {.shape = {.type = FftType::c2r,
                      .precision = DType::f32,
                      .rank = 1,
                      .n = {n, 0, 0},
                      .batch = m,
                      .direction = FftDirection::inverse},
            .input = e,
            .output = y};
  }
  [[nodiscard]] Gemm gemm() const { return {.shape = {.m = m, .n = n, .k = n}, .a = y, .b = b, .c = c}; }
  [[nodiscard]] blas::Scal scale() const { return {.n = m * n, .alpha = 1.0 / static_cast<double>(n), .x = c}; }
  [[nodiscard]] CopyToHost download(std::span<float> host) const {
    return {.source = c, .destination = HostDestination::of(host)};
  }

  // The six requests sent one by one, each waited for; the first failure.
  [[nodiscard]] Status run_one_by_one(const Device& device, std::span<const float> in, std::span<float> out) const {
    ACCEL_RETURN_IF_ERROR(device.ask(upload(in)).wait().status());
    ACCEL_RETURN_IF_ERROR(device.ask(forward()).wait().status());
    ACCEL_RETURN_IF_ERROR(device.ask(inverse()).wait().status());
    ACCEL_RETURN_IF_ERROR(device.ask(gemm()).wait().status());
    ACCEL_RETURN_IF_ERROR(device.ask(scale()).wait().status());
    return device.ask(download(out)).wait().status();
  }

  // The six requests recorded for `device`, reading `in` and writing `out`.
  [[nodiscard]] Result<Recording> record(const Device& device, std::span<const float> in, std::span<float> out) const {
    Recording recording(device);
    ACCEL_RETURN_IF_ERROR(recording.record(upload(in)));
    ACCEL_RETURN_IF_ERROR(recording.record(forward()));
    ACCEL_RETURN_IF_ERROR(recording.record(inverse()));
    ACCEL_RETURN_IF_ERROR(recording.record(gemm()));
    ACCEL_RETURN_IF_ERROR(recording.record(scale()));
    ACCEL_RETURN_IF_ERROR(recording.record(download(out)));
    return recording;
  }
};

}  // namespace accel::testing
