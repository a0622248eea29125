/// @file
/// The random-number family's entry point: rand::generate sends a Generate request (accel/libs/rand/generate.hpp)
/// to `device` and answers with its future, as Device::ask would.
///
/// @code
///   accel::rand::generate(device, {.seed = 42, .count = noise.size(), .output = noise}).wait();  // uniform f32
/// @endcode
#pragma once

#include "accel/device/device.hpp"
#include "accel/libs/rand/requests.hpp"

namespace accel::rand {

/// Fills a buffer with random numbers (uniform, normal, log-normal, Poisson or raw bits): see Generate.
inline Future<Done> generate(const Device& device, Generate request) { return device.ask(request); }

}  // namespace accel::rand
