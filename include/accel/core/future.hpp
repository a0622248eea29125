/// @file
/// accel::Future<T> / accel::Promise<T> — the one async surface of accel.
///
/// Every request to an actor returns a Future<T> that carries a Result<T>: the value, or the error that the
/// receiver (or the runtime, if the receiver stopped) answered with. A Future can be waited on, chained, or
/// co_awaited, and a function returning Future<T> can itself be a coroutine:
///
/// @code
///   accel::Future<double> checksum(accel::Device& dev, accel::Buffer<float> x) {
///     std::vector<float> host(x.size());
///     auto copied = co_await dev.download(x, std::span(host));
///     if (!copied) co_return copied.status();
///     co_return std::accumulate(host.begin(), host.end(), 0.0);
///   }
/// @endcode
///
/// Where continuations run: a continuation (then, or a coroutine resumed by co_await) runs on the thread
/// that fulfils the promise — for actor requests, the actor's own thread — or at once on the caller's thread
/// if the future is already ready. A continuation must therefore never block on a request to the actor that
/// runs it (that actor is busy running the continuation); chain or co_await instead.
///
/// Note [Symmetric transfer]
/// When a coroutine's co_return fulfils its future and another coroutine awaits that future, the finishing
/// coroutine must not resume the awaiter from inside co_return: the awaiter's frame would go on top of its own,
/// so a chain of N coroutines awaiting each other would need N stack frames on the thread that completes the
/// innermost one (100k levels overflow an 8 MiB stack). Its final suspend point destroys its own frame and
/// hands the awaiter on instead (FinalAwaiter), in one of two ways:
///   - to the resume loop running on this thread (detail::resume_chain), which every fulfilment through
///     FutureState::set starts: the finishing coroutine returns to the loop, and the loop resumes the awaiter;
///   - by symmetric transfer (await_suspend returns the awaiter's handle) where no loop runs, e.g. when a
///     coroutine was resumed by an awaitable of another library.
/// Symmetric transfer alone would do if compilers always made it a tail call; GCC 12 does at -O2, but at -O0 and
/// -O1 and under ASan and TSan each transfer still costs 16 to 340 bytes of stack. Either way the awaiter runs on
/// the fulfilling thread, right after the coroutine it awaited has finished. then() continuations are plain
/// calls and still nest: a chain of them is as deep on the stack as it is long.
///
/// Cost: one allocation per future (the shared state), nothing else on the request path.
#pragma once

#include <chrono>
#include <coroutine>
#include <exception>
#include <memory>
#include <type_traits>
#include <utility>

#include "accel/core/future_state.hpp"
#include "accel/core/result.hpp"

namespace accel {

/// The read side of an asynchronous result (see the file's description).
template <class T>
class Future;
template <class T>
class Promise;

namespace detail {

template <class T>
struct future_value {
  using type = T;
};
template <class T>
struct future_value<Result<T>> {
  using type = T;
};
template <class T>
struct future_value<Future<T>> {
  using type = T;
};
template <>
struct future_value<void> {
  using type = Done;
};

/// What a continuation passed to then() returns: it takes the whole Result<T> if it can, else the value.
template <class F, class T>
using continuation_result_t =
    typename std::conditional_t<std::is_invocable_v<F, Result<T>&&>, std::invoke_result<F, Result<T>&&>,
                                std::invoke_result<F, T&&>>::type;

}  // namespace detail

/// The write side of a Future. Move-only; a promise destroyed without an answer answers `cancelled`, so no
/// request is ever dropped silently.
template <class T>
class Promise {
 public:
  Promise() : state_(std::make_shared<detail::FutureState<T>>()) {}
  /// A promise that fulfils `state`.
  explicit Promise(std::shared_ptr<detail::FutureState<T>> state) : state_(std::move(state)) {}
  /// Moves; the source no longer fulfils anything.
  Promise(Promise&&) noexcept = default;
  /// Answers this promise's future `cancelled` if unanswered, then takes over `other`'s.
  Promise& operator=(Promise&& other) noexcept {
    if (this != &other) {
      abandon();
      state_ = std::move(other.state_);
    }
    return *this;
  }
  Promise(const Promise&) = delete;
  Promise& operator=(const Promise&) = delete;
  ~Promise() { abandon(); }

  /// A future of this promise's result.
  [[nodiscard]] Future<T> future() const { return Future<T>(state_); }
  /// False once set() was called or the promise was moved from.
  [[nodiscard]] bool valid() const noexcept { return state_ != nullptr; }

  /// Fulfils the future; later calls have no effect.
  void set(Result<T> result) {
    if (auto state = std::move(state_)) state->set(std::move(result));
  }

 private:
  void abandon() {
    if (auto state = std::move(state_)) state->set(cancelled("the request was dropped without a reply"));
  }
  std::shared_ptr<detail::FutureState<T>> state_;
};

/// The read side of an asynchronous result: wait, wait_for, then or co_await it, once (see the file's description).
template <class T>
class [[nodiscard]] Future {
 public:
  using value_type = T;                  ///< The result's value type.
  using State = detail::FutureState<T>;  ///< The shared state a promise fulfils.

  Future() = default;
  /// The future of `state`.
  explicit Future(std::shared_ptr<State> state) : state_(std::move(state)) {}
  /// Moves; the source becomes invalid.
  Future(Future&&) noexcept = default;
  /// Moves; the source becomes invalid.
  Future& operator=(Future&&) noexcept = default;
  Future(const Future&) = delete;
  Future& operator=(const Future&) = delete;

  // -- observers ---------------------------------------------------------------
  /// False for a default-constructed future and after wait() or then() consumed it.
  [[nodiscard]] bool valid() const noexcept { return state_ != nullptr; }
  /// Whether the result is there (wait() would not block).
  [[nodiscard]] bool ready() const noexcept { return state_ && state_->ready(); }

  // -- waiting -----------------------------------------------------------------
  /// Blocks until the result is there and returns it; the future is consumed.
  Result<T> wait() {
    if (!state_) return failed_precondition("wait() on an invalid future (already consumed, or never set up)");
    state_->wait();
    return std::exchange(state_, nullptr)->take();
  }

  /// Like wait(), but returns `deadline_exceeded` if the result is not there in time. The future stays valid
  /// then (the request may still complete) and can be waited on again.
  template <class Rep, class Period>
  Result<T> wait_for(std::chrono::duration<Rep, Period> timeout) {
    if (!state_) return failed_precondition("wait_for() on an invalid future (already consumed, or never set up)");
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    if (!state_->wait_until(deadline)) {
      return deadline_exceeded("no reply within " +
                               std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(timeout).count()) +
                               " us");
    }
    return std::exchange(state_, nullptr)->take();
  }

  // -- chaining ----------------------------------------------------------------
  /// `f` receives the value and returns `U`, `Result<U>`, `Future<U>` or nothing; errors skip `f` and pass through.
  /// If `f` takes a Result<T> instead, it sees errors too. An exception thrown by `f` becomes `internal`.
  template <class F>
  auto then(F&& f) -> Future<typename detail::future_value<detail::continuation_result_t<F, T>>::type> {
    constexpr bool takes_result = std::is_invocable_v<F, Result<T>&&>;
    using Returned = detail::continuation_result_t<F, T>;
    using U = typename detail::future_value<Returned>::type;
    auto next = std::make_shared<detail::FutureState<U>>();
    if (!state_) {
      next->set(failed_precondition("then() on an invalid future (already consumed, or never set up)"));
      return Future<U>(next);
    }
    std::exchange(state_, nullptr)->on_ready([next, fn = std::forward<F>(f)](Result<T> result) mutable {
      if constexpr (!takes_result) {
        if (!result.ok()) {
          next->set(result.status());
          return;
        }
      }
      try {
        if constexpr (std::is_void_v<Returned>) {
          if constexpr (takes_result)
            fn(std::move(result));
          else
            fn(std::move(result).value());
          next->set(Done{});
        } else if constexpr (takes_result) {
          settle(next, fn(std::move(result)));
        } else {
          settle(next, fn(std::move(result).value()));
        }
      } catch (...) {
        next->set(internal_error("exception in a future continuation: " + detail::describe_current_exception()));
      }
    });
    return Future<U>(next);
  }

  // -- co_await ------------------------------------------------------------------
  /// `co_await future` yields the Result<T>.
  /// Whether co_await can go on without suspending.
  bool await_ready() const noexcept { return !state_ || state_->ready(); }
  /// A bool, not a handle to transfer to: the only choices are to go on at once (the result arrived meanwhile)
  /// or to return to whoever resumed this coroutine; the awaiter is resumed later by whoever fulfils the future.
  bool await_suspend(std::coroutine_handle<> awaiter) { return state_->suspend(awaiter); }
  /// The Result<T>; the future is consumed.
  Result<T> await_resume() {
    if (!state_) return failed_precondition("co_await on an invalid future (already consumed, or never set up)");
    return std::exchange(state_, nullptr)->take();
  }

  /// A function returning Future<T> may be a coroutine: it starts at once and its co_return fulfils the future.
  struct promise_type;

  /// Ends a coroutine by transferring to the coroutine that awaits its result (Note [Symmetric transfer]). Nothing
  /// owns the frame of a coroutine that started at once, so it destroys itself here, once it no longer runs.
  struct FinalAwaiter {
    /// Never ready: the finishing coroutine always suspends.
    bool await_ready() const noexcept { return false; }
    /// Destroys the finished coroutine's frame and hands its awaiter on (Note [Symmetric transfer]).
    std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> finished) noexcept {
      const std::coroutine_handle<> awaiter = finished.promise().awaiter;
      finished.destroy();  // this FinalAwaiter lives in that frame: touch nothing of it from here on
      return detail::hand_over(awaiter);
    }
    /// Nothing: the finished coroutine's frame is gone.
    void await_resume() const noexcept {}
  };

  /// What makes a function returning Future<T> a coroutine: it starts at once and its co_return fulfils the future.
  struct promise_type {
    std::shared_ptr<State> state = std::make_shared<State>();  ///< the shared state the coroutine's future reads
    std::coroutine_handle<> awaiter;  ///< the coroutine to transfer to at the final suspend point

    /// The coroutine's future.
    Future get_return_object() { return Future(state); }
    /// The coroutine starts at once.
    std::suspend_never initial_suspend() noexcept { return {}; }
    /// Hands the awaiter on at the end (FinalAwaiter).
    FinalAwaiter final_suspend() noexcept { return {}; }
    /// Fulfils the future with what co_return gave.
    void return_value(Result<T> result) { awaiter = state->complete(std::move(result)); }
    /// An exception that escaped the coroutine fulfils its future with `internal`.
    void unhandled_exception() {
      awaiter =
          state->complete(internal_error("exception escaped a coroutine: " + detail::describe_current_exception()));
    }
  };

 private:
  template <class U, class V>
  static void settle(const std::shared_ptr<detail::FutureState<U>>& next, V&& produced) {
    if constexpr (std::is_same_v<std::remove_cvref_t<V>, Future<U>>) {
      Future<U> inner = std::forward<V>(produced);
      if (!inner.valid()) {
        next->set(failed_precondition("a continuation returned an invalid future"));
        return;
      }
      inner.state_->on_ready([next](Result<U> r) { next->set(std::move(r)); });
    } else {
      next->set(Result<U>(std::forward<V>(produced)));
    }
  }

  template <class>
  friend class Future;

  std::shared_ptr<State> state_;
};

/// A future that is ready at once.
template <class T>
Future<T> make_ready_future(Result<T> result) {
  auto state = std::make_shared<detail::FutureState<T>>();
  state->set(std::move(result));
  return Future<T>(state);
}

}  // namespace accel
