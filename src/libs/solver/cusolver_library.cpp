#include "libs/solver/cusolver_library.hpp"

#include <fmt/format.h>

#include <string>

#include "operation/runtime_library.hpp"

namespace accel::solver {
namespace {

Status resolve(void* handle, CusolverApi& api) {
#define ACCEL_CUSOLVER_RESOLVE(name) ACCEL_RESOLVE_RUNTIME_SYMBOL(api, handle, "cuSOLVER", name)
  ACCEL_CUSOLVER_FUNCTIONS(ACCEL_CUSOLVER_RESOLVE)
#undef ACCEL_CUSOLVER_RESOLVE
  // A newer minor version keeps the ABI this build was compiled against; another major may not.
  int major = 0;
  if (api.cusolverGetProperty(MAJOR_VERSION, &major) != CUSOLVER_STATUS_SUCCESS || major != CUSOLVER_VER_MAJOR) {
    return unavailable(fmt::format("it is version {}.x; accel was built for {}.x", major, CUSOLVER_VER_MAJOR));
  }
  return Status();
}

Status load(CusolverApi& api) {
  const std::string candidates[] = {fmt::format("libcusolver.so.{}", CUSOLVER_VER_MAJOR), ACCEL_CUSOLVER_BUILD_PATH};
  return open_runtime_library("cuSOLVER", candidates, [&](void* handle) { return resolve(handle, api); });
}

RuntimeLibrary<CusolverApi>& library() {
  static RuntimeLibrary<CusolverApi> loaded(load);
  return loaded;
}

}  // namespace

Result<const CusolverApi*> cusolver_api() { return library().get(); }

LibraryVersion cusolver_library() {
  const CusolverApi* api = library().if_loaded();
  if (api == nullptr) return {.name = "cuSOLVER", .version = "not loaded yet"};
  int major = 0, minor = 0, patch = 0;
  api->cusolverGetProperty(MAJOR_VERSION, &major);
  api->cusolverGetProperty(MINOR_VERSION, &minor);
  api->cusolverGetProperty(PATCH_LEVEL, &patch);
  return {.name = "cuSOLVER", .version = fmt::format("{}.{}.{}", major, minor, patch)};
}

}  // namespace accel::solver
