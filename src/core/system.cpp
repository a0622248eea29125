#include "accel/core/system.hpp"

#include <cstdio>

namespace accel {

void System::shutdown(ShutdownMode mode) {
  std::vector<std::shared_ptr<ActorCellBase>> actors;
  {
    std::lock_guard lock(mutex_);
    shut_down_ = true;
    actors.swap(actors_);
  }
  // Newest first: actors spawned later may depend on earlier ones (a library actor on its device).
  for (auto it = actors.rbegin(); it != actors.rend(); ++it) (*it)->request_stop(mode);
  for (auto it = actors.rbegin(); it != actors.rend(); ++it) (*it)->join();
}

void System::set_escalation_handler(EscalationHandler handler) {
  std::lock_guard lock(mutex_);
  escalation_handler_ = std::move(handler);
}

std::size_t System::actor_count() const {
  std::lock_guard lock(mutex_);
  return actors_.size();
}

void System::report_escalation(const std::string& actor, const Status& failure) {
  EscalationHandler handler;
  {
    std::lock_guard lock(mutex_);
    handler = escalation_handler_;
  }
  if (handler) {
    handler(actor, failure);
  } else {
    std::fprintf(stderr, "accel: actor '%s' escalated: %s\n", actor.c_str(), failure.to_string().c_str());
  }
}

}  // namespace accel
