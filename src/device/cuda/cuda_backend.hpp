// The CUDA device tier as seen from the device facade: no CUDA headers, so device.cpp compiles anywhere.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "accel/core/result.hpp"
#include "accel/device/peer.hpp"
#include "device/device_shared.hpp"

namespace accel::device {

// GPUs this process can see; 0 when there is no driver or no GPU.
[[nodiscard]] int cuda_device_count() noexcept;

// Creates the device's context (memory pool, pinned pool, completion thread) on the calling thread. Errors:
// unavailable (no such GPU, no driver), context_lost (the GPU was poisoned earlier in this process).
[[nodiscard]] Result<std::shared_ptr<DeviceBackend>> open_cuda_backend(DeviceShared& shared);

// Page-locks host memory this process did not allocate with CUDA (an isolated worker's staging region), so that
// copies through it run at pinned speed. Call after open_cuda_backend.
[[nodiscard]] Status pin_host_memory(std::span<std::byte> memory);

// accel::cuda_peer_links: every ordered pair of distinct GPUs, as CUDA reports them (peer_copy.cpp).
[[nodiscard]] std::vector<PeerLink> cuda_peer_links();

}  // namespace accel::device
