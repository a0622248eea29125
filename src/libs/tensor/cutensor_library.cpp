#include "libs/tensor/cutensor_library.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "operation/runtime_library.hpp"

namespace accel::tensor {
namespace {

// No usable cuTENSOR on this machine: unavailable, from cuTENSOR, with no library code (a failing cuTENSOR call has
// one), so that a caller can tell the library's absence from its failures.
Status library_absent(std::string message) { return Status(Code::unavailable, std::move(message), Source::cutensor); }

// Resolves every entry point of `handle`, or says which is missing (a cuTENSOR older than 2.x, say).
Status resolve(void* handle, CutensorApi& api) {
#define ACCEL_CUTENSOR_RESOLVE(name) ACCEL_RESOLVE_RUNTIME_SYMBOL(api, handle, "cuTENSOR", name)
  ACCEL_CUTENSOR_FUNCTIONS(ACCEL_CUTENSOR_RESOLVE)
#undef ACCEL_CUTENSOR_RESOLVE
  const std::pair<const char*, cutensorComputeDescriptor_t*> descriptors[] = {
      {"CUTENSOR_COMPUTE_DESC_16F", &api.compute_16f},   {"CUTENSOR_COMPUTE_DESC_16BF", &api.compute_16bf},
      {"CUTENSOR_COMPUTE_DESC_TF32", &api.compute_tf32}, {"CUTENSOR_COMPUTE_DESC_3XTF32", &api.compute_3xtf32},
      {"CUTENSOR_COMPUTE_DESC_32F", &api.compute_32f},   {"CUTENSOR_COMPUTE_DESC_64F", &api.compute_64f}};
  for (const auto& [name, slot] : descriptors) {
    ACCEL_ASSIGN_OR_RETURN(void* const variable, runtime_symbol(handle, "cuTENSOR", name));
    *slot = *static_cast<const cutensorComputeDescriptor_t*>(variable);
  }
  if (api.cutensorGetVersion() / 10000 != CUTENSOR_MAJOR) {
    return library_absent(fmt::format("libcutensor is version {}; the tensor family was built for {}.x",
                                      api.cutensorGetVersion(), CUTENSOR_MAJOR));
  }
  return Status();
}

Status load(CutensorApi& api) {
  std::vector<std::string> candidates;
  if (const char* named = std::getenv("ACCEL_CUTENSOR_LIBRARY"); named != nullptr && *named != '\0') {
    candidates.emplace_back(named);
  }
  candidates.emplace_back("libcutensor.so.2");
  candidates.emplace_back(ACCEL_CUTENSOR_BUILD_PATH);
  const Status loaded =
      open_runtime_library("cuTENSOR", candidates, [&](void* handle) { return resolve(handle, api); });
  if (loaded.ok()) return loaded;
  return library_absent(
      fmt::format("{} (scripts/gpu-send-cutensor sends it to a machine without it)", loaded.message()));
}

}  // namespace

Result<const CutensorApi*> cutensor_api() {
  static RuntimeLibrary<CutensorApi> library(load);
  return library.get();
}

Status cutensor_status(const CutensorApi& api, cutensorStatus_t status, std::string_view what) {
  if (status == CUTENSOR_STATUS_SUCCESS) return Status();
  const std::string message =
      fmt::format("{}: {} ({})", what, api.cutensorGetErrorString(status), static_cast<int>(status));
  switch (status) {
    case CUTENSOR_STATUS_ALLOC_FAILED:
    case CUTENSOR_STATUS_INSUFFICIENT_WORKSPACE:
      return Status(Code::resource_exhausted, message, Source::cutensor, status);
    case CUTENSOR_STATUS_INVALID_VALUE: return Status(Code::invalid_argument, message, Source::cutensor, status);
    case CUTENSOR_STATUS_ARCH_MISMATCH:
    case CUTENSOR_STATUS_NOT_SUPPORTED: return Status(Code::not_supported, message, Source::cutensor, status);
    case CUTENSOR_STATUS_NOT_INITIALIZED:
    case CUTENSOR_STATUS_INSUFFICIENT_DRIVER: return Status(Code::unavailable, message, Source::cutensor, status);
    default: return Status(Code::internal, message, Source::cutensor, status);
  }
}

LibraryVersion cutensor_library(const CutensorApi& api) {
  const std::size_t version = api.cutensorGetVersion();
  return {.name = "cuTENSOR", .version = fmt::format("{}.{}.{}", version / 10000, version / 100 % 100, version % 100)};
}

}  // namespace accel::tensor
