/// @file
/// accel::RunRecorded — the device request a Recording's launch is (accel/device/recording.hpp): the recorded
/// steps, with their buffers as bound now, run in order by the device.
///
/// Every device first resolves every buffer the steps name through its buffer table (nothing is written, no
/// version changes): a freed or replaced buffer, or a rebuilt context, refuses the whole request with
/// `stale_handle` naming the step and the buffer, and no step runs. Then:
///   CPU        runs the steps in order (the reference); a step that fails is skipped, the others run, and the
///              request answers the first failure prefixed with "step <i> (<name>)".
///   CUDA       validates, plans and resolves every step, orders the stream after every buffer's earlier users, takes
///              the workspace, then captures the steps' run steps into one CUDA graph (thread-local capture mode)
///              and launches it; the executable graph is kept per `recording` and bound addresses, so a later
///              request of the same recording over the same buffers is one cudaGraphLaunch. A step refused by its
///              checks is left out of the graph, as on the CPU. The device's "recorded-graphs" cache counts them:
///              builds (captures), hits (launches of a kept graph), entries (kept graphs). A host copy is
///              captured as a memcpy node, so its host memory must be pinned (cudaHostAlloc, cudaHostRegister):
///              pageable memory refuses the step by name.
///   isolated   crosses to the worker like any staged request; the worker's device does the above. Host copies
///              are refused by name before anything crosses: the worker reaches the caller's memory only through
///              the staging region every copy reuses, so no graph of the worker can name it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <utility>
#include <variant>
#include <vector>

#include "accel/device/record_traits.hpp"

namespace accel {

/// Every request a Recording may hold (RecordTraits<R>::kCapturable).
/// Host copies come last: their host memory must be pinned and stay valid while the recording is launched.
using RecordedStep =
    std::variant<CopyOnDevice, Gemm, blas::Axpy, blas::Scal, blas::Dot, blas::Gemv, blas::Trsm, blas::Syrk, Fft,
                 rand::Generate, blas::Nrm2, blas::Asum, blas::Iamax, blas::Iamin, blas::Copy, blas::Swap, blas::Rot,
                 blas::Ger, blas::Trsv, blas::Symv, blas::Symm, blas::Trmm, blas::Geam, CopyToDevice, CopyToHost>;

/// The steps of a RunRecorded, in order: fixed once made, and shared by copies, so that every launch of a
/// Recording sends the same steps without copying them (binding and copying 21 steps each launch took the caller
/// three times the request's own sending).
class RecordedSteps {
 public:
  /// No steps.
  RecordedSteps() = default;
  /// `steps`, in order, fixed from now on.
  RecordedSteps(std::vector<RecordedStep> steps)  // NOLINT(google-explicit-constructor): a list of steps is one
      : steps_(std::make_shared<const std::vector<RecordedStep>>(std::move(steps))) {}
  /// The listed steps, in order.
  RecordedSteps(std::initializer_list<RecordedStep> steps) : RecordedSteps(std::vector<RecordedStep>(steps)) {}

  /// How many steps.
  [[nodiscard]] std::size_t size() const noexcept { return steps_ ? steps_->size() : 0; }
  /// Whether there are none.
  [[nodiscard]] bool empty() const noexcept { return size() == 0; }
  /// Step `i`, for i < size().
  [[nodiscard]] const RecordedStep& operator[](std::size_t i) const { return (*steps_)[i]; }
  /// The first step, for range-for.
  [[nodiscard]] const RecordedStep* begin() const noexcept { return steps_ ? steps_->data() : nullptr; }
  /// Past the last step.
  [[nodiscard]] const RecordedStep* end() const noexcept { return begin() + size(); }

 private:
  std::shared_ptr<const std::vector<RecordedStep>> steps_;
};

/// Runs recorded steps in order as one request (see the file).
struct RunRecorded {
  static constexpr const char* kName = "RunRecorded";
  using Response = Done;
  /// Which recording (a process-unique id; 0 for none): a CUDA device keeps the graph it captured under it.
  std::uint64_t recording = 0;
  RecordedSteps steps;  ///< in order, with their buffers as bound now
};

/// The step's request name.
[[nodiscard]] inline const char* step_name(const RecordedStep& step) noexcept {
  return std::visit([]<class R>(const R&) { return R::kName; }, step);
}

/// Calls `visit(BufferHandle&)` for every buffer the step names (null ones included).
template <class F>
void for_each_buffer(RecordedStep& step, F&& visit) {
  std::visit([&]<class R>(R& request) { RecordTraits<R>::buffers(request, visit); }, step);
}

/// Calls `visit(const BufferHandle&)` for every buffer of a step that stays as it is.
template <class F>
void for_each_buffer(const RecordedStep& step, F&& visit) {
  // The traits list handles by reference to let a recording bind them; here they are only read.
  std::visit(
      [&]<class R>(const R& request) {
        RecordTraits<R>::buffers(const_cast<R&>(request), [&](const BufferHandle& handle) { visit(handle); });
      },
      step);
}

}  // namespace accel
