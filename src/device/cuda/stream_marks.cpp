#include "device/cuda/stream_marks.hpp"

#include <cuda.h>

#include <cstring>

namespace accel::device::cuda {
namespace {
using WriteValue = decltype(&cuStreamWriteValue32);
}  // namespace

StreamMarks::StreamMarks() {
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", &entry, 12000, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess || entry == nullptr) {
    (void)cudaGetLastError();
    return;
  }
  void* page = nullptr;
  if (cudaHostAlloc(&page, kWords * sizeof(std::uint32_t), cudaHostAllocMapped | cudaHostAllocPortable) !=
      cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  std::memset(page, 0, kWords * sizeof(std::uint32_t));
  words_ = static_cast<std::uint32_t*>(page);
  write_value_ = entry;
  last_value_.assign(kWords, 0);
}

StreamMarks::~StreamMarks() {
  if (words_ != nullptr) cudaFreeHost(words_);
}

std::optional<StreamMarks::Mark> StreamMarks::mark(cudaStream_t stream) {
  if (write_value_ == nullptr) return std::nullopt;
  auto slot = word_of_.find(stream);
  if (slot == word_of_.end()) {
    if (word_of_.size() == kWords) return std::nullopt;
    // A stream's word is its for the queue's life: a new stream at a destroyed one's address goes on with the
    // numbers the old one left, which every request of the old one has reached (its destruction synchronised it).
    slot = word_of_.emplace(stream, static_cast<std::uint32_t>(word_of_.size())).first;
  }
  std::uint32_t* word = words_ + slot->second;
  const std::uint32_t value = last_value_[slot->second] + 1;
  // With a host pointer of mapped memory the device pointer is the same address (unified addressing).
  const CUresult written = reinterpret_cast<WriteValue>(write_value_)(stream, reinterpret_cast<CUdeviceptr>(word),
                                                                      value, CU_STREAM_WRITE_VALUE_DEFAULT);
  if (written != CUDA_SUCCESS) {
    write_value_ = nullptr;  // not supported here, or the stream is unusable: the events answer from now on
    return std::nullopt;
  }
  last_value_[slot->second] = value;
  return Mark{word, value};
}

}  // namespace accel::device::cuda
