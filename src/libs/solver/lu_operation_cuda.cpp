#include "libs/solver/lu_operation_cuda.hpp"

#include <cstring>
#include <type_traits>

#include "libs/solver/cusolver_routines.hpp"
#include "libs/solver/lu_kernel.hpp"
#include "libs/solver/pivot_kernel.hpp"

namespace accel {
namespace {

using solver::Getrf;
using solver::Getrs;

template <class T>
using Lu = solver::LuRoutines<T>;

template <class T>
Status getrf(const Getrf& r, const solver::DensePlan& plan, std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Getrf>;
  std::int32_t* infos = solver::run_infos(plan, run, views[Op::info].data);
  if (!plan.empty) {
    T* a = static_cast<T*>(views[Op::a].data);
    auto* ipiv = static_cast<std::int32_t*>(views[Op::ipiv].data);
    if constexpr (std::is_floating_point_v<T>) {
      if (r.n <= solver::kSmallLuMaxN && r.batch <= solver::kMaxLapackInt) {  // a grid's width
        ACCEL_RETURN_IF_ERROR(run.target.check(
            solver::launch_small_lu(a, r.n, r.lda, r.stride_a, r.batch, ipiv, infos, run.target.stream()),
            "the small LU kernels"));
        return solver::finish_with_infos(plan, run, solver::Routine::getrf, infos);
      }
    }
    for (std::int64_t i = 0; i < r.batch; ++i) {
      ACCEL_RETURN_IF_ERROR(solver::launched(
          run,
          (plan.api->*Lu<T>::getrf)(plan.handle, solver::to_int(r.n), solver::to_int(r.n),
                                    a + solver::matrix_offset(i, r.stride_a), solver::to_int(r.lda),
                                    static_cast<T*>(run.workspace), ipiv + solver::matrix_offset(i, r.n), infos + i),
          Lu<T>::getrf_name));
    }
  }
  return solver::finish_with_infos(plan, run, solver::Routine::getrf, infos);
}

// Getrs's pivots checked on the device before getrs reads them. The run waits for the verdict (the one wait of a
// Getrs), since a solve cannot be told to skip on a flag in device memory.
Status check_pivots_on_device(const Getrs& r, const solver::DensePlan& plan, const std::int32_t* ipiv, CudaRun& run) {
  if (run.workspace_bytes < plan.check_offset() + sizeof(solver::PivotReport) ||
      run.host_result.size() < sizeof(solver::PivotReport)) {
    return internal_error("check_pivots_on_device: the plan holds no room for the pivots' report");
  }
  auto* report = reinterpret_cast<solver::PivotReport*>(static_cast<std::byte*>(run.workspace) + plan.check_offset());
  cudaStream_t stream = run.target.stream();
  ACCEL_RETURN_IF_ERROR(
      run.target.check(solver::launch_pivot_check(ipiv, r.n * r.batch, r.n, report, stream), "the pivot check"));
  ACCEL_RETURN_IF_ERROR(
      run.target.check(cudaMemcpyAsync(run.host_result.data(), report, sizeof *report, cudaMemcpyDeviceToHost, stream),
                       "copying the pivot check's report"));
  ACCEL_RETURN_IF_ERROR(run.target.check(cudaStreamSynchronize(stream), "waiting for the pivot check"));
  solver::PivotReport first = solver::kNoBadPivot;
  std::memcpy(&first, run.host_result.data(), sizeof first);
  if (first == solver::kNoBadPivot) return Status();
  // Only a refused request reads its bad pivot back, to name it.
  std::int32_t value = 0;
  ACCEL_RETURN_IF_ERROR(run.target.check(
      cudaMemcpyAsync(run.host_result.data(), ipiv + first, sizeof value, cudaMemcpyDeviceToHost, stream),
      "copying the bad pivot"));
  ACCEL_RETURN_IF_ERROR(run.target.check(cudaStreamSynchronize(stream), "waiting for the bad pivot"));
  std::memcpy(&value, run.host_result.data(), sizeof value);
  return solver::bad_pivot(r.n, r.batch, static_cast<std::int64_t>(first), value);
}

template <class T>
Status getrs(const Getrs& r, const solver::DensePlan& plan, std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Getrs>;
  if (plan.empty) return Status();
  const auto* ipiv = static_cast<const std::int32_t*>(views[Op::ipiv].data);
  ACCEL_RETURN_IF_ERROR(check_pivots_on_device(r, plan, ipiv, run));
  if (r.nrhs == 0) return Status();  // pivots checked as on the CPU, nothing to solve
  std::int32_t* infos = solver::run_infos(plan, run, nullptr);
  const T* a = static_cast<const T*>(views[Op::a].data);
  T* b = static_cast<T*>(views[Op::b].data);
  // CUBLAS_OP_T is Aᵀ for complex A too, not Aᴴ, as LAPACK's 'T' is on the CPU.
  const cublasOperation_t op = r.transpose == Transpose::transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
  for (std::int64_t i = 0; i < r.batch; ++i) {
    ACCEL_RETURN_IF_ERROR(solver::launched(
        run,
        (plan.api->*Lu<T>::getrs)(plan.handle, op, solver::to_int(r.n), solver::to_int(r.nrhs),
                                  a + solver::matrix_offset(i, r.stride_a), solver::to_int(r.lda),
                                  ipiv + solver::matrix_offset(i, r.n), b + solver::matrix_offset(i, r.stride_b),
                                  solver::to_int(r.ldb), infos + i),
        Lu<T>::getrs_name));
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
      [&](const solver::CusolverApi& api, cusolverDnHandle_t handle, int* lwork) {
        return solver::with_cuda_type(r.dtype, [&]<class T>(std::type_identity<T>) {
          return (api.*Lu<T>::buffer_size)(handle, solver::to_int(r.n), solver::to_int(r.n), nullptr,
                                           solver::to_int(r.lda), lwork);
        });
      },
      solver::DenseNeeds{.infos_in_workspace = request.info.is_null()});
}

Status CudaOperation<Getrf>::run(const Getrf&, const Checked& checked, const Plan& plan,
                                 std::span<const BufferView> views, CudaRun& run) {
  return solver::with_cuda_type(checked.request.dtype, [&]<class T>(std::type_identity<T>) {
    return getrf<T>(checked.request, plan, views, run);
  });
}

Result<CudaOperation<Getrs>::Plan> CudaOperation<Getrs>::plan(const Getrs&, const Checked& checked,
                                                              CudaTarget& target) {
  const Getrs& r = checked.request;
  const solver::WorkKey key{.routine = solver::Routine::getrs, .dtype = r.dtype};
  // Not empty for nrhs = 0: the pivots are checked all the same, as on the CPU.
  return solver::plan_dense(target, key, r.batch, r.n == 0, nullptr,
                            solver::DenseNeeds{.infos_in_workspace = true, .check_bytes = sizeof(solver::PivotReport)});
}

Status CudaOperation<Getrs>::run(const Getrs&, const Checked& checked, const Plan& plan,
                                 std::span<const BufferView> views, CudaRun& run) {
  return solver::with_cuda_type(checked.request.dtype, [&]<class T>(std::type_identity<T>) {
    return getrs<T>(checked.request, plan, views, run);
  });
}

}  // namespace accel
