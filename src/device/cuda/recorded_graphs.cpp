#include "device/cuda/recorded_graphs.hpp"

#include <algorithm>

#include "operation/cuda_status.hpp"

namespace accel::device::cuda {

RecordedGraphs::Entry* RecordedGraphs::entry_of(std::uint64_t recording) noexcept {
  for (Entry& entry : entries_) {
    if (entry.key.recording == recording) return &entry;
  }
  return nullptr;
}

cudaGraphExec_t RecordedGraphs::find(const Key& key) {
  if (key.recording == 0) return nullptr;
  Entry* entry = entry_of(key.recording);
  if (entry == nullptr || entry->key != key) return nullptr;
  entry->last_launch = ++launches_;
  ++stats_.hits;
  return entry->exec;
}

std::optional<std::uint64_t> RecordedGraphs::kept_workspace(std::uint64_t recording) noexcept {
  const Entry* entry = recording == 0 ? nullptr : entry_of(recording);
  if (entry == nullptr || entry->exec == nullptr) return std::nullopt;
  return entry->workspace_bytes;
}

RecordedGraphs::CheckedBuffers* RecordedGraphs::checked_buffers(std::uint64_t recording) noexcept {
  Entry* entry = recording == 0 ? nullptr : entry_of(recording);
  if (entry == nullptr || entry->exec == nullptr || entry->checked.addresses.empty()) return nullptr;
  return &entry->checked;
}

std::span<const HostMemoryUse> RecordedGraphs::kept_host_memory(std::uint64_t recording) noexcept {
  const Entry* entry = recording == 0 ? nullptr : entry_of(recording);
  if (entry == nullptr || entry->exec == nullptr) return {};
  return entry->key.host_memory;
}

void RecordedGraphs::remember_checked(std::uint64_t recording, CheckedBuffers checked) {
  if (Entry* entry = recording == 0 ? nullptr : entry_of(recording); entry != nullptr && entry->exec != nullptr) {
    entry->checked = std::move(checked);
  }
}

cudaGraphExec_t RecordedGraphs::find_with_workspace(std::uint64_t recording, const void* workspace) {
  Entry* entry = recording == 0 ? nullptr : entry_of(recording);
  if (entry == nullptr || entry->exec == nullptr || entry->key.addresses.empty() ||
      entry->key.addresses.back() != workspace) {
    return nullptr;
  }
  entry->last_launch = ++launches_;
  ++stats_.hits;
  return entry->exec;
}

RecordedGraphs::Entry& RecordedGraphs::slot_for_new() {
  for (Entry& entry : entries_) {
    if (entry.exec == nullptr) return entry;  // emptied by a refused update
  }
  if (entries_.size() < kCapacity) return entries_.emplace_back();
  auto oldest = std::min_element(entries_.begin(), entries_.end(),
                                 [](const Entry& a, const Entry& b) { return a.last_launch < b.last_launch; });
  (void)cudaGraphExecDestroy(oldest->exec);  // freed when its launches finish
  oldest->exec = nullptr;
  ++stats_.evictions;
  return *oldest;
}

namespace {

// Whether a host copy's memory is where it was for `before` but in another allocation or registration: an update
// would keep the copy's translation of the old one (a launch of it faults), so such a graph is instantiated anew.
bool registered_again(const RecordedGraphs::Key& before, const RecordedGraphs::Key& now) {
  if (before.host_memory.size() != now.host_memory.size()) return false;
  for (std::size_t i = 0; i < now.host_memory.size(); ++i) {
    const HostMemoryUse &was = before.host_memory[i], &is = now.host_memory[i];
    if (was.data == is.data && was.allocation != is.allocation) return true;
  }
  return false;
}

}  // namespace

Result<cudaGraphExec_t> RecordedGraphs::instantiate(const Key& key, cudaGraph_t graph, std::uint64_t workspace_bytes,
                                                    bool& kept) {
  ++stats_.misses;
  ++stats_.builds;
  kept = key.recording != 0;
  if (Entry* entry = kept ? entry_of(key.recording) : nullptr; entry != nullptr) {
    cudaGraphExecUpdateResultInfo info{};
    if (!registered_again(entry->key, key) && cudaGraphExecUpdate(entry->exec, graph, &info) == cudaSuccess) {
      entry->key = key;
      entry->workspace_bytes = workspace_bytes;
      entry->checked = CheckedBuffers{};
      entry->last_launch = ++launches_;
      return entry->exec;
    }
    (void)cudaGetLastError();  // a refused update is not the next call's error
    (void)cudaGraphExecDestroy(entry->exec);
    entry->exec = nullptr;
    entry->key = Key{};  // reused below
    entry->checked = CheckedBuffers{};
  }
  cudaGraphExec_t exec = nullptr;
  if (cudaError_t error = cudaGraphInstantiate(&exec, graph, 0); error != cudaSuccess) {
    ++stats_.build_failures;
    return cuda_status(error, "instantiating a recording's captured graph");
  }
  if (!kept) return exec;
  slot_for_new() = Entry{.key = key, .exec = exec, .workspace_bytes = workspace_bytes, .last_launch = ++launches_};
  return exec;
}

CacheStats RecordedGraphs::stats() const {
  CacheStats out = stats_;
  out.entries = static_cast<std::uint64_t>(
      std::count_if(entries_.begin(), entries_.end(), [](const Entry& e) { return e.exec != nullptr; }));
  return out;
}

void RecordedGraphs::clear() noexcept {
  for (Entry& entry : entries_) {
    if (entry.exec != nullptr) (void)cudaGraphExecDestroy(entry.exec);
  }
  entries_.clear();
}

}  // namespace accel::device::cuda
