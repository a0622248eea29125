#include "libs/solver/gels_operation_cuda.hpp"

#include <algorithm>
#include <type_traits>

#include "libs/solver/cusolver_routines.hpp"
#include "libs/solver/gels_kernel.hpp"
#include "libs/solver/qr_kernel.hpp"

namespace accel {
namespace {

using solver::Gels;

// Where Gels keeps what it needs beside cuSOLVER's work area, in elements of T from the workspace's start: tau (n),
// R's copy (n x n), then n pivots and one info for the routines (i32), each on a 256-byte boundary (as the workspace
// is), so that getrs reads R as aligned as it would a matrix of its own.
struct Parts {
  std::int64_t tau = 0;
  std::int64_t triangle = 0;
  std::int64_t ints = 0;
};
constexpr std::uint64_t kPartAlignment = 256;

Parts parts(std::int64_t lwork, std::int64_t n, std::uint64_t element) {
  const auto align = static_cast<std::int64_t>(kPartAlignment / element);
  const auto up = [align](std::int64_t elements) { return (elements + align - 1) / align * align; };
  Parts p;
  p.tau = up(lwork);
  p.triangle = up(p.tau + n);
  p.ints = up(p.triangle + n * n);
  return p;
}

// The elements after the work area that parts() may reach, whatever lwork is.
std::int64_t extra_elements(std::int64_t n, std::uint64_t element) {
  const auto ints = static_cast<std::uint64_t>(n + 1) * sizeof(std::int32_t);
  const auto padding = static_cast<std::int64_t>(kPartAlignment / element) * 3;
  return padding + n + n * n + static_cast<std::int64_t>((ints + element - 1) / element);
}

// Whether A's QR and Qᵀ B run the family's kernels (qr_kernel.hpp; real dtypes), one matrix at a time, rather than
// cuSOLVER's.
bool takes_small_qr(const Gels& r) {
  const std::int64_t bytes = size_of(r.dtype);
  return solver::is_real(r.dtype) && solver::takes_small_geqrf(r.m, r.n, 1, bytes) &&
         solver::takes_small_ormqr(r.m, r.nrhs, r.n, 1, bytes);
}

// The larger of geqrf's and ormqr's work areas (the kernels' or cuSOLVER's): they run one after the other on the
// same one.
template <class T>
cusolverStatus_t work_size(const Gels& r, const solver::CusolverApi& api, cusolverDnHandle_t handle, int* lwork) {
  if (takes_small_qr(r)) {
    *lwork = solver::to_int(
        std::max(solver::small_geqrf_workspace(r.m, r.n, 1), solver::small_orgqr_workspace(r.m, r.n, 1)));
    return CUSOLVER_STATUS_SUCCESS;
  }
  const int m = solver::to_int(r.m), n = solver::to_int(r.n), lda = solver::to_int(r.lda);
  int factor = 0, apply = 0;
  if (cusolverStatus_t s = (api.*solver::QrRoutines<T>::geqrf_size)(handle, m, n, nullptr, lda, &factor);
      s != CUSOLVER_STATUS_SUCCESS)
    return s;
  const cusolverStatus_t s = (api.*solver::QrRoutines<T>::ormqr_size)(handle, CUBLAS_SIDE_LEFT, solver::kQTransposed<T>,
                                                                      m, solver::to_int(r.nrhs), n, nullptr, lda,
                                                                      nullptr, nullptr, solver::to_int(r.ldb), &apply);
  *lwork = std::max(factor, apply);
  return s;
}

// The routines' infos only ever flag an illegal argument, which validation refuses: they share one slot, and the
// request's info is the rank check's (LAPACK's gels info).
template <class T>
Status gels(const Gels& r, const solver::DensePlan& plan, std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Gels>;
  std::int32_t* infos = solver::run_infos(plan, run, views[Op::info].data);
  if (!plan.empty) {
    T* a = static_cast<T*>(views[Op::a].data);
    T* b = static_cast<T*>(views[Op::b].data);
    T* work = static_cast<T*>(run.workspace);
    const Parts at = parts(plan.lwork, r.n, sizeof(T));
    T* tau = work + at.tau;
    T* triangle = work + at.triangle;
    auto* ipiv = reinterpret_cast<std::int32_t*>(work + at.ints);
    std::int32_t* routine_info = ipiv + r.n;
    const int m = solver::to_int(r.m), n = solver::to_int(r.n), nrhs = solver::to_int(r.nrhs);
    const int lda = solver::to_int(r.lda), ldb = solver::to_int(r.ldb), lwork = solver::to_int(plan.lwork);
    const bool small = takes_small_qr(r);
    for (std::int64_t i = 0; i < r.batch; ++i) {
      T* ai = a + solver::matrix_offset(i, r.stride_a);
      T* bi = b + solver::matrix_offset(i, r.stride_b);
      if (small) {
        if constexpr (std::is_floating_point_v<T>) {
          ACCEL_RETURN_IF_ERROR(run.target.check(
              solver::launch_small_geqrf(ai, r.m, r.n, r.lda, 0, 1, tau, work, run.target.stream()), "QR of Gels"));
          ACCEL_RETURN_IF_ERROR(
              run.target.check(solver::launch_small_ormqr(ai, r.m, r.n, r.lda, 0, 1, tau, true, bi, r.nrhs, r.ldb, 0,
                                                          work, run.target.stream()),
                               "Qᵀ B of Gels"));
        }
      } else {
        ACCEL_RETURN_IF_ERROR(solver::launched(
            run, (plan.api->*solver::QrRoutines<T>::geqrf)(plan.handle, m, n, ai, lda, tau, work, lwork, routine_info),
            "geqrf of Gels"));
        ACCEL_RETURN_IF_ERROR(solver::launched(
            run,
            (plan.api->*solver::QrRoutines<T>::ormqr)(plan.handle, CUBLAS_SIDE_LEFT, solver::kQTransposed<T>, m, nrhs,
                                                      n, ai, lda, tau, bi, ldb, work, lwork, routine_info),
            "ormqr of Gels"));
      }
      ACCEL_RETURN_IF_ERROR(run.target.check(
          solver::launch_triangle_for_getrs(ai, r.lda, r.n, triangle, ipiv, infos + i, run.target.stream()),
          "Gels's copy of R"));
      ACCEL_RETURN_IF_ERROR(
          solver::launched(run,
                           (plan.api->*solver::LuRoutines<T>::getrs)(plan.handle, CUBLAS_OP_N, n, nrhs, triangle, n,
                                                                     ipiv, bi, ldb, routine_info),
                           "getrs of Gels"));
    }
  }
  return solver::finish_with_infos(plan, run, solver::Routine::gels, infos);
}

}  // namespace

Result<CudaOperation<Gels>::Plan> CudaOperation<Gels>::plan(const Gels& request, const Checked& checked,
                                                            CudaTarget& target) {
  const Gels& r = checked.request;
  // k holds nrhs and ldu ldb: the key's fields are named for the routines that came first.
  const solver::WorkKey key{
      .routine = solver::Routine::gels, .dtype = r.dtype, .m = r.m, .n = r.n, .k = r.nrhs, .lda = r.lda, .ldu = r.ldb};
  return solver::plan_dense(
      target, key, r.batch, r.n == 0 || r.nrhs == 0,
      [&](const solver::CusolverApi& api, cusolverDnHandle_t handle, int* lwork) {
        return solver::with_cuda_type(
            r.dtype, [&]<class T>(std::type_identity<T>) { return work_size<T>(r, api, handle, lwork); });
      },
      solver::DenseNeeds{.infos_in_workspace = request.info.is_null(), .extra = extra_elements(r.n, size_of(r.dtype))});
}

Status CudaOperation<Gels>::run(const Gels&, const Checked& checked, const Plan& plan,
                                std::span<const BufferView> views, CudaRun& run) {
  return solver::with_cuda_type(checked.request.dtype, [&]<class T>(std::type_identity<T>) {
    return gels<T>(checked.request, plan, views, run);
  });
}

}  // namespace accel
