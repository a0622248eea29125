/// @file
/// The JIT family's entry points: run-time compiled kernels and CUTLASS instances (accel/jit/*.hpp; CUDA devices;
/// the CPU device answers not_supported), each sent to `device` and answered by its future, as Device::ask would.
///
/// @code
///   accel::jit::launch_kernel(device, {.program = program, .kernel = "scale", .grid = {blocks}, .block = {256},
///                                      .args = {accel::KernelArg::inout(x), accel::KernelArg::of(2.0f)}}).wait();
/// @endcode
#pragma once

#include "accel/device/device.hpp"
#include "accel/jit/requests.hpp"

namespace accel::jit {

/// Launches a kernel of a CUDA C++ program compiled by NVRTC (or loaded from the cache): see accel::LaunchKernel.
inline Future<Done> launch_kernel(const Device& device, LaunchKernel request) { return device.ask(std::move(request)); }
/// A CUTLASS GEMM with its epilogue, built by nvcc on first use: see accel::CutlassGemm.
inline Future<Done> cutlass_gemm(const Device& device, CutlassGemm request) { return device.ask(std::move(request)); }
/// Several CUTLASS GEMMs of one kind in one launch: see accel::CutlassGroupedGemm.
inline Future<Done> cutlass_grouped_gemm(const Device& device, CutlassGroupedGemm request) {
  return device.ask(std::move(request));
}
/// A CUTLASS implicit-GEMM convolution: see accel::CutlassConv.
inline Future<Done> cutlass_conv(const Device& device, CutlassConv request) { return device.ask(std::move(request)); }

}  // namespace accel::jit
