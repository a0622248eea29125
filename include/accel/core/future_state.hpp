/// @file
/// accel::detail::FutureState<T>: what a Future and its Promise share (accel/core/future.hpp says how futures
/// behave): the result, the one continuation or awaiting coroutine, and the waiters, spinning for a while
/// (accel/core/waiting.hpp) before they sleep on a condition variable.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <coroutine>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "accel/core/result.hpp"
#include "accel/core/waiting.hpp"

namespace accel::detail {

std::string describe_current_exception();

/// Resumes `first`, then each awaiter that a coroutine finishing meanwhile handed over, one after the other in
/// this frame (Note [Symmetric transfer]).
void resume_chain(std::coroutine_handle<> first);
/// What a finishing coroutine's final suspend point transfers to, given its awaiter (null if none): nothing when
/// a resume_chain on this thread takes the awaiter over, else the awaiter itself.
std::coroutine_handle<> hand_over(std::coroutine_handle<> awaiter) noexcept;

template <class T>
class FutureState {
 public:
  // -- producer side -----------------------------------------------------------
  /// Stores the result, runs the then() continuation and resumes the awaiting coroutine, if any. Only the
  /// first call has an effect.
  void set(Result<T> result) {
    if (std::coroutine_handle<> awaiter = complete(std::move(result))) resume_chain(awaiter);
  }

  /// Like set(), but returns the awaiting coroutine (null if none) instead of resuming it, for a finishing
  /// coroutine to transfer to (Note [Symmetric transfer]).
  [[nodiscard]] std::coroutine_handle<> complete(Result<T> result) {
    std::function<void(Result<T>)> continuation;
    std::coroutine_handle<> awaiter;
    bool notify = false;
    {
      std::lock_guard lock(mutex_);
      if (result_.has_value() || consumed_) return nullptr;
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
    return awaiter;
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

  /// Precondition: ready() and no continuation took the result.
  Result<T> take() {
    std::lock_guard lock(mutex_);
    consumed_ = true;
    return std::move(*result_);
  }

  /// Runs `continuation` with the result once it is there: now, if it already is.
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

  /// Returns false (do not suspend) if the result is already there. The check and the registration share the
  /// lock with complete(), so a result that arrives after await_ready() looked is never missed: either it is
  /// seen here and the awaiter goes on at once on its own thread, or complete() finds the awaiter and resumes it.
  bool suspend(std::coroutine_handle<> awaiter) {
    std::lock_guard lock(mutex_);
    if (result_.has_value()) return false;
    awaiter_ = awaiter;
    return true;
  }

 private:
  // True once ready within `budget`; false at once when active_waiter_limit() waiters already spin (a future already
  // ready takes none of their places), and after the spin while a CPU device is open (CoreClaim).
  bool spin_until_ready(std::chrono::nanoseconds budget) {
    if (ready_.load(std::memory_order_acquire)) return true;
    const ActiveWait active;
    if (!active.held()) return false;
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
      if (now >= spin_until) {
        if (cores_claimed()) return false;
        std::this_thread::yield();
      }
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

}  // namespace accel::detail
