// NVRTC, loaded when first needed rather than linked (operation/runtime_library.hpp says why): libnvrtc took about
// 6 ms of every accel process's start on the H100, though most processes never compile a program at run time.
#pragma once

#include <nvrtc.h>

#include "accel/core/result.hpp"

namespace accel {

// The entry points the JIT calls.
struct NvrtcApi {
// clang-format off
#define ACCEL_NVRTC_FUNCTIONS(X) \
  X(nvrtcAddNameExpression) \
  X(nvrtcCompileProgram) \
  X(nvrtcCreateProgram) \
  X(nvrtcDestroyProgram) \
  X(nvrtcGetCUBIN) \
  X(nvrtcGetCUBINSize) \
  X(nvrtcGetErrorString) \
  X(nvrtcGetLoweredName) \
  X(nvrtcGetNumSupportedArchs) \
  X(nvrtcGetPTX) \
  X(nvrtcGetPTXSize) \
  X(nvrtcGetProgramLog) \
  X(nvrtcGetProgramLogSize) \
  X(nvrtcGetSupportedArchs) \
  X(nvrtcVersion)
// clang-format on
#define ACCEL_NVRTC_MEMBER(name) decltype(&::name) name = nullptr;
  ACCEL_NVRTC_FUNCTIONS(ACCEL_NVRTC_MEMBER)
#undef ACCEL_NVRTC_MEMBER
};

// The library, loaded the first time (libnvrtc.so.<CUDA major this build was made with> where the dynamic loader
// finds it, else the toolkit's copy this build was configured with); unavailable, naming each file tried and what
// it answered, where neither loads or the one found is of another major version.
[[nodiscard]] Result<const NvrtcApi*> nvrtc_api();

}  // namespace accel
