// Completion marks: after a request's GPU work, its stream writes the request's number into a word of pinned,
// mapped host memory (cuStreamWriteValue32), and the completion poller reads the word. A look is one load, where
// a cudaEventQuery costs 1.3-1.6 µs on the H200's host and takes the driver's lock that the device's launching
// thread needs too (PERFORMANCE §56). Each stream has a word of its own; the numbers written into it rise by one a
// request, in the stream's order, so a word at or past a request's number says its work, and everything before it
// in that stream, is done. Marks answer success only: a stream stopped by an error never writes again, and the
// poller asks the event then (completion_queue.cpp).
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

namespace accel::device::cuda {

class StreamMarks {
 public:
  // A request's mark: reached once its stream wrote `value` (or a later one) into `word`.
  struct Mark {
    std::uint32_t* word = nullptr;
    std::uint32_t value = 0;
    [[nodiscard]] bool reached() const noexcept {
      const std::uint32_t written = std::atomic_ref<std::uint32_t>(*word).load(std::memory_order_acquire);
      return static_cast<std::int32_t>(written - value) >= 0;  // the numbers wrap; a stream's stay within 2^31
    }
  };

  // Marks for the current device; none (every mark() nullopt) where the driver lacks the entry point or pinned
  // memory cannot be had.
  StreamMarks();
  StreamMarks(const StreamMarks&) = delete;
  StreamMarks& operator=(const StreamMarks&) = delete;
  ~StreamMarks();

  // Enqueues `stream`'s next mark after the work sent to it so far. nullopt when marks are unavailable, every word
  // is taken by other streams, or the driver refused the write (from then on marks are off): the caller goes by the
  // work's event. Not thread-safe: the completion queue calls it under its lock.
  [[nodiscard]] std::optional<Mark> mark(cudaStream_t stream);

 private:
  static constexpr std::size_t kWords = 1024;  // one 4 KiB page: streams past it go by their events

  std::uint32_t* words_ = nullptr;  // kWords, zero at first; the GPU writes them, the poller reads them
  void* write_value_ = nullptr;     // the driver's cuStreamWriteValue32
  std::unordered_map<cudaStream_t, std::uint32_t> word_of_;
  std::vector<std::uint32_t> last_value_;  // per word, the number last enqueued
};

}  // namespace accel::device::cuda
