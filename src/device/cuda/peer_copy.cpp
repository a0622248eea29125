#include "device/cuda/peer_copy.hpp"

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "device/cuda/cuda_backend.hpp"
#include "device/cuda/cuda_context.hpp"
#include "device/cuda/cuda_stream.hpp"
#include "device/cuda/nvml_topology.hpp"

namespace accel::device::cuda {
namespace {

struct PeerRegistry {
  std::mutex mutex;
  std::map<std::uint32_t, std::weak_ptr<CudaContext>> contexts;  // by device id
  std::set<std::pair<std::uint32_t, int>> pool_access;           // (source device id, destination ordinal) granted
};

PeerRegistry& registry() {
  static PeerRegistry instance;
  return instance;
}

}  // namespace

void register_peer_context(std::uint32_t device_id, const std::shared_ptr<CudaContext>& context) {
  PeerRegistry& peers = registry();
  std::lock_guard lock(peers.mutex);
  peers.contexts[device_id] = context;
}

void forget_peer_context(std::uint32_t device_id) noexcept {
  PeerRegistry& peers = registry();
  std::lock_guard lock(peers.mutex);
  peers.contexts.erase(device_id);
  std::erase_if(peers.pool_access, [device_id](const auto& granted) { return granted.first == device_id; });
}

std::shared_ptr<CudaContext> find_peer_context(std::uint32_t device_id) {
  PeerRegistry& peers = registry();
  std::lock_guard lock(peers.mutex);
  auto found = peers.contexts.find(device_id);
  return found == peers.contexts.end() ? nullptr : found->second.lock();
}

Status enable_peer_access(CudaContext& destination, CudaContext& source, std::uint32_t source_id) {
  const int to = destination.ordinal();
  const int from = source.ordinal();
  if (to == from) return Status();  // one GPU: an ordinary device-to-device copy
  PeerRegistry& peers = registry();
  std::lock_guard lock(peers.mutex);
  if (peers.pool_access.contains({source_id, to})) return Status();
  int can_access = 0;
  ACCEL_RETURN_IF_ERROR(destination.check(cudaDeviceCanAccessPeer(&can_access, to, from), "cudaDeviceCanAccessPeer"));
  if (can_access != 0) {
    // Once per pair of GPUs in the process: another pair of devices on them, NCCL or the caller may have done it.
    const cudaError_t enabled = cudaDeviceEnablePeerAccess(from, 0);
    if (enabled == cudaErrorPeerAccessAlreadyEnabled) {
      (void)cudaGetLastError();
    } else {
      ACCEL_RETURN_IF_ERROR(destination.check(enabled, fmt::format("cudaDeviceEnablePeerAccess(cuda:{})", from)));
    }
    // Peer access does not reach memory-pool allocations; the pool grants it itself.
    cudaMemAccessDesc access{};
    access.location.type = cudaMemLocationTypeDevice;
    access.location.id = to;
    access.flags = cudaMemAccessFlagsProtReadWrite;
    ACCEL_RETURN_IF_ERROR(
        destination.check(cudaMemPoolSetAccess(source.pool(), &access, 1),
                          fmt::format("cudaMemPoolSetAccess({}'s pool for cuda:{})", source.name(), to)));
  }
  peers.pool_access.insert({source_id, to});
  return Status();
}

Result<Submitted> CudaStream::enqueue_from_peer(CopyOnDevice& request) {
  std::shared_ptr<CudaContext> source_context = find_peer_context(request.source.device);
  if (source_context == nullptr) {
    return invalid_argument(fmt::format(
        "CopyOnDevice to {}: the source {} is a buffer of device {}, which is not a CUDA device open in this process "
        "(accel::copy_between_devices copies between other kinds through the host)",
        context_->name(), to_string(request.source), request.source.device));
  }
  ACCEL_RETURN_IF_ERROR(source_context->check_healthy());
  ACCEL_RETURN_IF_ERROR(enable_peer_access(*context_, *source_context, request.source.device));
  std::scoped_lock lock(context_->buffers_mutex(), source_context->buffers_mutex());
  ACCEL_RETURN_IF_ERROR(context_->check_healthy());
  ACCEL_RETURN_IF_ERROR(source_context->check_healthy());
  ACCEL_ASSIGN_OR_RETURN(const BufferView source, source_context->table().resolve_range(
                                                      request.source, "source", request.source_offset, request.count));
  ACCEL_ASSIGN_OR_RETURN(
      const BufferView destination,
      context_->table().resolve_range(request.destination, "destination", request.destination_offset, request.count));
  if (source.dtype != destination.dtype) {
    return invalid_argument(fmt::format("CopyOnDevice from {} to {}: element types differ", to_string(source.dtype),
                                        to_string(destination.dtype)));
  }
  // This stream follows the source's last write (an event of the other GPU) and the destination's earlier users.
  ACCEL_RETURN_IF_ERROR(source_context->order_before(stream_, request.source, Access::read));
  ACCEL_RETURN_IF_ERROR(context_->order_before(stream_, request.destination, Access::write));
  context_->set_version(request.destination, context_->new_write_version());
  const std::size_t bytes = request.count * size_of(source.dtype);
  if (bytes != 0) {
    ACCEL_RETURN_IF_ERROR(context_->check(
        cudaMemcpyPeerAsync(destination.at(request.destination_offset), context_->ordinal(),
                            source.at(request.source_offset), source_context->ordinal(), bytes, stream_),
        fmt::format("cudaMemcpyPeerAsync (from {})", source_context->name())));
  }
  Submitted submitted;
  ACCEL_ASSIGN_OR_RETURN(submitted.event, context_->record_event(stream_));
  // The source's next writer, on its own GPU, waits for this copy's event.
  source_context->order_after(stream_, request.source, Access::read, submitted.event);
  context_->order_after(stream_, request.destination, Access::write, submitted.event);
  return submitted;
}

}  // namespace accel::device::cuda

namespace accel::device {

std::vector<PeerLink> cuda_peer_links() {
  std::vector<PeerLink> links;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return links;
  }
  for (int from = 0; from < count; ++from) {
    for (int to = 0; to < count; ++to) {
      if (from == to) continue;
      PeerLink link{.from = from, .to = to};
      int value = 0;
      if (cudaDeviceCanAccessPeer(&value, from, to) == cudaSuccess) link.peer_access = value != 0;
      if (cudaDeviceGetP2PAttribute(&value, cudaDevP2PAttrNativeAtomicSupported, from, to) == cudaSuccess)
        link.native_atomics = value != 0;
      if (cudaDeviceGetP2PAttribute(&value, cudaDevP2PAttrPerformanceRank, from, to) == cudaSuccess)
        link.performance_rank = value;
      (void)cudaGetLastError();
      links.push_back(link);
    }
  }
  cuda::add_nvml_topology(links);
  return links;
}

}  // namespace accel::device
