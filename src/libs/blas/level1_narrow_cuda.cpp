#include "libs/blas/level1_narrow_cuda.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "libs/blas/blas_kernels.hpp"

namespace accel::blas {
namespace {

// Every routine computes in f32, the execution type cuBLAS documents for its 16-bit forms.
constexpr cudaDataType kExecution = CUDA_R_32F;

cudaDataType cuda_type(DType dtype) { return dtype == DType::bf16 ? CUDA_R_16BF : CUDA_R_16F; }

// A routine's name with the element type, for its failure.
std::string ex_routine(std::string_view routine, DType dtype) {
  return fmt::format("cublas{}Ex on {}", routine, to_string(dtype));
}

// A scalar of the element type, as cublasRotEx takes c and s.
std::uint16_t element_bits(DType dtype, double value) {
  const auto single = static_cast<float>(value);
  return dtype == DType::bf16 ? to_bfloat16(single).bits : to_half(single).bits;
}

}  // namespace

Status launch_narrow(const Axpy& r, const CublasPlan&, std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Axpy>;
  return run.target.check(launch_narrow_axpy(views[Op::x].data, r.incx, views[Op::y].data, r.incy, r.n,
                                             static_cast<float>(r.alpha), r.dtype == DType::bf16, run.target.stream()),
                          "launching the 16-bit axpy kernel");
}

Status launch_narrow(const Scal& r, const CublasPlan& plan, std::span<const BufferView> views, CudaRun& run) {
  const auto alpha = static_cast<float>(r.alpha);
  return cublas_launched(
      run,
      plan.api->cublasScalEx(plan.handle, to_int(r.n), &alpha, CUDA_R_32F, views[Operation<Scal>::x].data,
                             cuda_type(r.dtype), to_int(r.incx), kExecution),
      ex_routine("Scal", r.dtype));
}

Status launch_narrow(const Dot& r, const CublasPlan&, std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Dot>;
  return run.target.check(
      launch_narrow_dot(views[Op::x].data, r.incx, views[Op::y].data, r.incy, r.n, r.dtype == DType::bf16,
                        views[Op::result].data, run.workspace, run.target.stream()),
      "launching the 16-bit dot kernel");
}

Status launch_narrow(const Nrm2& r, const CublasPlan& plan, std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Nrm2>;
  const cudaDataType type = cuda_type(r.dtype);
  return cublas_launched(run,
                         plan.api->cublasNrm2Ex(plan.handle, to_int(r.n), views[Op::x].data, type, to_int(r.incx),
                                                views[Op::result].data, type, kExecution),
                         ex_routine("Nrm2", r.dtype));
}

Status launch_narrow(const Asum& r, const CublasPlan&, std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Asum>;
  return run.target.check(launch_narrow_asum(views[Op::x].data, r.n, r.incx, r.dtype == DType::bf16,
                                             views[Op::result].data, run.workspace, run.target.stream()),
                          "launching the 16-bit asum kernel");
}

Status launch_narrow(const Iamax& r, const CublasPlan& plan, std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Iamax>;
  return cublas_launched(run,
                         plan.api->cublasIamaxEx(plan.handle, to_int(r.n), views[Op::x].data, cuda_type(r.dtype),
                                                 to_int(r.incx), static_cast<int*>(views[Op::result].data)),
                         ex_routine("Iamax", r.dtype));
}

Status launch_narrow(const Iamin& r, const CublasPlan& plan, std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Iamin>;
  return cublas_launched(run,
                         plan.api->cublasIaminEx(plan.handle, to_int(r.n), views[Op::x].data, cuda_type(r.dtype),
                                                 to_int(r.incx), static_cast<int*>(views[Op::result].data)),
                         ex_routine("Iamin", r.dtype));
}

Status launch_narrow(const Copy& r, const CublasPlan& plan, std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Copy>;
  const cudaDataType type = cuda_type(r.dtype);
  return cublas_launched(run,
                         plan.api->cublasCopyEx(plan.handle, to_int(r.n), views[Op::x].data, type, to_int(r.incx),
                                                views[Op::y].data, type, to_int(r.incy)),
                         ex_routine("Copy", r.dtype));
}

Status launch_narrow(const Swap& r, const CublasPlan& plan, std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Swap>;
  const cudaDataType type = cuda_type(r.dtype);
  return cublas_launched(run,
                         plan.api->cublasSwapEx(plan.handle, to_int(r.n), views[Op::x].data, type, to_int(r.incx),
                                                views[Op::y].data, type, to_int(r.incy)),
                         ex_routine("Swap", r.dtype));
}

Status launch_narrow(const Rot& r, const CublasPlan& plan, std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Rot>;
  const cudaDataType type = cuda_type(r.dtype);
  const std::uint16_t c = element_bits(r.dtype, r.c), s = element_bits(r.dtype, r.s);
  return cublas_launched(run,
                         plan.api->cublasRotEx(plan.handle, to_int(r.n), views[Op::x].data, type, to_int(r.incx),
                                               views[Op::y].data, type, to_int(r.incy), &c, &s, type, kExecution),
                         ex_routine("Rot", r.dtype));
}

}  // namespace accel::blas
