// Copies whose source buffer is another in-process CUDA device's (CopyOnDevice sent to the destination device, see
// include/accel/device/peer.hpp): the contexts of this process by device id, so that a destination stream finds the
// source's buffer table, and peer access enabled once per pair of devices.
#pragma once

#include <cstdint>
#include <memory>

#include "accel/core/result.hpp"

namespace accel::device::cuda {

class CudaContext;

// Makes the context findable by its device's id (CudaContext::open), until forget_peer_context (CudaContext::close).
void register_peer_context(std::uint32_t device_id, const std::shared_ptr<CudaContext>& context);
void forget_peer_context(std::uint32_t device_id) noexcept;
// The open in-process context of `device_id`; null when there is none (closed, another kind, or isolated).
[[nodiscard]] std::shared_ptr<CudaContext> find_peer_context(std::uint32_t device_id);

// Lets `destination`'s GPU read `source`'s (device `source_id`'s) memory directly (cudaDeviceEnablePeerAccess, and
// access to `source`'s memory pool), once per pair; where CUDA says the pair cannot, does nothing: the driver then
// stages copies through host memory. Call on `destination`'s thread (its device current), without either context's
// buffers lock.
[[nodiscard]] Status enable_peer_access(CudaContext& destination, CudaContext& source, std::uint32_t source_id);

}  // namespace accel::device::cuda
