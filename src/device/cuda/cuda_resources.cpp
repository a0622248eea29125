#include "device/cuda/cuda_resources.hpp"

#include <cuda.h>

#include <array>
#include <bit>

#include "device/cuda/driver_function.hpp"
#include "operation/cuda_status.hpp"

namespace accel::device::cuda {

Event::~Event() { pool_->give_back(event_); }

EventPool::~EventPool() {
  for (cudaEvent_t event : free_) cudaEventDestroy(event);
}

Result<cudaEvent_t> Event::recorded() const {
  if (!recorded_) {
    ACCEL_RETURN_IF_ERROR(cuda_status(cudaEventRecord(event_, stream_), "cudaEventRecord"));
    recorded_ = true;
  }
  return event_;
}

Result<EventRef> EventPool::mark(cudaStream_t stream) {
  cudaEvent_t event = nullptr;
  {
    std::lock_guard lock(mutex_);
    if (!free_.empty()) {
      event = free_.back();
      free_.pop_back();
    }
  }
  if (event == nullptr) {
    ACCEL_RETURN_IF_ERROR(cuda_status(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate"));
  }
  return EventRef(std::make_shared<const Event>(event, stream, shared_from_this()));
}

Result<EventRef> EventPool::record(cudaStream_t stream) {
  ACCEL_ASSIGN_OR_RETURN(EventRef event, mark(stream));
  ACCEL_RETURN_IF_ERROR(event->recorded().status());
  return event;
}

void EventPool::give_back(cudaEvent_t event) noexcept {
  std::lock_guard lock(mutex_);
  free_.push_back(event);
}

PinnedBlock& PinnedBlock::operator=(PinnedBlock&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = std::exchange(other.data_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
    pool_ = std::move(other.pool_);
  }
  return *this;
}

void PinnedBlock::reset() noexcept {
  if (data_ != nullptr) pool_->give_back(std::exchange(data_, nullptr), capacity_);
  pool_.reset();
}

PinnedPool::~PinnedPool() {
  for (auto& [capacity, data] : free_) cudaFreeHost(data);
}

Result<PinnedBlock> PinnedPool::take(std::size_t bytes) {
  const std::size_t capacity = std::bit_ceil(std::max<std::size_t>(bytes, 64 << 10));
  {
    std::lock_guard lock(mutex_);
    if (auto found = free_.find(capacity); found != free_.end()) {
      std::byte* data = found->second;
      free_.erase(found);
      cached_bytes_ -= capacity;
      return PinnedBlock(data, capacity, shared_from_this());
    }
  }
  void* data = nullptr;
  ACCEL_RETURN_IF_ERROR(
      cuda_status(cudaHostAlloc(&data, capacity, cudaHostAllocPortable), "cudaHostAlloc of a pinned staging block"));
  return PinnedBlock(static_cast<std::byte*>(data), capacity, shared_from_this());
}

void PinnedPool::give_back(std::byte* data, std::size_t capacity) noexcept {
  {
    std::lock_guard lock(mutex_);
    if (cached_bytes_ + capacity <= cache_bytes_) {
      free_.emplace(capacity, data);
      cached_bytes_ += capacity;
      return;
    }
  }
  cudaFreeHost(data);
}

namespace {

// The driver's cuPointerGetAttributes, looked up once; null where the driver has none.
decltype(&cuPointerGetAttributes) pointer_attributes() noexcept {
  static const auto found = driver_function<decltype(cuPointerGetAttributes)>("cuPointerGetAttributes");
  return found;
}

// The buffer id of the CUDA host memory `pointer` lies in, or nullopt where it is not CUDA host memory. Unlike
// cuPointerGetAttribute, cuPointerGetAttributes answers a pointer CUDA does not know with zeros, not an error.
std::optional<std::uint64_t> host_allocation_of(const void* pointer) noexcept {
  const auto get = pointer_attributes();
  if (get == nullptr) return std::nullopt;
  unsigned int memory_type = 0;
  unsigned long long buffer_id = 0;  // NOLINT(google-runtime-int): the driver's type
  std::array<CUpointer_attribute, 2> attributes{CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_BUFFER_ID};
  std::array<void*, 2> values{&memory_type, &buffer_id};
  if (get(static_cast<unsigned>(attributes.size()), attributes.data(), values.data(),
          reinterpret_cast<CUdeviceptr>(pointer)) != CUDA_SUCCESS ||
      memory_type != CU_MEMORYTYPE_HOST || buffer_id == 0) {
    return std::nullopt;
  }
  return buffer_id;
}

}  // namespace

std::optional<std::uint64_t> pinned_host_allocation(const void* data, std::size_t bytes) noexcept {
  const std::optional<std::uint64_t> first = host_allocation_of(data);
  if (!first || bytes <= 1) return first;
  const std::optional<std::uint64_t> last = host_allocation_of(static_cast<const std::byte*>(data) + bytes - 1);
  return last == first ? first : std::nullopt;
}

}  // namespace accel::device::cuda
