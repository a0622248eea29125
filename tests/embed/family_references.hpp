// The tiny models of every family and head (tests/embed/data/families/, made by
// tests/embed/families/make_tiny_models.py) run by embed::Model on a device and compared with what transformers and
// sentence-transformers computed for them in f32 (references.json). Shared by the CPU and the CUDA tests.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "accel/embed/model.hpp"

namespace accel::embed::testing {

inline const std::filesystem::path kFamilies = std::filesystem::path(ACCEL_TEST_DATA) / "families";

inline const nlohmann::json& references() {
  static const nlohmann::json loaded = [] {
    std::ifstream in(kFamilies / "references.json");
    return nlohmann::json::parse(in);
  }();
  return loaded;
}

inline std::vector<std::string> strings(const nlohmann::json& list) { return list.get<std::vector<std::string>>(); }

inline double cosine(std::span<const float> a, const std::vector<double>& b) {
  double dot = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    dot += a[i] * b[i];
    na += double{a[i]} * a[i];
    nb += b[i] * b[i];
  }
  return na == 0 && nb == 0 ? 1.0 : dot / std::sqrt(na * nb);
}

inline double norm(std::span<const float> a) {
  double s = 0;
  for (float v : a) s += double{v} * v;
  return std::sqrt(s);
}

// How close a device's rows must be: cosine, and the ratio of norms (for embeddings that are not unit length).
struct Tolerance {
  double cosine = 0.99999;
  double norm_ratio = 1e-4;
  double score = 1e-3;  // a score or a sparse weight, absolute
};

inline void expect_dense(const Embeddings& got, const nlohmann::json& expected, const Tolerance& t,
                         const std::string& what) {
  ASSERT_EQ(got.count(), expected.size()) << what;
  for (std::size_t i = 0; i < got.count(); ++i) {
    const auto row = expected[i].get<std::vector<double>>();
    ASSERT_EQ(got.dimensions, row.size()) << what;
    double reference_norm = 0;
    for (double v : row) reference_norm += v * v;
    reference_norm = std::sqrt(reference_norm);
    if (reference_norm == 0) {  // a text whose every state is 0 (the tiny decoders' lone EOS: a zero padding row)
      EXPECT_EQ(norm(got.row(i)), 0.0) << what << ", input " << i;
      continue;
    }
    EXPECT_GE(cosine(got.row(i), row), t.cosine) << what << ", input " << i;
    EXPECT_NEAR(norm(got.row(i)) / std::max(reference_norm, 1e-30), 1.0, t.norm_ratio) << what << ", input " << i;
  }
}

// A sparse row against {"indices", "values"}: the same nonzero terms, weights within t.score. With `same_terms`
// false (reduced precision), terms whose weight is within t.score of 0 may differ.
inline void expect_sparse(const Embeddings& got, const nlohmann::json& expected, const Tolerance& t, bool same_terms,
                          const std::string& what) {
  ASSERT_EQ(got.count(), expected.size()) << what;
  for (std::size_t i = 0; i < got.count(); ++i) {
    std::vector<double> dense(got.dimensions, 0.0);
    const auto indices = expected[i].at("indices").get<std::vector<std::uint32_t>>();
    const auto values = expected[i].at("values").get<std::vector<double>>();
    for (std::size_t k = 0; k < indices.size(); ++k) dense.at(indices[k]) = values[k];
    const auto nonzeros = got.nonzeros(i);
    if (same_terms) {
      ASSERT_EQ(nonzeros.size(), indices.size()) << what << ", input " << i;
      for (std::size_t k = 0; k < indices.size(); ++k)
        EXPECT_EQ(nonzeros[k].first, indices[k]) << what << ", input " << i;
    }
    const std::span<const float> row = got.row(i);
    for (std::size_t v = 0; v < dense.size(); ++v)
      ASSERT_NEAR(row[v], dense[v], t.score) << what << ", input " << i << ", term " << v;
  }
}

inline void expect_scores(const Embeddings& got, const nlohmann::json& expected, const Tolerance& t,
                          const std::string& what) {
  ASSERT_EQ(got.count(), expected.size()) << what;
  for (std::size_t i = 0; i < got.count(); ++i) {
    const auto row = expected[i].get<std::vector<double>>();
    ASSERT_EQ(got.dimensions, row.size()) << what;
    for (std::size_t k = 0; k < row.size(); ++k) EXPECT_NEAR(got.row(i)[k], row[k], t.score) << what << ", pair " << i;
  }
}

// Every tiny model on `device`, against the references.
inline void check_every_family(const Device& device, std::optional<DType> compute, const Tolerance& t,
                               bool same_terms) {
  const nlohmann::json& refs = references();
  const std::vector<std::string> texts = strings(refs.at("texts"));
  for (const auto& [name, expected] : refs.at("models").items()) {
    SCOPED_TRACE(name);
    Result<std::shared_ptr<Model>> model =
        Model::load(device, {.folder = kFamilies / name, .compute = compute, .batch_tokens = 512});
    ASSERT_TRUE(model.ok()) << name << ": " << model.status().to_string();
    const std::string output = expected.at("output").get<std::string>();
    ASSERT_EQ(to_string((*model)->info().output), output);
    if (output == "dense") {
      Result<Embeddings> got = (*model)->embed(texts).wait();
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      expect_dense(*got, expected.at("embeddings"), t, name);
      for (const auto& [key, rows] : expected.items()) {
        if (!key.starts_with("embeddings_prompt_name=")) continue;
        Result<Embeddings> prompted = (*model)->embed(texts, {.prompt_name = key.substr(23)}).wait();
        ASSERT_TRUE(prompted.ok()) << prompted.status().to_string();
        expect_dense(*prompted, rows, t, name + " " + key);
      }
    } else if (output == "sparse") {
      Result<Embeddings> got = (*model)->embed(strings(refs.at("splade_texts"))).wait();
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      expect_sparse(*got, expected.at("sparse"), t, same_terms, name);
    } else {
      const std::vector<std::string> passages = strings(refs.at("passages"));
      const nlohmann::json& scores = expected.at("scores");
      for (std::size_t q = 0; q < refs.at("queries").size(); ++q) {
        Result<Embeddings> got = (*model)->rerank(refs.at("queries")[q].get<std::string>(), passages).wait();
        ASSERT_TRUE(got.ok()) << got.status().to_string();
        expect_scores(*got, scores[q], t, name + " query " + std::to_string(q));
      }
    }
  }
}

}  // namespace accel::embed::testing
