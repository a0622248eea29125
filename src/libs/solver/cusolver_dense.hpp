// cuSOLVER's dense API on a CUDA stream, as the solver requests share it: a handle per stream bound to it, the
// workspace sizes cuSOLVER answered, cached per device by routine and shape, and the infos of a run turned into the
// request's status once its stream work has finished (CudaRun::check_result), so the actor never waits for them.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <utility>

#include "accel/core/cache_stats.hpp"
#include "cache/cache.hpp"
#include "libs/solver/cusolver_library.hpp"
#include "libs/solver/dense_checks.hpp"
#include "libs/solver/dense_info.hpp"
#include "operation/cuda_operation.hpp"

namespace accel::solver {

[[nodiscard]] Status cusolver_status(cusolverStatus_t status, std::string_view what);

// What a workspace size depends on: the routine and every argument cuSOLVER's *_bufferSize takes.
struct WorkKey {
  Routine routine = Routine::getrf;
  DType dtype = DType::f32;
  std::uint8_t fill = 0;
  std::uint8_t job = 0;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t lda = 0;
  std::int64_t ldu = 0;    // gesvdj's
  std::int64_t ldv = 0;    // gesvdj's
  std::int64_t batch = 0;  // the *Batched routines' that size their work area by it
};

// Asks cuSOLVER for a workspace size (in elements of the dtype) on `handle`.
using WorkQuery = std::function<cusolverStatus_t(const CusolverApi& api, cusolverDnHandle_t handle, int* lwork)>;

// What cuSOLVER keeps per stream: its dense handle, set to the stream. Opening the first loads the library.
class CusolverState final : public TargetState {
 public:
  static Result<std::unique_ptr<CusolverState>> open(CudaTarget& target);
  ~CusolverState() override;
  CusolverState(const CusolverState&) = delete;
  CusolverState& operator=(const CusolverState&) = delete;

  [[nodiscard]] const CusolverApi& api() const noexcept { return api_; }
  [[nodiscard]] cusolverDnHandle_t handle() const noexcept { return handle_; }

 private:
  CusolverState(const CusolverApi& api, cusolverDnHandle_t handle) : api_(api), handle_(handle) {}
  const CusolverApi& api_;
  cusolverDnHandle_t handle_;
};

// The workspace sizes cuSOLVER answered, per context: they depend on the GPU and the arguments, not on the stream.
// Opening it makes no CUDA call, so that a device query reports it without creating a handle.
class WorkSizes final : public TargetState {
 public:
  static Result<std::unique_ptr<WorkSizes>> open(CudaTarget& target);

  // The elements of workspace `key` needs: asked of cuSOLVER on the stream's handle the first time, then from the
  // cache.
  [[nodiscard]] Result<std::int64_t> elements(const WorkKey& key, const CusolverState& state, const WorkQuery& query);
  // "cusolver-workspace-sizes", this context's.
  [[nodiscard]] CacheStats stats() const { return sizes_.stats(); }

 private:
  WorkSizes();
  cache::Cache<std::int64_t> sizes_;
};

// A planned dense request: the stream's handle and the workspace its run takes — cuSOLVER's work area, then the
// infos where the request gives no buffer for them, then the matrices' addresses for a *Batched routine, then the
// report of a check of the inputs on the device — and the host result: the infos, then the addresses that are copied
// from there to the workspace (the check's report is read back there too, before the infos are).
struct DensePlan {
  const CusolverApi* api = nullptr;
  cusolverDnHandle_t handle = nullptr;
  std::int64_t batch = 1;
  std::int64_t lwork = 0;           // elements of the dtype
  std::uint64_t work_bytes = 0;     // lwork and the extra elements, rounded up so that what follows aligns
  std::uint64_t info_bytes = 0;     // infos kept in the workspace (rounded up), or none
  std::uint64_t pointer_bytes = 0;  // one address per matrix, or none
  std::uint64_t check_bytes = 0;    // the report of a check on the device, or none
  std::uint64_t host_bytes = 0;     // infos (rounded up to an address) and the addresses, or the check's report
  bool empty = false;               // nothing to compute (n = 0): the run launches nothing but zero infos

  [[nodiscard]] std::uint64_t workspace_bytes() const noexcept {
    return work_bytes + info_bytes + pointer_bytes + check_bytes;
  }
  // Where the check's report lies in the workspace.
  [[nodiscard]] std::uint64_t check_offset() const noexcept { return work_bytes + info_bytes + pointer_bytes; }
  [[nodiscard]] std::uint64_t infos_bytes() const noexcept {
    return static_cast<std::uint64_t>(batch) * sizeof(std::int32_t);
  }
  [[nodiscard]] std::uint64_t host_pointers_offset() const noexcept { return (infos_bytes() + 7) / 8 * 8; }
};

// How a request's run uses the workspace beyond cuSOLVER's work area.
struct DenseNeeds {
  bool infos_in_workspace = false;  // the request has no info buffer
  bool pointer_array = false;       // the run calls a *Batched routine
  std::int64_t extra = 0;           // elements after the work area (gesvd's rwork)
  std::uint64_t check_bytes = 0;    // a report that a check of the inputs writes before the routine runs
};

// The plan of a request of `batch` matrices; `query` (none for routines without a work area) is asked once per
// key.
[[nodiscard]] Result<DensePlan> plan_dense(CudaTarget& target, const WorkKey& key, std::int64_t batch, bool empty,
                                           const WorkQuery& query, DenseNeeds needs);

// Where a run's infos go: the request's info buffer, or the workspace.
[[nodiscard]] std::int32_t* run_infos(const DensePlan& plan, const CudaRun& run, void* info_buffer) noexcept;

// The device addresses of a batch's matrices (`base` + i * stride_bytes), for a *Batched routine: written into the
// host result and copied, in stream order, into the workspace, whose array it returns.
[[nodiscard]] Result<void**> batch_pointers(const DensePlan& plan, CudaRun& run, void* base,
                                            std::uint64_t stride_bytes);

// After the run's launches: copies the batch's infos to the host in stream order and makes them the request's
// status at completion. For an empty plan, zeroes the request's infos instead.
[[nodiscard]] Status finish_with_infos(const DensePlan& plan, CudaRun& run, Routine routine, std::int32_t* infos);

// A cuSOLVER launch's status, with a sticky CUDA error behind a failure taking precedence.
[[nodiscard]] Status launched(CudaRun& run, cusolverStatus_t status, std::string_view what);

void describe_cusolver(CudaTarget& target, LibraryReport& report);

// A size or leading dimension as cuSOLVER's int; the request's validation checked that it fits.
[[nodiscard]] inline int to_int(std::int64_t value) noexcept { return static_cast<int>(value); }

// The element type cuSOLVER takes for a validated dtype: float, double, cuComplex or cuDoubleComplex (with_element_type
// in dense_checks.hpp).
template <class F>
decltype(auto) with_cuda_type(DType dtype, F&& f) {
  return with_element_type<cuComplex, cuDoubleComplex>(dtype, std::forward<F>(f));
}

// The type of a cuSOLVER element's real part: what eigenvalues and singular values are, of complex matrices too.
template <class T>
struct RealOf {
  using type = T;
};
template <>
struct RealOf<cuComplex> {
  using type = float;
};
template <>
struct RealOf<cuDoubleComplex> {
  using type = double;
};
template <class T>
using Real = typename RealOf<T>::type;

[[nodiscard]] inline cublasFillMode_t to_cublas(Fill fill) noexcept {
  return fill == Fill::upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
}

}  // namespace accel::solver
