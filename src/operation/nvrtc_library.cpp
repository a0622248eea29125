#include "operation/nvrtc_library.hpp"

#include <cuda.h>
#include <fmt/format.h>

#include <string>

#include "operation/runtime_library.hpp"

namespace accel {
namespace {

// NVRTC's major version is the toolkit's; nvrtc.h has no version macro of its own.
constexpr int kBuildMajor = CUDA_VERSION / 1000;

Status resolve(void* handle, NvrtcApi& api) {
#define ACCEL_NVRTC_RESOLVE(name) ACCEL_RESOLVE_RUNTIME_SYMBOL(api, handle, "NVRTC", name)
  ACCEL_NVRTC_FUNCTIONS(ACCEL_NVRTC_RESOLVE)
#undef ACCEL_NVRTC_RESOLVE
  // A newer minor version keeps the ABI this build was compiled against; another major may not.
  int major = 0;
  int minor = 0;
  if (api.nvrtcVersion(&major, &minor) != NVRTC_SUCCESS || major != kBuildMajor) {
    return unavailable(fmt::format("it is version {}.{}; accel was built for {}.x", major, minor, kBuildMajor));
  }
  return Status();
}

Status load(NvrtcApi& api) {
  const std::string candidates[] = {fmt::format("libnvrtc.so.{}", kBuildMajor), ACCEL_NVRTC_BUILD_PATH};
  return open_runtime_library("NVRTC", candidates, [&](void* handle) { return resolve(handle, api); });
}

RuntimeLibrary<NvrtcApi>& library() {
  static RuntimeLibrary<NvrtcApi> loaded(load);
  return loaded;
}

}  // namespace

Result<const NvrtcApi*> nvrtc_api() { return library().get(); }

}  // namespace accel
