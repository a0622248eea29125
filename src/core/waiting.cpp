#include "accel/core/waiting.hpp"

#include <algorithm>
#include <atomic>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace accel::detail {

void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

namespace {
std::atomic<unsigned> g_active_waiters{0};
std::atomic<unsigned> g_core_claims{0};
}  // namespace

CoreClaim::CoreClaim() noexcept { g_core_claims.fetch_add(1, std::memory_order_relaxed); }
CoreClaim::~CoreClaim() { g_core_claims.fetch_sub(1, std::memory_order_relaxed); }
bool cores_claimed() noexcept { return g_core_claims.load(std::memory_order_relaxed) != 0; }

unsigned active_waiter_limit() noexcept {
  static const unsigned limit = std::max(1u, std::thread::hardware_concurrency() / 4);
  return limit;
}

unsigned active_waiters() noexcept { return g_active_waiters.load(std::memory_order_relaxed); }

ActiveWait::ActiveWait() noexcept : held_(false) {
  const unsigned limit = active_waiter_limit();
  unsigned now = g_active_waiters.load(std::memory_order_relaxed);
  while (now < limit)
    if (g_active_waiters.compare_exchange_weak(now, now + 1, std::memory_order_relaxed)) {
      held_ = true;
      return;
    }
}

ActiveWait::~ActiveWait() {
  if (held_) g_active_waiters.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace accel::detail
