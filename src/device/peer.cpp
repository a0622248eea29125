#include "accel/device/peer.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <string_view>

#include "device/order_meeting.hpp"

#if ACCEL_HAVE_CUDA
#include "device/cuda/cuda_backend.hpp"
#endif

namespace accel {
namespace {

Status check_owner(const BufferHandle& buffer, const Device& device, std::string_view role) {
  if (buffer.device == device.id()) return Status();
  return invalid_argument(fmt::format("copy_between_devices: the {} {} is not a buffer of {} (device {})", role,
                                      to_string(buffer), device.name(), device.id()));
}

Status check_range(const BufferHandle& buffer, std::uint64_t offset, std::uint64_t count, std::string_view role) {
  if (offset <= buffer.count && count <= buffer.count - offset) return Status();
  return invalid_argument(fmt::format("copy_between_devices: {} elements from {} offset {} past the end of the {} {}",
                                      count, role, offset, role, to_string(buffer)));
}

bool copies_peer_to_peer(const Device& a, const Device& b) {
  auto in_process_cuda = [](const Device& device) {
    return device.kind() == DeviceKind::cuda && device.isolation() == Isolation::in_process;
  };
  return in_process_cuda(a) && in_process_cuda(b);
}

// One CopyOnDevice on the destination's stream, at a point of both devices' orders joined by a meeting
// (order_meeting.hpp): the source device holds at `hold` while the destination, once the source has arrived, takes
// the copy (it reads the source buffer's last write and makes the copy that buffer's latest read) and releases it.
// Nothing waits on this thread. A part answered without running abandons the meeting, so that the other side's
// thread stops waiting; the copy then finds the source device closed or failed and answers that.
Future<Done> copy_peer_to_peer(const Device& source_device, const Device& destination_device,
                               const CopyOnDevice& copy) {
  std::shared_ptr<device::OrderMeeting> meeting = device::open_meeting();
  const std::uint64_t number = meeting->number();
  Future<Done> held;
  Future<Done> met;
  Future<Done> copied;
  Future<Done> released;
  {
    std::unique_lock<std::mutex> in_order = device::send_in_order();
    held = source_device.ask(JoinOrders{.meeting = number, .role = JoinRole::hold});
    met = destination_device.ask(JoinOrders{.meeting = number, .role = JoinRole::meet});
    copied = destination_device.ask(copy);
    released = destination_device.ask(JoinOrders{.meeting = number, .role = JoinRole::release});
  }
  for (Future<Done>* part : {&held, &met, &released}) {
    (void)part->then([meeting](Result<Done> joined) {
      if (!joined.ok()) meeting->abandon();
      return Done{};
    });
  }
  return copied;
}

// Through host memory: the source device's CopyToHost, waited for here, then the destination device's CopyToDevice,
// sent before the caller can send the destination anything else. The staging vector lives until the second half has
// read it.
Future<Done> copy_through_host(const Device& source_device, const Device& destination_device,
                               const CopyOnDevice& copy) {
  const DType dtype = copy.source.dtype;
  auto staging = std::make_shared<std::vector<std::byte>>(copy.count * size_of(dtype));
  CopyToHost download{.source = copy.source,
                      .source_offset = copy.source_offset,
                      .destination = HostDestination{staging->data(), copy.count, dtype}};
  if (Result<Done> read = source_device.ask(download).wait(); !read.ok())
    return make_ready_future<Done>(read.status().with_context("copy_between_devices (from the source)"));
  CopyToDevice upload{.source = HostSource{staging->data(), copy.count, dtype},
                      .destination = copy.destination,
                      .destination_offset = copy.destination_offset};
  return destination_device.ask(upload).then([staging](Done done) { return done; });
}

}  // namespace

Future<Done> copy_between_devices(const Device& source_device, const Device& destination_device, CopyOnDevice copy) {
  Status checked = check_owner(copy.source, source_device, "source");
  if (checked.ok()) checked = check_owner(copy.destination, destination_device, "destination");
  if (!checked.ok()) return make_ready_future<Done>(std::move(checked));
  if (source_device.id() == destination_device.id()) return destination_device.ask(copy);
  if (copies_peer_to_peer(source_device, destination_device))
    return copy_peer_to_peer(source_device, destination_device, copy);
  // The devices check these too, but each only its own half, and the first half would already have run.
  if (copy.source.dtype != copy.destination.dtype) {
    checked = invalid_argument(fmt::format("copy_between_devices from {} to {}: element types differ",
                                           to_string(copy.source.dtype), to_string(copy.destination.dtype)));
  }
  if (checked.ok()) checked = check_range(copy.source, copy.source_offset, copy.count, "source");
  if (checked.ok()) checked = check_range(copy.destination, copy.destination_offset, copy.count, "destination");
  if (!checked.ok()) return make_ready_future<Done>(std::move(checked));
  return copy_through_host(source_device, destination_device, copy);
}

std::string_view to_string(LinkKind kind) noexcept {
  switch (kind) {
    case LinkKind::unknown: return "unknown";
    case LinkKind::nvlink: return "nvlink";
    case LinkKind::same_board: return "same_board";
    case LinkKind::pcie_switch: return "pcie_switch";
    case LinkKind::pcie_host_bridge: return "pcie_host_bridge";
    case LinkKind::numa_node: return "numa_node";
    case LinkKind::system: return "system";
  }
  return "unknown";
}

std::vector<PeerLink> cuda_peer_links() {
#if ACCEL_HAVE_CUDA
  return device::cuda_peer_links();
#else
  return {};
#endif
}

}  // namespace accel
