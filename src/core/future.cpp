#include "accel/core/future.hpp"

#include <exception>
#include <stdexcept>
#include <utility>

namespace accel::detail {

namespace {
// The slot of the innermost resume_chain running on this thread, where a finishing coroutine leaves its awaiter;
// null when none runs.
thread_local std::coroutine_handle<>* t_handed_over = nullptr;
}  // namespace

void resume_chain(std::coroutine_handle<> first) {
  std::coroutine_handle<> next = first;
  std::coroutine_handle<>* const enclosing = std::exchange(t_handed_over, &next);
  // Restores the enclosing loop's slot even if a coroutine of another library lets an exception out of resume().
  struct Restore {
    std::coroutine_handle<>* slot;
    ~Restore() { t_handed_over = slot; }
  } restore{enclosing};
  while (next) std::exchange(next, nullptr).resume();
}

std::coroutine_handle<> hand_over(std::coroutine_handle<> awaiter) noexcept {
  if (!awaiter) return std::noop_coroutine();
  // One coroutine finishes per resume() of the loop, so the slot is empty; the check keeps a second one (which
  // only an awaitable of another library could bring about) from overwriting the first.
  if (t_handed_over != nullptr && !*t_handed_over) {
    *t_handed_over = awaiter;
    return std::noop_coroutine();
  }
  return awaiter;
}

std::string describe_current_exception() {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception not derived from std::exception";
  }
}

}  // namespace accel::detail
