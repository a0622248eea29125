#include "libs/blas/cublas_library.hpp"

#include <fmt/format.h>

#include <string>

#include "operation/runtime_library.hpp"

namespace accel::blas {
namespace {

Status resolve(void* handle, CublasApi& api) {
#define ACCEL_CUBLAS_RESOLVE(name) ACCEL_RESOLVE_RUNTIME_SYMBOL(api, handle, "cuBLAS", name)
  ACCEL_CUBLAS_FUNCTIONS(ACCEL_CUBLAS_RESOLVE)
#undef ACCEL_CUBLAS_RESOLVE
  // A newer minor version keeps the ABI this build was compiled against; another major may not.
  int major = 0;
  if (api.cublasGetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS || major != CUBLAS_VER_MAJOR) {
    return unavailable(fmt::format("it is version {}.x; accel was built for {}.x", major, CUBLAS_VER_MAJOR));
  }
  return Status();
}

Status load(CublasApi& api) {
  const std::string candidates[] = {fmt::format("libcublas.so.{}", CUBLAS_VER_MAJOR), ACCEL_CUBLAS_BUILD_PATH};
  return open_runtime_library("cuBLAS", candidates, [&](void* handle) { return resolve(handle, api); });
}

RuntimeLibrary<CublasApi>& library() {
  static RuntimeLibrary<CublasApi> loaded(load);
  return loaded;
}

}  // namespace

Result<const CublasApi*> cublas_api() { return library().get(); }

LibraryVersion cublas_library() {
  const CublasApi* api = library().if_loaded();
  if (api == nullptr) return {.name = "cuBLAS", .version = "not loaded yet"};
  int major = 0, minor = 0, patch = 0;
  api->cublasGetProperty(MAJOR_VERSION, &major);
  api->cublasGetProperty(MINOR_VERSION, &minor);
  api->cublasGetProperty(PATCH_LEVEL, &patch);
  return {.name = "cuBLAS", .version = fmt::format("{}.{}.{}", major, minor, patch)};
}

}  // namespace accel::blas
