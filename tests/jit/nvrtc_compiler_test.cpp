#include "jit/nvrtc_compiler.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <link.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "testing/status_matchers.hpp"

namespace accel::jit {
namespace {

using accel::testing::IsOk;
using accel::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;

constexpr int kHopper = 90;

constexpr std::string_view kScaleSource = R"(
extern "C" __global__ void scale(float* x, float a, unsigned long long n) {
  unsigned long long i = blockIdx.x * 1ull * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
})";

Program scale_program(CodeKind code = CodeKind::cubin) {
  return {.name = "scale.cu", .source = std::string(kScaleSource), .code = code};
}

std::string text(std::span<const std::byte> data) { return {reinterpret_cast<const char*>(data.data()), data.size()}; }

// Whether libnvrtc is mapped into this process (libnvrtc-builtins, which NVRTC loads itself, does not count).
bool nvrtc_is_mapped() {
  return dl_iterate_phdr(
             [](dl_phdr_info* info, std::size_t, void*) {
               return info->dlpi_name != nullptr && std::strstr(info->dlpi_name, "libnvrtc.so") != nullptr ? 1 : 0;
             },
             nullptr) != 0;
}

// NVRTC is loaded by the first compile, not linked (operation/nvrtc_library.hpp): a process that never compiles does
// not pay for mapping it. In a fresh process (the threadsafe death test re-executes this binary), since other tests
// here load it.
TEST(NvrtcCompiler, LibraryIsLoadedByTheFirstCompileNotBefore) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        if (nvrtc_is_mapped()) std::_Exit(1);
        if (!compile_with_nvrtc(scale_program(), kHopper).ok()) std::_Exit(2);
        std::_Exit(nvrtc_is_mapped() ? 0 : 3);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(NvrtcCompiler, VersionNamesMajorAndMinor) { EXPECT_THAT(nvrtc_version(), MatchesRegex("NVRTC [0-9]+\\.[0-9]+")); }

TEST(NvrtcCompiler, CompilesExternCKernelToCubin) {
  Result<CompiledProgram> compiled = compile_with_nvrtc(scale_program(), kHopper);
  ASSERT_THAT(compiled, IsOk());
  EXPECT_EQ(compiled->kind, CodeKind::cubin);
  ASSERT_GE(compiled->code.size(), 4u);
  EXPECT_EQ(text(std::span(compiled->code).first(4)),
            "\x7f"
            "ELF");
  EXPECT_THAT(text(compiled->code), HasSubstr("scale"));  // the kernel's symbol
  EXPECT_TRUE(compiled->lowered_names.empty());
  EXPECT_EQ(compiled->symbol_of("scale"), "scale");
}

TEST(NvrtcCompiler, CompilesToPtxForTheVirtualArchitecture) {
  Result<CompiledProgram> compiled = compile_with_nvrtc(scale_program(CodeKind::ptx), kHopper);
  ASSERT_THAT(compiled, IsOk());
  EXPECT_EQ(compiled->kind, CodeKind::ptx);
  ASSERT_FALSE(compiled->code.empty());
  EXPECT_EQ(compiled->code.back(), std::byte{0}) << "PTX is loaded as a C string";
  const std::string ptx = text(compiled->code);
  EXPECT_THAT(ptx, HasSubstr(".visible .entry scale("));
  EXPECT_THAT(ptx, HasSubstr(".target sm_90"));
}

TEST(NvrtcCompiler, LowersTemplateNameExpressions) {
  const Program program{.name = "axpy.cu",
                        .source = R"(
template <class T>
__global__ void axpy(T* y, const T* x, T a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
})",
                        .name_expressions = {"axpy<float>", "axpy<double>"}};
  Result<CompiledProgram> compiled = compile_with_nvrtc(program, kHopper);
  ASSERT_THAT(compiled, IsOk());
  ASSERT_EQ(compiled->lowered_names.size(), 2u);
  EXPECT_EQ(compiled->lowered_names[0].first, "axpy<float>");
  EXPECT_EQ(compiled->lowered_names[1].first, "axpy<double>");
  const std::string_view lowered_float = compiled->symbol_of("axpy<float>");
  const std::string_view lowered_double = compiled->symbol_of("axpy<double>");
  EXPECT_THAT(std::string(lowered_float), StartsWith("_Z"));
  EXPECT_THAT(std::string(lowered_double), StartsWith("_Z"));
  EXPECT_NE(lowered_float, lowered_double);
  // The cubin defines the symbols the names were lowered to.
  EXPECT_THAT(text(compiled->code), HasSubstr(std::string(lowered_float)));
  EXPECT_THAT(text(compiled->code), HasSubstr(std::string(lowered_double)));
}

TEST(NvrtcCompiler, ReadsInMemoryHeaders) {
  Program program{.name = "fill.cu",
                  .source = R"(
#include "my.h"
extern "C" __global__ void fill(int* out) { out[threadIdx.x] = MY_MAGIC; })",
                  .headers = {{.name = "my.h", .contents = "#define MY_MAGIC 7654321\n"}},
                  .code = CodeKind::ptx};
  Result<CompiledProgram> compiled = compile_with_nvrtc(program, kHopper);
  ASSERT_THAT(compiled, IsOk());
  EXPECT_THAT(text(compiled->code), HasSubstr("7654321"));

  program.headers.clear();
  EXPECT_THAT(compile_with_nvrtc(program, kHopper), StatusIs(Code::invalid_argument, "my.h"));
}

TEST(NvrtcCompiler, SyntaxErrorIsInvalidArgumentWithTheLog) {
  const Program program{.name = "broken_kernel.cu",
                        .source = "extern \"C\" __global__ void broken(int* x) { x[0] = undeclared_thing; }"};
  Result<CompiledProgram> compiled = compile_with_nvrtc(program, kHopper);
  EXPECT_THAT(compiled, StatusIs(Code::invalid_argument, "broken_kernel.cu: NVRTC compile failed:\n"));
  EXPECT_EQ(compiled.status().source(), Source::nvrtc);
  // The log's own text: where (the program's name as the file) and what.
  EXPECT_THAT(std::string(compiled.status().message()), HasSubstr("broken_kernel.cu(1): error"));
  EXPECT_THAT(std::string(compiled.status().message()), HasSubstr("undeclared_thing"));
}

TEST(NvrtcCompiler, RefusesOptionsThatSetTheArchitecture) {
  for (const char* option : {"-arch=sm_80", "-arch", "--gpu-architecture=compute_80", "--gpu-architecture",
                             "-code=sm_80", "--gpu-code=sm_90"}) {
    Program program = scale_program();
    program.options = {"-DUNUSED=1", option};
    EXPECT_THAT(compile_with_nvrtc(program, kHopper), StatusIs(Code::invalid_argument, option)) << option;
  }
}

TEST(NvrtcCompiler, RefusesComputeCapabilitiesNvrtcCannotTarget) {
  EXPECT_THAT(compile_with_nvrtc(scale_program(), 0), StatusIs(Code::invalid_argument, "compute capability 0"));
  EXPECT_THAT(compile_with_nvrtc(scale_program(), 21), StatusIs(Code::not_supported, "sm_21"));
}

TEST(NvrtcCompiler, PassesOptionsAndKeepsTheProgramsDialect) {
  // Concepts need C++20: this compiles only if the program's -std wins over the C++17 accel sets otherwise.
  Program program{.name = "concepts.cu",
                  .source = R"(
template <class T> concept Small = sizeof(T) <= 4;
template <Small T> __device__ T twice(T v) { return v + v; }
extern "C" __global__ void k(int* x) { x[0] = twice(x[0]) + BONUS; })",
                  .options = {"-std=c++20", "-DBONUS=3"}};
  EXPECT_THAT(compile_with_nvrtc(program, kHopper), IsOk());

  program.options = {"-DBONUS=3"};
  EXPECT_THAT(compile_with_nvrtc(program, kHopper), StatusIs(Code::invalid_argument, "NVRTC compile failed"));
  program.options = {"-std=c++20"};
  EXPECT_THAT(compile_with_nvrtc(program, kHopper), StatusIs(Code::invalid_argument, "BONUS"));
}

TEST(NvrtcCompiler, KeyCoversEverythingThatChangesTheBinary) {
  const Program base{.name = "k.cu",
                     .source = "source",
                     .headers = {{.name = "a.h", .contents = "A"}, {.name = "b.h", .contents = "B"}},
                     .options = {"-DX=1", "--use_fast_math"},
                     .name_expressions = {"f<int>"}};
  const std::vector<std::byte> key = program_key(base, kHopper);
  EXPECT_EQ(program_key(base, kHopper), key);
  EXPECT_EQ(program_key(Program(base), kHopper), key);
  EXPECT_THAT(text(key), HasSubstr(nvrtc_version()));

  std::vector<Program> variants;
  const auto vary = [&](auto change) {
    Program p = base;
    change(p);
    variants.push_back(std::move(p));
  };
  vary([](Program& p) { p.name = "k2.cu"; });
  vary([](Program& p) { p.source = "source "; });
  vary([](Program& p) { p.headers[0].contents = "A2"; });
  vary([](Program& p) { p.headers[1].name = "c.h"; });
  vary([](Program& p) { p.headers.pop_back(); });
  vary([](Program& p) { std::swap(p.headers[0], p.headers[1]); });
  vary([](Program& p) { p.options[0] = "-DX=2"; });
  vary([](Program& p) { std::swap(p.options[0], p.options[1]); });
  vary([](Program& p) { p.options.push_back("-G"); });
  vary([](Program& p) { p.name_expressions = {"f<long>"}; });
  vary([](Program& p) { p.name_expressions.clear(); });
  vary([](Program& p) { p.code = CodeKind::ptx; });
  // Field boundaries: the same characters split differently.
  vary([](Program& p) { p.headers[0] = {.name = "a.hA", .contents = ""}; });
  vary([](Program& p) { p.options = {"-DX=1--use_fast_math"}; });
  vary([](Program& p) { p.options = {"-DX=1", "--use_fast_math", ""}; });
  vary([](Program& p) {
    p.source = "sourcek.cu";
    p.name = "";
  });

  std::vector<std::vector<std::byte>> keys{key, program_key(base, 89), program_key(base, 100)};
  for (const Program& p : variants) keys.push_back(program_key(p, kHopper));
  for (std::size_t i = 0; i < keys.size(); ++i) {
    for (std::size_t j = i + 1; j < keys.size(); ++j) EXPECT_NE(keys[i], keys[j]) << i << " vs " << j;
  }
}

TEST(NvrtcCompiler, EncodesAndDecodesACompiledProgram) {
  Result<CompiledProgram> compiled =
      compile_with_nvrtc({.name = "t.cu",
                          .source = "template <int N> __global__ void t(int* x) { x[0] = N; }",
                          .name_expressions = {"t<3>", "t<4>"}},
                         kHopper);
  ASSERT_THAT(compiled, IsOk());
  compiled->log = "a warning";
  const std::vector<std::byte> bytes = encode(*compiled);
  Result<CompiledProgram> decoded = decode_compiled_program(bytes);
  ASSERT_THAT(decoded, IsOk());
  EXPECT_EQ(decoded->kind, compiled->kind);
  EXPECT_EQ(decoded->code, compiled->code);
  EXPECT_EQ(decoded->lowered_names, compiled->lowered_names);
  EXPECT_EQ(decoded->log, "a warning");

  const CompiledProgram ptx{.kind = CodeKind::ptx, .code = {std::byte{'x'}, std::byte{0}}};
  Result<CompiledProgram> decoded_ptx = decode_compiled_program(encode(ptx));
  ASSERT_THAT(decoded_ptx, IsOk());
  EXPECT_EQ(decoded_ptx->kind, CodeKind::ptx);
  EXPECT_EQ(decoded_ptx->code, ptx.code);
  EXPECT_TRUE(decoded_ptx->lowered_names.empty());
  EXPECT_TRUE(decoded_ptx->log.empty());
}

TEST(NvrtcCompiler, DecodeRefusesDamagedBytes) {
  const CompiledProgram program{.kind = CodeKind::cubin,
                                .code = {std::byte{1}, std::byte{2}, std::byte{3}},
                                .lowered_names = {{"f<int>", "_Z1fIiEvv"}},
                                .log = "log"};
  const std::vector<std::byte> bytes = encode(program);
  // Each prefix is copied into a buffer of its own size, so a read past its end is an ASan error.
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    const std::vector<std::byte> prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_THAT(decode_compiled_program(prefix), StatusIs(Code::internal, "damaged")) << n << " bytes";
  }
  std::vector<std::byte> longer = bytes;
  longer.push_back(std::byte{0});
  EXPECT_THAT(decode_compiled_program(longer), StatusIs(Code::internal, "trailing"));

  std::vector<std::byte> bad_magic = bytes;
  bad_magic[0] = std::byte{'X'};
  EXPECT_THAT(decode_compiled_program(bad_magic), StatusIs(Code::internal, "magic"));

  std::vector<std::byte> bad_version = bytes;
  bad_version[8] = std::byte{2};
  EXPECT_THAT(decode_compiled_program(bad_version), StatusIs(Code::internal, "version 2"));

  std::vector<std::byte> bad_kind = bytes;
  bad_kind[12] = std::byte{7};
  EXPECT_THAT(decode_compiled_program(bad_kind), StatusIs(Code::internal, "code kind 7"));

  // Lengths and counts that claim more than the input holds must not be believed (nor allocated).
  std::vector<std::byte> huge_code = bytes;
  std::memset(huge_code.data() + 13, 0xff, 8);
  EXPECT_THAT(decode_compiled_program(huge_code), StatusIs(Code::internal, "code of"));
  std::vector<std::byte> huge_count = bytes;
  std::memset(huge_count.data() + 13 + 8 + 3, 0xff, 8);
  EXPECT_THAT(decode_compiled_program(huge_count), StatusIs(Code::internal, "lowered name count"));
}

}  // namespace
}  // namespace accel::jit
