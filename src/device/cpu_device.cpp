#include "device/cpu_device.hpp"

#include <fmt/format.h>

#include <cstring>
#include <new>
#include <type_traits>
#include <variant>

#include "device/order_meeting.hpp"
#include "device/recorded_steps.hpp"
#include "operation/host_slack.hpp"

namespace accel::device {
namespace {

constexpr std::align_val_t kAlignment{64};

// With kHostSlackBytes on each side (operation/host_slack.hpp says why).
void* allocate_host(std::uint64_t bytes) {
  void* base = ::operator new(bytes + 2 * kHostSlackBytes, kAlignment, std::nothrow);
  return base == nullptr ? nullptr : static_cast<std::byte*>(base) + kHostSlackBytes;
}

void free_host(void* data) { ::operator delete(static_cast<std::byte*>(data) - kHostSlackBytes, kAlignment); }

}  // namespace

CpuDevice::CpuDevice(std::shared_ptr<DeviceShared> shared)
    : shared_(std::move(shared)), table_(shared_->id, shared_->next_epoch(), shared_->name) {}

CpuDevice::~CpuDevice() { free_all(); }

void CpuDevice::release(const BufferHandle& handle, const BufferView& view) {
  --stats_.live_buffers;
  imports_.erase(handle.generation);
  const bool exported = exports_.erase(handle.generation) != 0;  // retires the export
  if (view.data == nullptr && !exported) return;                 // memory another library owns (ShareMemory)
  if (view.data != nullptr) free_host(view.data);
  stats_.in_use_bytes -= view.bytes();
  stats_.reserved_bytes -= view.bytes();
  ++stats_.frees;
}

void CpuDevice::collect_released() {
  for (const BufferHandle& handle : shared_->take_released()) {
    if (Result<BufferView> removed = table_.remove(handle); removed.ok()) release(handle, *removed);
  }
}

void CpuDevice::free_all() noexcept {
  table_.for_each_owned([](const BufferView& view) { free_host(view.data); });
  exports_.clear();
  imports_.clear();
}

Result<BufferHandle> CpuDevice::handle(Allocate& request) {
  collect_released();
  if (request.count == 0) return invalid_argument("Allocate of 0 elements");
  ACCEL_ASSIGN_OR_RETURN(const std::uint64_t bytes, checked_bytes(request.dtype, request.count));
  ACCEL_RETURN_IF_ERROR(check_memory_limit(shared_->name, bytes, shared_->options.memory_limit_bytes, stats_));
  void* data = allocate_host(bytes);
  if (data == nullptr) {
    ++stats_.failed_allocations;
    return Status(Code::resource_exhausted,
                  fmt::format("{}: out of host memory allocating {} bytes", shared_->name, bytes), Source::os);
  }
  stats_.in_use_bytes += bytes;
  stats_.reserved_bytes += bytes;
  stats_.peak_bytes = std::max(stats_.peak_bytes, stats_.in_use_bytes);
  ++stats_.live_buffers;
  ++stats_.allocations;
  const BufferHandle handle = table_.insert(data, request.dtype, request.count);
  table_.written(handle);
  return handle;
}

Result<Done> CpuDevice::handle(Free& request) {
  collect_released();
  ACCEL_ASSIGN_OR_RETURN(BufferView view, table_.remove(request.buffer));
  release(request.buffer, view);
  return Done{};
}

Result<Done> CpuDevice::handle(ResetContext&) {
  free_all();
  shared_->take_released();
  table_ = BufferTable(shared_->id, shared_->next_epoch(), shared_->name);
  stats_ = MemoryStats{.peak_bytes = stats_.peak_bytes};
  return Done{};
}

Result<SharedMemory> CpuDevice::handle(ShareMemory& request) {
  collect_released();
  if (!request.buffer.is_null()) {
    ACCEL_ASSIGN_OR_RETURN(const BufferView view, table_.resolve(request.buffer, "buffer"));
    table_.mark_shared(request.buffer);
    return SharedMemory{.buffer = request.buffer, .address = reinterpret_cast<std::uintptr_t>(view.data)};
  }
  if (request.address == 0) return SharedMemory{};
  if (request.count == 0) return invalid_argument("ShareMemory: adopting 0 elements");
  ACCEL_RETURN_IF_ERROR(checked_bytes(request.dtype, request.count).status());
  ++stats_.live_buffers;
  void* data = reinterpret_cast<void*>(static_cast<std::uintptr_t>(request.address));
  return SharedMemory{.buffer = table_.insert_external(data, request.dtype, request.count), .address = request.address};
}

Result<ExportedBuffer> CpuDevice::handle(ExportBuffer& request) {
  collect_released();
  ACCEL_ASSIGN_OR_RETURN(const BufferView view, table_.resolve(request.buffer, "buffer"));
  if (auto done = exports_.find(request.buffer.generation); done != exports_.end()) return done->second->exported();
  if (imports_.contains(request.buffer.generation)) {
    return failed_precondition(fmt::format(
        "ExportBuffer: {} is imported from another process; pass on the ExportedBuffer it was imported from",
        to_string(request.buffer)));
  }
  ACCEL_ASSIGN_OR_RETURN(std::unique_ptr<sharing::ExportedHostMemory> memory,
                         sharing::ExportedHostMemory::create(view.dtype, view.count));
  std::memcpy(memory->data(), view.data, view.bytes());
  ACCEL_ASSIGN_OR_RETURN(void* old, table_.hand_over(request.buffer, memory->data()));
  free_host(old);
  const ExportedBuffer exported = memory->exported();
  exports_.emplace(request.buffer.generation, std::move(memory));
  return exported;
}

Result<BufferHandle> CpuDevice::handle(ImportBuffer& request) {
  collect_released();
  const ExportedBuffer& exported = request.exported;
  ACCEL_RETURN_IF_ERROR(sharing::check_import(exported, DeviceKind::cpu, shared_->name));
  ACCEL_ASSIGN_OR_RETURN(std::unique_ptr<sharing::ImportedHostMemory> memory,
                         sharing::ImportedHostMemory::open(exported));
  const BufferHandle handle = table_.insert_imported(memory->data(), exported.dtype, exported.count, memory->watch());
  ++stats_.live_buffers;
  imports_.emplace(handle.generation, std::move(memory));
  return handle;
}

Result<DeviceInfo> CpuDevice::handle(QueryDevice&) {
  collect_released();
  DeviceInfo info{.kind = DeviceKind::cpu,
                  .ordinal = shared_->options.ordinal,
                  .device_id = shared_->id,
                  .epoch = table_.epoch(),
                  .name = shared_->name,
                  .memory_capacity_bytes = shared_->options.memory_limit_bytes,
                  .memory = stats_};
  LibraryReport report;
  ForEachRequest<LibraryRequests>::apply([&]<class Request>() {
    if constexpr (requires { Operation<Request>::describe_cpu(report); }) Operation<Request>::describe_cpu(report);
  });
  info.libraries = std::move(report.libraries);
  info.caches = std::move(report.caches);
  return info;
}

Result<Done> CpuDevice::handle(CopyToDevice& request) {
  if (request.source.data == nullptr && request.source.count != 0)
    return invalid_argument("CopyToDevice: null host source");
  ACCEL_ASSIGN_OR_RETURN(BufferView dst, table_.resolve_range(request.destination, "destination",
                                                              request.destination_offset, request.source.count));
  ACCEL_RETURN_IF_ERROR(check_host_dtype(request.source.dtype, dst.dtype, "the host source"));
  const std::size_t element = size_of(dst.dtype);
  if (request.source.count != 0) {
    std::memcpy(static_cast<std::byte*>(dst.data) + request.destination_offset * element, request.source.data,
                request.source.count * element);
    table_.written(request.destination);
  }
  return Done{};
}

Result<Done> CpuDevice::handle(CopyToHost& request) {
  if (request.destination.data == nullptr && request.destination.count != 0) {
    return invalid_argument("CopyToHost: null host destination");
  }
  ACCEL_ASSIGN_OR_RETURN(
      BufferView src, table_.resolve_range(request.source, "source", request.source_offset, request.destination.count));
  ACCEL_RETURN_IF_ERROR(check_host_dtype(request.destination.dtype, src.dtype, "the host destination"));
  const std::size_t element = size_of(src.dtype);
  if (request.destination.count != 0) {
    std::memcpy(request.destination.data, static_cast<const std::byte*>(src.data) + request.source_offset * element,
                request.destination.count * element);
  }
  return Done{};
}

Result<Done> CpuDevice::handle(CopyOnDevice& request) {
  if (request.source.device != shared_->id && !request.source.is_null()) {
    return invalid_argument(fmt::format(
        "CopyOnDevice on {}: the source {} is another device's buffer; the CPU device copies only between its own "
        "(accel::copy_between_devices copies between devices)",
        shared_->name, to_string(request.source)));
  }
  ACCEL_ASSIGN_OR_RETURN(BufferView src,
                         table_.resolve_range(request.source, "source", request.source_offset, request.count));
  ACCEL_ASSIGN_OR_RETURN(BufferView dst, table_.resolve_range(request.destination, "destination",
                                                              request.destination_offset, request.count));
  if (src.dtype != dst.dtype) {
    return invalid_argument(
        fmt::format("CopyOnDevice from {} to {}: element types differ", to_string(src.dtype), to_string(dst.dtype)));
  }
  const std::size_t element = size_of(src.dtype);
  if (request.count != 0) {
    std::memmove(static_cast<std::byte*>(dst.data) + request.destination_offset * element,
                 static_cast<const std::byte*>(src.data) + request.source_offset * element, request.count * element);
    table_.written(request.destination);
  }
  return Done{};
}

Result<Fence> CpuDevice::handle(RecordFence&) {
  return Fence{.device = shared_->id, .stream = 0, .epoch = table_.epoch(), .sequence = ++fences_recorded_};
}

Result<Done> CpuDevice::handle(WaitFence& request) {
  ACCEL_RETURN_IF_ERROR(table_.check_fence(request.fence, fences_recorded_));
  return Done{};
}

Result<Done> CpuDevice::handle(JoinOrders& request) {
  ACCEL_RETURN_IF_ERROR(join_orders(request));
  return Done{};
}

Result<Done> CpuDevice::handle(InjectFault& request) {
  if (request.kind == FaultKind::illegal_address) {
    return not_supported(fmt::format("{}: FaultKind::illegal_address exists for CUDA devices only", shared_->name));
  }
  return not_supported(fmt::format("{}: FaultKind::{} needs an isolated device (Isolation::worker_process)",
                                   shared_->name, to_string(request.kind)));
}

Result<Done> CpuDevice::handle(RunRecorded& request) {
  collect_released();
  ACCEL_RETURN_IF_ERROR(check_recorded_buffers(table_, request));
  Status first;
  for (std::size_t i = 0; i < request.steps.size(); ++i) {
    RecordedStep current = request.steps[i];  // the requests' handlers take them to change
    const Result<Done> ran = std::visit(
        [&]<class Step>(Step& step) -> Result<Done> {
          if constexpr (std::is_same_v<Step, CopyOnDevice> || std::is_same_v<Step, CopyToDevice> ||
                        std::is_same_v<Step, CopyToHost>) {
            return handle(step);
          } else {
            return handle_operation(step);
          }
        },
        current);
    if (!ran.ok() && first.ok()) first = step_failure(i, request.steps[i], ran.status());
  }
  ACCEL_RETURN_IF_ERROR(first);
  return Done{};
}

namespace {

class CpuBackend final : public DeviceBackend {
 public:
  Result<std::unique_ptr<DeviceProtocol::Handler>> make_stream_state(std::shared_ptr<DeviceShared> shared) override {
    return std::make_unique<CpuDevice>(std::move(shared));
  }
  bool has_streams() const noexcept override { return false; }
  Status health() const override { return Status(); }
};

}  // namespace

std::shared_ptr<DeviceBackend> make_cpu_backend() { return std::make_shared<CpuBackend>(); }

}  // namespace accel::device
