#include "device/buffer_table.hpp"

#include <fmt/format.h>

#include <atomic>

#include "device/sharing/export_table.hpp"

namespace accel {

std::string to_string(const Fence& fence) {
  if (fence.is_null()) return "null fence";
  return fmt::format("fence #{} (device {}, stream {}, epoch {})", fence.sequence, fence.device, fence.stream,
                     fence.epoch);
}

}  // namespace accel

namespace accel::device {
namespace {

// Every table's layout tokens, from one count for the whole process, so that no two tables share one.
std::atomic<std::uint64_t> layouts_given{0};
std::uint64_t new_layout() { return layouts_given.fetch_add(1, std::memory_order_relaxed) + 1; }

}  // namespace

Status BufferTable::check_fence(const Fence& fence, std::uint64_t last_recorded) const {
  if (fence.is_null()) return invalid_argument("WaitFence: the fence is null (RecordFence answers one)");
  if (fence.device != device_id_) {
    return invalid_argument(fmt::format("WaitFence: {} is of another device; this is {} (device {})", to_string(fence),
                                        device_name_, device_id_));
  }
  if (fence.epoch != epoch_) {
    return stale_handle(
        fmt::format("WaitFence: {} was recorded in context epoch {} of {}; the context has been "
                    "rebuilt since (now epoch {})",
                    to_string(fence), fence.epoch, device_name_, epoch_));
  }
  if (fence.sequence > last_recorded) {
    return invalid_argument(fmt::format("WaitFence: {} was never recorded by {} (its last fence is #{})",
                                        to_string(fence), device_name_, last_recorded));
  }
  return Status();
}

BufferTable::BufferTable(std::uint32_t device_id, std::uint32_t epoch, std::string device_name)
    : device_id_(device_id), epoch_(epoch), device_name_(std::move(device_name)), layout_(new_layout()) {}

BufferHandle BufferTable::insert(void* data, DType dtype, std::uint64_t count) {
  std::uint32_t index;
  if (!free_slots_.empty()) {
    index = free_slots_.back();
    free_slots_.pop_back();
  } else {
    index = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  Slot& slot = slots_[index];
  slot = Slot{data, dtype, count, next_generation_++, true};
  return BufferHandle{device_id_, index, epoch_, slot.generation, dtype, count};
}

BufferHandle BufferTable::insert_external(void* data, DType dtype, std::uint64_t count) {
  const BufferHandle handle = insert(data, dtype, count);
  slots_[handle.slot].external = true;
  slots_[handle.slot].shared = true;
  return handle;
}

BufferHandle BufferTable::insert_imported(void* data, DType dtype, std::uint64_t count,
                                          const sharing::ImportWatch& watch) {
  const BufferHandle handle = insert_external(data, dtype, count);
  slots_[handle.slot].watch = &watch;
  return handle;
}

Result<void*> BufferTable::hand_over(const BufferHandle& h, void* data) {
  ACCEL_RETURN_IF_ERROR(resolve(h, "buffer").status());
  Slot& slot = slots_[h.slot];
  if (slot.shared) {
    return failed_precondition(fmt::format("{} is memory another library holds; it cannot move", to_string(h)));
  }
  void* old = slot.data;
  slot.data = data;
  slot.external = true;
  slot.shared = true;
  layout_ = new_layout();
  return old;
}

namespace {
std::atomic<std::uint64_t> versions_given{0};
}  // namespace

std::uint64_t BufferTable::version(const BufferHandle& h) const {
  if (!resolve(h, "buffer").ok() || slots_[h.slot].shared) return 0;
  return slots_[h.slot].version;
}

void BufferTable::written(const BufferHandle& h) {
  if (resolve(h, "buffer").ok()) slots_[h.slot].version = versions_given.fetch_add(1, std::memory_order_relaxed) + 1;
}

bool BufferTable::is_external(const BufferHandle& h) const {
  return resolve(h, "buffer").ok() && slots_[h.slot].external;
}

bool BufferTable::is_imported(const BufferHandle& h) const {
  return resolve_slot(h, "buffer").ok() && slots_[h.slot].watch != nullptr;
}

void BufferTable::mark_shared(const BufferHandle& h) {
  if (resolve(h, "buffer").ok()) slots_[h.slot].shared = true;
}

bool BufferTable::is_shared(const BufferHandle& h) const { return resolve(h, "buffer").ok() && slots_[h.slot].shared; }

Result<BufferView> BufferTable::resolve(const BufferHandle& h, std::string_view operand) const {
  ACCEL_ASSIGN_OR_RETURN(BufferView view, resolve_slot(h, operand));
  if (const sharing::ImportWatch* watch = slots_[h.slot].watch; watch != nullptr && !watch->live())
    return watch->check(fmt::format("operand '{}' ({}, imported)", operand, to_string(h)));
  return view;
}

Result<BufferView> BufferTable::resolve_slot(const BufferHandle& h, std::string_view operand) const {
  ACCEL_RETURN_IF_ERROR(check_not_null(operand, h));
  if (h.device != device_id_) {
    return invalid_argument(fmt::format("operand '{}' is {} of another device; this is {} (device {})", operand,
                                        to_string(h), device_name_, device_id_));
  }
  if (h.epoch != epoch_) {
    return stale_handle(
        fmt::format("operand '{}' is {}, allocated in context epoch {} of {}; the context has been "
                    "rebuilt since (now epoch {}) and every buffer of the old one is gone",
                    operand, to_string(h), h.epoch, device_name_, epoch_));
  }
  if (h.slot >= slots_.size() || !slots_[h.slot].live || slots_[h.slot].generation != h.generation) {
    return stale_handle(fmt::format("operand '{}' is {}, which has been freed", operand, to_string(h)));
  }
  const Slot& slot = slots_[h.slot];
  if (slot.dtype != h.dtype || slot.count != h.count) {
    return invalid_argument(fmt::format("operand '{}' claims {} x {}, but the buffer holds {} x {}", operand, h.count,
                                        to_string(h.dtype), slot.count, to_string(slot.dtype)));
  }
  return BufferView{slot.data, slot.dtype, slot.count};
}

Result<BufferView> BufferTable::resolve_range(const BufferHandle& h, std::string_view operand, std::uint64_t offset,
                                              std::uint64_t count) const {
  ACCEL_ASSIGN_OR_RETURN(BufferView view, resolve(h, operand));
  ACCEL_RETURN_IF_ERROR(check_operand_range(operand, h, offset, count));  // h's count is the buffer's once resolved
  return view;
}

Result<std::vector<BufferView>> BufferTable::resolve(const Operands& operands) const {
  std::vector<BufferView> views(operands.size());
  std::size_t index = 0;
  for (const Operand& operand : operands.list()) {
    BufferView& view = views[index++];
    if (operand.optional && operand.buffer.is_null()) continue;
    ACCEL_ASSIGN_OR_RETURN(view, resolve(operand.buffer, operand.name));
    ACCEL_RETURN_IF_ERROR(check_against_handle(operand));  // the handle's claims are the buffer's once resolved
  }
  for (const Operand& written : operands.list()) {
    if (!written.exclusive) continue;
    for (const Operand& other : operands.list()) {
      if (&other != &written && same_buffer(other.buffer, written.buffer)) {
        return invalid_argument(fmt::format("operand '{}' aliases operand '{}': the output must not share a buffer",
                                            written.name, other.name));
      }
    }
  }
  return views;
}

Status BufferTable::replace_memory(const BufferHandle& h, void* data) {
  ACCEL_RETURN_IF_ERROR(resolve(h, "buffer").status());
  if (slots_[h.slot].shared) {
    return failed_precondition(fmt::format("{} is memory another library holds; it cannot be replaced", to_string(h)));
  }
  slots_[h.slot].data = data;
  layout_ = new_layout();
  return Status();
}

Result<BufferView> BufferTable::remove(const BufferHandle& h) {
  ACCEL_ASSIGN_OR_RETURN(BufferView view, resolve_slot(h, "buffer"));
  if (slots_[h.slot].external) view.data = nullptr;
  slots_[h.slot].live = false;
  slots_[h.slot].external = false;
  slots_[h.slot].shared = false;
  slots_[h.slot].watch = nullptr;
  slots_[h.slot].data = nullptr;
  free_slots_.push_back(h.slot);
  layout_ = new_layout();
  return view;
}

Status check_host_dtype(DType host, DType buffer, std::string_view what) {
  if (host == buffer) return Status();
  return invalid_argument(
      fmt::format("{} holds {} elements but the buffer holds {}", what, to_string(host), to_string(buffer)));
}

Status check_memory_limit(std::string_view device, std::uint64_t bytes, std::uint64_t limit, MemoryStats& stats) {
  if (limit == 0 || (bytes <= limit && stats.in_use_bytes <= limit - bytes)) return Status();
  ++stats.failed_allocations;
  return resource_exhausted(fmt::format("{}: allocating {} bytes would exceed the memory limit of {} bytes ({} in use)",
                                        device, bytes, limit, stats.in_use_bytes));
}

Result<std::uint64_t> checked_bytes(DType dtype, std::uint64_t count) {
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(count, static_cast<std::uint64_t>(size_of(dtype)), &bytes)) {
    return invalid_argument(fmt::format("{} elements of {} overflow a 64-bit byte count", count, to_string(dtype)));
  }
  return bytes;
}

}  // namespace accel::device
