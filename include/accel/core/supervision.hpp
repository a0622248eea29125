/// @file
/// How an actor's supervisor answers its failures.
///
/// A failure is an error an actor's handler reported for a request (or an exception that escaped it, which
/// becomes `internal`). The caller of that request always gets the error as its reply; the supervisor then
/// decides, by the error's Code, what happens to the actor:
///
/// @code
///   resume   — keep the state, take the next request. Right for errors about the request itself.
///   restart  — destroy the state and build a new one from the actor's factory (on the actor's thread).
///              Requests queued behind the failure stay queued and run on the new state. Restarts are
///              budgeted (RestartBudget: at most N in a sliding window, with exponential back-off); an
///              exhausted budget escalates.
///   stop     — stop the actor; every queued request is answered with an error, later sends fail at once.
///   escalate — stop the actor and report the failure to its parent (the System's escalation handler),
///              which may decide more (e.g. stop the device that owns it).
/// @endcode
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

#include "accel/core/status.hpp"

namespace accel {

/// What a supervisor does with a failure: keep the state, rebuild it, stop the actor, or pass the failure up.
enum class Directive : std::uint8_t { resume, restart, stop, escalate };

/// The directive's name, for messages.
[[nodiscard]] std::string_view to_string(Directive directive) noexcept;

/// How many restarts an actor may have within a sliding window, and the back-off between them.
struct RestartBudget {
  int max_restarts = 5;                          ///< COUNT: restarts allowed within `window`
  std::chrono::milliseconds window{60'000};      ///< the sliding window
  std::chrono::milliseconds initial_backoff{1};  ///< delay before the first restart in the window
  std::chrono::milliseconds max_backoff{1'000};  ///< doubling stops here
};

/// Judges restarts against a RestartBudget: the sliding window and the doubling back-off. Not thread-safe.
class RestartTracker {
 public:
  /// A tracker of restarts under `budget`.
  explicit RestartTracker(RestartBudget budget) noexcept : budget_(budget) {}
  /// Records a restart at `now` and returns the delay to wait before it, or nothing when the budget is spent.
  [[nodiscard]] std::optional<std::chrono::milliseconds> admit(std::chrono::steady_clock::time_point now);
  /// "restart budget exhausted (N restarts in W ms)"
  [[nodiscard]] std::string describe_exhausted() const;

 private:
  RestartBudget budget_;
  std::deque<std::chrono::steady_clock::time_point> recent_;
};

/// Which directive answers each Code, and the restart budget.
class SupervisionPolicy {
 public:
  /// Defaults: `internal` restarts, `context_lost` stops (an in-process context cannot be rebuilt), every other
  /// code resumes, since it describes the request rather than the actor.
  SupervisionPolicy() noexcept;

  /// Answers failures of `code` with `directive`.
  SupervisionPolicy& on(Code code, Directive directive) noexcept {
    directives_[static_cast<std::size_t>(code)] = directive;
    return *this;
  }
  /// Replaces the restart budget.
  SupervisionPolicy& with_budget(RestartBudget restart_budget) noexcept {
    budget = restart_budget;
    return *this;
  }
  /// The directive that answers a failure of `code`.
  [[nodiscard]] Directive decide(Code code) const noexcept { return directives_[static_cast<std::size_t>(code)]; }

  RestartBudget budget;  ///< how often restart may be chosen before the actor stops

 private:
  std::array<Directive, kCodeCount> directives_{};
};

}  // namespace accel
