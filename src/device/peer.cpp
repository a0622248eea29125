#include "accel/device/peer.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>

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

// One CopyOnDevice on the destination's stream, between the two devices' orders: it is sent when the source device
// has taken what was sent to it before (a fence it answers once it took them; the continuation sends the copy from
// the source's thread, so that the caller is woken once, not twice), and the caller returns once the destination has
// taken it (a second fence behind it), before it can send either device anything else. No actor waits for another.
Future<Done> copy_peer_to_peer(const Device& source_device, const Device& destination_device,
                               const CopyOnDevice& copy) {
  struct Sent {
    std::optional<Future<Done>> copy;
  };
  auto sent = std::make_shared<Sent>();
  // A failure of the destination's fence is the destination's, which the copy's own future reports.
  const Result<Fence> taken = source_device.record_fence()
                                  .then([destination_device, copy, sent](Fence) {
                                    sent->copy = destination_device.ask(copy);
                                    return destination_device.record_fence();
                                  })
                                  .wait();
  if (!sent->copy) return make_ready_future<Done>(taken.status().with_context("copy_between_devices"));
  return std::move(*sent->copy);
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
