/// @file
/// Copies between buffers of two devices of this process, and which GPUs of the host reach each other's memory.
///
/// @code
///   accel::Device gpu0 = *accel::Device::open(system, {.kind = accel::DeviceKind::cuda, .ordinal = 0});
///   accel::Device gpu1 = *accel::Device::open(system, {.kind = accel::DeviceKind::cuda, .ordinal = 1});
///   accel::copy_between_devices(gpu0, gpu1, {.source = x0, .destination = x1, .count = x0.size()}).wait();
///   for (const accel::PeerLink& link : accel::cuda_peer_links()) { ... }   // which pairs are peers
/// @endcode
///
/// The copy is in the order of both devices' requests: it follows everything sent to `source_device` and
/// `destination_device` (these addresses: a stream opened from a device has its own order) before the call, and what
/// either is sent after the call follows it, so `upload(x0)`, `copy_between_devices(gpu0, gpu1, x0 -> x1)`,
/// `gemm(x1 ...)` on gpu1 and an overwrite of x0 need no wait in between.
///
/// Between two in-process CUDA devices the copy is one request of the destination device (CopyOnDevice whose source
/// buffer is the other device's) at a point where the two devices' orders are joined (JoinOrders): the source
/// device's thread holds there until the destination's thread has taken the copy. The call returns at once: neither
/// it nor the GPUs wait for anything but the devices' own earlier work. The destination's stream waits on the GPU for
/// the source buffer's last write and copies peer to peer (`cudaMemcpyPeerAsync`; peer access, including to the
/// devices' memory pools, is enabled the first time a pair copies, where `cudaDeviceCanAccessPeer` allows; elsewhere
/// CUDA's driver stages the copy through pinned host memory). Its event becomes the source buffer's latest read and
/// the destination's last write, so later users on either GPU wait for it there.
///
/// Every other pair (the CPU device, isolated devices, whose memory lies in a worker process) is staged through host
/// memory: a CopyToHost on the source device, waited for by the call (so do not make such a copy from a continuation
/// the source device runs), then a CopyToDevice on the destination, whose Future the call returns.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "accel/device/device.hpp"

namespace accel {

/// Copies `copy.count` elements of `copy.source` (a buffer of `source_device`) from `copy.source_offset` into
/// `copy.destination` (a buffer of `destination_device`) from `copy.destination_offset` (see the file's description
/// for the path each pair takes). Both buffers must hold the same element type. `invalid_argument` names the buffer
/// whose device is not the one given; a stale buffer, a range past a buffer's end or differing element types are
/// refused before anything is copied. The same device on both sides is an ordinary CopyOnDevice.
Future<Done> copy_between_devices(const Device& source_device, const Device& destination_device, CopyOnDevice copy);

/// What joins two GPUs, as NVML (the driver's libnvidia-ml) reports it; the names are `nvidia-smi topo -m`'s.
enum class LinkKind : std::uint8_t {
  unknown,           ///< NVML is not there (no driver library, or a build without its header) or did not answer
  nvlink,            ///< NVLink, directly or through NVSwitches ("NV#")
  same_board,        ///< two GPUs of one board
  pcie_switch,       ///< PCIe switches only, no host bridge ("PIX", "PXB")
  pcie_host_bridge,  ///< a CPU's PCIe host bridge ("PHB")
  numa_node,         ///< host bridges of one NUMA node ("NODE")
  system,            ///< the interconnect between NUMA nodes ("SYS")
};

/// The enumerator's name: "unknown", "nvlink", "same_board", "pcie_switch", "pcie_host_bridge", "numa_node",
/// "system".
[[nodiscard]] std::string_view to_string(LinkKind kind) noexcept;

/// How one GPU of the host reaches another's memory, as CUDA and NVML report it.
struct PeerLink {
  int from = 0;                       ///< the ordinal of the GPU that reads or writes
  int to = 0;                         ///< the ordinal of the GPU whose memory it reaches
  bool peer_access = false;           ///< cudaDeviceCanAccessPeer: copies go directly, without host staging
  bool native_atomics = false;        ///< atomic operations over the link are native (NVLink pairs report it)
  int performance_rank = 0;           ///< CUDA's relative rank of the link; lower is faster, among this host's pairs
  LinkKind link = LinkKind::unknown;  ///< what joins them (NVML)
  int nvlinks = 0;                    ///< NVLink: the active links of `from` that carry it ("NV18": 18); else 0
};

/// Every ordered pair of distinct GPUs this process can see, (0,1), (0,2), ..., (1,0), ...; empty with fewer than
/// two GPUs or in a build without the CUDA tier.
[[nodiscard]] std::vector<PeerLink> cuda_peer_links();

}  // namespace accel
