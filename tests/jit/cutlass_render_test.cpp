// CUTLASS instances: identities, what validate() refuses, what render() writes, the nvcc toolchain, and one
// module built for real (nvcc, minutes on a small machine; ACCEL_SKIP_CUTLASS_COMPILE=1 skips it), loaded with
// dlopen and called through its C interface. None of it needs a GPU.
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
#include "testing/status_matchers.hpp"

namespace accel::jit::cutlass {
namespace {

namespace fs = std::filesystem;
using accel::testing::IsOk;
using accel::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

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

GemmInstance small_f16_gemm() {
  GemmInstance instance;
  instance.tile = {.tile_m = 128, .tile_n = 128, .tile_k = 64, .cluster_m = 1, .cluster_n = 1};
  return instance;
}

// -- identity ----------------------------------------------------------------------------------------------------

TEST(CutlassIdentity, NamesEveryFieldOfAGemm) {
  GemmInstance instance;
  instance.input = DType::bf16;
  instance.output = DType::bf16;
  instance.epilogue.activation = Activation::gelu_tanh;
  instance.epilogue.bias = BiasKind::per_column;
  EXPECT_EQ(identity(instance),
            "gemm sm90 a=bf16:row b=bf16:col c=bf16:row tile=128x256x64 cluster=2x1 tma_cooperative "
            "epi=gelu_tanh,bias_col,source");
  EXPECT_EQ(identity(GroupedGemmInstance{}),
            "grouped_gemm sm90 a=f16:row b=f16:col c=f16:row tile=128x256x64 cluster=2x1 tma_cooperative "
            "epi=linear_combination");
  EXPECT_EQ(identity(ConvInstance{}), "conv fprop sm90 f16 tile=128x128x64 cluster=1x1 tma_warp_specialized");
}

TEST(CutlassIdentity, EqualInstancesHaveEqualIdentities) {
  EXPECT_EQ(identity(GemmInstance{}), identity(GemmInstance{}));
  EXPECT_EQ(identity(small_f16_gemm()), identity(small_f16_gemm()));
}

TEST(CutlassIdentity, EveryFieldChangesTheIdentity) {
  std::vector<Instance> instances;
  const GemmInstance base;
  instances.emplace_back(base);
  const auto gemm = [&](auto change) {
    GemmInstance instance = base;
    change(instance);
    instances.emplace_back(instance);
  };
  gemm([](GemmInstance& i) { i.arch = 100; });
  gemm([](GemmInstance& i) { i.input = DType::bf16; });
  gemm([](GemmInstance& i) { i.input = DType::fp8_e4m3; });
  gemm([](GemmInstance& i) { i.output = DType::f32; });
  gemm([](GemmInstance& i) { i.output = DType::bf16; });
  gemm([](GemmInstance& i) { i.layout_a = Layout::column_major; });
  gemm([](GemmInstance& i) { i.layout_b = Layout::row_major; });
  gemm([](GemmInstance& i) { i.layout_c = Layout::column_major; });
  gemm([](GemmInstance& i) { i.tile.tile_m = 256; });
  gemm([](GemmInstance& i) { i.tile.tile_n = 128; });
  gemm([](GemmInstance& i) { i.tile.tile_k = 128; });
  gemm([](GemmInstance& i) { i.tile.cluster_m = 1; });
  gemm([](GemmInstance& i) { i.tile.cluster_n = 2; });
  gemm([](GemmInstance& i) { i.tile.schedule = Schedule::tma_pingpong; });
  gemm([](GemmInstance& i) { i.tile.schedule = Schedule::tma_warp_specialized; });
  gemm([](GemmInstance& i) { i.epilogue.activation = Activation::relu; });
  gemm([](GemmInstance& i) { i.epilogue.activation = Activation::gelu_tanh; });
  gemm([](GemmInstance& i) { i.epilogue.activation = Activation::silu; });
  gemm([](GemmInstance& i) { i.epilogue.bias = BiasKind::per_row; });
  gemm([](GemmInstance& i) { i.epilogue.bias = BiasKind::per_column; });
  gemm([](GemmInstance& i) { i.epilogue.row_scale = true; });
  gemm([](GemmInstance& i) { i.epilogue.col_scale = true; });
  gemm([](GemmInstance& i) { i.epilogue.residual = true; });
  gemm([](GemmInstance& i) { i.epilogue.source = false; });
  // Tile numbers that could run together if the text were careless: 12x8 vs 1x28.
  gemm([](GemmInstance& i) {
    i.tile.tile_m = 12;
    i.tile.tile_n = 8;
  });
  gemm([](GemmInstance& i) {
    i.tile.tile_m = 1;
    i.tile.tile_n = 28;
  });

  const GroupedGemmInstance grouped_base;
  instances.emplace_back(grouped_base);
  const auto grouped = [&](auto change) {
    GroupedGemmInstance instance = grouped_base;
    change(instance);
    instances.emplace_back(instance);
  };
  grouped([](GroupedGemmInstance& i) { i.arch = 80; });
  grouped([](GroupedGemmInstance& i) { i.input = DType::bf16; });
  grouped([](GroupedGemmInstance& i) { i.output = DType::f32; });
  grouped([](GroupedGemmInstance& i) { i.layout_a = Layout::column_major; });
  grouped([](GroupedGemmInstance& i) { i.layout_b = Layout::row_major; });
  grouped([](GroupedGemmInstance& i) { i.layout_c = Layout::column_major; });
  grouped([](GroupedGemmInstance& i) { i.tile.tile_n = 128; });
  grouped([](GroupedGemmInstance& i) { i.tile.schedule = Schedule::tma_pingpong; });

  const ConvInstance conv_base;
  instances.emplace_back(conv_base);
  const auto conv = [&](auto change) {
    ConvInstance instance = conv_base;
    change(instance);
    instances.emplace_back(instance);
  };
  conv([](ConvInstance& i) { i.arch = 100; });
  conv([](ConvInstance& i) { i.direction = ConvDirection::dgrad; });
  conv([](ConvInstance& i) { i.direction = ConvDirection::wgrad; });
  conv([](ConvInstance& i) { i.element = DType::bf16; });
  conv([](ConvInstance& i) { i.tile.tile_m = 64; });
  conv([](ConvInstance& i) { i.tile.tile_n = 64; });
  conv([](ConvInstance& i) { i.tile.tile_k = 32; });
  conv([](ConvInstance& i) { i.tile.cluster_m = 2; });
  conv([](ConvInstance& i) { i.tile.cluster_n = 2; });
  conv([](ConvInstance& i) { i.tile.schedule = Schedule::tma_pingpong; });

  std::set<std::string> identities;
  for (const Instance& instance : instances) {
    const std::string text = identity(instance);
    EXPECT_TRUE(identities.insert(text).second) << "two instances share the identity " << text;
  }
  EXPECT_EQ(identities.size(), instances.size());
}

// -- validate ------------------------------------------------------------------------------------------------------

TEST(CutlassValidate, AcceptsTheSupportedFamilies) {
  EXPECT_THAT(validate(GemmInstance{}), IsOk());
  EXPECT_THAT(validate(GroupedGemmInstance{}), IsOk());
  GemmInstance fp8;
  fp8.input = DType::fp8_e4m3;
  fp8.output = DType::bf16;
  fp8.tile.tile_k = 128;
  EXPECT_THAT(validate(fp8), IsOk());
  GemmInstance everything;
  everything.input = DType::bf16;
  everything.output = DType::bf16;
  everything.epilogue = {.activation = Activation::relu,
                         .bias = BiasKind::per_row,
                         .row_scale = true,
                         .col_scale = true,
                         .residual = true,
                         .source = true};
  EXPECT_THAT(validate(everything), IsOk());
  GemmInstance pingpong;
  pingpong.tile = {
      .tile_m = 64, .tile_n = 128, .tile_k = 64, .cluster_m = 1, .cluster_n = 1, .schedule = Schedule::tma_pingpong};
  EXPECT_THAT(validate(pingpong), IsOk());
  GemmInstance transposed;
  transposed.layout_a = Layout::column_major;
  transposed.layout_b = Layout::row_major;
  transposed.layout_c = Layout::column_major;
  transposed.output = DType::f32;
  EXPECT_THAT(validate(transposed), IsOk());
}

TEST(CutlassValidate, Fp8NeedsRowMajorAAndColumnMajorB) {
  GemmInstance instance;
  instance.input = DType::fp8_e4m3;
  instance.output = DType::bf16;
  instance.tile.tile_k = 128;
  instance.layout_a = Layout::column_major;
  EXPECT_THAT(validate(instance), StatusIs(Code::not_supported, "layout_a column_major"));
  instance.layout_a = Layout::row_major;
  instance.layout_b = Layout::row_major;
  EXPECT_THAT(validate(instance), StatusIs(Code::not_supported, "layout_b row_major"));

  GroupedGemmInstance grouped;
  grouped.input = DType::fp8_e4m3;
  grouped.tile.tile_k = 128;
  grouped.layout_b = Layout::row_major;
  EXPECT_THAT(validate(grouped), StatusIs(Code::not_supported, "layout_b"));
}

TEST(CutlassValidate, RefusesUnsupportedElementTypes) {
  GemmInstance instance;
  instance.input = DType::f32;
  EXPECT_THAT(validate(instance), StatusIs(Code::not_supported, "input f32"));
  instance.input = DType::i8;
  EXPECT_THAT(validate(instance), StatusIs(Code::not_supported, "input i8"));
  instance.input = DType::f16;
  instance.output = DType::fp8_e4m3;
  EXPECT_THAT(validate(instance), StatusIs(Code::not_supported, "output fp8_e4m3"));
  GroupedGemmInstance grouped;
  grouped.input = DType::f32;
  EXPECT_THAT(validate(grouped), StatusIs(Code::not_supported, "input f32"));
}

TEST(CutlassValidate, TmaSchedulesNeedArch90) {
  for (const int arch : {80, 89, 100}) {
    GemmInstance gemm;
    gemm.arch = arch;
    EXPECT_THAT(validate(gemm), StatusIs(Code::not_supported, "arch " + std::to_string(arch))) << arch;
    gemm.tile.schedule = Schedule::tma_pingpong;
    EXPECT_THAT(validate(gemm), StatusIs(Code::not_supported, "arch " + std::to_string(arch))) << arch;
    GroupedGemmInstance grouped;
    grouped.arch = arch;
    EXPECT_THAT(validate(grouped), StatusIs(Code::not_supported, "arch " + std::to_string(arch))) << arch;
  }
}

TEST(CutlassValidate, EachFamilyTakesItsOwnSchedules) {
  GemmInstance gemm;
  gemm.tile.schedule = Schedule::tma_warp_specialized;
  EXPECT_THAT(validate(gemm), StatusIs(Code::not_supported, "tma_warp_specialized"));
  ConvInstance conv;
  conv.tile.schedule = Schedule::tma_cooperative;
  EXPECT_THAT(validate(conv), StatusIs(Code::not_supported, "tma_cooperative"));
  conv.tile.schedule = Schedule::tma_pingpong;
  EXPECT_THAT(validate(conv), StatusIs(Code::not_supported, "tma_pingpong"));
}

TEST(CutlassValidate, RefusesBadTiles) {
  const auto with_tile = [](TileConfig tile) {
    GemmInstance instance;
    instance.tile = tile;
    return validate(instance);
  };
  EXPECT_THAT(with_tile({.tile_m = 96}), StatusIs(Code::invalid_argument, "tile_m 96"));
  EXPECT_THAT(with_tile({.tile_m = 64, .schedule = Schedule::tma_cooperative}),
              StatusIs(Code::invalid_argument, "tile_m 64"));  // the cooperative kernel needs 128 or more
  EXPECT_THAT(with_tile({.tile_m = 256, .tile_n = 128, .schedule = Schedule::tma_pingpong}),
              StatusIs(Code::invalid_argument, "tile_m 256"));
  EXPECT_THAT(with_tile({.tile_n = 100}), StatusIs(Code::invalid_argument, "tile_n 100"));
  EXPECT_THAT(with_tile({.tile_n = 512}), StatusIs(Code::invalid_argument, "tile_n 512"));
  EXPECT_THAT(with_tile({.tile_n = 0}), StatusIs(Code::invalid_argument, "tile_n 0"));
  EXPECT_THAT(with_tile({.tile_k = 48}), StatusIs(Code::invalid_argument, "tile_k 48"));
  EXPECT_THAT(with_tile({.tile_k = -64}), StatusIs(Code::invalid_argument, "tile_k -64"));
  EXPECT_THAT(with_tile({.cluster_m = 3}), StatusIs(Code::invalid_argument, "cluster 3x1"));
  EXPECT_THAT(with_tile({.cluster_m = 4, .cluster_n = 2}), StatusIs(Code::invalid_argument, "cluster 4x2"));
  EXPECT_THAT(with_tile({.cluster_m = 0}), StatusIs(Code::invalid_argument, "cluster 0x1"));
  // Accumulators: 256x256 over the cooperative kernel's 256 threads, 128x256 over a ping-pong warp group.
  EXPECT_THAT(with_tile({.tile_m = 256, .tile_n = 256}), StatusIs(Code::invalid_argument, "256 accumulator registers"));
  EXPECT_THAT(with_tile({.tile_m = 128, .tile_n = 256, .schedule = Schedule::tma_pingpong}),
              StatusIs(Code::invalid_argument, "256 accumulator registers"));
  // A 256x128x128 f16 stage takes 96 KiB; beside an f32 epilogue reading C and a residual, one stage fits.
  GemmInstance crowded;
  crowded.output = DType::f32;
  crowded.epilogue.residual = true;
  crowded.tile = {.tile_m = 256, .tile_n = 128, .tile_k = 128};
  EXPECT_THAT(validate(crowded), StatusIs(Code::invalid_argument, "shared memory"));
  crowded.epilogue.residual = false;
  crowded.tile.tile_k = 64;
  EXPECT_THAT(validate(crowded), IsOk());
  GroupedGemmInstance grouped;
  grouped.tile.tile_n = 24;
  EXPECT_THAT(validate(grouped), StatusIs(Code::invalid_argument, "tile_n 24"));
}

// -- render --------------------------------------------------------------------------------------------------------

TEST(CutlassRender, ModulesCarryTheAbiTextAndTheirIdentity) {
  const std::vector<Instance> instances = {GemmInstance{}, GroupedGemmInstance{}};
  for (const Instance& instance : instances) {
    const std::string source = render(instance);
    const std::string id = identity(instance);
    EXPECT_THAT(source, HasSubstr(kCutlassModuleAbiSource)) << id;
    EXPECT_THAT(source, HasSubstr("return \"" + id + "\";")) << id;
    EXPECT_THAT(source, HasSubstr("return kAccelCutlassAbiVersion;")) << id;
    EXPECT_THAT(source, HasSubstr("out->gemm_args = sizeof(AccelGemmArgs);")) << id;
    for (const char* declaration :
         {"ACCEL_MODULE_EXPORT int accel_module_abi(void);",
          "ACCEL_MODULE_EXPORT const char* accel_module_identity(void);",
          "ACCEL_MODULE_EXPORT void accel_module_layout(AccelAbiLayout* out);",
          "ACCEL_MODULE_EXPORT int accel_workspace_bytes(", "ACCEL_MODULE_EXPORT int accel_run("})
      EXPECT_THAT(source, HasSubstr(declaration)) << id;
    EXPECT_THAT(source, HasSubstr("extern \"C\" int accel_workspace_bytes(")) << id;
    EXPECT_THAT(source, HasSubstr("extern \"C\" int accel_run(")) << id;
    EXPECT_THAT(source, StartsWith("// A CUTLASS module of accel"));
    EXPECT_THAT(source, HasSubstr("#include <cuda_runtime.h>"));
    EXPECT_THAT(source, HasSubstr("cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>"));
  }
}

TEST(CutlassRender, PrologueEscapesTheIdentity) {
  const std::string prologue = module_prologue("a\"b\\c\nd?");
  EXPECT_THAT(prologue, HasSubstr(R"(return "a\"b\\c\012d\077";)"));
}

TEST(CutlassRender, PlainLinearCombinationUsesCutlassFusionOperation) {
  const std::string source = render(GemmInstance{});
  EXPECT_THAT(source, HasSubstr("cutlass::epilogue::fusion::LinearCombination<"));
  EXPECT_THAT(source, Not(HasSubstr("Sm90EVT")));
  EXPECT_THAT(source, HasSubstr("cutlass::gemm::KernelTmaWarpSpecializedCooperative"));
  EXPECT_THAT(source, HasSubstr("cutlass::epilogue::TmaWarpSpecializedCooperative"));
  EXPECT_THAT(source, HasSubstr("using TileShape = Shape<_128, _256, _64>;"));
  EXPECT_THAT(source, HasSubstr("using ClusterShape = Shape<_2, _1, _1>;"));

  GemmInstance no_source;
  no_source.epilogue.source = false;
  const std::string scaled = render(no_source);
  EXPECT_THAT(scaled, HasSubstr("using ElementC = void;"));
  EXPECT_THAT(scaled, HasSubstr("cutlass::epilogue::fusion::ScaledAcc<"));
}

TEST(CutlassRender, EpilogueTreeHasTheNodesTheInstanceAsksFor) {
  GemmInstance gelu;
  gelu.input = DType::bf16;
  gelu.output = DType::bf16;
  gelu.epilogue = {.activation = Activation::gelu_tanh, .bias = BiasKind::per_column, .source = true};
  const std::string g = render(gelu);
  EXPECT_THAT(g, HasSubstr("D = gelu_tanh(alpha * acc + beta * C + bias[n])"));
  EXPECT_THAT(g, HasSubstr("cutlass::epilogue::thread::GELU_taylor"));
  EXPECT_THAT(g, HasSubstr("using Bias = fusion::Sm90RowBroadcast<"));  // one bias per column of D
  EXPECT_THAT(g, HasSubstr("fusion::Sm90SrcFetch<ElementC>"));
  EXPECT_THAT(g, Not(HasSubstr("Sm90AuxLoad")));
  EXPECT_THAT(g, Not(HasSubstr("RowScale")));

  GemmInstance full;
  full.epilogue = {.activation = Activation::relu,
                   .bias = BiasKind::per_row,
                   .row_scale = true,
                   .col_scale = true,
                   .residual = true,
                   .source = true};
  const std::string f = render(full);
  EXPECT_THAT(f, HasSubstr("D = relu(alpha * acc * row_scale[m] * col_scale[n] + beta * C + bias[m]) + residual"));
  EXPECT_THAT(f, HasSubstr("cutlass::epilogue::thread::ReLu"));
  EXPECT_THAT(f, HasSubstr("using Bias = fusion::Sm90ColBroadcast<"));  // one bias per row of D
  EXPECT_THAT(f, HasSubstr("using RowScale = fusion::Sm90ColBroadcast<"));
  EXPECT_THAT(f, HasSubstr("using ColScale = fusion::Sm90RowBroadcast<"));
  EXPECT_THAT(f, HasSubstr("using Residual = fusion::Sm90AuxLoad<"));
  EXPECT_THAT(f, HasSubstr("cutlass::homogeneous_multiply_add"));

  GemmInstance silu;
  silu.epilogue = {.activation = Activation::silu, .source = false};
  const std::string s = render(silu);
  EXPECT_THAT(s, HasSubstr("cutlass::epilogue::thread::SiLu"));
  EXPECT_THAT(s, HasSubstr("using ElementC = void;"));
  EXPECT_THAT(s, Not(HasSubstr("Sm90SrcFetch")));
}

TEST(CutlassRender, SchedulesLayoutsAndTypes) {
  GemmInstance pingpong = small_f16_gemm();
  pingpong.tile.schedule = Schedule::tma_pingpong;
  pingpong.layout_a = Layout::column_major;
  pingpong.layout_c = Layout::column_major;
  const std::string p = render(pingpong);
  EXPECT_THAT(p, HasSubstr("cutlass::gemm::KernelTmaWarpSpecializedPingpong"));
  EXPECT_THAT(p, HasSubstr("using EpilogueSchedule = cutlass::epilogue::TmaWarpSpecialized;"));
  EXPECT_THAT(p, HasSubstr("using LayoutA = cutlass::layout::ColumnMajor;"));
  EXPECT_THAT(p, HasSubstr("using LayoutC = cutlass::layout::ColumnMajor;"));

  GemmInstance fp8;
  fp8.input = DType::fp8_e4m3;
  fp8.output = DType::f32;
  fp8.tile.tile_k = 128;
  const std::string f = render(fp8);
  EXPECT_THAT(f, HasSubstr("using ElementA = cutlass::float_e4m3_t;"));
  EXPECT_THAT(f, HasSubstr("using KernelSchedule = cutlass::gemm::KernelTmaWarpSpecializedCooperativeFP8FastAccum;"));
  EXPECT_THAT(f, HasSubstr("using ElementD = float;"));

  GroupedGemmInstance grouped;
  grouped.tile.schedule = Schedule::tma_pingpong;
  grouped.tile.tile_m = 64;
  const std::string g = render(grouped);
  EXPECT_THAT(g, HasSubstr("cutlass::gemm::GroupProblemShape<Shape<int, int, int>>"));
  EXPECT_THAT(g, HasSubstr("cutlass::gemm::KernelPtrArrayTmaWarpSpecializedPingpong"));
  EXPECT_THAT(g, HasSubstr("cutlass::epilogue::PtrArrayTmaWarpSpecializedPingpong"));
  EXPECT_THAT(g, HasSubstr("LayoutA *"));
}

TEST(CutlassRender, ElementNames) {
  EXPECT_EQ(cutlass_element(DType::f16), "cutlass::half_t");
  EXPECT_EQ(cutlass_element(DType::bf16), "cutlass::bfloat16_t");
  EXPECT_EQ(cutlass_element(DType::fp8_e4m3), "cutlass::float_e4m3_t");
  EXPECT_EQ(cutlass_element(DType::f32), "float");
}

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
