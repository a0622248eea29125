// A CUDA stream's copies: uploads from host memory (pinned staging, large pageable ones in chunks), downloads, and
// copies between buffers of the device (cuda_stream.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "device/cuda/cuda_stream.hpp"
#include "operation/cuda_copy.hpp"

namespace accel::device::cuda {

// Above twice this, a pageable upload goes through two blocks of this size in turn rather than one block of its
// own size: page-locking 64 MiB costs ~30 ms on the H100's host, four times the copy it would serve.
constexpr std::size_t kUploadChunkBytes = 4u << 20;

Result<PinnedBlock> CudaStream::upload_in_chunks(std::byte* to, const std::byte* from, std::size_t bytes) {
  std::array<PinnedBlock, 2> blocks;
  std::array<EventRef, 2> read;  // the copy that last read each block
  std::size_t last = 0;
  for (std::size_t offset = 0, chunk = 0; offset < bytes; offset += kUploadChunkBytes, ++chunk) {
    last = chunk % 2;
    if (blocks[last].data() == nullptr) {
      ACCEL_ASSIGN_OR_RETURN(blocks[last], context_->pinned().take(kUploadChunkBytes));
    } else {
      ACCEL_ASSIGN_OR_RETURN(const cudaEvent_t block_read, context_->recorded(*read[last]));
      ACCEL_RETURN_IF_ERROR(context_->check(cudaEventSynchronize(block_read), "waiting for a staging block"));
    }
    const std::size_t n = std::min(kUploadChunkBytes, bytes - offset);
    std::memcpy(blocks[last].data(), from + offset, n);
    ACCEL_RETURN_IF_ERROR(
        context_->check(cudaMemcpyAsync(to + offset, blocks[last].data(), n, cudaMemcpyHostToDevice, stream_),
                        "cudaMemcpyAsync (host to device)"));
    ACCEL_ASSIGN_OR_RETURN(read[last], context_->record_event(stream_));
  }
  // The other block goes back to the pool now, so its copy must be over; the last one goes back on completion.
  if (const std::size_t other = 1 - last; read[other] != nullptr) {
    ACCEL_ASSIGN_OR_RETURN(const cudaEvent_t block_read, context_->recorded(*read[other]));
    ACCEL_RETURN_IF_ERROR(context_->check(cudaEventSynchronize(block_read), "waiting for a staging block"));
  }
  return std::move(blocks[last]);
}

Result<Submitted> CudaStream::enqueue(CopyToDevice& request) {
  const HostSource& source = request.source;
  if (source.data == nullptr && source.count != 0) return invalid_argument("CopyToDevice: null host source");
  const std::size_t bytes = source.count * size_of(source.dtype);
  // Pageable memory is staged through a pinned block first (outside the lock), so the copy itself is
  // asynchronous and the caller's memory is free again when the future is ready. A large upload is staged in
  // chunks instead, under the lock, since its chunks must be copied in the buffer's order.
  PinnedBlock staging;
  const void* from = source.data;
  const bool pinned = bytes == 0 || pinned_host_allocation(source.data, bytes).has_value();
  const bool in_chunks = !pinned && bytes > 2 * kUploadChunkBytes;
  if (!pinned && !in_chunks) {
    ACCEL_ASSIGN_OR_RETURN(staging, context_->pinned().take(bytes));
    std::memcpy(staging.data(), source.data, bytes);
    from = staging.data();
  }
  std::lock_guard lock(context_->buffers_mutex());
  ACCEL_RETURN_IF_ERROR(context_->check_healthy());
  ACCEL_ASSIGN_OR_RETURN(
      const BufferView destination,
      context_->table().resolve_range(request.destination, "destination", request.destination_offset, source.count));
  ACCEL_RETURN_IF_ERROR(check_host_dtype(source.dtype, destination.dtype, "the host source"));
  return ordered({{request.destination, Access::write}}, [&]() -> Result<Submitted> {
    if (in_chunks) {
      ACCEL_ASSIGN_OR_RETURN(staging,
                             upload_in_chunks(static_cast<std::byte*>(destination.at(request.destination_offset)),
                                              static_cast<const std::byte*>(source.data), bytes));
    } else if (bytes != 0) {
      ACCEL_RETURN_IF_ERROR(context_->check(
          cudaMemcpyAsync(destination.at(request.destination_offset), from, bytes, cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyAsync (host to device)"));
    }
    return Submitted{.staging = std::move(staging)};
  });
}

Result<Submitted> CudaStream::enqueue(CopyToHost& request) {
  const HostDestination& destination = request.destination;
  if (destination.data == nullptr && destination.count != 0)
    return invalid_argument("CopyToHost: null host destination");
  const std::size_t bytes = destination.count * size_of(destination.dtype);
  std::lock_guard lock(context_->buffers_mutex());
  ACCEL_RETURN_IF_ERROR(context_->check_healthy());
  ACCEL_ASSIGN_OR_RETURN(
      const BufferView source,
      context_->table().resolve_range(request.source, "source", request.source_offset, destination.count));
  ACCEL_RETURN_IF_ERROR(check_host_dtype(destination.dtype, source.dtype, "the host destination"));
  return ordered({{request.source, Access::read}}, [&]() -> Result<Submitted> {
    Submitted submitted;
    if (bytes == 0) return submitted;
    void* to = destination.data;
    if (!pinned_host_allocation(destination.data, bytes)) {
      ACCEL_ASSIGN_OR_RETURN(submitted.staging, context_->pinned().take(bytes));
      to = submitted.staging.data();
      submitted.host_destination = destination.data;
      submitted.host_bytes = bytes;
    }
    ACCEL_RETURN_IF_ERROR(
        context_->check(cudaMemcpyAsync(to, source.at(request.source_offset), bytes, cudaMemcpyDeviceToHost, stream_),
                        "cudaMemcpyAsync (device to host)"));
    return submitted;
  });
}

Result<Submitted> CudaStream::enqueue(CopyOnDevice& request) {
  if (request.source.device != shared_->id && !request.source.is_null()) return enqueue_from_peer(request);
  std::lock_guard lock(context_->buffers_mutex());
  ACCEL_RETURN_IF_ERROR(context_->check_healthy());
  BufferTable& table = context_->table();
  ACCEL_ASSIGN_OR_RETURN(const BufferView source,
                         table.resolve_range(request.source, "source", request.source_offset, request.count));
  ACCEL_ASSIGN_OR_RETURN(const BufferView destination, table.resolve_range(request.destination, "destination",
                                                                           request.destination_offset, request.count));
  if (source.dtype != destination.dtype) {
    return invalid_argument(fmt::format("CopyOnDevice from {} to {}: element types differ", to_string(source.dtype),
                                        to_string(destination.dtype)));
  }
  const std::size_t bytes = request.count * size_of(source.dtype);
  std::byte* from = source.at(request.source_offset);
  std::byte* to = destination.at(request.destination_offset);
  const bool overlapping = source.data == destination.data && from < to + bytes && to < from + bytes && from != to;
  return ordered({{request.source, Access::read}, {request.destination, Access::write}}, [&]() -> Result<Submitted> {
    if (bytes == 0 || from == to) return Submitted{};
    if (!overlapping) {
      ACCEL_RETURN_IF_ERROR(context_->check(copy_on_device(to, from, bytes, stream_), "copying on the device"));
      return Submitted{};
    }
    // Overlapping ranges of one buffer (memmove semantics) go through a temporary from the pool.
    void* temporary = nullptr;
    ACCEL_RETURN_IF_ERROR(context_->check(cudaMallocFromPoolAsync(&temporary, bytes, context_->pool(), stream_),
                                          "allocating a temporary for an overlapping copy"));
    Status copied = context_->check(copy_on_device(temporary, from, bytes, stream_), "copying to a temporary");
    if (copied.ok()) {
      copied = context_->check(copy_on_device(to, temporary, bytes, stream_), "copying from a temporary");
    }
    Status freed = context_->check(cudaFreeAsync(temporary, stream_), "cudaFreeAsync (temporary)");
    ACCEL_RETURN_IF_ERROR(copied);
    ACCEL_RETURN_IF_ERROR(freed);
    return Submitted{};
  });
}

}  // namespace accel::device::cuda
