#include "device/device_options_codec.hpp"

#include <fmt/format.h>

namespace accel::device {
namespace {

template <class Enum>
bool in_range(Enum value, Enum last) {
  return static_cast<std::uint8_t>(value) <= static_cast<std::uint8_t>(last);
}

}  // namespace

void encode(ByteWriter& out, const WorkerSetup& setup) {
  const DeviceOptions& o = setup.options;
  out.pod(setup.device_id).string(setup.name);
  out.pod(o.kind).pod(static_cast<std::int32_t>(o.ordinal)).pod(o.memory_limit_bytes).pod(o.completion);
  out.pod(o.pinned_staging_cache_bytes);
  out.pod(static_cast<std::int64_t>(o.worker.spin.count()));
  out.pod(static_cast<std::int64_t>(o.worker.heartbeat_timeout.count()));
  out.pod(o.blas.plan_cache_capacity).pod(o.blas.workspace_bytes);
  out.pod(o.dnn.plan_cache_capacity).pod(o.dnn.persistent_plans).string(o.dnn.plan_directory);
  out.pod(o.dnn.plan_directory_bytes);
  out.pod(o.jit.persistent_kernels).string(o.jit.kernel_directory).pod(o.jit.kernel_directory_bytes);
  out.pod(o.jit.compile_threads);
  out.pod(o.graph.executable_capacity).pod(o.graph.executable_bytes).pod(o.graph.persistent).string(o.graph.directory);
  out.pod(o.graph.directory_bytes);
}

Result<WorkerSetup> decode_worker_setup(ByteReader& in) {
  WorkerSetup setup;
  DeviceOptions& o = setup.options;
  std::int32_t ordinal = 0;
  std::int64_t spin = 0;
  std::int64_t heartbeat = 0;
  std::uint8_t dnn_persistent = 0;
  std::uint8_t jit_persistent = 0;
  std::uint8_t graph_persistent = 0;
  in.pod(setup.device_id).string(setup.name);
  in.pod(o.kind).pod(ordinal).pod(o.memory_limit_bytes).pod(o.completion).pod(o.pinned_staging_cache_bytes);
  in.pod(spin).pod(heartbeat);
  in.pod(o.blas.plan_cache_capacity).pod(o.blas.workspace_bytes);
  in.pod(o.dnn.plan_cache_capacity).pod(dnn_persistent).string(o.dnn.plan_directory).pod(o.dnn.plan_directory_bytes);
  in.pod(jit_persistent).string(o.jit.kernel_directory).pod(o.jit.kernel_directory_bytes).pod(o.jit.compile_threads);
  in.pod(o.graph.executable_capacity).pod(o.graph.executable_bytes).pod(graph_persistent).string(o.graph.directory);
  in.pod(o.graph.directory_bytes);
  if (!in.finished()) return invalid_argument("the worker's device options are cut short or too long");
  if (!in_range(o.kind, DeviceKind::cuda) || !in_range(o.completion, CompletionStrategy::blocking) ||
      dnn_persistent > 1 || jit_persistent > 1 || graph_persistent > 1 || ordinal < 0 || spin < 0 || heartbeat <= 0) {
    return invalid_argument(fmt::format("the worker's device options for '{}' hold a value out of range", setup.name));
  }
  o.ordinal = ordinal;
  o.isolation = Isolation::in_process;
  o.worker.spin = std::chrono::microseconds(spin);
  o.worker.heartbeat_timeout = std::chrono::milliseconds(heartbeat);
  o.dnn.persistent_plans = dnn_persistent != 0;
  o.jit.persistent_kernels = jit_persistent != 0;
  o.graph.persistent = graph_persistent != 0;
  return setup;
}

}  // namespace accel::device
