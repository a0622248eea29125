// The context of one CUDA device: what every stream of the device shares — the GPU's stream-ordered memory
// pool, the pinned staging pool, the event pool, the completion thread, and the buffer table with the
// ordering state of every buffer.
//
// Buffer ordering across streams. Each buffer remembers the event of its last write and the events of the
// reads since. A request on stream S that reads a buffer makes S wait for the last write if another stream
// made it; a request that writes also waits for the other streams' reads. After enqueueing its work the
// request records one event on S and becomes the buffer's last write (or one of its reads). All of it is
// stream-ordered: the host never waits. One mutex covers resolving, waiting, enqueueing and recording, so
// two streams cannot interleave between a buffer's check and its update; GPU work itself still overlaps.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "device/buffer_table.hpp"
#include "device/cuda/completion_queue.hpp"
#include "device/cuda/cuda_resources.hpp"
#include "device/cuda/done_words.hpp"
#include "device/cuda/health.hpp"
#include "device/device_shared.hpp"
#include "device/sharing/export_table.hpp"
#include "operation/cuda_operation.hpp"

namespace accel::device::cuda {

struct StreamUse {
  cudaStream_t stream = nullptr;
  EventRef event;
};

struct BufferOrdering {
  std::optional<StreamUse> last_write;
  bool last_write_done = false;        // its event was seen complete: no stream need wait for it
  std::vector<StreamUse> reads_since;  // at most one per stream
  std::uint64_t version = 0;           // of the last write (BufferView::version)
  // Requests given its address since it was allocated (order_before counts them): while only the running one has
  // been, nothing holds that address and its memory may be replaced (CudaTarget::adopt).
  std::uint64_t requests = 0;
};

class CudaContext final : public DeviceBackend, public std::enable_shared_from_this<CudaContext> {
 public:
  static Result<std::shared_ptr<CudaContext>> open(DeviceShared& shared);
  ~CudaContext() override;

  // -- DeviceBackend ----------------------------------------------------------------------
  Result<std::unique_ptr<DeviceProtocol::Handler>> make_stream_state(std::shared_ptr<DeviceShared> shared) override;
  bool has_streams() const noexcept override { return true; }
  Status health() const override { return health_->status(); }
  // Answers pending work, frees every buffer and the memory pool, and releases the families' state.
  void close() override;

  // -- for the device's streams ------------------------------------------------------------
  // A Status for a failed CUDA call; a sticky error poisons the device and the returned error says so.
  [[nodiscard]] Status check(cudaError_t error, std::string_view what);
  [[nodiscard]] Status check_healthy() const { return health_->status(); }
  // An event recorded on `stream` now: the completion and ordering point of the work enqueued before it.
  [[nodiscard]] Result<EventRef> record_event(cudaStream_t stream);
  // A mark of `stream`'s work so far, recorded when first needed (Event): a request's completion and ordering point
  // when its reply may wait for the end of its burst.
  [[nodiscard]] Result<EventRef> mark_event(cudaStream_t stream);
  // `event`, recorded first if it is a mark not recorded yet; hold buffers_mutex() unless it is this thread's stream's.
  [[nodiscard]] Result<cudaEvent_t> recorded(const Event& event);

  [[nodiscard]] int ordinal() const noexcept { return ordinal_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] const DeviceOptions& options() const noexcept { return options_; }
  [[nodiscard]] int compute_capability() const noexcept { return compute_capability_; }
  [[nodiscard]] const std::string& gpu_name() const noexcept { return gpu_name_; }
  [[nodiscard]] std::uint64_t total_memory() const noexcept { return total_memory_; }
  [[nodiscard]] cudaMemPool_t pool() const noexcept { return pool_; }
  [[nodiscard]] EventPool& events() noexcept { return *events_; }
  [[nodiscard]] PinnedPool& pinned() noexcept { return *pinned_; }
  [[nodiscard]] CompletionQueue& completions() noexcept { return *completions_; }
  // A stream's done word (done_words.hpp); an empty lease where the driver has none or replies are not polled.
  [[nodiscard]] DoneWords::Lease lease_done_word() {
    return done_words_ != nullptr ? done_words_->lease() : DoneWords::Lease();
  }
  // The library families' state of this context (plan caches, loaded kernels), shared by its streams.
  [[nodiscard]] TargetStates& states() noexcept { return states_; }

  // The buffer table and the buffers' ordering state; hold buffers_mutex() while using them.
  [[nodiscard]] std::mutex& buffers_mutex() noexcept { return buffers_mutex_; }
  [[nodiscard]] BufferTable& table() noexcept { return table_; }
  [[nodiscard]] MemoryStats& stats() noexcept { return stats_; }

  // Makes `stream` wait for what an access of `handle` (already resolved) must follow.
  [[nodiscard]] Status order_before(cudaStream_t stream, const BufferHandle& handle, Access access);
  // Records that `event`, recorded on `stream`, is the latest access of `handle`.
  void order_after(cudaStream_t stream, const BufferHandle& handle, Access access, const EventRef& event);
  // A version no write of this context has had, for the buffers one request writes.
  [[nodiscard]] std::uint64_t new_write_version() noexcept { return ++write_versions_; }
  // Gives `handle` the version of a write about to be enqueued.
  void set_version(const BufferHandle& handle, std::uint64_t version) { ordering_of(handle).version = version; }
  // Each resolved view of `operands` given its buffer's version.
  void stamp_versions(const Operands& operands, std::span<BufferView> views);
  // CudaTarget::adopt for the request running on `stream`: false unless `handle` holds `bytes`, was written by that
  // request (`write_version`) and used by no other since it was allocated; else its old memory is freed on `stream`.
  [[nodiscard]] Result<bool> adopt(cudaStream_t stream, const BufferHandle& handle, std::uint64_t write_version,
                                   void* memory, std::uint64_t bytes);
  // Makes `stream` wait for every access of `handle` by other streams (before freeing it); forgets them.
  [[nodiscard]] Status order_all_before_free(cudaStream_t stream, const BufferHandle& handle);

  // Frees every buffer (stream-ordered on `stream`) and starts context epoch `epoch`.
  [[nodiscard]] Status reset_buffers(cudaStream_t stream, std::uint32_t epoch);

  // -- buffers shared with other processes (cuda_sharing.cpp); hold buffers_mutex() ---------------------
  // Moves the buffer's memory, in `stream`'s order, into an allocation of its own and exports its IPC handle; the
  // stream has finished the move when this returns, so an importer sees the contents.
  [[nodiscard]] Result<ExportedBuffer> export_buffer(cudaStream_t stream, const BufferHandle& handle);
  [[nodiscard]] Result<BufferHandle> import_buffer(const ExportedBuffer& exported);
  // After the table removed `handle` and the streams finished with it: an import's mapping is closed; an export is
  // retired and its memory freed now, or once no other process imports it. Answers whether it was either.
  bool release_shared(const BufferHandle& handle);
  // Every export and import, for a reset or a close (the streams have finished with them). Exports other processes
  // still import are freed at a close, and wait for them after a reset.
  void release_all_shared(bool closing);

  // -- fences (RecordFence / WaitFence); hold buffers_mutex() -----------------------------------------
  // A number for a new stream of this context, which its fences carry.
  [[nodiscard]] std::uint32_t next_stream_id() noexcept { return streams_created_.fetch_add(1) + 1; }
  // A fence at `event`, just recorded on the stream numbered `stream_id`.
  [[nodiscard]] Fence add_fence(std::uint32_t stream_id, EventRef event);
  // Makes `stream` (numbered `stream_id`) wait on the GPU for the fence's event; refuses foreign and stale fences.
  [[nodiscard]] Status wait_fence(cudaStream_t stream, std::uint32_t stream_id, const Fence& fence);

 private:
  CudaContext(DeviceShared& shared, std::shared_ptr<Health> health);
  void start_families(int ordinal);
  BufferOrdering& ordering_of(const BufferHandle& handle);

  const int ordinal_;
  const std::string name_;
  const DeviceOptions options_;
  std::shared_ptr<Health> health_;
  int compute_capability_ = 0;
  std::string gpu_name_;
  std::uint64_t total_memory_ = 0;
  cudaMemPool_t pool_ = nullptr;
  std::shared_ptr<EventPool> events_;
  std::shared_ptr<PinnedPool> pinned_;
  std::shared_ptr<DoneWords> done_words_;  // outlives completions_, whose pending work reads the words
  TargetStates states_;

  std::mutex buffers_mutex_;
  BufferTable table_;
  std::vector<BufferOrdering> ordering_;  // by slot
  MemoryStats stats_;

  struct FencePoint {
    std::uint32_t stream_id = 0;
    EventRef event;
  };
  // Fences that may not have been reached yet, by sequence; one missing from here (and not newer than the last)
  // has been reached, and waiting for it is a no-op. Pruned as it grows, so it holds about the work in flight.
  std::map<std::uint64_t, FencePoint> fences_;
  std::uint64_t fences_recorded_ = 0;
  std::uint64_t write_versions_ = 0;  // never reset, so that no version names two contents
  std::size_t fence_prune_at_ = 0;
  std::atomic<std::uint32_t> streams_created_{0};
  struct SharedAllocation {
    void* memory = nullptr;
    std::uint64_t bytes = 0;
    ExportedBuffer exported;                      // an export's
    std::unique_ptr<sharing::ImportWatch> watch;  // an import's
  };
  // By buffer generation. Retired exports wait there for their importers before cudaFree (freeing memory another
  // process maps is undefined behaviour in CUDA).
  std::unordered_map<std::uint64_t, SharedAllocation> exports_;
  std::unordered_map<std::uint64_t, SharedAllocation> imports_;
  std::vector<SharedAllocation> retired_exports_;
  void free_unimported_exports();
  void retire_exports();  // every export's generation retired, its memory kept in retired_exports_
  // The families' work begun as the context opened (a library's load), joined when it closes.
  std::vector<std::jthread> started_with_context_;

  // Declared last: destroyed first, so pending work is answered while everything it uses still exists.
  std::unique_ptr<CompletionQueue> completions_;
};

}  // namespace accel::device::cuda
