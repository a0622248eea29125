// The device-side table behind BufferHandle: slot -> (memory, dtype, count, generation). Owned by one device
// context and touched only on its actor's thread, so it takes no locks. It does not own the memory; the
// context allocates and frees it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "accel/core/result.hpp"
#include "accel/device/buffer.hpp"
#include "accel/device/requests.hpp"
#include "operation/operation.hpp"

namespace accel::device {

namespace sharing {
class ImportWatch;
}  // namespace sharing

class BufferTable {
 public:
  BufferTable(std::uint32_t device_id, std::uint32_t epoch, std::string device_name);

  [[nodiscard]] BufferHandle insert(void* data, DType dtype, std::uint64_t count);
  // A buffer over memory another library owns (ShareMemory's adopt): remove() and for_each_owned() give it back
  // as null memory, which nobody here frees, and replace_memory() refuses it.
  [[nodiscard]] BufferHandle insert_external(void* data, DType dtype, std::uint64_t count);
  // A buffer over another process's exported memory (ImportBuffer): external and shared, and every resolve() checks
  // `watch` first, so that a use after the exporter freed it is `stale_handle`. `watch` must outlive the entry.
  [[nodiscard]] BufferHandle insert_imported(void* data, DType dtype, std::uint64_t count,
                                             const sharing::ImportWatch& watch);
  // Moves a live buffer into `data`, memory the caller keeps elsewhere (an export's), and answers the old memory for
  // the caller to free: from then on the buffer is external and shared. Refused for shared memory.
  [[nodiscard]] Result<void*> hand_over(const BufferHandle& handle, void* data);
  // Whether `handle` names a live buffer over memory another library owns.
  [[nodiscard]] bool is_external(const BufferHandle& handle) const;
  // Marks a live buffer whose address another library holds (an export; adopted memory is from the start): it may
  // change behind the device's back, so no version may vouch for its contents, and its memory is never replaced.
  void mark_shared(const BufferHandle& handle);
  [[nodiscard]] bool is_shared(const BufferHandle& handle) const;

  // The CPU device's versions of a buffer's contents (BufferView::version; a CUDA context keeps its own, in stream
  // order): written() gives the buffer a new one, from a count kept for the whole process and never reused, so that
  // (address, version) names contents even across devices; memory another library holds is always version 0.
  [[nodiscard]] std::uint64_t version(const BufferHandle& handle) const;
  void written(const BufferHandle& handle);

  // Checks that `handle` names a live buffer of this context; `operand` names it in the error.
  [[nodiscard]] Result<BufferView> resolve(const BufferHandle& handle, std::string_view operand) const;

  // resolve(), plus: elements [offset, offset + count) lie inside the buffer.
  [[nodiscard]] Result<BufferView> resolve_range(const BufferHandle& handle, std::string_view operand,
                                                 std::uint64_t offset, std::uint64_t count) const;

  // Every operand of a request resolved, in its order (an absent optional one as an empty view): live, of this
  // context, holding the range and element type the request needs.
  [[nodiscard]] Result<std::vector<BufferView>> resolve(const Operands& operands) const;

  // Moves the buffer into `data`, memory of its size; the caller frees the old memory. Refused for shared memory.
  [[nodiscard]] Status replace_memory(const BufferHandle& handle, void* data);

  // Forgets the buffer and returns its memory for the caller to free (null data: external memory, not ours). An
  // imported buffer is removed even once its export is stale.
  [[nodiscard]] Result<BufferView> remove(const BufferHandle& handle);

  // Checks that `fence` was recorded in this context, whose last fence was number `last_recorded`: the same
  // identity checks as a buffer handle's, so that foreign and stale fences are refused alike on every device.
  [[nodiscard]] Status check_fence(const Fence& fence, std::uint64_t last_recorded) const;

  // Each live buffer whose memory this context allocated (not external memory), for freeing them all.
  template <class F>
  void for_each_owned(F&& f) const {
    for (const Slot& slot : slots_)
      if (slot.live && !slot.external) f(BufferView{slot.data, slot.dtype, slot.count});
  }

  // A token of the memory live handles resolve to, which no two tables share: it changes whenever a buffer is removed
  // or moved (remove, hand_over, replace_memory). While it stays the same, a handle that resolved once resolves to
  // the same memory, unless it is imported: its exporter may free it at any time, and resolve() asks each time.
  [[nodiscard]] std::uint64_t layout() const noexcept { return layout_; }
  // Whether `handle` names a live buffer over another process's exported memory (insert_imported).
  [[nodiscard]] bool is_imported(const BufferHandle& handle) const;

  [[nodiscard]] std::uint32_t epoch() const noexcept { return epoch_; }
  [[nodiscard]] std::uint32_t device_id() const noexcept { return device_id_; }
  [[nodiscard]] std::uint64_t live_count() const noexcept { return slots_.size() - free_slots_.size(); }

 private:
  struct Slot {
    void* data = nullptr;
    DType dtype = DType::f32;
    std::uint64_t count = 0;
    std::uint64_t generation = 0;
    bool live = false;
    std::uint64_t version = 0;  // written()'s; 0 until the first write
    bool external = false;
    bool shared = false;
    const sharing::ImportWatch* watch = nullptr;  // imported memory: the exporter's generation, checked on use
  };

  // resolve() without the import's check.
  [[nodiscard]] Result<BufferView> resolve_slot(const BufferHandle& handle, std::string_view operand) const;

  std::uint32_t device_id_;
  std::uint32_t epoch_;
  std::string device_name_;
  std::uint64_t next_generation_ = 1;
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::uint64_t layout_;
};

// invalid_argument unless host memory of `host` elements may be copied to or from a buffer of `buffer` ones.
[[nodiscard]] Status check_host_dtype(DType host, DType buffer, std::string_view what);

// resource_exhausted (and one more failed allocation counted) if allocating `bytes` would take the memory in
// use past `limit`; 0 means no limit.
[[nodiscard]] Status check_memory_limit(std::string_view device, std::uint64_t bytes, std::uint64_t limit,
                                        MemoryStats& stats);

// Bytes for `count` elements of `dtype`, or invalid_argument if that overflows.
[[nodiscard]] Result<std::uint64_t> checked_bytes(DType dtype, std::uint64_t count);

}  // namespace accel::device
