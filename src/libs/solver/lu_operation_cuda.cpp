#include "libs/solver/lu_operation_cuda.hpp"

namespace accel {
namespace {

using solver::Getrf;
using solver::Getrs;

template <class T>
struct Lu;
template <>
struct Lu<float> {
  static constexpr auto buffer_size = cusolverDnSgetrf_bufferSize;
  static constexpr auto getrf = cusolverDnSgetrf;
  static constexpr auto getrs = cusolverDnSgetrs;
  static constexpr std::string_view getrf_name = "cusolverDnSgetrf";
  static constexpr std::string_view getrs_name = "cusolverDnSgetrs";
};
template <>
struct Lu<double> {
  static constexpr auto buffer_size = cusolverDnDgetrf_bufferSize;
  static constexpr auto getrf = cusolverDnDgetrf;
  static constexpr auto getrs = cusolverDnDgetrs;
  static constexpr std::string_view getrf_name = "cusolverDnDgetrf";
  static constexpr std::string_view getrs_name = "cusolverDnDgetrs";
};

template <class T>
Status getrf(const Getrf& r, const solver::DensePlan& plan, std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Getrf>;
  std::int32_t* infos = solver::run_infos(plan, run, views[Op::info].data);
  if (!plan.empty) {
    T* a = static_cast<T*>(views[Op::a].data);
    auto* ipiv = static_cast<std::int32_t*>(views[Op::ipiv].data);
    for (std::int64_t i = 0; i < r.batch; ++i) {
      ACCEL_RETURN_IF_ERROR(solver::launched(
          run,
          Lu<T>::getrf(plan.handle, solver::to_int(r.n), solver::to_int(r.n), a + solver::matrix_offset(i, r.stride_a),
                       solver::to_int(r.lda), static_cast<T*>(run.workspace), ipiv + solver::matrix_offset(i, r.n),
                       infos + i),
          Lu<T>::getrf_name));
    }
  }
  return solver::finish_with_infos(plan, run, solver::Routine::getrf, infos);
}

template <class T>
Status getrs(const Getrs& r, const solver::DensePlan& plan, std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Getrs>;
  std::int32_t* infos = solver::run_infos(plan, run, nullptr);
  if (!plan.empty) {
    const T* a = static_cast<const T*>(views[Op::a].data);
    const auto* ipiv = static_cast<const std::int32_t*>(views[Op::ipiv].data);
    T* b = static_cast<T*>(views[Op::b].data);
    const cublasOperation_t op = r.transpose == Transpose::transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
    for (std::int64_t i = 0; i < r.batch; ++i) {
      ACCEL_RETURN_IF_ERROR(
          solver::launched(run,
                           Lu<T>::getrs(plan.handle, op, solver::to_int(r.n), solver::to_int(r.nrhs),
                                        a + solver::matrix_offset(i, r.stride_a), solver::to_int(r.lda),
                                        ipiv + solver::matrix_offset(i, r.n), b + solver::matrix_offset(i, r.stride_b),
                                        solver::to_int(r.ldb), infos + i),
                           Lu<T>::getrs_name));
    }
  }
  return solver::finish_with_infos(plan, run, solver::Routine::getrs, infos);
}

}  // namespace

Result<CudaOperation<Getrf>::Plan> CudaOperation<Getrf>::plan(const Getrf& request, const Checked& checked,
                                                              CudaTarget& target) {
  const Getrf& r = checked.request;
  const solver::WorkKey key{.routine = solver::Routine::getrf, .dtype = r.dtype, .m = r.n, .n = r.n, .lda = r.lda};
  return solver::plan_dense(
      target, key, r.batch, r.n == 0,
      [&](cusolverDnHandle_t handle, int* lwork) {
        return r.dtype == DType::f64 ? Lu<double>::buffer_size(handle, solver::to_int(r.n), solver::to_int(r.n),
                                                               nullptr, solver::to_int(r.lda), lwork)
                                     : Lu<float>::buffer_size(handle, solver::to_int(r.n), solver::to_int(r.n), nullptr,
                                                              solver::to_int(r.lda), lwork);
      },
      solver::DenseNeeds{.infos_in_workspace = request.info.is_null()});
}

Status CudaOperation<Getrf>::run(const Getrf&, const Checked& checked, const Plan& plan,
                                 std::span<const BufferView> views, CudaRun& run) {
  return checked.request.dtype == DType::f64 ? getrf<double>(checked.request, plan, views, run)
                                             : getrf<float>(checked.request, plan, views, run);
}

Result<CudaOperation<Getrs>::Plan> CudaOperation<Getrs>::plan(const Getrs&, const Checked& checked,
                                                              CudaTarget& target) {
  const Getrs& r = checked.request;
  const solver::WorkKey key{.routine = solver::Routine::getrs, .dtype = r.dtype};
  return solver::plan_dense(target, key, r.batch, r.n == 0 || r.nrhs == 0, nullptr,
                            solver::DenseNeeds{.infos_in_workspace = true});
}

Status CudaOperation<Getrs>::run(const Getrs&, const Checked& checked, const Plan& plan,
                                 std::span<const BufferView> views, CudaRun& run) {
  return checked.request.dtype == DType::f64 ? getrs<double>(checked.request, plan, views, run)
                                             : getrs<float>(checked.request, plan, views, run);
}

}  // namespace accel
