#include "libs/blas/level2_operation_cuda.hpp"

#include "libs/blas/blas_checks.hpp"
#include "libs/blas/blas_kernels.hpp"
#include "libs/blas/linked_chains.hpp"
#include "libs/blas/narrow_floats.hpp"

namespace accel {
namespace {

using blas::CublasRoutines;
using blas::Gemv;
using blas::Ger;
using blas::Symv;
using blas::to_int;
using blas::Trsv;

// y = beta y for a product with nothing to sum, as on the CPU device: beta = 0 writes zeros (a pitched memset, one
// element every |incy|), any other beta is `scal(y, step)`, cuBLAS's scal over one member's y, whose order does not
// matter.
template <class Scal>
Status scale_y(const Gemv& r, std::int64_t y_length, void* y_base, CudaRun& run, Scal&& scal) {
  const std::int64_t step = r.incy < 0 ? -r.incy : r.incy;
  const std::size_t element = size_of(r.dtype);
  for (std::int64_t i = 0; i < r.batch; ++i) {
    std::byte* y = blas::batch_member<std::byte>(y_base, i, r.stride_y * static_cast<std::int64_t>(element));
    if (r.beta == 0) {
      ACCEL_RETURN_IF_ERROR(
          run.target.check(cudaMemset2DAsync(y, step * element, 0, element, y_length, run.target.stream()),
                           "zeroing y of an empty product"));
    } else {
      ACCEL_RETURN_IF_ERROR(scal(y, step));
    }
  }
  return Status();
}

// Gemv on f16 or bf16 beyond the small kernel's bounds: cuBLAS's HSH or TST strided-batched gemv (16-bit A, x and y,
// f32 alpha, beta and sums), which takes one member as a batch of one; an empty product is scale_y's, by cublasScalEx.
Status narrow_gemv(const Operation<Gemv>::Checked& checked, const blas::CublasPlan& plan,
                   std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Gemv>;
  const Gemv& r = checked.request;
  ACCEL_RETURN_IF_ERROR(blas::set_pointer_mode(plan, run, CUBLAS_POINTER_MODE_HOST));
  const auto alpha = static_cast<float>(r.alpha), beta = static_cast<float>(r.beta);
  const bool bf16 = r.dtype == DType::bf16;
  if (checked.x_length == 0) {
    return scale_y(r, checked.y_length, views[Op::y].data, run, [&](void* y, std::int64_t step) {
      return blas::cublas_launched(run,
                                   plan.api->cublasScalEx(plan.handle, to_int(checked.y_length), &beta, CUDA_R_32F, y,
                                                          bf16 ? CUDA_R_16BF : CUDA_R_16F, to_int(step), CUDA_R_32F),
                                   "cublasScalEx");
    });
  }
  const cublasOperation_t op = blas::to_cublas(r.transpose);
  const void *a = views[Op::a].data, *x = views[Op::x].data;
  void* y = views[Op::y].data;
  if (bf16) {
    return blas::cublas_launched(
        run,
        plan.api->cublasTSTgemvStridedBatched(
            plan.handle, op, to_int(r.m), to_int(r.n), &alpha, static_cast<const __nv_bfloat16*>(a), to_int(r.lda),
            r.stride_a, static_cast<const __nv_bfloat16*>(x), to_int(r.incx), r.stride_x, &beta,
            static_cast<__nv_bfloat16*>(y), to_int(r.incy), r.stride_y, to_int(r.batch)),
        "cublasTSTgemvStridedBatched");
  }
  return blas::cublas_launched(run,
                               plan.api->cublasHSHgemvStridedBatched(
                                   plan.handle, op, to_int(r.m), to_int(r.n), &alpha, static_cast<const __half*>(a),
                                   to_int(r.lda), r.stride_a, static_cast<const __half*>(x), to_int(r.incx), r.stride_x,
                                   &beta, static_cast<__half*>(y), to_int(r.incy), r.stride_y, to_int(r.batch)),
                               "cublasHSHgemvStridedBatched");
}

// A Gemv's, Symv's or Ger's operands as its checked request resolved them, into a launch of the same field names.
template <class Launch, class Request>
Launch operands_of(const Request& r, std::span<const BufferView> views) {
  using Op = Operation<Request>;
  Launch l;
  l.a = views[Op::a].data;
  l.lda = r.lda;
  l.stride_a = r.stride_a;
  l.x = views[Op::x].data;
  l.incx = r.incx;
  l.stride_x = r.stride_x;
  l.y = views[Op::y].data;
  l.incy = r.incy;
  l.stride_y = r.stride_y;
  l.alpha = r.alpha;
  l.batch = r.batch;
  return l;
}

blas::VectorElement vector_element(DType dtype) {
  switch (dtype) {
    case DType::f64: return blas::VectorElement::f64;
    case DType::f16: return blas::VectorElement::f16;
    case DType::bf16: return blas::VectorElement::bf16;
    default: return blas::VectorElement::f32;
  }
}

template <class Request>
blas::MatrixVectorLaunch matrix_vector(const Request& r, std::span<const BufferView> views) {
  blas::MatrixVectorLaunch l = operands_of<blas::MatrixVectorLaunch>(r, views);
  l.element = vector_element(r.dtype);
  l.beta = r.beta;
  return l;
}

blas::GerLaunch ger_launch(const Ger& r, std::span<const BufferView> views) {
  blas::GerLaunch launch = operands_of<blas::GerLaunch>(r, views);
  launch.f64 = r.dtype == DType::f64;
  launch.m = r.m;
  launch.n = r.n;
  return launch;
}

}  // namespace

Result<CudaOperation<Gemv>::Plan> CudaOperation<Gemv>::plan(const Gemv&, const Checked& checked, CudaTarget& target) {
  const Gemv& r = checked.request;
  ACCEL_ASSIGN_OR_RETURN(const blas::CublasPlan cublas, blas::plan_cublas(target));
  const bool transposed = r.transpose != Transpose::none;
  const bool streamable = blas::is_narrow_float(r.dtype) || r.dtype == DType::f32;
  if (!streamable || checked.x_length == 0 || checked.y_length == 0 ||
      blas::small_gemv(r.m, r.n, transposed, r.batch) ||
      (blas::is_narrow_float(r.dtype) &&
       r.m * r.n > (transposed ? kNarrowTransposedOnCublasAbove : kNarrowOnCublasAbove)))
    return Plan{.cublas = cublas};
  return Plan{.cublas = cublas,
              .streamed = blas::streamed_gemv_split(static_cast<std::int64_t>(size_of(r.dtype)), r.m, r.n, transposed,
                                                    r.batch, r.lda, r.stride_a)};
}

Status CudaOperation<Gemv>::run(const Gemv&, const Checked& checked, const Plan& gemv_plan,
                                std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Gemv>;
  const Gemv& r = checked.request;
  if (checked.y_length == 0) return Status();
  const bool transposed = r.transpose != Transpose::none;
  const blas::GemvLaunch launch{matrix_vector(r, views), transposed, r.m, r.n};
  if (checked.x_length != 0 && blas::small_gemv(r.m, r.n, transposed, r.batch))
    return run.target.check(blas::launch_small_gemv(launch, run.target.stream()), "launching the small gemv kernel");
  if (gemv_plan.streamed.splits != 0 && blas::streamed_gemv_aligned(launch))
    return run.target.check(blas::launch_streamed_gemv(launch, gemv_plan.streamed, run.workspace, run.target.stream()),
                            "launching the streamed gemv kernels");
  const blas::CublasPlan& plan = gemv_plan.cublas;
  if (blas::is_narrow_float(r.dtype)) return narrow_gemv(checked, plan, views, run);
  ACCEL_RETURN_IF_ERROR(blas::set_pointer_mode(plan, run, CUBLAS_POINTER_MODE_HOST));
  return blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) -> Status {
    if (checked.x_length == 0) {
      const T beta = static_cast<T>(r.beta);
      return scale_y(r, checked.y_length, views[Op::y].data, run, [&](void* y, std::int64_t step) {
        return blas::cublas_launched(run,
                                     (plan.api->*CublasRoutines<T>::scal)(plan.handle, to_int(checked.y_length), &beta,
                                                                          static_cast<T*>(y), to_int(step)),
                                     blas::routine<T>("scal"));
      });
    }
    const T alpha = static_cast<T>(r.alpha), beta = static_cast<T>(r.beta);
    const auto* a = static_cast<const T*>(views[Op::a].data);
    const auto* x = static_cast<const T*>(views[Op::x].data);
    auto* y = static_cast<T*>(views[Op::y].data);
    if (r.batch == 1) {
      return blas::cublas_launched(
          run,
          (plan.api->*CublasRoutines<T>::gemv)(plan.handle, blas::to_cublas(r.transpose), to_int(r.m), to_int(r.n),
                                               &alpha, a, to_int(r.lda), x, to_int(r.incx), &beta, y, to_int(r.incy)),
          blas::routine<T>("gemv"));
    }
    return blas::cublas_launched(
        run,
        (plan.api->*CublasRoutines<T>::gemv_batched)(
            plan.handle, blas::to_cublas(r.transpose), to_int(r.m), to_int(r.n), &alpha, a, to_int(r.lda), r.stride_a,
            x, to_int(r.incx), r.stride_x, &beta, y, to_int(r.incy), r.stride_y, to_int(r.batch)),
        blas::routine<T>("gemvStridedBatched"));
  });
}

Status CudaOperation<Ger>::run(const Ger&, const Checked& checked, const Plan&, std::span<const BufferView> views,
                               CudaRun& run) {
  return run.target.check(blas::launch_ger(ger_launch(checked.request, views), run.target.stream()),
                          "launching the ger kernel");
}

std::optional<CudaOperation<Ger>::Link> CudaOperation<Ger>::link(const Ger&, const Checked& checked, const Plan&,
                                                                 std::span<const BufferView> views) {
  return ger_launch(checked.request, views);
}

Status CudaOperation<Ger>::run_linked(std::span<const Link> links, CudaRun& run) {
  return blas::run_chains(links, run, blas::ger_chain_length, blas::launch_ger_chain, blas::launch_ger,
                          "launching the ger kernel", "gers");
}

Status CudaOperation<Trsv>::run(const Trsv&, const Checked& checked, const Plan& plan,
                                std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Trsv>;
  const Trsv& r = checked.request;
  if (r.n == 0) return Status();
  return blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) -> Status {
    for (std::int64_t i = 0; i < r.batch; ++i) {
      ACCEL_RETURN_IF_ERROR(blas::cublas_launched(
          run,
          (plan.api->*CublasRoutines<T>::trsv)(
              plan.handle, blas::to_cublas(r.fill), blas::to_cublas(r.transpose), blas::to_cublas(r.diagonal),
              to_int(r.n), blas::batch_member<const T>(views[Op::a].data, i, r.stride_a), to_int(r.lda),
              blas::batch_member<T>(views[Op::x].data, i, r.stride_x), to_int(r.incx)),
          blas::routine<T>("trsv")));
    }
    return Status();
  });
}

Result<CudaOperation<Symv>::Plan> CudaOperation<Symv>::plan(const Symv&, const Checked& checked, CudaTarget&) {
  const Symv& r = checked.request;
  return blas::symv_batching(r.n, r.dtype == DType::f64, r.batch);
}

Status CudaOperation<Symv>::run(const Symv&, const Checked& checked, const Plan& plan,
                                std::span<const BufferView> views, CudaRun& run) {
  const Symv& r = checked.request;
  const blas::SymvLaunch launch{matrix_vector(r, views), r.fill == blas::Fill::lower, r.n};
  return run.target.check(blas::launch_symv(launch, plan, run.workspace, run.target.stream()),
                          "launching the symv kernels");
}

}  // namespace accel
