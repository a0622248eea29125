/// @file
/// accel::Recording — a sequence of library requests recorded once and launched again, with buffers rebound
/// between launches (issue 47's recorded request graphs).
///
/// @code
///   accel::Recording pipeline(device);
///   pipeline.record(accel::Gemm{...});            // nothing runs: checked, then kept
///   pipeline.record(accel::blas::Axpy{...});
///   pipeline.record(accel::Fft{...});
///   pipeline.launch().wait();                     // the three, in order
///   pipeline.rebind(x, other_x);                  // same dtype and count: no re-recording
///   pipeline.launch().wait();
/// @endcode
///
/// What may be recorded is what RecordTraits (accel/device/record_traits.hpp) says is capturable; anything else is
/// refused by name when it is recorded, before anything runs (`not_supported`), and a request naming a buffer of
/// another device `invalid_argument`. A launch is one device request, RunRecorded (accel/device/run_recorded.hpp),
/// carrying the steps with their buffers as bound now. The device resolves every buffer first, inside its buffer
/// table, writing nothing: a freed or replaced buffer, or a rebuilt context, fails the launch with `stale_handle`
/// naming the step and operand, and no step runs. The device then runs the steps in order; a step refused by its
/// own checks is skipped and the others run. The launch's future carries the first failed step's status, prefixed
/// with its index and name.
///
/// A recording holds handles, not the Buffers that own them: keep the Buffers alive while it is launched (a buffer
/// freed by its last owner going away is stale like any other).
///
/// Uploads (CopyToDevice) and downloads (CopyToHost) may be recorded when their host memory is pinned
/// (cudaHostAlloc, cudaHostRegister) and stays valid while the recording is launched: a CUDA graph holds them as
/// memcpy nodes that read or write that memory when the graph runs, so a download's memory holds the result once the
/// launch's future is ready, and an upload's memory must not change before it is. rebind(HostSource, HostSource) and
/// rebind(HostDestination, HostDestination) swap host memory of the same dtype and count. A CUDA device refuses a
/// launch whose host copy names pageable memory, and an isolated device every launch with a host copy
/// (run_recorded.hpp), by name, before anything runs.
///
/// The CPU device runs the steps one by one (the reference semantics). A CUDA device captures them into one CUDA
/// graph the first time and launches that graph again while the recording and its bound buffers stay the same
/// (run_recorded.hpp); an isolated device's worker does the same.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/device/record_traits.hpp"
#include "accel/device/run_recorded.hpp"

namespace accel {

/// Library requests recorded once for one device (or stream) and launched any number of times (see the file).
/// Not thread-safe: record, rebind and launch from one thread at a time. A launch sends the steps as bound then, so
/// recording or rebinding after launch() returned changes only later launches; copies of a Recording share their
/// steps until one of them changes.
class Recording {
 public:
  /// An empty recording whose launches go to `device` (a device or one of its streams).
  explicit Recording(Device device) : device_(std::move(device)) {}

  /// Keeps `request` as the next step. Refused, and nothing kept, when its RecordTraits say it is not capturable
  /// (`not_supported`, naming the request and why) or when it names a buffer of another device
  /// (`invalid_argument`). The request itself is checked by the device when it is launched.
  template <class Request>
  requires DeviceProtocol::accepts<Request> Status record(Request request) {
    using Traits = RecordTraits<Request>;
    if constexpr (!Traits::kCapturable) {
      return not_supported(std::string("Recording refuses ") + Request::kName + ": " + Traits::kWhy);
    } else {
      static_assert(std::is_constructible_v<RecordedStep, Request>,
                    "a capturable request must be one of RecordedStep's (accel/device/run_recorded.hpp)");
      Step step{.name = Request::kName};
      Status foreign;
      Traits::buffers(request, [&](BufferHandle& handle) {
        if (handle.is_null()) return;
        if (handle.device != device_.id() && foreign.ok()) {
          foreign = invalid_argument(std::string("Recording refuses ") + Request::kName + ": " + to_string(handle) +
                                     " belongs to another device than " + device_.name());
        }
        step.buffers.push_back(handle);
      });
      if (!foreign.ok()) return foreign;
      step.request = std::move(request);
      editable().add(std::move(step));
      return Status{};
    }
  }

  /// Rebinds every use of `from` (a buffer the recording names as bound now) to `to`, for later launches, without
  /// recording again. `to` must have `from`'s dtype and count and belong to the same device (`invalid_argument`);
  /// a `from` the recording does not name is `invalid_argument` too.
  Status rebind(BufferHandle from, BufferHandle to) {
    if (to.is_null() || to.device != from.device || to.dtype != from.dtype || to.count != from.count) {
      return invalid_argument("Recording::rebind: " + to_string(to) + " cannot replace " + to_string(from) +
                              " (it must be a buffer of the same device, dtype and count)");
    }
    std::vector<BufferHandle> rebound;  // recorded handles bound to `from` now
    for (const Step& step : script_->steps) {
      for (const BufferHandle& recorded : step.buffers) {
        if (script_->bound(recorded) == from && !contains(rebound, recorded)) rebound.push_back(recorded);
      }
    }
    if (rebound.empty()) return invalid_argument("Recording::rebind: the recording does not use " + to_string(from));
    Script& script = editable(/*new_steps=*/false);
    for (const BufferHandle& recorded : rebound) {
      bool kept = false;
      for (auto& [was, now] : script.bindings) {
        if (was == recorded) {
          now = to;
          kept = true;
        }
      }
      if (!kept) script.bindings.emplace_back(recorded, to);
    }
    script.forget_launched();
    return Status{};
  }

  /// Rebinds every upload from `from` (host memory an upload of the recording reads now) to `to`, for later
  /// launches: non-null, same dtype and count (`invalid_argument` otherwise, or when no upload reads `from`). A CUDA
  /// device checks that it is pinned when the recording is launched.
  Status rebind(HostSource from, HostSource to) { return rebind_host(from, to, "HostSource"); }
  /// Rebinds every download into `from` (host memory a download of the recording writes now) to `to`, as above.
  Status rebind(HostDestination from, HostDestination to) { return rebind_host(from, to, "HostDestination"); }

  /// Runs the recorded steps in order on the device: one RunRecorded request (see the file's description).
  [[nodiscard]] Future<Done> launch() const {
    return device_.ask(RunRecorded{.recording = script_->id, .steps = script_->launched()});
  }

  /// The recorded steps.
  [[nodiscard]] std::size_t size() const noexcept { return script_->steps.size(); }
  /// Each step's request name, in order.
  [[nodiscard]] std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const Step& step : script_->steps) out.emplace_back(step.name);
    return out;
  }
  /// The buffer `recorded` (a handle as it was recorded) is bound to now.
  [[nodiscard]] BufferHandle bound(BufferHandle recorded) const noexcept { return script_->bound(recorded); }

 private:
  struct Script;

  // The host memory a step reads or writes as recorded, if it is a host copy of kind `Host`.
  template <class Host>
  static const Host* host_of(const RecordedStep& step) noexcept {
    if constexpr (std::is_same_v<Host, HostSource>) {
      const auto* upload = std::get_if<CopyToDevice>(&step);
      return upload == nullptr ? nullptr : &upload->source;
    } else {
      const auto* download = std::get_if<CopyToHost>(&step);
      return download == nullptr ? nullptr : &download->destination;
    }
  }

  template <class Host>
  Status rebind_host(const Host& from, const Host& to, const char* what) {
    if (to.data == nullptr || to.dtype != from.dtype || to.count != from.count) {
      return invalid_argument(std::string("Recording::rebind: a ") + what +
                              " can only be replaced by non-null host memory of the same dtype and count");
    }
    std::vector<const void*> rebound;  // recorded host memory bound to `from.data` now
    for (const Step& step : script_->steps) {
      const Host* recorded = host_of<Host>(step.request);
      if (recorded != nullptr && recorded->dtype == from.dtype && recorded->count == from.count &&
          script_->bound_host(recorded->data) == from.data) {
        rebound.push_back(recorded->data);
      }
    }
    if (rebound.empty()) {
      return invalid_argument(std::string("Recording::rebind: no host copy of the recording uses this ") + what +
                              " (same memory, dtype and count)");
    }
    Script& script = editable(/*new_steps=*/false);
    for (const void* recorded : rebound) {
      bool kept = false;
      for (auto& [was, now] : script.host_bindings) {
        if (was == recorded) {
          now = to.data;
          kept = true;
        }
      }
      if (!kept) script.host_bindings.emplace_back(recorded, to.data);
    }
    script.forget_launched();
    return Status{};
  }

  static bool contains(const std::vector<BufferHandle>& handles, const BufferHandle& handle) noexcept {
    for (const BufferHandle& h : handles) {
      if (h == handle) return true;
    }
    return false;
  }

  struct Step {
    const char* name = "";
    std::vector<BufferHandle> buffers;  ///< as recorded, null ones left out
    RecordedStep request;               ///< as recorded
  };

  /// What a launch sends. Launches share it; a change copies it first while one does (or another Recording).
  struct Script {
    std::uint64_t id = next_id();  ///< RunRecorded::recording: changes with every step added
    std::vector<Step> steps;
    std::vector<std::pair<BufferHandle, BufferHandle>> bindings;     ///< recorded -> bound now (rebound ones only)
    std::vector<std::pair<const void*, const void*>> host_bindings;  ///< host memory, as `bindings`

    Script() = default;
    Script(const Script& other)
        : id(other.id),
          steps(other.steps),
          bindings(other.bindings),
          host_bindings(other.host_bindings),
          launched_(other.launched_.load()) {}
    Script& operator=(const Script&) = delete;

    void add(Step step) {
      steps.push_back(std::move(step));
      forget_launched();
    }
    /// After a change of the steps or their bindings: the next launch binds them again.
    void forget_launched() { launched_.store(nullptr); }

    /// The steps as bound now, bound by the first launch after a change and sent again by every launch until the
    /// next. Atomic since copies of a Recording share their script and may launch from several threads.
    [[nodiscard]] RecordedSteps launched() const {
      std::shared_ptr<const RecordedSteps> made = launched_.load();
      if (made == nullptr) {
        std::vector<RecordedStep> bound_steps;
        bound_steps.reserve(steps.size());
        for (const Step& step : steps) bound_steps.push_back(bound_step(step.request));
        made = std::make_shared<const RecordedSteps>(std::move(bound_steps));
        launched_.store(made);
      }
      return *made;
    }

    [[nodiscard]] BufferHandle bound(BufferHandle recorded) const noexcept {
      for (const auto& [from, to] : bindings) {
        if (from == recorded) return to;
      }
      return recorded;
    }
    [[nodiscard]] const void* bound_host(const void* recorded) const noexcept {
      for (const auto& [from, to] : host_bindings) {
        if (from == recorded) return to;
      }
      return recorded;
    }
    [[nodiscard]] RecordedStep bound_step(const RecordedStep& recorded) const {
      RecordedStep step = recorded;
      for_each_buffer(step, [&](BufferHandle& handle) { handle = bound(handle); });
      if (auto* upload = std::get_if<CopyToDevice>(&step)) upload->source.data = bound_host(upload->source.data);
      if (auto* download = std::get_if<CopyToHost>(&step)) {
        download->destination.data = const_cast<void*>(bound_host(download->destination.data));
      }
      return step;
    }

   private:
    mutable std::atomic<std::shared_ptr<const RecordedSteps>> launched_;
  };

  static std::uint64_t next_id() noexcept {
    static std::atomic<std::uint64_t> last{0};
    return last.fetch_add(1, std::memory_order_relaxed) + 1;
  }

  // The script to change, copied first while a launch (or another Recording) shares it. A new step makes it a new
  // recording for the device; a rebind keeps the id, so that a CUDA device updates the graph it keeps under it in
  // place (cudaGraphExecUpdate: its key holds the addresses, which changed) instead of instantiating another.
  Script& editable(bool new_steps = true) {
    if (script_.use_count() > 1) script_ = std::make_shared<Script>(*script_);
    if (new_steps) script_->id = next_id();
    return *script_;
  }

  Device device_;
  std::shared_ptr<Script> script_ = std::make_shared<Script>();
};

}  // namespace accel
