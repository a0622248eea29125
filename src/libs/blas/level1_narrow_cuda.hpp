// BLAS level 1 on f16 and bf16 vectors on a CUDA stream: cuBLAS's Ex routines, computing in f32 as the CPU device's
// loops do (level1_narrow.hpp), and Axpy, Asum and Dot on kernels of ours (blas_kernels.hpp: cuBLAS has no 16-bit
// Asum, its Axpy ran at half the bandwidth, and a request on its Dot took twice as long as on ours). Alpha goes as an
// f32, Rot's c and s as the element type, and the results of Dot, Nrm2 and Asum are of the element type. Each is called
// by level1_operation_cuda.cpp's run once it has handled what every dtype shares: an empty request, the handle's
// pointer mode (host for alpha, device for a result), and Copy of contiguous vectors (a cudaMemcpyAsync). A type
// combination this cuBLAS does not take comes back as its status, naming the routine, before anything is launched.
#pragma once

#include <span>

#include "libs/blas/cublas_state.hpp"
#include "libs/blas/level1_operation.hpp"

namespace accel::blas {

[[nodiscard]] Status launch_narrow(const Axpy& request, const CublasPlan& plan, std::span<const BufferView> views,
                                   CudaRun& run);
[[nodiscard]] Status launch_narrow(const Scal& request, const CublasPlan& plan, std::span<const BufferView> views,
                                   CudaRun& run);
[[nodiscard]] Status launch_narrow(const Dot& request, const CublasPlan& plan, std::span<const BufferView> views,
                                   CudaRun& run);
[[nodiscard]] Status launch_narrow(const Nrm2& request, const CublasPlan& plan, std::span<const BufferView> views,
                                   CudaRun& run);
[[nodiscard]] Status launch_narrow(const Asum& request, const CublasPlan& plan, std::span<const BufferView> views,
                                   CudaRun& run);
[[nodiscard]] Status launch_narrow(const Iamax& request, const CublasPlan& plan, std::span<const BufferView> views,
                                   CudaRun& run);
[[nodiscard]] Status launch_narrow(const Iamin& request, const CublasPlan& plan, std::span<const BufferView> views,
                                   CudaRun& run);
[[nodiscard]] Status launch_narrow(const Copy& request, const CublasPlan& plan, std::span<const BufferView> views,
                                   CudaRun& run);
[[nodiscard]] Status launch_narrow(const Swap& request, const CublasPlan& plan, std::span<const BufferView> views,
                                   CudaRun& run);
[[nodiscard]] Status launch_narrow(const Rot& request, const CublasPlan& plan, std::span<const BufferView> views,
                                   CudaRun& run);

}  // namespace accel::blas
