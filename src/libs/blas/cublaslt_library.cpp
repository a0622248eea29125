#include "libs/blas/cublaslt_library.hpp"

#include <fmt/format.h>

#include <string>

#include "operation/runtime_library.hpp"

namespace accel::blas {
namespace {

Status resolve(void* handle, CublasLtApi& api) {
#define ACCEL_CUBLASLT_RESOLVE(name) ACCEL_RESOLVE_RUNTIME_SYMBOL(api, handle, "cuBLASLt", name)
  ACCEL_CUBLASLT_FUNCTIONS(ACCEL_CUBLASLT_RESOLVE)
#undef ACCEL_CUBLASLT_RESOLVE
  // A newer minor version keeps the ABI this build was compiled against; another major may not.
  if (const std::size_t version = api.cublasLtGetVersion(); version / 10000 != CUBLAS_VER_MAJOR) {
    return unavailable(fmt::format("it is version {}; accel was built for {}.x", version, CUBLAS_VER_MAJOR));
  }
  return Status();
}

Status load(CublasLtApi& api) {
  const std::string candidates[] = {fmt::format("libcublasLt.so.{}", CUBLAS_VER_MAJOR), ACCEL_CUBLASLT_BUILD_PATH};
  return open_runtime_library("cuBLASLt", candidates, [&](void* handle) { return resolve(handle, api); });
}

RuntimeLibrary<CublasLtApi>& library() {
  static RuntimeLibrary<CublasLtApi> loaded(load);
  return loaded;
}

}  // namespace

Result<const CublasLtApi*> cublaslt_api() { return library().get(); }

const CublasLtApi* loaded_cublaslt_api() noexcept { return library().if_loaded(); }

Status cublas_status(cublasStatus_t status, std::string_view what) {
  if (status == CUBLAS_STATUS_SUCCESS) return Status();
  // A status comes from a call through the table, so the library is loaded and can name it.
  const CublasLtApi* api = loaded_cublaslt_api();
  const std::string message = api != nullptr ? fmt::format("{}: {} ({})", what, api->cublasLtGetStatusString(status),
                                                           api->cublasLtGetStatusName(status))
                                             : fmt::format("{}: cublasStatus_t {}", what, static_cast<int>(status));
  switch (status) {
    case CUBLAS_STATUS_ALLOC_FAILED: return Status(Code::resource_exhausted, message, Source::cublas, status);
    case CUBLAS_STATUS_INVALID_VALUE: return Status(Code::invalid_argument, message, Source::cublas, status);
    case CUBLAS_STATUS_NOT_SUPPORTED:
    case CUBLAS_STATUS_ARCH_MISMATCH: return Status(Code::not_supported, message, Source::cublas, status);
    case CUBLAS_STATUS_NOT_INITIALIZED: return Status(Code::unavailable, message, Source::cublas, status);
    default: return Status(Code::internal, message, Source::cublas, status);
  }
}

LibraryVersion cublaslt_library() {
  const CublasLtApi* api = loaded_cublaslt_api();
  if (api == nullptr) return {.name = "cuBLASLt", .version = "not loaded yet"};
  const std::size_t version = api->cublasLtGetVersion();
  return {.name = "cuBLASLt", .version = fmt::format("{}.{}.{}", version / 10000, version / 100 % 100, version % 100)};
}

}  // namespace accel::blas
