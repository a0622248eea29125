#include "libs/solver/cholesky_operation_cuda.hpp"

#include <type_traits>

#include "libs/solver/cholesky_kernel.hpp"

namespace accel {
namespace {

using solver::Potrf;
using solver::Potrs;

template <class T>
struct Cholesky;
template <>
struct Cholesky<float> {
  static constexpr auto buffer_size = &solver::CusolverApi::cusolverDnSpotrf_bufferSize;
  static constexpr auto potrf = &solver::CusolverApi::cusolverDnSpotrf;
  static constexpr auto potrs = &solver::CusolverApi::cusolverDnSpotrs;
  static constexpr auto potrf_batched = &solver::CusolverApi::cusolverDnSpotrfBatched;
  static constexpr std::string_view potrf_name = "cusolverDnSpotrf";
  static constexpr std::string_view potrf_batched_name = "cusolverDnSpotrfBatched";
  static constexpr std::string_view potrs_name = "cusolverDnSpotrs";
};
template <>
struct Cholesky<double> {
  static constexpr auto buffer_size = &solver::CusolverApi::cusolverDnDpotrf_bufferSize;
  static constexpr auto potrf = &solver::CusolverApi::cusolverDnDpotrf;
  static constexpr auto potrs = &solver::CusolverApi::cusolverDnDpotrs;
  static constexpr auto potrf_batched = &solver::CusolverApi::cusolverDnDpotrfBatched;
  static constexpr std::string_view potrf_name = "cusolverDnDpotrf";
  static constexpr std::string_view potrf_batched_name = "cusolverDnDpotrfBatched";
  static constexpr std::string_view potrs_name = "cusolverDnDpotrs";
};
template <>
struct Cholesky<cuComplex> {
  static constexpr auto buffer_size = &solver::CusolverApi::cusolverDnCpotrf_bufferSize;
  static constexpr auto potrf = &solver::CusolverApi::cusolverDnCpotrf;
  static constexpr auto potrs = &solver::CusolverApi::cusolverDnCpotrs;
  static constexpr auto potrf_batched = &solver::CusolverApi::cusolverDnCpotrfBatched;
  static constexpr std::string_view potrf_name = "cusolverDnCpotrf";
  static constexpr std::string_view potrf_batched_name = "cusolverDnCpotrfBatched";
  static constexpr std::string_view potrs_name = "cusolverDnCpotrs";
};
template <>
struct Cholesky<cuDoubleComplex> {
  static constexpr auto buffer_size = &solver::CusolverApi::cusolverDnZpotrf_bufferSize;
  static constexpr auto potrf = &solver::CusolverApi::cusolverDnZpotrf;
  static constexpr auto potrs = &solver::CusolverApi::cusolverDnZpotrs;
  static constexpr auto potrf_batched = &solver::CusolverApi::cusolverDnZpotrfBatched;
  static constexpr std::string_view potrf_name = "cusolverDnZpotrf";
  static constexpr std::string_view potrf_batched_name = "cusolverDnZpotrfBatched";
  static constexpr std::string_view potrs_name = "cusolverDnZpotrs";
};

// A batch the family's kernels do not take (complex, or n beyond kSmallCholeskyMaxN) is factored by one potrfBatched
// call (as PyTorch does), which needs no work area and launches once for the whole batch instead of once per matrix;
// its count is an int. Not for an upper fill: potrfBatched then writes the lower triangle too (seen on an H100 at
// n = 257), which Potrf promises to leave alone, so such a batch is a loop of potrf calls.
bool uses_batched_call(const Potrf& r) {
  return r.batch > 1 && r.batch <= solver::kMaxLapackInt && r.fill == solver::Fill::lower;
}

// Real matrices up to kSmallCholeskyMaxN, one or a batch (whose count is a grid's width), take the family's kernels,
// which beat cuSOLVER's potrf and potrfBatched there on the H100 (docs/PERFORMANCE.md, sections 19 and 22).
bool takes_small_kernels(const Potrf& r) {
  return solver::is_real(r.dtype) && r.n <= solver::kSmallCholeskyMaxN && r.batch <= solver::kMaxLapackInt;
}

template <class T>
Status potrf(const Potrf& r, const solver::DensePlan& plan, std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Potrf>;
  std::int32_t* infos = solver::run_infos(plan, run, views[Op::info].data);
  if constexpr (std::is_floating_point_v<T>) {
    if (!plan.empty && takes_small_kernels(r)) {
      ACCEL_RETURN_IF_ERROR(run.target.check(
          solver::launch_small_cholesky(static_cast<T*>(views[Op::a].data), r.n, r.lda, r.stride_a, r.batch,
                                        r.fill == solver::Fill::upper, infos, run.target.stream()),
          "the small Cholesky kernels"));
      return solver::finish_with_infos(plan, run, solver::Routine::potrf, infos);
    }
  }
  if (!plan.empty && plan.pointer_bytes != 0) {
    ACCEL_ASSIGN_OR_RETURN(void** matrices, solver::batch_pointers(plan, run, views[Op::a].data,
                                                                   solver::matrix_offset(1, r.stride_a) * sizeof(T)));
    ACCEL_RETURN_IF_ERROR(
        solver::launched(run,
                         (plan.api->*Cholesky<T>::potrf_batched)(plan.handle, solver::to_cublas(r.fill),
                                                                 solver::to_int(r.n), reinterpret_cast<T**>(matrices),
                                                                 solver::to_int(r.lda), infos, solver::to_int(r.batch)),
                         Cholesky<T>::potrf_batched_name));
  } else if (!plan.empty) {
    T* a = static_cast<T*>(views[Op::a].data);
    for (std::int64_t i = 0; i < r.batch; ++i) {
      ACCEL_RETURN_IF_ERROR(solver::launched(
          run,
          (plan.api->*Cholesky<T>::potrf)(plan.handle, solver::to_cublas(r.fill), solver::to_int(r.n),
                                          a + solver::matrix_offset(i, r.stride_a), solver::to_int(r.lda),
                                          static_cast<T*>(run.workspace), solver::to_int(plan.lwork), infos + i),
          Cholesky<T>::potrf_name));
    }
  }
  return solver::finish_with_infos(plan, run, solver::Routine::potrf, infos);
}

template <class T>
Status potrs(const Potrs& r, const solver::DensePlan& plan, std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<Potrs>;
  std::int32_t* infos = solver::run_infos(plan, run, nullptr);
  if (!plan.empty) {
    const T* a = static_cast<const T*>(views[Op::a].data);
    T* b = static_cast<T*>(views[Op::b].data);
    for (std::int64_t i = 0; i < r.batch; ++i) {
      ACCEL_RETURN_IF_ERROR(solver::launched(
          run,
          (plan.api->*Cholesky<T>::potrs)(plan.handle, solver::to_cublas(r.fill), solver::to_int(r.n),
                                          solver::to_int(r.nrhs), a + solver::matrix_offset(i, r.stride_a),
                                          solver::to_int(r.lda), b + solver::matrix_offset(i, r.stride_b),
                                          solver::to_int(r.ldb), infos + i),
          Cholesky<T>::potrs_name));
    }
  }
  return solver::finish_with_infos(plan, run, solver::Routine::potrs, infos);
}

}  // namespace

Result<CudaOperation<Potrf>::Plan> CudaOperation<Potrf>::plan(const Potrf& request, const Checked& checked,
                                                              CudaTarget& target) {
  const Potrf& r = checked.request;
  const solver::WorkKey key{.routine = solver::Routine::potrf,
                            .dtype = r.dtype,
                            .fill = static_cast<std::uint8_t>(r.fill),
                            .n = r.n,
                            .lda = r.lda};
  if (takes_small_kernels(r)) {  // no work area
    return solver::plan_dense(target, key, r.batch, r.n == 0, nullptr,
                              solver::DenseNeeds{.infos_in_workspace = request.info.is_null()});
  }
  if (uses_batched_call(r)) {
    return solver::plan_dense(target, key, r.batch, r.n == 0, nullptr,
                              solver::DenseNeeds{.infos_in_workspace = request.info.is_null(), .pointer_array = true});
  }
  return solver::plan_dense(
      target, key, r.batch, r.n == 0,
      [&](const solver::CusolverApi& api, cusolverDnHandle_t handle, int* lwork) {
        return solver::with_cuda_type(r.dtype, [&]<class T>(std::type_identity<T>) {
          return (api.*Cholesky<T>::buffer_size)(handle, solver::to_cublas(r.fill), solver::to_int(r.n), nullptr,
                                                 solver::to_int(r.lda), lwork);
        });
      },
      solver::DenseNeeds{.infos_in_workspace = request.info.is_null()});
}

Status CudaOperation<Potrf>::run(const Potrf&, const Checked& checked, const Plan& plan,
                                 std::span<const BufferView> views, CudaRun& run) {
  return solver::with_cuda_type(checked.request.dtype, [&]<class T>(std::type_identity<T>) {
    return potrf<T>(checked.request, plan, views, run);
  });
}

Result<CudaOperation<Potrs>::Plan> CudaOperation<Potrs>::plan(const Potrs&, const Checked& checked,
                                                              CudaTarget& target) {
  const Potrs& r = checked.request;
  const solver::WorkKey key{.routine = solver::Routine::potrs, .dtype = r.dtype};
  return solver::plan_dense(target, key, r.batch, r.n == 0 || r.nrhs == 0, nullptr,
                            solver::DenseNeeds{.infos_in_workspace = true});
}

Status CudaOperation<Potrs>::run(const Potrs&, const Checked& checked, const Plan& plan,
                                 std::span<const BufferView> views, CudaRun& run) {
  return solver::with_cuda_type(checked.request.dtype, [&]<class T>(std::type_identity<T>) {
    return potrs<T>(checked.request, plan, views, run);
  });
}

}  // namespace accel
