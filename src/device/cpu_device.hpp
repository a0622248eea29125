// The CPU device's context state: host memory behind the buffer table, copies, and OpenBLAS GEMM. Runs on its
// actor's thread; requests execute in the order they arrive.
#pragma once

#include <memory>

#include "accel/device/protocol.hpp"
#include "device/buffer_table.hpp"
#include "device/device_shared.hpp"

namespace accel::device {

class CpuDevice final : public DeviceProtocol::Handler {
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

  // -- copies --------------------------------------------------------------------------
  Result<Done> handle(CopyToDevice& request) override;
  Result<Done> handle(CopyToHost& request) override;
  Result<Done> handle(CopyOnDevice& request) override;

  // -- libraries -----------------------------------------------------------------------
  Result<Done> handle(Gemm& request) override;
  Result<Done> handle(ConvFwd& request) override;
  Result<Done> handle(ConvBwdData& request) override;
  Result<Done> handle(ConvBwdFilter& request) override;
  Result<Done> handle(RunGraph& request) override;
  Result<Done> handle(LaunchKernel& request) override;
  Result<Done> handle(CutlassGemm& request) override;
  Result<Done> handle(CutlassGroupedGemm& request) override;
  Result<Done> handle(CutlassConv& request) override;
  Result<Done> handle(InjectFault& request) override;

 private:
  Result<Done> run_graph(const Result<std::shared_ptr<const dnn::Graph>>& graph,
                         std::span<const dnn::TensorBinding> bindings);
  template <class Conv>
  Result<Done> run_conv(const Conv& request) {
    return run_graph(dnn::graph_of(request), dnn::bindings_of(request));
  }
  void release(const BufferView& view);
  void collect_released();
  void free_all() noexcept;

  std::shared_ptr<DeviceShared> shared_;
  BufferTable table_;
  MemoryStats stats_;
};

[[nodiscard]] std::shared_ptr<DeviceBackend> make_cpu_backend();

}  // namespace accel::device
