// accel.Future: a C++ Future<T> as Python waits for it — result(timeout), done(), add_done_callback(fn), and
// `await` from asyncio (python/accel/_asyncio.py hands completion to the loop's thread).
//
// The C++ future is consumed at once by a continuation that stores its outcome in a FutureCore: a status and a
// function that makes the Python value later, under the GIL (Note [The GIL and accel's threads], bindings.hpp).
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "python/bindings.hpp"

namespace accel::python {

// Runs `wait_slice(slice)` with the GIL released until it returns true or `timeout` (seconds; none: no limit) has
// passed, taking the GIL back every 100 ms to let signals in (KeyboardInterrupt raises here). True if it finished.
bool wait_in_slices(const std::function<bool(std::chrono::milliseconds)>& wait_slice, std::optional<double> timeout);

// Calls send() — which sends a request and returns its Future — with the GIL released: sending may wait (an isolated
// device's full channel; a model tokenises on the caller's thread), and the accel threads that would make progress
// meanwhile may need the GIL to finish earlier requests (done callbacks).
template <class Send>
auto send_released(Send&& send) {
  nb::gil_scoped_release released;
  return send();
}

template <class T>
T wait_released(Future<T> future) {
  std::optional<Result<T>> outcome;
  wait_in_slices(
      [&](std::chrono::milliseconds slice) {
        Result<T> result = future.wait_for(slice);
        if (future.valid()) return false;  // still running: wait_for keeps the future on a timeout
        outcome.emplace(std::move(result));
        return true;
      },
      std::nullopt);
  return unwrap(std::move(*outcome));
}

class FutureCore {
 public:
  using MakeValue = std::function<nb::object()>;

  FutureCore() = default;
  FutureCore(const FutureCore&) = delete;
  FutureCore& operator=(const FutureCore&) = delete;
  ~FutureCore();

  // -- producer: any thread, GIL not needed -----------------------------------------
  // Stores the outcome, wakes waiters, then (taking the GIL) runs the done callbacks and drops the objects kept
  // alive for the request. Only the first call counts.
  void complete(Status status, MakeValue make_value);

  // -- consumer: GIL held ------------------------------------------------------------
  [[nodiscard]] bool done() const;
  // False if `timeout` passed first.
  bool wait(std::optional<double> timeout);
  // Runs callback(future) at completion, or now if already complete.
  void add_callback(nb::object callback, nb::object future);
  // Holds `object` (the host array of a copy) until completion.
  void keep_alive(nb::object object);
  // After done().
  [[nodiscard]] const Status& status() const { return status_; }
  [[nodiscard]] const MakeValue& make_value() const { return make_value_; }

 private:
  static void run_callbacks(std::vector<std::pair<nb::object, nb::object>> callbacks);

  mutable std::mutex mutex_;
  std::condition_variable ready_;
  bool done_ = false;
  Status status_;
  MakeValue make_value_;
  std::vector<std::pair<nb::object, nb::object>> callbacks_;  // (callback, the Python future it is given)
  std::vector<nb::object> kept_;
};

// The Python class accel.Future.
class PyFuture {
 public:
  explicit PyFuture(std::shared_ptr<FutureCore> core) : core_(std::move(core)) {}

  [[nodiscard]] bool done() const { return core_->done(); }
  // The value, or the request's error raised (TimeoutError if `timeout` passed first). The value is made once.
  nb::object result(std::optional<double> timeout);
  // The error as an exception object (None on success), without raising it.
  nb::object exception(std::optional<double> timeout);
  [[nodiscard]] const std::shared_ptr<FutureCore>& core() const { return core_; }
  // The value result() returns on success, known before completion (a copy's destination array).
  void set_value(nb::object value) { value_ = std::move(value); }

 private:
  std::shared_ptr<FutureCore> core_;
  std::optional<nb::object> value_;
};

// A Python future over `future`: its value becomes convert(value) under the GIL; `keep` (if given) lives until the
// request completes.
template <class T, class Convert>
PyFuture make_future(Future<T> future, Convert convert, nb::object keep = nb::object()) {
  auto core = std::make_shared<FutureCore>();
  if (keep.is_valid()) core->keep_alive(std::move(keep));
  (void)future.then([core, convert = std::move(convert)](Result<T> result) mutable {
    if (!result.ok()) {
      core->complete(result.status(), nullptr);
      return;
    }
    auto value = std::make_shared<T>(*std::move(result));
    core->complete(Status(), [value, convert]() { return convert(*value); });
  });
  return PyFuture(std::move(core));
}

// A future of a request answering Done: its value is None.
inline PyFuture make_done_future(Future<Done> future, nb::object keep = nb::object()) {
  return make_future(
      std::move(future), [](const Done&) { return nb::none(); }, std::move(keep));
}

// A future of a copy into `array`: its value is the array.
inline PyFuture make_future_with_value(Future<Done> future, nb::object array) {
  PyFuture made = make_done_future(std::move(future), array);
  made.set_value(std::move(array));
  return made;
}

}  // namespace accel::python
