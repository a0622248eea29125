#include "accel/core/system.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>

namespace accel::detail {

void SystemCore::shutdown(ShutdownMode mode) {
  std::vector<std::shared_ptr<ActorCellBase>> actors;
  {
    std::lock_guard lock(mutex_);
    shut_down_ = true;
    actors.swap(actors_);
  }
  // Newest first: actors spawned later may depend on earlier ones (a library actor on its device).
  for (auto it = actors.rbegin(); it != actors.rend(); ++it) (*it)->request_stop(mode);
  for (auto it = actors.rbegin(); it != actors.rend(); ++it) (*it)->join();
  // Last, the threads waiting for actors stopped on their own; joining the actors may have started more.
  while (true) {
    std::vector<Stopper> stoppers;
    {
      std::lock_guard lock(mutex_);
      stoppers.swap(stoppers_);
      if (stoppers.empty()) {
        joined_ = true;
        break;
      }
    }
    for (Stopper& stopper : stoppers) stopper.thread.join();
  }
}

void SystemCore::stop_cells(std::vector<std::shared_ptr<ActorCellBase>> cells, Status reason,
                            std::function<void()> after) {
  for (const auto& cell : cells) cell->request_stop(ShutdownMode::fail_pending, reason);
  auto done = std::make_shared<std::atomic<bool>>(false);
  std::vector<Stopper> finished;
  {
    std::unique_lock lock(mutex_);
    if (joined_) {
      // Shutdown has joined every actor and stopper; a new stopper would never be joined.
      lock.unlock();
      cells.clear();
      if (after) after();
      return;
    }
    std::erase_if(actors_, [&](const std::shared_ptr<ActorCellBase>& actor) {
      return std::find(cells.begin(), cells.end(), actor) != cells.end();
    });
    // Stoppers that are done are joined here, so that a long-lived System does not collect them.
    const auto first_done = std::partition(stoppers_.begin(), stoppers_.end(), [](const Stopper& stopper) {
      return !stopper.done->load(std::memory_order_acquire);
    });
    std::move(first_done, stoppers_.end(), std::back_inserter(finished));
    stoppers_.erase(first_done, stoppers_.end());
    stoppers_.push_back(
        Stopper{.thread = std::thread([cells = std::move(cells), after = std::move(after), done]() mutable {
                  for (const auto& cell : cells) cell->wait_stopped();
                  cells.clear();
                  if (after) after();
                  done->store(true, std::memory_order_release);
                }),
                .done = done});
  }
  for (Stopper& stopper : finished) stopper.thread.join();
}

void SystemCore::set_escalation_handler(EscalationHandler handler) {
  std::lock_guard lock(mutex_);
  escalation_handler_ = std::move(handler);
}

std::size_t SystemCore::actor_count() const {
  std::lock_guard lock(mutex_);
  return actors_.size();
}

Status SystemCore::refused_after_shutdown(const std::string& actor) {
  return failed_precondition("spawn('" + actor + "') on a system that has shut down");
}

void SystemCore::report_escalation(const std::string& actor, const Status& failure) {
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

}  // namespace accel::detail
