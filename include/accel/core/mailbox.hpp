/// @file
/// accel::Mailbox<T> — the bounded multi-producer, single-consumer queue in front of every actor.
///
/// Overflow policy (MailboxOptions::overflow), chosen per actor and always visible to the sender:
///   reject — a push into a full mailbox fails at once with `resource_exhausted` ("mailbox of 'cpu:0' is full
///            (capacity 1024)"); the request is not queued and its future carries that error.
///   block  — the sender waits until there is room. try_push() never blocks whatever the policy, for callers
///            that must not (destructors, continuations running on an actor thread).
/// A push into a closed mailbox fails with `cancelled`.
///
/// Note [Mailbox wake-ups]
/// The queue is Vyukov's bounded ring: a slot's sequence number says whether it is free or full, so neither
/// push nor pop takes a lock. A consumer that found nothing spins for MailboxOptions::spin, then announces
/// `consumer_sleeping_` and checks once more before it sleeps; a producer publishes its item and then reads
/// `consumer_sleeping_`. Both sides make their write and their read sequentially consistent (the slot's
/// sequence number on one side, the sleeping flag on the other; no fences, which ThreadSanitizer cannot
/// check), so at least one of them sees the other: either the consumer finds the item, or the producer sees the
/// sleeper and wakes it (under the consumer's mutex, so the wake-up cannot fall between the check and the sleep).
///
/// Producers blocked on a full mailbox use the mirror image of that handshake: a producer counts itself in
/// `blocked_producers_` and then looks for room, a pop publishes `dequeue_position_` and then reads the count, so
/// either the producer sees the room or the pop sees the producer. A pop that sees blocked producers wakes one,
/// and only if no wake-up is on its way already (`wake_up_in_flight_`): waking every blocked producer on every pop
/// buried the consumer under wake-ups fighting for the lock and the cores (64 producers on a full mailbox of
/// 1024), and even one wake-up per pop costs a system call and a context switch per item. The producer that gets
/// in after waking passes a wake-up on while room and blocked producers are left, so a burst of pops wakes
/// producers one after another, and each usually fills several slots before it blocks again. A wake-up is sent
/// under `space_mutex_` and only while a producer is counted; a producer holds that mutex from counting itself
/// until it sleeps, and clears the in-flight flag whenever it wakes before it looks for room again. So the flag
/// is never left set with nobody on the way to clear it, and no room goes unnoticed while a producer sleeps.
/// close() wakes every blocked producer. `active_producers_` lets close() wait out pushes that were already past
/// their closed check, so nothing is queued after the final drain.
#pragma once

#include <atomic>
#include <bit>
#include <chrono>
#include <concepts>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "accel/core/future.hpp"
#include "accel/core/status.hpp"
#include "accel/core/waiting.hpp"

namespace accel {

/// What a push into a full mailbox does (see the file's description): fail at once, or wait for room.
enum class Overflow : std::uint8_t { reject, block };

/// What a waiting consumer's actor does while its mailbox is empty (Mailbox::pop_wait): while `owes_replies()` holds
/// (deferred replies not yet given) the consumer stays awake past its spin; `look()` on every look lets an actor that
/// watches its own deferred work answer what has finished, with no other thread between the work and its caller;
/// `hand_over()`, once as the wait ends (an item came, a wake-up, or the consumer is about to sleep), gives what it
/// still watches to a thread that answers it while this one is busy or asleep.
template <class Idle>
concept IdleConsumer = requires(Idle& idle) {
  { idle.owes_replies() } -> std::convertible_to<bool>;
  idle.look();
  idle.hand_over();
};

/// An IdleConsumer that watches nothing itself: `owes_replies` alone keeps it awake.
template <class OwesReplies>
struct OnlyOwesReplies {
  OwesReplies owes;  ///< whether the consumer's actor still owes replies
  /// What `owes` says.
  bool owes_replies() { return owes(); }
  /// Nothing: the actor watches no work itself.
  void look() noexcept {}
  /// Nothing: the actor has nothing to give.
  void hand_over() noexcept {}
};

/// How big a mailbox is, what a push into a full one does, and how its idle consumer waits.
struct MailboxOptions {
  std::size_t capacity = 4096;           ///< rounded up to a power of two
  Overflow overflow = Overflow::reject;  ///< what a push into a full mailbox does
  /// How long an idle consumer spins before it sleeps. Spinning keeps the request round trip near the cost
  /// of a cache-line transfer; sleeping frees the core. Zero sleeps at once.
  std::chrono::microseconds spin{50};
  /// How long an idle consumer whose actor still owes replies (GPU work in flight) keeps looking, yielding the
  /// core between looks, before it sleeps. The caller waiting on that work usually sends its next request as
  /// soon as it is answered; a sleeping consumer would add its wake-up (tens of µs on a virtual machine) to that
  /// request. Past 5 ms the wake-up is under 1 % of the wait, so the core is not held longer.
  std::chrono::microseconds stay_awake{5000};
};

/// The bounded multi-producer, single-consumer queue in front of every actor (see the file's description).
template <class T>
class Mailbox {
 public:
  /// An empty mailbox; `owner` names it in errors ("mailbox of 'cpu:0' is full").
  explicit Mailbox(MailboxOptions options, std::string owner = "actor")
      : options_(options),
        capacity_(std::bit_ceil(std::max<std::size_t>(options.capacity, 2))),
        mask_(capacity_ - 1),
        cells_(new Cell[capacity_]),
        owner_(std::move(owner)) {
    for (std::size_t i = 0; i < capacity_; ++i) cells_[i].sequence.store(i, std::memory_order_relaxed);
  }
  Mailbox(const Mailbox&) = delete;
  Mailbox& operator=(const Mailbox&) = delete;
  ~Mailbox() {
    while (try_pop()) {
    }
  }

  // -- producer side (any thread) -------------------------------------------------
  /// Moves `item` in on success; leaves it untouched on failure so the caller can answer it.
  Status push(T& item) { return push_impl(item, options_.overflow == Overflow::block); }
  /// Like push(), but never blocks, whatever the overflow policy.
  Status try_push(T& item) { return push_impl(item, false); }

  // -- consumer side (the owning actor's thread only) -----------------------------
  /// The next item, if there is one; never waits.
  std::optional<T> try_pop() {
    const std::size_t position = dequeue_position_.load(std::memory_order_relaxed);
    Cell& cell = cells_[position & mask_];
    const std::size_t sequence = cell.sequence.load(std::memory_order_seq_cst);
    if (static_cast<std::ptrdiff_t>(sequence - (position + 1)) < 0) return std::nullopt;
    T* slot = std::launder(reinterpret_cast<T*>(cell.storage));
    std::optional<T> item(std::move(*slot));
    slot->~T();
    cell.sequence.store(position + capacity_, std::memory_order_release);
    dequeue_position_.store(position + 1, std::memory_order_seq_cst);
    if (blocked_producers_.load(std::memory_order_seq_cst) > 0) wake_one_producer();
    return item;
  }

  /// The next item, left in the queue, if there is one; never waits. Valid until the next pop.
  T* peek() noexcept {
    const std::size_t position = dequeue_position_.load(std::memory_order_relaxed);
    Cell& cell = cells_[position & mask_];
    const std::size_t sequence = cell.sequence.load(std::memory_order_acquire);
    if (static_cast<std::ptrdiff_t>(sequence - (position + 1)) < 0) return nullptr;
    return std::launder(reinterpret_cast<T*>(cell.storage));
  }

  /// Waits for an item until `deadline` or until wake() is called; returns nothing then. While `idle.owes_replies()`
  /// holds, the consumer stays awake (MailboxOptions::stay_awake) past its spin, yielding between looks. It calls
  /// `idle.look()` on every look, and `idle.hand_over()` once as the wait ends, before it sleeps or returns
  /// (IdleConsumer).
  template <IdleConsumer Idle>
  std::optional<T> pop_wait(std::chrono::steady_clock::time_point deadline, Idle& idle) {
    const auto start = std::chrono::steady_clock::now();
    const auto awake_until = std::min(deadline, start + options_.stay_awake);
    auto spin_until = std::min(deadline, start + options_.spin);
    bool yielding = false;
    for (unsigned i = 1;; ++i) {
      if (auto item = try_pop()) {
        idle.hand_over();
        return item;
      }
      if (wake_requested_.exchange(false, std::memory_order_acq_rel)) {
        idle.hand_over();
        return std::nullopt;
      }
      idle.look();
      if (yielding) {
        std::this_thread::yield();
      } else {
        detail::cpu_relax();
        if (i % 64 != 0) continue;
      }
      const auto now = std::chrono::steady_clock::now();
      if (now < spin_until) continue;
      if (now >= awake_until || !idle.owes_replies()) break;
      // Looks on for `spin` after the last reply is given, like after a request.
      spin_until = std::min(awake_until, now + options_.spin);
      yielding = true;
    }
    idle.hand_over();
    std::unique_lock lock(consumer_mutex_);
    consumer_sleeping_.store(true, std::memory_order_seq_cst);
    while (true) {
      if (auto item = try_pop()) {
        consumer_sleeping_.store(false, std::memory_order_relaxed);
        return item;
      }
      if (wake_requested_.exchange(false, std::memory_order_acq_rel) ||
          consumer_cv_.wait_until(lock, deadline) == std::cv_status::timeout) {
        consumer_sleeping_.store(false, std::memory_order_relaxed);
        return try_pop();
      }
    }
  }

  /// The same wait for a consumer whose actor answers nothing itself: `owes_replies()` alone keeps it awake.
  template <std::predicate OwesReplies>
  std::optional<T> pop_wait(std::chrono::steady_clock::time_point deadline, OwesReplies&& owes_replies) {
    OnlyOwesReplies<OwesReplies&> idle{owes_replies};
    return pop_wait(deadline, idle);
  }

  /// Waits for an item until `deadline` or until wake() is called; returns nothing then.
  std::optional<T> pop_wait(
      std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
    return pop_wait(deadline, [] { return false; });
  }

  /// Makes a pending or the next pop_wait() return; used to deliver stop requests.
  void wake() {
    wake_requested_.store(true, std::memory_order_seq_cst);
    std::lock_guard lock(consumer_mutex_);
    consumer_cv_.notify_one();
  }

  /// No push succeeds after close() returns, and every push that succeeded before is visible to try_pop().
  void close() {
    closed_.store(true, std::memory_order_seq_cst);
    {
      std::lock_guard lock(space_mutex_);
      space_cv_.notify_all();
    }
    while (active_producers_.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
  }

  /// Whether close() was called.
  [[nodiscard]] bool closed() const noexcept { return closed_.load(std::memory_order_acquire); }
  /// The capacity, rounded up to a power of two.
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  /// Items queued now (approximate while producers are busy).
  [[nodiscard]] std::size_t size_approx() const noexcept {
    return enqueue_position_.load(std::memory_order_relaxed) - dequeue_position_.load(std::memory_order_relaxed);
  }
  /// The options it was made with.
  [[nodiscard]] const MailboxOptions& options() const noexcept { return options_; }
  /// Producers waiting for room now, or just woken and not yet back: for tests and metrics.
  [[nodiscard]] int blocked_producers() const noexcept { return blocked_producers_.load(std::memory_order_acquire); }
  /// How often a producer blocked for room has woken up so far: for tests and metrics.
  [[nodiscard]] std::uint64_t producer_wake_ups() const noexcept {
    return producer_wake_ups_.load(std::memory_order_relaxed);
  }

 private:
  struct alignas(64) Cell {
    std::atomic<std::size_t> sequence{0};
    alignas(T) unsigned char storage[sizeof(T)];
  };

  Status push_impl(T& item, bool may_block) {
    active_producers_.fetch_add(1, std::memory_order_seq_cst);
    Status status = enqueue_or_wait(item, may_block);
    active_producers_.fetch_sub(1, std::memory_order_seq_cst);
    if (status.ok()) {
      if (consumer_sleeping_.load(std::memory_order_seq_cst)) {
        std::lock_guard lock(consumer_mutex_);
        consumer_cv_.notify_one();
      }
    }
    return status;
  }

  Status enqueue_or_wait(T& item, bool may_block) {
    bool waited = false;
    while (true) {
      if (closed_.load(std::memory_order_seq_cst)) return cancelled("mailbox of '" + owner_ + "' is closed");
      if (try_enqueue(item)) {
        if (waited) pass_wake_up_on();
        return Status();
      }
      if (!may_block) {
        return resource_exhausted("mailbox of '" + owner_ + "' is full (capacity " + std::to_string(capacity_) +
                                  ", overflow policy: reject)");
      }
      wait_for_room();
      waited = true;
    }
  }

  void wait_for_room() {
    std::unique_lock lock(space_mutex_);
    blocked_producers_.fetch_add(1, std::memory_order_seq_cst);
    while (!closed_.load(std::memory_order_seq_cst) && !has_room()) {
      space_cv_.wait(lock);
      producer_wake_ups_.fetch_add(1, std::memory_order_relaxed);
      wake_up_in_flight_.store(false, std::memory_order_seq_cst);
    }
    blocked_producers_.fetch_sub(1, std::memory_order_seq_cst);
  }

  void pass_wake_up_on() {
    if (blocked_producers_.load(std::memory_order_seq_cst) > 0 && has_room()) wake_one_producer();
  }

  void wake_one_producer() {
    if (wake_up_in_flight_.load(std::memory_order_seq_cst)) return;
    std::lock_guard lock(space_mutex_);
    if (wake_up_in_flight_.load(std::memory_order_relaxed) || blocked_producers_.load(std::memory_order_relaxed) == 0)
      return;
    wake_up_in_flight_.store(true, std::memory_order_seq_cst);
    space_cv_.notify_one();
  }

  bool has_room() const noexcept {
    return enqueue_position_.load(std::memory_order_seq_cst) - dequeue_position_.load(std::memory_order_seq_cst) <
           capacity_;
  }

  bool try_enqueue(T& item) {
    std::size_t position = enqueue_position_.load(std::memory_order_relaxed);
    while (true) {
      Cell& cell = cells_[position & mask_];
      const std::size_t sequence = cell.sequence.load(std::memory_order_acquire);
      const auto difference = static_cast<std::ptrdiff_t>(sequence - position);
      if (difference == 0) {
        if (enqueue_position_.compare_exchange_weak(position, position + 1, std::memory_order_relaxed)) {
          ::new (static_cast<void*>(cell.storage)) T(std::move(item));
          cell.sequence.store(position + 1, std::memory_order_seq_cst);
          return true;
        }
      } else if (difference < 0) {
        return false;
      } else {
        position = enqueue_position_.load(std::memory_order_relaxed);
      }
    }
  }

  const MailboxOptions options_;
  const std::size_t capacity_;
  const std::size_t mask_;
  std::unique_ptr<Cell[]> cells_;
  const std::string owner_;

  alignas(64) std::atomic<std::size_t> enqueue_position_{0};
  alignas(64) std::atomic<std::size_t> dequeue_position_{0};
  alignas(64) std::atomic<bool> consumer_sleeping_{false};
  std::atomic<bool> wake_requested_{false};
  std::atomic<bool> closed_{false};
  std::atomic<int> active_producers_{0};
  std::atomic<int> blocked_producers_{0};
  std::atomic<bool> wake_up_in_flight_{false};
  std::atomic<std::uint64_t> producer_wake_ups_{0};

  std::mutex consumer_mutex_;
  std::condition_variable consumer_cv_;
  std::mutex space_mutex_;
  std::condition_variable space_cv_;
};

}  // namespace accel
