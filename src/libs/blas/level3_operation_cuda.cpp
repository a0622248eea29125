#include "libs/blas/level3_operation_cuda.hpp"

#include "libs/blas/blas_checks.hpp"
#include "libs/blas/blas_kernels.hpp"

namespace accel {

using blas::CublasRoutines;
using blas::Geam;
using blas::Symm;
using blas::Syrk;
using blas::to_cublas;
using blas::to_int;
using blas::Trmm;
using blas::Trsm;

Status CudaOperation<Trsm>::run(const Trsm&, const Checked& checked, const Plan& plan,
                                std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Trsm>;
  const Trsm& r = checked.request;
  if (r.m == 0 || r.n == 0) return Status();
  ACCEL_RETURN_IF_ERROR(blas::set_pointer_mode(plan, run, CUBLAS_POINTER_MODE_HOST));
  return blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) -> Status {
    const T alpha = static_cast<T>(r.alpha);
    for (std::int64_t i = 0; i < r.batch; ++i) {
      ACCEL_RETURN_IF_ERROR(blas::cublas_launched(
          run,
          (plan.api->*CublasRoutines<T>::trsm)(
              plan.handle, to_cublas(r.side), to_cublas(r.fill), to_cublas(r.transpose), to_cublas(r.diagonal),
              to_int(r.m), to_int(r.n), &alpha, blas::batch_member<const T>(views[Op::a].data, i, r.stride_a),
              to_int(r.lda), blas::batch_member<T>(views[Op::b].data, i, r.stride_b), to_int(r.ldb)),
          blas::routine<T>("trsm")));
    }
    return Status();
  });
}

Status CudaOperation<Syrk>::run(const Syrk&, const Checked& checked, const Plan& plan,
                                std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Syrk>;
  const Syrk& r = checked.request;
  if (r.n == 0) return Status();
  ACCEL_RETURN_IF_ERROR(blas::set_pointer_mode(plan, run, CUBLAS_POINTER_MODE_HOST));
  return blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) -> Status {
    const T alpha = static_cast<T>(r.alpha), beta = static_cast<T>(r.beta);
    for (std::int64_t i = 0; i < r.batch; ++i) {
      ACCEL_RETURN_IF_ERROR(blas::cublas_launched(
          run,
          (plan.api->*CublasRoutines<T>::syrk)(
              plan.handle, to_cublas(r.fill), to_cublas(r.transpose), to_int(r.n), to_int(r.k), &alpha,
              blas::batch_member<const T>(views[Op::a].data, i, r.stride_a), to_int(r.lda), &beta,
              blas::batch_member<T>(views[Op::c].data, i, r.stride_c), to_int(r.ldc)),
          blas::routine<T>("syrk")));
    }
    return Status();
  });
}

Result<CudaOperation<Symm>::Plan> CudaOperation<Symm>::plan(const Symm&, const Checked& checked, CudaTarget& target) {
  const Symm& r = checked.request;
  const std::int64_t order = r.side == blas::Side::left ? r.m : r.n;
  ACCEL_ASSIGN_OR_RETURN(blas::CublasPlan cublas, blas::plan_cublas(target));
  if (order < kByGemmFrom) return Plan{.cublas = cublas};
  return Plan{.cublas = cublas,
              .by_gemm = true,
              .workspace_bytes = static_cast<std::uint64_t>(order * order) * size_of(r.dtype)};
}

Status CudaOperation<Symm>::run(const Symm&, const Checked& checked, const Plan& plan,
                                std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Symm>;
  const Symm& r = checked.request;
  if (r.m == 0 || r.n == 0) return Status();
  ACCEL_RETURN_IF_ERROR(blas::set_pointer_mode(plan.cublas, run, CUBLAS_POINTER_MODE_HOST));
  const bool left = r.side == blas::Side::left;
  const std::int64_t order = left ? r.m : r.n;
  return blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) -> Status {
    const T alpha = static_cast<T>(r.alpha), beta = static_cast<T>(r.beta);
    const T* full = static_cast<const T*>(run.workspace);
    for (std::int64_t i = 0; i < r.batch; ++i) {
      if (!plan.by_gemm) {
        ACCEL_RETURN_IF_ERROR(blas::cublas_launched(
            run,
            (plan.cublas.api->*CublasRoutines<T>::symm)(
                plan.cublas.handle, to_cublas(r.side), to_cublas(r.fill), to_int(r.m), to_int(r.n), &alpha,
                blas::batch_member<const T>(views[Op::a].data, i, r.stride_a), to_int(r.lda),
                blas::batch_member<const T>(views[Op::b].data, i, r.stride_b), to_int(r.ldb), &beta,
                blas::batch_member<T>(views[Op::c].data, i, r.stride_c), to_int(r.ldc)),
            blas::routine<T>("symm")));
        continue;
      }
      ACCEL_RETURN_IF_ERROR(run.target.check(
          blas::launch_whole_matrix(blas::batch_member<const T>(views[Op::a].data, i, r.stride_a), r.lda, order,
                                    r.fill == blas::Fill::lower, blas::StoredTriangle::symmetric, r.dtype == DType::f64,
                                    run.workspace, run.target.stream()),
          "launching the kernel that mirrors Symm's A"));
      const T* b = blas::batch_member<const T>(views[Op::b].data, i, r.stride_b);
      // C = alpha A B (left) or alpha B A (right) with A whole: one GEMM.
      ACCEL_RETURN_IF_ERROR(
          blas::cublas_launched(run,
                                (plan.cublas.api->*CublasRoutines<T>::gemm)(
                                    plan.cublas.handle, CUBLAS_OP_N, CUBLAS_OP_N, to_int(r.m), to_int(r.n),
                                    to_int(order), &alpha, left ? full : b, left ? to_int(order) : to_int(r.ldb),
                                    left ? b : full, left ? to_int(r.ldb) : to_int(order), &beta,
                                    blas::batch_member<T>(views[Op::c].data, i, r.stride_c), to_int(r.ldc)),
                                blas::routine<T>("gemm")));
    }
    return Status();
  });
}

Result<CudaOperation<Trmm>::Plan> CudaOperation<Trmm>::plan(const Trmm&, const Checked& checked, CudaTarget& target) {
  const Trmm& r = checked.request;
  const std::int64_t order = r.side == blas::Side::left ? r.m : r.n;
  ACCEL_ASSIGN_OR_RETURN(blas::CublasPlan cublas, blas::plan_cublas(target));
  if (order >= kByGemmBelow) return Plan{.cublas = cublas};
  const auto elements = static_cast<std::uint64_t>(order * order + r.m * r.n);
  return Plan{.cublas = cublas, .by_gemm = true, .workspace_bytes = elements * size_of(r.dtype)};
}

Status CudaOperation<Trmm>::run(const Trmm&, const Checked& checked, const Plan& plan,
                                std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Trmm>;
  const Trmm& r = checked.request;
  if (r.m == 0 || r.n == 0) return Status();
  ACCEL_RETURN_IF_ERROR(blas::set_pointer_mode(plan.cublas, run, CUBLAS_POINTER_MODE_HOST));
  const bool left = r.side == blas::Side::left;
  const std::int64_t order = left ? r.m : r.n;
  return blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) -> Status {
    const T alpha = static_cast<T>(r.alpha), zero = 0;
    T* whole = static_cast<T*>(run.workspace);
    T* b_copy = whole + order * order;
    for (std::int64_t i = 0; i < r.batch; ++i) {
      const T* a = blas::batch_member<const T>(views[Op::a].data, i, r.stride_a);
      T* b = blas::batch_member<T>(views[Op::b].data, i, r.stride_b);
      if (!plan.by_gemm) {
        // cuBLAS's trmm writes C = alpha op(A) B; given B as C it works in place, as BLAS's does.
        ACCEL_RETURN_IF_ERROR(blas::cublas_launched(
            run,
            (plan.cublas.api->*CublasRoutines<T>::trmm)(
                plan.cublas.handle, to_cublas(r.side), to_cublas(r.fill), to_cublas(r.transpose), to_cublas(r.diagonal),
                to_int(r.m), to_int(r.n), &alpha, a, to_int(r.lda), b, to_int(r.ldb), b, to_int(r.ldb)),
            blas::routine<T>("trmm")));
        continue;
      }
      // A made whole (zeros outside its triangle), B copied aside, then B = alpha op(A) B (or alpha B op(A)): one
      // GEMM that reads the copy and writes B.
      const auto form =
          r.diagonal == blas::Diagonal::unit ? blas::StoredTriangle::unit_triangular : blas::StoredTriangle::triangular;
      ACCEL_RETURN_IF_ERROR(
          run.target.check(blas::launch_whole_matrix(a, r.lda, order, r.fill == blas::Fill::lower, form,
                                                     r.dtype == DType::f64, whole, run.target.stream()),
                           "launching the kernel that makes Trmm's A whole"));
      ACCEL_RETURN_IF_ERROR(
          run.target.check(cudaMemcpy2DAsync(b_copy, r.m * sizeof(T), b, r.ldb * sizeof(T), r.m * sizeof(T), r.n,
                                             cudaMemcpyDeviceToDevice, run.target.stream()),
                           "copying Trmm's B aside"));
      const cublasOperation_t op_a = to_cublas(r.transpose);
      ACCEL_RETURN_IF_ERROR(blas::cublas_launched(
          run,
          (plan.cublas.api->*CublasRoutines<T>::gemm)(
              plan.cublas.handle, left ? op_a : CUBLAS_OP_N, left ? CUBLAS_OP_N : op_a, to_int(r.m), to_int(r.n),
              to_int(order), &alpha, left ? whole : b_copy, left ? to_int(order) : to_int(r.m), left ? b_copy : whole,
              left ? to_int(r.m) : to_int(order), &zero, b, to_int(r.ldb)),
          blas::routine<T>("gemm")));
    }
    return Status();
  });
}

Status CudaOperation<Geam>::run(const Geam&, const Checked& checked, const Plan& plan,
                                std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Geam>;
  const Geam& r = checked.request;
  if (r.m == 0 || r.n == 0) return Status();
  ACCEL_RETURN_IF_ERROR(blas::set_pointer_mode(plan, run, CUBLAS_POINTER_MODE_HOST));
  return blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) -> Status {
    const T alpha = static_cast<T>(r.alpha), beta = static_cast<T>(r.beta);
    for (std::int64_t i = 0; i < r.batch; ++i) {
      ACCEL_RETURN_IF_ERROR(blas::cublas_launched(
          run,
          (plan.api->*CublasRoutines<T>::geam)(
              plan.handle, to_cublas(r.transpose_a), to_cublas(r.transpose_b), to_int(r.m), to_int(r.n), &alpha,
              blas::batch_member<const T>(views[Op::a].data, i, r.stride_a), to_int(r.lda), &beta,
              blas::batch_member<const T>(views[Op::b].data, i, r.stride_b), to_int(r.ldb),
              blas::batch_member<T>(views[Op::c].data, i, r.stride_c), to_int(r.ldc)),
          blas::routine<T>("geam")));
    }
    return Status();
  });
}

}  // namespace accel
