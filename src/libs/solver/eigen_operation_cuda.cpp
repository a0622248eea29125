#include "libs/solver/eigen_operation_cuda.hpp"

#include <type_traits>

namespace accel {
namespace {

using solver::Syevd;

// Each element type's routine (heevd for a Hermitian matrix, whose eigenvalues are real).
template <class T>
struct Eigen;
template <>
struct Eigen<float> {
  static constexpr auto buffer_size = &solver::CusolverApi::cusolverDnSsyevd_bufferSize;
  static constexpr auto syevd = &solver::CusolverApi::cusolverDnSsyevd;
  static constexpr std::string_view name = "cusolverDnSsyevd";
};
template <>
struct Eigen<double> {
  static constexpr auto buffer_size = &solver::CusolverApi::cusolverDnDsyevd_bufferSize;
  static constexpr auto syevd = &solver::CusolverApi::cusolverDnDsyevd;
  static constexpr std::string_view name = "cusolverDnDsyevd";
};
template <>
struct Eigen<cuComplex> {
  static constexpr auto buffer_size = &solver::CusolverApi::cusolverDnCheevd_bufferSize;
  static constexpr auto syevd = &solver::CusolverApi::cusolverDnCheevd;
  static constexpr std::string_view name = "cusolverDnCheevd";
};
template <>
struct Eigen<cuDoubleComplex> {
  static constexpr auto buffer_size = &solver::CusolverApi::cusolverDnZheevd_bufferSize;
  static constexpr auto syevd = &solver::CusolverApi::cusolverDnZheevd;
  static constexpr std::string_view name = "cusolverDnZheevd";
};

cusolverEigMode_t mode(solver::EigenJob job) {
  return job == solver::EigenJob::values_and_vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
}

template <class T>
Status syevd(const Syevd& r, const solver::DensePlan& plan, std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Syevd>;
  std::int32_t* infos = solver::run_infos(plan, run, views[Op::info].data);
  if (!plan.empty) {
    T* a = static_cast<T*>(views[Op::a].data);
    auto* w = static_cast<solver::Real<T>*>(views[Op::w].data);
    for (std::int64_t i = 0; i < r.batch; ++i) {
      ACCEL_RETURN_IF_ERROR(solver::launched(
          run,
          (plan.api->*Eigen<T>::syevd)(plan.handle, mode(r.job), solver::to_cublas(r.fill), solver::to_int(r.n),
                                       a + solver::matrix_offset(i, r.stride_a), solver::to_int(r.lda),
                                       w + solver::matrix_offset(i, r.n), static_cast<T*>(run.workspace),
                                       solver::to_int(plan.lwork), infos + i),
          Eigen<T>::name));
    }
  }
  return solver::finish_with_infos(plan, run, solver::Routine::syevd, infos);
}

}  // namespace

Result<CudaOperation<Syevd>::Plan> CudaOperation<Syevd>::plan(const Syevd& request, const Checked& checked,
                                                              CudaTarget& target) {
  const Syevd& r = checked.request;
  const solver::WorkKey key{.routine = solver::Routine::syevd,
                            .dtype = r.dtype,
                            .fill = static_cast<std::uint8_t>(r.fill),
                            .job = static_cast<std::uint8_t>(r.job),
                            .n = r.n,
                            .lda = r.lda};
  return solver::plan_dense(
      target, key, r.batch, r.n == 0,
      [&](const solver::CusolverApi& api, cusolverDnHandle_t handle, int* lwork) {
        return solver::with_cuda_type(r.dtype, [&]<class T>(std::type_identity<T>) {
          return (api.*Eigen<T>::buffer_size)(handle, mode(r.job), solver::to_cublas(r.fill), solver::to_int(r.n),
                                              nullptr, solver::to_int(r.lda), nullptr, lwork);
        });
      },
      solver::DenseNeeds{.infos_in_workspace = request.info.is_null()});
}

Status CudaOperation<Syevd>::run(const Syevd&, const Checked& checked, const Plan& plan,
                                 std::span<const BufferView> views, CudaRun& run) {
  return solver::with_cuda_type(checked.request.dtype, [&]<class T>(std::type_identity<T>) {
    return syevd<T>(checked.request, plan, views, run);
  });
}

}  // namespace accel
