// The CUDA graphs one stream captured from RunRecorded requests (include/accel/device/run_recorded.hpp): one
// executable graph per recording, kept with the addresses it was captured over. A later request of the recording
// over the same addresses launches it again; over other addresses it is captured again and the kept executable
// updated in place (cudaGraphExecUpdate) when CUDA accepts the new graph's topology, instantiated anew otherwise.
// Reported as the "recorded-graphs" cache: builds (captures), hits (launches of a kept graph), misses (requests
// that captured), evictions, entries (kept graphs), build_failures (captures refused or failed).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "accel/core/buffer_handle.hpp"
#include "accel/core/cache_stats.hpp"
#include "accel/core/result.hpp"
#include "accel/device/run_recorded.hpp"
#include "device/cuda/buffer_use.hpp"
#include "operation/operation.hpp"

namespace accel::device::cuda {

class RecordedGraphs {
 public:
  // What a kept graph was captured for: the recording and every address its steps read or write, the
  // workspace's included.
  struct Key {
    std::uint64_t recording = 0;
    std::vector<const void*> addresses;      // each step's buffers', in step order, then the workspace's
    std::vector<HostMemoryUse> host_memory;  // each host copy's, in step order
    friend bool operator==(const Key&, const Key&) = default;
  };

  // Kept graphs at most; the least recently launched goes first.
  static constexpr std::size_t kCapacity = 32;

  RecordedGraphs() = default;
  RecordedGraphs(const RecordedGraphs&) = delete;
  RecordedGraphs& operator=(const RecordedGraphs&) = delete;
  ~RecordedGraphs() { clear(); }

  // The executable kept for `key` (counted as a hit), or null.
  [[nodiscard]] cudaGraphExec_t find(const Key& key);
  // The workspace the graph kept for `recording` was captured with, if one is kept (0 for none): a launch of it
  // needs no step planned again.
  [[nodiscard]] std::optional<std::uint64_t> kept_workspace(std::uint64_t recording) noexcept;
  // The buffers a launch of a kept graph found when it checked every step (cuda_recorded.cpp): the memory each
  // non-null handle of `steps` resolved to, in step order; the buffers the launch ordered after; which steps are host
  // copies. A later launch whose steps name the same handles, resolved to the same memory, with its host copies'
  // memory as the graph's key has it, needs no step checked again: a recording's id names its steps. One that sends
  // these very steps, while the buffer table's layout is `layout` and none of them is imported, needs no handle
  // resolved; only its host copies are looked at.
  struct CheckedBuffers {
    std::vector<const void*> addresses;
    std::vector<BufferUse> uses;
    RecordedSteps steps;
    std::vector<std::size_t> host_copies;  // indices in `steps`
    std::uint64_t layout = 0;
    bool imported = false;
  };
  // The buffers last checked for the graph kept for `recording`, or null; a launch that checks them again may update
  // their steps and layout.
  [[nodiscard]] CheckedBuffers* checked_buffers(std::uint64_t recording) noexcept;
  // The host memory the graph kept for `recording` was captured over (its key's), each host copy's in step order;
  // empty where none is kept.
  [[nodiscard]] std::span<const HostMemoryUse> kept_host_memory(std::uint64_t recording) noexcept;
  // Keeps `checked` with the graph kept for `recording`, if one is.
  void remember_checked(std::uint64_t recording, CheckedBuffers checked);
  // The executable kept for `recording` if it was captured with `workspace` as its workspace (counted as a hit), or
  // null.
  [[nodiscard]] cudaGraphExec_t find_with_workspace(std::uint64_t recording, const void* workspace);
  // An executable of `graph`, captured for `key` with `workspace_bytes` of workspace, kept (replacing the recording's
  // older one, updated where CUDA can and no host copy's memory was registered again where it lay) when the recording
  // has an id; the caller destroys `graph`. A recording without an id gets one it must destroy after launching it
  // (`kept` false).
  [[nodiscard]] Result<cudaGraphExec_t> instantiate(const Key& key, cudaGraph_t graph, std::uint64_t workspace_bytes,
                                                    bool& kept);
  // A capture that failed, for the counters.
  void count_failed_capture() noexcept { ++stats_.build_failures; }

  [[nodiscard]] CacheStats stats() const;
  // Destroys every kept executable (launches in flight finish first).
  void clear() noexcept;
  // Forgets them without calling CUDA (a poisoned context refuses every call).
  void abandon() noexcept { entries_.clear(); }

 private:
  struct Entry {
    Key key;
    cudaGraphExec_t exec = nullptr;
    std::uint64_t workspace_bytes = 0;
    std::uint64_t last_launch = 0;
    CheckedBuffers checked;  // empty until a launch remembers them
  };

  Entry* entry_of(std::uint64_t recording) noexcept;
  Entry& slot_for_new();

  std::vector<Entry> entries_;
  std::uint64_t launches_ = 0;
  CacheStats stats_{.name = "recorded-graphs", .capacity = kCapacity};
};

}  // namespace accel::device::cuda
