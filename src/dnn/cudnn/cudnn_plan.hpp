// A graph lowered to cudnn-frontend and built into an execution plan; the one place that includes the
// frontend's headers (cudnn_plan.cpp), so nothing else pays for their compile time.
//
// Lifecycle, each a named stage returning a Status: lower (our graph -> frontend graph) -> validate ->
// build_operation_graph -> create_execution_plans (heuristics mode A, then the fallback list) -> check_support
// -> build_plans. "Not supported by cuDNN for this configuration" is reported from check_support, before
// anything expensive. A built plan is serialised where cuDNN allows it (see serialize_plan) so that another
// process can load it instead of running heuristics and building again.
#pragma once

#include <cudnn.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "accel/core/library_version.hpp"
#include "accel/core/result.hpp"
#include "accel/dnn/graph.hpp"

namespace accel::dnn::cudnn {

class CudnnPlan;

struct BuiltPlan {
  std::shared_ptr<const CudnnPlan> plan;
  // The frontend's serialisation of the built plan; empty where the engine cannot be serialised, and then
  // `unserializable_reason` says why.
  std::vector<std::byte> serialized;
  std::string unserializable_reason;
};

// Lowers and builds `graph` for the device of `handle`.
[[nodiscard]] Result<BuiltPlan> build_plan(const Graph& graph, cudnnHandle_t handle);
// Rebuilds a plan from its serialisation. Which graph, cuDNN version and device the bytes belong to is the
// caller's key (see DnnPlans); cuDNN itself refuses bytes it cannot read.
// `engine` is the name build_plan's plan had (a deserialised plan cannot tell it).
[[nodiscard]] Result<std::shared_ptr<const CudnnPlan>> load_plan(std::span<const std::byte> bytes, std::string engine,
                                                                 cudnnHandle_t handle);

[[nodiscard]] std::int64_t workspace_bytes(const CudnnPlan& plan) noexcept;
// The engine cuDNN chose, e.g. "eng0_k2=1_k3=0" (for tests and benchmarks).
[[nodiscard]] const std::string& engine_name(const CudnnPlan& plan) noexcept;

// Enqueues the plan on the handle's stream with every bound tensor's device address.
[[nodiscard]] Status execute(const CudnnPlan& plan, cudnnHandle_t handle,
                             std::span<const std::pair<std::uint32_t, void*>> addresses, void* workspace);

// "cuDNN 9.14.0 (frontend 1.23.0)": the library this process runs with, not the headers it was built with (part
// of the plans' disk keys).
[[nodiscard]] std::string cudnn_library();
// The same as a device lists it: {"cuDNN", "9.14.0"}, {"cudnn-frontend", "1.23.0"}.
[[nodiscard]] std::vector<LibraryVersion> cudnn_libraries();

}  // namespace accel::dnn::cudnn
