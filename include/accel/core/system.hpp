/// @file
/// accel::System — owns every actor it spawned and ends them in order.
///
/// Destroying a System (or calling shutdown) stops every actor: with ShutdownMode::drain each finishes what is
/// queued, with ShutdownMode::fail_pending each answers what is queued with `cancelled`. Either way every
/// pending request is answered and every actor thread is joined before shutdown() returns.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "accel/core/actor.hpp"

namespace accel {

/// Owns every actor it spawned and ends them in order (see the file's description).
class System {
 public:
  System() = default;
  System(const System&) = delete;
  System& operator=(const System&) = delete;
  ~System() { shutdown(ShutdownMode::drain); }

  /// Starts an actor whose state `factory` builds on the actor's own thread (again on every restart). Returns
  /// the factory's error if the first build fails; the actor is then not started.
  template <class P>
  Result<ActorRef<P>> spawn(typename ActorCell<P>::Factory factory, ActorOptions options = {}) {
    auto cell = std::make_shared<ActorCell<P>>(
        std::move(factory), std::move(options),
        [this](const std::string& actor, const Status& failure) { report_escalation(actor, failure); });
    {
      std::lock_guard lock(mutex_);
      if (shut_down_) return failed_precondition("spawn('" + cell->name() + "') on a system that has shut down");
    }
    if (Status started = cell->start(); !started.ok()) {
      cell->join();
      return started.with_context("starting actor '" + cell->name() + "'");
    }
    std::lock_guard lock(mutex_);
    actors_.push_back(cell);
    return ActorRef<P>(std::move(cell));
  }

  /// Stops every actor (see the file comment) and joins their threads. Idempotent.
  void shutdown(ShutdownMode mode = ShutdownMode::drain);

  /// Stops these actors only, as shutdown(fail_pending) would: what they have queued is answered `cancelled`
  /// naming `reason`, later sends fail, and the System forgets them. Returns at once; a thread of the System's
  /// waits for them to end and then runs `after`, so this may be called on one of the actors' own threads (in a
  /// continuation they run). shutdown() waits for that thread too.
  template <class P>
  void stop(const std::vector<ActorRef<P>>& actors, Status reason, std::function<void()> after) {
    std::vector<std::shared_ptr<ActorCellBase>> cells;
    cells.reserve(actors.size());
    for (const ActorRef<P>& actor : actors) {
      if (actor.cell_) cells.push_back(actor.cell_);
    }
    stop_cells(std::move(cells), std::move(reason), std::move(after));
  }

  /// Expires when the System is destroyed: what outlives it (a Device) can tell that its actors are gone.
  [[nodiscard]] std::weak_ptr<const void> alive() const noexcept { return alive_; }

  /// Receives escalated failures; the default logs them.
  void set_escalation_handler(EscalationHandler handler);

  /// Actors spawned and not yet stopped.
  [[nodiscard]] std::size_t actor_count() const;

 private:
  /// A thread that waits for stopped actors; `done` once it has nothing left to do but end.
  struct Stopper {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };

  void report_escalation(const std::string& actor, const Status& failure);
  void stop_cells(std::vector<std::shared_ptr<ActorCellBase>> cells, Status reason, std::function<void()> after);

  mutable std::mutex mutex_;
  bool shut_down_ = false;
  std::vector<std::shared_ptr<ActorCellBase>> actors_;
  std::vector<Stopper> stoppers_;
  EscalationHandler escalation_handler_;
  std::shared_ptr<const void> alive_ = std::make_shared<int>(0);
};

}  // namespace accel
