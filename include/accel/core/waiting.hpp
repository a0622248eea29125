/// @file
/// How a thread of accel waits for another: spin, then yield, then sleep, and how many may spin at once. Futures'
/// waiters (future.hpp) and actors' mailboxes (mailbox.hpp) wait this way.
#pragma once

#include <chrono>

namespace accel::detail {

/// How a waiter waits for the ready flag before it sleeps on a condition variable: it spins for kFutureSpin, then
/// yields the processor between looks until kFutureYield has passed (not while a CPU device is open: CoreClaim).
/// Replies from a busy actor arrive within a few µs, GPU replies within tens of µs to milliseconds, and waking a
/// sleeping thread costs 10-40 µs on the GPU test machine (a virtual machine): the yielding phase avoids that and
/// still hands the core to any thread that needs it. Past 5 ms the wake-up is under 1 % of the wait
/// (docs/PERFORMANCE.md, section 24).
inline constexpr std::chrono::microseconds kFutureSpin{20};
inline constexpr std::chrono::microseconds kFutureYield{5000};

/// At most this many waiters of the process spin or yield at once (a quarter of its processors, at least one);
/// the others sleep at once. A server thread per connection waiting for its batch made 64 waiters yielding on 16
/// cores: every core busy, and the threads the batch itself needed (the device's actor, the completion thread)
/// waiting behind them, which halved a server's throughput in some of its starts (docs/PERFORMANCE.md, section 67).
unsigned active_waiter_limit() noexcept;
/// Waiters spinning or yielding now (for tests and diagnostics).
unsigned active_waiters() noexcept;

/// One of the active_waiter_limit() places, if one was free when it was made; given back when it goes.
class ActiveWait {
 public:
  ActiveWait() noexcept;
  ~ActiveWait();
  ActiveWait(const ActiveWait&) = delete;
  ActiveWait& operator=(const ActiveWait&) = delete;
  [[nodiscard]] bool held() const noexcept { return held_; }

 private:
  bool held_;
};

/// Held by each open CPU device, in process or isolated (whose worker holds its own), whose requests' threads
/// (OpenMP's, oneDNN's, OpenBLAS's) use every core. While one is held, a waiter past its spin sleeps rather than
/// yields (a future's, and an isolated device's channel's): a yielding thread stays runnable, and
/// on a 2-core machine one made a twentieth of the CPU device's one-text queries take 18-24 ms against a 2.2-2.6 ms
/// median (docs/PERFORMANCE.md, section 101; sleeping only while a request ran was not enough). Requests shorter
/// than the spin are still answered to a spinning waiter.
class CoreClaim {
 public:
  CoreClaim() noexcept;
  ~CoreClaim();
  CoreClaim(const CoreClaim&) = delete;
  CoreClaim& operator=(const CoreClaim&) = delete;
};
/// Whether a CoreClaim is held now anywhere in the process.
bool cores_claimed() noexcept;

/// A hint to the processor that this thread is spinning (x86 pause, AArch64 yield).
void cpu_relax() noexcept;

}  // namespace accel::detail
