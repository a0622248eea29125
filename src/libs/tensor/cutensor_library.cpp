#include "libs/tensor/cutensor_library.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace accel::tensor {
namespace {

struct Loaded {
  CutensorApi api;
  Status status;
};

// Resolves every entry point of `handle`, or says which is missing (a cuTENSOR older than 2.x, say).
Status resolve(void* handle, CutensorApi& api) {
#define ACCEL_CUTENSOR_RESOLVE(name)                                     \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(handle, #name)); \
  if (api.name == nullptr) return unavailable(fmt::format("libcutensor has no symbol {}", #name));
  ACCEL_CUTENSOR_FUNCTIONS(ACCEL_CUTENSOR_RESOLVE)
#undef ACCEL_CUTENSOR_RESOLVE
  const std::pair<const char*, cutensorComputeDescriptor_t*> descriptors[] = {
      {"CUTENSOR_COMPUTE_DESC_16F", &api.compute_16f},   {"CUTENSOR_COMPUTE_DESC_16BF", &api.compute_16bf},
      {"CUTENSOR_COMPUTE_DESC_TF32", &api.compute_tf32}, {"CUTENSOR_COMPUTE_DESC_3XTF32", &api.compute_3xtf32},
      {"CUTENSOR_COMPUTE_DESC_32F", &api.compute_32f},   {"CUTENSOR_COMPUTE_DESC_64F", &api.compute_64f}};
  for (const auto& [name, slot] : descriptors) {
    const auto* variable = static_cast<const cutensorComputeDescriptor_t*>(dlsym(handle, name));
    if (variable == nullptr) return unavailable(fmt::format("libcutensor has no symbol {}", name));
    *slot = *variable;
  }
  if (api.cutensorGetVersion() / 10000 != CUTENSOR_MAJOR) {
    return unavailable(fmt::format("libcutensor is version {}; the tensor family was built for {}.x",
                                   api.cutensorGetVersion(), CUTENSOR_MAJOR));
  }
  return Status();
}

Loaded load() {
  std::vector<std::string> candidates;
  if (const char* named = std::getenv("ACCEL_CUTENSOR_LIBRARY"); named != nullptr && *named != '\0') {
    candidates.emplace_back(named);
  }
  candidates.emplace_back("libcutensor.so.2");
  candidates.emplace_back(ACCEL_CUTENSOR_BUILD_PATH);
  std::string tried;
  for (const std::string& candidate : candidates) {
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* error = dlerror();
      tried += fmt::format("; {}", error != nullptr ? error : candidate);
      continue;
    }
    Loaded loaded;
    loaded.status = resolve(handle, loaded.api);
    if (loaded.status.ok()) return loaded;
    tried += fmt::format("; {}: {}", candidate, loaded.status.message());
    dlclose(handle);
  }
  return {.status = unavailable(fmt::format(
              "cuTENSOR's library could not be loaded (scripts/gpu-send-cutensor sends it to a machine without it){}",
              tried))};
}

}  // namespace

Result<const CutensorApi*> cutensor_api() {
  static const Loaded loaded = load();
  if (!loaded.status.ok()) return loaded.status;
  return &loaded.api;
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
