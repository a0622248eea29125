#include "accel/core/supervision.hpp"

#include <algorithm>

namespace accel {

std::string_view to_string(Directive directive) noexcept {
  switch (directive) {
    case Directive::resume: return "resume";
    case Directive::restart: return "restart";
    case Directive::stop: return "stop";
    case Directive::escalate: return "escalate";
  }
  return "unknown_directive";
}

std::optional<std::chrono::milliseconds> RestartTracker::admit(std::chrono::steady_clock::time_point now) {
  while (!recent_.empty() && now - recent_.front() > budget_.window) recent_.pop_front();
  if (static_cast<int>(recent_.size()) >= budget_.max_restarts) return std::nullopt;
  auto backoff = budget_.initial_backoff * (1LL << std::min<std::size_t>(recent_.size(), 30));
  recent_.push_back(now);
  return std::min<std::chrono::milliseconds>(backoff, budget_.max_backoff);
}

std::string RestartTracker::describe_exhausted() const {
  return "restart budget exhausted (" + std::to_string(budget_.max_restarts) + " restarts in " +
         std::to_string(budget_.window.count()) + " ms)";
}

SupervisionPolicy::SupervisionPolicy() noexcept {
  directives_.fill(Directive::resume);
  on(Code::internal, Directive::restart);
  on(Code::context_lost, Directive::stop);
}

}  // namespace accel
