#include "libs/sparse/cusparse_library.hpp"

#include <fmt/format.h>

#include <string>

#include "operation/runtime_library.hpp"

namespace accel::sparse {
namespace {

Status resolve(void* handle, CusparseApi& api) {
#define ACCEL_CUSPARSE_RESOLVE(name) ACCEL_RESOLVE_RUNTIME_SYMBOL(api, handle, "cuSPARSE", name)
  ACCEL_CUSPARSE_FUNCTIONS(ACCEL_CUSPARSE_RESOLVE)
#undef ACCEL_CUSPARSE_RESOLVE
  // A newer minor version keeps the ABI this build was compiled against; another major may not.
  int major = 0;
  if (api.cusparseGetProperty(MAJOR_VERSION, &major) != CUSPARSE_STATUS_SUCCESS || major != CUSPARSE_VER_MAJOR) {
    return unavailable(fmt::format("it is version {}.x; accel was built for {}.x", major, CUSPARSE_VER_MAJOR));
  }
  return Status();
}

Status load(CusparseApi& api) {
  const std::string candidates[] = {fmt::format("libcusparse.so.{}", CUSPARSE_VER_MAJOR), ACCEL_CUSPARSE_BUILD_PATH};
  return open_runtime_library("cuSPARSE", candidates, [&](void* handle) { return resolve(handle, api); });
}

RuntimeLibrary<CusparseApi>& library() {
  static RuntimeLibrary<CusparseApi> loaded(load);
  return loaded;
}

}  // namespace

Result<const CusparseApi*> cusparse_api() { return library().get(); }

const CusparseApi* loaded_cusparse_api() noexcept { return library().if_loaded(); }

LibraryVersion cusparse_library() {
  const CusparseApi* api = loaded_cusparse_api();
  if (api == nullptr) return {.name = "cuSPARSE", .version = "not loaded yet"};
  int major = 0, minor = 0, patch = 0;
  api->cusparseGetProperty(MAJOR_VERSION, &major);
  api->cusparseGetProperty(MINOR_VERSION, &minor);
  api->cusparseGetProperty(PATCH_LEVEL, &patch);
  return {.name = "cuSPARSE", .version = fmt::format("{}.{}.{}", major, minor, patch)};
}

}  // namespace accel::sparse
