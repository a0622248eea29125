// CUTLASS instances: their identities (every field changes them) and what validate() refuses. None of it
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

}  // namespace
}  // namespace accel::jit::cutlass
