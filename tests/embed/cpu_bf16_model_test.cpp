// all-MiniLM-L6-v2 on the CPU device in bf16 (ModelOptions::compute): its matmuls in bf16 on weights packed once,
// everything else in f32 (graph/cpu/cpu_bf16_graph.hpp). Against the same model in f32 over real texts (every 30th
// text of the tokenizer corpus, tests/text/data/minilm_wordpiece_256.jsonl: many scripts, empty, long and odd
// inputs, and the reference sentences of tests/embed/data/reference_embeddings.json), against sentence-transformers'
// f32 embeddings, and packing once. On a CPU without avx512_bf16 or AMX the load is refused instead, naming the
// option and the feature (cpu_without_bf16_test holds that refusal on every CPU).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "accel/device/device.hpp"
#include "accel/embed/model.hpp"
#include "graph/kernels/cpu_packed_matmul.hpp"
#include "testing/model_folder.hpp"

namespace accel::embed {
namespace {

const std::filesystem::path kFolder = testing::model_folder(ACCEL_TEST_MODEL_FOLDER);

template <class A, class B>
double cosine(const A& a, const B& b) {
  double dot = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    dot += static_cast<double>(a[i]) * b[i];
    na += static_cast<double>(a[i]) * a[i];
    nb += static_cast<double>(b[i]) * b[i];
  }
  return dot / std::sqrt(na * nb);
}

struct ReferenceTexts {
  std::vector<std::string> texts;                          // the corpus's, then the reference sentences
  std::vector<std::vector<double>> sentence_transformers;  // of the reference sentences, the last texts
};

ReferenceTexts real_texts() {
  ReferenceTexts out;
  std::ifstream corpus(std::filesystem::path(ACCEL_TEST_TEXTS) / "minilm_wordpiece_256.jsonl");
  std::string line;
  std::getline(corpus, line);  // the first line describes the corpus
  for (std::size_t i = 0; std::getline(corpus, line); ++i)
    if (i % 30 == 0) out.texts.push_back(nlohmann::json::parse(line).at("text").get<std::string>());
  std::ifstream in(std::filesystem::path(ACCEL_TEST_DATA) / "reference_embeddings.json");
  const nlohmann::json file = nlohmann::json::parse(in);  // kept: a range-for over a temporary's member dangles
  for (const auto& entry : file.at("embeddings")) {
    out.texts.push_back(entry.at("sentence").get<std::string>());
    out.sentence_transformers.push_back(entry.at("embedding").get<std::vector<double>>());
  }
  return out;
}

TEST(CpuBf16Model, MatchesF32OnRealTextsAndPacksOnce) {
  ACCEL_SKIP_WITHOUT_MODEL_FOLDER(kFolder);
  System system;
  Result<Device> device = Device::open(system, {.kind = DeviceKind::cpu});
  ASSERT_TRUE(device.ok()) << device.status().to_string();
  Result<std::shared_ptr<Model>> bf16 =
      Model::load(*device, {.folder = kFolder, .compute = DType::bf16, .batch_tokens = 2048});
  if (!graph::cpu::cpu_has_bf16()) {
    ASSERT_EQ(bf16.code(), Code::not_supported);
    EXPECT_NE(bf16.status().message().find("--dtype"), std::string::npos) << bf16.status().message();
    EXPECT_NE(bf16.status().message().find("avx512_bf16 or AMX"), std::string::npos) << bf16.status().message();
    return;
  }
  ASSERT_TRUE(bf16.ok()) << bf16.status().to_string();
  EXPECT_EQ((*bf16)->info().compute, DType::bf16);
  Result<std::shared_ptr<Model>> f32 = Model::load(*device, {.folder = kFolder, .batch_tokens = 2048});
  ASSERT_TRUE(f32.ok()) << f32.status().to_string();
  EXPECT_EQ((*f32)->info().compute, DType::f32);

  const ReferenceTexts reference = real_texts();
  ASSERT_GE(reference.sentence_transformers.size(), 40u);
  ASSERT_GE(reference.texts.size(), 390u);
  Result<Embeddings> want = (*f32)->embed(reference.texts).wait();
  Result<Embeddings> got = (*bf16)->embed(reference.texts).wait();
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  ASSERT_EQ(got->count(), reference.texts.size());
  double least = 1;
  std::size_t worst = 0;
  for (std::size_t i = 0; i < got->count(); ++i) {
    EXPECT_EQ(got->tokens[i], want->tokens[i]) << "text " << i;
    const double c = cosine(got->row(i), want->row(i));
    if (c < least) {
      least = c;
      worst = i;
    }
  }
  // bf16 keeps 8 bits of each matmul's operands: measured least 0.99988 here and over 2,000 corpus texts
  // (docs/PERFORMANCE.md, section 42).
  std::printf("bf16 vs f32, %zu texts (%zu of the corpus): least cosine %.6f (text %zu)\n", got->count(),
              got->count() - reference.sentence_transformers.size(), least, worst);
  EXPECT_GE(least, 0.999) << "text " << worst << ": " << reference.texts[worst].substr(0, 80);
  const std::size_t first_sentence = reference.texts.size() - reference.sentence_transformers.size();
  double least_to_reference = 1;
  for (std::size_t i = 0; i < reference.sentence_transformers.size(); ++i) {
    const double c = cosine(got->row(first_sentence + i), reference.sentence_transformers[i]);
    least_to_reference = std::min(least_to_reference, c);
    EXPECT_GE(c, 0.999) << "sentence " << i;
  }
  std::printf("bf16 vs sentence-transformers f32, %zu sentences: least cosine %.6f\n",
              reference.sentence_transformers.size(), least_to_reference);

  // The same texts run in the same buckets, whose executables packed their weights on the first call.
  const std::uint64_t packs = graph::cpu::PackedMatmul::packs_made();
  Result<Embeddings> again = (*bf16)->embed(reference.texts).wait();
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(graph::cpu::PackedMatmul::packs_made(), packs);
  EXPECT_EQ(again->values, got->values);
}

}  // namespace
}  // namespace accel::embed
