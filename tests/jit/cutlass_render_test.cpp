// What render() writes for a CUTLASS instance: the ABI text and identity, the epilogue tree the instance asks
// for, schedules, layouts and element types. None of it needs a GPU.
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

}  // namespace
}  // namespace accel::jit::cutlass
