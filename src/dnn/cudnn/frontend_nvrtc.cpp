// The NVRTC entry points cudnn-frontend's own engines call by name (experimental/, reached from plans.h:
// Sm100RmsNormSiluEngine compiles its kernels with NVRTC), answered from the table loaded on first use
// (operation/nvrtc_library.hpp) instead of from a linked libnvrtc, which would be mapped before `main` of every accel
// program (operation/runtime_library.hpp says why that matters). cudnn-frontend's own switch to load NVRTC,
// NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING, also moves cuDNN, libcuda and a shared cudart to dlopen.
//
// Only the names the frontend references are defined: one it starts to call fails to link, rather than resolving to
// a libnvrtc nobody loaded. Where NVRTC cannot be loaded, each answers NVRTC_ERROR_INTERNAL_ERROR, as the frontend's
// dynamic loading does, and its engine reports the failure.
#include <nvrtc.h>

#include "operation/nvrtc_library.hpp"

namespace accel::dnn::cudnn {
namespace {

template <auto entry, class... Args>
nvrtcResult forward(Args... args) {
  const Result<const NvrtcApi*> nvrtc = nvrtc_api();
  if (!nvrtc.ok()) return NVRTC_ERROR_INTERNAL_ERROR;
  return ((**nvrtc).*entry)(args...);
}

}  // namespace
}  // namespace accel::dnn::cudnn

using accel::NvrtcApi;
using accel::dnn::cudnn::forward;

extern "C" {

nvrtcResult nvrtcCreateProgram(nvrtcProgram* prog, const char* src, const char* name, int num_headers,
                               const char* const* headers, const char* const* include_names) {
  return forward<&NvrtcApi::nvrtcCreateProgram>(prog, src, name, num_headers, headers, include_names);
}
nvrtcResult nvrtcDestroyProgram(nvrtcProgram* prog) { return forward<&NvrtcApi::nvrtcDestroyProgram>(prog); }
nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int num_options, const char* const* options) {
  return forward<&NvrtcApi::nvrtcCompileProgram>(prog, num_options, options);
}
nvrtcResult nvrtcGetPTXSize(nvrtcProgram prog, size_t* size) { return forward<&NvrtcApi::nvrtcGetPTXSize>(prog, size); }
nvrtcResult nvrtcGetPTX(nvrtcProgram prog, char* ptx) { return forward<&NvrtcApi::nvrtcGetPTX>(prog, ptx); }
nvrtcResult nvrtcGetCUBINSize(nvrtcProgram prog, size_t* size) {
  return forward<&NvrtcApi::nvrtcGetCUBINSize>(prog, size);
}
nvrtcResult nvrtcGetCUBIN(nvrtcProgram prog, char* cubin) { return forward<&NvrtcApi::nvrtcGetCUBIN>(prog, cubin); }
nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram prog, size_t* size) {
  return forward<&NvrtcApi::nvrtcGetProgramLogSize>(prog, size);
}
nvrtcResult nvrtcGetProgramLog(nvrtcProgram prog, char* log) {
  return forward<&NvrtcApi::nvrtcGetProgramLog>(prog, log);
}

}  // extern "C"
