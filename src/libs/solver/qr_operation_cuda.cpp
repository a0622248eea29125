#include "libs/solver/qr_operation_cuda.hpp"

#include <algorithm>
#include <type_traits>

#include "libs/solver/cusolver_routines.hpp"
#include "libs/solver/qr_kernel.hpp"

namespace accel {
namespace {

using solver::Geqrf;
using solver::Orgqr;
using solver::Ormqr;

template <class T>
using Qr = solver::QrRoutines<T>;

// The family's QR kernels (qr_kernel.hpp) are real; complex QR is cuSOLVER's (geqrf, ungqr, unmqr).
bool takes_small_geqrf(const Geqrf& r) {
  return solver::is_real(r.dtype) && solver::takes_small_geqrf(r.m, r.n, r.batch, size_of(r.dtype));
}
bool takes_small_orgqr(const Orgqr& r) {
  return solver::is_real(r.dtype) && solver::takes_small_orgqr(r.m, r.n, r.k, r.batch, size_of(r.dtype));
}

template <class T>
Status geqrf(const Geqrf& r, const solver::DensePlan& plan, std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Geqrf>;
  std::int32_t* infos = solver::run_infos(plan, run, nullptr);
  if (!plan.empty) {
    T* a = static_cast<T*>(views[Op::a].data);
    T* tau = static_cast<T*>(views[Op::tau].data);
    if constexpr (std::is_floating_point_v<T>) {
      if (takes_small_geqrf(r)) {  // no infos: nothing for them to report
        return run.target.check(solver::launch_small_geqrf(a, r.m, r.n, r.lda, r.stride_a, r.batch, tau,
                                                           static_cast<T*>(run.workspace), run.target.stream()),
                                "the small QR kernels");
      }
    }
    const std::int64_t k = std::min(r.m, r.n);
    for (std::int64_t i = 0; i < r.batch; ++i) {
      ACCEL_RETURN_IF_ERROR(
          solver::launched(run,
                           (plan.api->*Qr<T>::geqrf)(plan.handle, solver::to_int(r.m), solver::to_int(r.n),
                                                     a + solver::matrix_offset(i, r.stride_a), solver::to_int(r.lda),
                                                     tau + solver::matrix_offset(i, k), static_cast<T*>(run.workspace),
                                                     solver::to_int(plan.lwork), infos + i),
                           Qr<T>::geqrf_name));
    }
  }
  return solver::finish_with_infos(plan, run, solver::Routine::geqrf, infos);
}

template <class T>
Status orgqr(const Orgqr& r, const solver::DensePlan& plan, std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Orgqr>;
  std::int32_t* infos = solver::run_infos(plan, run, nullptr);
  if (!plan.empty) {
    T* a = static_cast<T*>(views[Op::a].data);
    const T* tau = static_cast<const T*>(views[Op::tau].data);
    if constexpr (std::is_floating_point_v<T>) {
      if (takes_small_orgqr(r)) {
        return run.target.check(solver::launch_small_orgqr(a, r.m, r.n, r.k, r.lda, r.stride_a, r.batch, tau,
                                                           static_cast<T*>(run.workspace), run.target.stream()),
                                "the small QR kernels");
      }
    }
    for (std::int64_t i = 0; i < r.batch; ++i) {
      ACCEL_RETURN_IF_ERROR(solver::launched(
          run,
          (plan.api->*Qr<T>::orgqr)(plan.handle, solver::to_int(r.m), solver::to_int(r.n), solver::to_int(r.k),
                                    a + solver::matrix_offset(i, r.stride_a), solver::to_int(r.lda),
                                    tau + solver::matrix_offset(i, r.k), static_cast<T*>(run.workspace),
                                    solver::to_int(plan.lwork), infos + i),
          Qr<T>::orgqr_name));
    }
  }
  return solver::finish_with_infos(plan, run, solver::Routine::orgqr, infos);
}

// Q applied from the left by the family's kernels (qr_kernel.hpp); from the right it stays cuSOLVER's.
bool takes_small_ormqr(const Ormqr& r) {
  return solver::is_real(r.dtype) && r.side == solver::Side::left &&
         solver::takes_small_ormqr(r.m, r.n, r.k, r.batch, size_of(r.dtype));
}

cublasSideMode_t side(solver::Side s) { return s == solver::Side::right ? CUBLAS_SIDE_RIGHT : CUBLAS_SIDE_LEFT; }
template <class T>
cublasOperation_t operation(const Ormqr& r) {
  return r.transpose == Transpose::none ? CUBLAS_OP_N : solver::kQTransposed<T>;
}

template <class T>
Status ormqr(const Ormqr& r, const solver::DensePlan& plan, std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Ormqr>;
  std::int32_t* infos = solver::run_infos(plan, run, nullptr);
  if (!plan.empty) {
    const T* a = static_cast<const T*>(views[Op::a].data);
    const T* tau = static_cast<const T*>(views[Op::tau].data);
    T* c = static_cast<T*>(views[Op::c].data);
    if constexpr (std::is_floating_point_v<T>) {
      if (takes_small_ormqr(r)) {
        return run.target.check(solver::launch_small_ormqr(
                                    a, r.m, r.k, r.lda, r.stride_a, r.batch, tau, r.transpose == Transpose::transpose,
                                    c, r.n, r.ldc, r.stride_c, static_cast<T*>(run.workspace), run.target.stream()),
                                "the small QR kernels");
      }
    }
    for (std::int64_t i = 0; i < r.batch; ++i) {
      ACCEL_RETURN_IF_ERROR(solver::launched(
          run,
          (plan.api->*Qr<T>::ormqr)(plan.handle, side(r.side), operation<T>(r), solver::to_int(r.m),
                                    solver::to_int(r.n), solver::to_int(r.k), a + solver::matrix_offset(i, r.stride_a),
                                    solver::to_int(r.lda), tau + solver::matrix_offset(i, r.k),
                                    c + solver::matrix_offset(i, r.stride_c), solver::to_int(r.ldc),
                                    static_cast<T*>(run.workspace), solver::to_int(plan.lwork), infos + i),
          Qr<T>::ormqr_name));
    }
  }
  return solver::finish_with_infos(plan, run, solver::Routine::ormqr, infos);
}

}  // namespace

Result<CudaOperation<Geqrf>::Plan> CudaOperation<Geqrf>::plan(const Geqrf&, const Checked& checked,
                                                              CudaTarget& target) {
  const Geqrf& r = checked.request;
  const solver::WorkKey key{.routine = solver::Routine::geqrf, .dtype = r.dtype, .m = r.m, .n = r.n, .lda = r.lda};
  if (takes_small_geqrf(r)) {
    return solver::plan_dense(target, key, r.batch, false, nullptr,
                              solver::DenseNeeds{.extra = solver::small_geqrf_workspace(r.m, r.n, r.batch)});
  }
  return solver::plan_dense(
      target, key, r.batch, r.m == 0 || r.n == 0,
      [&](const solver::CusolverApi& api, cusolverDnHandle_t handle, int* lwork) {
        return solver::with_cuda_type(r.dtype, [&]<class T>(std::type_identity<T>) {
          return (api.*Qr<T>::geqrf_size)(handle, solver::to_int(r.m), solver::to_int(r.n), nullptr,
                                          solver::to_int(r.lda), lwork);
        });
      },
      solver::DenseNeeds{.infos_in_workspace = true});
}

Status CudaOperation<Geqrf>::run(const Geqrf&, const Checked& checked, const Plan& plan,
                                 std::span<const BufferView> views, CudaRun& run) {
  return solver::with_cuda_type(checked.request.dtype, [&]<class T>(std::type_identity<T>) {
    return geqrf<T>(checked.request, plan, views, run);
  });
}

Result<CudaOperation<Orgqr>::Plan> CudaOperation<Orgqr>::plan(const Orgqr&, const Checked& checked,
                                                              CudaTarget& target) {
  const Orgqr& r = checked.request;
  const solver::WorkKey key{
      .routine = solver::Routine::orgqr, .dtype = r.dtype, .m = r.m, .n = r.n, .k = r.k, .lda = r.lda};
  if (takes_small_orgqr(r)) {
    return solver::plan_dense(target, key, r.batch, false, nullptr,
                              solver::DenseNeeds{.extra = solver::small_orgqr_workspace(r.m, r.k, r.batch)});
  }
  return solver::plan_dense(
      target, key, r.batch, r.n == 0,
      [&](const solver::CusolverApi& api, cusolverDnHandle_t handle, int* lwork) {
        return solver::with_cuda_type(r.dtype, [&]<class T>(std::type_identity<T>) {
          return (api.*Qr<T>::orgqr_size)(handle, solver::to_int(r.m), solver::to_int(r.n), solver::to_int(r.k),
                                          nullptr, solver::to_int(r.lda), nullptr, lwork);
        });
      },
      solver::DenseNeeds{.infos_in_workspace = true});
}

Status CudaOperation<Orgqr>::run(const Orgqr&, const Checked& checked, const Plan& plan,
                                 std::span<const BufferView> views, CudaRun& run) {
  return solver::with_cuda_type(checked.request.dtype, [&]<class T>(std::type_identity<T>) {
    return orgqr<T>(checked.request, plan, views, run);
  });
}

Result<CudaOperation<Ormqr>::Plan> CudaOperation<Ormqr>::plan(const Ormqr&, const Checked& checked,
                                                              CudaTarget& target) {
  const Ormqr& r = checked.request;
  // ldu holds ldc: the key's fields are named for the routines that came first.
  const solver::WorkKey key{.routine = solver::Routine::ormqr,
                            .dtype = r.dtype,
                            .fill = static_cast<std::uint8_t>(r.side),
                            .job = static_cast<std::uint8_t>(r.transpose),
                            .m = r.m,
                            .n = r.n,
                            .k = r.k,
                            .lda = r.lda,
                            .ldu = r.ldc};
  if (takes_small_ormqr(r)) {
    return solver::plan_dense(target, key, r.batch, false, nullptr,
                              solver::DenseNeeds{.extra = solver::small_orgqr_workspace(r.m, r.k, r.batch)});
  }
  return solver::plan_dense(
      target, key, r.batch, r.m == 0 || r.n == 0 || r.k == 0,  // no reflectors: Q = I, C stays
      [&](const solver::CusolverApi& api, cusolverDnHandle_t handle, int* lwork) {
        const int m = solver::to_int(r.m), n = solver::to_int(r.n), k = solver::to_int(r.k);
        return solver::with_cuda_type(r.dtype, [&]<class T>(std::type_identity<T>) {
          return (api.*Qr<T>::ormqr_size)(handle, side(r.side), operation<T>(r), m, n, k, nullptr,
                                          solver::to_int(r.lda), nullptr, nullptr, solver::to_int(r.ldc), lwork);
        });
      },
      solver::DenseNeeds{.infos_in_workspace = true});
}

Status CudaOperation<Ormqr>::run(const Ormqr&, const Checked& checked, const Plan& plan,
                                 std::span<const BufferView> views, CudaRun& run) {
  return solver::with_cuda_type(checked.request.dtype, [&]<class T>(std::type_identity<T>) {
    return ormqr<T>(checked.request, plan, views, run);
  });
}

}  // namespace accel
