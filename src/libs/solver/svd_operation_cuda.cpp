#include "libs/solver/svd_operation_cuda.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <type_traits>

namespace accel {
namespace {

using solver::Gesvd;
using solver::SvdJob;

// Each element type's routine (the singular values are real, of a complex A too).
template <class T>
struct Svd;
template <>
struct Svd<float> {
  static constexpr auto buffer_size = &solver::CusolverApi::cusolverDnSgesvd_bufferSize;
  static constexpr auto gesvd = &solver::CusolverApi::cusolverDnSgesvd;
  static constexpr std::string_view name = "cusolverDnSgesvd";
};
template <>
struct Svd<double> {
  static constexpr auto buffer_size = &solver::CusolverApi::cusolverDnDgesvd_bufferSize;
  static constexpr auto gesvd = &solver::CusolverApi::cusolverDnDgesvd;
  static constexpr std::string_view name = "cusolverDnDgesvd";
};
template <>
struct Svd<cuComplex> {
  static constexpr auto buffer_size = &solver::CusolverApi::cusolverDnCgesvd_bufferSize;
  static constexpr auto gesvd = &solver::CusolverApi::cusolverDnCgesvd;
  static constexpr std::string_view name = "cusolverDnCgesvd";
};
template <>
struct Svd<cuDoubleComplex> {
  static constexpr auto buffer_size = &solver::CusolverApi::cusolverDnZgesvd_bufferSize;
  static constexpr auto gesvd = &solver::CusolverApi::cusolverDnZgesvd;
  static constexpr std::string_view name = "cusolverDnZgesvd";
};

signed char job(SvdJob j) { return j == SvdJob::full ? 'A' : j == SvdJob::thin ? 'S' : 'N'; }

template <class T>
Status gesvd(const solver::CheckedGesvd& c, const solver::DensePlan& plan, std::span<const BufferView> views,
             CudaRun& run) {
  using Op = Operation<Gesvd>;
  const Gesvd& r = c.request;
  std::int32_t* infos = solver::run_infos(plan, run, views[Op::info].data);
  if (!plan.empty) {
    const std::int64_t k = std::min(r.m, r.n);
    T* a = static_cast<T*>(views[Op::a].data);
    using Value = solver::Real<T>;
    auto* s = static_cast<Value*>(views[Op::s].data);
    T* u = static_cast<T*>(views[Op::u].data);
    T* vt = static_cast<T*>(views[Op::vt].data);
    T* work = static_cast<T*>(run.workspace);
    // Leading dimensions of vectors not computed are not read; cuSOLVER may check them against m and n all the same.
    const int ldu = solver::to_int(u == nullptr ? std::max(r.ldu, r.m) : r.ldu);
    const int ldvt = solver::to_int(vt == nullptr ? std::max(r.ldvt, r.n) : r.ldvt);
    for (std::int64_t i = 0; i < r.batch; ++i) {
      ACCEL_RETURN_IF_ERROR(solver::launched(
          run,
          (plan.api->*Svd<T>::gesvd)(
              plan.handle, job(r.job_u), job(r.job_vt), solver::to_int(r.m), solver::to_int(r.n),
              a + solver::matrix_offset(i, r.stride_a), solver::to_int(r.lda), s + solver::matrix_offset(i, k),
              u == nullptr ? nullptr : u + solver::matrix_offset(i, r.stride_u), ldu,
              vt == nullptr ? nullptr : vt + solver::matrix_offset(i, r.stride_vt), ldvt, work,
              solver::to_int(plan.lwork), reinterpret_cast<Value*>(work + plan.lwork), infos + i),
          Svd<T>::name));
    }
  }
  return solver::finish_with_infos(plan, run, solver::Routine::gesvd, infos);
}

}  // namespace

Result<CudaOperation<Gesvd>::Plan> CudaOperation<Gesvd>::plan(const Gesvd& request, const Checked& checked,
                                                              CudaTarget& target) {
  const Gesvd& r = checked.request;
  if (r.m < r.n) {
    return not_supported(fmt::format(
        "{}: cuSOLVER's gesvd takes m >= n, not m = {} < n = {}; decompose Aᵀ (its U and Vᵀ are V and Uᵀ of A), or "
        "use the CPU device",
        Gesvd::kName, r.m, r.n));
  }
  const solver::WorkKey key{.routine = solver::Routine::gesvd, .dtype = r.dtype, .m = r.m, .n = r.n};
  return solver::plan_dense(
      target, key, r.batch, r.n == 0,
      [&](const solver::CusolverApi& api, cusolverDnHandle_t handle, int* lwork) {
        return solver::with_cuda_type(r.dtype, [&]<class T>(std::type_identity<T>) {
          return (api.*Svd<T>::buffer_size)(handle, solver::to_int(r.m), solver::to_int(r.n), lwork);
        });
      },
      solver::DenseNeeds{.infos_in_workspace = request.info.is_null(), .extra = std::min(r.m, r.n)});
}

Status CudaOperation<Gesvd>::run(const Gesvd&, const Checked& checked, const Plan& plan,
                                 std::span<const BufferView> views, CudaRun& run) {
  return solver::with_cuda_type(checked.request.dtype,
                                [&]<class T>(std::type_identity<T>) { return gesvd<T>(checked, plan, views, run); });
}

}  // namespace accel
