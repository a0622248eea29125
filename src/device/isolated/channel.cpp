#include "device/isolated/channel.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <string>
#include <thread>

#include "accel/core/waiting.hpp"

namespace accel::device::isolated {
namespace {

constexpr std::size_t kPage = 4096;

constexpr std::size_t round_up(std::size_t bytes) { return (bytes + kPage - 1) / kPage * kPage; }

struct Layout {
  std::size_t request_slots = round_up(sizeof(ChannelHeader));
  std::size_t reply_slots = request_slots + round_up(kRequestSlots * kRequestSlotBytes);
  std::size_t staging = reply_slots + round_up(kReplySlots * kReplySlotBytes);
};

Status os_error(std::string_view what) {
  const int error = errno;
  return Status(Code::unavailable, fmt::format("{}: {}", what, std::strerror(error)), Source::os, error);
}

void sleep_on(int wake_fd, int other_fd, std::chrono::milliseconds timeout) noexcept {
  pollfd fds[2] = {{.fd = wake_fd, .events = POLLIN, .revents = 0}, {.fd = other_fd, .events = POLLIN, .revents = 0}};
  ::poll(fds, other_fd >= 0 ? 2 : 1, static_cast<int>(timeout.count()));
  std::uint64_t count = 0;
  [[maybe_unused]] auto drained = ::read(wake_fd, &count, sizeof count);  // non-blocking: resets the eventfd
}

constexpr std::int64_t kYieldAfterNs = 20'000;

}  // namespace

std::int64_t monotonic_ns() noexcept {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

Status start_failure(const WorkerSlot& slot) {
  // The worker may have left the message without its terminator (or be writing it still): copy, then bound it.
  char message[sizeof slot.start_error];
  std::memcpy(message, slot.start_error, sizeof message);
  std::string text(message, ::strnlen(message, sizeof message));
  const int code = slot.start_error_code;
  if (code == static_cast<int>(Code::ok) || code >= kCodeCount) {
    return Status(Code::unavailable,
                  fmt::format("the worker failed to start with status code {}, which is not an error: {}", code, text));
  }
  return Status(static_cast<Code>(code), std::move(text));
}

// -- Ring -----------------------------------------------------------------------------------------------------

std::byte* Ring::try_claim() noexcept {
  const std::uint64_t head = control_->head.load(std::memory_order_relaxed);
  if (head - known_tail_ >= slot_count_) {
    known_tail_ = control_->tail.load(std::memory_order_acquire);
    if (head - known_tail_ >= slot_count_) return nullptr;
  }
  return slots_ + (head % slot_count_) * slot_bytes_ + kSequenceBytes;
}

void Ring::publish() noexcept {
  const std::uint64_t head = control_->head.load(std::memory_order_relaxed);
  sequence(head).store(head + 1, std::memory_order_seq_cst);
  control_->head.store(head + 1, std::memory_order_relaxed);
  nudge();
}

void Ring::recover_producer() noexcept {
  std::uint64_t head = control_->head.load(std::memory_order_relaxed);
  // A slot's sequence is position + 1 only once that position was published (its last position's was N less).
  while (sequence(head).load(std::memory_order_acquire) == head + 1) ++head;
  control_->head.store(head, std::memory_order_relaxed);
}

void Ring::nudge() noexcept {
  if (control_->consumer_sleeping.load(std::memory_order_seq_cst) != 0 &&
      control_->consumer_sleeping.exchange(0, std::memory_order_seq_cst) != 0) {
    wake();
  }
}

void Ring::wake() noexcept {
  const std::uint64_t one = 1;
  [[maybe_unused]] auto written = ::write(wake_fd_, &one, sizeof one);
}

const std::byte* Ring::peek() const noexcept {
  const std::uint64_t tail = control_->tail.load(std::memory_order_relaxed);
  if (sequence(tail).load(std::memory_order_seq_cst) != tail + 1) return nullptr;
  return slots_ + (tail % slot_count_) * slot_bytes_ + kSequenceBytes;
}

void Ring::release() noexcept {
  control_->tail.store(control_->tail.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

bool Ring::keep_spinning(std::int64_t spun) noexcept {
  // A message on an idle core is seen within a few hundred nanoseconds; the spin yields only after a while. Where a
  // CPU device has claimed the cores (a CPU worker, or the process that drives one) it sleeps instead of yielding: a
  // yielding waiter stays runnable beside the threads computing, and on a 2-core machine kept an isolated CPU device's
  // one-text query p99 at 4-20 ms against 2.4-5.0 sleeping (docs/PERFORMANCE.md, section 102).
  if (spun <= kYieldAfterNs) return true;
  if (detail::cores_claimed()) return false;
  std::this_thread::yield();
  return true;
}

bool Ring::sleep_for_message(std::chrono::milliseconds timeout, int other_fd) noexcept {
  control_->consumer_sleeping.store(1, std::memory_order_seq_cst);
  if (empty()) sleep_on(wake_fd_, other_fd, timeout);
  control_->consumer_sleeping.store(0, std::memory_order_seq_cst);
  return !empty();
}

// -- Channel --------------------------------------------------------------------------------------------------

Channel::Channel(int memfd, int worker_wake_fd, int client_wake_fd, void* base, std::size_t bytes)
    : memfd_(memfd),
      worker_wake_fd_(worker_wake_fd),
      client_wake_fd_(client_wake_fd),
      base_(base),
      bytes_(bytes),
      header_(static_cast<ChannelHeader*>(base)),
      staging_(static_cast<std::byte*>(base) + Layout{}.staging, bytes - Layout{}.staging),
      requests_(header_->requests, static_cast<std::byte*>(base) + Layout{}.request_slots, kRequestSlots,
                kRequestSlotBytes, worker_wake_fd),
      replies_(header_->replies, static_cast<std::byte*>(base) + Layout{}.reply_slots, kReplySlots, kReplySlotBytes,
               client_wake_fd) {}

Channel::Channel(Channel&& other) noexcept
    : memfd_(std::exchange(other.memfd_, -1)),
      worker_wake_fd_(std::exchange(other.worker_wake_fd_, -1)),
      client_wake_fd_(std::exchange(other.client_wake_fd_, -1)),
      base_(std::exchange(other.base_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      header_(std::exchange(other.header_, nullptr)),
      staging_(std::exchange(other.staging_, {})),
      requests_(other.requests_),
      replies_(other.replies_) {}

Channel::~Channel() {
  if (base_ != nullptr) ::munmap(base_, bytes_);
  for (int fd : {memfd_, worker_wake_fd_, client_wake_fd_}) {
    if (fd >= 0) ::close(fd);
  }
}

Result<Channel> Channel::create(const std::string& name, std::uint64_t staging_bytes) {
  if (staging_bytes < kPage) {
    return invalid_argument(
        fmt::format("{}: WorkerOptions::staging_bytes must be at least {} bytes, not {}", name, kPage, staging_bytes));
  }
  const std::size_t bytes = Layout{}.staging + round_up(staging_bytes);
  const int memfd = ::memfd_create(fmt::format("accel-{}", name).c_str(), MFD_CLOEXEC);
  if (memfd < 0) return os_error("memfd_create for the worker channel");
  const int worker_wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  const int client_wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  auto fail = [&](std::string_view what) {
    Status status = os_error(what);
    for (int fd : {memfd, worker_wake, client_wake}) {
      if (fd >= 0) ::close(fd);
    }
    return status;
  };
  if (worker_wake < 0 || client_wake < 0) return fail("eventfd for the worker channel");
  if (::ftruncate(memfd, static_cast<off_t>(bytes)) != 0) return fail("sizing the worker channel");
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
  if (base == MAP_FAILED) return fail("mapping the worker channel");
  new (base) ChannelHeader();
  return Channel(memfd, worker_wake, client_wake, base, bytes);
}

Result<Channel> Channel::attach(int memfd, int worker_wake_fd, int client_wake_fd) {
  struct stat info {};
  if (::fstat(memfd, &info) != 0) return os_error("reading the size of the worker channel");
  const auto bytes = static_cast<std::size_t>(info.st_size);
  if (bytes <= Layout{}.staging) return invalid_argument("the worker channel is too small to be one");
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
  if (base == MAP_FAILED) return os_error("mapping the worker channel");
  Channel channel(memfd, worker_wake_fd, client_wake_fd, base, bytes);
  if (channel.header().magic != kChannelMagic || channel.header().version != kChannelVersion) {
    return invalid_argument(fmt::format("the worker channel has version {:#x}/{}, this worker speaks {:#x}/{}",
                                        channel.header().magic, channel.header().version, kChannelMagic,
                                        kChannelVersion));
  }
  return channel;
}

}  // namespace accel::device::isolated
