// A CPU without avx512_bf16 or AMX, as oneDNN sees one when its ISA is capped below them (dnnl::set_max_cpu_isa,
// before this process's first use of oneDNN: the same cap as ONEDNN_MAX_CPU_ISA=AVX512_CORE): a model asked to
// compute in bf16 on the CPU is refused before anything is read or run, naming the option and the missing feature,
// and so is a bf16 graph sent to the CPU device, before it writes anything. f32 still loads.
#include <gtest/gtest.h>

#include <filesystem>
#include <oneapi/dnnl/dnnl.hpp>

#include "accel/device/device.hpp"
#include "accel/embed/model.hpp"
#include "accel/graph/execute.hpp"
#include "graph/kernels/cpu_packed_matmul.hpp"
#include "testing/model_folder.hpp"

namespace accel::embed {
namespace {

// Before main, so before anything in the process asks oneDNN which ISA it has.
const dnnl::status capped = dnnl::set_max_cpu_isa(dnnl::cpu_isa::avx512_core);

const std::filesystem::path kFolder = testing::model_folder(ACCEL_TEST_MODEL_FOLDER);

void expect_names_option_and_feature(const Status& status) {
  EXPECT_EQ(status.code(), Code::not_supported) << status.to_string();
  EXPECT_NE(status.message().find("ModelOptions::compute (--dtype) is bf16"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("avx512_bf16 or AMX"), std::string::npos) << status.message();
}

TEST(CpuWithoutBf16, TheCapHolds) {
  ASSERT_EQ(capped, dnnl::status::success);
  EXPECT_FALSE(graph::cpu::cpu_has_bf16());
}

TEST(CpuWithoutBf16, ABf16ModelIsRefusedBeforeAnythingIsRead) {
  System system;
  Result<Device> device = Device::open(system, {.kind = DeviceKind::cpu});
  ASSERT_TRUE(device.ok()) << device.status().to_string();
  // A folder that is not there: the refusal comes before the folder is read.
  const std::filesystem::path absent = "/nonexistent/model";
  expect_names_option_and_feature(Model::load(*device, {.folder = absent, .compute = DType::bf16}).status());
  bool opened = false;
  expect_names_option_and_feature(Model::open({.kind = DeviceKind::cpu,
                                               .open = [&]() -> Result<Device> {
                                                 opened = true;
                                                 return *device;
                                               }},
                                              {.folder = absent, .compute = DType::bf16})
                                      .status());
  EXPECT_FALSE(opened) << "the device was opened for a request refused";
  const Status f16 = Model::load(*device, {.folder = absent, .compute = DType::f16}).status();
  EXPECT_EQ(f16.code(), Code::not_supported);
  EXPECT_NE(f16.message().find("computes in f32 or bf16"), std::string::npos) << f16.message();

  ACCEL_SKIP_WITHOUT_MODEL_FOLDER(kFolder);
  expect_names_option_and_feature(Model::load(*device, {.folder = kFolder, .compute = DType::bf16}).status());
  Result<std::shared_ptr<Model>> f32 = Model::load(*device, {.folder = kFolder});
  ASSERT_TRUE(f32.ok()) << f32.status().to_string();
  EXPECT_EQ((*f32)->info().compute, DType::f32);
}

TEST(CpuWithoutBf16, TheCpuDeviceRefusesABf16GraphBeforeWritingAnything) {
  System system;
  Result<Device> device = Device::open(system, {.kind = DeviceKind::cpu});
  ASSERT_TRUE(device.ok()) << device.status().to_string();
  graph::GraphBuilder b;
  graph::Tensor x = b.input("x", DType::bf16, {graph::Dim::of(4), graph::Dim::of(8)});
  b.output("y", b.matmul(x, b.parameter("w", DType::bf16, {graph::Dim::of(8), graph::Dim::of(3)})));
  std::shared_ptr<const graph::Graph> built = *b.build();
  Buffer<std::uint8_t> weights = *device->allocate<std::uint8_t>(built->weight_bytes()).wait();
  Buffer<BFloat16> in = *device->allocate<BFloat16>(32).wait();
  Buffer<BFloat16> out = *device->allocate<BFloat16>(12).wait();
  const std::vector<BFloat16> sentinel(12, to_bfloat16(7.0f));
  ASSERT_TRUE(device->upload(std::span<const BFloat16>(sentinel), out).wait().ok());
  const Status ran =
      device->ask(graph::Execute{.graph = built, .weights = weights, .inputs = {{"x", in}}, .outputs = {{"y", out}}})
          .wait()
          .status();
  EXPECT_EQ(ran.code(), Code::not_supported) << ran.to_string();
  EXPECT_NE(ran.message().find("avx512_bf16 or AMX"), std::string::npos) << ran.message();
  std::vector<BFloat16> after(12);
  ASSERT_TRUE(device->download(out, std::span<BFloat16>(after)).wait().ok());
  for (const BFloat16 v : after) EXPECT_EQ(to_float(v), 7.0f);
}

}  // namespace
}  // namespace accel::embed
