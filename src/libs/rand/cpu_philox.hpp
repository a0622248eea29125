// Philox4x32-10 requests on the CPU: the numbers philox_kernel.cu writes on CUDA, computed on the host (the
// layout in philox_layout.hpp, the arithmetic in philox_transforms.hpp and cpu_poisson.cpp).
#pragma once

#include <cstdint>

#include "libs/rand/philox_layout.hpp"

namespace accel::rand {

// Writes args.count elements of args.kind to args.output (host memory).
void run_cpu_philox(const PhiloxArgs& args);

// Element `element` of a Poisson stream: curand_poisson of the state curand_init(seed, element, 0) makes. Where
// the device uses a hardware approximation (expf's ex2, and rsqrt, lg2, ex2 and rcp in the rejection method for
// 64 <= lambda <= 4000) we use the exact function, so an element differs now and then (see cpu_poisson.cpp).
[[nodiscard]] std::uint32_t poisson_element(std::uint64_t seed, std::uint64_t element, double lambda);

}  // namespace accel::rand
