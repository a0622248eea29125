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
/// another device `invalid_argument`. A launch first checks every buffer the recording names, as bound now, on the
/// device (a zero-length CopyOnDevice of each, which resolves the handle and touches nothing) and sends the steps
/// only once every check passed: a freed or replaced buffer, or a rebuilt context, fails the launch with
/// `stale_handle` naming the step and operand, and no step runs. The steps are then sent without waiting in
/// between (up to 256 at a time, so that a long recording never fills the device's mailbox), and the device runs
/// them in order; every step is sent even after one failed, as when they are sent one by one. The launch's future
/// is ready when every step has answered and carries the first failed step's status, prefixed with its index and
/// name.
///
/// A recording holds handles, not the Buffers that own them: keep the Buffers alive while it is launched (a buffer
/// freed by its last owner going away is stale like any other).
///
/// This is the reference semantics on every kind of device: the steps run as the requests would one by one. A
/// CUDA device does not capture them into a CUDA graph yet (each step is an ordinary request); the traits name
/// the requests whose run steps a capture may record.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/device/record_traits.hpp"

namespace accel {

namespace detail {
/// One Done future for many: ready when all are, with the status of the first failure in the given order,
/// prefixed by `label(index)`.
inline Future<Done> all_done(std::vector<Future<Done>> futures, std::function<std::string(std::size_t)> label) {
  if (futures.empty()) return make_ready_future<Done>(Done{});
  struct Join {
    std::mutex mutex;
    std::size_t left = 0;
    std::vector<Status> statuses;
    std::function<std::string(std::size_t)> label;
    Promise<Done> promise;
  };
  auto join = std::make_shared<Join>();
  join->left = futures.size();
  join->statuses.resize(futures.size());
  join->label = std::move(label);
  Future<Done> joined = join->promise.future();
  for (std::size_t i = 0; i < futures.size(); ++i) {
    static_cast<void>(futures[i].then([join, i](Result<Done> result) {
      {
        std::lock_guard lock(join->mutex);
        if (!result.ok()) join->statuses[i] = result.status();
        if (--join->left != 0) return;
      }
      for (std::size_t k = 0; k < join->statuses.size(); ++k) {
        const Status& failed = join->statuses[k];
        if (failed.ok()) continue;
        join->promise.set(Status(failed.code(), join->label(k) + ": " + std::string(failed.message()), failed.source(),
                                 failed.raw_code()));
        return;
      }
      join->promise.set(Done{});
    }));
  }
  return joined;
}

/// Requests a launch sends before it waits for the last of them: far below a mailbox's capacity (4096 by default).
inline constexpr std::size_t kLaunchWindow = 256;

/// Sends requests start..count-1, `send(i)` making the i-th, kLaunchWindow at a time: the next window goes once
/// the window before has answered (the device has taken its requests, so its mailbox has room again). Ready when
/// every request has answered, with the first failure prefixed by `label(i)`.
inline Future<Done> send_in_windows(std::size_t start, std::size_t count,
                                    std::shared_ptr<const std::function<Future<Done>(std::size_t)>> send,
                                    std::shared_ptr<const std::function<std::string(std::size_t)>> label) {
  const std::size_t end = std::min(count, start + kLaunchWindow);
  std::vector<Future<Done>> sent;
  sent.reserve(end - start);
  for (std::size_t i = start; i < end; ++i) sent.push_back((*send)(i));
  Future<Done> window = all_done(std::move(sent), [label, start](std::size_t k) { return (*label)(start + k); });
  if (end == count) return window;
  return window.then([end, count, send, label](Result<Done> done) -> Future<Done> {
    Future<Done> rest = send_in_windows(end, count, send, label);
    if (done.ok()) return rest;
    return rest.then([failed = done.status()](Result<Done>) -> Result<Done> { return failed; });
  });
}
}  // namespace detail

/// Library requests recorded once for one device (or stream) and launched any number of times (see the file).
/// Not thread-safe: record, rebind and launch from one thread at a time. A launch keeps what it sends, so
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
      step.send = [request = std::move(request)](const Device& device, const Script& script) {
        Request bound = request;
        Traits::buffers(bound, [&](BufferHandle& handle) { handle = script.bound(handle); });
        return device.ask(std::move(bound));
      };
      editable().steps.push_back(std::move(step));
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
    Script& script = editable();
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
    return Status{};
  }

  /// Runs the recorded steps in order on the device (see the file's description for the checks made first).
  /// The steps go kLaunchWindow at a time, each window from the thread that answered the window before (the
  /// device's, or its completion's; the first from the thread that answers the last buffer check).
  [[nodiscard]] Future<Done> launch() const {
    std::shared_ptr<const Script> script = script_;  // what later records and rebinds copy before changing
    auto checked = std::make_shared<std::vector<std::pair<std::size_t, BufferHandle>>>();  // step, bound buffer
    for (std::size_t i = 0; i < script->steps.size(); ++i) {
      for (const BufferHandle& recorded : script->steps[i].buffers) {
        const BufferHandle current = script->bound(recorded);
        bool seen = false;
        for (const auto& [step, handle] : *checked) seen = seen || handle == current;
        if (!seen) checked->emplace_back(i, current);
      }
    }
    using Send = std::function<Future<Done>(std::size_t)>;
    using Label = std::function<std::string(std::size_t)>;
    auto check = std::make_shared<const Send>([device = device_, checked](std::size_t k) {
      const BufferHandle handle = (*checked)[k].second;
      return device.ask(CopyOnDevice{.source = handle, .destination = handle, .count = 0});
    });
    auto check_label = std::make_shared<const Label>([script, checked](std::size_t k) {
      const auto& [step, handle] = (*checked)[k];
      return "launch refused: step " + std::to_string(step) + " (" + script->steps[step].name + "), " +
             to_string(handle);
    });
    return detail::send_in_windows(0, checked->size(), std::move(check), std::move(check_label))
        .then([script, device = device_](Done) -> Future<Done> {
          auto send = std::make_shared<const Send>(
              [script, device](std::size_t i) { return script->steps[i].send(device, *script); });
          auto label = std::make_shared<const Label>(
              [script](std::size_t i) { return "step " + std::to_string(i) + " (" + script->steps[i].name + ")"; });
          return detail::send_in_windows(0, script->steps.size(), std::move(send), std::move(label));
        });
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

  static bool contains(const std::vector<BufferHandle>& handles, const BufferHandle& handle) noexcept {
    for (const BufferHandle& h : handles) {
      if (h == handle) return true;
    }
    return false;
  }

  struct Step {
    const char* name = "";
    std::vector<BufferHandle> buffers;  ///< as recorded, null ones left out
    std::function<Future<Done>(const Device&, const Script&)> send;
  };

  /// What a launch sends. Launches share it; a change copies it first while one does (or another Recording).
  struct Script {
    std::vector<Step> steps;
    std::vector<std::pair<BufferHandle, BufferHandle>> bindings;  ///< recorded -> bound now (rebound ones only)

    [[nodiscard]] BufferHandle bound(BufferHandle recorded) const noexcept {
      for (const auto& [from, to] : bindings) {
        if (from == recorded) return to;
      }
      return recorded;
    }
  };

  Script& editable() {
    if (script_.use_count() > 1) script_ = std::make_shared<Script>(*script_);
    return *script_;
  }

  Device device_;
  std::shared_ptr<Script> script_ = std::make_shared<Script>();
};

}  // namespace accel
