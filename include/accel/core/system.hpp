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

namespace detail {
/// Everything a System owns, held by shared pointer: what outlives the System (a Device) keeps a weak one, so that
/// stopping actors or spawning one races the System's destruction safely instead of touching freed memory.
class SystemCore {
 public:
  SystemCore() = default;
  SystemCore(const SystemCore&) = delete;
  SystemCore& operator=(const SystemCore&) = delete;

  template <class P>
  Result<ActorRef<P>> spawn(typename ActorCell<P>::Factory factory, ActorOptions options) {
    // A raw pointer: every actor is joined (shutdown) before the System lets go of its core.
    auto cell = std::make_shared<ActorCell<P>>(
        std::move(factory), std::move(options),
        [this](const std::string& actor, const Status& failure) { report_escalation(actor, failure); });
    {
      std::lock_guard lock(mutex_);
      if (shut_down_) return refused_after_shutdown(cell->name());
    }
    if (Status started = cell->start(); !started.ok()) {
      cell->join();
      return started.with_context("starting actor '" + cell->name() + "'");
    }
    {
      std::lock_guard lock(mutex_);
      if (!shut_down_) {
        actors_.push_back(cell);
        return ActorRef<P>(std::move(cell));
      }
    }
    // A shutdown began while the actor started: it would never be stopped or joined.
    cell->request_stop(ShutdownMode::fail_pending);
    cell->join();
    return refused_after_shutdown(cell->name());
  }

  void shutdown(ShutdownMode mode);

  template <class P>
  void stop(const std::vector<ActorRef<P>>& actors, Status reason, std::function<void()> after) {
    std::vector<std::shared_ptr<ActorCellBase>> cells;
    cells.reserve(actors.size());
    for (const ActorRef<P>& actor : actors) {
      if (actor.cell_) cells.push_back(actor.cell_);
    }
    stop_cells(std::move(cells), std::move(reason), std::move(after));
  }

  void set_escalation_handler(EscalationHandler handler);
  [[nodiscard]] std::size_t actor_count() const;

 private:
  /// A thread that waits for stopped actors; `done` once it has nothing left to do but end.
  struct Stopper {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };

  void report_escalation(const std::string& actor, const Status& failure);
  /// A spawn's answer once the System has shut down.
  static Status refused_after_shutdown(const std::string& actor);
  void stop_cells(std::vector<std::shared_ptr<ActorCellBase>> cells, Status reason, std::function<void()> after);

  mutable std::mutex mutex_;
  bool shut_down_ = false;
  // Set once shutdown has joined every actor and every stopper: a later stop has nothing left to wait for.
  bool joined_ = false;
  std::vector<std::shared_ptr<ActorCellBase>> actors_;
  std::vector<Stopper> stoppers_;
  EscalationHandler escalation_handler_;
};
}  // namespace detail

/// Owns every actor it spawned and ends them in order (see the file's description).
class System {
 public:
  System() : core_(std::make_shared<detail::SystemCore>()) {}
  System(const System&) = delete;
  System& operator=(const System&) = delete;
  ~System() { core_->shutdown(ShutdownMode::drain); }

  /// Starts an actor whose state `factory` builds on the actor's own thread (again on every restart). Returns
  /// the factory's error if the first build fails; the actor is then not started.
  template <class P>
  Result<ActorRef<P>> spawn(typename ActorCell<P>::Factory factory, ActorOptions options = {}) {
    return core_->spawn<P>(std::move(factory), std::move(options));
  }

  /// Stops every actor (see the file comment) and joins their threads. Idempotent.
  void shutdown(ShutdownMode mode = ShutdownMode::drain) { core_->shutdown(mode); }

  /// Stops these actors only, as shutdown(fail_pending) would: what they have queued is answered `cancelled`
  /// naming `reason`, later sends fail, and the System forgets them. Returns at once; a thread of the System's
  /// waits for them to end and then runs `after`, so this may be called on one of the actors' own threads (in a
  /// continuation they run). shutdown() waits for that thread too; once it has returned, `after` runs at once.
  template <class P>
  void stop(const std::vector<ActorRef<P>>& actors, Status reason, std::function<void()> after) {
    core_->stop(actors, std::move(reason), std::move(after));
  }

  /// What outlives the System (a Device) holds to reach it: expires when the System is destroyed, and while
  /// locked keeps stop() and spawn() safe even against a destruction on another thread.
  [[nodiscard]] std::weak_ptr<detail::SystemCore> core() const noexcept { return core_; }

  /// Receives escalated failures; the default logs them.
  void set_escalation_handler(EscalationHandler handler) { core_->set_escalation_handler(std::move(handler)); }

  /// Actors spawned and not yet stopped.
  [[nodiscard]] std::size_t actor_count() const { return core_->actor_count(); }

 private:
  std::shared_ptr<detail::SystemCore> core_;
};

}  // namespace accel
