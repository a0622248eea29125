// all-MiniLM-L6-v2 on the CPU device against sentence-transformers' f32 embeddings (tests/embed/data/
// reference_embeddings.json, made by make_reference_embeddings.py), and the model's refusals.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "accel/device/device.hpp"
#include "accel/embed/model.hpp"
#include "testing/model_folder.hpp"

namespace accel::embed {
namespace {

const std::filesystem::path kFolder = testing::model_folder(ACCEL_TEST_MODEL_FOLDER);

double cosine(std::span<const float> a, const std::vector<double>& b) {
  double dot = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    dot += a[i] * b[i];
    na += static_cast<double>(a[i]) * a[i];
    nb += b[i] * b[i];
  }
  return dot / std::sqrt(na * nb);
}

class EmbeddingModelTest : public ::testing::Test {
 protected:
  // The model loads once for the suite. Only an absent folder skips; a folder that does not load fails every test.
  static void SetUpTestSuite() {
    if (!std::filesystem::exists(kFolder)) return;
    system_ = new System();
    device_ = new Device(*Device::open(*system_, {.kind = DeviceKind::cpu}));
    Result<std::shared_ptr<Model>> loaded = Model::load(*device_, {.folder = kFolder, .batch_tokens = 2048});
    if (loaded.ok()) {
      model_ = new std::shared_ptr<Model>(std::move(*loaded));
    } else {
      load_failure_ = new std::string(loaded.status().to_string());
    }
  }
  static void TearDownTestSuite() {
    delete model_;
    delete load_failure_;
    delete device_;
    delete system_;
  }
  void SetUp() override {
    ACCEL_SKIP_WITHOUT_MODEL_FOLDER(kFolder);
    ASSERT_NE(model_, nullptr) << "the model at " << kFolder << " did not load: " << *load_failure_;
  }
  static Model& model() { return **model_; }

  static inline System* system_ = nullptr;
  static inline Device* device_ = nullptr;
  static inline std::shared_ptr<Model>* model_ = nullptr;
  static inline std::string* load_failure_ = nullptr;
};

TEST_F(EmbeddingModelTest, MatchesSentenceTransformersInF32) {
  std::ifstream in(std::filesystem::path(ACCEL_TEST_DATA) / "reference_embeddings.json");
  const nlohmann::json reference = nlohmann::json::parse(in);
  std::vector<std::string> texts;
  std::vector<std::vector<double>> expected;
  std::vector<std::uint32_t> tokens;
  for (const auto& entry : reference.at("embeddings")) {
    texts.push_back(entry.at("sentence").get<std::string>());
    expected.push_back(entry.at("embedding").get<std::vector<double>>());
    tokens.push_back(entry.at("tokens").get<std::uint32_t>());
  }
  ASSERT_GE(texts.size(), 40u);
  Result<Embeddings> got = model().embed(texts).wait();
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  ASSERT_EQ(got->count(), texts.size());
  EXPECT_EQ(got->dimensions, 384u);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ(got->tokens[i], tokens[i]) << i;
    EXPECT_GE(cosine(got->row(i), expected[i]), 0.99999) << "text " << i << ": " << texts[i].substr(0, 60);
  }
}

TEST_F(EmbeddingModelTest, SplitsLargeCallsIntoRunsWithTheSameResults) {
  std::vector<std::string> texts;
  for (int i = 0; i < 60; ++i) texts.push_back("sentence number " + std::to_string(i) + " " + std::string(i * 7, 'a'));
  Result<Embeddings> together = model().embed(texts).wait();
  ASSERT_TRUE(together.ok());
  for (std::size_t i : {0u, 17u, 59u}) {
    Result<Embeddings> alone = model().embed({texts[i]}).wait();
    ASSERT_TRUE(alone.ok());
    std::vector<double> row(alone->row(0).begin(), alone->row(0).end());
    EXPECT_GE(cosine(together->row(i), row), 0.999999) << i;
  }
  EXPECT_GE(model().stats().runs, 2u);
}

// The buckets are the graph's ladders (tokens 16..2048, sequences 1..2048, by powers of two) cut to the shapes a
// batch can have: every sequence has a token and none more than 256, so t tokens run in t/256 to t sequences.
TEST_F(EmbeddingModelTest, BucketsAreTheShapesABatchCanRunAt) {
  const std::vector<BatchBucket> buckets = model().buckets();
  ASSERT_EQ(model().info().max_sequence_length, 256u);
  EXPECT_EQ(buckets.front(), (BatchBucket{.tokens = 16, .sequences = 1}));
  EXPECT_EQ(buckets.back(), (BatchBucket{.tokens = 2048, .sequences = 2048}));
  EXPECT_EQ(std::count_if(buckets.begin(), buckets.end(), [](const BatchBucket& b) { return b.tokens == 2048; }), 9);
  EXPECT_EQ(std::count_if(buckets.begin(), buckets.end(), [](const BatchBucket& b) { return b.tokens == 16; }), 5);
  EXPECT_EQ(buckets.size(), 5u + 6 + 7 + 8 + 9 + 9 + 9 + 9);  // 16, 32, 64, 128, 256, 512, 1024 and 2048 tokens
}

// A bucket's filling runs in that bucket: its sequences as even as can be, every token the id given.
TEST_F(EmbeddingModelTest, ABucketsFillingRunsAtItsShape) {
  const TokenBatch batch = batch_filling({.tokens = 512, .sequences = 3}, 7);
  ASSERT_EQ(batch.sequences(), 3u);
  EXPECT_EQ(batch.ids.size(), 512u);
  EXPECT_EQ(batch.length(0), 171u);
  EXPECT_EQ(batch.length(2), 170u);
  EXPECT_TRUE(std::all_of(batch.ids.begin(), batch.ids.end(), [](std::int32_t id) { return id == 7; }));
  Result<Embeddings> ran = model().embed_tokens(batch).wait();
  ASSERT_TRUE(ran.ok()) << ran.status().to_string();
  EXPECT_EQ(ran->count(), 3u);
}

TEST_F(EmbeddingModelTest, RefusesBadInputNamingIt) {
  Result<Embeddings> invalid = model().embed({"fine", std::string("bad \xff utf-8")}).wait();
  EXPECT_EQ(invalid.status().code(), Code::invalid_argument);
  EXPECT_NE(invalid.status().message().find("1"), std::string::npos) << invalid.status().to_string();

  std::string long_text;
  for (int i = 0; i < 400; ++i) long_text += "word ";
  Result<Embeddings> too_long = model().embed({"short", long_text}, {.truncation = Truncation::refuse}).wait();
  EXPECT_EQ(too_long.status().code(), Code::invalid_argument);
  EXPECT_NE(too_long.status().message().find("text 1"), std::string::npos) << too_long.status().to_string();
  TokenBatch batch;
  const std::int32_t ids[] = {101, 40000, 102};
  batch.append(ids);
  Result<Embeddings> out_of_vocabulary = model().embed_tokens(batch).wait();
  EXPECT_EQ(out_of_vocabulary.status().code(), Code::invalid_argument);
  EXPECT_NE(out_of_vocabulary.status().message().find("40000"), std::string::npos);
  TokenBatch empty;
  empty.offsets = {0, 0};
  EXPECT_EQ(model().embed_tokens(empty).wait().status().code(), Code::invalid_argument);
}

TEST(EmbeddingModelLoadTest, RefusesAMissingFolder) {
  System system;
  Device device = *Device::open(system, {.kind = DeviceKind::cpu});
  Result<std::shared_ptr<Model>> loaded = Model::load(device, {.folder = "/nonexistent/model"});
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("/nonexistent/model"), std::string::npos) << loaded.status().to_string();
}

// A batch must hold the longest sequence: a smaller budget is refused before anything loads, saying what to give.
TEST(EmbeddingModelLoadTest, RefusesABatchBelowTheLongestSequenceNamingTheBudgetItNeeds) {
  ACCEL_SKIP_WITHOUT_MODEL_FOLDER(kFolder);
  System system;
  Device device = *Device::open(system, {.kind = DeviceKind::cpu});
  Result<std::shared_ptr<Model>> loaded = Model::load(device, {.folder = kFolder, .batch_tokens = 128});
  ASSERT_EQ(loaded.status().code(), Code::invalid_argument) << loaded.status().to_string();
  EXPECT_NE(loaded.status().message().find("batch_tokens 128 is below the model's longest sequence, 256"),
            std::string::npos)
      << loaded.status().to_string();
  EXPECT_NE(loaded.status().message().find("at least 256 tokens a batch"), std::string::npos);
}

TEST(EmbeddingModelLoadTest, OpenReadsWhileTheDeviceOpensAndKeepsTheDevice) {
  ACCEL_SKIP_WITHOUT_MODEL_FOLDER(kFolder);
  System system;
  Result<std::shared_ptr<Model>> opened =
      Model::open({.kind = DeviceKind::cpu, .open = [&] { return Device::open(system, {.kind = DeviceKind::cpu}); }},
                  {.folder = kFolder});
  ASSERT_TRUE(opened.ok()) << opened.status().to_string();
  EXPECT_GT((*opened)->info().load.device_open_ms, 0);
  EXPECT_EQ((*opened)->info().compute, DType::f32);
  EXPECT_TRUE((*opened)->device().health().ok());
  Result<Embeddings> embeddings = (*opened)->embed({"a sentence"}).wait();
  ASSERT_TRUE(embeddings.ok()) << embeddings.status().to_string();
  EXPECT_EQ(embeddings->values.size(), 384u);
}

TEST(EmbeddingModelLoadTest, OpenAnswersTheDevicesErrorBeforeTheFoldersAndTheFoldersWhenTheDeviceOpened) {
  System system;
  Result<std::shared_ptr<Model>> no_device =
      Model::open({.kind = DeviceKind::cpu, .open = []() -> Result<Device> { return unavailable("no such device"); }},
                  {.folder = "/nonexistent/model"});
  EXPECT_EQ(no_device.status().code(), Code::unavailable);
  EXPECT_EQ(no_device.status().message(), "no such device");
  Result<std::shared_ptr<Model>> no_folder =
      Model::open({.kind = DeviceKind::cpu, .open = [&] { return Device::open(system, {.kind = DeviceKind::cpu}); }},
                  {.folder = "/nonexistent/model"});
  ASSERT_FALSE(no_folder.ok());
  EXPECT_NE(no_folder.status().message().find("/nonexistent/model"), std::string::npos);
}

// The weights were converted for a CUDA device while a CPU one opened: they are converted again, to the CPU's
// f32, and the embeddings are the CPU's.
TEST(EmbeddingModelLoadTest, OpenConvertsAgainWhenTheDeviceIsOfAnotherKind) {
  ACCEL_SKIP_WITHOUT_MODEL_FOLDER(kFolder);
  System system;
  Device cpu = *Device::open(system, {.kind = DeviceKind::cpu});
  Result<std::shared_ptr<Model>> expected = Model::load(cpu, {.folder = kFolder});
  ASSERT_TRUE(expected.ok()) << expected.status().to_string();
  Result<std::shared_ptr<Model>> surprised =
      Model::open({.kind = DeviceKind::cuda, .open = [&] { return Device::open(system, {.kind = DeviceKind::cpu}); }},
                  {.folder = kFolder});
  ASSERT_TRUE(surprised.ok()) << surprised.status().to_string();
  EXPECT_EQ((*surprised)->info().compute, DType::f32);
  Result<Embeddings> a = (*expected)->embed({"the weights are converted again"}).wait();
  Result<Embeddings> b = (*surprised)->embed({"the weights are converted again"}).wait();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->values, b->values);
}

}  // namespace
}  // namespace accel::embed
