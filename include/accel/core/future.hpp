// accel::Future<T> / accel::Promise<T> — the one async surface of accel.
//
// Every request to an actor returns a Future<T> that carries a Result<T>: the value, or the error that the
// receiver (or the runtime, if the receiver stopped) answered with. A Future can be waited on, chained, or
// co_awaited, and a function returning Future<T> can itself be a coroutine:
//
//   accel::Future<double> checksum(accel::Device& dev, accel::Buffer<float> x) {
//     std::vector<float> host(x.size());
//     auto copied = co_await dev.download(x, std::span(host));
//     if (!copied) co_return copied.status();
//     co_return std::accumulate(host.begin(), host.end(), 0.0);
//   }
//
// Where continuations run: a continuation (then, or a coroutine resumed by co_await) runs on the thread
// that fulfils the promise — for actor requests, the actor's own thread — or at once on the caller's thread
// if the future is already ready. A continuation must therefore never block on a request to the actor that
// runs it (that actor is busy running the continuation); chain or co_await instead.
//
// Cost: one allocation per future (the shared state), nothing else on the request path.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <coroutine>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>

#include "accel/core/result.hpp"

namespace accel {

template <class T>
class Future;
template <class T>
class Promise;

namespace detail {

// How a waiter waits for the ready flag before it sleeps on a condition variable: it spins for kFutureSpin,
// then yields the processor between looks until kFutureYield has passed. Replies from a busy actor usually
// arrive within a few microseconds; GPU replies within tens to hundreds; and waking a sleeping thread costs
// 10 µs and more (much more on a virtual machine), which is what the yielding phase avoids while still
// handing the core to any thread that needs it.
inline constexpr std::chrono::microseconds kFutureSpin{20};
inline constexpr std::chrono::microseconds kFutureYield{500};

void cpu_relax() noexcept;
std::string describe_current_exception();

template <class T>
class FutureState {
 public:
  // -- producer side -----------------------------------------------------------
  // Stores the result and runs the continuation, if any. Only the first call has an effect.
  bool set(Result<T> result) {
    std::function<void(Result<T>)> continuation;
    std::coroutine_handle<> awaiter;
    bool notify = false;
    {
      std::lock_guard lock(mutex_);
      if (result_.has_value() || consumed_) return false;
      if (continuation_) {
        continuation = std::move(continuation_);
        consumed_ = true;
      } else {
        result_.emplace(std::move(result));
      }
      awaiter = std::exchange(awaiter_, nullptr);
      notify = waiters_ > 0;
      ready_.store(true, std::memory_order_release);
    }
    if (notify) cv_.notify_all();
    if (continuation) continuation(std::move(result));
    if (awaiter) awaiter.resume();
    return true;
  }

  // -- consumer side -----------------------------------------------------------
  [[nodiscard]] bool ready() const noexcept { return ready_.load(std::memory_order_acquire); }

  void wait() {
    if (spin_until_ready(kFutureYield)) return;
    std::unique_lock lock(mutex_);
    ++waiters_;
    cv_.wait(lock, [&] { return ready_.load(std::memory_order_relaxed); });
    --waiters_;
  }

  bool wait_until(std::chrono::steady_clock::time_point deadline) {
    if (spin_until_ready(std::min<std::chrono::nanoseconds>(kFutureYield, deadline - std::chrono::steady_clock::now())))
      return true;
    std::unique_lock lock(mutex_);
    ++waiters_;
    const bool done = cv_.wait_until(lock, deadline, [&] { return ready_.load(std::memory_order_relaxed); });
    --waiters_;
    return done;
  }

  // Precondition: ready() and no continuation took the result.
  Result<T> take() {
    std::lock_guard lock(mutex_);
    consumed_ = true;
    return std::move(*result_);
  }

  // Runs `continuation` with the result once it is there: now, if it already is.
  void on_ready(std::function<void(Result<T>)> continuation) {
    std::unique_lock lock(mutex_);
    if (result_.has_value()) {
      Result<T> result = std::move(*result_);
      result_.reset();
      consumed_ = true;
      lock.unlock();
      continuation(std::move(result));
      return;
    }
    continuation_ = std::move(continuation);
  }

  // Returns false (do not suspend) if the result is already there.
  bool suspend(std::coroutine_handle<> awaiter) {
    std::lock_guard lock(mutex_);
    if (result_.has_value()) return false;
    awaiter_ = awaiter;
    return true;
  }

 private:
  bool spin_until_ready(std::chrono::nanoseconds budget) {
    const auto start = std::chrono::steady_clock::now();
    const auto spin_until = start + std::min<std::chrono::nanoseconds>(budget, kFutureSpin);
    const auto yield_until = start + std::min<std::chrono::nanoseconds>(budget, kFutureYield);
    for (unsigned i = 1;; ++i) {
      if (ready_.load(std::memory_order_acquire)) return true;
      if (i % 64 != 0) {
        cpu_relax();
        continue;
      }
      const auto now = std::chrono::steady_clock::now();
      if (now >= yield_until) return false;
      if (now >= spin_until) std::this_thread::yield();
    }
  }

  std::atomic<bool> ready_{false};
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  int waiters_ = 0;
  bool consumed_ = false;
  std::optional<Result<T>> result_;
  std::function<void(Result<T>)> continuation_;
  std::coroutine_handle<> awaiter_;
};

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

// What a continuation passed to then() returns: it takes the whole Result<T> if it can, else the value.
template <class F, class T>
using continuation_result_t =
    typename std::conditional_t<std::is_invocable_v<F, Result<T>&&>, std::invoke_result<F, Result<T>&&>,
                                std::invoke_result<F, T&&>>::type;

}  // namespace detail

// The write side of a Future. Move-only; a promise destroyed without an answer answers `cancelled`, so no
// request is ever dropped silently.
template <class T>
class Promise {
 public:
  Promise() : state_(std::make_shared<detail::FutureState<T>>()) {}
  explicit Promise(std::shared_ptr<detail::FutureState<T>> state) : state_(std::move(state)) {}
  Promise(Promise&&) noexcept = default;
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

  [[nodiscard]] Future<T> future() const { return Future<T>(state_); }
  [[nodiscard]] bool valid() const noexcept { return state_ != nullptr; }

  // Fulfils the future; later calls have no effect.
  void set(Result<T> result) {
    if (auto state = std::move(state_)) state->set(std::move(result));
  }

 private:
  void abandon() {
    if (auto state = std::move(state_)) state->set(cancelled("the request was dropped without a reply"));
  }
  std::shared_ptr<detail::FutureState<T>> state_;
};

template <class T>
class [[nodiscard]] Future {
 public:
  using value_type = T;
  using State = detail::FutureState<T>;

  Future() = default;
  explicit Future(std::shared_ptr<State> state) : state_(std::move(state)) {}
  Future(Future&&) noexcept = default;
  Future& operator=(Future&&) noexcept = default;
  Future(const Future&) = delete;
  Future& operator=(const Future&) = delete;

  // -- observers ---------------------------------------------------------------
  // False for a default-constructed future and after wait() or then() consumed it.
  [[nodiscard]] bool valid() const noexcept { return state_ != nullptr; }
  [[nodiscard]] bool ready() const noexcept { return state_ && state_->ready(); }

  // -- waiting -----------------------------------------------------------------
  // Blocks until the result is there and returns it; the future is consumed.
  Result<T> wait() {
    if (!state_) return failed_precondition("wait() on an invalid future (already consumed, or never set up)");
    state_->wait();
    return std::exchange(state_, nullptr)->take();
  }

  // Like wait(), but returns `deadline_exceeded` if the result is not there in time. The future stays valid
  // then (the request may still complete) and can be waited on again.
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
  // `f` receives the value and returns U, Result<U>, Future<U> or nothing; errors skip `f` and pass through.
  // If `f` takes a Result<T> instead, it sees errors too. An exception thrown by `f` becomes `internal`.
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
  // `co_await future` yields the Result<T>.
  bool await_ready() const noexcept { return !state_ || state_->ready(); }
  bool await_suspend(std::coroutine_handle<> awaiter) { return state_->suspend(awaiter); }
  Result<T> await_resume() {
    if (!state_) return failed_precondition("co_await on an invalid future (already consumed, or never set up)");
    return std::exchange(state_, nullptr)->take();
  }

  // A function returning Future<T> may be a coroutine: it starts at once and its co_return fulfils the future.
  struct promise_type {
    std::shared_ptr<State> state = std::make_shared<State>();
    Future get_return_object() { return Future(state); }
    std::suspend_never initial_suspend() noexcept { return {}; }
    std::suspend_never final_suspend() noexcept { return {}; }
    void return_value(Result<T> result) { state->set(std::move(result)); }
    void unhandled_exception() {
      state->set(internal_error("exception escaped a coroutine: " + detail::describe_current_exception()));
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

// A future that is ready at once.
template <class T>
Future<T> make_ready_future(Result<T> result) {
  auto state = std::make_shared<detail::FutureState<T>>();
  state->set(std::move(result));
  return Future<T>(state);
}

}  // namespace accel
