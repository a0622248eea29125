// The shared-memory channel between an isolated device (the client) and its worker process.
//
// One memfd holds, page-aligned one after the other:
//   ChannelHeader   what the client tells each new worker (its WorkerSetup), the worker's state and heartbeat, and
//                   the control words of both rings;
//   request ring    fixed slots, client → worker;
//   reply ring      fixed slots, worker → client;
//   staging         host data of copies (the client's allocator hands out ranges; a CUDA worker pins it).
// The memfd has no name in the file system, so nothing is left behind when both processes are gone.
//
// Each ring has one producer and one consumer at a time (producers serialise on their side with a mutex).
// Positions only grow; slot = position % slots. A consumer spins for a while, then sleeps on an eventfd; the
// producer writes the eventfd only when the consumer said it sleeps (a Dekker-style handshake with seq_cst
// operations on both sides, so no wake-up is lost).
//
// The rings outlive workers: when a worker dies, the request ring's tail says exactly which requests it took
// (those are answered `context_lost`); the rest stay in place and the next worker starts from there.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>

#include "accel/core/mailbox.hpp"
#include "accel/core/result.hpp"
#include "accel/core/waiting.hpp"
#include "accel/device/device.hpp"

namespace accel::device::isolated {

inline constexpr std::uint32_t kChannelMagic = 0x4143434cu;  // "ACCL"
inline constexpr std::uint32_t kChannelVersion = 2;
inline constexpr std::size_t kRequestSlots = 1024;
inline constexpr std::size_t kRequestSlotBytes = 512;
inline constexpr std::size_t kReplySlots = 1024;
inline constexpr std::size_t kReplySlotBytes = 4096;  // DeviceInfo, see kValueScratch

// The worker exits with this code after a sticky fault poisoned its context.
inline constexpr int kExitContextLost = 75;

// Everything a new worker needs to build the device's context: its WorkerSetup (device_options_codec.hpp),
// encoded with the byte codec.
inline constexpr std::size_t kWorkerSetupBytes = 8192;
struct WorkerSetupArea {
  std::uint32_t bytes = 0;
  std::byte encoding[kWorkerSetupBytes] = {};
};

enum class WorkerState : std::uint32_t { starting, ready, failed };

// The header's part for one worker process. There are two: the serving worker's and, with
// WorkerOptions::standby, a standby's that has built its context and waits to be promoted.
struct WorkerSlot {
  std::atomic<WorkerState> state{WorkerState::starting};
  std::atomic<std::uint32_t> promoted{0};  // set by the client: serve the rings from now on
  std::atomic<std::uint32_t> stop_requested{0};
  std::atomic<std::int64_t> heartbeat_ns{0};  // CLOCK_MONOTONIC, the same clock in both processes
  std::uint32_t epoch_base = 0;               // this worker's context epochs start after this one
  std::uint8_t start_error_code = 0;          // why the worker could not start (state == failed)
  char start_error[1024] = {};
};
inline constexpr int kWorkerSlots = 2;

struct RingControl {
  alignas(64) std::atomic<std::uint64_t> head{0};  // next position the producer writes
  alignas(64) std::atomic<std::uint64_t> tail{0};  // next position the consumer reads
  alignas(64) std::atomic<std::uint32_t> consumer_sleeping{0};
};

struct ChannelHeader {
  std::uint32_t magic = kChannelMagic;
  std::uint32_t version = kChannelVersion;
  WorkerSetupArea setup;
  WorkerSlot workers[kWorkerSlots];
  RingControl requests;
  RingControl replies;
};

// Each message starts with this; `bytes` of payload follow.
struct MessageHeader {
  std::uint64_t id = 0;  // the request's position in the request ring; a reply names its request
  std::uint32_t stream = 0;
  std::uint16_t tag = 0;
  std::uint16_t reserved = 0;
  std::uint32_t bytes = 0;
  std::uint32_t reserved2 = 0;
};

[[nodiscard]] std::int64_t monotonic_ns() noexcept;

// Why the worker of `slot` could not start, as it wrote there (state == failed). Never OK: a code that is not an
// error becomes `unavailable`, since an OK would send the client on without a worker (pid 0, which waitpid and
// kill take for the whole process group).
[[nodiscard]] Status start_failure(const WorkerSlot& slot);

// One direction of the channel. Each slot starts with its sequence word (position + 1 once written), so a
// consumer polling for the next message reads one cache line that also holds the message's start.
class Ring {
 public:
  static constexpr std::size_t kSequenceBytes = 8;

  Ring(RingControl& control, std::byte* slots, std::size_t slot_count, std::size_t slot_bytes, int wake_fd) noexcept
      : control_(&control), slots_(slots), slot_count_(slot_count), slot_bytes_(slot_bytes), wake_fd_(wake_fd) {}

  // Bytes a message may use in one slot.
  [[nodiscard]] std::size_t message_bytes() const noexcept { return slot_bytes_ - kSequenceBytes; }

  // -- producer (one at a time) ------------------------------------------------------
  // The message area of the next free slot, or null when the ring is full.
  [[nodiscard]] std::byte* try_claim() noexcept;
  [[nodiscard]] std::uint64_t next_position() const noexcept { return control_->head.load(std::memory_order_relaxed); }
  // Makes the claimed slot visible and wakes the consumer if it sleeps.
  void publish() noexcept;
  // Wakes the consumer if it sleeps, without a message (so that it starts spinning early).
  void nudge() noexcept;
  // For the consumer, once the producer's process is gone and before another produces: the head catches up with
  // what it published. A producer killed inside publish() (its slot's sequence written, the head not yet advanced)
  // leaves the head one behind the slots the consumer reads, and its successor would find the ring full for ever.
  void recover_producer() noexcept;
  // Makes the consumer's current or next wait return at once, asleep or not (to tell it to look at a flag).
  void wake() noexcept;

  // -- consumer (one at a time) ------------------------------------------------------
  // The message area of the oldest unread message, or null.
  [[nodiscard]] const std::byte* peek() const noexcept;
  void release() noexcept;  // done with the slot peek() returned
  [[nodiscard]] std::uint64_t consumed() const noexcept { return control_->tail.load(std::memory_order_acquire); }
  [[nodiscard]] bool empty() const noexcept { return peek() == nullptr; }
  // Spins up to `spin` for a message; then sleeps on the eventfd (and on `other_fd` if >= 0) for at most
  // `timeout`. Returns whether a message is there.
  bool wait(std::chrono::nanoseconds spin, std::chrono::milliseconds timeout, int other_fd = -1) noexcept {
    const auto owes_nothing = [] { return false; };
    OnlyOwesReplies<decltype(owes_nothing)> idle{owes_nothing};
    return wait(spin, timeout, idle, other_fd);
  }
  // The same wait for a consumer that watches work of its own (accel/core/mailbox.hpp's IdleConsumer, as an actor's
  // mailbox does): `idle.look()` on every poll, and `idle.hand_over()` once, when a message comes or before it sleeps.
  // The ring keeps its own spin: `owes_replies` does not lengthen it.
  template <IdleConsumer Idle>
  bool wait(std::chrono::nanoseconds spin, std::chrono::milliseconds timeout, Idle& idle, int other_fd = -1);

 private:
  // Whether a spin that has lasted `spun` ns goes on (it yields the core past a while, or stops where a CPU device
  // has claimed the cores).
  [[nodiscard]] static bool keep_spinning(std::int64_t spun) noexcept;
  // The wait's second half: sleeps until a message, a wake-up or `timeout`; returns whether a message is there.
  bool sleep_for_message(std::chrono::milliseconds timeout, int other_fd) noexcept;

  [[nodiscard]] std::atomic<std::uint64_t>& sequence(std::uint64_t position) const noexcept {
    return *reinterpret_cast<std::atomic<std::uint64_t>*>(slots_ + (position % slot_count_) * slot_bytes_);
  }

  RingControl* control_;
  std::byte* slots_;
  std::size_t slot_count_;
  std::size_t slot_bytes_;
  int wake_fd_;
  std::uint64_t known_tail_ = 0;  // producer's last look at the tail: re-read only when the ring seems full
};

template <IdleConsumer Idle>
bool Ring::wait(std::chrono::nanoseconds spin, std::chrono::milliseconds timeout, Idle& idle, int other_fd) {
  // Reads the clock once per batch of polls: it may be a system call in a VM.
  const std::int64_t start = monotonic_ns();
  for (std::int64_t now = start; now - start < spin.count(); now = monotonic_ns()) {
    for (int poll = 0; poll < 64; ++poll) {
      if (!empty()) {
        idle.hand_over();
        return true;
      }
      idle.look();
      accel::detail::cpu_relax();
    }
    if (!keep_spinning(now - start)) break;
  }
  idle.hand_over();
  return sleep_for_message(timeout, other_fd);
}

// The mapped channel. The client creates it; a worker maps the memfd it inherited.
class Channel {
 public:
  static Result<Channel> create(const std::string& name, std::uint64_t staging_bytes);
  static Result<Channel> attach(int memfd, int worker_wake_fd, int client_wake_fd);

  Channel(Channel&& other) noexcept;
  Channel& operator=(Channel&&) = delete;
  Channel(const Channel&) = delete;
  ~Channel();

  [[nodiscard]] ChannelHeader& header() const noexcept { return *header_; }
  // Each side uses one ring as producer and the other as consumer, each from one thread at a time.
  [[nodiscard]] Ring& requests() noexcept { return requests_; }
  [[nodiscard]] Ring& replies() noexcept { return replies_; }
  [[nodiscard]] std::span<std::byte> staging() const noexcept { return staging_; }

  [[nodiscard]] int memfd() const noexcept { return memfd_; }
  [[nodiscard]] int worker_wake_fd() const noexcept { return worker_wake_fd_; }
  [[nodiscard]] int client_wake_fd() const noexcept { return client_wake_fd_; }

 private:
  Channel(int memfd, int worker_wake_fd, int client_wake_fd, void* base, std::size_t bytes);

  int memfd_ = -1;
  int worker_wake_fd_ = -1;  // the worker sleeps on it (request ring)
  int client_wake_fd_ = -1;  // the client sleeps on it (reply ring)
  void* base_ = nullptr;
  std::size_t bytes_ = 0;
  ChannelHeader* header_ = nullptr;
  std::span<std::byte> staging_;
  Ring requests_;
  Ring replies_;
};

}  // namespace accel::device::isolated
