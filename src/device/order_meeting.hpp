// accel::device — meetings that join two devices' orders at one point (JoinOrders, accel::copy_between_devices).
//
// A request that must sit in two devices' orders at once (a copy between two GPUs reads a buffer of one and writes
// one of the other) is sent as parts: `hold` to one device, `meet`, the request and `release` to the other. The
// holding device's thread arrives and waits; the meeting device's thread goes on once the other has arrived, runs
// the request, and releases it. So the request follows everything either device took before, and whatever either
// is sent later follows it, while the sending thread waits for nothing. Whoever sends the parts sends those of all
// meetings under one lock (send_in_order), so that every device's mailbox holds them in one order: a device held
// at one meeting is then never waited for by a part behind it.
//
// A part answered without running (its device closed, its actor stopped) abandons the meeting: the other side stops
// waiting and answers `cancelled`. Meetings are numbered per process; a number never opened is refused.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "accel/core/status.hpp"
#include "accel/device/requests.hpp"

namespace accel::device {

class OrderMeeting {
 public:
  explicit OrderMeeting(std::uint64_t number) noexcept : number_(number) {}
  [[nodiscard]] std::uint64_t number() const noexcept { return number_; }

  // The part a device's thread runs for JoinOrders; returns when that part is done, `cancelled` once abandoned.
  Status join(JoinRole role);
  // Ends every wait at once: a part of the meeting will never run.
  void abandon() noexcept;

 private:
  static constexpr std::uint32_t kArrived = 1;
  static constexpr std::uint32_t kReleased = 2;
  static constexpr std::uint32_t kAbandoned = 4;

  void set(std::uint32_t flag) noexcept;
  Status wait_for(std::uint32_t flag);

  std::uint64_t number_;
  std::atomic<std::uint32_t> state_{0};
};

// A meeting, open until the last copy of it goes (then its number is refused).
[[nodiscard]] std::shared_ptr<OrderMeeting> open_meeting();
// The part of JoinOrders a device runs: finds the meeting by its number and joins it.
Status join_orders(const JoinOrders& request);
// The lock under which the parts of every meeting are sent (see the file's description).
[[nodiscard]] std::unique_lock<std::mutex> send_in_order();

}  // namespace accel::device
