// The CPU device's context state: host memory behind the buffer table, copies, and OpenBLAS GEMM. Runs on its
// actor's thread; requests execute in the order they arrive.
#pragma once

#include <fmt/format.h>

#include <memory>
#include <unordered_map>

#include "accel/core/waiting.hpp"
#include "accel/device/protocol.hpp"
#include "device/buffer_table.hpp"
#include "device/device_shared.hpp"
#include "device/library_operations.hpp"
#include "device/operation_handlers.hpp"
#include "device/request_errors.hpp"
#include "device/sharing/host_memory.hpp"

namespace accel::device {

class CpuDevice;
using CpuDeviceBase = OperationHandlers<CpuDevice, DeviceProtocol::Handler, LibraryRequests>;

class CpuDevice final : public CpuDeviceBase {
 public:
  explicit CpuDevice(std::shared_ptr<DeviceShared> shared);
  ~CpuDevice() override;
  CpuDevice(const CpuDevice&) = delete;
  CpuDevice& operator=(const CpuDevice&) = delete;

  // -- memory ------------------------------------------------------------------------
  Result<BufferHandle> handle(Allocate& request) override;
  Result<Done> handle(Free& request) override;
  Result<Done> handle(ResetContext& request) override;
  Result<DeviceInfo> handle(QueryDevice& request) override;
  // One ordered thread: an exported buffer's requests are done when this is answered; a consumer stream is moot.
  Result<SharedMemory> handle(ShareMemory& request) override;
  // Buffers shared with other processes: the memory moves into a POSIX shared memory object at the first export.
  Result<ExportedBuffer> handle(ExportBuffer& request) override;
  Result<BufferHandle> handle(ImportBuffer& request) override;

  // -- copies --------------------------------------------------------------------------
  Result<Done> handle(CopyToDevice& request) override;
  Result<Done> handle(CopyToHost& request) override;
  Result<Done> handle(CopyOnDevice& request) override;

  // -- fences: one ordered thread, so a valid fence is always behind; they are checked all the same ---------
  Result<Fence> handle(RecordFence& request) override;
  Result<Done> handle(WaitFence& request) override;
  Result<Done> handle(JoinOrders& request) override;

  Result<Done> handle(InjectFault& request) override;

  // -- recorded steps: every buffer checked first, then each step as its own request would run -----------
  Result<Done> handle(RunRecorded& request) override;

  // -- library requests: the operation contract, on the CPU --------------------------------
  template <class Request>
  Result<Done> handle_operation(Request& request) {
    return named_for(Request::kName, run_operation(request));
  }
  template <class Request>
  Status dispatch_operation(Request& request, Promise<Done>& reply) {
    return Handles<Request>::dispatch(request, reply);
  }

 private:
  template <class Request>
  Result<Done> run_operation(Request& request) {
    collect_released();
    using Op = Operation<Request>;
    if constexpr (!HasCpuRun<Request>) {
      return not_supported(
          fmt::format("{}: no CPU implementation on {}; it needs a CUDA device", Request::kName, shared_->name));
    } else {
      ACCEL_ASSIGN_OR_RETURN(const typename Op::Checked checked, Op::validate(request));
      if constexpr (requires { Op::check_cpu_support(checked); }) ACCEL_RETURN_IF_ERROR(Op::check_cpu_support(checked));
      Operands operands;
      Op::operands(request, checked, operands);
      ACCEL_ASSIGN_OR_RETURN(std::vector<BufferView> views, table_.resolve(operands));
      for (std::size_t i = 0; i < views.size(); ++i)
        if (!operands.list()[i].buffer.is_null()) views[i].version = table_.version(operands.list()[i].buffer);
      const Status ran = Op::run_cpu(request, checked, views, CpuTarget{.device_name = shared_->name});
      // Written buffers have new contents, even where the run failed part way.
      for (const Operand& operand : operands.list())
        if (operand.access == Access::write && !operand.buffer.is_null()) table_.written(operand.buffer);
      ACCEL_RETURN_IF_ERROR(ran);
      return Done{};
    }
  }
  void release(const BufferHandle& handle, const BufferView& view);
  void collect_released();
  void free_all() noexcept;

  std::shared_ptr<DeviceShared> shared_;
  BufferTable table_;
  MemoryStats stats_;
  std::uint64_t fences_recorded_ = 0;
  // Its requests use every core while it is open: the process's waiters sleep rather than yield (core/waiting.hpp).
  detail::CoreClaim core_claim_;
  // By buffer generation: the exported buffers' memory, and the imported buffers' mappings (the table holds them as
  // external memory).
  std::unordered_map<std::uint64_t, std::unique_ptr<sharing::ExportedHostMemory>> exports_;
  std::unordered_map<std::uint64_t, std::unique_ptr<sharing::ImportedHostMemory>> imports_;
};

[[nodiscard]] std::shared_ptr<DeviceBackend> make_cpu_backend();

}  // namespace accel::device
