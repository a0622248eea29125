/// @file
/// The FFT family's entry point: fft::fft sends an Fft request (accel/libs/fft/fft.hpp) to `device` and answers
/// with its future, as Device::ask would.
///
/// @code
///   accel::fft::fft(device, {.shape = {.rank = 1, .n = {1024, 0, 0}, .batch = 64}, .input = signal,
///                            .output = spectrum}).wait();  // 64 c2c transforms of 1,024 points, f32
/// @endcode
#pragma once

#include "accel/device/device.hpp"
#include "accel/libs/fft/requests.hpp"

namespace accel::fft {

/// A batched 1-3D transform (c2c, r2c or c2r; forward or inverse; f32 or f64): see accel::Fft.
inline Future<Done> fft(const Device& device, Fft request) { return device.ask(std::move(request)); }

}  // namespace accel::fft
