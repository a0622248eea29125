// cudnn-frontend's calls to NVRTC by name reach the library the JIT loads on first use (dnn/cudnn/frontend_nvrtc.cpp),
// not a linked one. NVRTC needs no GPU, so this runs anywhere the toolkit is.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <link.h>
#include <nvrtc.h>

#include <cstdlib>
#include <cstring>

namespace {

bool nvrtc_is_mapped() {
  return dl_iterate_phdr(
             [](dl_phdr_info* info, std::size_t, void*) {
               return info->dlpi_name != nullptr && std::strstr(info->dlpi_name, "libnvrtc.so") != nullptr ? 1 : 0;
             },
             nullptr) != 0;
}

// What Sm100RmsNormSiluEngine does with the names it calls: create, compile, read the log and the binary, destroy.
int compile_through_the_frontends_names() {
  nvrtcProgram program = nullptr;
  const char* source = "extern \"C\" __global__ void k(int* x) { x[0] = 1; }";
  if (nvrtcCreateProgram(&program, source, "k.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) return 2;
  const char* options[] = {"--gpu-architecture=sm_90"};
  const nvrtcResult compiled = nvrtcCompileProgram(program, 1, options);
  std::size_t log = 0;
  std::size_t cubin = 0;
  std::size_t ptx = 0;
  const bool read = nvrtcGetProgramLogSize(program, &log) == NVRTC_SUCCESS &&
                    nvrtcGetCUBINSize(program, &cubin) == NVRTC_SUCCESS &&
                    nvrtcGetPTXSize(program, &ptx) == NVRTC_SUCCESS;
  if (nvrtcDestroyProgram(&program) != NVRTC_SUCCESS || program != nullptr) return 3;
  return compiled == NVRTC_SUCCESS && read && log > 0 && cubin > 0 ? 0 : 4;
}

// In a fresh process (the threadsafe death test re-executes this binary): nothing maps libnvrtc before the first call.
TEST(FrontendNvrtc, NamesLoadNvrtcOnTheFirstCall) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        if (nvrtc_is_mapped()) std::_Exit(1);
        const int compiled = compile_through_the_frontends_names();
        if (compiled != 0) std::_Exit(compiled);
        std::_Exit(nvrtc_is_mapped() ? 0 : 5);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
