#include "libs/solver/gesvdj_operation_cuda.hpp"

#include <algorithm>
#include <limits>
#include <type_traits>

#include "libs/solver/block_jacobi_svd_kernel.hpp"
#include "libs/solver/jacobi_svd_kernel.hpp"

namespace accel {
namespace {

using solver::Gesvdj;
using solver::SvdJob;

constexpr std::int64_t kBatchedLargest = 32;  // gesvdjBatched's largest m and n

// The stream's gesvdjInfo_t: each request sets its tolerance and sweeps on it just before its launches, which the
// stream's one actor thread enqueues one request at a time.
class JacobiParams final : public TargetState {
 public:
  static Result<std::unique_ptr<JacobiParams>> open(CudaTarget&) {
    ACCEL_ASSIGN_OR_RETURN(const solver::CusolverApi* api, solver::cusolver_api());
    gesvdjInfo_t params = nullptr;
    ACCEL_RETURN_IF_ERROR(
        solver::cusolver_status(api->cusolverDnCreateGesvdjInfo(&params), "cusolverDnCreateGesvdjInfo"));
    return std::unique_ptr<JacobiParams>(new JacobiParams(*api, params));
  }
  ~JacobiParams() override { api_.cusolverDnDestroyGesvdjInfo(params_); }
  JacobiParams(const JacobiParams&) = delete;
  JacobiParams& operator=(const JacobiParams&) = delete;

  [[nodiscard]] gesvdjInfo_t params() const noexcept { return params_; }

 private:
  JacobiParams(const solver::CusolverApi& api, gesvdjInfo_t params) : api_(api), params_(params) {}
  const solver::CusolverApi& api_;
  gesvdjInfo_t params_;
};

template <class T>
struct Jacobi;
template <>
struct Jacobi<float> {
  static constexpr auto buffer_size = &solver::CusolverApi::cusolverDnSgesvdj_bufferSize;
  static constexpr auto gesvdj = &solver::CusolverApi::cusolverDnSgesvdj;
  static constexpr auto batched_buffer_size = &solver::CusolverApi::cusolverDnSgesvdjBatched_bufferSize;
  static constexpr auto batched = &solver::CusolverApi::cusolverDnSgesvdjBatched;
  static constexpr std::string_view name = "cusolverDnSgesvdj";
  static constexpr std::string_view batched_name = "cusolverDnSgesvdjBatched";
};
template <>
struct Jacobi<double> {
  static constexpr auto buffer_size = &solver::CusolverApi::cusolverDnDgesvdj_bufferSize;
  static constexpr auto gesvdj = &solver::CusolverApi::cusolverDnDgesvdj;
  static constexpr auto batched_buffer_size = &solver::CusolverApi::cusolverDnDgesvdjBatched_bufferSize;
  static constexpr auto batched = &solver::CusolverApi::cusolverDnDgesvdjBatched;
  static constexpr std::string_view name = "cusolverDnDgesvdj";
  static constexpr std::string_view batched_name = "cusolverDnDgesvdjBatched";
};
template <>
struct Jacobi<cuComplex> {
  static constexpr auto buffer_size = &solver::CusolverApi::cusolverDnCgesvdj_bufferSize;
  static constexpr auto gesvdj = &solver::CusolverApi::cusolverDnCgesvdj;
  static constexpr auto batched_buffer_size = &solver::CusolverApi::cusolverDnCgesvdjBatched_bufferSize;
  static constexpr auto batched = &solver::CusolverApi::cusolverDnCgesvdjBatched;
  static constexpr std::string_view name = "cusolverDnCgesvdj";
  static constexpr std::string_view batched_name = "cusolverDnCgesvdjBatched";
};
template <>
struct Jacobi<cuDoubleComplex> {
  static constexpr auto buffer_size = &solver::CusolverApi::cusolverDnZgesvdj_bufferSize;
  static constexpr auto gesvdj = &solver::CusolverApi::cusolverDnZgesvdj;
  static constexpr auto batched_buffer_size = &solver::CusolverApi::cusolverDnZgesvdjBatched_bufferSize;
  static constexpr auto batched = &solver::CusolverApi::cusolverDnZgesvdjBatched;
  static constexpr std::string_view name = "cusolverDnZgesvdj";
  static constexpr std::string_view batched_name = "cusolverDnZgesvdjBatched";
};

// The arguments cuSOLVER takes beyond the request's own.
struct Args {
  cusolverEigMode_t jobz = CUSOLVER_EIG_MODE_NOVECTOR;
  int econ = 0;
  int ldu = 1;
  int ldv = 1;
};

Args args(const Gesvdj& r) {
  // Leading dimensions of vectors not computed are not read; cuSOLVER may check them against m and n all the same.
  return {.jobz = r.job == SvdJob::none ? CUSOLVER_EIG_MODE_NOVECTOR : CUSOLVER_EIG_MODE_VECTOR,
          .econ = r.job == SvdJob::thin ? 1 : 0,
          .ldu = solver::to_int(std::max({r.ldu, r.m, std::int64_t{1}})),
          .ldv = solver::to_int(std::max({r.ldv, r.n, std::int64_t{1}}))};
}

// cuSOLVER 13's gesvdj writes to U and V even when asked for no vectors: with null ones it made an illegal address
// on the H100 (64 x 63, f64). A request for values only lends it scratch U and V, after the work area: the
// elements they take (one pair per matrix for gesvdjBatched, one pair reused for the loop).
std::int64_t scratch_vectors(const Gesvdj& r, const Args& x, bool batched) {
  if (r.job != SvdJob::none) return 0;
  return (batched ? r.batch : 1) * (std::int64_t{x.ldu} * r.m + std::int64_t{x.ldv} * r.n);
}

// gesvdjBatched takes packed matrices of at most 32 x 32 and computes full U and V.
bool use_batched(const solver::CheckedGesvdj& c) {
  const Gesvdj& r = c.request;
  return r.batch > 1 && r.batch <= solver::kMaxLapackInt && r.m <= kBatchedLargest && r.n <= kBatchedLargest &&
         c.u_cols == r.m && c.v_cols == r.n && r.stride_a == r.lda * r.n && r.stride_u == r.ldu * r.m &&
         r.stride_v == r.ldv * r.n;
}

template <class T>
cusolverStatus_t query(const solver::CusolverApi& api, cusolverDnHandle_t handle, const Gesvdj& r, const Args& x,
                       gesvdjInfo_t params, bool batched, int* lwork) {
  if (batched) {
    return (api.*Jacobi<T>::batched_buffer_size)(handle, x.jobz, solver::to_int(r.m), solver::to_int(r.n), nullptr,
                                                 solver::to_int(r.lda), nullptr, nullptr, x.ldu, nullptr, x.ldv, lwork,
                                                 params, solver::to_int(r.batch));
  }
  return (api.*Jacobi<T>::buffer_size)(handle, x.jobz, x.econ, solver::to_int(r.m), solver::to_int(r.n), nullptr,
                                       solver::to_int(r.lda), nullptr, nullptr, x.ldu, nullptr, x.ldv, lwork, params);
}

template <class T>
Status set_stopping(const solver::CusolverApi& api, const Gesvdj& r, gesvdjInfo_t params) {
  // 0 asks for the dtype's machine precision, cuSOLVER's default, which it does not take as 0.
  const double tolerance = r.tolerance == 0 ? std::numeric_limits<T>::epsilon() : r.tolerance;
  ACCEL_RETURN_IF_ERROR(
      solver::cusolver_status(api.cusolverDnXgesvdjSetTolerance(params, tolerance), "cusolverDnXgesvdjSetTolerance"));
  return solver::cusolver_status(api.cusolverDnXgesvdjSetMaxSweeps(params, r.max_sweeps),
                                 "cusolverDnXgesvdjSetMaxSweeps");
}

// The family's kernels, which plan() picks for real dtypes only.
template <class T>
Status launch_kernel(const Gesvdj& r, const solver::GesvdjPlan& plan, std::span<const BufferView> views,
                     std::int32_t* infos, CudaRun& run) {
  using Op = Operation<Gesvdj>;
  const bool vectors = r.job != SvdJob::none;
  T* const s = static_cast<T*>(views[Op::s].data);
  T* const u = vectors ? static_cast<T*>(views[Op::u].data) : nullptr;
  T* const v = vectors ? static_cast<T*>(views[Op::v].data) : nullptr;
  if (plan.path == solver::JacobiPath::cluster_kernel) {
    return run.target.check(
        solver::launch_block_jacobi_svd(static_cast<T*>(views[Op::a].data), r.n, r.lda, r.stride_a, r.batch, s, u,
                                        r.ldu, r.stride_u, v, r.ldv, r.stride_v, r.tolerance, r.max_sweeps,
                                        static_cast<T*>(run.workspace), infos, run.target.stream()),
        "the block Jacobi SVD kernel");
  }
  return run.target.check(solver::launch_small_jacobi_svd(
                              static_cast<const T*>(views[Op::a].data), r.n, r.lda, r.stride_a, r.batch, s, u, r.ldu,
                              r.stride_u, v, r.ldv, r.stride_v, r.tolerance, r.max_sweeps, infos, run.target.stream()),
                          "the small Jacobi SVD kernel");
}

template <class T>
Status gesvdj(const solver::CheckedGesvdj& c, const solver::GesvdjPlan& plan, std::span<const BufferView> views,
              CudaRun& run) {
  using Op = Operation<Gesvdj>;
  const Gesvdj& r = c.request;
  std::int32_t* infos = solver::run_infos(plan.dense, run, views[Op::info].data);
  if (plan.path == solver::JacobiPath::cluster_kernel || plan.path == solver::JacobiPath::block_kernel) {
    if constexpr (std::is_floating_point_v<T>) ACCEL_RETURN_IF_ERROR(launch_kernel<T>(r, plan, views, infos, run));
  } else if (!plan.dense.empty) {
    ACCEL_RETURN_IF_ERROR(set_stopping<solver::Real<T>>(*plan.dense.api, r, plan.params));
    const Args x = args(r);
    const std::int64_t k = std::min(r.m, r.n);
    T* a = static_cast<T*>(views[Op::a].data);
    auto* s = static_cast<solver::Real<T>*>(views[Op::s].data);
    T* work = static_cast<T*>(run.workspace);
    const int lwork = solver::to_int(plan.dense.lwork);
    const bool scratch = r.job == SvdJob::none;
    T* u = scratch ? work + lwork : static_cast<T*>(views[Op::u].data);
    const bool batched = plan.path == solver::JacobiPath::batched;
    T* v = scratch ? u + (batched ? r.batch : 1) * std::int64_t{x.ldu} * r.m : static_cast<T*>(views[Op::v].data);
    const auto matrix = [&](T* first, std::int64_t i, std::int64_t stride) {
      return scratch ? first : first + solver::matrix_offset(i, stride);
    };
    if (batched) {
      ACCEL_RETURN_IF_ERROR(solver::launched(
          run,
          (plan.dense.api->*Jacobi<T>::batched)(plan.dense.handle, x.jobz, solver::to_int(r.m), solver::to_int(r.n), a,
                                                solver::to_int(r.lda), s, u, x.ldu, v, x.ldv, work, lwork, infos,
                                                plan.params, solver::to_int(r.batch)),
          Jacobi<T>::batched_name));
    }
    for (std::int64_t i = 0; !batched && i < r.batch; ++i) {
      ACCEL_RETURN_IF_ERROR(solver::launched(
          run,
          (plan.dense.api->*Jacobi<T>::gesvdj)(
              plan.dense.handle, x.jobz, x.econ, solver::to_int(r.m), solver::to_int(r.n),
              a + solver::matrix_offset(i, r.stride_a), solver::to_int(r.lda), s + solver::matrix_offset(i, k),
              u == nullptr ? nullptr : matrix(u, i, r.stride_u), x.ldu,
              v == nullptr ? nullptr : matrix(v, i, r.stride_v), x.ldv, work, lwork, infos + i, plan.params),
          Jacobi<T>::name));
    }
  }
  return solver::finish_with_infos(plan.dense, run, solver::Routine::gesvdj, infos);
}

}  // namespace

Result<CudaOperation<Gesvdj>::Plan> CudaOperation<Gesvdj>::plan(const Gesvdj& request, const Checked& checked,
                                                                CudaTarget& target) {
  const Gesvdj& r = checked.request;
  const bool real = solver::is_real(r.dtype);  // the kernels' dtypes
  const bool small = real && solver::takes_small_jacobi_svd(r.m, r.n, r.batch);
  if (small || (real && solver::takes_block_jacobi_svd(r.m, r.n, r.batch))) {  // no cuSOLVER call
    const solver::WorkKey key{.routine = solver::Routine::gesvdj, .dtype = r.dtype, .m = r.m, .n = r.n};
    const std::int64_t work = small ? 0 : solver::block_jacobi_svd_work_elements(r.n, r.batch, r.job != SvdJob::none);
    ACCEL_ASSIGN_OR_RETURN(
        solver::DensePlan dense,
        solver::plan_dense(target, key, r.batch, false, nullptr,
                           solver::DenseNeeds{.infos_in_workspace = request.info.is_null(), .extra = work}));
    return Plan{.dense = dense, .path = small ? solver::JacobiPath::block_kernel : solver::JacobiPath::cluster_kernel};
  }
  ACCEL_ASSIGN_OR_RETURN(JacobiParams * params, target.stream_state<JacobiParams>());
  const bool batched = use_batched(checked);
  const Args x = args(r);
  const solver::WorkKey key{.routine = solver::Routine::gesvdj,
                            .dtype = r.dtype,
                            .job = static_cast<std::uint8_t>(x.jobz | x.econ << 1 | (batched ? 4 : 0)),
                            .m = r.m,
                            .n = r.n,
                            .lda = r.lda,
                            .ldu = x.ldu,
                            .ldv = x.ldv,
                            .batch = batched ? r.batch : 0};
  ACCEL_ASSIGN_OR_RETURN(
      solver::DensePlan dense,
      solver::plan_dense(
          target, key, r.batch, r.m == 0 || r.n == 0,
          [&](const solver::CusolverApi& api, cusolverDnHandle_t handle, int* lwork) {
            // The work area does not depend on the stopping rule, but cuSOLVER reads it from the
            // parameters.
            return solver::with_cuda_type(r.dtype, [&]<class T>(std::type_identity<T>) {
              return query<T>(api, handle, r, x, params->params(), batched, lwork);
            });
          },
          solver::DenseNeeds{.infos_in_workspace = request.info.is_null(), .extra = scratch_vectors(r, x, batched)}));
  return Plan{.dense = dense,
              .params = params->params(),
              .path = batched ? solver::JacobiPath::batched : solver::JacobiPath::looped};
}

Status CudaOperation<Gesvdj>::run(const Gesvdj&, const Checked& checked, const Plan& plan,
                                  std::span<const BufferView> views, CudaRun& run) {
  return solver::with_cuda_type(checked.request.dtype,
                                [&]<class T>(std::type_identity<T>) { return gesvdj<T>(checked, plan, views, run); });
}

}  // namespace accel
