#include "libs/blas/level1_operation_cuda.hpp"

#include "libs/blas/blas_checks.hpp"
#include "libs/blas/blas_kernels.hpp"
#include "libs/blas/element_types.hpp"
#include "libs/blas/level1_narrow_cuda.hpp"
#include "libs/blas/linked_chains.hpp"
#include "libs/blas/narrow_floats.hpp"
#include "operation/complex_dtypes.hpp"
#include "operation/cuda_copy.hpp"

namespace accel {
namespace {

using blas::Asum;
using blas::Axpy;
using blas::Copy;
using blas::CublasRoutines;
using blas::Dot;
using blas::Iamax;
using blas::Iamin;
using blas::native;
using blas::Nrm2;
using blas::Rot;
using blas::Scal;
using blas::Swap;
using blas::to_int;

// A reduction of an empty vector is 0 (as on the CPU device); cuBLAS is not asked.
Status zero_result(CudaRun& run, const BufferView& result) {
  return run.target.check(cudaMemsetAsync(result.data, 0, result.bytes(), run.target.stream()),
                          "zeroing the result of an empty reduction");
}

// Runs a reduction in device pointer mode, the result going straight into its buffer: launch_narrow for f16 and
// bf16, else `call(T)`.
template <class Request, class Call>
Status reduce(const Request& r, const blas::CublasPlan& plan, std::span<const BufferView> views, CudaRun& run,
              Call&& call) {
  if (r.n == 0) return zero_result(run, views[Operation<Request>::result]);
  ACCEL_RETURN_IF_ERROR(blas::set_pointer_mode(plan, run, CUBLAS_POINTER_MODE_DEVICE));
  if (blas::is_narrow_float(r.dtype)) return blas::launch_narrow(r, plan, views, run);
  return blas::with_vector_type(r.dtype, [&]<class T>(std::type_identity<T>) { return call(std::type_identity<T>{}); });
}

// A Dot or Asum planned: the stream's cuBLAS, and on f16 or bf16 the workspace of the sum kernel's blocks.
template <class Request>
Result<blas::SumPlan> plan_sum(const Request& r, CudaTarget& target) {
  ACCEL_ASSIGN_OR_RETURN(const blas::CublasPlan cublas, blas::plan_cublas(target));
  return blas::SumPlan{.cublas = cublas,
                       .workspace_bytes = blas::is_narrow_float(r.dtype) ? blas::narrow_sum_workspace_bytes(r.n) : 0};
}

}  // namespace

Status CudaOperation<Axpy>::run(const Axpy& r, const Checked&, const Plan& plan, std::span<const BufferView> views,
                                CudaRun& run) {
  if (r.n == 0) return Status();
  ACCEL_RETURN_IF_ERROR(blas::set_pointer_mode(plan, run, CUBLAS_POINTER_MODE_HOST));
  if (blas::is_narrow_float(r.dtype)) return blas::launch_narrow(r, plan, views, run);
  using Op = Operation<Axpy>;
  return blas::with_vector_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    const T alpha = blas::scalar<T>(r.alpha, r.alpha_imag);
    return blas::cublas_launched(
        run,
        (plan.api->*CublasRoutines<T>::axpy)(plan.handle, to_int(r.n), native<T>(&alpha), native<T>(views[Op::x].data),
                                             to_int(r.incx), native<T>(views[Op::y].data), to_int(r.incy)),
        blas::routine<T>("axpy"));
  });
}

std::optional<CudaOperation<Axpy>::Link> CudaOperation<Axpy>::link(const Axpy& r, const Checked&, const Plan&,
                                                                   std::span<const BufferView> views) {
  if (!blas::is_narrow_float(r.dtype) || r.n == 0 || r.incx != 1 || r.incy != 1) return std::nullopt;
  using Op = Operation<Axpy>;
  return blas::NarrowAxpy{.x = views[Op::x].data,
                          .y = views[Op::y].data,
                          .n = r.n,
                          .alpha = static_cast<float>(r.alpha),
                          .bf16 = r.dtype == DType::bf16};
}

Status CudaOperation<Axpy>::run_linked(std::span<const Link> links, CudaRun& run) {
  return blas::run_chains(
      links, run, blas::narrow_axpy_chain_length, blas::launch_narrow_axpy_chain,
      [](const Link& axpy, cudaStream_t stream) {
        return blas::launch_narrow_axpy(axpy.x, 1, axpy.y, 1, axpy.n, axpy.alpha, axpy.bf16, stream);
      },
      "launching the 16-bit axpy kernel", "16-bit axpys");
}

Status CudaOperation<Scal>::run(const Scal& r, const Checked&, const Plan& plan, std::span<const BufferView> views,
                                CudaRun& run) {
  if (r.n == 0) return Status();
  ACCEL_RETURN_IF_ERROR(blas::set_pointer_mode(plan, run, CUBLAS_POINTER_MODE_HOST));
  if (blas::is_narrow_float(r.dtype)) return blas::launch_narrow(r, plan, views, run);
  using Op = Operation<Scal>;
  return blas::with_vector_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    const T alpha = blas::scalar<T>(r.alpha, r.alpha_imag);
    auto* x = native<T>(views[Op::x].data);
    if constexpr (kComplex<T>) {
      if (r.alpha_imag == 0.0) {  // a real factor: the routine that multiplies by one
        const part_t<T> real = alpha.real();
        return blas::cublas_launched(
            run, (plan.api->*CublasRoutines<T>::real_scal)(plan.handle, to_int(r.n), &real, x, to_int(r.incx)),
            CublasRoutines<T>::kRealScal);
      }
    }
    return blas::cublas_launched(
        run, (plan.api->*CublasRoutines<T>::scal)(plan.handle, to_int(r.n), native<T>(&alpha), x, to_int(r.incx)),
        blas::routine<T>("scal"));
  });
}

Result<CudaOperation<Dot>::Plan> CudaOperation<Dot>::plan(const Dot& r, const Checked&, CudaTarget& target) {
  return plan_sum(r, target);
}

Status CudaOperation<Dot>::run(const Dot& r, const Checked&, const Plan& dot_plan, std::span<const BufferView> views,
                               CudaRun& run) {
  using Op = Operation<Dot>;
  const blas::CublasPlan& plan = dot_plan.cublas;
  return reduce(r, plan, views, run, [&]<class T>(std::type_identity<T>) {
    const auto* x = native<T>(views[Op::x].data);
    const auto* y = native<T>(views[Op::y].data);
    auto* result = native<T>(views[Op::result].data);
    if constexpr (kComplex<T>) {
      const auto routine = r.conjugate ? CublasRoutines<T>::dotc : CublasRoutines<T>::dotu;
      return blas::cublas_launched(
          run, (plan.api->*routine)(plan.handle, to_int(r.n), x, to_int(r.incx), y, to_int(r.incy), result),
          blas::routine<T>(r.conjugate ? "dotc" : "dotu"));
    } else {
      return blas::cublas_launched(
          run,
          (plan.api->*CublasRoutines<T>::dot)(plan.handle, to_int(r.n), x, to_int(r.incx), y, to_int(r.incy), result),
          blas::routine<T>("dot"));
    }
  });
}

Status CudaOperation<Nrm2>::run(const Nrm2& r, const Checked&, const Plan& plan, std::span<const BufferView> views,
                                CudaRun& run) {
  using Op = Operation<Nrm2>;
  return reduce(r, plan, views, run, [&]<class T>(std::type_identity<T>) {
    return blas::cublas_launched(
        run,
        (plan.api->*CublasRoutines<T>::nrm2)(plan.handle, to_int(r.n), native<T>(views[Op::x].data), to_int(r.incx),
                                             static_cast<part_t<T>*>(views[Op::result].data)),
        CublasRoutines<T>::kNrm2);
  });
}

Result<CudaOperation<Asum>::Plan> CudaOperation<Asum>::plan(const Asum& r, const Checked&, CudaTarget& target) {
  return plan_sum(r, target);
}

Status CudaOperation<Asum>::run(const Asum& r, const Checked&, const Plan& asum_plan, std::span<const BufferView> views,
                                CudaRun& run) {
  using Op = Operation<Asum>;
  const blas::CublasPlan& plan = asum_plan.cublas;
  return reduce(r, plan, views, run, [&]<class T>(std::type_identity<T>) {
    return blas::cublas_launched(
        run,
        (plan.api->*CublasRoutines<T>::asum)(plan.handle, to_int(r.n), native<T>(views[Op::x].data), to_int(r.incx),
                                             static_cast<part_t<T>*>(views[Op::result].data)),
        CublasRoutines<T>::kAsum);
  });
}

Status CudaOperation<Iamax>::run(const Iamax& r, const Checked&, const Plan& plan, std::span<const BufferView> views,
                                 CudaRun& run) {
  using Op = Operation<Iamax>;
  return reduce(r, plan, views, run, [&]<class T>(std::type_identity<T>) {
    return blas::cublas_launched(
        run,
        (plan.api->*CublasRoutines<T>::iamax)(plan.handle, to_int(r.n), native<T>(views[Op::x].data), to_int(r.incx),
                                              static_cast<int*>(views[Op::result].data)),
        blas::index_routine<T>("amax"));
  });
}

Status CudaOperation<Copy>::run(const Copy& r, const Checked&, const Plan& plan, std::span<const BufferView> views,
                                CudaRun& run) {
  if (r.n == 0) return Status();
  using Op = Operation<Copy>;
  if (r.incx == 1 && r.incy == 1) {  // memory's rate, not cuBLAS's kernel's (PERFORMANCE.md §52, §56)
    return run.target.check(copy_on_device(views[Op::y].data, views[Op::x].data,
                                           static_cast<std::size_t>(r.n) * size_of(r.dtype), run.target.stream()),
                            "copying x to y");
  }
  if (blas::is_narrow_float(r.dtype)) return blas::launch_narrow(r, plan, views, run);
  return blas::with_vector_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    return blas::cublas_launched(
        run,
        (plan.api->*CublasRoutines<T>::copy)(plan.handle, to_int(r.n), native<T>(views[Op::x].data), to_int(r.incx),
                                             native<T>(views[Op::y].data), to_int(r.incy)),
        blas::routine<T>("copy"));
  });
}

std::optional<CudaOperation<Copy>::Link> CudaOperation<Copy>::link(const Copy& r, const Checked&, const Plan&,
                                                                   std::span<const BufferView> views) {
  if (r.n == 0 || r.incx != 1 || r.incy != 1) return std::nullopt;
  using Op = Operation<Copy>;
  return blas::ContiguousCopy{
      .x = views[Op::x].data, .y = views[Op::y].data, .bytes = static_cast<std::uint64_t>(r.n) * size_of(r.dtype)};
}

Status CudaOperation<Copy>::run_linked(std::span<const Link> links, CudaRun& run) {
  return blas::run_chains(
      links, run, blas::copy_chain_length, blas::launch_copy_chain,
      [](const Link& copy, cudaStream_t stream) { return copy_on_device(copy.y, copy.x, copy.bytes, stream); },
      "copying x to y", "copies");
}

Status CudaOperation<Swap>::run(const Swap& r, const Checked&, const Plan& plan, std::span<const BufferView> views,
                                CudaRun& run) {
  if (r.n == 0) return Status();
  using Op = Operation<Swap>;
  if (blas::is_narrow_float(r.dtype)) return blas::launch_narrow(r, plan, views, run);
  if (r.incx == 1 && r.incy == 1) {  // element by element: a complex vector swaps as its parts
    const DType part = real_dtype(r.dtype);
    const auto parts = static_cast<std::int64_t>(size_of(r.dtype) / size_of(part)) * r.n;
    return run.target.check(
        blas::launch_swap(views[Op::x].data, views[Op::y].data, parts, part == DType::f64, run.target.stream()),
        "launching the swap kernel");
  }
  return blas::with_vector_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    return blas::cublas_launched(
        run,
        (plan.api->*CublasRoutines<T>::swap)(plan.handle, to_int(r.n), native<T>(views[Op::x].data), to_int(r.incx),
                                             native<T>(views[Op::y].data), to_int(r.incy)),
        blas::routine<T>("swap"));
  });
}

Status CudaOperation<Rot>::run(const Rot& r, const Checked&, const Plan& plan, std::span<const BufferView> views,
                               CudaRun& run) {
  if (r.n == 0) return Status();
  ACCEL_RETURN_IF_ERROR(blas::set_pointer_mode(plan, run, CUBLAS_POINTER_MODE_HOST));
  if (blas::is_narrow_float(r.dtype)) return blas::launch_narrow(r, plan, views, run);
  using Op = Operation<Rot>;
  return blas::with_vector_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    const part_t<T> c = static_cast<part_t<T>>(r.c), s = static_cast<part_t<T>>(r.s);
    return blas::cublas_launched(
        run,
        (plan.api->*CublasRoutines<T>::rot)(plan.handle, to_int(r.n), native<T>(views[Op::x].data), to_int(r.incx),
                                            native<T>(views[Op::y].data), to_int(r.incy), &c, &s),
        CublasRoutines<T>::kRot);
  });
}

Status CudaOperation<Iamin>::run(const Iamin& r, const Checked&, const Plan& plan, std::span<const BufferView> views,
                                 CudaRun& run) {
  using Op = Operation<Iamin>;
  return reduce(r, plan, views, run, [&]<class T>(std::type_identity<T>) {
    return blas::cublas_launched(
        run,
        (plan.api->*CublasRoutines<T>::iamin)(plan.handle, to_int(r.n), native<T>(views[Op::x].data), to_int(r.incx),
                                              static_cast<int*>(views[Op::result].data)),
        blas::index_routine<T>("amin"));
  });
}

}  // namespace accel
