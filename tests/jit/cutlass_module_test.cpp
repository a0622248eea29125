// The nvcc toolchain, and one CUTLASS module built for real (nvcc, minutes on a small machine;
// ACCEL_SKIP_CUTLASS_COMPILE=1 skips it), loaded with dlopen and called through its C interface. None of it
// needs a GPU.
#include "jit/cutlass/render.hpp"

#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "jit/cutlass/module_abi.hpp"
#include "jit/cutlass/render_parts.hpp"
#include "jit/nvcc_compiler.hpp"
#include "testing/cutlass_instances.hpp"
#include "testing/status_matchers.hpp"

namespace accel::jit::cutlass {
namespace {

namespace fs = std::filesystem;
using accel::testing::IsOk;
using accel::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using namespace instance_testing;

// Sets (or, with nullopt, unsets) an environment variable for the scope, then puts back what was there.
class ScopedEnvironment {
 public:
  ScopedEnvironment(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnvironment() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};
// -- nvcc ------------------------------------------------------------------------------------------------------

TEST(NvccToolchain, LocatesNvccAndCutlass) {
  Result<NvccToolchain> toolchain = NvccToolchain::locate();
  ASSERT_THAT(toolchain, IsOk());
  EXPECT_TRUE(fs::exists(toolchain->nvcc)) << toolchain->nvcc;
  ASSERT_FALSE(toolchain->include_directories.empty());
  EXPECT_TRUE(fs::exists(toolchain->include_directories[0] / "cutlass" / "cutlass.h"));
  EXPECT_THAT(toolchain->identity,
              ::testing::MatchesRegex("nvcc [0-9]+\\.[0-9]+\\.[0-9]+ / .+ / CUTLASS [0-9]+\\.[0-9]+\\.[0-9]+"));
}

TEST(NvccToolchain, ReportsWhatIsMissing) {
  {
    ScopedEnvironment nvcc("ACCEL_NVCC", "/nonexistent/bin/nvcc");
    EXPECT_THAT(NvccToolchain::locate(), StatusIs(Code::failed_precondition, "ACCEL_NVCC=/nonexistent/bin/nvcc"));
  }
  {
    ScopedEnvironment cutlass("ACCEL_CUTLASS_DIR", "/nonexistent/cutlass");
    EXPECT_THAT(NvccToolchain::locate(), StatusIs(Code::failed_precondition, "/nonexistent/cutlass"));
  }
  EXPECT_THAT(compile_shared_object(NvccToolchain{}, "int x;", NvccOptions{}),
              StatusIs(Code::failed_precondition, "nvcc"));
}

TEST(NvccCompiler, BuildsASharedObjectAndReportsCompileErrors) {
  Result<NvccToolchain> toolchain = NvccToolchain::locate();
  ASSERT_THAT(toolchain, IsOk());
  const fs::path scratch = fs::temp_directory_path() / ("accel-nvcc-test-" + std::to_string(::getpid()));
  NvccOptions options;
  options.scratch = scratch;
  Result<std::vector<std::byte>> built = compile_shared_object(
      *toolchain, "extern \"C\" __attribute__((visibility(\"default\"))) int answer() { return 42; }\n", options);
  ASSERT_THAT(built, IsOk());
  ASSERT_GE(built->size(), 4u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(built->data()), 4),
            "\x7f"
            "ELF");

  EXPECT_THAT(compile_shared_object(*toolchain, "this is not C++;\n", options),
              StatusIs(Code::invalid_argument, "error"));

  options.timeout = std::chrono::seconds(0);
  EXPECT_THAT(compile_shared_object(*toolchain, "int x;\n", options), StatusIs(Code::deadline_exceeded, "nvcc"));

  // Every compile cleaned up after itself.
  std::error_code error;
  EXPECT_TRUE(fs::is_empty(scratch, error)) << scratch;
  fs::remove_all(scratch, error);
}

// -- a real module -----------------------------------------------------------------------------------------------

template <class F>
F symbol(void* library, const char* name) {
  return reinterpret_cast<F>(::dlsym(library, name));
}

TEST(CutlassModule, BuildsLoadsAndAnswersThroughItsInterface) {
  if (const char* skip = std::getenv("ACCEL_SKIP_CUTLASS_COMPILE"); skip != nullptr && std::string(skip) == "1")
    GTEST_SKIP() << "ACCEL_SKIP_CUTLASS_COMPILE=1";
  const GemmInstance instance = small_f16_gemm();
  ASSERT_THAT(validate(instance), IsOk());
  Result<NvccToolchain> toolchain = NvccToolchain::locate();
  ASSERT_THAT(toolchain, IsOk());
  Result<std::vector<std::byte>> built = compile_shared_object(*toolchain, render(instance), NvccOptions{});
  ASSERT_THAT(built, IsOk());

  const fs::path file = fs::temp_directory_path() / ("accel-cutlass-module-" + std::to_string(::getpid()) + ".so");
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(built->data()), static_cast<std::streamsize>(built->size()));
  }
  void* library = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << ::dlerror();

  const auto abi = symbol<int (*)()>(library, "accel_module_abi");
  const auto module_identity = symbol<const char* (*)()>(library, "accel_module_identity");
  const auto layout = symbol<void (*)(AccelAbiLayout*)>(library, "accel_module_layout");
  const auto workspace_bytes = symbol<int (*)(const void*, size_t*, char*, size_t)>(library, "accel_workspace_bytes");
  // cudaStream_t is a pointer; the test needs no CUDA header for it.
  const auto run = symbol<int (*)(const void*, void*, size_t, void*, char*, size_t)>(library, "accel_run");
  ASSERT_NE(abi, nullptr);
  ASSERT_NE(module_identity, nullptr);
  ASSERT_NE(layout, nullptr);
  ASSERT_NE(workspace_bytes, nullptr);
  ASSERT_NE(run, nullptr);

  EXPECT_EQ(abi(), kAccelCutlassAbiVersion);
  EXPECT_EQ(std::string(module_identity()), identity(instance));
  AccelAbiLayout sizes{};
  layout(&sizes);
  EXPECT_EQ(sizes.gemm_args, sizeof(AccelGemmArgs));
  EXPECT_EQ(sizes.grouped_gemm_args, sizeof(AccelGroupedGemmArgs));
  EXPECT_EQ(sizes.conv_args, sizeof(AccelConvArgs));

  AccelGemmArgs args{};
  args.m = 256;
  args.n = 512;
  args.k = 128;
  args.lda = 128;  // A row-major m x k
  args.ldb = 128;  // B column-major k x n
  args.ldc = 512;
  args.ldd = 512;
  args.alpha = 1.0f;
  char error[256] = {};
  size_t bytes = 12345;
  EXPECT_EQ(workspace_bytes(&args, &bytes, error, sizeof error), kAccelOk) << error;
  EXPECT_LT(bytes, 12345u);

  args.m = -1;
  EXPECT_EQ(workspace_bytes(&args, &bytes, error, sizeof error), kAccelInvalidArgument);
  EXPECT_THAT(error, HasSubstr("m=-1"));
  args.m = 256;

  // Operands are checked before anything touches a device: A is null here.
  EXPECT_EQ(run(&args, nullptr, 0, nullptr, error, sizeof error), kAccelInvalidArgument);
  EXPECT_THAT(error, HasSubstr("A (m x k, row-major) is null"));

  ::dlclose(library);
  std::error_code ignored;
  fs::remove(file, ignored);
}

}  // namespace
}  // namespace accel::jit::cutlass
