// all-MiniLM-L6-v2 on a CUDA device (f16 compute) against sentence-transformers' f32 embeddings: every reference
// text at cosine >= 0.999, in process and on an isolated worker; a model loaded with every batch size warmed runs
// a batch of each size without another graph compiled or loaded.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include "accel/core/cache_stats.hpp"
#include "accel/device/device.hpp"
#include "accel/embed/model.hpp"
#include "testing/cuda_fixture.hpp"
#include "testing/model_folder.hpp"
#include "testing/status_matchers.hpp"

namespace accel::embed {
namespace {

class CudaEmbeddingModelTest : public ::testing::TestWithParam<Isolation> {};

TEST_P(CudaEmbeddingModelTest, MatchesSentenceTransformersWithinF16) {
  const std::filesystem::path folder = testing::model_folder(ACCEL_TEST_MODEL_FOLDER);
  ACCEL_SKIP_WITHOUT_MODEL_FOLDER(folder);
  System system;
  ACCEL_OPEN_CUDA_OR_SKIP(system, (DeviceOptions{.kind = DeviceKind::cuda, .isolation = GetParam()}), device);
  Result<std::shared_ptr<Model>> model = Model::load(device, {.folder = folder});
  ASSERT_THAT(model, accel::testing::IsOk());
  EXPECT_EQ((*model)->info().compute, DType::f16);
  std::ifstream in(std::filesystem::path(ACCEL_TEST_DATA) / "reference_embeddings.json");
  const nlohmann::json reference = nlohmann::json::parse(in);
  std::vector<std::string> texts;
  for (const auto& entry : reference.at("embeddings")) texts.push_back(entry.at("sentence").get<std::string>());
  Result<Embeddings> got = (*model)->embed(texts).wait();
  ASSERT_THAT(got, accel::testing::IsOk());
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const auto want = reference.at("embeddings")[i].at("embedding").get<std::vector<double>>();
    double dot = 0, norm = 0;
    for (std::size_t c = 0; c < want.size(); ++c) {
      dot += got->row(i)[c] * want[c];
      norm += static_cast<double>(got->row(i)[c]) * got->row(i)[c];
    }
    EXPECT_GE(dot / std::sqrt(norm), 0.999) << "text " << i;
  }
}

// The graph executables' cache lookups that found nothing in memory, so far.
std::uint64_t executable_misses(const Model& model) {
  std::uint64_t misses = 0;
  for (const CacheStats& cache : model.stats().caches)
    if (cache.name == "graph-executables") misses += cache.misses;
  return misses;
}

TEST(CudaEmbeddingModelWarmTest, EveryBatchSizeWarmedAtLoadRunsWithoutAnotherExecutable) {
  const std::filesystem::path folder = testing::model_folder(ACCEL_TEST_MODEL_FOLDER);
  ACCEL_SKIP_WITHOUT_MODEL_FOLDER(folder);
  for (const bool warm : {true, false}) {
    // A System of its own each: a device's executables are its streams', which a second model would share.
    System system;
    ACCEL_OPEN_CUDA_OR_SKIP(system, (DeviceOptions{.kind = DeviceKind::cuda}), device);
    Result<std::shared_ptr<Model>> model =
        Model::load(device, {.folder = folder, .batch_tokens = 4096, .warm_every_batch_size = warm});
    ASSERT_THAT(model, accel::testing::IsOk());
    std::vector<BatchBucket> shapes;  // every shape a run can take: 16 to 4,096 tokens by powers of two
    for (const BatchBucket& bucket : (*model)->buckets())
      if (bucket.tokens <= 4096) shapes.push_back(bucket);
    ASSERT_EQ(shapes.size(), 5u + 6 + 7 + 8 + 9 + 9 + 9 + 9 + 9);
    const std::uint64_t after_load = executable_misses(**model);
    if (warm) {
      EXPECT_GE(after_load, shapes.size()) << "each batch shape's executable is made at load";
    }
    for (const BatchBucket& shape : shapes) {
      Result<Embeddings> got = (*model)->embed_tokens(batch_filling(shape, 0)).wait();
      ASSERT_THAT(got, accel::testing::IsOk()) << shape.tokens << " tokens";
      EXPECT_EQ(got->count(), shape.sequences);
    }
    // Without the option only the smallest shape is made at load: the others when first asked for.
    const std::uint64_t made_after = executable_misses(**model) - after_load;
    EXPECT_EQ(made_after, warm ? 0 : shapes.size() - 1) << (warm ? "warmed" : "not warmed");
  }
}

INSTANTIATE_TEST_SUITE_P(Isolations, CudaEmbeddingModelTest,
                         ::testing::Values(Isolation::in_process, Isolation::worker_process),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace accel::embed
