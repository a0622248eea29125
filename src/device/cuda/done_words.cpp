#include "device/cuda/done_words.hpp"

#include <cuda.h>

#include <atomic>
#include <utility>

#include "device/cuda/driver_function.hpp"

namespace accel::device::cuda {
namespace {

constexpr std::size_t kPageBytes = 4096;
constexpr std::size_t kWordStride = 64 / sizeof(std::uint32_t);  // a word a cache line: no two streams share one

// The driver's cuStreamWriteValue32, looked up once; null where the driver has none. A device that cannot take stream
// memory operations refuses the write itself (Lease::write_after).
decltype(&cuStreamWriteValue32) write_value() noexcept {
  static const auto found = driver_function<decltype(cuStreamWriteValue32)>("cuStreamWriteValue32");
  return found;
}

}  // namespace

bool DoneWord::reached() const noexcept {
  const std::uint32_t seen =
      std::atomic_ref<std::uint32_t>(*const_cast<std::uint32_t*>(word)).load(std::memory_order_acquire);
  return static_cast<std::int32_t>(seen - count) >= 0;
}

std::shared_ptr<DoneWords> DoneWords::create() {
  if (write_value() == nullptr) return nullptr;
  return std::shared_ptr<DoneWords>(new DoneWords());
}

DoneWords::~DoneWords() {
  for (void* page : pages_) cudaFreeHost(page);
}

DoneWords::Lease DoneWords::lease() {
  Lease lease;
  std::lock_guard lock(mutex_);
  if (free_.empty()) {
    void* page = nullptr;
    if (cudaHostAlloc(&page, kPageBytes, cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess) {
      (void)cudaGetLastError();
      return lease;
    }
    void* device = nullptr;
    if (cudaHostGetDevicePointer(&device, page, 0) != cudaSuccess) {
      (void)cudaGetLastError();
      cudaFreeHost(page);
      return lease;
    }
    pages_.push_back(page);
    auto* host_words = static_cast<std::uint32_t*>(page);
    auto* device_words = static_cast<std::uint32_t*>(device);
    for (std::size_t offset = 0; offset + kWordStride <= kPageBytes / sizeof(std::uint32_t); offset += kWordStride) {
      host_words[offset] = 0;
      free_.push_back(&slots_.emplace_back(Slot{.host = host_words + offset, .device = device_words + offset}));
    }
  }
  lease.owner_ = shared_from_this();
  lease.slot_ = free_.back();
  free_.pop_back();
  return lease;
}

DoneWords::Lease& DoneWords::Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    reset();
    owner_ = std::move(other.owner_);
    slot_ = std::exchange(other.slot_, nullptr);
  }
  return *this;
}

void DoneWords::Lease::reset() noexcept {
  if (owner_ == nullptr) return;
  {
    std::lock_guard lock(owner_->mutex_);
    owner_->free_.push_back(slot_);
  }
  owner_.reset();
  slot_ = nullptr;
}

DoneWord DoneWords::Lease::write_after(cudaStream_t stream) {
  if (owner_ == nullptr) return {};
  const std::uint32_t count = slot_->last + 1;
  if (write_value()(stream, reinterpret_cast<CUdeviceptr>(slot_->device), count, CU_STREAM_WRITE_VALUE_DEFAULT) !=
      CUDA_SUCCESS) {
    reset();
    return {};
  }
  slot_->last = count;
  return {.word = slot_->host, .count = count};
}

}  // namespace accel::device::cuda
