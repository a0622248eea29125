#include "device/order_meeting.hpp"

#include <fmt/format.h>

#include <chrono>
#include <thread>
#include <unordered_map>

namespace accel::device {
namespace {

struct Meetings {
  std::mutex mutex;
  std::uint64_t opened = 0;
  std::unordered_map<std::uint64_t, std::weak_ptr<OrderMeeting>> open;
};

Meetings& meetings() {
  static Meetings instance;
  return instance;
}

// The other side's part usually comes within microseconds (its device's thread takes the requests before it):
// spinning that long costs less than a sleep and wake-up, beyond it the thread sleeps on the state.
constexpr std::chrono::microseconds kSpin{50};

}  // namespace

void OrderMeeting::set(std::uint32_t flag) noexcept {
  state_.fetch_or(flag, std::memory_order_acq_rel);
  state_.notify_all();
}

void OrderMeeting::abandon() noexcept { set(kAbandoned); }

Status OrderMeeting::wait_for(std::uint32_t flag) {
  const auto spin_until = std::chrono::steady_clock::now() + kSpin;
  std::uint32_t seen = state_.load(std::memory_order_acquire);
  while ((seen & (flag | kAbandoned)) == 0 && std::chrono::steady_clock::now() < spin_until) {
    std::this_thread::yield();
    seen = state_.load(std::memory_order_acquire);
  }
  while ((seen & (flag | kAbandoned)) == 0) {
    state_.wait(seen, std::memory_order_acquire);
    seen = state_.load(std::memory_order_acquire);
  }
  if ((seen & flag) != 0) return Status();
  return cancelled(fmt::format("JoinOrders: meeting {} was abandoned (the other device's part will not run)", number_));
}

Status OrderMeeting::join(JoinRole role) {
  switch (role) {
    case JoinRole::hold: set(kArrived); return wait_for(kReleased);
    case JoinRole::meet: return wait_for(kArrived);
    case JoinRole::release: set(kReleased); return Status();
  }
  return invalid_argument(fmt::format("JoinOrders: role {} is none of hold, meet, release", static_cast<int>(role)));
}

std::shared_ptr<OrderMeeting> open_meeting() {
  Meetings& all = meetings();
  std::lock_guard lock(all.mutex);
  const std::uint64_t number = ++all.opened;
  // The deleter forgets the number, so the table holds only meetings that are open.
  std::shared_ptr<OrderMeeting> meeting(new OrderMeeting(number), [](OrderMeeting* closed) {
    Meetings& table = meetings();
    {
      std::lock_guard forget(table.mutex);
      table.open.erase(closed->number());
    }
    delete closed;
  });
  all.open.emplace(number, meeting);
  return meeting;
}

Status join_orders(const JoinOrders& request) {
  std::shared_ptr<OrderMeeting> meeting;
  {
    Meetings& all = meetings();
    std::lock_guard lock(all.mutex);
    auto found = all.open.find(request.meeting);
    if (found != all.open.end()) meeting = found->second.lock();
  }
  if (meeting == nullptr)
    return invalid_argument(fmt::format("JoinOrders: no meeting {} is open in this process", request.meeting));
  return meeting->join(request.role);
}

std::unique_lock<std::mutex> send_in_order() {
  static std::mutex sending;
  return std::unique_lock(sending);
}

}  // namespace accel::device
